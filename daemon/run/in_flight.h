// SPDX-License-Identifier: GPL-2.0
// The sysfs call in flight, published for the stuck-call watchdog (another
// thread: the caller's may be blocked in the kernel). Every read and write a
// run or `restore` makes under the CPU tree goes through WatchedCpuControl,
// which publishes it here; the runner adds the operation's index.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace cpuhp {

// What the call is. The names are the report's `call` values.
enum class SysfsCall : int {
  kNone = 0,
  kOnlineWrite,  // cpuN/online, the timed write
  kOnlineRead,   // cpuN/online, the readback or a discovery read
  kListRead,     // a top-level CPU list ("online", "present", ...)
  kHasOnline,    // whether cpuN/online exists
  kFailWrite,    // cpuN/hotplug/fail
  kFailRead,
  kStateRead,     // cpuN/hotplug/state
  kStatesRead,    // hotplug/states
  kSmtRead,       // smt/control, smt/active
  kSmtWrite,      // smt/control
  kSiblingsRead,  // cpuN/topology/thread_siblings_list
};
const char* SysfsCallName(SysfsCall c);  // "online_write", ...

// start_wall_ns is CLOCK_MONOTONIC at the call's start, 0 when none is in
// flight; the other fields are valid while it is not 0 (a writer stores them
// first, start last with release). index is the operation the runner is on,
// kNoIndex outside the operation loop.
struct InFlight {
  static constexpr uint64_t kNoIndex = UINT64_MAX;
  std::atomic<uint64_t> start_wall_ns{0};
  std::atomic<uint64_t> index{kNoIndex};
  std::atomic<int> cpu{-1};
  std::atomic<int> dir{0};  // Direction of an online write
  std::atomic<int> tid{0};
  std::atomic<int> call{0};                // SysfsCall
  std::atomic<const char*> list{nullptr};  // kListRead: the list's name
};

// "cpu3 online", "cpu3 online read", "the online list read": what a STUCK
// line and a report's stuck record say the call was.
std::string DescribeCall(SysfsCall call, int cpu, bool online, const char* list);

}  // namespace cpuhp
