// SPDX-License-Identifier: GPL-2.0
#include "cli/run_inputs.h"

#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>

#include "machine/smt.h"
#include "util/cpu_list.h"
#include "util/file_util.h"

namespace cpuhp {

uint64_t RandomSeed() {
  uint64_t seed = 0;
  if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
    seed = static_cast<uint64_t>(RealtimeNs()) ^ static_cast<uint64_t>(getpid());
  return seed;
}

// The CPUs the config selects, all of them present and hotpluggable.
namespace {

bool SelectListed(const Config& cfg, const Topology& topo, CpuControl* ctl, std::vector<int>* out,
                  std::string* err) {
  if (cfg.cpus == "all") {
    *out = topo.hotpluggable;
    if (out->empty()) {
      *err = "/cpus: no hotpluggable CPU under " + ctl->Describe() +
             " (no cpuN/online file; is CONFIG_HOTPLUG_CPU set?)";
      return false;
    }
    return true;
  }
  std::string perr;
  if (!ParseCpuList(cfg.cpus, out, &perr)) {
    *err = "/cpus: " + perr;
    return false;
  }
  if (out->empty()) {
    *err = "/cpus: empty CPU list";
    return false;
  }
  for (int cpu : *out) {
    if (!std::binary_search(topo.present.begin(), topo.present.end(), cpu)) {
      *err = "/cpus: CPU " + std::to_string(cpu) +
             " does not exist (present: " + FormatCpuList(topo.present) + ")";
      return false;
    }
    if (!topo.IsHotpluggable(cpu)) {
      *err = "/cpus: CPU " + std::to_string(cpu) + " cannot be hotplugged (no " + ctl->Describe() +
             "/cpu" + std::to_string(cpu) +
             "/online; hotpluggable: " + FormatCpuList(topo.hotpluggable) + ")";
      return false;
    }
  }
  return true;
}

}  // namespace

bool SelectCpus(const Config& cfg, const Topology& topo, CpuControl* ctl, std::vector<int>* out,
                std::string* err) {
  if (!SelectListed(cfg, topo, ctl, out, err))
    return false;
  // Each one's online file read now (sysfs keeps it open for the run): one
  // that is a FIFO or a symlink is bad input before any write, not a failed
  // restore at the end.
  for (int cpu : *out)
    if (ctl->ReadOnline(cpu, err) < 0)
      return false;
  return true;
}

std::string InputError(const Config& cfg, const std::string& err) {
  std::string out = NameOrigin(cfg, err);
  if (cfg.backend != "sim")
    return out;
  for (const char* key : {"/cpus:", "/sweep/levels:", "/sweep:", "/min_online:"})
    if (err.rfind(key, 0) == 0)
      return out + " (the sim backend simulates " + std::to_string(cfg.sim.cpus) + " CPUs, 0 to " +
             std::to_string(cfg.sim.cpus - 1) + ": --sim-cpus or /sim/cpus)";
  return out;
}

bool PrepareSmt(const Config& cfg, const Topology& topo, CpuControl* ctl, ScheduleParams* params,
                std::string* control_at_start, std::string* err) {
  if (cfg.cpus != "all") {
    *err =
        "/cpus: the smt pattern writes the sibling threads its modes move, not a list; leave "
        "/cpus at \"all\" (got \"" +
        cfg.cpus + "\")";
    return false;
  }
  SmtTopology smt;
  if (!DiscoverSmt(ctl, topo.present, &smt, err)) {
    *err = "/pattern: smt: " + *err;
    return false;
  }
  if (std::string why = SmtSwitchRefusal(smt); !why.empty()) {
    *err = "/pattern: smt: " + why;
    return false;
  }
  for (size_t i = 0; i < 2; ++i)
    if (!SmtModeThreads(smt, cfg.smt.modes[i], &params->smt_threads[i], err)) {
      *err = "/smt/modes: " + *err;
      return false;
    }
  params->cpus.clear();
  for (const std::vector<int>& core : smt.cores)
    for (size_t t = 1; t < core.size(); ++t) {
      if (!topo.IsHotpluggable(core[t])) {
        *err = "/pattern: smt: cpu" + std::to_string(core[t]) + ", a thread of core " +
               FormatCpuList(core) + ", has no online file";
        return false;
      }
      params->cpus.push_back(core[t]);
    }
  std::sort(params->cpus.begin(), params->cpus.end());
  if (cfg.smt.method == "control" && cfg.faults.rate > 0) {
    *err =
        "/faults/rate: fault injection arms one CPU's hotplug/fail before its write; smt.method "
        "\"control\" writes smt/control, no one CPU: use smt.method \"threads\" with faults";
    return false;
  }
  params->smt = cfg.smt;
  params->smt_cores = smt.cores;
  *control_at_start = smt.control;
  return true;
}

OnlineState StateFrom(const Topology& topo) {
  OnlineState s;
  s.online.assign(static_cast<size_t>(topo.max_cpu + 1), 0);
  for (int cpu : topo.online)
    if (cpu <= topo.max_cpu)
      s.Set(cpu, true);
  return s;
}

}  // namespace cpuhp
