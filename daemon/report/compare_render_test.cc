// SPDX-License-Identifier: GPL-2.0
#include "report/compare_render.h"

#include <gtest/gtest.h>

#include "testing/synthetic_report.h"

namespace cpuhp {
namespace {

TEST(CompareTest, MarkdownIsShapedLikeSeed001) {
  SyntheticSpec b, c;
  c.offline_scale = 0.5;
  Comparison r = CompareSynthetic(b, c);
  std::string md = CompareMarkdown(r);
  EXPECT_NE(md.find("| online CPUs | ops | baseline | candidate | ratio [95 % CI] | verdict |"),
            std::string::npos)
      << md;
  // One row per level: "| 2 | 2.300 | 1.150 | 0.500 |" give or take jitter.
  EXPECT_NE(md.find("\n| 2 | "), std::string::npos);
  EXPECT_NE(md.find("\n| all | "), std::string::npos);
  EXPECT_NE(md.find("improved"), std::string::npos);
}

// Seed 001's layout for a mail: 80 columns, kernels and op counts on top,
// a footnote for every cell without an interval.
TEST(CompareTest, TextFitsEightyColumnsWithKernelsAndFootnotes) {
  SyntheticSpec b, c;
  b.ops_per_level = c.ops_per_level = 100;  // a p50 interval, none for p99
  Comparison r = CompareSynthetic(b, c);
  r.base.kernel_release = "6.1.0-28-amd64";
  r.cand.kernel_release = "6.12.9-custom";
  std::string text = CompareText(r);
  size_t from = 0;
  for (size_t nl; (nl = text.find('\n', from)) != std::string::npos; from = nl + 1)
    EXPECT_LE(nl - from, 80u) << text.substr(from, nl - from);
  EXPECT_NE(text.find("baseline  6.1.0-28-amd64, "), std::string::npos) << text;
  EXPECT_NE(text.find("candidate 6.12.9-custom, "), std::string::npos) << text;
  EXPECT_NE(text.find("online CPUs    baseline candidate  ratio [95% CI]"), std::string::npos)
      << text;
  // The p99 cells say why they have no interval.
  EXPECT_NE(text.find("[1] no interval: p99 needs 1000 operations per side"), std::string::npos)
      << text;
}

// A script reading `compare --format json` learns from one top-level field
// that the numbers are a model's, and from which side.
TEST(CompareTest, JsonSaysWhichSideIsSimulated) {
  SyntheticSpec b, c;
  Comparison r = CompareSynthetic(b, c);  // synthetic reports are sim's
  EXPECT_TRUE(r.base.simulated && r.cand.simulated);
  EXPECT_EQ(CompareJson(r)["simulated_sides"], nlohmann::json({"baseline", "candidate"}));
  r.base.simulated = r.cand.simulated = false;
  nlohmann::json j = CompareJson(r);
  EXPECT_EQ(j["simulated"], false);
  EXPECT_EQ(j["simulated_sides"], nlohmann::json::array());
  r.cand.simulated = true;
  j = CompareJson(r);
  EXPECT_EQ(j["simulated"], true);
  EXPECT_EQ(j["simulated_sides"], nlohmann::json({"candidate"}));
  EXPECT_TRUE(j.contains("rows") && j.contains("regressions"));  // nothing else moved
}

}  // namespace
}  // namespace cpuhp
