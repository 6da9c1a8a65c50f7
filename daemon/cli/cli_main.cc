// SPDX-License-Identifier: GPL-2.0
// The command line: every subcommand and option (CLI11), parsed, checked
// and dispatched to its command. The only translation unit of the tool that
// builds the CLI11 app: CLI11 is header-only and costs ~20 s of -O2 compile
// in each file that includes it (cli_parse.cc shares this folder's unity
// file).
#include "cli/cli_main.h"

#include <cstdio>

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/cli_parse.h"
#include "cli/dry_run_command.h"
#include "cli/list_command.h"
#include "cli/restore_command.h"
#include "cli/run_command.h"
#include "config/config.h"
#include "report/compare.h"
#include "report/compare_input.h"
#include "report/compare_thresholds.h"
#include "report/merge.h"
#include "report/report_formats.h"

namespace cpuhp {

int CliMain(int argc, char** argv, volatile sig_atomic_t* stop, void (*default_stop_signals)()) {
  CLI::App app{
      "cpuhp-stress: CPU-hotplug stress and timing. Drives "
      "/sys/devices/system/cpu/cpuN/online, times every operation, writes a JSON report."};
  UseCliFormatter(&app);
  app.require_subcommand(1);
  app.set_version_flag("--version", CPUHP_VERSION);

  // run. Numbers are taken as text and checked by the config's own rules,
  // so that `--iterations -5` is refused as negative and every error names
  // the flag typed.
  CLI::App* run = app.add_subcommand("run", "Run a hotplug pattern and write a report");
  run->footer(
      "Exit status: 0 finished, no failure; 1 something broke (internal error, restore, report or "
      "log write); 2 bad input, nothing touched; 3 finished with failures recorded in the report "
      "(operation errors, readback mismatches, failed rollbacks, stuck writes, stop on error); "
      "4 interrupted by a signal before its target: CPUs restored, report written, run_completed "
      "failing, a checkpoint (with a state directory) kept to resume from; 5 gave up on a sysfs "
      "call not returned after --stuck-give-up: no report, state.json kept for restore.");
  std::string config_file, pattern, cpus, duration, interval, report, state_dir, sysfs_root, oplog,
      backend, progress, iterations, seed, min_online, levels, cycles, victim, sim_cpus;
  bool stop_on_error = false;
  run->add_option("-c,--config", config_file, "JSON config file (default: built-in default)");
  run->add_option("-p,--pattern", pattern, PatternList(" | "));
  run->add_option("--cpus", cpus, "CPUs to toggle, kernel list syntax (1-7,9) or 'all'");
  run->add_option("-n,--iterations", iterations,
                  "Operations (writes to an online file); 0 = no limit; auto (default): 1000, "
                  "or no limit with --duration, sweep and fault_sweep");
  run->add_option("-d,--duration", duration,
                  "Stop after this long: 24h, 90m, 30s; 0 = no limit. Wall time on "
                  "sysfs; simulated time on --backend sim (24h there takes seconds)");
  run->add_option("--interval", interval, "Pause between operations: 20ms, 1s");
  run->add_option("--seed", seed, "Seed (default: random, recorded)");
  run->add_option("--min-online", min_online, "Never fewer online CPUs (>= 1)");
  run->add_option("-o,--output,-r,--report", report, "Report path (JSON)");
  bool force = false;
  run->add_flag("--force", force, "Overwrite an existing report");
  run->add_option("--oplog", oplog,
                  "Also stream every operation to this JSON Lines file (sim backend: "
                  "\"simulated\":true on every line)");
  run->add_option("--state-dir", state_dir,
                  "State directory (default $STATE_DIRECTORY or /var/lib/cpuhp-stress)");
  run->add_option("--sysfs-root", sysfs_root,
                  "CPU sysfs directory (default /sys/devices/system/cpu; any other root is a "
                  "fake tree, for tests)");
  run->add_option("--backend", backend, "sysfs | sim (in-memory simulated machine)");
  run->add_option("--sim-cpus", sim_cpus, "sim: CPUs simulated, cpu0 fixed (default 8)");
  run->add_option("--progress", progress, "auto | always | never");
  run->add_option("--levels", levels, "sweep: online-CPU counts, 8,16,32 or auto");
  run->add_option("--cycles", cycles, "sweep: offline+online cycles of the victim per level");
  run->add_option("--victim", victim, "sweep: the CPU cycled (-1: the highest selected)");
  auto* stop_opt =
      run->add_flag("--stop-on-error", stop_on_error, "Stop at the first failed operation");
  bool tracepoints = true;
  auto* trace_opt =
      run->add_flag("--tracepoints,!--no-tracepoints", tracepoints,
                    "Per-state kernel timing from the cpuhp tracepoints (tracefs); on by default");
  bool health = true;
  auto* health_opt = run->add_flag("--health,!--no-health", health,
                                   "Kernel log health checks (/dev/kmsg); on by default");
  bool print_config = false;
  run->add_flag("--print-config", print_config,
                "Print the effective config (file, then options) as JSON and exit");
  // A bare --dry-run reads "20" (CLI11 gives the default string to a missing
  // optional value), so an empty one is told apart and refused.
  std::string dry_run;
  auto* dry_opt = run->add_option("--dry-run", dry_run,
                                  "Print the first N operations of the schedule (default 20) "
                                  "and exit; nothing is written")
                      ->expected(0, 1)
                      ->default_str("20")
                      ->option_text("[N]");
  std::string checkpoint_interval, interim_interval, stuck_timeout, stuck_give_up;
  bool fresh = false;
  run->add_option("--checkpoint-interval", checkpoint_interval,
                  "Checkpoint to the state directory this often (default 60s; 0: only at stop)");
  run->add_flag("--fresh", fresh, "Do not resume a checkpoint: move it aside and start over");
  run->add_option("--interim-interval", interim_interval,
                  "Write an interim report this often (default 0: only on SIGUSR1)");
  run->add_option("--stuck-timeout", stuck_timeout,
                  "Report a sysfs read or write not returned after this long (default 30s; "
                  "0: off)");
  run->add_option("--stuck-give-up", stuck_give_up,
                  "End the run (exit 5, state.json kept) when a stuck call has not returned "
                  "after this long (default 5m; 0: wait for ever)");
  bool disturbance = false;
  std::string fifo_priority;
  std::string on_kernel_warning;
  auto* dist_opt = run->add_flag("--disturbance", disturbance,
                                 "Run wakeup-latency probes on the CPUs that stay online");
  run->add_option("--fifo-priority", fifo_priority,
                  "Probes as SCHED_FIFO at this priority (1-99; 0 = SCHED_OTHER)");
  run->add_option("--on-kernel-warning", on_kernel_warning,
                  "continue | stop: what a WARNING, BUG, Oops, stall... in the kernel log does");

  // restore
  CLI::App* restore = app.add_subcommand(
      "restore", "Bring back the online mask recorded by a run that did not finish");
  std::string restore_state_dir;
  restore->add_option("--state-dir", restore_state_dir, "State directory");
  std::string restore_root = "/sys/devices/system/cpu";
  restore->add_option("--sysfs-root", restore_root,
                      "CPU sysfs directory (the state file's must match; other than "
                      "/sys/devices/system/cpu: a fake tree, for tests, and tracefs is left "
                      "alone)");
  std::string restore_stuck_timeout, restore_give_up;
  restore->add_option("--stuck-timeout", restore_stuck_timeout,
                      "Report a sysfs read or write not returned after this long (default 30s)");
  restore->add_option("--stuck-give-up", restore_give_up,
                      "Exit 5, state.json kept, when it has not returned after this long "
                      "(default 90s: under the units' TimeoutStopSec)");
  restore->footer(
      "Exit status: 0 restored or nothing to restore; 1 failed (state.json kept); 5 gave up on a "
      "sysfs call not returned after --stuck-give-up (state.json kept).");

  // list
  CLI::App* list = app.add_subcommand("list", "List CPUs: hotpluggable or not, online state");
  std::string list_root = "/sys/devices/system/cpu";
  list->add_option("--sysfs-root", list_root,
                   "CPU sysfs directory (other than /sys/devices/system/cpu: a fake tree, for "
                   "tests)");

  // compare
  CLI::App* compare =
      app.add_subcommand("compare", "Compare a candidate report with a baseline: exit 1 if slower");
  std::string cmp_base, cmp_cand, cmp_format = "text";
  std::vector<std::string> cmp_thresholds, cmp_bases, cmp_cands;
  compare->add_option("baseline", cmp_base, "Baseline report (JSON)");
  compare->add_option("candidate", cmp_cand, "Candidate report (JSON)");
  compare->add_option("--base", cmp_bases,
                      "Baseline report, one per boot of the baseline kernel; repeatable "
                      "(instead of the two positional reports)");
  compare->add_option("--cand", cmp_cands,
                      "Candidate report, one per boot of the candidate kernel; repeatable");
  compare->footer(
      "Usage: compare BASE.json CAND.json, or compare --base A1.json --base A2.json ... --cand "
      "B1.json --cand B2.json ... (several boots per kernel: each side is pooled as merge does; a "
      "pooled report from merge counts as its boots). With two or more boots on a side, an "
      "improved or regressed verdict stands only if every candidate boot is better (worse) than "
      "every baseline boot; otherwise no change, \"boots disagree\". Exit status: 0 nothing "
      "regressed, 1 something did, 2 bad input.");
  compare->add_option("-t,--threshold", cmp_thresholds,
                      "Change to call: 5% (default), or METRIC=20% (p99, offline.p50, "
                      "offline.p50@online=8); repeatable");
  compare->add_option("-f,--format", cmp_format, "text | markdown | json");
  std::string cmp_output;
  compare->add_option("-o,--output", cmp_output, "Write here (atomically) instead of stdout");

  // merge
  CLI::App* merge = app.add_subcommand(
      "merge", "Pool the reports of several boots of one kernel (same setup) into one report");
  std::vector<std::string> merge_inputs;
  std::string merge_output;
  merge->add_option("reports", merge_inputs, "Reports (JSON), one per boot")->required();
  merge
      ->add_option("-o,--output", merge_output,
                   "Pooled report (JSON), written atomically; - for stdout")
      ->required();
  merge->footer(
      "Histograms are summed and their summaries recomputed; counters summed; each pooled "
      "summary keeps \"per_boot\" values and the report \"pooled\": {reports, boots}. Refused: "
      "reports of another kernel release, CPU set, backend, pattern or schema version. Exit "
      "status: 0 written, 1 the write failed, 2 bad input.");

  // report
  CLI::App* report_cmd =
      app.add_subcommand("report", "Render a report: text, markdown, junit, kcidb, lava, html");
  std::string rep_path, rep_format = "text", rep_output, rep_baseline, rep_origin, rep_build_id;
  std::vector<std::string> rep_limits, rep_thresholds;
  report_cmd->add_option("report", rep_path, "Report (JSON)")->required();
  report_cmd->add_option("-f,--format", rep_format,
                         "text | markdown | junit | kcidb | lava | html");
  report_cmd->add_option("-o,--output", rep_output, "Write here (atomically) instead of stdout");
  report_cmd->add_option(
      "--limit", rep_limits,
      "Fail a check above a ceiling: offline.p99=20ms, p99=20ms (both directions); "
      "repeatable");
  report_cmd->add_option("--baseline", rep_baseline,
                         "Also check against this baseline report (compare verdicts as checks)");
  report_cmd->add_option("-t,--threshold", rep_thresholds, "With --baseline: as for compare");
  report_cmd->add_option("--origin", rep_origin, "kcidb: origin (default cpuhp_stress)");
  report_cmd->add_option("--build-id", rep_build_id,
                         "kcidb: build_id (default <origin>:<kernel release>; a sim report's "
                         "<origin>:sim.<host kernel release>)");

  // CLI11 would only say "A subcommand is required": name the word at fault.
  const std::string first = argc > 1 ? argv[1] : "";
  if (!first.empty() && first[0] != '-' && first != "run" && first != "restore" &&
      first != "list" && first != "compare" && first != "merge" && first != "report") {
    std::fprintf(stderr,
                 "cpuhp-stress: error: unknown command '%s' (commands: run, restore, list, "
                 "compare, merge, report)\n",
                 argv[1]);
    return kExitBadInput;
  }
  CheckCliValues(&app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0)
      return app.exit(e);
    const std::vector<std::string> args(argv + 1, argv + argc);
    std::fprintf(stderr, "cpuhp-stress: error: %s\n", CliErrorLine(app, e, args).c_str());
    return kExitBadInput;
  }

