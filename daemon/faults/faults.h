// SPDX-License-Identifier: GPL-2.0
// Fault injection through cpuN/hotplug/fail: arm a state, run the operation,
// expect the error, check that the kernel rolled back (cpuN/online and
// cpuN/hotplug/state as before, the next normal operation on that CPU
// succeeds) and clear fail (-1) whatever happened.
//
// Which states can fail is learned, never assumed: the kernel refuses (EINVAL)
// to arm STARTING/DYING states, states without callbacks, and PREPARE-section
// states while the CPU is up; so the armable set of a direction is probed
// (arm, clear) while the CPU is in that direction's starting state: at start
// for the direction each CPU can go then, at its first operation for the
// other. An armable state whose callback does not run in that direction (a
// teardown-only state going online) does not fire: the operation succeeds and
// fail stays armed. That is recorded as "not_reached", the state leaves the
// candidates of that CPU and direction, and the CPU is moved back.
//
// Unsafe states: with split startup (x86 from 6.5, "cpu:kick_ap" in the
// table) the states after cpu:kick_ap up to cpu:bringup fail while the AP is
// already kicked and waiting to be released; the kernel's rollback leaves it
// there and counts on the next bring-up re-kicking it (INIT/SIPI on x86). On
// this lab's x86 KVM guest (6.18) that re-kick once never answered: every
// later online failed ("CPU1 failed to report alive state") until reboot. So
// they are armable but skipped (reported as skipped_unsafe) unless the config
// sets faults.allow_unsafe; naming one without it is bad input.
//
// An injected operation is an extra write before the schedule's operation on
// the same CPU and direction; that operation is then the "next normal
// operation" that proves the rollback. Injected writes are counted here, not
// in RunStats: they never show up as errors of the run; a rollback that
// failed does.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "config/config.h"
#include "machine/cpu_control.h"
#include "machine/hotplug_states.h"
#include "run/runner.h"
#include "run/schedule.h"
#include "sources/kmsg_health.h"
#include "util/rng.h"

namespace cpuhp {

struct FaultOptions {
  double rate = 0.0;  // rate mode: probability per operation
  bool offline = true;
  bool online = true;
  std::vector<std::string> states;  // names; empty: every failable state
  int repeats = 2;                  // sweep: injections per state, direction and CPU
  bool sweep = false;               // inject before every operation while a sweep queue has work
  uint64_t seed = 0;
  bool stop_on_error = false;  // a failed rollback stops the run
  bool allow_unsafe = false;   // inject the unsafe states too (see above)
};

// Whether the config asks for injection (faults.rate > 0 or fault_sweep).
bool FaultsWanted(const Config& cfg);
FaultOptions FaultOptionsFrom(const Config& cfg, uint64_t seed);

// Outcomes of one (state, direction), summed over CPUs.
struct FaultCounts {
  uint64_t injected = 0;           // armed, then the operation written
  uint64_t rolled_back = 0;        // failed, state back, the next operation on the CPU succeeded
  uint64_t not_rolled_back = 0;    // an error of the run: see failures
  uint64_t not_reached = 0;        // succeeded with fail still armed: no callback this way
  uint64_t unverified = 0;         // rolled back, but the run ended before the next operation
  std::map<int, uint64_t> errnos;  // errno of the injected write (0: it succeeded) -> count
};

class FaultInjector : public OpHook {
 public:
  static constexpr size_t kMaxFailures = 100;
  static constexpr size_t kLogLinesBefore = 10;

  FaultInjector(CpuControl* ctl, std::vector<int> cpus, FaultOptions opts);

  // Kernel log lines around a failed rollback (reused from kmsg_health);
  // without one, failures carry no log lines and the report says why.
  void set_kmsg_reader(std::unique_ptr<KmsgReader> reader) { kmsg_ = std::move(reader); }

  enum class Start { kOk, kUnavailable, kBadInput, kFailed };
  // Reads hotplug/states, resolves the configured names (an unknown name is
  // kBadInput), clears a fail left armed on the selected CPUs (warning),
  // probes the direction each CPU can go now. kUnavailable: this kernel has
  // no hotplug/fail (the reason in *err; the report says so).
  Start Begin(const OnlineState& state, std::string* err);
  bool available() const { return available_; }

  bool BeforeOp(const Operation& op, uint64_t index, OnlineState* state, std::string* why) override;
  bool AfterOp(const OpRecord& rec, std::string* why) override;

