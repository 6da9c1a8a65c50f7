// SPDX-License-Identifier: GPL-2.0
// The HTML page against REAL daemon output (tests/fixtures/README.md says how
// each report was made): every chart point must carry the value of the
// report field it stands for, and a section the report lacks or marks
// unavailable must say so instead of drawing zeros.
#include "report/html_report.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <string>

#include "testing/html_page.h"
#include "testing/report_fixtures.h"
#include "util/report_json.h"

namespace cpuhp {
namespace {

using html_page::ExpectLevels;
using html_page::Guest;
using html_page::Html;
using html_page::Marks;
using html_page::Point;
using html_page::Points;
using html_page::Series;
using nlohmann::json;

TEST(HtmlReportTest, FixturesAreRealRunsWithEverySection) {
  const json& ts = Cpu1()["timing_sources"];
  ASSERT_EQ(ts["tracepoints"]["status"], "ok");
  ASSERT_EQ(ts["disturbance"]["status"], "ok");
  ASSERT_EQ(ts["kmsg_health"]["status"], "ok");
  ASSERT_EQ(ts["kmsg_health"]["counts"]["warning"], 1);
  ASSERT_EQ(ts["kmod"]["status"], "unavailable");
  ASSERT_EQ(Cpu1()["cpus"]["backend"], "/sys/devices/system/cpu");
  ASSERT_EQ(Guest()["timing_sources"]["kmod"]["status"], "ok");
}

TEST(HtmlReportTest, WordingFollowsCountsAndBackend) {
  json r = Cpu1();
  json& d = r["timing_sources"]["disturbance"];
  d["probe_cpus"] = "0";
  d["toggled_cpus"] = "1";
  std::string html = Html(r);
  EXPECT_NE(html.find("of probes on CPU 0 while CPU 1 was toggled"), std::string::npos);
  d["probe_cpus"] = "0-3";
  d["toggled_cpus"] = "4,6";
  html = Html(r);
  EXPECT_NE(html.find("of probes on CPUs 0-3 while CPUs 4,6 were toggled"), std::string::npos);

  r["timing_sources"].erase("tracepoints");
  r["timing_sources"].erase("kmod");
  html = Html(r);
  EXPECT_NE(html.find("No kernel phases per online count for offline (sources: tracepoints not "
                      "in this report, kmod not in this report)."),
            std::string::npos);
  EXPECT_EQ(html.find("absent"), std::string::npos);

  const std::string kernel = r["host"]["kernel_release"];
  EXPECT_NE(html.find("<h1>cpuhp-stress: " + kernel + " on "), std::string::npos);
  r["run"]["clock"] = "simulated";
  html = Html(r);
  EXPECT_NE(html.find("<h1>SIMULATED cpuhp-stress: sim backend on "), std::string::npos);
  EXPECT_EQ(html.find(kernel + " on "), std::string::npos);
}

// Issue 15 part 5: no kernel-state label is clipped at the chart's left
// edge, and the bar colours have a legend.
TEST(HtmlReportTest, BarLabelsFitAndColoursHaveALegend) {
  std::string html = Html(Cpu1());
  static const std::regex svg_re(R"re(<svg[^>]*aria-label="Top [^"]*kernel states[^>]*>)re");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(html, m, svg_re));
  const size_t at = static_cast<size_t>(m.position(0));
  const std::string svg = html.substr(at, html.find("</svg>", at) - at);
  static const std::regex label_re(
      R"re(<text x="([0-9]+)" y="[0-9]+" class="tick" text-anchor="end">([^<]*)</text>)re");
  int labels = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), label_re);
       it != std::sregex_iterator(); ++it, ++labels) {
    // Right-aligned at x: the text needs x >= its width (~6.6 px a char).
    const double x = std::stod((*it)[1]);
    EXPECT_GE(x, 6.6 * static_cast<double>((*it)[2].length())) << (*it)[2];
  }
  EXPECT_GT(labels, 0);
  EXPECT_NE(svg.find("class=\"legend\">offline</text>"), std::string::npos);
  EXPECT_NE(svg.find("class=\"legend\">online</text>"), std::string::npos);
  EXPECT_NE(html.find("class=\"legend\">during offline</text>"), std::string::npos);
}

TEST(HtmlReportTest, LatencyVsOnlineCpusPerPhase) {
  for (const json* r : {&Cpu1(), &Guest()}) {
    std::string html = Html(*r);
    auto pts = Points(html);
    for (const char* d : {"offline", "online"})
      ExpectLevels(pts, d, (*r)["per_online_count"][d]);
    size_t phases = 0;
    for (const json& ph : (*r)["timing_sources"]["tracepoints"]["phases"]) {
      ExpectLevels(pts,
                   ph["direction"].get<std::string>() + " " + ph["name"].get<std::string>() +
                       " (tracepoints)",
                   ph["per_online_count"]);
      phases++;
    }
    EXPECT_GE(phases, 4u);
  }
  // The module's kernel_phases, per direction and probe.
  auto pts = Points(Html(Guest()));
  size_t kmod = 0;
  for (const auto& [dir, phases] : Guest()["timing_sources"]["kmod"]["kernel_phases"].items())
    for (const auto& [name, ph] : phases.items()) {
      ExpectLevels(pts, dir + " " + name + " (kmod)", ph["by_online"]);
      kmod++;
    }
  EXPECT_GE(kmod, 4u);
}

