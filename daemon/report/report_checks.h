// SPDX-License-Identifier: GPL-2.0
// A report's checks, decided in one place (ReportChecks) for every format
// (report/report_formats.h, report/html_report.h).
//
// Checks (each one JUnit test case, one KCIDB test, one LAVA test case). A
// run that exited 3 (finished with failures) or was stopped early fails at
// least one of them:
//   run_completed        the run stopped at one of its targets (iterations,
//                        duration, end of its sweep; a signal only for a run
//                        given none): not a signal, error, fatal error or lost
//                        CPU before that, not an interim snapshot
//   sweep_complete       with a sweep: every level measured fully
//                        (2 * cycles_per_level operations); the levels
//                        short or not measured named
//   final_report         not an interim report
//   faults_rolled_back   with a faults section: no injected fault left
//                        NOT rolled back (skipped when injection was
//                        unavailable, with the reason)
//                        (the failed ones listed: CPU, direction, state)
//   fail_cleared         with a faults section: no hotplug/fail left armed
//   no_operation_errors  no write(2) failed and every CPU read back right
//   no_kernel_warnings   when the report has timing_sources.kmsg_health: no
//                        kernel warning, oops, BUG or lockup counted there;
//                        skipped (JUnit <skipped>, KCIDB SKIP, LAVA skip)
//                        with the reason when that source was unavailable
//   no_stuck_operations  with a soak section: no write outlived
//                        stuck_timeout (each listed with its kernel stack);
//                        skipped when the watchdog was off
//   cpus_restored        the online mask was restored at the end
//   <dir>_<stat>         a measurement (p50, p99, max, ms); it fails only
//                        when --limit sets a ceiling it exceeds
//   compare_<metric>     with --baseline: one per compared metric (p50, p99
//                        of each direction and online-count level), failing
//                        when it regressed beyond its threshold
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/compare.h"

namespace cpuhp {

struct ReportCheck {
  std::string name;  // no spaces: [A-Za-z0-9_.-]
  bool pass = true;
  bool has_measurement = false;
  double value = 0;
  std::string unit;        // "ms", "ops", "ratio"
  std::string message;     // why it failed, or what was measured
  bool is_verdict = true;  // false: a pure measurement (KCIDB status DONE)
  bool skipped = false;    // could not be checked here (its source unavailable): says why

  void Measured(double v, std::string u) {
    has_measurement = true;
    value = v;
    unit = std::move(u);
  }
};

struct ReportOptions {
  std::string report_path;
  // "offline.p99" -> ceiling in ms.
  std::map<std::string, double> limits_ms;
  // With a baseline, compare verdicts become checks.
  std::optional<nlohmann::json> baseline;
  std::string baseline_path;
  CompareOptions compare;
  // The comparison with baseline, when the caller made it already
  // (ReportCommand: once per command, however many times the checks are
  // rendered); ReportChecks computes it otherwise.
  std::shared_ptr<const Comparison> comparison;
  std::string kcidb_origin = "cpuhp_stress";
  std::string kcidb_build_id;  // default "<origin>:<kernel release>", "<origin>:sim.<...>" for sim
};

std::vector<ReportCheck> ReportChecks(const nlohmann::json& report, const ReportOptions& opts);

// A check or metric name as a test-case id: [A-Za-z0-9_.-], others as _.
std::string SafeName(std::string s);

}  // namespace cpuhp
