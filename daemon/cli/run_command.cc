// SPDX-License-Identifier: GPL-2.0
#include "cli/run_command.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "cli/call_watch.h"
#include "cli/restore_command.h"
#include "cli/run_inputs.h"
#include "faults/faults.h"
#include "machine/machine_lock.h"
#include "machine/sim_cpu_control.h"
#include "machine/topology.h"
#include "report/report.h"
#include "report/report_checks.h"
#include "run/oplog.h"
#include "run/progress.h"
#include "run/runner.h"
#include "run/schedule.h"
#include "run/watched_cpu_control.h"
#include "soak/soak.h"
#include "sources/bpf_source.h"
#include "sources/health_sources.h"
#include "sources/kmod_source.h"
#include "sources/tracefs_source.h"
#include "util/cpu_list.h"
#include "util/file_util.h"
#include "util/json_file.h"

namespace cpuhp {
namespace {

uint64_t MaxRssKib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<uint64_t>(ru.ru_maxrss);
}

// Everything `run` sets up before the first operation: the machine as found,
// what will be done to it, and where the results go. Filled by
// PrepareMachine; the steps below read and update it.
struct RunPlan {
  InFlight in_flight;  // the sysfs call in flight, for `watchdog`
  Config cfg;          // as given, with the seed resolved
  uint64_t seed = 0;
  bool sim = false;
  std::unique_ptr<CpuControl> ctl;      // a WatchedCpuControl over the backend
  SimCpuControl* sim_ctl = nullptr;     // the backend, when it is the sim
  std::unique_ptr<StateDir> state_dir;  // null: sim without --state-dir
  MachineLock machine_lock;             // held from before the stale restore to the end
  std::unique_ptr<SoakSession> soak;
  Topology topo;
  std::vector<int> selected;
  OnlineState state;
  std::unique_ptr<FaultInjector> faults;
  std::unique_ptr<Schedule> schedule;
  OpLog oplog;
  std::unique_ptr<RunStats> stats;
  std::unique_ptr<SmtSwitchStats> smt_stats;  // the smt pattern's switch table
  std::string smt_control_at_start;           // the smt pattern: smt/control, restored
  std::string started_at;
  // Last: stopped before anything it calls back into (the session, the
  // backend) is gone.
  std::unique_ptr<StuckWatchdog> watchdog;
};

// Step 1: look at the machine and check every input. Touches no CPU; a
// non-zero return is the exit code (the error is logged).
int PrepareMachine(const Config& cfg_in, std::FILE* out, RunPlan* p) {
  Config& cfg = p->cfg;
  cfg = cfg_in;
  p->seed = cfg.seed ? *cfg.seed : RandomSeed();
  cfg.seed = p->seed;
  p->sim = cfg.backend == "sim";
  std::string err;
  auto fail = [&](int code, const std::string& msg) {
    spdlog::error("{}", code == kExitBadInput ? InputError(cfg, msg) : msg);
    return code;
  };
  std::unique_ptr<CpuControl> backend;
  if (p->sim) {
    auto sim = std::make_unique<SimCpuControl>(cfg.sim, p->seed);
    p->sim_ctl = sim.get();
    backend = std::move(sim);
  } else {
    backend = NewSysfsCpuControl(cfg.sysfs_root);
  }
  CpuControl* raw = backend.get();
  p->ctl = std::make_unique<WatchedCpuControl>(std::move(backend), &p->in_flight);
  // From the first read: a kernel stuck in hotplug blocks reading `online`.
  const std::string dir = p->sim && cfg.state_dir.empty() ? "" : ResolveStateDir(cfg);
  auto kept = [dir] {
    if (dir.empty())
      return std::string("a sim run without a state directory keeps nothing");
    if (access((dir + "/state.json").c_str(), F_OK) == 0)
      return dir + "/state.json is kept: run `cpuhp-stress restore` once the kernel answers";
    return access((dir + "/checkpoint.json").c_str(), F_OK) == 0
               ? dir + "/checkpoint.json is kept: the same run started again resumes"
               : std::string("no CPU had been written: nothing to restore");
  };
  p->watchdog = StartCallWatchdog(&p->in_flight, raw, cfg.stuck_timeout_ns, cfg.stuck_give_up_ns,
                                  "run", kept);

  // State directory first: a dead run's mask is restored before we look.
  // The sim backend uses one only when given, for its checkpoints.
  if (!p->sim || !cfg.state_dir.empty()) {
    p->state_dir = std::make_unique<StateDir>(ResolveStateDir(cfg));
    if (!p->state_dir->Lock(&err))
      return fail(kExitBadInput, err);
  }
  // One run per machine, whatever its state directory: before a stale mask
  // is restored or this run's start mask read, both of which another run's
  // offline CPUs would make wrong.
  if (!p->sim &&
      !p->machine_lock.Acquire(cfg.sysfs_root, p->state_dir->dir(), DefaultHolderRecordDir(), &err))
    return fail(kExitBadInput, err);
  if (!p->sim && p->state_dir->HasState() &&
      !RestoreStale(p->state_dir.get(), cfg.sysfs_root, p->ctl.get(), ReadBootId(), out, &err))
    return fail(kExitFailed, err);
  // A checkpoint of this run resumes it (soak.h); its seed wins.
  p->soak = std::make_unique<SoakSession>(cfg_in, p->state_dir.get(), p->sim_ctl);
  if (!p->soak->Load(&p->seed, &err))
    return fail(kExitFailed, err);
  cfg.seed = p->seed;

  if (!DiscoverTopology(p->ctl.get(), &p->topo, &err))
    return fail(kExitBadInput, err);
  if (!SelectCpus(cfg, p->topo, p->ctl.get(), &p->selected, &err))
    return fail(kExitBadInput, err);
  if (cfg.min_online >= static_cast<int>(p->topo.present.size())) {
    return fail(kExitBadInput, "/min_online: " + std::to_string(cfg.min_online) +
                                   " leaves no CPU to take offline: " +
                                   std::to_string(p->topo.present.size()) + " CPUs are present");
  }
  p->state = StateFrom(p->topo);
  ScheduleParams params{cfg.pattern, p->selected, cfg.min_online, p->seed, cfg.sweep};
  if (cfg.pattern == Pattern::kSmt) {
    if (!PrepareSmt(cfg, p->topo, p->ctl.get(), &params, &p->smt_control_at_start, &err))
      return fail(kExitBadInput, err);
    p->selected = params.cpus;
  }
  if (FaultsWanted(cfg))
    p->faults =
        std::make_unique<FaultInjector>(p->ctl.get(), p->selected, FaultOptionsFrom(cfg, p->seed));
  p->schedule = cfg.pattern == Pattern::kFaultSweep
                    ? NewFaultSweepSchedule(params, p->state, p->faults.get())
                    : NewSchedule(params, p->state, &err);
  if (!p->schedule)
    return fail(kExitBadInput, err);
  // Every output path before the first operation: a report that cannot be
  // written is bad input, not a lost run.
  if (!CheckOutputPath(cfg.report, &err) ||
      (!cfg.oplog.empty() && !CheckOutputPath(cfg.oplog, &err)))
    return fail(kExitBadInput, err);
  // A report already there is another run's. The default name is refused
  // unless --force (a bare `run` twice must not lose the first); a path the
  // user named is replaced, and the run says so. A resumed run writes its own.
  if (!cfg.force && !p->soak->resuming() && access(cfg.report.c_str(), F_OK) == 0) {
    if (cfg.report == Config{}.report)
      return fail(kExitBadInput, cfg.report +
                                     ": a report is already there; --force to overwrite it, or "
                                     "--report another path");
    spdlog::warn("{}: replacing the report already there at the end of this run", cfg.report);
  }
  return 0;
}

// Step 2: the timing sources, built (not started) and checked as input: the
// write itself is always timed; kernel sources join if they can.
struct RunSources {
  std::vector<std::unique_ptr<TimingSource>> owned;
  std::vector<TimingSource*> all;      // the caller's, then ours
  std::vector<TimingSource*> running;  // those that started
  nlohmann::json reports;              // name -> section
};

int BuildSources(const RunPlan& p, const std::vector<TimingSource*>& given, RunSources* s) {
  std::string err;
  if (!NewConfiguredSources(p.cfg, p.topo, p.selected, &s->owned, &err)) {
    spdlog::error("{}", err);
    return kExitBadInput;
  }
  if (p.cfg.tracepoints && !p.sim) {
    auto tp = std::make_unique<TracefsSource>(p.cfg.sysfs_root);
    // Its drainer stays off the CPUs the run takes down.
    std::vector<int> quiet;
    for (int c : p.topo.online)
      if (std::find(p.selected.begin(), p.selected.end(), c) == p.selected.end())
        quiet.push_back(c);
    tp->set_drainer_cpus(std::move(quiet));
    s->owned.push_back(std::move(tp));
  }
  // Kernel phases: the module, the BPF programs, or both (kernel_phases.source);
  // "auto" builds both and the BPF source stands down when the module runs.
  const std::string& phases = p.cfg.kernel_phases_source;
  KmodSource* kmod = nullptr;
  if (p.cfg.kmod.enabled && !p.sim && phases != "bpf") {
    auto k = std::make_unique<KmodSource>(p.cfg.kmod.device);
    kmod = k.get();
    s->owned.push_back(std::move(k));
  }
  if (!p.sim && phases != "kmod")
    s->owned.push_back(std::make_unique<BpfSource>(phases == "auto" ? kmod : nullptr,
                                                   p.cfg.kernel_phases_bpf_attach == "kprobe"));
  s->all = given;
  for (auto& src : s->owned)
    s->all.push_back(src.get());
  s->reports = {{"write",
                 {{"status", "ok"},
                  {"clock", p.sim ? "simulated" : "CLOCK_MONOTONIC"},
                  {"measures", "write(2) of 0/1 to cpuN/online"}}}};
  return 0;
}

// Step 3 opens the operation log and applies a checkpoint: after it, the run
// is what it will be.
int OpenRunState(RunPlan* p) {
  std::string err, warning;
  const Config& cfg = p->cfg;
  p->oplog.set_simulated(p->sim);
  if (!cfg.oplog.empty() &&
      !(p->soak->resuming() ? p->oplog.OpenAt(cfg.oplog, p->soak->oplog_position(), &err, &warning)
                            : p->oplog.Open(cfg.oplog, &err))) {
    spdlog::error("{}", err);
    return kExitBadInput;
  }
  if (!warning.empty())
    spdlog::warn("{}", warning);
  p->stats = std::make_unique<RunStats>(p->topo.max_cpu + 1);
  if (cfg.pattern == Pattern::kSmt) {
    p->smt_stats = std::make_unique<SmtSwitchStats>(cfg.smt.modes, cfg.smt.method);
    p->stats->set_smt(p->smt_stats.get());
  }
  if (!p->soak->Apply(p->schedule.get(), p->stats.get(), &err)) {
    spdlog::error("{}", err);
    return kExitFailed;
  }
  if (p->soak->resuming() && p->sim) {
    Topology now;  // the simulated machine as checkpointed
    if (!DiscoverTopology(p->ctl.get(), &now, &err)) {
      spdlog::error("{}", err);
      return kExitFailed;
    }
    p->state = StateFrom(now);
  }
  return 0;
}

// The machine as found is put back whatever happens once it is armed: no
// hotplug/fail left armed, the online mask restored, and only then the state
// file removed. PutBack() runs once, from the normal path or, if anything
// throws on the way there, from the destructor.
class MachineGuard {
 public:
  explicit MachineGuard(RunPlan* p) : p_(p) {}
  MachineGuard(const MachineGuard&) = delete;
  MachineGuard& operator=(const MachineGuard&) = delete;
  ~MachineGuard() {
    if (armed_ && !put_back_) {
      try {
        PutBack();
      } catch (...) {
        // Nothing may escape a destructor; `cpuhp-stress restore` remains.
      }
    }
  }

