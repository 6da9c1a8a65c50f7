// SPDX-License-Identifier: GPL-2.0
#include "report/run_identity.h"

#include <gtest/gtest.h>

#include "testing/report_fixtures.h"
#include "util/json_file.h"

namespace cpuhp {
namespace {

using nlohmann::json;

// A pooled report of `runs` as merge writes its record.
json Pooled(const json& runs) {
  json p = Cpu1();
  p["pooled"] = {{"reports", json::array()}, {"boots", runs.size()}, {"runs", runs}};
  for (size_t i = 0; i < runs.size(); ++i)
    p["pooled"]["reports"].push_back("boot" + std::to_string(i) + ".json");
  return p;
}

TEST(RunIdentityTest, AReportIsItsBootStartAndSeed) {
  const std::vector<std::optional<RunId>> runs = RunsOf(Cpu1());
  ASSERT_EQ(runs.size(), 1u);
  ASSERT_TRUE(runs[0]);
  EXPECT_EQ(runs[0]->boot_id, "6abf394b-29b1-41aa-923d-7c046879f1f5");
  EXPECT_EQ(runs[0]->started_at, "2026-11-30T08:40:35.253Z");
  EXPECT_EQ(runs[0]->seed, 1u);
  EXPECT_EQ(RunIdToJson(*runs[0]), json({{"boot_id", "6abf394b-29b1-41aa-923d-7c046879f1f5"},
                                         {"started_at", "2026-11-30T08:40:35.253Z"},
                                         {"seed", 1}}));
  // No boot id on the host: still known by its start and seed.
  json no_boot = Cpu1();
  no_boot["host"]["boot_id"] = nullptr;
  ASSERT_TRUE(RunsOf(no_boot)[0]);
  EXPECT_EQ(RunIdToJson(*RunsOf(no_boot)[0])["boot_id"], nullptr);
  // No start: not known.
  json no_start = Cpu1();
  no_start["run"].erase("started_at");
  EXPECT_FALSE(RunsOf(no_start)[0]);
}

TEST(RunIdentityTest, APooledReportHoldsTheRunsItRecords) {
  const json one = RunIdToJson(*RunsOf(Cpu1())[0]);
  json two = one;
  two["boot_id"] = "second-boot";
  const std::vector<std::optional<RunId>> runs = RunsOf(Pooled({one, nullptr, two}));
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0], RunsOf(Cpu1())[0]);
  EXPECT_FALSE(runs[1]);  // pooled from a report that did not record it
  ASSERT_TRUE(runs[2]);
  EXPECT_EQ(runs[2]->boot_id, "second-boot");
  // Pooled before pooled.runs existed: its boots, none known.
  json old = Pooled({one, two});
  old["pooled"].erase("runs");
  EXPECT_EQ(RunsOf(old), std::vector<std::optional<RunId>>(2));
}

TEST(RunIdentityTest, OneRunTwiceIsRefusedNamingBothFiles) {
  const json a = Cpu1();
  std::string err;
  EXPECT_FALSE(CheckDistinctRuns({"a.json", "a.json"}, {a, a}, &err));
  EXPECT_EQ(err,
            "the same run twice: a.json and a.json both hold the run started "
            "2026-11-30T08:40:35.253Z on boot 6abf394b-29b1-41aa-923d-7c046879f1f5 with seed 1; "
            "pool each run once");
  // A copy under another name, after a run of another boot.
  json other = a;
  other["host"]["boot_id"] = "second-boot";
  err.clear();
  EXPECT_FALSE(CheckDistinctRuns({"b.json", "a.json", "copy.json"}, {other, a, a}, &err));
  EXPECT_NE(err.find(": a.json and copy.json both hold"), std::string::npos) << err;
}

TEST(RunIdentityTest, RunsDifferingInBootStartOrSeedAreDistinct) {
  const json a = Cpu1();
  json boot = a, start = a, seed = a;
  boot["host"]["boot_id"] = "second-boot";
  start["run"]["started_at"] = "2026-11-30T08:40:35.254Z";
  seed["seed"] = 2;
  std::string err;
  EXPECT_TRUE(CheckDistinctRuns({"a", "boot", "start", "seed"}, {a, boot, start, seed}, &err))
      << err;
  // Runs not known are never taken for one another.
  json unknown = a;
  unknown["run"].erase("started_at");
  EXPECT_TRUE(CheckDistinctRuns({"u1", "u2"}, {unknown, unknown}, &err)) << err;
}

TEST(RunIdentityTest, APooledReportWithOneOfItsOwnRunsIsRefused) {
  const json a = Cpu1();
  json b = a;
  b["host"]["boot_id"] = "second-boot";
  const json pooled = Pooled({RunIdToJson(*RunsOf(a)[0]), RunIdToJson(*RunsOf(b)[0])});
  std::string err;
  // `merge res/*.json -o res/pooled.json` a second time.
  EXPECT_FALSE(
      CheckDistinctRuns({"res/a.json", "res/b.json", "res/pooled.json"}, {a, b, pooled}, &err));
  EXPECT_EQ(
      err,
      "the same run twice: res/a.json and res/pooled.json (a pooled report) both hold the run "
      "started 2026-11-30T08:40:35.253Z on boot 6abf394b-29b1-41aa-923d-7c046879f1f5 with "
      "seed 1; pool each run once");
  // A pooled report that holds one run twice (pooled before this check).
  const json twice = Pooled({RunIdToJson(*RunsOf(a)[0]), RunIdToJson(*RunsOf(a)[0])});
  EXPECT_FALSE(CheckDistinctRuns({"old.json", "b.json"}, {twice, b}, &err));
  EXPECT_EQ(err.substr(0, 58), "the same run twice: old.json (a pooled report) holds the r");
  // With a run of a third boot: accepted.
  json c = a;
  c["host"]["boot_id"] = "third-boot";
  EXPECT_TRUE(CheckDistinctRuns({"res/pooled.json", "c.json"}, {pooled, c}, &err)) << err;
}

}  // namespace
}  // namespace cpuhp
