// SPDX-License-Identifier: GPL-2.0
#include "cli/commands.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "util/cpu_list.h"
#include "faults/faults.h"
#include "sources/health_sources.h"
#include "sources/kmod_source.h"
#include "run/oplog.h"
#include "run/progress.h"
#include "report/report.h"
#include "machine/restore.h"
#include "run/runner.h"
#include "run/schedule.h"
#include "machine/sim_cpu_control.h"
#include "soak/soak.h"
#include "machine/topology.h"
#include "sources/tracefs_source.h"

namespace cpuhp {
namespace {

int64_t RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

uint64_t RandomSeed() {
  uint64_t seed = 0;
  if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
    seed = static_cast<uint64_t>(RealtimeNs()) ^ static_cast<uint64_t>(getpid());
  return seed;
}

uint64_t MaxRssKib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<uint64_t>(ru.ru_maxrss);
}

std::string DirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

// The CPUs the config selects, all of them present and hotpluggable.
bool SelectCpus(const Config& cfg, const Topology& topo, CpuControl* ctl, std::vector<int>* out,
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

// A run cannot write its report: find out before any CPU is touched.
bool CheckWritableDir(const std::string& file, std::string* err) {
  std::string probe = DirOf(file) + "/.cpuhp-stress-probe." + std::to_string(getpid());
  FILE* f = fopen(probe.c_str(), "we");
  if (!f) {
    *err = file + ": cannot write here: " + strerror(errno);
    return false;
  }
  fclose(f);
  unlink(probe.c_str());
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

// Puts back a mask left by a run that did not finish.
bool RestoreStale(StateDir* dir, std::FILE* out, std::string* err) {
  SavedState saved;
  if (!dir->Read(&saved, err))
    return false;
  spdlog::warn("{}: a run (pid {}, started {}) did not finish: restoring online mask {} first",
               dir->state_path(), saved.pid, saved.started_at,
               FormatCpuList(saved.online_at_start));
  auto ctl = NewSysfsCpuControl(saved.sysfs_root);
  // A state left armed in hotplug/fail first: it must not fire below.
  std::vector<std::string> cleared;
  std::vector<std::string> fail_errors = ClearArmedFail(ctl.get(), saved.controlled, &cleared);
  for (const std::string& c : cleared)
    std::fprintf(out, "cleared hotplug/fail armed on %s\n", c.c_str());
  if (!fail_errors.empty()) {
    *err = dir->state_path() + ": cannot clear " + fail_errors.front();
    return false;
  }
  RestoreResult r = RestoreMask(ctl.get(), saved.controlled, saved.online_at_start);
  if (!r.ok) {
    *err = dir->state_path() + ": restore failed: " + r.failures.front();
    return false;
  }
  std::fprintf(out, "restored online mask %s from %s (%d writes)\n",
               FormatCpuList(saved.online_at_start).c_str(), dir->state_path().c_str(), r.writes);
  return dir->Remove(err);
}

}  // namespace

int RunCommand(const Config& cfg_in, const volatile sig_atomic_t* stop, std::FILE* out,
               const std::vector<TimingSource*>& sources) {
  Config cfg = cfg_in;
  uint64_t seed = cfg.seed ? *cfg.seed : RandomSeed();
  cfg.seed = seed;
  const bool sim = cfg.backend == "sim";
  std::string err;
  auto fail = [&](int code, const std::string& msg) {
    spdlog::error("{}", msg);
    return code;
  };

  std::unique_ptr<CpuControl> ctl;
  if (sim)
    ctl = std::make_unique<SimCpuControl>(cfg.sim, seed);
  else
    ctl = NewSysfsCpuControl(cfg.sysfs_root);

  // State directory first: a dead run's mask is restored before we look.
  // The sim backend uses one only when given, for its checkpoints.
  std::unique_ptr<StateDir> state_dir;
  if (!sim || !cfg.state_dir.empty()) {
    state_dir = std::make_unique<StateDir>(ResolveStateDir(cfg));
    if (!state_dir->Lock(&err))
      return fail(kExitBadInput, err);
    if (!sim && state_dir->HasState() && !RestoreStale(state_dir.get(), out, &err))
      return fail(kExitFailed, err);
  }
  // A checkpoint of this run resumes it (soak.h); its seed wins.
  SoakSession soak(cfg_in, state_dir.get(), sim ? static_cast<SimCpuControl*>(ctl.get()) : nullptr);
  if (!soak.Load(&seed, &err))
    return fail(kExitFailed, err);
  cfg.seed = seed;

  Topology topo;
  if (!DiscoverTopology(ctl.get(), &topo, &err))
    return fail(kExitBadInput, err);
  std::vector<int> selected;
  if (!SelectCpus(cfg, topo, ctl.get(), &selected, &err))
    return fail(kExitBadInput, err);
  if (cfg.min_online >= static_cast<int>(topo.present.size())) {
    return fail(kExitBadInput, "/min_online: " + std::to_string(cfg.min_online) +
                                   " leaves no CPU to take offline: " +
                                   std::to_string(topo.present.size()) + " CPUs are present");
  }
  OnlineState state = StateFrom(topo);
  ScheduleParams params{cfg.pattern, selected, cfg.min_online, seed, cfg.sweep};
  std::unique_ptr<FaultInjector> faults;
  if (FaultsWanted(cfg))
    faults = std::make_unique<FaultInjector>(ctl.get(), selected, FaultOptionsFrom(cfg, seed));
  std::unique_ptr<Schedule> schedule = cfg.pattern == Pattern::kFaultSweep
                                           ? NewFaultSweepSchedule(params, state, faults.get())
                                           : NewSchedule(params, state, &err);
  if (!schedule)
    return fail(kExitBadInput, err);
  if (!CheckWritableDir(cfg.report, &err))
    return fail(kExitBadInput, err);
  std::vector<std::unique_ptr<TimingSource>> configured;
  if (!NewConfiguredSources(cfg, topo, selected, &configured, &err))
    return fail(kExitBadInput, err);
  std::vector<TimingSource*> all_sources = sources;
  for (auto& s : configured)
    all_sources.push_back(s.get());
  OpLog oplog;
  if (!cfg.oplog.empty() && !(soak.resuming() ? oplog.OpenAt(cfg.oplog, soak.oplog_bytes(), &err)
                                              : oplog.Open(cfg.oplog, &err)))
    return fail(kExitBadInput, err);
  RunStats stats(topo.max_cpu + 1);
  if (!soak.Apply(schedule.get(), &stats, &err))
    return fail(kExitFailed, err);
  if (soak.resuming() && sim) {
    Topology now;  // the simulated machine as checkpointed
    if (!DiscoverTopology(ctl.get(), &now, &err))
      return fail(kExitFailed, err);
    state = StateFrom(now);
  }

  const int64_t started_real_ns = RealtimeNs();
  const std::string started_at = soak.resuming() ? soak.started_at() : FormatUtc(started_real_ns);
  if (state_dir && !sim) {
    SavedState saved{getpid(),       ReadBootId(), FormatUtc(started_real_ns),
                     cfg.sysfs_root, topo.online,  selected};
    saved.fail_may_be_armed = faults != nullptr;
    if (!state_dir->Write(saved, &err))
      return fail(kExitBadInput, err);
  }
  // Fault injection learns what it can fail now: after the state file (the
  // probes arm hotplug/fail), before the first operation.
  if (faults) {
    if (!sim)
      faults->set_kmsg_reader(NewDevKmsgReader("/dev/kmsg"));
    FaultInjector::Start st = faults->Begin(state, &err);
    if (st == FaultInjector::Start::kUnavailable && cfg.pattern != Pattern::kFaultSweep) {
      spdlog::warn("fault injection unavailable: {}", err);
    } else if (st != FaultInjector::Start::kOk) {
      std::vector<std::string> ignored;
      faults->ClearAll(&ignored);
      if (state_dir && !sim)
        state_dir->Remove(&ignored.emplace_back());
      // An unknown state name is bad input; a kernel that cannot do a
      // fault sweep, or a fail that cannot be cleared, a failed run.
      return fail(st == FaultInjector::Start::kBadInput ? kExitBadInput : kExitFailed, err);
    }
  }
  spdlog::info("{} pattern on CPUs {} of {} ({} online), seed {}", PatternName(cfg.pattern),
               FormatCpuList(selected), ctl->Describe(), topo.online.size(), seed);

  // The write itself is always timed; kernel sources join if they can.
  nlohmann::json source_reports = {{"write",
                                    {{"status", "ok"},
                                     {"clock", sim ? "simulated" : "CLOCK_MONOTONIC"},
                                     {"measures", "write(2) of 0/1 to cpuN/online"}}}};
  std::unique_ptr<TracefsSource> tracefs;
  if (cfg.tracepoints && !sim) {
    tracefs = std::make_unique<TracefsSource>(cfg.sysfs_root);
    all_sources.push_back(tracefs.get());
  }
  std::unique_ptr<KmodSource> kmod_source;
  if (cfg.kmod.enabled && !sim) {
    kmod_source = std::make_unique<KmodSource>(cfg.kmod.device);
    all_sources.push_back(kmod_source.get());
  }
  std::vector<TimingSource*> running;
  for (TimingSource* s : all_sources) {
    std::string why;
    if (s->Start(&why)) {
      running.push_back(s);
    } else {
      spdlog::warn("timing source {} unavailable: {}", s->name(), why);
      source_reports[s->name()] = {{"status", "unavailable"}, {"reason", why}};
    }
  }

  const bool tty = isatty(STDERR_FILENO);
  ProgressLine progress(
      cfg.progress == ProgressMode::kAlways || (cfg.progress == ProgressMode::kAuto && tty),
      cfg.iterations, cfg.duration_ns);
  Runner runner(ctl.get(), schedule.get(), state, &stats, running,
                oplog.is_open() ? &oplog : nullptr,
                RunLimits{cfg.iterations, cfg.duration_ns, cfg.stop_on_error, cfg.interval_ns,
                          static_cast<uint32_t>(cfg.lost_cpu_after)});
  // What an interim report and the final one share, as of now.
  auto report_inputs = [&] {
    ReportInputs in;
    in.config = ConfigToJson(cfg);
    in.host = CollectHostInfo(topo);
    in.cpus = {{"selected", FormatCpuList(selected)},
               {"backend", ctl->Describe()},
               {"topology", TopologyToJson(topo)},
               {"schedule", schedule->Describe()}};
    in.seed = seed;
    in.started_at = started_at;
    in.ended_at = FormatUtc(RealtimeNs());
    in.elapsed_ns = runner.elapsed_ns();
    in.stats = &stats;
    in.first_errors = runner.first_errors();
    in.first_errors_dropped = runner.first_errors_dropped();
    in.max_rss_kib = MaxRssKib();
    return in;
  };
  auto interim_report = [&] {
    ReportInputs in = report_inputs();
    in.timing_sources = source_reports;
    in.interim = true;
    nlohmann::json r = BuildReport(in);
    r["soak"] = soak.ReportJson();
    return r;
  };
  if (faults && faults->available())
    runner.set_hook(faults.get());
  soak.Start(&runner, started_at, seed);
  RunOutcome outcome;
  try {
    outcome = runner.Run(stop, [&] {
      progress.Update(stats);
      soak.Tick(&runner, stats, schedule.get(), &oplog, interim_report);
    });
  } catch (const std::exception& e) {
    // Whatever went wrong, the mask is restored and a report written below.
    outcome.stop_reason = "fatal";
    outcome.message = std::string("internal error: ") + e.what();
  }
  soak.Finish(outcome, &runner, stats, schedule.get(), &oplog);
  const uint64_t elapsed_ns = runner.elapsed_ns();
  progress.Finish();
  for (TimingSource* s : running) {
    s->Stop();
    nlohmann::json section = s->ReportJson();
    section["status"] = "ok";
    source_reports[s->name()] = std::move(section);
  }

  // No fail left armed, then the mask back, before anything else can fail.
  std::vector<std::string> fail_clear_errors;
  const bool fail_cleared = !faults || !faults->available() || faults->ClearAll(&fail_clear_errors);
  for (const std::string& e : fail_clear_errors)
    spdlog::error("{}", e);
  RestoreResult restored = RestoreMask(ctl.get(), selected, topo.online);
  if (restored.ok && state_dir && !sim && !state_dir->Remove(&err))
    spdlog::error("{}", err);
  if (!restored.ok)
    spdlog::error("restore of online mask {} failed: {}; run `cpuhp-stress restore`",
                  FormatCpuList(topo.online), restored.failures.front());
  bool log_ok = true;
  if (oplog.is_open() && !oplog.Close(&err)) {
    spdlog::error("{}", err);
    log_ok = false;
  }
  if (outcome.stop_reason == "fatal" || outcome.stop_reason == "error")
    spdlog::error("run stopped: {}", outcome.message);
  else if (outcome.stop_reason == "signal")
    spdlog::warn("run stopped by {}", outcome.message);

  ReportInputs in = report_inputs();
  in.elapsed_ns = elapsed_ns;
  in.stop_reason = outcome.stop_reason;
  in.stop_message = outcome.message;
  in.timing_sources = std::move(source_reports);
  in.restore = restored.ToJson(topo.online);
  nlohmann::json report = BuildReport(in);
  report["soak"] = soak.ReportJson();
  if (faults) {
    report["faults"] = faults->ReportJson();
    report["faults"]["cleared_at_end"] = fail_cleared;
    report["faults"]["clear_failures"] = fail_clear_errors;
  }
  std::fputs(HumanSummary(report).c_str(), out);
  std::fputs(FaultsSummary(report).c_str(), out);
  if (const auto& tp = report["timing_sources"]; tp.contains("tracepoints"))
    std::fputs(TracepointsSummary(tp["tracepoints"]).c_str(), out);
  const std::string text = report.dump(2) + "\n";
  bool report_ok = WriteFileAtomic(cfg.report, text, &err);
  if (report_ok) {
    std::fprintf(out, "report: %s\n", cfg.report.c_str());
  } else {
    // A day of data is not lost to a full disk: the state directory is
    // usually elsewhere. The run still fails: the asked-for file is missing.
    spdlog::error("{}", err);
    std::string fallback =
        ResolveStateDir(cfg) + "/report-unsaved-" + std::to_string(getpid()) + ".json";
    if (WriteFileAtomic(fallback, text, &err))
      spdlog::warn("report saved instead to {}", fallback);
  }

  const bool faults_failed = faults && (faults->failed_rollbacks() || !fail_cleared);
  const bool failed = faults_failed || stats.failed_ops() || stats.readback_mismatches() ||
                      !restored.ok || !report_ok || !log_ok || outcome.stop_reason == "fatal" ||
                      outcome.stop_reason == "error";
  return failed ? kExitFailed : kExitOk;
}

int RestoreCommand(const std::string& state_dir_path, std::FILE* out) {
  RestoreTraceInstances(out);
  StateDir dir(state_dir_path);
  std::string err;
  if (!dir.Lock(&err)) {
    spdlog::error("{}", err);
    return kExitFailed;
  }
  if (!dir.HasState()) {
    std::fprintf(out, "nothing to restore: no %s\n", dir.state_path().c_str());
    return kExitOk;
  }
  if (!RestoreStale(&dir, out, &err)) {
    spdlog::error("{}", err);
    return kExitFailed;
  }
  return kExitOk;
}

int ListCommand(const std::string& sysfs_root, std::FILE* out) {
  auto ctl = NewSysfsCpuControl(sysfs_root);
  Topology topo;
  std::string err;
  if (!DiscoverTopology(ctl.get(), &topo, &err)) {
    spdlog::error("{}", err);
    return kExitBadInput;
  }
  auto in = [](const std::vector<int>& v, int cpu) {
    return std::binary_search(v.begin(), v.end(), cpu);
  };
  std::fprintf(out, "%5s  %-12s  %-7s  %-8s  %-9s\n", "cpu", "hotpluggable", "online", "isolated",
               "nohz_full");
  for (int cpu : topo.present) {
    std::fprintf(out, "%5d  %-12s  %-7s  %-8s  %-9s\n", cpu,
                 topo.IsHotpluggable(cpu) ? "yes" : "no", topo.IsOnline(cpu) ? "yes" : "no",
                 in(topo.isolated, cpu) ? "yes" : "no",
                 !topo.has_nohz_full_file  ? "-"
                 : in(topo.nohz_full, cpu) ? "yes"
                                           : "no");
  }
  std::fprintf(out, "present %s, online %s, hotpluggable %s\n", FormatCpuList(topo.present).c_str(),
               FormatCpuList(topo.online).c_str(), FormatCpuList(topo.hotpluggable).c_str());
  return kExitOk;
}

}  // namespace cpuhp