// The bpf source's kernel_phases (the kmod section's form) are drawn and
// tabled beside the module's, each labelled with its source.
TEST(HtmlReportTest, HistogramsPerDirectionHoldEveryOperation) {
  auto pts = Points(Html(Cpu1()));
  for (const char* d : {"offline", "online"}) {
    double sum = 0;
    for (const Point& p : Series(pts, std::string(d) + " histogram"))
      sum += p.y;
    EXPECT_EQ(sum, Cpu1()["directions"][d]["count"].get<double>()) << d;
  }
}

TEST(HtmlReportTest, MissingOrUnavailableSectionsSayWhyAndDrawNothing) {
  json r = Cpu1();
  // As the daemon writes a source that could not start.
  r["timing_sources"]["disturbance"] = {{"status", "unavailable"},
                                        {"reason", "probe on cpu0: Operation not permitted"}};
  r["timing_sources"].erase("kmsg_health");
  r["timing_sources"]["tracepoints"] = {{"status", "unavailable"},
                                        {"reason", "tracefs: no cpuhp events"}};
  std::string html = Html(r);
  auto pts = Points(html);
  for (const auto& [series, p] : pts) {
    EXPECT_EQ(series.find("disturbance"), std::string::npos) << series;
    EXPECT_EQ(series.find("kernel_states"), std::string::npos) << series;
    EXPECT_EQ(series.find("(tracepoints)"), std::string::npos) << series;
  }
  EXPECT_TRUE(Marks(html).empty());
  EXPECT_NE(html.find("Disturbance probes: unavailable: probe on cpu0: Operation not permitted"),
            std::string::npos);
  EXPECT_NE(html.find("Kernel log health: not in this report"), std::string::npos);
  EXPECT_NE(html.find("Kernel states (tracepoints source): unavailable: tracefs: no cpuhp events"),
            std::string::npos);
  EXPECT_NE(html.find("Kernel phases from the cpuhp_probe module (kmod source): unavailable: "),
            std::string::npos);
  // The write(2) itself is still charted.
  EXPECT_FALSE(Series(pts, "offline p50").empty());
}

TEST(HtmlReportTest, SelfContained) {
  std::string html = Html(Cpu1());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  size_t http = 0;
  for (size_t at = html.find("http"); at != std::string::npos; at = html.find("http", at + 1))
    http += html.compare(at, 26, "http://www.w3.org/2000/svg") != 0;
  EXPECT_EQ(http, 0u);
}

// Issue 15 part 5: one operation per point draws one line per direction
// (max and mean would coincide); several draw both.
TEST(HtmlReportTest, LevelPointsCarryTheirOperationCount) {
  std::string html = Html(Cpu1());
  const json& level = Cpu1()["per_online_count"]["offline"][0];
  const std::string n = std::to_string(level["count"].get<uint64_t>());
  std::regex re("data-series=\"offline p50\" data-x=\"" +
                std::to_string(level["online_cpus"].get<int>()) + "\" data-y=\"[^\"]*\" data-n=\"" +
                n + "\"[^>]*fill=\"([^\"]*)\"");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(html, m, re)) << n;
  EXPECT_NE(m[1], "#fff");  // 32 operations: a full marker
  json r = Cpu1();
  r["per_online_count"]["offline"][0]["count"] = 1;
  html = Html(r);
  std::regex one(
      "data-series=\"offline p50\" [^>]*data-n=\"1\"[^>]*fill=\"#fff\"[^>]*>"
      "<title>[^<]*\\(n=1\\)</title>");
  EXPECT_TRUE(std::regex_search(html, one));
}

// Issue 15 part 5: with --baseline, the baseline is named on the page and
// its write(2) drawn beside this run's.
TEST(HtmlReportTest, BaselineIsNamedAndDrawn) {
  ReportOptions opts;
  opts.report_path = "new.json";
  opts.baseline = Guest();
  opts.baseline_path = "old.json";
  std::string html = FormatHtml(Cpu1(), opts);
  const std::string name = "old.json (" + Guest()["host"]["kernel_release"].get<std::string>() +
                           ", " + std::to_string(Guest()["totals"]["ops"].get<uint64_t>()) +
                           " operations)";
  EXPECT_NE(html.find("Compared with the baseline " + name), std::string::npos);
  auto pts = Points(html);
  for (const char* d : {"offline", "online"}) {
    std::vector<Point> base = Series(pts, std::string("baseline ") + d + " p50");
    size_t levels = 0;
    for (const json& l : Guest()["per_online_count"][d])
      levels += l["count"].get<uint64_t>() > 0;
    EXPECT_EQ(base.size(), levels) << d;
  }
  EXPECT_TRUE(Series(Points(Html(Cpu1())), "baseline offline p50").empty());
}

// Issue 14: pooled reports (tools/abtest.sh's a/ and b/ pooled.json) give
// each compare check the spread of each side's boots, on the page too; a
// single report has none.
TEST(HtmlReportTest, PooledBaselineShowsThePerBootRanges) {
  static const json pooled = LoadFixture("report-real-pooled.json");
  ReportOptions opts;
  opts.report_path = "b/pooled.json";
  opts.baseline = pooled;
  opts.baseline_path = "a/pooled.json";
  const std::string html = FormatHtml(pooled, opts);
  std::regex row(
      "<tr><td>compare_offline\\.p50</td><td class=\"pass\">pass</td><td[^>]*>[^<]*"
      "boots \\(ms\\): baseline [0-9.]+\\.\\.[0-9.]+, candidate [0-9.]+\\.\\.[0-9.]+ "
      "\\(2 \\+ 2\\)</td></tr>");
  EXPECT_TRUE(std::regex_search(html, row));
  ReportOptions one;
  one.baseline = Cpu1();
  EXPECT_EQ(FormatHtml(Cpu1(), one).find("boots (ms)"), std::string::npos);
}

}  // namespace
}  // namespace cpuhp
