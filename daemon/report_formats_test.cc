// SPDX-License-Identifier: GPL-2.0
#include "report_formats.h"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "html_report.h"
#include "synthetic_report.h"

namespace cpuhp {
namespace {

using nlohmann::json;

const ReportCheck* Find(const std::vector<ReportCheck>& checks, const std::string& name) {
  for (const ReportCheck& c : checks)
    if (c.name == name)
      return &c;
  return nullptr;
}

TEST(ReportFormatsTest, ChecksOfACleanRun) {
  ReportOptions opts;
  std::vector<ReportCheck> checks = ReportChecks(SyntheticReport(SyntheticSpec{}), opts);
  ASSERT_NE(Find(checks, "no_operation_errors"), nullptr);
  EXPECT_TRUE(Find(checks, "no_operation_errors")->pass);
  EXPECT_TRUE(Find(checks, "cpus_restored")->pass);
  EXPECT_EQ(Find(checks, "no_kernel_warnings"), nullptr);  // no health section
  const ReportCheck* p50 = Find(checks, "offline_p50");
  ASSERT_NE(p50, nullptr);
  EXPECT_FALSE(p50->is_verdict);
  EXPECT_EQ(p50->unit, "ms");
  // offline at 2..4 online: 2.3 .. 2.6 ms, median near 2.45 ms
  EXPECT_NEAR(p50->value, 2.45, 0.1);
}

TEST(ReportFormatsTest, FailuresLimitsHealthAndBaseline) {
  SyntheticSpec s;
  s.failed = 2;
  s.restore_ok = false;
  json r = SyntheticReport(s);
  r["timing_sources"]["kmsg_health"] = {
      {"status", "ok"}, {"counts", {{"warning", 1}, {"oops", 0}, {"rcu_stall", 0}}}};
  ReportOptions o;
  std::string err;
  ASSERT_TRUE(ParseLimit("offline.p99=1ms", &o, &err)) << err;
  ASSERT_TRUE(ParseLimit("online.p50=100ms", &o, &err)) << err;
  EXPECT_FALSE(ParseLimit("sideways.p99=1ms", &o, &err));
  EXPECT_FALSE(ParseLimit("offline.p99=fast", &o, &err));
  SyntheticSpec faster;
  faster.online_scale = 0.5;
  o.baseline = SyntheticReport(faster);  // the candidate r is 2x slower online
  std::vector<ReportCheck> checks = ReportChecks(r, o);
  EXPECT_FALSE(Find(checks, "no_operation_errors")->pass);
  EXPECT_EQ(Find(checks, "no_operation_errors")->value, 2);
  EXPECT_FALSE(Find(checks, "cpus_restored")->pass);
  EXPECT_FALSE(Find(checks, "no_kernel_warnings")->pass);
  EXPECT_FALSE(Find(checks, "offline_p99")->pass);
  EXPECT_TRUE(Find(checks, "online_p50")->pass);
  const ReportCheck* cmp = Find(checks, "compare_online.p50");
  ASSERT_NE(cmp, nullptr);
  EXPECT_FALSE(cmp->pass);
  EXPECT_NEAR(cmp->value, 2.0, 0.1);
  EXPECT_TRUE(Find(checks, "compare_offline.p50")->pass);

  // LAVA: every line is a lava-test-case call with a spaceless name.
  std::istringstream lava(FormatLava(r, o));
  std::regex line_re(
      R"(^lava-test-case [A-Za-z0-9_.-]+ --result (pass|fail)( --measurement -?[0-9.e+-]+ --units [A-Za-z0-9_.-]+)?$)");
  std::string line;
  int lines = 0, fails = 0;
  while (std::getline(lava, line)) {
    EXPECT_TRUE(std::regex_match(line, line_re)) << line;
    lines++;
    fails += line.find("--result fail") != std::string::npos;
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

TEST(ReportFormatsTest, HtmlCarriesTheChartsData) {
  json r = SyntheticReport(SyntheticSpec{});
  r["kernel_states"] = {{{"name", "CPUHP_AP_ONLINE_DYN"}, {"total_ns", 5000000}},
                        {{"name", "CPUHP_TEARDOWN_CPU"}, {"total_ns", 9000000}}};
  r["health"] = {{"events", {{{"message", "WARNING: at kernel/cpu.c"}, {"op_index", 1500}}}}};
  r["disturbance"] = {{"status", "ok"}, {"probe_wakeup", r["directions"]["online"]}};
  ReportOptions opts;
  std::string html = FormatHtml(r, opts);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // no fetches
  EXPECT_EQ(html.find("<script"), std::string::npos);
  // Latency vs online CPUs: offline p50 at 2, 3, 4 online CPUs.
  for (const char* x : {"2", "3", "4"})
    EXPECT_NE(html.find(std::string("data-series=\"offline p50\" data-x=\"") + x + "\""),
              std::string::npos)
        << x;
  EXPECT_NE(html.find("data-series=\"offline histogram\""), std::string::npos);
  EXPECT_NE(html.find("data-series=\"kernel_states\" data-x=\"CPUHP_TEARDOWN_CPU\" data-y=\"9\""),
            std::string::npos);
  EXPECT_NE(html.find("data-series=\"offline max\""), std::string::npos);
  EXPECT_NE(html.find("class=\"mark\" data-series=\"event\" data-x=\"1500\""), std::string::npos);
  EXPECT_NE(html.find("Disturbance"), std::string::npos);
  EXPECT_NE(html.find("latency (ms)"), std::string::npos);
}

}  // namespace
}  // namespace cpuhp
