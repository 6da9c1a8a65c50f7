// SPDX-License-Identifier: GPL-2.0
#include "report/report_checks.h"

#include <algorithm>
#include <cinttypes>

#include "config/config.h"
#include "report/compare_render.h"
#include "util/report_json.h"

namespace cpuhp {

using nlohmann::json;

using report_json::Fmt;
using report_json::Get;
using report_json::Path;
using report_json::Str;
using report_json::U64;

std::string SafeName(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.')
      c = '_';
  return s;
}

namespace {

using report_json::kDirs;

struct RunTargets {
  uint64_t iterations = 0;  // 0: none
  uint64_t duration_ns = 0;
};

// What the run aimed at, resolved as the run resolved it (IterationLimit):
// the report's config says "iterations": "auto" when none was given, which
// is 1000 for a plain run and none for a duration or a sweep.
RunTargets ResolvedTargets(const json& cfg) {
  Config c;
  Pattern pattern;
  if (ParsePattern(Str(cfg, "pattern"), &pattern))
    c.pattern = pattern;
  std::string why;
  if (!ParseDuration(Str(cfg, "duration", "0"), &c.duration_ns, &why))
    c.duration_ns = 0;
  if (Get(cfg, "iterations").is_number())
    c.iterations = U64(cfg, "iterations");
  return {IterationLimit(c), c.duration_ns};
}

// How the run ended. Only a stop at one of the targets it was given counts as
// completed: its iteration count, its duration, the end of its sweep, or, for
// a run given none of these (a service stopped by systemctl), a signal. A
// signal, an error, a fatal error or a lost CPU (stop reason error) before
// that ended it early; an interim report has no stop reason yet.
ReportCheck RunCompletedCheck(const json& report) {
  ReportCheck c;
  c.name = "run_completed";
  const json& run = Get(report, "run");
  const json& cfg = Get(report, "config");
  const json& reason_json = Get(run, "stop_reason");
  const std::string reason = reason_json.is_string() ? reason_json.get<std::string>() : "";
  std::vector<std::string> targets;
  const std::string pattern = Str(cfg, "pattern");
  // The smt pattern ends after smt.switches switches (0: never).
  const json& smt_switches = Get(Get(cfg, "smt"), "switches");
  if (pattern == "sweep" || pattern == "fault_sweep" ||
      (pattern == "smt" && smt_switches.is_number_unsigned() && smt_switches.get<uint64_t>() > 0))
    targets.push_back("schedule_complete");
  const RunTargets aimed = ResolvedTargets(cfg);
  if (aimed.iterations > 0)
    targets.push_back("iterations");
  if (aimed.duration_ns > 0)
    targets.push_back("duration");
  if (targets.empty())
    targets.push_back("signal");
  std::string target_list;
  for (const std::string& t : targets)
    target_list += (target_list.empty() ? "" : ", ") + t;
  const uint64_t ops = U64(Get(report, "totals"), "ops");
  c.pass = std::find(targets.begin(), targets.end(), reason) != targets.end();
  c.Measured(static_cast<double>(ops), "ops");
  if (reason.empty()) {
    c.message = Fmt("no stop reason: an interim report, the run was still going after %" PRIu64
                    " operations",
                    ops);
  } else {
    const std::string why = Str(run, "stop_message");
    c.message = Fmt("stopped by %s%s%s after %" PRIu64 " operations (%s: %s)", reason.c_str(),
                    why.empty() ? "" : ": ", why.c_str(), ops,
                    c.pass ? "its target" : "not its target", target_list.c_str());
  }
  return c;
}

// A sweep (pattern sweep) measured every level fully: a stop before its end
// (iterations, duration, signal) leaves levels short (fewer operations than
// 2 * cycles_per_level) or not measured, and a level's numbers, or a compare
// of all levels pooled, would mislead.
void SweepCheck(const json& report, std::vector<ReportCheck>* checks) {
  const report_json::SweepLevels sweep = report_json::ReadSweepLevels(report);
  if (!sweep.sweep)
    return;
  ReportCheck c;
  c.name = "sweep_complete";
  std::string list;
  uint64_t complete = 0;
  for (const report_json::SweepLevel& l : sweep.levels) {
    list += Fmt("%s%" PRId64, list.empty() ? "" : ", ", l.online);
    complete += l.complete;
  }
  c.pass = complete == sweep.levels.size();
  c.Measured(static_cast<double>(complete), "levels");
  c.message = c.pass ? Fmt("all %zu levels (%s) measured, %" PRIu64 " operations each",
                           sweep.levels.size(), list.c_str(), sweep.target_ops)
                     : Fmt("%" PRIu64 " of %zu levels (%s) measured fully; ", complete,
                           sweep.levels.size(), list.c_str()) +
                           report_json::SweepShortfall(sweep);
  checks->push_back(c);
}

// A check's message lists at most this many items (failed rollbacks, stuck
// writes), then how many more there are.
constexpr size_t kListedItems = 10;

std::string MoreItems(uint64_t more) {
  return more ? Fmt("; and %" PRIu64 " more", more) : "";
}

// The failures the injector recorded (faults.failures, capped by the run at
// failures_dropped), each as the kernel developer needs it: CPU, direction,
// state number and name; the same one repeated is counted, not repeated.
std::string FailedRollbacks(const json& faults) {
  const json& list = Get(faults, "failures");
  std::vector<std::pair<std::string, uint64_t>> seen;  // in order of first failure
  if (list.is_array())
    for (const json& f : list) {
      const std::string what =
          Fmt("cpu%" PRIu64 " %s state %" PRIu64 " (%s)", U64(f, "cpu"),
              Str(f, "direction", "?").c_str(), U64(f, "state"), Str(f, "name", "?").c_str());
      auto it =
          std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == what; });
      if (it == seen.end())
        seen.emplace_back(what, 1);
      else
        it->second++;
    }
  std::string out;
  uint64_t more = U64(faults, "failures_dropped");
  for (size_t i = 0; i < seen.size(); i++) {
    if (i >= kListedItems)
      more += seen[i].second;
    else
      out += (i ? ", " : ": ") + seen[i].first +
             (seen[i].second > 1 ? Fmt(" x%" PRIu64, seen[i].second) : "");
  }
  return out + MoreItems(more);
}

