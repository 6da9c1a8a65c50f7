// SPDX-License-Identifier: GPL-2.0
// Restore safety. Before the first operation a run records the starting
// online mask in <state_dir>/state.json and holds <state_dir>/lock (flock, so
// a dead run's lock is free). At any exit the run puts that mask back; after a
// kill -9, `cpuhp-stress restore` or the next `run` does.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "machine/cpu_control.h"

namespace cpuhp {

struct SavedState {
  int pid = 0;
  std::string boot_id;
  std::string started_at;
  std::string sysfs_root;
  std::vector<int> online_at_start;  // the mask to restore (whole system)
  std::vector<int> controlled;       // CPUs this run may write (hotpluggable)
  // The run injects faults: cpuN/hotplug/fail may be armed when it dies, and
  // restore clears it on every controlled CPU (only then: without it restore
  // never writes hotplug/fail).
  bool fail_may_be_armed = false;
  // The smt pattern: smt/control at start ("on", "off", "4"; empty for any
  // other pattern, whose restore never writes smt/control).
  std::string smt_control{};
};

class StateDir {
 public:
  explicit StateDir(std::string dir) : dir_(std::move(dir)) {}
  ~StateDir();
  StateDir(const StateDir&) = delete;
  StateDir& operator=(const StateDir&) = delete;

  // Creates the directory if needed and takes the lock. Fails with a one-line
  // error when another run holds it (naming its pid) or the dir is unusable.
  bool Lock(std::string* err);
  // Whether a state file exists (a run that did not finish).
  bool HasState() const;
  bool Read(SavedState* s, std::string* err) const;
  bool Write(const SavedState& s, std::string* err) const;  // atomic
  bool Remove(std::string* err) const;
  std::string state_path() const { return dir_ + "/state.json"; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  int lock_fd_ = -1;
};

struct RestoreResult {
  bool ok = true;
  int writes = 0;
  std::vector<std::string> failures;  // "cpu1 online: EBUSY"
  nlohmann::json ToJson(const std::vector<int>& mask) const;
};

// Brings every CPU in `controlled` to its state in `mask`: onlines first, then
// offlines, retrying transient EBUSY/EAGAIN for up to ~5 s per CPU. A
// non-empty `smt_control` is written to smt/control first when it reads
// otherwise: a sibling thread refuses online while the mode excludes it.
RestoreResult RestoreMask(CpuControl* ctl, const std::vector<int>& controlled,
                          const std::vector<int>& mask, const std::string& smt_control = {});

std::string ReadBootId();

}  // namespace cpuhp