  // Writes -1 to hotplug/fail of every selected CPU and reads it back.
  // Failures name the CPU and the errno.
  bool ClearAll(std::vector<std::string>* failures);

  // Sweep: whether `cpu` still has injections to do (or a direction to probe).
  bool SweepPending(int cpu) const;
  // Sweep: operations a CPU may take before the sweep gives up on it.
  uint64_t SweepBudget() const;

  uint64_t failed_rollbacks() const { return failed_; }
  uint64_t injected() const override { return injected_; }
  const std::map<std::pair<int, Direction>, FaultCounts>& counts() const { return counts_; }
  nlohmann::json ReportJson() const;

 private:
  struct Learned {
    bool probed = false;
    std::vector<int> armable;                  // in table order
    std::vector<std::pair<int, int>> refused;  // (state, errno)
    std::vector<int> unsafe;                   // armable, skipped: see "Unsafe states"
    std::vector<int> candidates;               // armable & configured & not learned unreachable
    std::deque<int> queue;                     // sweep: states still to inject, in order
  };
  struct Failure {
    uint64_t index = 0;
    int cpu = -1;
    int state = -1;
    Direction dir = Direction::kOffline;
    int err = 0;
    int online_before = -1, online_after = -1;
    int hp_before = -1, hp_after = -1;
    int next_err = 0;
    std::string why;
    std::vector<std::string> kernel_log;
  };
  struct Pending {  // a rolled-back injection waiting for the next operation
    int state = -1;
    Direction dir = Direction::kOffline;
    uint64_t index = 0;
    size_t log_mark = 0;
  };

  Learned& learned(int cpu, Direction d) { return learned_[{cpu, d}]; }
  bool Enabled(Direction d) const {
    return d == Direction::kOffline ? opts_.offline : opts_.online;
  }
  // Arms and clears every candidate state on `cpu` (in d's starting state).
  bool Probe(int cpu, Direction d, std::string* why);
  // One injected operation. false: the run must stop (fail cannot be cleared).
  bool Inject(int cpu, Direction d, int state, uint64_t index, OnlineState* s, std::string* why);
  void Fail(Failure f);
  void DrainKmsg();
  std::vector<std::string> LogAround(size_t mark) const;

  CpuControl* ctl_;
  std::vector<int> cpus_;
  FaultOptions opts_;
  Rng rng_;
  HotplugStates table_;
  std::vector<int> wanted_;  // configured state numbers (table order)
  std::vector<int> unsafe_;  // going online: after cpu:kick_ap up to cpu:bringup
  bool available_ = false;
  std::string unavailable_;
  std::vector<std::string> cleared_at_start_;
  std::map<std::pair<int, Direction>, Learned> learned_;
  std::map<std::pair<int, Direction>, FaultCounts> counts_;
  std::map<int, Pending> pending_;  // by CPU
  std::vector<Failure> failures_;
  uint64_t failures_dropped_ = 0;
  uint64_t injected_ = 0;
  uint64_t failed_ = 0;
  uint64_t arm_refused_ = 0;  // a probed-armable state refused later
  uint64_t probes_ = 0;
  std::unique_ptr<KmsgReader> kmsg_;
  std::string kmsg_status_ = "not requested";
  std::vector<std::string> log_;  // kernel log lines read so far (bounded)
  size_t log_base_ = 0;           // lines dropped from the front of log_
  std::vector<char> kbuf_;
  std::string stop_why_;  // stop_on_error and a rollback failed
};

// pattern "fault_sweep": each selected CPU in turn toggles until the injector
// has run every failable state of both directions `repeats` times on it,
// then is left as it was at start. Ends with "schedule_complete"; a CPU
// making no progress within the budget stops it with an error.
std::unique_ptr<Schedule> NewFaultSweepSchedule(const ScheduleParams& p, const OnlineState& start,
                                                FaultInjector* injector);

// Writes -1 to cpuN/hotplug/fail of each CPU that has the file and has a
// state armed; `cleared` gets "cpu1: 193" for each. Returns the failures
// ("cpu1 hotplug/fail: EACCES"). Restore runs it before touching any online
// file: a state left armed must not fire during the restore.
std::vector<std::string> ClearArmedFail(CpuControl* ctl, const std::vector<int>& cpus,
                                        std::vector<std::string>* cleared);

// "fault injection: ..." lines for the human summary, from report["faults"].
std::string FaultsSummary(const nlohmann::json& report);

}  // namespace cpuhp
