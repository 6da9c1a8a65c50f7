// SPDX-License-Identifier: GPL-2.0
#include "sources/tracefs_source.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

namespace cpuhp {
namespace {

constexpr const char* kInstancePrefix = "cpuhp-stress-";
constexpr const char* kDefaultTracefs = "/sys/kernel/tracing";
constexpr size_t kMaxLine = 4096;
constexpr size_t kMalformedExamples = 5;
const char* const kEvents[] = {"cpuhp_enter", "cpuhp_multi_enter", "cpuhp_exit"};

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

// ---- TraceJoiner ----

void TraceJoiner::Line(std::string_view line) {
  if (line.empty() || line.front() == '#')
    return;
  TraceEvent ev;
  if (!ParseTraceLine(line, &ev)) {
    ++malformed_;
    if (malformed_examples_.size() < kMalformedExamples) {
      std::string ex(line.substr(0, 160));
      for (char& c : ex)
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e)
          c = '?';
      malformed_examples_.push_back(std::move(ex));
    }
    return;
  }
  if (ev.kind == TraceKind::kLost) {
    lost_markers_ += ev.lost;
    return;
  }
  ++events_;
  matcher_.Feed(ev, &pending_);
}

void TraceJoiner::FeedText(std::string_view text) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    if (nl == std::string_view::npos) {
      partial_.append(text);
      if (partial_.size() > kMaxLine) {  // no newline in sight: garbage
        Line(partial_);
        partial_.clear();
      }
      return;
    }
    if (partial_.empty()) {
      Line(text.substr(0, nl));
    } else {
      partial_.append(text.substr(0, nl));
      Line(partial_);
      partial_.clear();
    }
    text.remove_prefix(nl + 1);
  }
}

void TraceJoiner::EndOperation(const OpRecord& rec) {
  const uint64_t w0 = rec.start_ns - rec.start_ns % 1000;
  const uint64_t w1 = rec.start_ns + rec.duration_ns;
  std::vector<TraceStep> mine, later;
  for (TraceStep& s : pending_) {
    if (s.begin_ns > w1)
      later.push_back(std::move(s));  // after this write: a later one's, or none
    else if (s.cpu == rec.cpu && s.begin_ns >= w0)
      mine.push_back(std::move(s));
    else
      ++outside_ops_;
  }
  pending_ = std::move(later);
  stats_.AddOperation(rec, mine);
}

void TraceJoiner::Finish() {
  if (!partial_.empty()) {
    Line(partial_);
    partial_.clear();
  }
  outside_ops_ += pending_.size();
  pending_.clear();
}

nlohmann::json TraceJoiner::EventsJson() const {
  return {{"parsed", events_},
          {"malformed_lines", malformed_},
          {"malformed_examples", malformed_examples_},
          {"unmatched_enters", matcher_.unmatched_enters()},
          {"unmatched_exits", matcher_.unmatched_exits()},
          {"open_at_end", matcher_.open()},
          {"steps_outside_operations", outside_ops_}};
}

// ---- TracefsSource ----

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

TracefsSource::TracefsSource(std::string sysfs_root, std::string tracefs_root)
    : sysfs_root_(std::move(sysfs_root)), tracefs_(std::move(tracefs_root)) {}

TracefsSource::~TracefsSource() {
  RemoveInstance();
}

bool TracefsSource::Start(std::string* why) {
  // The state table first: without it nothing can be named, and a fake or
  // foreign sysfs root must not lead to mounting anything.
  HotplugStates states;
  if (!ReadHotplugStates(sysfs_root_, &states, why))
    return false;
  if (tracefs_.empty()) {
    tracefs_ = FindTracefs();
    if (tracefs_.empty()) {
      // systemd mounts it at boot; a minimal system may not have.
      if (mount("nodev", kDefaultTracefs, "tracefs", 0, nullptr) != 0) {
        *why = std::string("tracefs is not mounted and mounting it at ") + kDefaultTracefs +
               " failed: " + strerror(errno);
        return false;
      }
      tracefs_ = kDefaultTracefs;
      mounted_by_us_ = true;
      spdlog::info("mounted tracefs at {} (it was not mounted; it stays mounted)", tracefs_);
    }
  }
  for (const char* ev : kEvents) {
    if (!IsDir(tracefs_ + "/events/cpuhp/" + ev)) {
      *why = tracefs_ + "/events/cpuhp/" + ev + " is missing: this kernel has no cpuhp tracepoints";
      return false;
    }
  }
  std::vector<std::string> errs;
  stale_removed_ = RemoveStaleTraceInstances(tracefs_, &errs);
  for (const std::string& n : stale_removed_)
    spdlog::warn("removed tracefs instance {} left by a run that did not finish", n);
  for (const std::string& e : errs)
    spdlog::warn("{}", e);

  instance_ = tracefs_ + "/instances/" + kInstancePrefix + std::to_string(getpid());
  if (mkdir(instance_.c_str(), 0700) != 0) {
    *why = instance_ + ": cannot create the tracefs instance: " + strerror(errno);
    instance_.clear();
    return false;
  }
  instance_created_ = true;
  auto fail = [&](const std::string& reason) {
    *why = reason;
    RemoveInstance();
    return false;
  };
  std::string err;
  // "mono" is CLOCK_MONOTONIC: the clock of OpRecord::start_ns.
  if (!WriteFile(instance_ + "/trace_clock", "mono", &err))
    return fail(err);
  for (const char* ev : kEvents)
    if (!WriteFile(instance_ + "/events/cpuhp/" + ev + "/enable", "1", &err))
      return fail(err);
  if (!WriteFile(instance_ + "/tracing_on", "1", &err))
    return fail(err);
  const std::string pipe = instance_ + "/trace_pipe";
  fd_ = open(pipe.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0)
    return fail(pipe + ": cannot open: " + strerror(errno));
  joiner_ = std::make_unique<TraceJoiner>(std::move(states));
  return true;
}

