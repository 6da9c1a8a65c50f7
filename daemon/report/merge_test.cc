// SPDX-License-Identifier: GPL-2.0
#include "report/merge.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "report/compare.h"
#include "report/compare_input.h"
#include "stats/histogram.h"
#include "stats/run_stats.h"
#include "stats/smt_switches.h"
#include "testing/synthetic_report.h"
#include "util/json_file.h"

namespace cpuhp {
namespace {

using nlohmann::json;

json LoadReportFixture(const std::string& name) {
  json j;
  std::string err;
  EXPECT_TRUE(LoadReport(std::string(CPUHP_SOURCE_DIR) + "/tests/fixtures/" + name, &j, &err))
      << err;
  return j;
}

std::string WriteTemp(const json& j) {
  char path[] = "/tmp/cpuhp-merge-test.XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << j.dump();
  return path;
}

std::map<uint64_t, uint64_t> Buckets(const json& histogram) {
  std::map<uint64_t, uint64_t> out;
  for (const json& b : histogram["buckets"])
    out[b[0].get<uint64_t>()] += b[1].get<uint64_t>();
  return out;
}

// A second boot of the real guest run: its offline writes 10 % slower
// (every bucket's values times 1.1), written as the daemon writes a summary.
json SlowerBoot(const json& boot) {
  json other = boot;
  other["host"]["boot_id"] = "second-boot";
  Histogram slower;
  for (const json& b : boot["directions"]["offline"]["histogram"]["buckets"])
    for (uint64_t n = 0; n < b[1].get<uint64_t>(); ++n)
      slower.Record(Histogram::BucketLow(b[0].get<int>()) * 11 / 10);
  json summary = SummarizeHistogram(slower);
  summary["histogram"] = slower.ToJson();
  other["directions"]["offline"] = summary;
  return other;
}

TEST(MergeTest, HistogramsAreSummedAndSummariesRecomputedFromTheSum) {
  const json a = LoadReportFixture("report-real-guest-kmod.json");
  const json b = SlowerBoot(a);
  json pooled;
  std::string err;
  ASSERT_TRUE(MergeReports({"a.json", "b.json"}, {a, b}, &pooled, &err)) << err;

  // Bucket by bucket, the sum of the two boots' buckets.
  const json& off = pooled["directions"]["offline"];
  std::map<uint64_t, uint64_t> want = Buckets(a["directions"]["offline"]["histogram"]);
  for (const auto& [index, n] : Buckets(b["directions"]["offline"]["histogram"]))
    want[index] += n;
  EXPECT_EQ(Buckets(off["histogram"]), want);
  // The summary is that of the summed histogram.
  Histogram sum, hb;
  ASSERT_TRUE(sum.FromJson(a["directions"]["offline"]["histogram"], &err)) << err;
  ASSERT_TRUE(hb.FromJson(b["directions"]["offline"]["histogram"], &err)) << err;
  sum.Merge(hb);
  const json expected = SummarizeHistogram(sum);
  for (const char* k : {"count", "min_ns", "max_ns", "p50_ns", "p90_ns", "p99_ns", "p99_9_ns"})
    EXPECT_EQ(off[k], expected[k]) << k;
  EXPECT_DOUBLE_EQ(off["mean_ns"].get<double>(), expected["mean_ns"].get<double>());
  EXPECT_EQ(off["count"].get<uint64_t>(), 2 * a["directions"]["offline"]["count"].get<uint64_t>());
  EXPECT_GT(off["p50_ns"].get<uint64_t>(), a["directions"]["offline"]["p50_ns"].get<uint64_t>());
  // Each boot's values beside it, input order.
  ASSERT_EQ(off["per_boot"].size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const json& boot = (i == 0 ? a : b)["directions"]["offline"];
    EXPECT_EQ(
        off["per_boot"][i],
        json({{"count", boot["count"]}, {"p50_ns", boot["p50_ns"]}, {"p99_ns", boot["p99_ns"]}}))
        << i;
  }
  // Levels too, matched by online_cpus; counters and elapsed time summed.
  const json& level = pooled["per_online_count"]["online"][0];
  EXPECT_EQ(level["online_cpus"], a["per_online_count"]["online"][0]["online_cpus"]);
  EXPECT_EQ(level["count"].get<uint64_t>(),
            2 * a["per_online_count"]["online"][0]["count"].get<uint64_t>());
  EXPECT_EQ(pooled["totals"]["ops"].get<uint64_t>(), 2 * a["totals"]["ops"].get<uint64_t>());
  EXPECT_EQ(pooled["run"]["elapsed_ns"].get<uint64_t>(),
            2 * a["run"]["elapsed_ns"].get<uint64_t>());
  // A kernel phase has no histogram: count summed, min/max exact, per_boot.
  const json& phase = pooled["timing_sources"]["kmod"]["kernel_phases"]["offline"]["_cpu_down"];
  const json& phase_a = a["timing_sources"]["kmod"]["kernel_phases"]["offline"]["_cpu_down"];
  EXPECT_EQ(phase["all"]["count"].get<uint64_t>(), 2 * phase_a["all"]["count"].get<uint64_t>());
  EXPECT_EQ(phase["all"]["max_ns"], phase_a["all"]["max_ns"]);
  EXPECT_EQ(phase["all"]["p50_ns"], phase_a["all"]["p50_ns"]);
  EXPECT_EQ(phase["all"]["per_boot"].size(), 2u);
  EXPECT_EQ(phase["by_online"].size(), phase_a["by_online"].size());
  // The record of what was pooled; the result is a consistent report.
  EXPECT_EQ(pooled["pooled"]["reports"], json({"a.json", "b.json"}));
  EXPECT_EQ(pooled["pooled"]["boots"], 2);
  EXPECT_FALSE(pooled.contains("timeline"));
  EXPECT_TRUE(CheckConsistent(pooled, "pooled", &err)) << err;
  json reread;
  EXPECT_TRUE(ParseReport(DumpJson(pooled, 2), "pooled.json", &reread, &err)) << err;
}

// Issue 29.8: rows were matched by a linear search per row, so an array of
// 100k small rows (1.5 MB) took 20.5 s and three 64 MiB reports were killed
// after 741 s. Three boots with 100k rows each (the array limit), the last
// with 1000 rows the others lack: hashed, this takes about a second under
// ASan; the linear search took minutes.
TEST(MergeTest, ArraysOfAHundredThousandRowsPoolInLinearTime) {
  const json base = SyntheticReport(SyntheticSpec{});
  std::vector<json> boots;
  for (int b = 0; b < 3; ++b) {
    json r = base;
    r["host"]["boot_id"] = "boot-" + std::to_string(b);
    json rows = json::array();
    const int first = b == 2 ? 1000 : 0;
    for (int i = first; i < 100000 + first; ++i)
      rows.push_back({{"name", "row-" + std::to_string(i)}, {"hits", b + 1}});
    r["timing_sources"]["crafted"] = {{"rows", std::move(rows)}};
    boots.push_back(std::move(r));
  }
  json pooled;
  std::string err;
  ASSERT_TRUE(MergeReports({"a.json", "b.json", "c.json"}, boots, &pooled, &err)) << err;
  const json& rows = pooled["timing_sources"]["crafted"]["rows"];
  ASSERT_EQ(rows.size(), 101000u);
  // The first input's order, then the rows only the last one has; "hits"
  // summed over the boots that have the row.
  EXPECT_EQ(rows[0], json({{"name", "row-0"}, {"hits", 3}}));
  EXPECT_EQ(rows[999], json({{"name", "row-999"}, {"hits", 3}}));
  EXPECT_EQ(rows[1000], json({{"name", "row-1000"}, {"hits", 6}}));
  EXPECT_EQ(rows[99999], json({{"name", "row-99999"}, {"hits", 6}}));
  EXPECT_EQ(rows[100000], json({{"name", "row-100000"}, {"hits", 3}}));
  EXPECT_EQ(rows[100999], json({{"name", "row-100999"}, {"hits", 3}}));
}

// The tracepoints' drain counters are counters: summed like the events.
TEST(MergeTest, TracepointDrainCountersAndProcessCpuAreSummed) {
  json a = LoadReportFixture("report-real-cpu1.json");
  json& tp = a["timing_sources"]["tracepoints"];
  tp["drains"] = 14;
  tp["inline_drains"] = 1;
  tp["drainer_boosts"] = 1;
  tp["drain_cpu_ns"] = 1000;
  a["process"] = {{"max_rss_kib", 100}, {"loop_cpu_ns", 5000}, {"loop_ops", 10}};
  json b = a;
  b["process"]["max_rss_kib"] = 300;
  b["host"]["boot_id"] = "second-boot";
  b["timing_sources"]["tracepoints"]["drains"] = 3;
  json pooled;
  std::string err;
  ASSERT_TRUE(MergeReports({"a.json", "b.json"}, {a, b}, &pooled, &err)) << err;
  const json& out = pooled["timing_sources"]["tracepoints"];
  EXPECT_EQ(out["drains"], 17);
  EXPECT_EQ(out["inline_drains"], 2);
  EXPECT_EQ(out["drainer_boosts"], 2);
  EXPECT_EQ(out["drain_cpu_ns"], 2000);
  EXPECT_EQ(out["events"]["parsed"], 2 * tp["events"]["parsed"].get<uint64_t>());
  // The process's loop CPU sums with its operations; the peak RSS is the largest.
  EXPECT_EQ(pooled["process"],
            json({{"max_rss_kib", 300}, {"loop_cpu_ns", 10000}, {"loop_ops", 20}}));
}

// The smt pattern's switch table: each mode's switch times pool as a
// histogram, its counts sum, its CPUs-per-switch extremes are the boots'
// extremes; compare then has a row per mode.
TEST(MergeTest, SmtSwitchesPoolAndCompareByMode) {
  json a = LoadReportFixture("report-real-cpu1.json");
  const auto table = [](std::initializer_list<uint64_t> off_ns, int cpus) {
    SmtSwitchStats st({"off", "on"}, "control");
    uint64_t group = 0, t = 0;
    for (uint64_t ns : off_ns)
      for (int to = 0; to < 2; ++to) {
        OpRecord r;
        r.group = ++group;
        r.smt_control = true;
        r.cpus_changed = cpus;
        r.start_ns = t;
        r.duration_ns = to ? ns / 2 : ns;
        t += 1000000000;
        st.Add(r);
      }
    st.Finish(true);
    return st.ToJson();
  };
  a["smt"] = table({1000000, 1100000, 1200000}, 4);
  json b = a;
  b["host"]["boot_id"] = "second-boot";
  b["smt"] = table({2000000, 2100000}, 6);
  json pooled;
  std::string err;
  ASSERT_TRUE(MergeReports({"a.json", "b.json"}, {a, b}, &pooled, &err)) << err;
  const json& off = pooled["smt"]["to"][0];
  EXPECT_EQ(off["mode"], "off");
  EXPECT_EQ(off["count"], 5);
  EXPECT_EQ(off["switches"], 5);
  EXPECT_EQ(off["cpus_changed"], 3 * 4 + 2 * 6);
  EXPECT_EQ(off["cpus_per_switch_min"], 4);
  EXPECT_EQ(off["cpus_per_switch_max"], 6);
  EXPECT_EQ(off["min_ns"], 1000000);
  EXPECT_EQ(off["max_ns"], 2100000);
  EXPECT_EQ(off["per_boot"].size(), 2u);
  EXPECT_EQ(pooled["smt"]["method"], "control");

  const Comparison c = Compare(a, b, CompareOptions{});
  int rows = 0;
  for (const CompareRow& r : c.rows)
    if (r.group == "smt") {
      ++rows;
      EXPECT_TRUE(r.label == "smt.to[mode=off]" || r.label == "smt.to[mode=on]") << r.label;
    }
  EXPECT_EQ(rows, 2);
}

TEST(MergeTest, ARowOnlyOneBootHasIsPooledWithNullForTheOther) {
  json a = LoadReportFixture("report-real-guest-kmod.json");
  json b = SlowerBoot(a);
  json extra = a["per_online_count"]["offline"][0];
  extra["online_cpus"] = 2;
  b["per_online_count"]["offline"].push_back(extra);
  json pooled;
  std::string err;
  ASSERT_TRUE(MergeReports({"a.json", "b.json"}, {a, b}, &pooled, &err)) << err;
  const json& rows = pooled["per_online_count"]["offline"];
  ASSERT_EQ(rows.size(), a["per_online_count"]["offline"].size() + 1);
  EXPECT_EQ(rows[0]["online_cpus"], 2);  // sorted by online CPUs
  EXPECT_EQ(rows[0]["count"], extra["count"]);
  EXPECT_TRUE(rows[0]["per_boot"][0].is_null());
  EXPECT_EQ(rows[0]["per_boot"][1]["count"], extra["count"]);
  EXPECT_TRUE(CheckConsistent(pooled, "pooled", &err)) << err;
}

// A pooled report merged again counts as its boots, and records their runs.
TEST(MergeTest, APooledInputContributesItsBoots) {
  const json a = LoadReportFixture("report-real-guest-kmod.json");
  const json b = SlowerBoot(a);
  json c = a;
  c["host"]["boot_id"] = "third-boot";
  json ab, abc;
  std::string err;
  ASSERT_TRUE(MergeReports({"a.json", "b.json"}, {a, b}, &ab, &err)) << err;
  ASSERT_TRUE(MergeReports({"ab.json", "c.json"}, {ab, c}, &abc, &err)) << err;
  EXPECT_EQ(abc["pooled"]["reports"], json({"a.json", "b.json", "c.json"}));
  EXPECT_EQ(abc["pooled"]["boots"], 3);
  const json run = {{"started_at", "2026-11-30T07:30:31.127Z"}, {"seed", 3276210823200083250u}};
  json runs = json::array();
  for (const char* boot : {"2a639aa2-d4a9-45f1-9e28-0314e0fe6ae2", "second-boot", "third-boot"}) {
    runs.push_back(run);
    runs.back()["boot_id"] = boot;
  }
  EXPECT_EQ(abc["pooled"]["runs"], runs);
  const json& off = abc["directions"]["offline"];
  ASSERT_EQ(off["per_boot"].size(), 3u);
  EXPECT_EQ(off["per_boot"][1]["p50_ns"], b["directions"]["offline"]["p50_ns"]);
  EXPECT_EQ(off["count"].get<uint64_t>(), 3 * a["directions"]["offline"]["count"].get<uint64_t>());
}

// Issue 28 (5): one run pooled with itself would count as two boots and
// narrow every interval on data measured once.
TEST(MergeTest, TheSameRunTwiceIsRefusedNamingBothFiles) {
  const json a = LoadReportFixture("report-real-guest-kmod.json");
  json pooled;
  std::string err;
  EXPECT_FALSE(MergeReports({"a.json", "a.json"}, {a, a}, &pooled, &err));
  EXPECT_EQ(err,
            "the same run twice: a.json and a.json both hold the run started "
            "2026-11-30T07:30:31.127Z on boot 2a639aa2-d4a9-45f1-9e28-0314e0fe6ae2 with seed "
            "3276210823200083250; pool each run once");
  // A copy of it under another name, and a pooled report with one of its inputs.
  const json b = SlowerBoot(a);
  json ab;
  ASSERT_TRUE(MergeReports({"a.json", "b.json"}, {a, b}, &ab, &err)) << err;
  EXPECT_FALSE(MergeReports({"a.json", "b.json", "copy.json"}, {a, b, a}, &pooled, &err));
  EXPECT_NE(err.find(": a.json and copy.json both hold"), std::string::npos) << err;
  EXPECT_FALSE(MergeReports({"ab.json", "b.json"}, {ab, b}, &pooled, &err));
  EXPECT_EQ(err.find("the same run twice: ab.json (a pooled report) and b.json both hold the run "
                     "started 2026-11-30T07:30:31.127Z on boot second-boot with seed "),
            0u)
      << err;
}

// Issue 29 (8): `merge res/*.json -o res/pooled.json` run a second time finds
// its own output among the inputs.
TEST(MergeTest, MergingAgainIntoItsOwnOutputIsRefused) {
  const json a = LoadReportFixture("report-real-guest-kmod.json");
  const std::string pa = WriteTemp(a);
  const std::string pb = WriteTemp(SlowerBoot(a));
  const std::string out = pa + ".pooled.json";
  std::FILE* devnull = std::fopen("/dev/null", "w");
  ASSERT_EQ(MergeCommand({pa, pb}, out, devnull), 0);
  json first;
  std::string err;
  ASSERT_TRUE(LoadReport(out, &first, &err)) << err;
  EXPECT_EQ(MergeCommand({pa, pb, out}, out, devnull), 2);
  EXPECT_EQ(MergeCommand({pa, pa}, out, devnull), 2);
  std::fclose(devnull);
  // The first pool is left as it was.
  json again;
  ASSERT_TRUE(LoadReport(out, &again, &err)) << err;
  EXPECT_EQ(again, first);
  EXPECT_EQ(again["pooled"]["boots"], 2);
  for (const std::string& p : {pa, pb, out})
    unlink(p.c_str());
}

TEST(MergeTest, OtherSetupsAreRefusedInOneLineNamingBothFiles) {
  const json a = LoadReportFixture("report-real-guest-kmod.json");
  json pooled;
  std::string err;

  json cpus = a;
  cpus["cpus"]["selected"] = "1-2";
  EXPECT_FALSE(MergeReports({"a.json", "b.json"}, {a, cpus}, &pooled, &err));
  EXPECT_EQ(err, "different CPU sets: a.json operated on CPUs 1-3, b.json on 1-2");

  json kernel = a;
  kernel["host"]["kernel_release"] = "6.1.0-58-amd64";
  EXPECT_FALSE(MergeReports({"a.json", "b.json"}, {a, kernel}, &pooled, &err));
  EXPECT_EQ(err,
            "different kernel_release: a.json ran 6.1.0-57-amd64, b.json 6.1.0-58-amd64 (merge "
            "pools boots of one kernel; compare the two kernels instead)");

  json backend = a;
  backend["config"]["backend"] = "sim";
  EXPECT_FALSE(MergeReports({"a.json", "b.json"}, {a, backend}, &pooled, &err));
  EXPECT_EQ(err,
            "different backend: a.json ran sysfs, b.json sim (their latencies are not "
            "comparable)");

  json schema = a;
  schema["schema_version"] = 2;
  EXPECT_FALSE(MergeReports({"a.json", "b.json"}, {a, schema}, &pooled, &err));
  EXPECT_EQ(err, "different schema_version: a.json has 1, b.json 2");

  // The command: exit 2, one line, nothing written.
  const std::string pa = WriteTemp(a);
  const std::string pk = WriteTemp(kernel);
  const std::string ps = WriteTemp(schema);
  const std::string out = pa + ".pooled.json";
  std::FILE* devnull = std::fopen("/dev/null", "w");
  EXPECT_EQ(MergeCommand({pa, pk}, out, devnull), 2);
  EXPECT_EQ(MergeCommand({pa, ps}, out, devnull), 2);
  EXPECT_EQ(MergeCommand({pa, "/nonexistent.json"}, out, devnull), 2);
  EXPECT_EQ(MergeCommand({pa, pa}, "/nonexistent-dir/out.json", devnull), 2);
  EXPECT_NE(access(out.c_str(), F_OK), 0);
  const std::string pb = WriteTemp(SlowerBoot(a));
  EXPECT_EQ(MergeCommand({pa, pb}, out, devnull), 0);  // two boots
  std::fclose(devnull);
  json reread;
  EXPECT_TRUE(LoadReport(out, &reread, &err)) << err;
  EXPECT_TRUE(CheckConsistent(reread, out, &err)) << err;
  EXPECT_EQ(reread["pooled"]["boots"], 2);
  for (const std::string& p : {pa, pb, pk, ps, out})
    unlink(p.c_str());
}

}  // namespace
}  // namespace cpuhp
