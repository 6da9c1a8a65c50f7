// SPDX-License-Identifier: GPL-2.0
// Small inline-SVG charts for the HTML report: line/point charts and
// horizontal bar charts with labelled axes and units. Every data point is an
// element carrying data-series, data-x and data-y, so tests can read charts.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cpuhp {

struct ChartSeries {
  std::string name;
  std::string color;
  std::vector<std::pair<double, double>> points;  // (x, y)
  bool line = true;                               // join the points
  bool markers = true;                            // draw each point
  bool dashed = false;
  bool legend = true;        // listed in the legend (a p99 beside its p50 need not be)
  std::string legend_label;  // legend text; "" = name
  // Operations behind each point (same order as points), or empty: shown as
  // data-n and in the tooltip; the marker grows with n and is hollow below
  // kFewOps, where a p99 is only the largest of a few samples.
  std::vector<uint64_t> n;
};
constexpr uint64_t kFewOps = 10;

struct ChartMark {  // a vertical line at x, with a tooltip
  double x = 0;
  std::string label;
  std::string kind;  // data-kind attribute ("warning", ...), may be empty
};

struct Chart {
  std::string title;
  std::string x_label;  // with unit: "online CPUs (count)"
  std::string y_label;  // with unit: "latency (ms)"
  std::vector<ChartSeries> series;
  std::vector<ChartMark> marks;
  bool bars = false;  // series[0] drawn as vertical bars of width bar_width
  double bar_width = 0;
  bool y_from_zero = true;
  bool log_y = false;  // logarithmic y axis (decades); points with y <= 0 are not drawn
  std::string mark_legend = "kernel log event";
  int width = 900;
  int height = 340;
};

std::string RenderChart(const Chart& c);

struct BarItem {
  std::string label;
  double value = 0;
  std::string series;  // data-series of this bar; "" = the chart's series_name
  std::string x;       // data-x of this bar; "" = label
  std::string color;   // "" = the default blue
};
// What each bar colour stands for: (colour, text).
using BarLegend = std::vector<std::pair<std::string, std::string>>;
// Horizontal bars, in the order given. The label column is as wide as the
// longest label (no label is clipped at the left edge); the legend, when
// given, is drawn under the title.
std::string RenderBars(const std::string& title, const std::string& unit,
                       const std::vector<BarItem>& items, const std::string& series_name,
                       const BarLegend& legend = {});

}  // namespace cpuhp
