// SPDX-License-Identifier: GPL-2.0
// What html_report_test.cc and html_sections_test.cc read back from a page:
// the real reports they render, every chart point by series, the kernel-log
// marks, and the checks that compare them with the report's fields.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/html_report.h"
#include "testing/report_fixtures.h"

namespace cpuhp::html_page {

using nlohmann::json;

// A real guest run with the cpuhp_probe module loaded (tests/vm).
inline const json& Guest() {
  static const json r = LoadFixture("report-real-guest-kmod.json");
  return r;
}

// Both kernel-phase sources on the same operations (issue 34).
inline const json& GuestBoth() {
  static const json r = LoadFixture("report-real-guest-both.json");
  return r;
}

struct Point {
  std::string x;
  double y;
};

// data-series -> its points, as the page carries them.
inline std::multimap<std::string, Point> Points(const std::string& html) {
  std::multimap<std::string, Point> out;
  static const std::regex re(
      R"re(class="pt" data-series="([^"]*)" data-x="([^"]*)" data-y="([^"]*)")re");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), re); it != std::sregex_iterator();
       ++it)
    out.emplace((*it)[1], Point{(*it)[2], std::stod((*it)[3])});
  return out;
}

inline std::vector<Point> Series(const std::multimap<std::string, Point>& pts,
                                 const std::string& name) {
  std::vector<Point> out;
  auto [a, b] = pts.equal_range(name);
  for (auto it = a; it != b; ++it)
    out.push_back(it->second);
  return out;
}

// (op index, kind) of every kernel-log mark on the timeline.
inline std::vector<std::pair<std::string, std::string>> Marks(const std::string& html) {
  std::vector<std::pair<std::string, std::string>> out;
  static const std::regex re(
      R"re(class="mark" data-series="event" data-x="([^"]*)" data-kind="([^"]*)")re");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), re); it != std::sregex_iterator();
       ++it)
    out.emplace_back((*it)[1], (*it)[2]);
  return out;
}

inline std::string Html(const json& r) {
  static const ReportOptions opts;
  return FormatHtml(r, opts);
}

inline void ExpectNear(double got, double want, const std::string& what) {
  EXPECT_NEAR(got, want, std::abs(want) * 1e-9 + 1e-12) << what;
}

// Every level with samples of every phase is a point at its online count.
inline void ExpectLevels(const std::multimap<std::string, Point>& pts, const std::string& series,
                         const json& levels) {
  for (const char* stat : {"p50", "p99"}) {
    std::map<std::string, double> got;
    for (const Point& p : Series(pts, series + " " + stat))
      got[p.x] = p.y;
    size_t with_samples = 0;
    for (const json& l : levels) {
      if (l["count"].get<uint64_t>() == 0)
        continue;
      with_samples++;
      std::string x = std::to_string(l["online_cpus"].get<int>());
      ASSERT_TRUE(got.count(x)) << series << " " << stat << " at " << x;
      ExpectNear(got[x], l[std::string(stat) + "_ns"].get<double>() / 1e6, series);
    }
    EXPECT_EQ(got.size(), with_samples) << series;
    EXPECT_GT(with_samples, 0u) << series;
  }
}

}  // namespace cpuhp::html_page