  // Records the mask in the state file and lets fault injection learn what
  // it can fail (its probes arm hotplug/fail). Non-zero: the exit code.
  int Arm() {
    std::string err;
    RunPlan& p = *p_;
    const std::string now = FormatUtc(RealtimeNs());
    p.started_at = p.soak->resuming() ? p.soak->started_at() : now;
    if (p.state_dir && !p.sim) {
      SavedState saved{getpid(), ReadBootId(), now, p.cfg.sysfs_root, p.topo.online, p.selected};
      saved.fail_may_be_armed = p.faults != nullptr;
      saved.smt_control = p.smt_control_at_start;
      if (!p.state_dir->Write(saved, &err)) {
        spdlog::error("{}", err);
        return kExitBadInput;
      }
    }
    armed_ = true;
    if (!p.faults)
      return 0;
    if (!p.sim)
      p.faults->set_kmsg_reader(NewDevKmsgReader("/dev/kmsg"));
    FaultInjector::Start st = p.faults->Begin(p.state, &err);
    if (st == FaultInjector::Start::kUnavailable && p.cfg.pattern != Pattern::kFaultSweep) {
      spdlog::warn("fault injection unavailable: {}", err);
      return 0;
    }
    if (st == FaultInjector::Start::kOk)
      return 0;
    // An unknown state name is bad input; a kernel that cannot do a fault
    // sweep, or a fail that cannot be cleared, a failed run.
    spdlog::error("{}", err);
    begin_failed_ = true;  // its probes may have armed fail before it failed
    PutBack();
    return st == FaultInjector::Start::kBadInput ? kExitBadInput : kExitFailed;
  }

