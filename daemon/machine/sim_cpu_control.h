// SPDX-License-Identifier: GPL-2.0
// An in-memory machine with the semantics of /sys/devices/system/cpu: cpu0
// has no online file, the last online CPU refuses to go offline (EBUSY),
// writing the current value is a no-op. Its clock advances by a modeled
// latency that grows with the online count (seed 000/001's shapes), so
// simulated runs are exactly reproducible from the seed. Used by unit tests,
// the pipeline bench and soak tests; `--backend sim` exposes it.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "config/config.h"
#include "machine/cpu_control.h"
#include "util/rng.h"

namespace cpuhp {

class SimClock : public Clock {
 public:
  static constexpr uint64_t kStartNs = 1000000000ull;  // where every simulated machine starts

  uint64_t NowNs() override { return now_ns_; }
  uint64_t now() const { return now_ns_; }
  void Advance(uint64_t ns) { now_ns_ += ns; }
  void Set(uint64_t ns) { now_ns_ = ns; }
  // Simulated time since the machine started (a resumed run's clock is
  // checkpointed, so this spans every segment).
  uint64_t elapsed_ns() const { return now_ns_ - kStartNs; }

 private:
  uint64_t now_ns_ = kStartNs;
};

class SimCpuControl : public CpuControl {
 public:
  SimCpuControl(const SimConfig& cfg, uint64_t seed);

  std::string Describe() const override;
  bool ReadList(const std::string& name, std::vector<int>* cpus, std::string* err,
                int* err_no) override;
  bool HasOnlineFile(int cpu) override { return cpu > 0 && cpu < cpus(); }
  int ReadOnline(int cpu, std::string* err) override;
  int WriteOnline(int cpu, bool online) override;
  Clock* clock() override { return &clock_; }
  // hotplug/fail with the kernel's rules (kernel/cpu.c fail_store and
  // cpuhp_invoke_callback) over a small state table modeled on x86 6.18:
  // STARTING/DYING/DEAD-section states and states without callbacks refuse
  // (EINVAL), PREPARE states only while the CPU is offline; an armed state
  // fires once, only when the operation runs a callback of it (startup going
  // online, teardown going offline): the write returns EAGAIN and the CPU
  // rolls back. An armed state the operation does not run stays armed.
  int WriteFail(int cpu, int state) override;
  int ReadFail(int cpu, int* state) override;
  int ReadHotplugState(int cpu, int* state) override;
  int ReadHotplugStates(std::string* text) override;
  // SMT with /sim/threads_per_core (config.h): consecutive CPUs share a core.
  int ReadSmtFile(const std::string& name, std::string* text, std::string* err) override;
  int ReadThreadSiblings(int cpu, std::vector<int>* cpus, std::string* err) override;
  int WriteSmtControl(const std::string& mode) override;

  // Test hooks.
  struct Fault {
    int cpu;        // -1: any CPU
    int err;        // errno the write returns; the CPU does not change
    bool readback;  // instead: the write "succeeds" but the CPU does not change
  };
  void QueueFault(Fault f) { faults_.push_back(f); }
  void SetOnline(int cpu, bool online);  // outside interference
  void SetNohzFull(std::vector<int> cpus) { nohz_full_ = std::move(cpus); }
  // A broken rollback: when `state` fires, the CPU stays in that hotplug
  // state instead of rolling back (the online file keeps its old value);
  // the next write to its online file completes the move. -1: none.
  void SetBrokenRollback(int state) { broken_rollback_ = state; }
  int fires() const { return fires_; }  // armed states that fired
  int cpus() const { return static_cast<int>(online_.size()); }
  int online_count() const { return online_count_; }
  uint64_t writes() const { return writes_; }

  // Checkpoint: clock, RNG, online CPUs and write count, so a resumed run
  // continues the same simulated machine. Queued test faults are not saved.
  nlohmann::json SaveState() const;
  bool RestoreState(const nlohmann::json& j, std::string* err);

 private:
  SimConfig cfg_;
  SimClock clock_;
  Rng rng_;
  std::vector<uint8_t> online_;
  int online_count_;
  std::deque<Fault> faults_;
  std::vector<int> nohz_full_;
  uint64_t writes_ = 0;
  std::vector<int> fail_;  // per CPU: armed state, -1 none
  // Per CPU: hotplug state number. Atomic: the stuck-write watchdog reads
  // it from its own thread while a stalled write sleeps in this one.
  std::vector<std::atomic<int>> hp_state_;
  int broken_rollback_;
  int fires_ = 0;
  // smt/control as it reads, and the threads per core it allows.
  std::string smt_control_;
  int smt_threads_;

  // The modeled latency of one CPU going online or offline now.
  uint64_t ModelNs(bool online);
  int ThreadOf(int cpu) const { return cpu % cfg_.threads_per_core; }
};

}  // namespace cpuhp
