// SPDX-License-Identifier: GPL-2.0
// The stuck-operation watchdog: a thread of its own (the runner's may be
// blocked in the kernel) that polls the write in flight (InFlight) and, when
// one has not returned within the timeout, logs its CPU, direction and the
// hotplug state the CPU is in, puts
// it in the service STATUS, and records it with /proc/<tid>/stack when the
// kernel lets us read it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "run/runner.h"

namespace cpuhp {

class StuckWatchdog {
 public:
  // `on_stuck` receives a one-line description (for STATUS=) from the
  // watchdog thread.
  StuckWatchdog(InFlight* in_flight, uint64_t timeout_ns,
                std::function<void(const std::string&)> on_stuck);
  ~StuckWatchdog();  // stops the thread
  StuckWatchdog(const StuckWatchdog&) = delete;
  StuckWatchdog& operator=(const StuckWatchdog&) = delete;

  // Where the CPU is in the hotplug state machine (cpuN/hotplug/state, its
  // number and name), read from the watchdog thread when a write is seen
  // stuck; false when the backend cannot tell. Set before Start.
  using StateReader = std::function<bool(int cpu, int* state, std::string* name)>;
  void set_state_reader(StateReader r) { state_reader_ = std::move(r); }

  void Start();
  void Stop();
  // Records so far (each: index, cpu, dir, detected_after_ns, hotplug_state
  // and its name when known, stack or stack_unavailable, returned_after_ns
  // once the write returned).
  nlohmann::json Records() const;
  void SetRecords(nlohmann::json records, uint64_t dropped);  // from a checkpoint
  // Stuck writes seen after kMaxRecords were recorded (logged, not recorded).
  uint64_t dropped() const;
  static constexpr size_t kMaxRecords = 100;

  // One poll (the thread calls it; tests call it directly).
  void Poll(uint64_t now_ns);

 private:
  void Loop();

  InFlight* in_flight_;
  uint64_t timeout_ns_;
  std::function<void(const std::string&)> on_stuck_;
  StateReader state_reader_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
  nlohmann::json records_ = nlohmann::json::array();
  uint64_t dropped_ = 0;
  // The write being reported: its start, and its record's position.
  uint64_t reported_start_ns_ = 0;
  size_t reported_pos_ = 0;
};

// /proc/<pid>/task/<tid>/stack, or "" with *why: the reason its errno names
// (no CONFIG_STACKTRACE, no CAP_SYS_ADMIN, the thread gone), or no frames.
std::string ReadKernelStack(int tid, std::string* why);
// The same for a task directory (tests: a directory standing in for /proc).
std::string ReadKernelStackAt(const std::string& task_dir, std::string* why);

}  // namespace cpuhp