// A kernel stack as one line, innermost frame first ("a+0x1/0x2 < b+...").
std::string StackLine(const std::string& stack) {
  std::string out;
  for (size_t at = 0; at < stack.size();) {
    size_t nl = stack.find('\n', at);
    if (nl == std::string::npos)
      nl = stack.size();
    std::string frame = stack.substr(at, nl - at);
    if (frame.rfind("[<", 0) == 0 && frame.find("] ") != std::string::npos)
      frame = frame.substr(frame.find("] ") + 2);
    if (!frame.empty())
      out += (out.empty() ? "" : " < ") + frame;
    at = nl + 1;
  }
  return out;
}

// The stuck-write watchdog (soak.stuck_operations): a write that had not
// returned after stuck_timeout is the most serious thing a soak finds. Each
// listed with what the watchdog recorded: CPU, direction, operation, the
// hotplug state the CPU was in (when the backend could tell), how long,
// whether it returned, and its kernel stack or why there is none.
void StuckCheck(const json& report, std::vector<ReportCheck>* checks) {
  const json& soak = Get(report, "soak");
  if (!soak.is_object())
    return;
  ReportCheck c;
  c.name = "no_stuck_operations";
  const json& stuck = Get(soak, "stuck_operations");
  const size_t listed = stuck.is_array() ? stuck.size() : 0;
  const uint64_t n = listed + U64(soak, "stuck_operations_dropped");
  const uint64_t timeout_ns = U64(soak, "stuck_timeout_ns");
  if (timeout_ns == 0 && n == 0) {
    c.skipped = true;
    c.message = "stuck-write watchdog off (stuck_timeout 0)";
    checks->push_back(c);
    return;
  }
  c.pass = n == 0;
  c.Measured(static_cast<double>(n), "ops");
  c.message = Fmt("%" PRIu64 " sysfs call%s not returned after %.1f s (stuck_timeout)", n,
                  n == 1 ? "" : "s", static_cast<double>(timeout_ns) / 1e9);
  for (size_t i = 0; i < std::min(listed, kListedItems); i++) {
    const json& r = stuck[i];
    // "what" (since the watchdog covers every sysfs call) or, in older
    // reports, the write's CPU and direction.
    const std::string what = Str(r, "what");
    c.message += what.empty()
                     ? Fmt("; cpu%" PRIu64 " %s", U64(r, "cpu"), Str(r, "dir", "?").c_str())
                     : "; " + what;
    if (Get(r, "index").is_number_integer())
      c.message += Fmt(" (op %" PRIu64 ")", U64(r, "index"));
    if (const json& hp = Get(r, "hotplug_state"); hp.is_number_integer()) {
      const std::string name = Str(r, "hotplug_state_name");
      c.message += Fmt(" in state %d", hp.get<int>()) + (name.empty() ? "" : " (" + name + ")");
    }
    c.message += Fmt(" stuck for %.1f s, ", static_cast<double>(U64(r, "detected_after_ns")) / 1e9);
    c.message +=
        Get(r, "returned_after_ns").is_number()
            ? Fmt("returned after %.1f s", static_cast<double>(U64(r, "returned_after_ns")) / 1e9)
            : std::string("never returned");
    const std::string stack = StackLine(Str(r, "stack"));
    c.message += stack.empty() ? ", no kernel stack: " + Str(r, "stack_unavailable", "not recorded")
                               : ", kernel stack: " + stack;
  }
  c.message += MoreItems(n - std::min(listed, kListedItems));
  checks->push_back(c);
}

