// SPDX-License-Identifier: GPL-2.0
// The checks of a report (ReportChecks), and that every format renders the
// same verdict: the cases of issue 28.
#include "report/report_checks.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "report/html_report.h"
#include "report/report_formats.h"
#include "testing/report_fixtures.h"
#include "testing/synthetic_report.h"

namespace cpuhp {
namespace {

using nlohmann::json;

// `cpuhp-stress run --backend sim` with no other option, as its report
// records it: "iterations": "auto", stopped at its 1000, a soak section with
// the watchdog on and nothing stuck.
json DefaultRun(const SyntheticSpec& spec = SyntheticSpec{}) {
  json r = SyntheticReport(spec);
  r["config"]["iterations"] = "auto";
  r["config"]["duration"] = "0";
  r["config"]["pattern"] = "roundrobin";
  r["run"]["stop_reason"] = "iterations";
  r["soak"] = {{"stuck_operations", json::array()},
               {"stuck_operations_dropped", 0},
               {"stuck_timeout_ns", 30000000000ull}};
  return r;
}

// What the sim's stalled writes left in a report (a run with stuck_timeout
// 1s, sim stall_every 20, stall_ns 2.5 s): two records, stacks as read.
json StuckRun() {
  json r = DefaultRun();
  const std::string stack =
      "[<0>] hrtimer_nanosleep+0xb5/0x130\n[<0>] common_nsleep_timens+0x3d/0xa0\n"
      "[<0>] __x64_sys_clock_nanosleep+0xde/0x150\n[<0>] do_syscall_64+0x71/0x290\n"
      "[<0>] entry_SYSCALL_64_after_hwframe+0x76/0x7e\n";
  r["soak"]["stuck_timeout_ns"] = 1000000000u;
  r["soak"]["stuck_operations"] = {{{"cpu", 3},
                                    {"dir", "online"},
                                    {"index", 19},
                                    {"timeout_ns", 1000000000u},
                                    {"detected_after_ns", 1015174392u},
                                    {"returned_after_ns", 2574630323u},
                                    {"hotplug_state", 83},
                                    {"hotplug_state_name", "cpu:bringup"},
                                    {"stack", stack}},
                                   {{"cpu", 6},
                                    {"dir", "online"},
                                    {"index", 39},
                                    {"timeout_ns", 1000000000u},
                                    {"detected_after_ns", 1107780865u},
                                    {"stack_unavailable",
                                     "/proc/9/task/9/stack: no such file: the kernel was built "
                                     "without CONFIG_STACKTRACE"}}};
  return r;
}

// Issue 28 item 4: `run --pattern sweep -n 50` on 8 CPUs stops at its 50
// operations (its target: run_completed passes) inside level 2, after 22
// cycles of 100; levels 4 and 8 never ran.
json IncompleteSweep() {
  json r = DefaultRun();
  r["config"]["pattern"] = "sweep";
  r["config"]["iterations"] = 50;
  r["cpus"]["schedule"] = {{"victim", 7},
                           {"levels", {2, 4, 8}},
                           {"cycles_per_level", 100},
                           {"levels_complete", json::array()},
                           {"levels_missing", {2, 4, 8}}};
  json off = r["directions"]["offline"];
  json on = r["directions"]["online"];
  off["online_cpus"] = 2;
  off["count"] = 22;
  on["online_cpus"] = 1;
  on["count"] = 22;
  r["per_online_count"] = {{"offline", {off}}, {"online", {on}}};
  r["run"]["stop_reason"] = "iterations";
  return r;
}

// A sim fault_sweep with broken_rollback_state 193: each CPU's offline and
// online injection of state 193 left it there, twice (repeats 2).
json FailedRollbackRun(int cpus) {
  json r = DefaultRun();
  r["config"]["pattern"] = "fault_sweep";
  r["run"]["stop_reason"] = "schedule_complete";
  json failures = json::array();
  for (int cpu = 1; cpu <= cpus; cpu++)
    for (const char* dir : {"offline", "online"})
      for (int repeat = 0; repeat < 2; repeat++)
        failures.push_back({{"cpu", cpu},
                            {"direction", dir},
                            {"state", 193},
                            {"name", "mm/vmstat:online"},
                            {"index", failures.size() * 10},
                            {"why", "not rolled back: online 1 -> 1, hotplug/state 236 -> 193"}});
  r["faults"] = {{"status", "ok"},
                 {"totals",
                  {{"injected", 252},
                   {"rolled_back", 182},
                   {"not_rolled_back", failures.size()},
                   {"not_reached", 42},
                   {"unverified", 0}}},
                 {"failures", failures},
                 {"failures_dropped", 0},
                 {"cleared_at_end", true},
                 {"clear_failures", json::array()}};
  return r;
}

// Issue 28 item 1: "iterations": "auto" is the 1000 the run aimed at, not 0.
TEST(ReportChecksTest, TheDefaultRunCompletedAtItsResolvedTarget) {
  const ReportOptions o;
  json r = DefaultRun();
  std::vector<ReportCheck> checks = ReportChecks(r, o);
  ASSERT_NE(FindCheck(checks, "run_completed"), nullptr);
  EXPECT_TRUE(FindCheck(checks, "run_completed")->pass)
      << FindCheck(checks, "run_completed")->message;
  for (const ReportCheck& c : checks)
    EXPECT_TRUE(!c.is_verdict || c.pass) << c.name << ": " << c.message;
  // The same report stopped by a signal did not reach its 1000.
  r["run"]["stop_reason"] = "signal";
  checks = ReportChecks(r, o);
  EXPECT_FALSE(FindCheck(checks, "run_completed")->pass);
  EXPECT_NE(FindCheck(checks, "run_completed")->message.find("not its target: iterations"),
            std::string::npos)
      << FindCheck(checks, "run_completed")->message;
  // "auto" with a duration: the duration is the only target.
  r["config"]["duration"] = "10s";
  r["run"]["stop_reason"] = "duration";
  EXPECT_TRUE(FindCheck(ReportChecks(r, o), "run_completed")->pass);
  r["run"]["stop_reason"] = "iterations";
  EXPECT_FALSE(FindCheck(ReportChecks(r, o), "run_completed")->pass);
  // "auto" with a sweep: the end of its schedule.
  r["config"]["duration"] = "0";
  r["config"]["pattern"] = "sweep";
  r["run"]["stop_reason"] = "schedule_complete";
  EXPECT_TRUE(FindCheck(ReportChecks(r, o), "run_completed")->pass);
  r["run"]["stop_reason"] = "iterations";
  EXPECT_FALSE(FindCheck(ReportChecks(r, o), "run_completed")->pass);
}

// Issue 28 item 2: a stuck write fails a check, which carries what the
// watchdog recorded (CPU, direction, the hotplug state it was in when the
// backend could tell, how long, its stack or why none).
TEST(ReportChecksTest, AStuckWriteFailsItsCheckWithItsStack) {
  const ReportOptions o;
  std::vector<ReportCheck> checks = ReportChecks(DefaultRun(), o);
  ASSERT_NE(FindCheck(checks, "no_stuck_operations"), nullptr);
  EXPECT_TRUE(FindCheck(checks, "no_stuck_operations")->pass);
  checks = ReportChecks(StuckRun(), o);
  const ReportCheck* stuck = FindCheck(checks, "no_stuck_operations");
  ASSERT_NE(stuck, nullptr);
  EXPECT_FALSE(stuck->pass);
  EXPECT_EQ(stuck->value, 2);
  EXPECT_EQ(
      stuck->message,
      "2 sysfs calls not returned after 1.0 s (stuck_timeout); cpu3 online (op 19) in state 83 "
      "(cpu:bringup) stuck for 1.0 s, returned after 2.6 s, kernel stack: "
      "hrtimer_nanosleep+0xb5/0x130 < "
      "common_nsleep_timens+0x3d/0xa0 < __x64_sys_clock_nanosleep+0xde/0x150 < "
      "do_syscall_64+0x71/0x290 < entry_SYSCALL_64_after_hwframe+0x76/0x7e; cpu6 online "
      "(op 39) stuck for 1.1 s, never returned, no kernel stack: /proc/9/task/9/stack: no "
      "such file: the kernel was built without CONFIG_STACKTRACE");
  json off = DefaultRun();
  off["soak"]["stuck_timeout_ns"] = 0;
  checks = ReportChecks(off, o);
  EXPECT_TRUE(FindCheck(checks, "no_stuck_operations")->skipped);
}

// Issue 28 item 8: which rollbacks failed, not only how many; capped.
TEST(ReportChecksTest, FailedRollbacksAreListedAndCapped) {
  const ReportOptions o;
  std::vector<ReportCheck> checks = ReportChecks(FailedRollbackRun(1), o);
  EXPECT_EQ(FindCheck(checks, "faults_rolled_back")->message,
            "4 of 252 injected faults NOT rolled back, 182 rolled back, 42 not reached, 0 "
            "unverified: cpu1 offline state 193 (mm/vmstat:online) x2, cpu1 online state 193 "
            "(mm/vmstat:online) x2");
  json r = FailedRollbackRun(7);  // 28 failures, 14 different
  r["faults"]["failures_dropped"] = 3;
  checks = ReportChecks(r, o);
  const std::string m = FindCheck(checks, "faults_rolled_back")->message;
  EXPECT_NE(m.find(": cpu1 offline state 193 (mm/vmstat:online) x2, cpu1 online"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("cpu5 online state 193 (mm/vmstat:online) x2; and 11 more"),
            std::string::npos)
      << m;  // 10 listed; 4 more kinds x2, and 3 the run did not keep
  EXPECT_EQ(m.find("cpu6"), std::string::npos) << m;
}

// The failed checks of one rendering, by name.
using Names = std::set<std::string>;

Names Matches(const std::string& text, const std::string& pattern) {
  Names out;
  const std::regex re(pattern, std::regex::multiline);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it)
    out.insert((*it)[1]);
  return out;
}

std::map<std::string, Names> FailedByFormat(const json& r, const ReportOptions& o) {
  std::map<std::string, Names> by;
  by["text"] = Matches(FormatText(r, o), R"(^  FAIL (\S+))");
  by["markdown"] = Matches(FormatMarkdown(r, o), R"(^- \*\*FAIL\*\* `([^`]+)`)");
  by["junit"] =
      Matches(FormatJunit(r, o), R"re(<testcase [^>]*name="([^"]+)"[^>]*>\n\s*<failure )re");
  Names& kcidb = by["kcidb"];
  const json kcidb_json = FormatKcidb(r, o);
  for (const json& t : kcidb_json["tests"])
    if (t["status"] == "FAIL")
      kcidb.insert(t["path"].get<std::string>().substr(std::string("cpuhp_stress.").size()));
  // A sim report's cases are sim.<check>.
  by["lava"] = Matches(FormatLava(r, o), R"(^lava-test-case (?:sim\.)?(\S+) --result fail)");
  by["html"] = Matches(FormatHtml(r, o), R"(<tr><td>([^<]+)</td><td class="fail">FAIL</td>)");
  Names decided;
  for (const ReportCheck& c : ReportChecks(r, o))
    if (c.is_verdict && !c.pass && !c.skipped)
      decided.insert(c.name);
  by["ReportChecks"] = decided;
  return by;
}

// Every rendering, whitespace folded (text and Markdown wrap at 80).
std::map<std::string, std::string> Renderings(const json& r, const ReportOptions& o) {
  auto fold = [](const std::string& s) { return std::regex_replace(s, std::regex(R"(\s+)"), " "); };
  return {{"text", fold(FormatText(r, o))}, {"markdown", fold(FormatMarkdown(r, o))},
          {"junit", FormatJunit(r, o)},     {"kcidb", FormatKcidb(r, o).dump()},
          {"lava", FormatLava(r, o)},       {"html", FormatHtml(r, o)}};
}

struct Case {
  std::string name;
  json report;
  Names failed;
};

std::vector<Case> Cases() {
  std::vector<Case> cases;
  cases.push_back({"default run", DefaultRun(), {}});
  cases.push_back({"stuck write", StuckRun(), {"no_stuck_operations"}});
  json signal = DefaultRun();
  signal["run"]["stop_reason"] = "signal";
  signal["run"]["stop_message"] =
      "SIGINT after 412 of 1000 operations (Ctrl-C on the terminal, or kill -INT from a test "
      "harness that gave up waiting)";
  cases.push_back({"interrupted", signal, {"run_completed"}});
  json interim = DefaultRun();
  interim["interim"] = true;
  interim["run"]["stop_reason"] = nullptr;
  interim["restore"] = nullptr;
  cases.push_back({"interim", interim, {"run_completed", "final_report", "cpus_restored"}});
  cases.push_back({"failed rollback", FailedRollbackRun(7), {"faults_rolled_back"}});
  cases.push_back({"incomplete sweep", IncompleteSweep(), {"sweep_complete"}});
  SyntheticSpec failing;
  failing.failed = 3;
  cases.push_back({"failed writes", DefaultRun(failing), {"no_operation_errors"}});
  json warned = DefaultRun();
  warned["timing_sources"]["kmsg_health"] =
      LoadFixture("report-real-cpu1.json")["timing_sources"]["kmsg_health"];
  warned["host"]["cpu_model"] =
      "AMD EPYC 9R14 96-Core Processor (a model name long enough to need wrapping)";
  cases.push_back({"kernel warning", warned, {"no_kernel_warnings"}});
  return cases;
}

// Issue 28, the first "What to build" bullet: the same reports fail the same
// checks, by name, in every format; the default run fails none.
TEST(ReportChecksTest, EveryFormatFailsTheSameChecks) {
  const ReportOptions o;
  for (const Case& c : Cases())
    for (const auto& [format, failed] : FailedByFormat(c.report, o))
      EXPECT_EQ(failed, c.failed) << c.name << " in " << format;
}

// Item 4: a sweep cut short fails sweep_complete, naming the level it cut
// short (with its operations against the target) and those it never ran;
// a complete one passes.
TEST(ReportChecksTest, AnIncompleteSweepNamesItsShortAndMissingLevels) {
  const ReportOptions o;
  json r = IncompleteSweep();
  std::vector<ReportCheck> checks = ReportChecks(r, o);
  EXPECT_TRUE(FindCheck(checks, "run_completed")->pass);  // -n 50 was its target
  const ReportCheck* sweep = FindCheck(checks, "sweep_complete");
  ASSERT_NE(sweep, nullptr);
  EXPECT_FALSE(sweep->pass);
  EXPECT_EQ(sweep->message,
            "0 of 3 levels (2, 4, 8) measured fully; level 2 short (44 of 200 operations); "
            "levels 4, 8 not measured");
  for (const auto& [format, text] : Renderings(r, o))
    EXPECT_NE(text.find("level 2 short (44 of 200 operations)"), std::string::npos) << format;
  r["cpus"]["schedule"]["levels_complete"] = {2, 4, 8};
  r["cpus"]["schedule"]["levels_missing"] = json::array();
  checks = ReportChecks(r, o);
  sweep = FindCheck(checks, "sweep_complete");
  ASSERT_NE(sweep, nullptr);
  EXPECT_TRUE(sweep->pass) << sweep->message;
  EXPECT_EQ(FindCheck(ReportChecks(DefaultRun(), o), "sweep_complete"), nullptr);
}

// Items 2 and 8: what failed is in every rendering, not only its count.
TEST(ReportChecksTest, EveryFormatSaysWhatWasStuckAndWhichRollbacksFailed) {
  const ReportOptions o;
  for (const auto& [format, text] : Renderings(StuckRun(), o)) {
    EXPECT_NE(text.find("cpu3 online (op 19) in state 83 (cpu:bringup) stuck for 1.0 s"),
              std::string::npos)
        << format;
    EXPECT_NE(text.find("hrtimer_nanosleep+0xb5/0x130"), std::string::npos) << format;
    EXPECT_NE(text.find("built without CONFIG_STACKTRACE"), std::string::npos) << format;
  }
  for (const auto& [format, text] : Renderings(FailedRollbackRun(7), o)) {
    EXPECT_NE(text.find("cpu1 offline state 193 (mm/vmstat:online) x2"), std::string::npos)
        << format;
    EXPECT_NE(text.find("and 8 more"), std::string::npos) << format;
  }
}

// Item 9: `report` text and Markdown fit 80 columns (mail, terminals).
TEST(ReportChecksTest, TextAndMarkdownFit80Columns) {
  const ReportOptions o;
  for (const Case& c : Cases())
    for (const auto& [format, text] :
         {std::pair{"text", FormatText(c.report, o)}, {"markdown", FormatMarkdown(c.report, o)}}) {
      std::istringstream in(text);
      std::string line;
      int n = 0;
      while (std::getline(in, line)) {
        n++;
        EXPECT_LE(line.size(), 80u) << c.name << " " << format << " line " << n << ": " << line;
      }
    }
}

}  // namespace
}  // namespace cpuhp
