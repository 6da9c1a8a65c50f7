// SPDX-License-Identifier: GPL-2.0
#include "machine/machine_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "util/file_util.h"
#include "util/json_file.h"

namespace cpuhp {
namespace {

// A path or pid read back from a record another process wrote: one line of
// printable text in our error message, whatever it holds.
std::string Printable(std::string s) {
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      c = '?';
  return s;
}

std::string RecordPath(const std::string& record_dir, const struct stat& st) {
  return record_dir + "/holder-" + std::to_string(st.st_dev) + "-" + std::to_string(st.st_ino) +
         ".json";
}

std::string DescribeHolder(const std::string& record) {
  nlohmann::json j;
  std::string err;
  if (record.empty() || !LoadJsonFile(record, 4096, &j, &err) || !j.is_object())
    return "holder unknown: no readable " + (record.empty() ? std::string("record") : record);
  auto pid = j.find("pid");
  auto dir = j.find("state_dir");
  std::string s =
      "pid " + (pid != j.end() && pid->is_number_integer() ? std::to_string(pid->get<int64_t>())
                                                           : std::string("unknown"));
  s += ", state directory " +
       (dir != j.end() && dir->is_string() ? Printable(dir->get<std::string>()) : "unknown");
  return s;
}

}  // namespace

std::string DefaultHolderRecordDir() {
  if (const char* env = std::getenv("RUNTIME_DIRECTORY")) {
    std::string first(env, strcspn(env, ":"));
    if (!first.empty())
      return first;
  }
  return geteuid() == 0 ? "/run/cpuhp-stress" : "";
}

MachineLock::~MachineLock() {
  Release();
}

bool MachineLock::Acquire(const std::string& sysfs_root, const std::string& state_dir,
                          const std::string& record_dir, std::string* err) {
  int fd = open(sysfs_root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    *err = sysfs_root + ": cannot open CPU sysfs directory: " + strerror(errno);
    return false;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    *err = sysfs_root + ": fstat: " + strerror(errno);
    close(fd);
    return false;
  }
  const std::string record = record_dir.empty() ? "" : RecordPath(record_dir, st);
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    close(fd);
    if (e == EWOULDBLOCK)
      *err = sysfs_root + ": another cpuhp-stress run is using these CPUs (" +
             DescribeHolder(record) + ")";
    else
      *err = sysfs_root + ": flock: " + strerror(e);
    return false;
  }
  fd_ = fd;
  if (!record.empty()) {
    // Only a name for the error above: a run that cannot write it still runs.
    if (mkdir(record_dir.c_str(), 0755) != 0 && errno != EEXIST)
      return true;
    nlohmann::json j = {{"pid", getpid()}, {"state_dir", state_dir}, {"sysfs_root", sysfs_root}};
    std::string ignored;
    if (WriteFileAtomic(record, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                        &ignored))
      record_ = record;
  }
  return true;
}

void MachineLock::Release() {
  if (fd_ < 0)
    return;
  // The record first: once the lock is free the next holder writes its own.
  if (!record_.empty())
    unlink(record_.c_str());
  record_.clear();
  close(fd_);
  fd_ = -1;
}

}  // namespace cpuhp
