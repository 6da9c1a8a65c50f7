// SPDX-License-Identifier: GPL-2.0
// The HTML page against REAL daemon output (tests/fixtures/README.md says how
// each report was made): every chart point must carry the value of the
// report field it stands for, and a section the report lacks or marks
// unavailable must say so instead of drawing zeros.
#include "report/html_report.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "testing/report_fixtures.h"
#include "util/report_json.h"

namespace cpuhp {
namespace {

using nlohmann::json;

// A real guest run with the cpuhp_probe module loaded (tests/vm).
const json& Guest() {
  static const json r = LoadFixture("report-real-guest-kmod.json");
  return r;
}

// Both kernel-phase sources on the same operations (issue 34).
const json& GuestBoth() {
  static const json r = LoadFixture("report-real-guest-both.json");
  return r;
}

struct Point {
  std::string x;
  double y;
};

// data-series -> its points, as the page carries them.
std::multimap<std::string, Point> Points(const std::string& html) {
  std::multimap<std::string, Point> out;
  static const std::regex re(
      R"re(class="pt" data-series="([^"]*)" data-x="([^"]*)" data-y="([^"]*)")re");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), re); it != std::sregex_iterator();
       ++it)
    out.emplace((*it)[1], Point{(*it)[2], std::stod((*it)[3])});
  return out;
}

std::vector<Point> Series(const std::multimap<std::string, Point>& pts, const std::string& name) {
  std::vector<Point> out;
  auto [a, b] = pts.equal_range(name);
  for (auto it = a; it != b; ++it)
    out.push_back(it->second);
  return out;
}

// (op index, kind) of every kernel-log mark on the timeline.
std::vector<std::pair<std::string, std::string>> Marks(const std::string& html) {
  std::vector<std::pair<std::string, std::string>> out;
  static const std::regex re(
      R"re(class="mark" data-series="event" data-x="([^"]*)" data-kind="([^"]*)")re");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), re); it != std::sregex_iterator();
       ++it)
    out.emplace_back((*it)[1], (*it)[2]);
  return out;
}

std::string Html(const json& r) {
  static const ReportOptions opts;
  return FormatHtml(r, opts);
}

void ExpectNear(double got, double want, const std::string& what) {
  EXPECT_NEAR(got, want, std::abs(want) * 1e-9 + 1e-12) << what;
}

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

TEST(HtmlReportTest, DisturbanceBarsPerDirectionAgainstBaseline) {
  std::string html = Html(Cpu1());
  auto pts = Points(html);
  const json& total = Cpu1()["timing_sources"]["disturbance"]["total"];
  int bars = 0;
  for (auto [stat, key] :
       {std::pair{"p50", "p50_ns"}, {"p99", "p99_ns"}, {"p99.9", "p99_9_ns"}, {"max", "max_ns"}}) {
    std::vector<Point> s = Series(pts, std::string("disturbance ") + stat);
    std::map<std::string, double> by_bucket;
    for (const Point& p : s)
      by_bucket[p.x] = p.y;
    for (auto [bucket, label] : {std::pair{"baseline", "baseline"},
                                 {"offline", "during offline"},
                                 {"online", "during online"}}) {
      ASSERT_GT(total[bucket]["count"].get<uint64_t>(), 0u) << bucket;
      ASSERT_TRUE(by_bucket.count(label)) << stat << " " << label;
      // Microseconds on the page, nanoseconds in the report.
      ExpectNear(by_bucket[label], total[bucket][key].get<double>() / 1e3,
                 std::string(stat) + " " + label);
      bars++;
    }
  }
  EXPECT_EQ(bars, 12);
  EXPECT_NE(html.find("<td>all probes</td><td>during offline</td>"), std::string::npos);
}

TEST(HtmlReportTest, KernelLogEventsMarkedAtTheirOperation) {
  std::string html = Html(Cpu1());
  const json& h = Cpu1()["timing_sources"]["kmsg_health"];
  std::vector<std::pair<std::string, std::string>> want;
  for (const auto& [kind, lines] : h["first_lines"].items())
    for (const json& l : lines)
      want.emplace_back(std::to_string(l["op_index"].get<uint64_t>()), kind);
  ASSERT_EQ(want.size(), 1u);
  EXPECT_EQ(Marks(html), want);
  // The timeline spans the mark: it is an operation of the plotted run.
  uint64_t op = h["first_event"]["op_index"];
  EXPECT_LT(op, Cpu1()["totals"]["ops"].get<uint64_t>());
  EXPECT_NE(html.find(report_json::HtmlEscape(h["first_event"]["message"])), std::string::npos);
  EXPECT_NE(html.find("Kernel log: 1 problem line in "), std::string::npos);
  EXPECT_EQ(html.find("1 problem lines"), std::string::npos);
}

// Issue 15 part 5: the words agree with the numbers, and a sim run's title
// names no kernel.
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

