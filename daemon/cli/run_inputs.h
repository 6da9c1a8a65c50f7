// SPDX-License-Identifier: GPL-2.0
// What `run` and `--dry-run` both take from the config and the machine
// before any write: the seed, the CPUs selected, the online state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"
#include "machine/cpu_control.h"
#include "machine/topology.h"
#include "run/schedule.h"

namespace cpuhp {

// From getrandom(2), else the time and the pid.
uint64_t RandomSeed();
// The CPUs the config selects, all of them present and hotpluggable, each
// one's online file readable (a FIFO or symlink there is refused by name).
bool SelectCpus(const Config& cfg, const Topology& topo, CpuControl* ctl, std::vector<int>* out,
                std::string* err);
// The online state as the topology found it.
OnlineState StateFrom(const Topology& topo);

// The smt pattern: the machine's SMT topology (read with every present CPU
// online), the threads per core each of smt.modes leaves online, and the
// CPUs it writes (every core's threads but its first) into *params (cpus,
// smt, smt_cores, smt_threads), smt/control as found into *control_at_start
// (restored at exit). False with a one-line *err naming what is at fault:
// SMT that cannot be switched here, /cpus other than "all", a mode this
// machine cannot take, a sibling without an online file, fault injection
// with the control method.
bool PrepareSmt(const Config& cfg, const Topology& topo, CpuControl* ctl, ScheduleParams* params,
                std::string* control_at_start, std::string* err);
// An input error found on the machine, as the user can act on it: the key
// named as given (NameOrigin: "--victim: ..."), and on the sim backend,
// where the machine is the model, an error about the CPUs, levels, victim
// or min_online says how many CPUs it simulates and how to change that.
std::string InputError(const Config& cfg, const std::string& err);

}  // namespace cpuhp
