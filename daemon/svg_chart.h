// SPDX-License-Identifier: GPL-2.0
// Small inline-SVG charts for the HTML report: line/point charts and
// horizontal bar charts with labelled axes and units. Every data point is an
// element carrying data-series, data-x and data-y, so tests can read charts.
#pragma once

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
};

struct ChartMark {  // a vertical line at x, with a tooltip
  double x = 0;
  std::string label;
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
  int width = 900;
  int height = 340;
};

std::string RenderChart(const Chart& c);

struct BarItem {
  std::string label;
  double value = 0;
};
// Horizontal bars, largest first as given.
std::string RenderBars(const std::string& title, const std::string& unit,
                       const std::vector<BarItem>& items, const std::string& series_name);

std::string HtmlEscape(const std::string& s);

}  // namespace cpuhp
