// SPDX-License-Identifier: GPL-2.0
// One run per machine. The state directory's lock keeps two runs off one
// state file; it does not keep two runs with different state directories off
// the same CPUs (cpuhp-stress@a and @b): B would record A's offline CPUs as
// its start mask and put them back offline after A restored them. So a run
// also holds a flock on the CPU sysfs directory itself: one per sysfs root,
// the same inode in every mount namespace and sandbox, released by the kernel
// when the holder dies, no file to plant or follow.
//
// Who holds it is recorded beside, in <record_dir>/holder-<dev>-<ino>.json
// ($RUNTIME_DIRECTORY, or /run/cpuhp-stress for root), so that the second run
// can name the holder's pid and state directory.
#pragma once

#include <string>

namespace cpuhp {

class MachineLock {
 public:
  MachineLock() = default;
  ~MachineLock();
  MachineLock(const MachineLock&) = delete;
  MachineLock& operator=(const MachineLock&) = delete;

  // Fails when another process holds `sysfs_root` ("<root>: another
  // cpuhp-stress run holds these CPUs (pid 123, state directory /x)") or the
  // root cannot be opened. `record_dir` empty: no record written or read.
  bool Acquire(const std::string& sysfs_root, const std::string& state_dir,
               const std::string& record_dir, std::string* err);
  void Release();
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
  std::string record_;  // our holder record, removed before the lock goes
};

// $RUNTIME_DIRECTORY's first entry (systemd's RuntimeDirectory=), else
// /run/cpuhp-stress when running as root, else "" (no record).
std::string DefaultHolderRecordDir();

}  // namespace cpuhp
