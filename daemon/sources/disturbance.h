// SPDX-License-Identifier: GPL-2.0
// What hotplug does to the other CPUs (seed 001: stop_machine "hijacks the
// entire machine"): one probe thread per CPU that stays online wakes on a
// periodic absolute clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME), like
// cyclictest, and records its wakeup latency (actual - intended). Each sample
// is attributed to the operation whose window [OpBegin, OpEnd] overlaps the
// sample's wakeup interval [intended, actual] (by direction), or to the
// baseline when none does. The runner publishes its operation windows through
// atomics (OpWindows), so the probes never take a lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "sources/timing_source.h"
#include "stats/histogram.h"

namespace cpuhp {

// The last kSlots operation windows, written by one thread (the runner),
// read by any number of probes (a seqlock per slot, all fields atomic).
class OpWindows {
 public:
  static constexpr size_t kSlots = 64;
  static constexpr uint64_t kOpen = UINT64_MAX;  // end of a window still running

  void Begin(uint64_t index, Direction dir, uint64_t now_ns);
  void End(uint64_t index, uint64_t now_ns);

  // The direction of the most recent window overlapping [from_ns, to_ns]
  // (an open window overlaps everything after its begin), or nullopt: the
  // sample is baseline.
  std::optional<Direction> Attribute(uint64_t from_ns, uint64_t to_ns) const;

 private:
  struct Slot {
    std::atomic<uint64_t> seq{0};  // odd while being written
    std::atomic<uint64_t> index{UINT64_MAX};
    std::atomic<uint64_t> begin_ns{0};
    std::atomic<uint64_t> end_ns{kOpen};
    std::atomic<uint8_t> dir{0};
  };
  Slot slots_[kSlots];
  std::atomic<uint64_t> begun_{0};  // windows published (index of the next + 1... = count)
};

// Where a sample goes: the baseline or one of the directions.
enum ProbeBucket : int { kProbeBaseline = 0, kProbeOffline = 1, kProbeOnline = 2, kProbeBuckets };
const char* ProbeBucketName(int bucket);

struct DisturbanceOptions {
  std::vector<int> cpus;              // one probe per CPU
  std::vector<int> toggled;           // CPUs the schedule may take offline (for the report)
  uint64_t period_ns = 1000000;       // 1 ms, cyclictest's default interval
  int fifo_priority = 0;              // 0: SCHED_OTHER
  uint64_t baseline_ns = 1000000000;  // probes alone before the first operation
};

class Disturbance : public TimingSource {
 public:
  explicit Disturbance(DisturbanceOptions opts);
  ~Disturbance() override;

  std::string name() const override { return "disturbance"; }
  // Starts the probes (pinned, SCHED_FIFO if asked), waits until each has
  // pinned itself, then lets them run alone for the baseline time. A probe
  // that cannot get its CPU or its priority makes the source unavailable.
  bool Start(std::string* why_unavailable) override;
  void OpBegin(const Operation& op, uint64_t index) override;
  void OpEnd(const OpRecord& rec) override;
  void Stop() override;  // stops and joins every probe
  nlohmann::json ReportJson() const override;

 private:
  struct Probe {
    int cpu = -1;
    std::thread thread;
    std::string error;  // set before `ready` if the probe could not start
    Histogram hist[kProbeBuckets];
    uint64_t off_cpu_samples = 0;  // woke on another CPU (its CPU went away)
    uint64_t repins = 0;           // affinity set again after its CPU came back
    uint64_t missed_periods = 0;   // periods skipped because a wakeup was that late
  };
  void Loop(Probe* p);

  DisturbanceOptions opts_;
  std::vector<std::unique_ptr<Probe>> probes_;
  OpWindows windows_;
  std::atomic<bool> stop_{false};
  std::atomic<int> ready_{0};
  bool running_ = false;
  uint64_t baseline_measured_ns_ = 0;
};

// Lines for the human summary: baseline against in-operation p99/max per
// direction, from the report's timing_sources.disturbance ("" when absent).
std::string DisturbanceSummary(const nlohmann::json& report);

}  // namespace cpuhp