  struct Result {
    bool fail_cleared = true;
    std::vector<std::string> fail_clear_errors;
    RestoreResult restored;
  };
  const Result& PutBack() {
    put_back_ = true;
    RunPlan& p = *p_;
    std::string err;
    // No fail left armed, then the mask back, before anything else can fail.
    if (begin_failed_) {
      // Whatever set-up left armed; a CPU without hotplug/fail has none.
      std::vector<std::string> cleared;
      r_.fail_clear_errors = ClearArmedFail(p.ctl.get(), p.selected, &cleared);
      r_.fail_cleared = r_.fail_clear_errors.empty();
    } else {
      r_.fail_cleared =
          !p.faults || !p.faults->available() || p.faults->ClearAll(&r_.fail_clear_errors);
    }
    for (const std::string& e : r_.fail_clear_errors)
      spdlog::error("{}", e);
    r_.restored = RestoreMask(p.ctl.get(), p.selected, p.topo.online, p.smt_control_at_start);
    // The state file stays while anything is left to undo: `restore` needs it.
    if (r_.restored.ok && r_.fail_cleared && p.state_dir && !p.sim && !p.state_dir->Remove(&err))
      spdlog::error("{}", err);
    if (!r_.restored.ok)
      spdlog::error("restore of online mask {} failed: {}; run `cpuhp-stress restore`",
                    FormatCpuList(p.topo.online), r_.restored.failures.front());
    return r_;
  }

