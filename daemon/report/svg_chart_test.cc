// SPDX-License-Identifier: GPL-2.0
#include "report/svg_chart.h"

#include <gtest/gtest.h>

#include <string>

namespace cpuhp {
namespace {

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1))
    ++n;
  return n;
}

// A fuzzed report put x near 1e17 with a range of 16: the tick step (2) is
// below the values' precision, and `x += step` never moved. Ticks are now
// first + i * step, at most 64 per axis.
TEST(SvgChartTest, ValuesBeyondDoublePrecisionStillEnd) {
  Chart c;
  c.title = "huge";
  ChartSeries s;
  s.name = "p50";
  s.points = {{1e17, 1e17}, {1e17 + 16, 1e17 + 32}};
  c.series.push_back(s);
  const std::string svg = RenderChart(c);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_LE(Count(svg, "class=\"grid\""), 64u);
  EXPECT_LE(Count(svg, "class=\"axis\""), 64u);
  EXPECT_GE(Count(svg, "class=\"axis\""), 1u);
}

TEST(SvgChartTest, OnlineCountTicksAreWholeNumbers) {
  Chart c;
  ChartSeries s;
  s.name = "p50";
  s.points = {{2, 1.5}, {4, 2.5}};
  c.series.push_back(s);
  const std::string svg = RenderChart(c);
  EXPECT_EQ(Count(svg, "class=\"axis\""), 3u);  // 2, 3, 4
  EXPECT_NE(svg.find(">3</text>"), std::string::npos);
}

}  // namespace
}  // namespace cpuhp