  if (*list || *merge || *compare || *report_cmd)
    default_stop_signals();
  if (*list)
    return ListCommand(list_root, stdout);

  if (*merge)
    return MergeCommand(merge_inputs, merge_output, stdout);

  if (*compare || *report_cmd) {
    CompareOptions copts;
    std::string err;
    for (const std::string& t : *compare ? cmp_thresholds : rep_thresholds)
      if (!ParseThreshold(t, &copts, &err)) {
        std::fprintf(stderr, "cpuhp-stress: error: %s\n", err.c_str());
        return kExitBadInput;
      }
    if (*compare) {
      const bool positional = !cmp_base.empty() || !cmp_cand.empty();
      const bool sides = !cmp_bases.empty() || !cmp_cands.empty();
      if (positional && !sides && !cmp_cand.empty())
        return CompareCommand(cmp_base, cmp_cand, copts, cmp_format, stdout, cmp_output);
      if (positional || cmp_bases.empty() || cmp_cands.empty()) {
        std::fprintf(stderr, "cpuhp-stress: error: compare: %s (see --help)\n",
                     positional && sides
                         ? "give BASE.json CAND.json or --base/--cand reports, not both"
                         : "expected BASE.json CAND.json, or --base A.json ... --cand B.json ...");
        return kExitBadInput;
      }
      return CompareCommand(cmp_bases, cmp_cands, copts, cmp_format, stdout, cmp_output);
    }
    ReportOptions ropts;
    ropts.compare = copts;
    if (!rep_origin.empty())
      ropts.kcidb_origin = rep_origin;
    ropts.kcidb_build_id = rep_build_id;
    for (const std::string& l : rep_limits)
      if (!ParseLimit(l, &ropts, &err)) {
        std::fprintf(stderr, "cpuhp-stress: error: %s\n", err.c_str());
        return kExitBadInput;
      }
    if (!rep_baseline.empty()) {
      nlohmann::json base;
      if (!LoadReport(rep_baseline, &base, &err)) {
        std::fprintf(stderr, "cpuhp-stress: report: --baseline %s\n", err.c_str());
        return kExitBadInput;
      }
      ropts.baseline = std::move(base);
      ropts.baseline_path = rep_baseline;
    }
    return ReportCommand(rep_path, rep_format, rep_output, ropts, stdout);
  }

