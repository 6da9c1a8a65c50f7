// SPDX-License-Identifier: GPL-2.0
#include "machine/restore.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <fstream>
#include <sstream>
#include <thread>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "machine/state_tidy.h"
#include "util/cpu_list.h"
#include "util/errno_name.h"
#include "util/file_util.h"
#include "util/json_file.h"

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

// The first directory from `dir` up to / that anyone may write and that has
// no sticky bit: whoever can write there can rename `dir` (or the directory
// holding it) away and put their own in its place. /tmp (sticky) is fine.
std::string OpenToAll(const std::string& dir) {
  char resolved[PATH_MAX];
  if (!realpath(dir.c_str(), resolved))
    return "";
  for (std::string up = resolved;;) {
    const size_t slash = up.rfind('/');
    up = slash == 0 ? "/" : up.substr(0, slash);
    struct stat st {};
    if (stat(up.c_str(), &st) == 0 && (st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
      return up;
    if (up == "/")
      return "";
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
  // Root keeps its mask, lock and checkpoints here: a directory someone else
  // owns or may write lets them plant the state file or swap in symlinks.
  struct stat st {};
  if (lstat(dir_.c_str(), &st) != 0) {
    *err = dir_ + ": stat: " + strerror(errno);
    return false;
  }
  if (S_ISLNK(st.st_mode)) {
    *err = dir_ + ": state directory is a symbolic link: refused (give the directory itself)";
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    *err = dir_ + ": state directory is not a directory";
    return false;
  }
  if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    char mode[8];
    snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    *err = dir_ + ": state directory must be owned by uid " + std::to_string(geteuid()) +
           " and writable by it alone (owner uid " + std::to_string(st.st_uid) + ", mode " + mode +
           ")";
    return false;
  }
  if (const std::string open = OpenToAll(dir_); !open.empty()) {
    *err = dir_ + ": state directory under " + open +
           ", which anyone may write (no sticky bit): refused";
    return false;
  }
  std::string path = dir_ + "/lock";
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
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
  // Ours now: what crashed runs left behind goes before it piles up.
  for (const std::string& name : TidyStateDir(dir_, kKeepRejected))
    spdlog::info("{}/{}: removed (left by an earlier run)", dir_, name);
  return true;
}

bool StateDir::HasState() const {
  return access(state_path().c_str(), F_OK) == 0;
}

namespace {

constexpr size_t kMaxStateBytes = 64 * 1024;  // ours is ~300 bytes

// A boot id as the kernel prints it (36 characters, hex and dashes), or
// empty when /proc had none.
bool IsBootId(const std::string& s) {
  if (s.empty())
    return true;
  if (s.size() != 36)
    return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !isxdigit(static_cast<unsigned char>(s[i])))
      return false;
  }
  return true;
}

}  // namespace

bool StateDir::Read(SavedState* s, std::string* err) const {
  const std::string path = state_path();
  auto bad = [&](const std::string& what) {
    *err = path + ": corrupt state file: " + what +
           " (move it aside after checking /sys/devices/system/cpu/online by hand)";
    return false;
  };
  std::string text;
  if (!ReadSmallFile(path, kMaxStateBytes, &text, err, nullptr, FileKind::kRegularOnly))
    return false;
  nlohmann::json j;
  std::string perr;
  if (!ParseJsonText(text, path, &j, &perr))
    return bad(perr.substr(path.size() + 2));  // without the "<path>: " it starts with
  if (!j.is_object())
    return bad("not a JSON object");
  auto string_field = [&](const char* key, size_t max_len, std::string* out) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string())
      return bad(std::string("missing string \"") + key + "\"");
    if (it->get_ref<const std::string&>().size() > max_len)
      return bad(std::string("\"") + key + "\" longer than " + std::to_string(max_len) + " bytes");
    *out = it->get<std::string>();
    return true;
  };
  SavedState r;
  std::string online, controlled;
  if (!string_field("online_at_start", 4096, &online) ||
      !string_field("controlled", 4096, &controlled) ||
      !string_field("sysfs_root", 4096, &r.sysfs_root) ||
      !string_field("boot_id", 64, &r.boot_id) || !string_field("started_at", 64, &r.started_at))
    return false;
  if (!ParseCpuList(online, &r.online_at_start, &perr) ||
      !ParseCpuList(controlled, &r.controlled, &perr))
    return bad(perr);
  if (r.online_at_start.empty())
    return bad("empty online mask");
  if (!IsBootId(r.boot_id))
    return bad("\"boot_id\" is not a boot id");
  for (char c : r.started_at)
    if (c < 0x20 || c > 0x7e)
      return bad("\"started_at\" is not a time");
  auto pid = j.find("pid");
  if (pid == j.end() || !pid->is_number_integer() || pid->get<int64_t>() < 1 ||
      pid->get<int64_t>() > INT32_MAX)
    return bad("\"pid\" is not a process id");
  r.pid = static_cast<int>(pid->get<int64_t>());
  auto armed = j.find("fail_may_be_armed");
  if (armed != j.end() && !armed->is_boolean())
    return bad("\"fail_may_be_armed\" is not a boolean");
  r.fail_may_be_armed = armed != j.end() && armed->get<bool>();
  auto smt = j.find("smt_control");
  if (smt != j.end() && (!smt->is_string() || smt->get_ref<const std::string&>().size() > 16))
    return bad("\"smt_control\" is not an SMT mode");
  if (smt != j.end())
    r.smt_control = smt->get<std::string>();
  *s = std::move(r);
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
  if (!s.smt_control.empty())
    j["smt_control"] = s.smt_control;
  return WriteFileAtomic(state_path(), DumpJson(j, 2) + "\n", err);
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
                          const std::vector<int>& mask, const std::string& smt_control) {
  RestoreResult r;
  std::string now, err;
  if (!smt_control.empty() &&
      (ctl->ReadSmtFile("control", &now, &err) != 0 || now != smt_control)) {
    ++r.writes;
    if (const int e = ctl->WriteSmtControl(smt_control); e != 0) {
      r.ok = false;
      r.failures.push_back("smt/control \"" + smt_control + "\": " + ErrnoName(e));
    }
  }
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
