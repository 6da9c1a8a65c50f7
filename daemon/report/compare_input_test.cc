// SPDX-License-Identifier: GPL-2.0
#include "report/compare_input.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

#include "report/compare.h"
#include "stats/histogram.h"
#include "stats/run_stats.h"
#include "testing/synthetic_report.h"
#include "util/json_file.h"

namespace cpuhp {
namespace {

using nlohmann::json;

// The latency summaries and histogram buckets of `j`, counted
// independently of SizeCheck.
struct Sizes {
  size_t summaries = 0;
  size_t buckets = 0;
};
void CountSizes(const json& j, Sizes* s) {
  if (j.is_object() && j.contains("count") && j.contains("p50_ns"))
    ++s->summaries;
  if (j.is_object() && j.contains("buckets") && j.contains("m2"))
    s->buckets += j["buckets"].size();
  if (j.is_structured())
    for (const json& v : j)
      CountSizes(v, s);
}
Sizes SizesOf(const json& j) {
  Sizes s;
  CountSizes(j, &s);
  return s;
}

// A timing source's rows: `n` latency summaries with a histogram of
// `buckets` buckets each, as a crafted report puts them.
json CraftedSource(int n, int buckets) {
  Histogram h;
  for (int i = 0; i < buckets; ++i)
    h.Record(Histogram::BucketLow(1100 + i));
  json summary = SummarizeHistogram(h);
  summary["histogram"] = h.ToJson();
  json rows = json::array();
  for (int i = 0; i < n; ++i) {
    rows.push_back(summary);
    rows.back()["name"] = "s" + std::to_string(i);
  }
  return {{"status", "ok"}, {"rows", rows}};
}

// Issue 16: a crafted report costs one line and exit 2, not minutes and a
// gigabyte: an array past any report's size (a 10-million-element one was
// 10 million map keys), more level rows than online counts exist (each is
// bootstrapped), more buckets than a histogram has.
TEST(CompareTest, CraftedSizesAreRefusedNamingTheField) {
  const json r = SyntheticReport(SyntheticSpec{});
  std::string err;
  json got;
  json at_cap = r;
  at_cap["extra"] = json::array();
  for (int i = 0; i < 100000; ++i)
    at_cap["extra"].push_back(0);
  EXPECT_TRUE(ParseReport(DumpJson(at_cap), "r.json", &got, &err)) << err;
  json long_array = at_cap;
  long_array["extra"].push_back(0);
  EXPECT_FALSE(ParseReport(DumpJson(long_array), "r.json", &got, &err));
  EXPECT_EQ(err, "r.json: /extra: more than 100000 elements in one array");
  json nested = r;
  nested["kernel"]["lines"] = json::array({json::array()});
  for (int i = 0; i <= 100000; ++i)
    nested["kernel"]["lines"][0].push_back(i);
  EXPECT_FALSE(ParseReport(DumpJson(nested), "r.json", &got, &err));
  EXPECT_EQ(err, "r.json: /kernel/lines/0: more than 100000 elements in one array");
  json top = json::array();
  for (int i = 0; i <= 100000; ++i)
    top.push_back(i);
  EXPECT_FALSE(ParseReport(DumpJson(top), "r.json", &got, &err));
  EXPECT_EQ(err, "r.json: /: more than 100000 elements in one array");

  json levels = r;
  json& rows = levels["per_online_count"]["offline"];
  while (rows.size() < 8194)
    rows.push_back(json::object());
  EXPECT_FALSE(ParseReport(DumpJson(levels), "r.json", &got, &err));
  EXPECT_EQ(err,
            "r.json: /per_online_count/offline: 8194 rows, more than the 8193 online CPU counts a "
            "machine can have");

  json buckets = r;
  json& b = buckets["directions"]["online"]["histogram"]["buckets"];
  b = json::array();
  for (int i = 0; i < 4353; ++i)
    b.push_back({i, 1});
  EXPECT_FALSE(ParseReport(DumpJson(buckets), "r.json", &got, &err));
  EXPECT_EQ(err,
            "r.json: /directions/online/histogram/buckets: 4353 buckets, more than the 4352 a "
            "histogram has");

  // The buckets of all histograms together (limit lowered: a million
  // buckets would make this test slow, not different).
  json heavy = r;
  json row = r["per_online_count"]["offline"][0];
  row["histogram"]["buckets"] = json::array();
  for (int i = 0; i < 250; ++i)
    row["histogram"]["buckets"].push_back({i, 1});
  for (const char* dir : {"offline", "online"})
    heavy["per_online_count"][dir] = json::array({row, row});
  ReportLimits limits;
  limits.buckets = 1000 + SizesOf(r["directions"]).buckets;
  EXPECT_TRUE(ParseReport(DumpJson(heavy), "r.json", &got, &err, limits)) << err;
  heavy["per_online_count"]["offline"].push_back(row);
  EXPECT_FALSE(ParseReport(DumpJson(heavy), "r.json", &got, &err, limits));
  // Keys in order: offline's three rows, then online's first two.
  EXPECT_EQ(err, "r.json: /per_online_count/online/1/histogram/buckets: more than " +
                     std::to_string(limits.buckets) +
                     " histogram buckets in the report's histograms together (the limit of a "
                     "report; compare bootstraps each summary over its buckets)");
  EXPECT_EQ(ReportLimits{}.buckets, 1000000u);

  // The commands: exit 2, the file named.
  std::string ok = WriteTempReport(r), bad = WriteTempReport(long_array);
  std::FILE* devnull = std::fopen("/dev/null", "w");
  EXPECT_EQ(CompareCommand(ok, bad, CompareOptions{}, "text", devnull), 2);
  std::fclose(devnull);
  EXPECT_FALSE(LoadReport(bad, &got, &err));
  EXPECT_EQ(err, bad + ": /extra: more than 100000 elements in one array");
  unlink(ok.c_str());
  unlink(bad.c_str());
}

// Issue 29.8: 2000 histogram summaries under timing_sources (52 MB) took
// 370 s and 1 GB to compare with itself: only per_online_count's buckets
// were counted. Summaries and buckets count wherever they sit, and the
// report is refused before compare bootstraps anything.
TEST(CompareTest, SummariesAndBucketsCountWhereverTheySit) {
  json r = SyntheticReport(SyntheticSpec{});
  std::string err;
  json got;
  const Sizes own = SizesOf(r);
  ASSERT_GT(own.buckets, 0u);
  ReportLimits limits;
  limits.buckets = own.buckets + 10 * 200;
  r["timing_sources"]["crafted"] = CraftedSource(10, 200);
  EXPECT_TRUE(ParseReport(DumpJson(r), "r.json", &got, &err, limits)) << err;
  r["timing_sources"]["crafted"] = CraftedSource(11, 200);
  EXPECT_FALSE(ParseReport(DumpJson(r), "r.json", &got, &err, limits));
  EXPECT_EQ(err, "r.json: /timing_sources/crafted/rows/10/histogram/buckets: more than " +
                     std::to_string(limits.buckets) +
                     " histogram buckets in the report's histograms together (the limit of a "
                     "report; compare bootstraps each summary over its buckets)");

  // Summaries without a histogram count too (per_cpu has two a CPU).
  limits = ReportLimits{};
  limits.summaries = own.summaries + 3;
  json plain = {{"name", "x"}, {"count", 1}, {"p50_ns", 5}};
  r["timing_sources"]["crafted"] = {{"rows", json::array({plain, plain, plain})}};
  EXPECT_TRUE(ParseReport(DumpJson(r), "r.json", &got, &err, limits)) << err;
  r["timing_sources"]["crafted"]["rows"].push_back(plain);
  EXPECT_FALSE(ParseReport(DumpJson(r), "r.json", &got, &err, limits));
  EXPECT_EQ(err, "r.json: /timing_sources/crafted/rows/3: more than " +
                     std::to_string(limits.summaries) +
                     " latency summaries (the limit of a report)");
  EXPECT_EQ(ReportLimits{}.summaries, 200000u);

  // The shape (2000 summaries of 2000 buckets) at the default
  // limits goes through the binary in tests/hostile/report_cost_test.py.
  EXPECT_EQ(ReportLimits{}.buckets, 1000000u);
}

// Issue 15: a candidate with tripled p50/p99 summaries over an unchanged
// histogram showed "ratio 3.000 ... no change"; a p99 above max passed.
TEST(CompareTest, SummariesThatDisagreeWithTheirHistogramAreRefused) {
  json r = SyntheticReport(SyntheticSpec{});
  std::string err;
  EXPECT_TRUE(CheckConsistent(r, "cand.json", &err)) << err;
  json tripled = r;
  for (const char* k : {"p50_ns", "p99_ns"})
    tripled["directions"]["offline"][k] = 3 * tripled["directions"]["offline"][k].get<uint64_t>();
  EXPECT_FALSE(CheckConsistent(tripled, "cand.json", &err));
  EXPECT_EQ(err.rfind("cand.json directions.offline: p50_ns ", 0), 0u) << err;
  EXPECT_NE(err.find("disagrees with its histogram"), std::string::npos) << err;
  json above = r;
  json& level = above["per_online_count"]["online"][0];
  level["p99_ns"] = level["max_ns"].get<uint64_t>() * 2;
  EXPECT_FALSE(CheckConsistent(above, "cand.json", &err));
  EXPECT_NE(err.find("per_online_count.online[online_cpus="), std::string::npos) << err;
  json count = r;
  count["directions"]["online"]["count"] =
      count["directions"]["online"]["count"].get<uint64_t>() + 1;
  EXPECT_FALSE(CheckConsistent(count, "cand.json", &err));
  EXPECT_NE(err.find("but its histogram holds"), std::string::npos) << err;

  std::string a = WriteTempReport(r), b = WriteTempReport(tripled);
  std::FILE* devnull = std::fopen("/dev/null", "w");
  EXPECT_EQ(CompareCommand(a, b, CompareOptions{}, "text", devnull), 2);
  std::fclose(devnull);
  unlink(a.c_str());
  unlink(b.c_str());
}

TEST(CompareTest, RunsOfAnotherKindAreRefused) {
  json base = SyntheticReport(SyntheticSpec{});
  std::string err;
  struct Case {
    const char* key;
    json value;
    const char* want;
  };
  for (const Case& c :
       {Case{"backend", "sysfs", "different backend: baseline ran sim, candidate sysfs"},
        Case{"pattern", "sweep", "different pattern: baseline ran roundrobin, candidate sweep"},
        Case{"interval", "10ms", "different interval: baseline ran ?, candidate 10ms"}}) {
    json cand = base;
    cand["config"][c.key] = c.value;
    EXPECT_FALSE(CheckComparable(base, cand, &err)) << c.key;
    EXPECT_EQ(err.rfind(c.want, 0), 0u) << err;
  }
  json interim = base;
  interim["interim"] = true;
  EXPECT_FALSE(CheckComparable(base, interim, &err));
  EXPECT_EQ(err,
            "the candidate is an interim report (the run was still going), the other a final one");
  EXPECT_TRUE(CheckComparable(base, base, &err));
}

}  // namespace
}  // namespace cpuhp