  if (*restore) {
    Config cfg;
    cfg.state_dir = restore_state_dir;
    std::string err;
    StuckLimits limits;
    for (const auto& [flag, text, ns] :
         {std::tuple{"--stuck-timeout", &restore_stuck_timeout, &limits.timeout_ns},
          std::tuple{"--stuck-give-up", &restore_give_up, &limits.give_up_ns}})
      if (!text->empty() && !ParseDuration(*text, ns, &err)) {
        std::fprintf(stderr, "cpuhp-stress: error: restore %s: %s\n", flag, err.c_str());
        return kExitBadInput;
      }
    return RestoreCommand(ResolveStateDir(cfg), restore_root, limits, stdout);
  }

  // Config file, then command-line overrides, validated the same way; an
  // error names the flag and the key.
  Config cfg;
  std::string err;
  if (!config_file.empty() && !LoadConfigFile(config_file, &cfg, &err)) {
    spdlog::error("{}", err);
    return kExitBadInput;
  }
  std::vector<std::pair<std::string, nlohmann::json>> overrides;  // flag, document
  auto set = [&](const char* flag, const std::string& text, nlohmann::json doc) {
    if (!text.empty())
      overrides.emplace_back(flag, std::move(doc));
  };
  set("--pattern", pattern, {{"pattern", pattern}});
  set("--cpus", cpus, {{"cpus", cpus}});
  set("--iterations", iterations, {{"iterations", CliValue(iterations)}});
  set("--duration", duration, {{"duration", duration}});
  set("--interval", interval, {{"interval", interval}});
  set("--seed", seed, {{"seed", CliValue(seed)}});
  set("--min-online", min_online, {{"min_online", CliValue(min_online)}});
  set("--report", report, {{"report", report}});
  set("--force", force ? "1" : "", {{"force", true}});
  set("--oplog", oplog, {{"oplog", oplog}});
  set("--state-dir", state_dir, {{"state_dir", state_dir}});
  set("--sysfs-root", sysfs_root, {{"sysfs_root", sysfs_root}});
  set("--backend", backend, {{"backend", backend}});
  set("--sim-cpus", sim_cpus, {{"sim", {{"cpus", CliValue(sim_cpus)}}}});
  set("--progress", progress, {{"progress", progress}});
  set("--levels", levels, {{"sweep", {{"levels", CliList(levels)}}}});
  set("--cycles", cycles, {{"sweep", {{"cycles_per_level", CliValue(cycles)}}}});
  set("--victim", victim, {{"sweep", {{"victim", CliValue(victim)}}}});
  set("--stop-on-error", *stop_opt ? "1" : "", {{"stop_on_error", stop_on_error}});
  set(tracepoints ? "--tracepoints" : "--no-tracepoints", *trace_opt ? "1" : "",
      {{"tracepoints", tracepoints}});
  set(health ? "--health" : "--no-health", *health_opt ? "1" : "",
      {{"health", {{"enabled", health}}}});
  set("--checkpoint-interval", checkpoint_interval, {{"checkpoint_interval", checkpoint_interval}});
  set("--fresh", fresh ? "1" : "", {{"resume", "never"}});
  set("--interim-interval", interim_interval, {{"interim_interval", interim_interval}});
  set("--stuck-timeout", stuck_timeout, {{"stuck_timeout", stuck_timeout}});
  set("--stuck-give-up", stuck_give_up, {{"stuck_give_up", stuck_give_up}});
  set("--disturbance", *dist_opt ? "1" : "", {{"disturbance", {{"enabled", disturbance}}}});
  set("--fifo-priority", fifo_priority,
      {{"disturbance", {{"fifo_priority", CliValue(fifo_priority)}}}});
  set("--on-kernel-warning", on_kernel_warning,
      {{"health", {{"on_kernel_warning", on_kernel_warning}}}});
  for (const auto& [flag, doc] : overrides)
    if (!ApplyConfigJson(doc, flag, &cfg, &err)) {
      spdlog::error("{}", err);
      return kExitBadInput;
    }
  if (print_config) {
    std::fputs((ConfigToJson(cfg).dump(2) + "\n").c_str(), stdout);
    return kExitOk;
  }
  if (*dry_opt) {
    uint64_t n = 20;
    if (dry_run.empty()) {
      spdlog::error("--dry-run: empty value");
      return kExitBadInput;
    }
    if (!ParseCount(dry_run, &n)) {
      spdlog::error("--dry-run: expected a number of operations, got \"{}\"", dry_run);
      return kExitBadInput;
    }
    return DryRunCommand(cfg, n, stdout);
  }

  try {
    return RunCommand(cfg, stop, stdout);
  } catch (const std::exception& e) {
    // Before the first operation or after the restore: nothing is offline
    // that the state file does not record.
    spdlog::error("internal error: {} (run `cpuhp-stress restore` if a CPU is offline)", e.what());
    return kExitFailed;
  }
}

}  // namespace cpuhp
