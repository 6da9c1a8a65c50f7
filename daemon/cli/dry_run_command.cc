// SPDX-License-Identifier: GPL-2.0
#include "cli/dry_run_command.h"

#include <algorithm>
#include <cinttypes>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "cli/run_inputs.h"
#include "machine/sim_cpu_control.h"
#include "machine/topology.h"
#include "run/schedule.h"
#include "util/cpu_list.h"
#include "util/exit_codes.h"

namespace cpuhp {

int DryRunCommand(const Config& cfg_in, uint64_t max_ops, std::FILE* out) {
  Config cfg = cfg_in;
  const uint64_t seed = cfg.seed ? *cfg.seed : RandomSeed();
  const bool sim = cfg.backend == "sim";
  std::string err;
  auto fail = [&](const std::string& msg) {
    spdlog::error("{}", InputError(cfg, msg));
    return kExitBadInput;
  };
  if (cfg.pattern == Pattern::kFaultSweep)
    return fail(
        "--dry-run: fault_sweep learns its operations from the kernel's hotplug/fail at "
        "start; run it against --backend sim to see them");
  std::unique_ptr<CpuControl> ctl;
  if (sim)
    ctl = std::make_unique<SimCpuControl>(cfg.sim, seed);
  else
    ctl = NewSysfsCpuControl(cfg.sysfs_root);
  Topology topo;
  std::vector<int> selected;
  if (!DiscoverTopology(ctl.get(), &topo, &err) ||
      !SelectCpus(cfg, topo, ctl.get(), &selected, &err))
    return fail(err);
  OnlineState state = StateFrom(topo);
  ScheduleParams params{cfg.pattern, selected, cfg.min_online, seed, cfg.sweep};
  if (cfg.pattern == Pattern::kSmt) {
    std::string control_at_start;
    if (!PrepareSmt(cfg, topo, ctl.get(), &params, &control_at_start, &err))
      return fail(err);
    selected = params.cpus;
  }
  std::unique_ptr<Schedule> schedule = NewSchedule(params, state, &err);
  if (!schedule)
    return fail(err);
  const uint64_t limit = IterationLimit(cfg);
  std::fprintf(out,
               "dry run (nothing is written): pattern %s on CPUs %s of %s, %d online, seed %" PRIu64
               ", iterations %s, duration %s\n",
               PatternName(cfg.pattern), FormatCpuList(selected).c_str(), ctl->Describe().c_str(),
               state.count, seed, limit ? std::to_string(limit).c_str() : "no limit",
               cfg.duration_ns ? FormatDuration(cfg.duration_ns).c_str() : "no limit");
  if (nlohmann::json d = schedule->Describe(); !d.empty())
    std::fprintf(out, "schedule: %s\n", d.dump().c_str());
  // The cpu column holds "smt/control MODE" for the smt pattern's control method.
  int cpu_w = 5;
  if (cfg.pattern == Pattern::kSmt && cfg.smt.method == "control")
    for (const std::string& m : cfg.smt.modes)
      cpu_w = std::max(cpu_w, static_cast<int>(m.size() + 12));
  std::fprintf(out, "%8s  %-7s  %*s  %13s\n", "op", "dir", cpu_w, "cpu", "online before");
  uint64_t i = 0;
  for (; i < max_ops && (!limit || i < limit); ++i) {
    std::optional<Operation> op = schedule->Next(state);
    if (!op)
      break;
    // An smt/control write moves every thread its mode does: as if it took.
    const std::string cpu = op->smt_mode ? "smt/control " + *op->smt_mode : std::to_string(op->cpu);
    std::fprintf(out, "%8" PRIu64 "  %-7s  %*s  %13d%s%s\n", i,
                 std::string(DirectionName(op->dir)).c_str(), cpu_w, cpu.c_str(), state.count,
                 op->setup ? "  set-up" : "",
                 op->group ? ("  switch " + std::to_string(op->group)).c_str() : "");
    if (op->smt_mode && op->expect_online)
      for (size_t c = 0; c < state.online.size(); ++c)
        state.Set(static_cast<int>(c), (*op->expect_online)[c] != 0);
    else
      state.Set(op->cpu, op->dir == Direction::kOnline);  // as if every write succeeds
  }
  if (i == max_ops)
    std::fprintf(out, "... (--dry-run N shows more)\n");
  else if (!schedule->error().empty())
    std::fprintf(out, "schedule stops: %s\n", schedule->error().c_str());
  else
    std::fprintf(out, "end of the run after %" PRIu64 " operations\n", i);
  return kExitOk;
}

}  // namespace cpuhp