 private:
  RunPlan* p_;
  bool armed_ = false;
  bool put_back_ = false;
  bool begin_failed_ = false;
  Result r_;
};

// Step 4: the operations. Starts the sources, runs the schedule to its end
// (or a signal, an error, an exception), stops the sources.
struct RunResult {
  RunOutcome outcome;
  uint64_t elapsed_ns = 0;
};

// What an interim report and the final one share, as of now.
ReportInputs CommonReportInputs(const RunPlan& p, const Runner& runner) {
  ReportInputs in;
  in.config = ConfigToJson(p.cfg);
  in.host = CollectHostInfo(p.topo);
  in.cpus = {{"selected", FormatCpuList(p.selected)},
             {"backend", p.ctl->Describe()},
             {"topology", TopologyToJson(p.topo)},
             {"schedule", p.schedule->Describe()}};
  if (p.smt_stats)
    in.smt = p.smt_stats->ToJson();
  in.seed = p.seed;
  in.started_at = p.started_at;
  in.ended_at = FormatUtc(RealtimeNs());
  in.elapsed_ns = runner.elapsed_ns();
  if (p.sim)
    in.simulated_elapsed_ns = static_cast<SimClock*>(p.ctl->clock())->elapsed_ns();
  in.stats = p.stats.get();
  in.first_errors = runner.first_errors();
  in.first_errors_dropped = runner.first_errors_dropped();
  in.max_rss_kib = MaxRssKib();
  in.loop_cpu_ns = runner.loop_cpu_ns();
  in.loop_ops = runner.loop_ops();
  return in;
}

RunResult RunOperations(RunPlan* p, RunSources* s, Runner* runner,
                        const volatile sig_atomic_t* stop) {
  const Config& cfg = p->cfg;
  spdlog::info("{} pattern on CPUs {} of {} ({} online), seed {}", PatternName(cfg.pattern),
               FormatCpuList(p->selected), p->ctl->Describe(), p->topo.online.size(), p->seed);
  const bool tty = isatty(STDERR_FILENO);
  ProgressLine progress(
      cfg.progress == ProgressMode::kAlways || (cfg.progress == ProgressMode::kAuto && tty),
      IterationLimit(cfg), cfg.duration_ns);
  if (p->sim)
    progress.set_simulated_clock(p->ctl->clock(), SimClock::kStartNs);
  auto interim_report = [&] {
    ReportInputs in = CommonReportInputs(*p, *runner);
    in.timing_sources = s->reports;
    in.interim = true;
    nlohmann::json r = BuildReport(in);
    r["soak"] = p->soak->ReportJson();
    return r;
  };
  if (p->faults && p->faults->available())
    runner->set_hook(p->faults.get());
  p->soak->set_watchdog(p->watchdog.get());
  p->soak->Start(runner, p->started_at, p->seed);
  RunResult res;
  if (p->soak->finished()) {
    // The run had ended; only its report was not confirmed written.
    res.outcome = p->soak->finished_outcome();
    p->soak->Finish(res.outcome, runner, *p->stats, p->schedule.get(), &p->oplog);
    res.elapsed_ns = runner->elapsed_ns();
    return res;
  }
  try {
    res.outcome = runner->Run(stop, [&] {
      const std::optional<ScheduleProgress> sp = p->schedule->Progress();
      progress.Update(*p->stats, sp ? &*sp : nullptr);
      p->soak->Tick(runner, *p->stats, p->schedule.get(), &p->oplog, interim_report);
    });
  } catch (const std::exception& e) {
    // Whatever went wrong, the mask is restored and a report written.
    res.outcome.stop_reason = "fatal";
    res.outcome.message = std::string("internal error: ") + e.what();
  }
  // A stop between two switches leaves the last one complete.
  p->schedule->Settle(runner->state());
  p->stats->CloseGroupsBefore(p->schedule->next_group());
  p->soak->Finish(res.outcome, runner, *p->stats, p->schedule.get(), &p->oplog);
  res.elapsed_ns = runner->elapsed_ns();
  progress.Finish();
  return res;
}

void StartSources(RunSources* s) {
  for (TimingSource* src : s->all) {
    std::string why;
    if (src->Start(&why)) {
      s->running.push_back(src);
    } else {
      spdlog::warn("timing source {} unavailable: {}", src->name(), why);
      s->reports[src->name()] = {{"status", "unavailable"}, {"reason", why}};
    }
  }
}

void StopSources(RunSources* s) {
  for (TimingSource* src : s->running) {
    src->Stop();
    nlohmann::json section = src->ReportJson();
    section["status"] = "ok";
    s->reports[src->name()] = std::move(section);
  }
}

// A signal stopped the run before its target: the report's run_completed
// check (the one place that knows a run's targets) fails on the signal. A
// run given no target ends only by a signal, and that completes it.
bool Interrupted(const nlohmann::json& report) {
  if (report["run"].value("stop_reason", "") != "signal")
    return false;
  // Named and static: gcc 12 -O2 takes a temporary's empty maps for
  // uninitialized (-Wmaybe-uninitialized).
  static const ReportOptions kNoOptions;
  for (const ReportCheck& c : ReportChecks(report, kNoOptions))
    if (c.name == "run_completed")
      return !c.pass;
  return true;
}

// Step 6: the report, the summary, the exit code. A report that cannot go
// where asked is saved in the state directory: a day of data is not lost to
// a full disk.
int WriteReport(RunPlan* p, RunSources* s, const Runner& runner, const RunResult& run,
                const MachineGuard::Result& back, std::FILE* out) {
  const Config& cfg = p->cfg;
  std::string err;
  bool log_ok = true;
  if (p->oplog.is_open() && !p->oplog.Close(&err)) {
    spdlog::error("{}", err);
    log_ok = false;
  }
  const RunOutcome& outcome = run.outcome;
  if (outcome.stop_reason == "fatal" || outcome.stop_reason == "error")
    spdlog::error("run stopped: {}", outcome.message);
  else if (outcome.stop_reason == "signal")
    spdlog::warn("run stopped by {}", outcome.message);

  // The switch in progress counts when the pattern ended by itself after it.
  if (p->smt_stats)
    p->smt_stats->Finish(outcome.stop_reason == "schedule_complete");
  ReportInputs in = CommonReportInputs(*p, runner);
  in.elapsed_ns = run.elapsed_ns;
  in.stop_reason = outcome.stop_reason;
  in.stop_message = outcome.message;
  in.timing_sources = std::move(s->reports);
  in.restore = back.restored.ToJson(p->topo.online);
  nlohmann::json report = BuildReport(in);
  report["soak"] = p->soak->ReportJson();
  if (p->faults) {
    report["faults"] = p->faults->ReportJson();
    report["faults"]["cleared_at_end"] = back.fail_cleared;
    report["faults"]["clear_failures"] = back.fail_clear_errors;
  }
  std::fputs(HumanSummary(report).c_str(), out);
  std::fputs(FaultsSummary(report).c_str(), out);
  if (const auto& tp = report["timing_sources"]; tp.contains("tracepoints"))
    std::fputs(TracepointsSummary(tp["tracepoints"]).c_str(), out);
  const std::string text = DumpJson(report, 2) + "\n";
  const bool report_ok = WriteFileAtomic(cfg.report, text, &err);
  if (report_ok) {
    std::fprintf(out, "report: %s\n", cfg.report.c_str());
  } else {
    // The run still fails: the asked-for file is missing, and the summary's
    // last line says so, not "restore: ok" above an error scrolled away.
    spdlog::error("{}", err);
    const std::string why = err;
    std::string where = "the report is lost";
    // The sim backend has a state directory only when given one.
    if (!p->sim || p->state_dir) {
      std::string fallback =
          ResolveStateDir(cfg) + "/report-unsaved-" + std::to_string(getpid()) + ".json";
      if (WriteFileAtomic(fallback, text, &err))
        where = "saved instead to " + fallback;
      else
        where = err + "; the report is lost";
    }
    spdlog::warn("report NOT written: {}", where);
    std::fprintf(out, "report NOT written: %s; %s\n", why.c_str(), where.c_str());
  }
  // Something broke (1), a signal cut the run short (4), or the run finished
  // and found failures (3, which a service does not restart): exit_codes.h.
  const bool broke = !back.restored.ok || (p->faults && !back.fail_cleared) || !report_ok ||
                     !log_ok || outcome.stop_reason == "fatal";
  // Report and log durable, CPUs back: only now is a finished run's
  // checkpoint removed (a stopped one stays for the resume).
  if (report_ok && log_ok && back.restored.ok && outcome.stop_reason != "signal")
    p->soak->Complete();
  const nlohmann::json& soak = report["soak"];
  const bool stuck = !soak.value("stuck_operations", nlohmann::json::array()).empty() ||
                     soak.value("stuck_operations_dropped", uint64_t{0}) > 0;
  const bool found = (p->faults && p->faults->failed_rollbacks()) || p->stats->failed_ops() ||
                     p->stats->readback_mismatches() || outcome.stop_reason == "error" || stuck;
  return broke                 ? kExitFailed
         : Interrupted(report) ? kExitInterrupted
         : found               ? kExitFinishedWithFailures
                               : kExitOk;
}

}  // namespace

