// SPDX-License-Identifier: GPL-2.0
// The page's kernel-side sections (html_sections.cc) against real daemon
// output, as html_report_test.cc reads the rest: every bar and point carries
// its report field's value, and a section without data says so.
#include "report/html_sections.h"

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
using html_page::ExpectNear;
using html_page::Guest;
using html_page::GuestBoth;
using html_page::Html;
using html_page::Marks;
using html_page::Point;
using html_page::Points;
using html_page::Series;
using nlohmann::json;

TEST(HtmlSectionsTest, DisturbanceBarsPerDirectionAgainstBaseline) {
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

TEST(HtmlSectionsTest, KernelLogEventsMarkedAtTheirOperation) {
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
TEST(HtmlSectionsTest, TopKernelStatesBySelfTime) {
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

TEST(HtmlSectionsTest, BpfPhasesBesideTheModules) {
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

TEST(HtmlSectionsTest, BucketWithoutSamplesHasNoBar) {
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

TEST(HtmlSectionsTest, QuietKernelLogHasNoMarksAndSaysZero) {
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

TEST(HtmlSectionsTest, TimelineDrawsMaxAndMeanOnlyForSeveralOperations) {
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

}  // namespace
}  // namespace cpuhp