TEST(HtmlReportTest, TopKernelStatesBySelfTime) {
  std::string html = Html(Cpu1());
  std::vector<Point> bars = Series(Points(html), "kernel_states");
  std::vector<json> states;
  for (const json& s : Cpu1()["timing_sources"]["tracepoints"]["kernel_states"])
    if (s["count"].get<uint64_t>() > 0)
      states.push_back(s);
  std::stable_sort(states.begin(), states.end(), [](const json& a, const json& b) {
    return a["self_ns"].get<uint64_t>() > b["self_ns"].get<uint64_t>();
  });
  ASSERT_EQ(bars.size(), std::min<size_t>(15, states.size()));
  for (size_t i = 0; i < bars.size(); i++) {
    const json& s = states[i];
    std::string label = s["direction"].get<std::string>() + " " +
                        (s["state"].is_string() ? s["state"].get<std::string>() : "hand-off") +
                        " " + s["function"].get<std::string>() + " [" +
                        s["where"].get<std::string>() + "]";
    EXPECT_EQ(bars[i].x, report_json::HtmlEscape(label)) << i;
    ExpectNear(bars[i].y, s["self_ns"].get<double>() / 1e6, label);
  }
}

// Every level with samples of every phase is a point at its online count.
void ExpectLevels(const std::multimap<std::string, Point>& pts, const std::string& series,
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
TEST(HtmlReportTest, BpfPhasesBesideTheModules) {
  const std::string html = Html(GuestBoth());
  auto pts = Points(html);
  size_t n = 0;
  for (const char* source : {"kmod", "bpf"})
    for (const auto& [dir, phases] : GuestBoth()["timing_sources"][source]["kernel_phases"].items())
      for (const auto& [name, ph] : phases.items()) {
        ExpectLevels(pts, dir + " " + name + " (" + source + ")", ph["by_online"]);
        n++;
      }
  EXPECT_GE(n, 10u);
  EXPECT_NE(html.find("<h2>Kernel phases (BPF kprobes)</h2>"), std::string::npos);
  EXPECT_NE(html.find("kprobe/kretprobe BPF programs"), std::string::npos);
  // Without the bpf section: said, not an empty table.
  EXPECT_NE(Html(Guest()).find("Kernel phases from BPF kprobes (bpf source): not in this report"),
            std::string::npos);
}

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

TEST(HtmlReportTest, BucketWithoutSamplesHasNoBar) {
  json r = Cpu1();
  json& online = r["timing_sources"]["disturbance"]["total"]["online"];
  // What the daemon writes for an empty bucket: every field 0.
  for (auto& [k, v] : online.items())
    v = 0;
  std::string html = Html(r);
  for (const auto& [series, p] : Points(html))
    if (series.rfind("disturbance", 0) == 0) {
      EXPECT_NE(p.x, "during online") << series;
      EXPECT_GT(p.y, 0) << series << " " << p.x;
    }
  EXPECT_NE(html.find("<td>all probes</td><td>during online</td><td>0</td><td colspan=\"5\" "
                      "class=\"na\">no samples</td>"),
            std::string::npos);
}

TEST(HtmlReportTest, QuietKernelLogHasNoMarksAndSaysZero) {
  std::string html = Html(Guest());
  EXPECT_TRUE(Marks(html).empty());
  EXPECT_NE(
      html.find(
          "Kernel log: 0 problem lines in " +
          std::to_string(Guest()["timing_sources"]["kmsg_health"]["records_read"].get<uint64_t>()) +
          " records read"),
      std::string::npos);
  // The guest ran without disturbance probes: said, not drawn.
  EXPECT_NE(html.find("Disturbance probes: not in this report"), std::string::npos);
  for (const auto& [series, p] : Points(html))
    EXPECT_EQ(series.find("disturbance"), std::string::npos);
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
TEST(HtmlReportTest, TimelineDrawsMaxAndMeanOnlyForSeveralOperations) {
  json r = Cpu1();
  ASSERT_EQ(r["timeline"]["ops_per_point"], 1);
  auto pts = Points(Html(r));
  EXPECT_FALSE(Series(pts, "offline").empty());
  EXPECT_TRUE(Series(pts, "offline max").empty());
  EXPECT_TRUE(Series(pts, "offline mean").empty());
  EXPECT_NE(Html(r).find("points of 1 operation: each operation)"), std::string::npos);
  // Two operations of each direction per point, max above mean.
  json& tl = r["timeline"];
  tl["ops_per_point"] = 4;
  for (json& p : tl["points"]) {
    p[4] = 2;                                // offline_n
    p[7] = p[6].get<uint64_t>() * 2 + 1000;  // offline_max_ns
  }
  std::string html = Html(r);
  pts = Points(html);
  EXPECT_EQ(Series(pts, "offline max").size(), tl["points"].size());
  EXPECT_EQ(Series(pts, "offline mean").size(), tl["points"].size());
  EXPECT_NE(html.find("points of 4 operations: max and mean)"), std::string::npos);
}

// Issue 15 part 5: each level's point carries its operation count, and a
// level of a few operations is drawn apart from a full one.
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
