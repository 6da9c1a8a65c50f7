// SPDX-License-Identifier: GPL-2.0
#include "report/report_formats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

#include "report/compare.h"
#include "report/html_report.h"
#include "testing/report_fixtures.h"
#include "testing/synthetic_report.h"

namespace cpuhp {
namespace {

using nlohmann::json;

TEST(ReportFormatsTest, ChecksOfACleanRun) {
  ReportOptions opts;
  std::vector<ReportCheck> checks = ReportChecks(SyntheticReport(SyntheticSpec{}), opts);
  ASSERT_NE(FindCheck(checks, "no_operation_errors"), nullptr);
  EXPECT_TRUE(FindCheck(checks, "no_operation_errors")->pass);
  EXPECT_TRUE(FindCheck(checks, "cpus_restored")->pass);
  EXPECT_EQ(FindCheck(checks, "no_kernel_warnings"), nullptr);  // no health section
  const ReportCheck* p50 = FindCheck(checks, "offline_p50");
  ASSERT_NE(p50, nullptr);
  EXPECT_FALSE(p50->is_verdict);
  EXPECT_EQ(p50->unit, "ms");
  // offline at 2..4 online: 2.3 .. 2.6 ms, median near 2.45 ms
  EXPECT_NEAR(p50->value, 2.45, 0.1);
}

TEST(ReportFormatsTest, HowTheRunEnded) {
  ReportOptions o;
  json r = SyntheticReport(SyntheticSpec{});
  EXPECT_TRUE(FindCheck(ReportChecks(r, o), "run_completed")->pass);
  EXPECT_TRUE(FindCheck(ReportChecks(r, o), "final_report")->pass);
  EXPECT_EQ(FindCheck(ReportChecks(r, o), "faults_rolled_back"), nullptr);  // no faults section
  for (const char* reason : {"signal", "error", "fatal"}) {
    r["run"]["stop_reason"] = reason;
    r["run"]["stop_message"] = "cpu2 lost: 3 online writes in a row left it offline";
    const std::vector<ReportCheck> checks = ReportChecks(r, o);
    const ReportCheck* c = FindCheck(checks, "run_completed");
    EXPECT_FALSE(c->pass) << reason;
    EXPECT_NE(c->message.find(std::string("stopped by ") + reason + ": cpu2 lost"),
              std::string::npos)
        << c->message;
    EXPECT_NE(FormatLava(r, o).find("lava-test-case sim.run_completed --result fail"),
              std::string::npos);
  }
  // A run given no limit ends by a signal (systemctl stop): its target.
  r["config"]["iterations"] = 0;
  r["run"]["stop_reason"] = "signal";
  EXPECT_TRUE(FindCheck(ReportChecks(r, o), "run_completed")->pass);
  r["config"]["duration"] = "24h";
  EXPECT_FALSE(FindCheck(ReportChecks(r, o), "run_completed")->pass);
  r["run"]["stop_reason"] = "duration";
  EXPECT_TRUE(FindCheck(ReportChecks(r, o), "run_completed")->pass);
  // An interim report: no stop reason, no restore.
  r["interim"] = true;
  r["run"]["stop_reason"] = nullptr;
  EXPECT_FALSE(FindCheck(ReportChecks(r, o), "final_report")->pass);
  EXPECT_FALSE(FindCheck(ReportChecks(r, o), "run_completed")->pass);
}

TEST(ReportFormatsTest, FaultChecks) {
  ReportOptions o;
  json r = SyntheticReport(SyntheticSpec{});
  r["faults"] = {{"status", "ok"},
                 {"totals",
                  {{"injected", 40},
                   {"rolled_back", 30},
                   {"not_rolled_back", 8},
                   {"not_reached", 2},
                   {"unverified", 0}}},
                 {"cleared_at_end", true},
                 {"clear_failures", json::array()}};
  const std::vector<ReportCheck> checks = ReportChecks(r, o);
  const ReportCheck* rolled = FindCheck(checks, "faults_rolled_back");
  ASSERT_NE(rolled, nullptr);
  EXPECT_FALSE(rolled->pass);
  EXPECT_EQ(rolled->value, 8);
  EXPECT_NE(rolled->message.find("8 of 40 injected faults NOT rolled back"), std::string::npos);
  EXPECT_TRUE(FindCheck(ReportChecks(r, o), "fail_cleared")->pass);
  std::string junit = FormatJunit(r, o);
  EXPECT_NE(junit.find("failures=\"1\""), std::string::npos) << junit;
  r["faults"]["totals"]["not_rolled_back"] = 0;
  EXPECT_TRUE(FindCheck(ReportChecks(r, o), "faults_rolled_back")->pass);
  r["faults"]["cleared_at_end"] = false;
  r["faults"]["clear_failures"] = {"cpu1/hotplug/fail: write -1: EBUSY"};
  const std::vector<ReportCheck> checks2 = ReportChecks(r, o);
  const ReportCheck* cleared = FindCheck(checks2, "fail_cleared");
  EXPECT_FALSE(cleared->pass);
  EXPECT_NE(cleared->message.find("cpu1/hotplug/fail: write -1: EBUSY"), std::string::npos);
  r["faults"] = {{"status", "unavailable"}, {"reason", "no hotplug/fail"}};
  EXPECT_TRUE(FindCheck(ReportChecks(r, o), "faults_rolled_back")->skipped);
}

// Issue 15 part 5: kernel log text in a check's message is escaped for the
// terminal (ESC, DEL) and for Markdown tables (| ends a cell, <TASK> is raw
// HTML); DEL is invalid in HTML.
TEST(ReportFormatsTest, KernelLogTextIsEscaped) {
  json r = SyntheticReport(SyntheticSpec{});
  r["timing_sources"]["kmsg_health"] =
      LoadFixture("report-real-cpu1.json")["timing_sources"]["kmsg_health"];
  const std::string evil = "WARNING: a|b <TASK> \x1b[2J\x7f end";
  r["timing_sources"]["kmsg_health"]["first_event"]["message"] = evil;
  ReportOptions o;
  const std::string text = FormatText(r, o);
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_EQ(text.find('\x7f'), std::string::npos);
  EXPECT_NE(text.find("a|b <TASK> \\x1b[2J\\x7f end"), std::string::npos) << text;
  const std::string md = FormatMarkdown(r, o);
  EXPECT_NE(md.find("a\\|b &lt;TASK&gt; \\x1b\\[2J\\x7f end"), std::string::npos) << md;
  EXPECT_EQ(md.find("<TASK>"), std::string::npos);
  EXPECT_EQ(md.find('\x1b'), std::string::npos);
  EXPECT_EQ(FormatJunit(r, o).find('\x7f'), std::string::npos);
}

// Issue 29 item 9: every report-derived string on the Markdown kernel line is
// escaped: no raw HTML, no emphasis, link or code-span markers.
TEST(ReportFormatsTest, MarkdownEscapesReportStrings) {
  json r = SyntheticReport(SyntheticSpec{});
  r["host"]["kernel_release"] = "6.1` <script>x</script> `";
  r["host"]["cpu_model"] = "<script>alert(1)</script> *bold* [a](http://x)";
  r["cpus"]["selected"] = "1-3<img src=x onerror=y>_z_";
  ReportOptions o;
  std::string md = FormatMarkdown(r, o);
  std::replace(md.begin(), md.end(), '\n', ' ');  // the line wraps at 80 columns
  EXPECT_EQ(md.find("<img"), std::string::npos) << md;
  EXPECT_EQ(md.find("<script>"), std::string::npos) << md;
  EXPECT_NE(md.find("host's 6.1\\` &lt;script&gt;x&lt;/script&gt; \\`, "
                    "&lt;script&gt;alert(1)&lt;/script&gt; \\*bold\\* \\[a\\](http://x)), "
                    "CPUs 1-3&lt;img src=x onerror=y&gt;\\_z\\_,"),
            std::string::npos)
      << md;
}

TEST(ReportFormatsTest, FailuresLimitsHealthAndBaseline) {
  SyntheticSpec s;
  s.failed = 2;
  s.restore_ok = false;
  json r = SyntheticReport(s);
  // The kernel log section of a real run (one injected WARNING line).
  r["timing_sources"]["kmsg_health"] =
      LoadFixture("report-real-cpu1.json")["timing_sources"]["kmsg_health"];
  ReportOptions o;
  std::string err;
  ASSERT_TRUE(ParseLimit("offline.p99=1ms", &o, &err)) << err;
  ASSERT_TRUE(ParseLimit("online.p50=100ms", &o, &err)) << err;
  EXPECT_FALSE(ParseLimit("sideways.p99=1ms", &o, &err));
  EXPECT_FALSE(ParseLimit("offline.p99=fast", &o, &err));
  {  // A bare statistic, as compare's --threshold p99=, limits both directions.
    ReportOptions both;
    ASSERT_TRUE(ParseLimit("max=2ms", &both, &err)) << err;
    EXPECT_EQ(both.limits_ms,
              (std::map<std::string, double>{{"offline.max", 2}, {"online.max", 2}}));
    EXPECT_FALSE(ParseLimit("p77=2ms", &both, &err));
  }
  SyntheticSpec faster;
  faster.online_scale = 0.5;
  o.baseline = SyntheticReport(faster);  // the candidate r is 2x slower online
  std::vector<ReportCheck> checks = ReportChecks(r, o);
  EXPECT_FALSE(FindCheck(checks, "no_operation_errors")->pass);
  EXPECT_EQ(FindCheck(checks, "no_operation_errors")->value, 2);
  EXPECT_FALSE(FindCheck(checks, "cpus_restored")->pass);
  EXPECT_FALSE(FindCheck(checks, "no_kernel_warnings")->pass);
  EXPECT_FALSE(FindCheck(checks, "offline_p99")->pass);
  EXPECT_TRUE(FindCheck(checks, "online_p50")->pass);
  const ReportCheck* cmp = FindCheck(checks, "compare_online.p50");
  ASSERT_NE(cmp, nullptr);
  EXPECT_FALSE(cmp->pass);
  EXPECT_NEAR(cmp->value, 2.0, 0.1);
  EXPECT_TRUE(FindCheck(checks, "compare_offline.p50")->pass);

  // LAVA: every line is a lava-test-case call with a spaceless name, a
  // failed one after an echo of why (one shell-quoted line).
  std::istringstream lava(FormatLava(r, o));
  std::regex line_re(
      R"(^lava-test-case [A-Za-z0-9_.-]+ --result (pass|fail|skip)( --measurement -?[0-9.e+-]+ --units [A-Za-z0-9_.-]+)?$)");
  std::regex echo_re(R"(^echo 'FAIL [A-Za-z0-9_.-]+: ([^']|'\\'')*'$)");
  std::string line, echoed;
  int lines = 0, fails = 0;
  while (std::getline(lava, line)) {
    if (line.rfind("echo ", 0) == 0) {
      EXPECT_TRUE(std::regex_match(line, echo_re)) << line;
      echoed = line.substr(11, line.find(':') - 11);
      continue;
    }
    EXPECT_TRUE(std::regex_match(line, line_re)) << line;
    lines++;
    const bool fail = line.find("--result fail") != std::string::npos;
    fails += fail;
    EXPECT_EQ(echoed, fail ? line.substr(15, line.find(' ', 15) - 15) : "") << line;
    echoed.clear();
  }
  EXPECT_EQ(lines, static_cast<int>(checks.size()));
  EXPECT_GE(fails, 5);

  // KCIDB: v5 with the fields a test needs.
  json k = FormatKcidb(r, o);
  EXPECT_EQ(k["version"]["major"], 5);
  ASSERT_EQ(k["tests"].size(), checks.size());
  for (const json& t : k["tests"]) {
    EXPECT_TRUE(t["id"].get<std::string>().rfind("cpuhp_stress:", 0) == 0);
    EXPECT_TRUE(t.contains("build_id") && t.contains("origin") && t.contains("path"));
    EXPECT_TRUE(std::regex_match(t["path"].get<std::string>(),
                                 std::regex(R"(^[a-zA-Z0-9_-]+(\.[a-zA-Z0-9_-]+)*$)")))
        << t["path"];
  }

  // JUnit counts the failures.
  std::string junit = FormatJunit(r, o);
  EXPECT_NE(junit.find("failures=\"" + std::to_string(fails) + "\""), std::string::npos);
}

// Issue 28 item 7: a sim report never passes for a measurement of the host's
// kernel in any format; the real run's renderings are as before.
TEST(ReportFormatsTest, ASimReportIsMarkedInEveryFormat) {
  ReportOptions o;
  json sim = SyntheticReport(SyntheticSpec{});  // backend sim: clock "simulated"
  sim["run"]["simulated_elapsed_ns"] = 27544987000000ull;
  json real = sim;
  real["run"]["clock"] = "CLOCK_MONOTONIC";
  real["run"]["simulated_elapsed_ns"] = nullptr;

  // The kernel line: text, Markdown, HTML.
  EXPECT_NE(FormatText(sim, o).find("kernel SIMULATED (the model ran on the host's 6.1.0-test "
                                    "x86_64), CPUs 1-3"),
            std::string::npos)
      << FormatText(sim, o);
  EXPECT_NE(FormatText(real, o).find("kernel 6.1.0-test x86_64, CPUs 1-3"), std::string::npos);
  const std::string md = FormatMarkdown(sim, o);
  EXPECT_NE(md.find("Kernel **SIMULATED** (the model ran on the host's 6.1.0-test, Test CPU)"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("Kernel 6.1.0-test"), std::string::npos) << md;
  EXPECT_NE(FormatMarkdown(real, o).find("Kernel 6.1.0-test on Test CPU, CPUs 1-3"),
            std::string::npos);
  // The HTML header: the model's kernel, and the simulated time the
  // operations took (not the loop's 10 s of wall time).
  const std::string html = FormatHtml(sim, o);
  EXPECT_NE(html.find("<p class=\"meta\">Kernel SIMULATED (the model ran on the host&#39;s "
                      "6.1.0-test, Test CPU), CPUs 1-3"),
            std::string::npos)
      << html.substr(0, 1500);
  EXPECT_NE(html.find(" operations (0 failed) in 27544.987 s simulated (10.0 s of wall time), "),
            std::string::npos);
  EXPECT_NE(FormatHtml(real, o).find(" operations (0 failed) in 10.0 s, "), std::string::npos);

  // KCIDB: the default build id says sim, and every test's misc says so.
  const json k = FormatKcidb(sim, o);
  ASSERT_FALSE(k["tests"].empty());
  for (const json& t : k["tests"]) {
    EXPECT_EQ(t["build_id"], "cpuhp_stress:sim.6.1.0-test");
    EXPECT_EQ(t["misc"]["simulated"], true);
    EXPECT_EQ(t["environment"]["misc"]["simulated"], true);
  }
  const json real_kcidb = FormatKcidb(real, o);
  for (const json& t : real_kcidb["tests"]) {
    EXPECT_EQ(t["build_id"], "cpuhp_stress:6.1.0-test");
    EXPECT_EQ(t["misc"]["simulated"], false);
  }
  o.kcidb_build_id = "lab:my-build";  // a build id given is kept as given
  EXPECT_EQ(FormatKcidb(sim, o)["tests"][0]["build_id"], "lab:my-build");

  // LAVA: every case of a sim report, measurements first of all, is
  // sim.<check>; a real report's are not.
  std::istringstream lava(FormatLava(sim, o));
  int cases = 0;
  for (std::string line; std::getline(lava, line);)
    if (line.rfind("lava-test-case ", 0) == 0) {
      EXPECT_EQ(line.rfind("lava-test-case sim.", 0), 0u) << line;
      cases++;
    }
  EXPECT_EQ(cases, static_cast<int>(ReportChecks(sim, o).size()));
  EXPECT_NE(FormatLava(sim, o).find("lava-test-case sim.offline_p50 --result pass --measurement "),
            std::string::npos);
  EXPECT_NE(FormatLava(real, o).find("lava-test-case offline_p50 --result pass --measurement "),
            std::string::npos);
  EXPECT_EQ(FormatLava(real, o).find("sim."), std::string::npos);
  EXPECT_NE(FormatJunit(sim, o).find("<property name=\"simulated\" value=\"true\"/>"),
            std::string::npos);
}

// A real cpu1 run with an injected "WARNING:" kernel log line.
TEST(ReportFormatsTest, KernelWarningOfARealRunFailsItsCheck) {
  json r = LoadFixture("report-real-cpu1.json");
  const ReportOptions o;
  const json& first = r["timing_sources"]["kmsg_health"]["first_event"];
  ASSERT_TRUE(first.is_object());
  std::vector<ReportCheck> checks = ReportChecks(r, o);
  const ReportCheck* warn = FindCheck(checks, "no_kernel_warnings");
  ASSERT_NE(warn, nullptr);
  EXPECT_FALSE(warn->pass);
  EXPECT_FALSE(warn->skipped);
  EXPECT_EQ(warn->value, 1);
  EXPECT_NE(warn->message.find("warning 1"), std::string::npos) << warn->message;
  EXPECT_NE(warn->message.find("first: warning at operation " +
                               std::to_string(first["op_index"].get<uint64_t>()) + ": " +
                               first["message"].get<std::string>()),
            std::string::npos)
      << warn->message;
  std::string junit = FormatJunit(r, o);
  EXPECT_NE(junit.find("<failure message=\"1 problem line in "), std::string::npos) << junit;
  EXPECT_NE(FormatLava(r, o).find("lava-test-case no_kernel_warnings --result fail "
                                  "--measurement 1 --units warnings\n"),
            std::string::npos);
  // The same run with a quiet kernel log passes.
  for (auto& [kind, n] : r["timing_sources"]["kmsg_health"]["counts"].items())
    n = 0;
  EXPECT_TRUE(FindCheck(ReportChecks(r, o), "no_kernel_warnings")->pass);
}

// kmsg_health unavailable: the check is skipped with the reason in every
// format, never a pass it did not measure; absent: no check at all.
TEST(ReportFormatsTest, LostTracepointEventsFailTheirCheck) {
  json r = SyntheticReport(SyntheticSpec{});
  ReportOptions o;
  std::vector<ReportCheck> checks = ReportChecks(r, o);
  EXPECT_EQ(FindCheck(checks, "tracepoints_no_lost_events"), nullptr);  // no section
  r["timing_sources"]["tracepoints"] = {
      {"status", "ok"},
      {"lost_events", {{"total", 0}, {"overrun", 0}, {"dropped", 0}, {"lost_markers", 0}}}};
  checks = ReportChecks(r, o);
  EXPECT_TRUE(FindCheck(checks, "tracepoints_no_lost_events")->pass);
  r["timing_sources"]["tracepoints"]["lost_events"] = {
      {"total", 120}, {"overrun", 100}, {"dropped", 0}, {"lost_markers", 20}};
  checks = ReportChecks(r, o);
  const ReportCheck* lost = FindCheck(checks, "tracepoints_no_lost_events");
  ASSERT_NE(lost, nullptr);
  EXPECT_FALSE(lost->pass);
  EXPECT_EQ(lost->value, 120);
  EXPECT_NE(lost->message.find("overrun 100"), std::string::npos) << lost->message;
  r["timing_sources"]["tracepoints"] = {{"status", "unavailable"}, {"reason", "no tracefs"}};
  checks = ReportChecks(r, o);  // Find points into it: keep it alive
  lost = FindCheck(checks, "tracepoints_no_lost_events");
  ASSERT_NE(lost, nullptr);
  EXPECT_TRUE(lost->skipped);  // never a pass it did not measure
  EXPECT_EQ(lost->message, "tracepoints unavailable: no tracefs");
}

TEST(ReportFormatsTest, UnavailableKernelLogIsSkippedNotPassed) {
  json r = LoadFixture("report-real-cpu1.json");
  r["timing_sources"]["kmsg_health"] = {{"status", "unavailable"},
                                        {"reason", "/dev/kmsg: Permission denied"}};
  ReportOptions o;
  std::vector<ReportCheck> checks = ReportChecks(r, o);
  const ReportCheck* warn = FindCheck(checks, "no_kernel_warnings");
  ASSERT_NE(warn, nullptr);
  EXPECT_TRUE(warn->skipped);
  std::string junit = FormatJunit(r, o);
  EXPECT_NE(junit.find("skipped=\"1\""), std::string::npos);
  EXPECT_NE(junit.find("<skipped message=\"kernel log health unavailable: /dev/kmsg: Permission "
                       "denied\"/>"),
            std::string::npos)
      << junit;
  EXPECT_NE(FormatLava(r, o).find("lava-test-case no_kernel_warnings --result skip\n"),
            std::string::npos);
  bool kcidb_skip = false;
  const json kcidb = FormatKcidb(r, o);
  for (const json& t : kcidb["tests"])
    kcidb_skip |= t["path"] == "cpuhp_stress.no_kernel_warnings" && t["status"] == "SKIP";
  EXPECT_TRUE(kcidb_skip);
  EXPECT_NE(FormatText(r, o).find("skip no_kernel_warnings"), std::string::npos);
  r["timing_sources"].erase("kmsg_health");
  EXPECT_EQ(FindCheck(ReportChecks(r, o), "no_kernel_warnings"), nullptr);
}

// Issue 15 part 4: `report --baseline` compares once per command (each
// format and the exit code read the same comparison; it cost 3.6 s against
// 1.5 s when made twice).
TEST(ReportCommandTest, BaselineIsComparedOncePerCommand) {
  const std::string path = std::string(CPUHP_SOURCE_DIR) + "/tests/fixtures/report-real-cpu1.json";
  std::ifstream in(path);
  const nlohmann::json base = nlohmann::json::parse(in);
  std::FILE* sink = std::fopen("/dev/null", "w");
  ASSERT_NE(sink, nullptr);
  for (const char* format : {"text", "markdown", "junit", "kcidb", "lava", "html"}) {
    ReportOptions o;
    o.baseline = base;
    o.baseline_path = path;
    const uint64_t before = CompareCalls();
    const int rc = ReportCommand(path, format, "-", o, sink);
    EXPECT_NE(rc, 2) << format;
    EXPECT_EQ(CompareCalls() - before, 1u) << format;
  }
  std::fclose(sink);
}

}  // namespace
}  // namespace cpuhp