// The fault-injection section (config /faults, pattern fault_sweep): every
// injected fault rolled back, and no hotplug/fail left armed at the end.
void FaultChecks(const json& report, std::vector<ReportCheck>* checks) {
  const json& faults = Get(report, "faults");
  if (!faults.is_object())
    return;
  ReportCheck rolled;
  rolled.name = "faults_rolled_back";
  if (Str(faults, "status") != "ok") {
    rolled.skipped = true;
    rolled.message = "fault injection unavailable: " + Str(faults, "reason", "no reason given");
  } else {
    const json& t = Get(faults, "totals");
    const uint64_t bad = U64(t, "not_rolled_back");
    rolled.pass = bad == 0;
    rolled.Measured(static_cast<double>(bad), "faults");
    rolled.message = Fmt("%" PRIu64 " of %" PRIu64 " injected faults NOT rolled back, %" PRIu64
                         " rolled back, %" PRIu64 " not reached, %" PRIu64 " unverified",
                         bad, U64(t, "injected"), U64(t, "rolled_back"), U64(t, "not_reached"),
                         U64(t, "unverified"));
    if (bad == 0)
      rolled.message.replace(rolled.message.find("NOT "), 4, "");
    rolled.message += FailedRollbacks(faults);
  }
  checks->push_back(rolled);

  ReportCheck cleared;
  cleared.name = "fail_cleared";
  const json& at_end = Get(faults, "cleared_at_end");
  cleared.pass = at_end.is_boolean() && at_end.get<bool>();
  std::string failures;
  const json& cf = Get(faults, "clear_failures");
  if (cf.is_array())
    for (const json& f : cf)
      if (f.is_string())
        failures += (failures.empty() ? "" : "; ") + f.get<std::string>();
  cleared.message = cleared.pass          ? "no hotplug/fail left armed at the end"
                    : at_end.is_boolean() ? "hotplug/fail left armed at the end: " +
                                                (failures.empty() ? "no detail" : failures)
                                          : "no cleared_at_end in the report (interim report?)";
  checks->push_back(cleared);
}

}  // namespace