void TracefsSource::Drain() {
  if (fd_ < 0)
    return;
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd_, buf, sizeof(buf));
    if (n > 0) {
      joiner_->FeedText(std::string_view(buf, static_cast<size_t>(n)));
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    break;  // EAGAIN: nothing more right now
  }
}

void TracefsSource::OpEnd(const OpRecord& rec) {
  if (!joiner_)
    return;
  Drain();
  joiner_->EndOperation(rec);
}

void TracefsSource::ReadLostStats() {
  uint64_t overrun = 0, dropped = 0;
  nlohmann::json per_cpu = nlohmann::json::array();
  const std::string dir = instance_ + "/per_cpu";
  if (DIR* d = opendir(dir.c_str())) {
    std::vector<int> cpus;
    while (dirent* e = readdir(d)) {
      int cpu = -1;
      std::string_view n = e->d_name;
      if (n.substr(0, 3) == "cpu" &&
          std::from_chars(n.data() + 3, n.data() + n.size(), cpu).ec == std::errc())
        cpus.push_back(cpu);
    }
    closedir(d);
    std::sort(cpus.begin(), cpus.end());
    for (int cpu : cpus) {
      std::string text;
      if (!ReadText(dir + "/cpu" + std::to_string(cpu) + "/stats", &text))
        continue;
      uint64_t o = StatField(text, "overrun"), dr = StatField(text, "dropped events");
      overrun += o;
      dropped += dr;
      if (o || dr)
        per_cpu.push_back({{"cpu", cpu}, {"overrun", o}, {"dropped", dr}});
    }
  }
  lost_ = {{"overrun", overrun},
           {"dropped", dropped},
           {"lost_markers", joiner_ ? joiner_->lost_markers() : 0},
           {"per_cpu", std::move(per_cpu)}};
}

void TracefsSource::Stop() {
  if (!joiner_)
    return;
  Drain();
  joiner_->Finish();
  if (instance_created_)
    WriteFile(instance_ + "/tracing_on", "0", &remove_error_);
  ReadLostStats();
  RemoveInstance();
  if (!instance_removed_)
    spdlog::error("{}", remove_error_);
}

void TracefsSource::RemoveInstance() {
  if (fd_ >= 0) {
    close(fd_);
    fd_ = -1;
  }
  if (!instance_created_ || instance_removed_)
    return;
  // Retry: the kernel refuses while a reader of the instance is still
  // closing (EBUSY).
  for (int i = 0; i < 50; ++i) {
    if (rmdir(instance_.c_str()) == 0 || errno == ENOENT) {
      instance_removed_ = true;
      remove_error_.clear();
      return;
    }
    if (errno != EBUSY)
      break;
    usleep(10000);
  }
  remove_error_ = instance_ + ": cannot remove the tracefs instance: " + strerror(errno) +
                  "; `cpuhp-stress restore` removes it";
}

nlohmann::json TracefsSource::ReportJson() const {
  nlohmann::json j = joiner_ ? joiner_->stats().ToJson() : nlohmann::json::object();
  uint64_t lost_total = lost_.value("overrun", uint64_t{0}) + lost_.value("dropped", uint64_t{0}) +
                        lost_.value("lost_markers", uint64_t{0});
  nlohmann::json lost = lost_;
  lost["total"] = lost_total;
  j["tracefs"] = tracefs_;
  j["mounted_by_us"] = mounted_by_us_;
  j["instance"] = instance_;
  j["instance_removed"] = instance_removed_;
  if (!instance_removed_)
    j["instance_error"] = remove_error_;
  j["stale_instances_removed"] = stale_removed_;
  j["reader"] = "trace_pipe";
  j["trace_clock"] = "mono";
  j["timestamp_resolution_ns"] = 1000;
  j["events"] = joiner_ ? joiner_->EventsJson() : nlohmann::json::object();
  j["lost_events"] = std::move(lost);
  return j;
}

void RestoreTraceInstances(std::FILE* out) {
  const std::string root = FindTracefs();
  if (root.empty())
    return;
  std::vector<std::string> errs;
  for (const std::string& n : RemoveStaleTraceInstances(root, &errs))
    std::fprintf(out,
                 "removed tracefs instance %s/instances/%s left by a run that did not finish\n",
                 root.c_str(), n.c_str());
  for (const std::string& e : errs)
    spdlog::error("{}", e);
}

std::string TracepointsSummary(const nlohmann::json& section) {
  if (section.value("status", "") != "ok")
    return "kernel states (tracepoints): unavailable: " + section.value("reason", "") + "\n";
  std::string out = KernelStateStats::Summary(section, 10);
  const auto& lost = section["lost_events"];
  char line[200];
  std::snprintf(line, sizeof(line),
                "  %llu operations traced, %llu without events; lost events: %llu\n",
                static_cast<unsigned long long>(section.value("ops_with_steps", uint64_t{0})),
                static_cast<unsigned long long>(section.value("ops_without_steps", uint64_t{0})),
                static_cast<unsigned long long>(lost.value("total", uint64_t{0})));
  return out + line;
}

}  // namespace cpuhp
