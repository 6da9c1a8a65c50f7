// SPDX-License-Identifier: GPL-2.0
// The checks of a report (ReportChecks), and that every format renders the
// same verdict: the cases of issue 28.
#include "report/report_checks.h"

#include <gtest/gtest.h>

#include "testing/synthetic_report.h"

namespace cpuhp {
namespace {

using nlohmann::json;

const ReportCheck* Find(const std::vector<ReportCheck>& checks, const std::string& name) {
  for (const ReportCheck& c : checks)
    if (c.name == name)
      return &c;
  return nullptr;
}

// The config of `cpuhp-stress run` with no options, as the report records it.
json DefaultRun() {
  json r = SyntheticReport(SyntheticSpec{});
  r["config"]["iterations"] = "auto";
  r["config"]["duration"] = "0";
  r["config"]["pattern"] = "roundrobin";
  r["run"]["stop_reason"] = "iterations";
  return r;
}

// Issue 28 item 1: "iterations": "auto" is the 1000 the run aimed at, not 0.
TEST(ReportChecksTest, TheDefaultRunCompletedAtItsResolvedTarget) {
  const ReportOptions o;
  json r = DefaultRun();
  std::vector<ReportCheck> checks = ReportChecks(r, o);
  ASSERT_NE(Find(checks, "run_completed"), nullptr);
  EXPECT_TRUE(Find(checks, "run_completed")->pass) << Find(checks, "run_completed")->message;
  for (const ReportCheck& c : checks)
    EXPECT_TRUE(!c.is_verdict || c.pass) << c.name << ": " << c.message;
  // The same report stopped by a signal did not reach its 1000.
  r["run"]["stop_reason"] = "signal";
  checks = ReportChecks(r, o);
  EXPECT_FALSE(Find(checks, "run_completed")->pass);
  EXPECT_NE(Find(checks, "run_completed")->message.find("not its target: iterations"),
            std::string::npos)
      << Find(checks, "run_completed")->message;
  // "auto" with a duration: the duration is the only target.
  r["config"]["duration"] = "10s";
  r["run"]["stop_reason"] = "duration";
  EXPECT_TRUE(Find(ReportChecks(r, o), "run_completed")->pass);
  r["run"]["stop_reason"] = "iterations";
  EXPECT_FALSE(Find(ReportChecks(r, o), "run_completed")->pass);
  // "auto" with a sweep: the end of its schedule.
  r["config"]["duration"] = "0";
  r["config"]["pattern"] = "sweep";
  r["run"]["stop_reason"] = "schedule_complete";
  EXPECT_TRUE(Find(ReportChecks(r, o), "run_completed")->pass);
  r["run"]["stop_reason"] = "iterations";
  EXPECT_FALSE(Find(ReportChecks(r, o), "run_completed")->pass);
}

}  // namespace
}  // namespace cpuhp