std::vector<ReportCheck> ReportChecks(const json& report, const ReportOptions& opts) {
  std::vector<ReportCheck> checks;
  // First in every format: nobody should mistake a model for a machine.
  if (Str(Get(report, "run"), "clock") == "simulated") {
    ReportCheck sim;
    sim.name = "SIMULATED";
    sim.is_verdict = false;
    sim.Measured(static_cast<double>(U64(Get(report, "run"), "simulated_elapsed_ns")) / 1e9, "s");
    sim.message =
        Fmt("SIMULATED run (sim backend): modeled latencies, %.3f s of simulated time; "
            "no real CPU was measured",
            sim.value);
    checks.push_back(sim);
  }
  checks.push_back(RunCompletedCheck(report));
  SweepCheck(report, &checks);
  ReportCheck final_report;
  final_report.name = "final_report";
  const json& interim = Get(report, "interim");
  final_report.pass = !(interim.is_boolean() && interim.get<bool>());
  final_report.message = final_report.pass
                             ? "the final report of the run"
                             : "an interim report: the run was still going, nothing restored yet";
  checks.push_back(final_report);
  FaultChecks(report, &checks);
  const json& totals = Get(report, "totals");
  uint64_t failed = U64(totals, "failed");
  uint64_t mismatches = U64(totals, "readback_mismatches");
  ReportCheck errors;
  errors.name = "no_operation_errors";
  errors.pass = failed == 0 && mismatches == 0;
  errors.Measured(static_cast<double>(failed + mismatches), "ops");
  errors.message = Fmt("%" PRIu64 " of %" PRIu64 " operations failed, %" PRIu64 " read back wrong",
                       failed, U64(totals, "ops"), mismatches);
  checks.push_back(errors);

  // The kernel-log health source (daemon/kmsg_health.h): every kind it counts
  // is a problem (WARN, BUG, Oops, RCU stall, lockups, hung task, a CPU that
  // failed to come online or did not die). Unavailable: a skipped check that
  // says why, never a pass it did not measure.
  std::string health_reason;
  std::string health_status = report_json::SourceStatus(report, "kmsg_health", &health_reason);
  if (health_status != "absent") {
    const json& health = Path(report, {"timing_sources", "kmsg_health"});
    ReportCheck warn;
    warn.name = "no_kernel_warnings";
    if (health_status != "ok") {
      warn.skipped = true;
      warn.message = "kernel log health " + health_status +
                     (health_reason.empty() ? "" : ": " + health_reason);
    } else {
      uint64_t n = 0;
      std::string kinds;
      const json& counts = Get(health, "counts");
      for (const auto& [kind, count] : counts.items()) {
        uint64_t k = U64(counts, kind.c_str());
        n += k;
        if (k)
          kinds += Fmt("%s%s %" PRIu64, kinds.empty() ? "" : ", ", kind.c_str(), k);
      }
      warn.pass = n == 0;
      warn.Measured(static_cast<double>(n), "warnings");
      warn.message = Fmt("%" PRIu64 " problem line%s in %" PRIu64
                         " kernel log records read (WARN, BUG, Oops, stalls, lockups)",
                         n, n == 1 ? "" : "s", U64(health, "records_read"));
      if (!kinds.empty())
        warn.message += ": " + kinds;
      const json& first = Get(health, "first_event");
      if (first.is_object()) {
        const json& op = Get(first, "op_index");
        warn.message += "; first: " + Str(first, "kind", "?") +
                        (op.is_number() ? Fmt(" at operation %" PRIu64, U64(first, "op_index"))
                                        : std::string(" before the first operation")) +
                        ": " + Str(first, "message");
      }
      std::string added = Str(Get(health, "taint"), "added_flags");
      if (!added.empty())
        warn.message += "; taint flags set during the run: " + added;
    }
    checks.push_back(warn);
  }

  // The tracepoints source (daemon/sources/tracefs_source.h): events the
  // ring buffer lost (overwritten before a drain, or dropped) leave the
  // per-state counts incomplete, so the run says so instead of passing.
  std::string trace_reason;
  std::string trace_status = report_json::SourceStatus(report, "tracepoints", &trace_reason);
  if (trace_status != "absent") {
    ReportCheck lost;
    lost.name = "tracepoints_no_lost_events";
    if (trace_status != "ok") {
      lost.skipped = true;
      lost.message =
          "tracepoints " + trace_status + (trace_reason.empty() ? "" : ": " + trace_reason);
    } else {
      const json& l = Path(report, {"timing_sources", "tracepoints", "lost_events"});
      const uint64_t n = U64(l, "total");
      lost.pass = n == 0;
      lost.Measured(static_cast<double>(n), "events");
      lost.message = Fmt("%" PRIu64 " cpuhp events lost (overrun %" PRIu64 ", dropped %" PRIu64
                         ", missed %" PRIu64 ")",
                         n, U64(l, "overrun"), U64(l, "dropped"), U64(l, "lost_markers"));
      if (n)
        lost.message += ": the per-state counts are incomplete (a larger buffer, or more drains)";
    }
    checks.push_back(lost);
  }

  StuckCheck(report, &checks);

  ReportCheck restored;
  restored.name = "cpus_restored";
  const json& restore = Get(report, "restore");
  restored.pass =
      restore.is_object() && Get(restore, "ok").is_boolean() && restore["ok"].get<bool>();
  restored.message = restore.is_object() ? "online CPUs " + Str(restore, "mask", "?") +
                                               (restored.pass ? " restored" : ": restore FAILED")
                                         : "no restore result (interim report?)";
  checks.push_back(restored);

  // The smt pattern's switches, by the mode switched to: measured, so that
  // JUnit, KCIDB and LAVA carry the switch times too.
  const json& smt = Get(report, "smt");
  if (Get(smt, "to").is_array())
    for (const json& m : smt["to"]) {
      if (U64(m, "switches") == 0)
        continue;
      for (const char* stat : {"p50", "max"}) {
        ReportCheck c;
        c.name = "smt_to_" + Str(m, "mode", "?") + "_" + stat;
        c.Measured(static_cast<double>(U64(m, (std::string(stat) + "_ns").c_str())) / 1e6, "ms");
        c.is_verdict = false;
        c.message = Fmt("SMT switch to %s, %s: %.3f ms over %" PRIu64 " switches of %" PRIu64
                        "-%" PRIu64 " CPUs (%s method)",
                        Str(m, "mode", "?").c_str(), stat, c.value, U64(m, "switches"),
                        U64(m, "cpus_per_switch_min"), U64(m, "cpus_per_switch_max"),
                        Str(smt, "method", "?").c_str());
        checks.push_back(c);
      }
    }
  for (const char* dir : kDirs) {
    const json& s = Get(Get(report, "directions"), dir);
    if (U64(s, "count") == 0)
      continue;
    for (const char* stat : {"p50", "p99", "max"}) {
      ReportCheck m;
      m.name = std::string(dir) + "_" + stat;
      m.Measured(static_cast<double>(U64(s, (std::string(stat) + "_ns").c_str())) / 1e6, "ms");
      m.is_verdict = false;
      m.message = Fmt("%s latency %s: %.3f ms over %" PRIu64 " operations", dir, stat, m.value,
                      U64(s, "count"));
      auto lim = opts.limits_ms.find(std::string(dir) + "." + stat);
      if (lim != opts.limits_ms.end()) {
        m.is_verdict = true;
        m.pass = m.value <= lim->second;
        m.message += Fmt(", limit %.3f ms", lim->second);
      }
      checks.push_back(m);
    }
  }
  // Limits on stats not listed above (p90, p99_9, mean).
  for (const auto& [key, limit] : opts.limits_ms) {
    std::string dir = key.substr(0, key.find('.'));
    std::string stat = key.substr(key.find('.') + 1);
    if (stat == "p50" || stat == "p99" || stat == "max")
      continue;
    const json& s = Get(Get(report, "directions"), dir.c_str());
    ReportCheck m;
    m.name = dir + "_" + stat;
    const json& v = Get(s, (stat + "_ns").c_str());
    m.Measured(v.is_number() ? v.get<double>() / 1e6 : 0, "ms");
    m.pass = U64(s, "count") > 0 && m.value <= limit;
    m.message =
        Fmt("%s latency %s: %.3f ms, limit %.3f ms", dir.c_str(), stat.c_str(), m.value, limit);
    checks.push_back(m);
  }

  if (opts.baseline) {
    std::shared_ptr<const Comparison> made = opts.comparison;
    if (!made)
      made = std::make_shared<const Comparison>(Compare(*opts.baseline, report, opts.compare));
    const Comparison& c = *made;
    for (const CompareRow& r : c.rows) {
      for (const Metric* m : {&r.p50, &r.p99}) {
        if (m->verdict == Verdict::kNotApplicable)
          continue;
        ReportCheck k;
        k.name = "compare_" + SafeName(m->name);
        k.pass = m->verdict != Verdict::kRegressed;
        k.Measured(m->ratio, "ratio");
        k.message =
            Fmt("%s: %.3f ms vs baseline %.3f ms, ratio %.3f, CI [%.3f, %.3f], threshold "
                "%g%%: %s",
                m->name.c_str(), m->cand_ns / 1e6, m->base_ns / 1e6, m->ratio, m->ci_lo, m->ci_hi,
                m->threshold * 100, VerdictName(m->verdict));
        if (const std::string boots = MetricBootsSummary(*m); !boots.empty())
          k.message += "; " + boots;  // pooled reports: the page shows the spread too
        checks.push_back(k);
      }
    }
    for (const CompareCheck& cc : c.checks) {
      ReportCheck k;
      k.name = "compare_" + cc.name;
      k.pass = cc.verdict != Verdict::kRegressed;
      k.message = cc.name + ": baseline " + cc.base + ", candidate " + cc.cand;
      checks.push_back(k);
    }
  }
  return checks;
}

}  // namespace cpuhp
