// SPDX-License-Identifier: GPL-2.0
// The stuck-operation watchdog: sees a write past the timeout once, records
// CPU, direction and a stack (or why not), notes when it returns (end to end,
// cli/run_soak_test.cc: a stalled simulated write shows up in the report).
#include "run/stuck_watchdog.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "util/systemd_glue.h"

namespace cpuhp {
namespace {

TEST(StuckWatchdog, ReportsAStuckWriteOnceAndItsReturn) {
  InFlight f;
  std::vector<std::string> lines;
  StuckWatchdog w(&f, 30000000000ull, [&](const std::string& l) { lines.push_back(l); });
  f.cpu = 3;
  f.dir = static_cast<int>(Direction::kOnline);
  f.index = 41;
  f.tid = gettid();
  f.start_wall_ns = 1000000000000ull;
  w.Poll(1000000000000ull + 29000000000ull);  // 29 s: not yet
  EXPECT_EQ(w.Records().size(), 0u);
  w.Poll(1000000000000ull + 31000000000ull);
  w.Poll(1000000000000ull + 32000000000ull);  // the same write: once
  ASSERT_EQ(w.Records().size(), 1u);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "STUCK: cpu3 online (op 41) has not returned after 31 s");
  nlohmann::json r = w.Records()[0];
  EXPECT_EQ(r["cpu"], 3);
  EXPECT_EQ(r["dir"], "online");
  EXPECT_EQ(r["index"], 41);
  EXPECT_EQ(r["detected_after_ns"], 31000000000ull);
  EXPECT_TRUE(r.contains("stack") != r.contains("stack_unavailable"));
  f.start_wall_ns = 0;  // returned
  w.Poll(1000000000000ull + 40000000000ull);
  EXPECT_EQ(w.Records()[0]["returned_after_ns"], 40000000000ull);
}

TEST(JournalFields, CarryCpuOpErrnoIteration) {
  EXPECT_TRUE(JournalFieldsForTest(LogFields{}).empty());
  {
    ScopedLogFields s({2, "offline", 16, 12345});
    EXPECT_EQ(JournalFieldsForTest(CurrentLogFields()),
              (std::vector<std::string>{"CPU=2", "OP=offline", "ERRNO=16", "ITERATION=12345"}));
  }
  EXPECT_EQ(CurrentLogFields().cpu, -1);
}

}  // namespace
}  // namespace cpuhp
