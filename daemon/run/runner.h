// SPDX-License-Identifier: GPL-2.0
// The operation loop: schedule -> timed write -> readback -> timing sources
// -> statistics and operation log. Nothing in it allocates per operation.
#pragma once

#include <atomic>
#include <csignal>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "machine/cpu_control.h"
#include "run/in_flight.h"
#include "run/oplog.h"
#include "run/schedule.h"
#include "sources/timing_source.h"
#include "stats/run_stats.h"

namespace cpuhp {

struct RunLimits {
  uint64_t iterations = 0;   // 0: no limit
  uint64_t duration_ns = 0;  // 0: no limit; counted on duration_clock
  bool stop_on_error = false;
  uint64_t interval_ns = 0;
  // A CPU whose online writes fail this many times in a row is lost (x86:
  // "CPUn failed to report alive state", each attempt 10 s then EIO): the run
  // stops with stop_reason "error" instead of timing the same failure for the
  // rest of a soak. 0: never.
  uint32_t lost_cpu_after = 3;
  // What `duration_ns` counts. Null: wall time (CLOCK_MONOTONIC) over the
  // run and its resumed segments. The sim backend gives its clock: the limit
  // is then simulated time, the clock of every number the run reports (that
  // clock is checkpointed, so its time since `duration_zero_ns` spans every
  // segment). `--duration 24h` on sim ends after 24 h of the model's time.
  Clock* duration_clock = nullptr;
  uint64_t duration_zero_ns = 0;
};

struct RunOutcome {
  std::string stop_reason;  // iterations|duration|schedule_complete|error|signal|fatal
  std::string message;      // why, for error/fatal/signal
  uint64_t ops = 0;
};

// Runs around each operation, outside its timed window (the fault injector,
// daemon/faults.h: an injected write before the operation, the rollback
// check after it). Either returning false stops the run with stop_reason
// "error" and *why.
class OpHook {
 public:
  virtual ~OpHook() = default;
  // Before the schedule's `op` (index). May write to op.cpu; must leave
  // *state telling the truth about it.
  virtual bool BeforeOp(const Operation& op, uint64_t index, OnlineState* state,
                        std::string* why) = 0;
  // After the operation's record is complete and counted.
  virtual bool AfterOp(const OpRecord& rec, std::string* why) = 0;
  // Writes it injected so far (OpRecord::fault_injected).
  virtual uint64_t injected() const { return 0; }
};

class Runner {
 public:
  static constexpr size_t kMaxFirstErrors = 100;

  Runner(CpuControl* ctl, Schedule* schedule, OnlineState state, RunStats* stats,
         std::vector<TimingSource*> sources, OpLog* oplog, RunLimits limits)
      : ctl_(ctl),
        schedule_(schedule),
        state_(std::move(state)),
        stats_(stats),
        sources_(std::move(sources)),
        oplog_(oplog),
        limits_(limits) {}

  // Runs until a limit, the schedule's end, an error (with stop_on_error), a
  // fatal problem (operation log unwritable) or *stop becoming non-zero (the
  // signal number). `tick` is called about every 100 ms of wall time.
  RunOutcome Run(const volatile sig_atomic_t* stop, const std::function<void()>& tick);

  // Continue a checkpointed run: the next operation has index `index`, and
  // `elapsed_ns` of the duration limit are already used.
  void ResumeAt(uint64_t index, uint64_t elapsed_ns, std::vector<OpRecord> first_errors,
                uint64_t first_errors_dropped) {
    index_ = index;
    elapsed_before_ns_ = elapsed_ns;
    first_errors_ = std::move(first_errors);
    first_errors_dropped_ = first_errors_dropped;
  }
  void set_in_flight(InFlight* f) { in_flight_ = f; }
  void set_hook(OpHook* h) { hook_ = h; }
  // Valid inside `tick` and after Run: operations done so far (the next
  // index), and the run's elapsed time including resumed segments.
  uint64_t next_index() const { return index_; }
  uint64_t elapsed_ns() const;
  // The time `duration_ns` counts, as of now (RunLimits::duration_clock):
  // elapsed_ns(), or the simulated time of a sim run.
  uint64_t duration_elapsed_ns() const;
  bool duration_is_simulated() const { return limits_.duration_clock != nullptr; }
  // After Run: the CPU time of the whole process (every thread, user and
  // system, the writes' kernel work included) over this process's operation
  // loop, and the operations it did: the tool's own cost per write is this
  // beyond a bare write loop's (bench/real_cpu.sh).
  uint64_t loop_cpu_ns() const { return loop_cpu_ns_; }
  uint64_t loop_ops() const { return loop_ops_; }

  const OnlineState& state() const { return state_; }
  const std::vector<OpRecord>& first_errors() const { return first_errors_; }
  uint64_t first_errors_dropped() const { return first_errors_dropped_; }

 private:
  // A timing source asked to stop (TimingSource::WantsStop): fills *out.
  bool SourceWantsStop(RunOutcome* out);
  // Counts consecutive online writes that left rec.cpu offline (state_);
  // true (and fills *out) when the CPU is lost (RunLimits::lost_cpu_after).
  // Not for smt/control writes.
  bool CpuLost(const OpRecord& rec, RunOutcome* out);
  // The timed write and its readback, into *rec and state_: one CPU's
  // online file, or smt/control (Operation::smt_mode) and every online file.
  void WriteOnline(const Operation& op, OpRecord* rec);
  void WriteSmtControl(const Operation& op, OpRecord* rec);

  CpuControl* ctl_;
  Schedule* schedule_;
  OnlineState state_;
  RunStats* stats_;
  std::vector<TimingSource*> sources_;
  OpLog* oplog_;
  RunLimits limits_;
  std::vector<OpRecord> first_errors_;
  uint64_t first_errors_dropped_ = 0;
  uint64_t index_ = 0;
  uint64_t elapsed_before_ns_ = 0;
  uint64_t started_ns_ = 0;
  bool running_ = false;
  uint64_t ended_ns_ = 0;
  uint64_t loop_cpu_ns_ = 0, loop_ops_ = 0;
  InFlight* in_flight_ = nullptr;
  OpHook* hook_ = nullptr;
  std::vector<uint32_t> failed_onlines_;  // per CPU, consecutive; sized at Run
  // The smt/control readback's CPUs: those with an online file.
  std::vector<int> online_files_;
  // The hook's AfterOp on the last operation.
  uint64_t after_hook_ns_ = 0;
};

}  // namespace cpuhp
