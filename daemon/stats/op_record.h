// SPDX-License-Identifier: GPL-2.0
// One hotplug operation: what the schedule asks for and what happened.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cpuhp {

enum class Direction : uint8_t { kOffline = 0, kOnline = 1 };
inline constexpr int kDirections = 2;

inline std::string_view DirectionName(Direction d) {
  return d == Direction::kOffline ? "offline" : "online";
}

// What the schedule asks for next.
struct Operation {
  int cpu = -1;
  Direction dir = Direction::kOffline;
  // A write that only moves the machine to where the next measurement
  // starts (a sweep bringing exactly N CPUs online): counted and checked,
  // kept out of the latency tables.
  bool setup = false;
  // The smt pattern: the switch this write belongs to (1, 2, ...; odd
  // switches go to smt.modes[0], even ones to modes[1]); 0 for every other
  // pattern.
  uint64_t group = 0;
  // The smt pattern, method "control": instead of one CPU's online file,
  // write this mode to smt/control (cpu is -1); the kernel moves every
  // sibling thread inside that one write. After it the online mask must
  // read `expect_online` (indexed by CPU). Both owned by the schedule.
  const std::string* smt_mode = nullptr;
  const std::vector<uint8_t>* expect_online = nullptr;
};

// What happened. Times are CLOCK_MONOTONIC nanoseconds (or the simulated
// clock's, with the sim backend).
struct OpRecord {
  uint64_t index = 0;  // 0-based position in the run
  int cpu = -1;
  Direction dir = Direction::kOffline;
  uint64_t start_ns = 0;     // just before the write(2)
  uint64_t duration_ns = 0;  // the write(2) alone
  int err = 0;               // errno of the write, 0 on success
  int online_before = 0;     // online CPUs (whole system) before the write
  bool readback_ok = true;   // the online file reads back what we expect
  bool setup = false;        // Operation::setup: not a measurement
  uint64_t group = 0;        // Operation::group
  // An smt/control write (Operation::smt_mode; cpu is -1): readback_ok says
  // the online mask read back what the mode implies, cpus_changed how many
  // CPUs it moved. A one-CPU write changes 0 or 1.
  bool smt_control = false;
  int cpus_changed = 0;
  // The run's OpHook (fault injection) between the previous write and this
  // one: its time (not in duration_ns, but inside an smt switch's span) and
  // whether it injected a write.
  uint64_t hook_ns = 0;
  bool fault_injected = false;
};

}  // namespace cpuhp
