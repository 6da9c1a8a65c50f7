// SPDX-License-Identifier: GPL-2.0
#include "machine/restore.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "util/cpu_list.h"
#include "util/errno_name.h"
#include "util/file_util.h"

namespace cpuhp {

std::string ReadBootId() {
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(f, id);
  return id;
}

StateDir::~StateDir() {
  if (lock_fd_ >= 0)
    close(lock_fd_);
}

namespace {

// mkdir -p: a minimal board root file system may have no /var/lib. Only
// what is created gets `mode`; existing parents are left as they are.
bool MakeDirs(const std::string& dir, mode_t mode, std::string* why) {
  for (size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
    const std::string part = dir.substr(0, slash);
    if (!part.empty() && mkdir(part.c_str(), mode) != 0 && errno != EEXIST) {
      *why = part + ": " + strerror(errno);
      return false;
    }
    if (slash == std::string::npos)
      return true;
  }
}

}  // namespace

bool StateDir::Lock(std::string* err) {
  // 0700: the state file tells which CPUs to take offline at the next start.
  std::string why;
  if (!MakeDirs(dir_, 0700, &why)) {
    *err = dir_ + ": cannot create state directory: " + why;
    return false;
  }
  std::string path = dir_ + "/lock";
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    *err = path + ": open: " + strerror(errno);
    return false;
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    char buf[32] = {};
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    close(fd);
    if (e == EWOULDBLOCK) {
      *err = path + ": another cpuhp-stress run holds this state directory" +
             (n > 0 ? std::string(" (pid ") + std::to_string(atoi(buf)) + ")" : std::string());
    } else {
      *err = path + ": flock: " + strerror(e);
    }
    return false;
  }
  std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(fd, 0) != 0 || pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    *err = path + ": write: " + strerror(errno);
    close(fd);
    return false;
  }
  lock_fd_ = fd;
  return true;
}

bool StateDir::HasState() const {
  return access(state_path().c_str(), F_OK) == 0;
}

bool StateDir::Read(SavedState* s, std::string* err) const {
  std::ifstream f(state_path());
  if (!f) {
    *err = state_path() + ": cannot read: " + strerror(errno);
    return false;
  }
  std::stringstream text;
  text << f.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  auto bad = [&](const std::string& what) {
    *err = state_path() + ": corrupt state file: " + what +
           " (move it aside after checking /sys/devices/system/cpu/online by hand)";
    return false;
  };
  if (!j.is_object())
    return bad("not a JSON object");
  for (const char* key : {"online_at_start", "controlled", "sysfs_root"})
    if (!j.contains(key) || !j[key].is_string())
      return bad(std::string("missing string \"") + key + "\"");
  std::string perr;
  if (!ParseCpuList(j["online_at_start"].get<std::string>(), &s->online_at_start, &perr) ||
      !ParseCpuList(j["controlled"].get<std::string>(), &s->controlled, &perr))
    return bad(perr);
  if (s->online_at_start.empty())
    return bad("empty online mask");
  s->sysfs_root = j["sysfs_root"].get<std::string>();
  s->pid = j.value("pid", 0);
  s->boot_id = j.value("boot_id", "");
  s->started_at = j.value("started_at", "");
  s->fail_may_be_armed = j.contains("fail_may_be_armed") && j["fail_may_be_armed"].is_boolean() &&
                         j["fail_may_be_armed"].get<bool>();
  return true;
}

bool StateDir::Write(const SavedState& s, std::string* err) const {
  nlohmann::json j = {{"pid", s.pid},
                      {"boot_id", s.boot_id},
                      {"started_at", s.started_at},
                      {"sysfs_root", s.sysfs_root},
                      {"online_at_start", FormatCpuList(s.online_at_start)},
                      {"controlled", FormatCpuList(s.controlled)},
                      {"fail_may_be_armed", s.fail_may_be_armed}};
  return WriteFileAtomic(state_path(), j.dump(2) + "\n", err);
}

bool StateDir::Remove(std::string* err) const {
  if (unlink(state_path().c_str()) != 0 && errno != ENOENT) {
    *err = state_path() + ": unlink: " + strerror(errno);
    return false;
  }
  return true;
}

nlohmann::json RestoreResult::ToJson(const std::vector<int>& mask) const {
  return {{"ok", ok}, {"writes", writes}, {"failures", failures}, {"mask", FormatCpuList(mask)}};
}

RestoreResult RestoreMask(CpuControl* ctl, const std::vector<int>& controlled,
                          const std::vector<int>& mask) {
  RestoreResult r;
  for (bool want_online : {true, false}) {
    for (int cpu : controlled) {
      if (std::binary_search(mask.begin(), mask.end(), cpu) != want_online)
        continue;
      std::string err;
      int e = 0;
      for (int attempt = 0; attempt < 500; ++attempt) {
        int now = ctl->ReadOnline(cpu, &err);
        if (now == static_cast<int>(want_online)) {
          e = 0;
          break;
        }
        if (now < 0) {
          e = EIO;
          break;
        }
        ++r.writes;
        e = ctl->WriteOnline(cpu, want_online);
        if (e != EBUSY && e != EAGAIN && e != 0)
          break;
        if (e != 0)
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      if (e != 0) {
        r.ok = false;
        r.failures.push_back("cpu" + std::to_string(cpu) +
                             (want_online ? " online: " : " offline: ") +
                             (err.empty() ? ErrnoName(e) : err));
      }
    }
  }
  return r;
}

}  // namespace cpuhp
