// SPDX-License-Identifier: GPL-2.0
#include "report/compare_thresholds.h"

#include <gtest/gtest.h>

#include "report/compare_render.h"
#include "testing/synthetic_report.h"

namespace cpuhp {
namespace {

TEST(CompareTest, ParseThreshold) {
  CompareOptions o;
  std::string err;
  EXPECT_TRUE(ParseThreshold("7.5%", &o, &err));
  EXPECT_DOUBLE_EQ(o.threshold, 0.075);
  // A bare number is refused: 0.05 meant as 5 % would be 0.05 %.
  for (const char* bare : {"3", "0.05", "p99=20"}) {
    EXPECT_FALSE(ParseThreshold(bare, &o, &err)) << bare;
    EXPECT_NE(err.find("needs its % sign"), std::string::npos) << err;
  }
  EXPECT_DOUBLE_EQ(o.threshold, 0.075);
  EXPECT_TRUE(ParseThreshold("p99=20%", &o, &err));
  EXPECT_DOUBLE_EQ(o.overrides.at("p99"), 0.20);
  EXPECT_FALSE(ParseThreshold("five", &o, &err));
  EXPECT_NE(err.find("--threshold 'five'"), std::string::npos);
  EXPECT_FALSE(ParseThreshold("=5%", &o, &err));
  EXPECT_FALSE(ParseThreshold("-1%", &o, &err));
  // The documented spelling, split at the last '=', is the JSON's name.
  EXPECT_TRUE(ParseThreshold("offline.p50@online=2=50%", &o, &err)) << err;
  EXPECT_DOUBLE_EQ(o.overrides.at("offline.p50@online=2"), 0.50);
  EXPECT_TRUE(ParseThreshold("per_cpu.cpu3.online.p99=9%", &o, &err)) << err;
  for (const char* bad :
       {"bogus=5%", "offline.p77=5%", "p50@online=2=5%", "per_cpu.x.p50=1%", "directions.p50=1%"}) {
    EXPECT_FALSE(ParseThreshold(bad, &o, &err)) << bad;
    EXPECT_NE(err.find("unknown metric"), std::string::npos) << err;
  }
}

TEST(CompareTest, MetricNamesAreTheThresholdSpelling) {
  SyntheticSpec b, c;
  Comparison r = CompareSynthetic(b, c);
  bool level = false;
  for (const CompareRow& row : r.rows)
    level |= row.p50.name == "offline.p50@online=2";
  EXPECT_TRUE(level) << CompareJson(r).dump();
  std::string err;
  CompareOptions o;
  ASSERT_TRUE(ParseThreshold("offline.p50@online=99=5%", &o, &err));
  r.options = o;
  EXPECT_FALSE(CheckThresholdsUsed(r, &err));
  EXPECT_NE(err.find("offline.p50@online=99"), std::string::npos) << err;
  o.overrides = {{"offline.p50@online=2", 0.5}, {"p99", 0.1}, {"online", 0.1}};
  r.options = o;
  EXPECT_TRUE(CheckThresholdsUsed(r, &err)) << err;
}

}  // namespace
}  // namespace cpuhp
