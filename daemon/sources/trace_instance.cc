// SPDX-License-Identifier: GPL-2.0
#include "sources/trace_instance.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <string_view>
#include <system_error>

#include <spdlog/spdlog.h>

namespace cpuhp {

const char* const kKeptInstance = "cpuhp-stress-kept";

bool WriteFile(const std::string& path, const std::string& value, std::string* err) {
  int fd = open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) {
    *err = path + ": cannot open: " + strerror(errno);
    return false;
  }
  ssize_t n = write(fd, value.data(), value.size());
  int e = errno;
  close(fd);
  if (n != static_cast<ssize_t>(value.size())) {
    *err = path + ": cannot write \"" + value + "\": " + strerror(n < 0 ? e : EIO);
    return false;
  }
  return true;
}

bool ReadText(const std::string& path, std::string* out) {
  std::ifstream f(path);
  if (!f)
    return false;
  std::stringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  return true;
}

bool IsDir(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string Comm(const std::string& pid) {
  std::string c;
  if (!ReadText("/proc/" + pid + "/comm", &c))
    return {};
  while (!c.empty() && c.back() == '\n')
    c.pop_back();
  return c;
}

namespace {

// "overrun: 3" -> 3 (0 when absent).
uint64_t StatField(const std::string& text, const std::string& key) {
  size_t at = text.find(key + ":");
  if (at == std::string::npos)
    return 0;
  size_t b = text.find_first_not_of(' ', at + key.size() + 1);
  uint64_t v = 0;
  if (b != std::string::npos)
    std::from_chars(text.data() + b, text.data() + text.size(), v);
  return v;
}

}  // namespace

std::vector<int> InstanceCpus(const std::string& instance) {
  std::vector<int> cpus;
  DIR* d = opendir((instance + "/per_cpu").c_str());
  if (!d)
    return cpus;
  while (dirent* e = readdir(d)) {
    int cpu = -1;
    const std::string_view n = e->d_name;
    const char* end = n.data() + n.size();
    if (n.substr(0, 3) == "cpu" && n.size() > 3) {
      const auto [ptr, ec] = std::from_chars(n.data() + 3, end, cpu);
      if (ec == std::errc() && ptr == end && cpu >= 0)
        cpus.push_back(cpu);
    }
  }
  closedir(d);
  std::sort(cpus.begin(), cpus.end());
  return cpus;
}

std::map<int, std::pair<uint64_t, uint64_t>> ReadCpuStats(const std::string& instance) {
  std::map<int, std::pair<uint64_t, uint64_t>> stats;
  const std::string dir = instance + "/per_cpu";
  for (int cpu : InstanceCpus(instance)) {
    std::string text;
    if (ReadText(dir + "/cpu" + std::to_string(cpu) + "/stats", &text))
      stats[cpu] = {StatField(text, "overrun"), StatField(text, "dropped events")};
  }
  return stats;
}

std::string FindTracefs(const std::string& mounts_path) {
  std::ifstream f(mounts_path);
  std::string dev, dir, type, rest;
  std::string found;
  while (f >> dev >> dir >> type && std::getline(f, rest)) {
    if (type != "tracefs")
      continue;
    if (dir == kDefaultTracefs)
      return dir;
    if (found.empty())
      found = dir;
  }
  return found;
}

std::vector<std::string> RemoveStaleTraceInstances(const std::string& tracefs_root,
                                                   std::vector<std::string>* errs) {
  std::vector<std::string> removed;
  const std::string dir = tracefs_root + "/instances";
  DIR* d = opendir(dir.c_str());
  if (!d)
    return removed;
  const std::string self = Comm("self");
  std::vector<std::string> stale;
  while (dirent* e = readdir(d)) {
    std::string_view n = e->d_name;
    if (n.substr(0, strlen(kInstancePrefix)) != kInstancePrefix)
      continue;
    std::string pid(n.substr(strlen(kInstancePrefix)));
    int p = 0;
    auto [end, ec] = std::from_chars(pid.data(), pid.data() + pid.size(), p);
    if (ec != std::errc() || end != pid.data() + pid.size() || p <= 0)
      continue;
    if (p == getpid() || Comm(pid) == self)
      continue;  // ours, or another live run
    stale.emplace_back(n);
  }
  closedir(d);
  for (const std::string& n : stale) {
    if (rmdir((dir + "/" + n).c_str()) == 0)
      removed.push_back(n);
    else if (errs)
      errs->push_back(dir + "/" + n + ": cannot remove: " + strerror(errno));
  }
  return removed;
}

bool RemoveKeptTraceInstance(const std::string& tracefs_root, std::string* err) {
  const std::string path = tracefs_root + "/instances/" + kKeptInstance;
  const int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return false;  // none
  bool removed = false;
  if (flock(fd, LOCK_EX | LOCK_NB) == 0) {  // else a run holds it
    removed = rmdir(path.c_str()) == 0;
    if (!removed)
      *err = path + ": cannot remove: " + strerror(errno);
  }
  close(fd);
  return removed;
}

void RestoreTraceInstances(std::FILE* out) {
  const std::string root = FindTracefs();
  if (root.empty())
    return;
  std::string err;
  if (RemoveKeptTraceInstance(root, &err))
    std::fprintf(out, "removed tracefs instance %s/instances/%s (kept between runs)\n",
                 root.c_str(), kKeptInstance);
  else if (!err.empty())
    spdlog::error("{}", err);
  std::vector<std::string> errs;
  for (const std::string& n : RemoveStaleTraceInstances(root, &errs))
    std::fprintf(out,
                 "removed tracefs instance %s/instances/%s left by a run that did not finish\n",
                 root.c_str(), n.c_str());
  for (const std::string& e : errs)
    spdlog::error("{}", e);
}

}  // namespace cpuhp
