// SPDX-License-Identifier: GPL-2.0
// The stuck-call watchdog of a `run` or a `restore`: every sysfs call they
// make goes through a WatchedCpuControl whose InFlight this watches from
// before the first read to after the mask is put back. A call stuck past
// stuck_give_up ends the process with kExitGaveUp and a line saying what
// is kept: the kernel may never answer, and a task in D state cannot be
// interrupted, so waiting for ever helps no one.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "machine/cpu_control.h"
#include "run/in_flight.h"
#include "run/stuck_watchdog.h"

namespace cpuhp {

// Where a stuck CPU is in the hotplug state machine, for the STUCK line:
// cpuN/hotplug/state and its name in hotplug/states, read through `backend`
// (not the watched control: the watchdog's reads must not replace the call
// they are about). The states table is read at the first use.
StuckWatchdog::StateReader StuckStateReader(CpuControl* backend);

// Starts the watchdog over `f` (null when timeout_ns is 0: none). On give-up
// it logs "<command>: exiting with status 5 without a report; <kept()>",
// says so in the service STATUS and _exits: kept() names what the next
// `restore` or start will find, as of then. The process ends when the stuck
// call returns, or at once if the kernel lets the call be killed.
std::unique_ptr<StuckWatchdog> StartCallWatchdog(InFlight* f, CpuControl* backend,
                                                 uint64_t timeout_ns, uint64_t give_up_ns,
                                                 const std::string& command,
                                                 std::function<std::string()> kept);

}  // namespace cpuhp