int RunCommand(const Config& cfg, const volatile sig_atomic_t* stop, std::FILE* out,
               const std::vector<TimingSource*>& sources) {
  RunPlan plan;
  RunSources src;
  if (int code = PrepareMachine(cfg, out, &plan))
    return code;
  if (int code = BuildSources(plan, sources, &src))
    return code;
  if (int code = OpenRunState(&plan))
    return code;
  MachineGuard guard(&plan);
  if (int code = guard.Arm())
    return code;
  StartSources(&src);
  const Config& c = plan.cfg;
  RunLimits limits{IterationLimit(c), c.duration_ns, c.stop_on_error, c.interval_ns,
                   static_cast<uint32_t>(c.lost_cpu_after)};
  if (plan.sim) {  // --duration is the sim clock's time, as every number shown
    limits.duration_clock = plan.ctl->clock();
    limits.duration_zero_ns = SimClock::kStartNs;
  }
  Runner runner(plan.ctl.get(), plan.schedule.get(), plan.state, plan.stats.get(), src.running,
                plan.oplog.is_open() ? &plan.oplog : nullptr, limits);
  runner.set_in_flight(&plan.in_flight);
  RunResult run;
  try {
    run = RunOperations(&plan, &src, &runner, stop);
    StopSources(&src);
  } catch (const std::exception& e) {
    // Past the loop's own catch (a source's Stop, the final checkpoint): the
    // machine is still put back and the report says how the run ended.
    run.outcome.stop_reason = "fatal";
    run.outcome.message = std::string("internal error: ") + e.what();
    run.elapsed_ns = runner.elapsed_ns();
  }
  const MachineGuard::Result& back = guard.PutBack();
  // Every sysfs call is done: the records are final for the report.
  if (plan.watchdog)
    plan.watchdog->Stop();
  return WriteReport(&plan, &src, runner, run, back, out);
}

}  // namespace cpuhp
