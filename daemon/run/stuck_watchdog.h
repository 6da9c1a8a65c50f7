// SPDX-License-Identifier: GPL-2.0
// The stuck-call watchdog: a thread of its own (the caller's may be blocked
// in the kernel) that polls the sysfs call in flight (InFlight: every read
// and write of a run or `restore`, run/watched_cpu_control.h) and, when one
// has not returned within the timeout, logs what it is (CPU, direction, the
// operation, the hotplug state the CPU is in), puts it in the service STATUS,
// and records it with /proc/<tid>/stack when the kernel lets us read it.
// While a call is in flight it keeps systemd's watchdog fed (the process is
// alive, the kernel is not answering); past the give-up time it hands the
// call to on_give_up, which ends the process: the wait is bounded.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "run/in_flight.h"

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

  // Replaces the STUCK callback (the soak session's STATUS line).
  void set_on_stuck(std::function<void(const std::string&)> f);
  // Called from the watchdog thread on each poll while a call has been in
  // flight for kKeepaliveAfterNs or more (sd_notify WATCHDOG=1). Set before
  // Start.
  void set_keepalive(std::function<void()> f) { keepalive_ = std::move(f); }
  static constexpr uint64_t kKeepaliveAfterNs = 1000000000ull;
  // A reported call still in flight `give_up_ns` after it started: its
  // "GIVING UP: ..." line is logged and passed to `f`, once (0: never). Set
  // before Start.
  void set_give_up(uint64_t give_up_ns, std::function<void(const std::string&)> f) {
    give_up_ns_ = give_up_ns;
    on_give_up_ = std::move(f);
  }

  void Start();
  void Stop();
  // Records so far (each: call, what, cpu and the operation's index and
  // direction when there are, detected_after_ns, hotplug_state and its name
  // when known, stack or stack_unavailable, returned_after_ns once the call
  // returned).
  nlohmann::json Records() const;
  void SetRecords(nlohmann::json records, uint64_t dropped);  // from a checkpoint
  // Stuck calls seen after kMaxRecords were recorded (logged, not recorded).
  uint64_t dropped() const;
  static constexpr size_t kMaxRecords = 100;

  // One poll (the thread calls it; tests call it directly).
  void Poll(uint64_t now_ns);

 private:
  void Loop();
  // Records and logs the call in flight since `start` (mu_ held).
  void Report(uint64_t start, uint64_t stuck_ns);

  InFlight* in_flight_;
  uint64_t timeout_ns_;
  std::function<void(const std::string&)> on_stuck_;
  StateReader state_reader_;
  std::function<void()> keepalive_;
  uint64_t give_up_ns_ = 0;
  std::function<void(const std::string&)> on_give_up_;
  bool gave_up_ = false;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
  nlohmann::json records_ = nlohmann::json::array();
  uint64_t dropped_ = 0;
  // The write being reported: its start, and its record's position.
  uint64_t reported_start_ns_ = 0;
  size_t reported_pos_ = 0;
  std::string reported_what_;  // "cpu1 online (op 3)"
};

// /proc/<pid>/task/<tid>/stack, or "" with *why: the reason its errno names
// (no CONFIG_STACKTRACE, no CAP_SYS_ADMIN, the thread gone), or no frames.
std::string ReadKernelStack(int tid, std::string* why);
// The same for a task directory (tests: a directory standing in for /proc).
std::string ReadKernelStackAt(const std::string& task_dir, std::string* why);

}  // namespace cpuhp
