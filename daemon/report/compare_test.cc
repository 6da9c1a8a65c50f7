// SPDX-License-Identifier: GPL-2.0
#include "report/compare.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "report/compare_input.h"
#include "report/compare_render.h"
#include "report/compare_thresholds.h"
#include "report/merge.h"
#include "testing/report_fixtures.h"
#include "testing/synthetic_report.h"
#include "util/json_file.h"
#include "util/report_json.h"

namespace cpuhp {
namespace {

using nlohmann::json;
using report_json::Fmt;

const CompareRow* FindRow(const Comparison& c, const std::string& group, const std::string& label) {
  for (const CompareRow& r : c.rows)
    if (r.group == group && r.label == label)
      return &r;
  return nullptr;
}

TEST(CompareTest, IdenticalReportsAreNoChange) {
  SyntheticSpec s;
  Comparison c = CompareSynthetic(s, s);
  EXPECT_FALSE(c.regressed());
  EXPECT_EQ(c.improvements(), 0);
  const CompareRow* all = FindRow(c, "offline latency", "all");
  ASSERT_NE(all, nullptr);
  EXPECT_EQ(all->p50.verdict, Verdict::kNoChange);
  EXPECT_DOUBLE_EQ(all->p50.ratio, 1.0);
  EXPECT_TRUE(all->p50.has_ci);
  EXPECT_LE(all->p50.ci_lo, 1.0);
  EXPECT_GE(all->p50.ci_hi, 1.0);
  // Per online-count level rows, seed 001's table: 2, 3, 4 online CPUs.
  EXPECT_NE(FindRow(c, "offline latency", "2"), nullptr);
  EXPECT_NE(FindRow(c, "offline latency", "4"), nullptr);
  EXPECT_NE(FindRow(c, "online latency", "3"), nullptr);
}

TEST(CompareTest, SameModelOtherSeedIsNoChange) {
  SyntheticSpec b, c;
  c.seed = 99;
  Comparison r = CompareSynthetic(b, c);
  EXPECT_FALSE(r.regressed()) << CompareText(r);
  EXPECT_EQ(r.improvements(), 0) << CompareText(r);
}

TEST(CompareTest, TwentyPercentSlowerRegresses) {
  SyntheticSpec b, c;
  c.seed = 2;
  c.offline_scale = 1.2;
  Comparison r = CompareSynthetic(b, c);
  EXPECT_TRUE(r.regressed());
  for (const char* level : {"2", "3", "4", "all"}) {
    const CompareRow* row = FindRow(r, "offline latency", level);
    ASSERT_NE(row, nullptr) << level;
    EXPECT_EQ(row->p50.verdict, Verdict::kRegressed) << level;
    EXPECT_NEAR(row->p50.ratio, 1.2, 0.03) << level;
    EXPECT_GT(row->p50.ci_lo, 1.05) << level;
  }
  // The online direction did not move.
  EXPECT_EQ(FindRow(r, "online latency", "all")->p50.verdict, Verdict::kNoChange);
}

TEST(CompareTest, TwentyPercentFasterImproves) {
  SyntheticSpec b, c;
  c.seed = 3;
  c.online_scale = 0.8;
  Comparison r = CompareSynthetic(b, c);
  EXPECT_FALSE(r.regressed());
  const CompareRow* row = FindRow(r, "online latency", "all");
  EXPECT_EQ(row->p50.verdict, Verdict::kImproved);
  EXPECT_NEAR(row->p50.ratio, 0.8, 0.02);
  EXPECT_LT(row->p50.ci_hi, 0.95);
}

TEST(CompareTest, FivePercentShiftDependsOnTheThreshold) {
  SyntheticSpec b, c;
  c.seed = 4;
  c.offline_scale = 1.05;
  // Inside a 5 % band the CI cannot exclude it: no change.
  Comparison at5 = CompareSynthetic(b, c, 0.05);
  const CompareRow* row = FindRow(at5, "offline latency", "all");
  EXPECT_NEAR(row->p50.ratio, 1.05, 0.02);
  EXPECT_LT(row->p50.ci_lo, 1.05);
  EXPECT_GT(row->p50.ci_lo, 1.0);  // but the shift itself is seen
  EXPECT_EQ(row->p50.verdict, Verdict::kNoChange);
  // Against 2 %, a 5 % shift is a regression.
  Comparison at2 = CompareSynthetic(b, c, 0.02);
  EXPECT_EQ(FindRow(at2, "offline latency", "all")->p50.verdict, Verdict::kRegressed);
  EXPECT_TRUE(at2.regressed());
}

TEST(CompareTest, PerMetricOverride) {
  SyntheticSpec b, c;
  c.seed = 5;
  c.offline_scale = 1.2;
  CompareOptions o;
  std::string err;
  ASSERT_TRUE(ParseThreshold("offline=30%", &o, &err)) << err;
  Comparison r = Compare(SyntheticReport(b), SyntheticReport(c), o);
  EXPECT_FALSE(r.regressed()) << CompareText(r);
  EXPECT_DOUBLE_EQ(FindRow(r, "offline latency", "all")->p50.threshold, 0.30);
  EXPECT_DOUBLE_EQ(FindRow(r, "online latency", "all")->p50.threshold, 0.05);
}

TEST(CompareTest, ErrorsAndRestoreAreChecks) {
  SyntheticSpec b, c;
  c.failed = 3;
  c.restore_ok = false;
  Comparison r = CompareSynthetic(b, c);
  EXPECT_TRUE(r.regressed());
  int regressed_checks = 0;
  for (const CompareCheck& k : r.checks)
    regressed_checks += k.verdict == Verdict::kRegressed;
  EXPECT_EQ(regressed_checks, 2);  // failed_operations, restore
}

TEST(CompareTest, OptionalSectionsComparedGenericallyUnknownSkipped) {
  SyntheticSpec s;
  json b = SyntheticReport(s);
  json c = b;
  b["mystery"] = {{"hello", "world"}};
  c["mystery"] = {{"hello", "there"}};
  c["only_in_candidate"] = 1;
  Comparison r = Compare(b, c, CompareOptions{});
  std::string text = CompareText(r);
  EXPECT_NE(text.find("section mystery: no latency summaries"), std::string::npos) << text;
  EXPECT_NE(text.find("section only_in_candidate: only in the candidate"), std::string::npos);
}

// Real timing sources (a guest run with the module, tracepoints and kernel
// log health): a kernel state is matched by direction, where, state and
// function, so the same state name of the other direction is another row.
TEST(CompareTest, RealTimingSourcesMatchedByFullIdentity) {
  json base = LoadFixture("report-real-guest-kmod.json");
  json cand = base;
  const json& states = base["timing_sources"]["tracepoints"]["kernel_states"];
  // A state that runs in both directions (x86/mce:online: mce_cpu_pre_down
  // offline, mce_cpu_online online) or under two functions.
  size_t twin = states.size();
  for (size_t i = 0; i < states.size() && twin == states.size(); i++)
    for (size_t j = 0; j < states.size(); j++)
      if (i != j && states[i]["state"].is_string() && states[i]["state"] == states[j]["state"] &&
          states[i]["p50_ns"].get<uint64_t>() > 0)
        twin = i;
  ASSERT_LT(twin, states.size());
  json& changed = cand["timing_sources"]["tracepoints"]["kernel_states"][twin];
  changed["p50_ns"] = changed["p50_ns"].get<uint64_t>() * 2;
  Comparison r = Compare(base, cand, CompareOptions{});

  size_t state_rows = 0, doubled = 0;
  std::set<std::string> labels;
  for (const CompareRow& row : r.rows) {
    EXPECT_TRUE(labels.insert(row.group + "|" + row.label).second) << row.label;
    if (row.label.find(".kernel_states[") == std::string::npos)
      continue;
    EXPECT_EQ(row.group, "timing_sources.tracepoints");
    state_rows++;
    if (row.p50.ratio == 2.0) {
      doubled++;
    } else if (row.p50.base_ns > 0) {
      EXPECT_EQ(row.p50.ratio, 1.0) << row.label;
    }
  }
  EXPECT_EQ(state_rows, states.size());
  EXPECT_EQ(doubled, 1u);
  const json& st = states[twin];
  std::string key = "direction=" + st["direction"].get<std::string>() +
                    ",state=" + st["state"].get<std::string>() +
                    ",function=" + st["function"].get<std::string>() +
                    ",where=" + st["where"].get<std::string>();
  const CompareRow* row = FindRow(r, "timing_sources.tracepoints",
                                  "timing_sources.tracepoints.kernel_states[" + key + "]");
  ASSERT_NE(row, nullptr) << key;
  EXPECT_EQ(row->p50.ratio, 2.0);
  EXPECT_EQ(row->p50.verdict, Verdict::kNotApplicable);  // no buckets in kernel_states
  // kmod kernel_phases per online count: one row per phase and level.
  const CompareRow* kmod =
      FindRow(r, "timing_sources.kmod",
              "timing_sources.kmod.kernel_phases.offline.takedown_cpu.by_online[online_cpus=" +
                  std::to_string(base["timing_sources"]["kmod"]["kernel_phases"]["offline"]
                                     ["takedown_cpu"]["by_online"][0]["online_cpus"]
                                         .get<int>()) +
                  "]");
  ASSERT_NE(kmod, nullptr) << CompareText(r);
  EXPECT_EQ(kmod->p50.ratio, 1.0);

  // A source that measured in one report only is named in a note.
  cand["timing_sources"]["kmod"] = {{"status", "unavailable"},
                                    {"reason", "/dev/cpuhp_probe: No such file or directory"}};
  // The note is wrapped at 80 columns: read it as one line.
  std::string text = std::regex_replace(CompareText(Compare(base, cand, CompareOptions{})),
                                        std::regex("\n +"), " ");
  EXPECT_NE(text.find("note: timing source kmod: ok in the baseline, unavailable in the candidate "
                      "(/dev/cpuhp_probe: No such file or directory): not compared"),
            std::string::npos)
      << text;
}

// Disturbance probes of a real cpu1 run: during-operation buckets compared.
TEST(CompareTest, RealDisturbanceRowsPerBucket) {
  json base = LoadFixture("report-real-cpu1.json");
  Comparison r = Compare(base, base, CompareOptions{});
  for (const char* b : {"baseline", "offline", "online"}) {
    const CompareRow* row = FindRow(r, "timing_sources.disturbance",
                                    std::string("timing_sources.disturbance.total.") + b);
    ASSERT_NE(row, nullptr) << b << CompareText(r);
    EXPECT_EQ(row->base_count, base["timing_sources"]["disturbance"]["total"][b]["count"]);
    EXPECT_EQ(row->p99.ratio, 1.0);
  }
}

TEST(CompareTest, CommandExitCodes) {
  SyntheticSpec s, slow;
  slow.offline_scale = 1.2;
  slow.seed = 7;
  std::string a = WriteTempReport(SyntheticReport(s));
  std::string b = WriteTempReport(SyntheticReport(slow));
  json v2 = SyntheticReport(s);
  v2["schema_version"] = 2;
  std::string bad = WriteTempReport(v2);
  SyntheticSpec other_cpus;
  other_cpus.cpus = "1-7";
  std::string cpus = WriteTempReport(SyntheticReport(other_cpus));
  std::FILE* devnull = std::fopen("/dev/null", "w");
  CompareOptions o;
  EXPECT_EQ(CompareCommand(a, a, o, "text", devnull), 0);
  EXPECT_EQ(CompareCommand(a, b, o, "markdown", devnull), 1);
  EXPECT_EQ(CompareCommand(b, a, o, "text", devnull), 0);  // faster is fine
  EXPECT_EQ(CompareCommand(a, bad, o, "text", devnull), 2);
  EXPECT_EQ(CompareCommand(a, cpus, o, "text", devnull), 2);
  EXPECT_EQ(CompareCommand(a, "/nonexistent.json", o, "text", devnull), 2);
  std::fclose(devnull);

  json base, cand;
  std::string err;
  EXPECT_FALSE(LoadReport(bad, &base, &err));
  EXPECT_EQ(err, bad + ": schema_version 2, this cpuhp-stress reads 1");
  ASSERT_TRUE(LoadReport(a, &base, &err));
  ASSERT_TRUE(LoadReport(cpus, &cand, &err));
  EXPECT_FALSE(CheckComparable(base, cand, &err));
  EXPECT_EQ(err, "different CPU sets: baseline operated on CPUs 1-3, candidate on 1-7");
  for (const std::string& p : {a, b, bad, cpus})
    unlink(p.c_str());
}

TEST(CompareTest, P99WithoutAnIntervalSaysWhy) {
  SyntheticSpec small;
  small.ops_per_level = 300;  // 900 a side in "all", 300 per level: below 1000
  Comparison c = CompareSynthetic(small, small);
  const CompareRow* all = FindRow(c, "offline latency", "all");
  ASSERT_NE(all, nullptr);
  EXPECT_FALSE(all->p99.has_ci);
  EXPECT_TRUE(all->p50.has_ci);
  bool said = false;
  for (const std::string& n : c.notes)
    said |= n.find("p99: no interval or verdict in") != std::string::npos &&
            n.find("fewer than 1000 operations a side") != std::string::npos;
  EXPECT_TRUE(said);
  Comparison big = CompareSynthetic(SyntheticSpec{}, SyntheticSpec{});  // 3000 a side in "all"
  EXPECT_TRUE(FindRow(big, "offline latency", "all")->p99.has_ci);
}

// Several boots per side (issue 14): each side pooled (report/merge.h), and
// an improved or regressed verdict held to every boot.
json Pool(const std::vector<SyntheticSpec>& boots) {
  std::vector<json> reports;
  std::vector<std::string> paths;
  for (const SyntheticSpec& s : boots) {
    reports.push_back(SyntheticReport(s));
    paths.push_back("boot" + std::to_string(paths.size() + 1) + ".json");
  }
  json out;
  std::string err;
  EXPECT_TRUE(MergeReports(paths, reports, &out, &err)) << err;
  return out;
}

// One boot per online-latency scale, seeds from `seed` on.
std::vector<SyntheticSpec> Boots(std::initializer_list<double> online_scales, uint64_t seed) {
  std::vector<SyntheticSpec> out;
  for (double scale : online_scales) {
    SyntheticSpec s;
    s.online_scale = scale;
    s.seed = seed++;
    out.push_back(s);
  }
  return out;
}

const json* FindJsonRow(const json& j, const std::string& group, const std::string& label) {
  for (const json& r : j["rows"])
    if (r["group"] == group && r["label"] == label)
      return &r;
  return nullptr;
}

TEST(CompareBootsTest, EveryBootFasterKeepsTheVerdict) {
  Comparison r =
      Compare(Pool(Boots({1.0, 1.0, 1.0}, 10)), Pool(Boots({0.8, 0.8, 0.8}, 20)), CompareOptions{});
  const CompareRow* row = FindRow(r, "online latency", "all");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->p50.verdict, Verdict::kImproved) << CompareText(r);
  ASSERT_TRUE(row->p50.has_boots());
  EXPECT_FALSE(row->p50.boots_disagree);
  EXPECT_EQ(row->p50.base_boots_ns.size(), 3u);
  EXPECT_EQ(row->p50.cand_boots_ns.size(), 3u);
  EXPECT_LT(*std::max_element(row->p50.cand_boots_ns.begin(), row->p50.cand_boots_ns.end()),
            *std::min_element(row->p50.base_boots_ns.begin(), row->p50.base_boots_ns.end()));
  EXPECT_EQ(r.base.boots, 3u);
  EXPECT_EQ(r.boots_disagree(), 0);
  const json j = CompareJson(r);
  const json* jr = FindJsonRow(j, "online latency", "all");
  ASSERT_NE(jr, nullptr);
  EXPECT_EQ((*jr)["boots_disagree"], false);
  EXPECT_EQ((*jr)["p50"]["verdict"], "improved");
  EXPECT_EQ((*jr)["p50"]["boots"]["base_ns"].size(), 3u);
  EXPECT_EQ(j["boots_disagree_rows"], 0);
  EXPECT_EQ(j["candidate_boots"], 3);
  const std::string text = CompareText(r);
  EXPECT_NE(text.find("boots disagree in 0 rows)"), std::string::npos) << text;
  EXPECT_NE(text.find(" in 3 boots"), std::string::npos) << text;
  EXPECT_EQ(text.find("boots disagree,"), std::string::npos) << text;
}

TEST(CompareBootsTest, OverlappingBootsMakeNoChange) {
  // Two candidate boots 30 % faster, one 10 % slower: the pooled median is
  // faster, but not every boot is.
  Comparison r =
      Compare(Pool(Boots({1.0, 1.0, 1.0}, 10)), Pool(Boots({0.7, 0.7, 1.1}, 20)), CompareOptions{});
  const CompareRow* row = FindRow(r, "online latency", "all");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->p50.pooled_verdict, Verdict::kImproved) << CompareText(r);
  EXPECT_EQ(row->p50.verdict, Verdict::kNoChange);
  EXPECT_TRUE(row->p50.boots_disagree);
  EXPECT_TRUE(row->boots_disagree());
  EXPECT_GE(r.boots_disagree(), 1);
  const json j = CompareJson(r);
  const json* jr = FindJsonRow(j, "online latency", "all");
  ASSERT_NE(jr, nullptr);
  EXPECT_EQ((*jr)["boots_disagree"], true);
  EXPECT_EQ((*jr)["p50"]["boots_disagree"], true);
  EXPECT_EQ((*jr)["p50"]["verdict"], "no change");
  EXPECT_EQ((*jr)["p50"]["boots"]["pooled_verdict"], "improved");
  EXPECT_GT((*jr)["p50"]["boots"]["cand_range_ns"][1].get<double>(),
            (*jr)["p50"]["boots"]["base_range_ns"][0].get<double>());
  EXPECT_EQ(j["boots_disagree_rows"], r.boots_disagree());
  const std::string text = std::regex_replace(CompareText(r), std::regex("\n +"), " ");
  EXPECT_NE(text.find("; boots disagree, pooled improved"), std::string::npos) << text;
  EXPECT_NE(text.find(Fmt("boots disagree in %d rows)", r.boots_disagree())), std::string::npos)
      << text;
  EXPECT_NE(text.find("note: boots disagree in"), std::string::npos) << text;
  EXPECT_NE(CompareMarkdown(r).find("| no change (boots disagree) |"), std::string::npos);
}

// One boot a side, pooled or not: today's comparison, line for line.
TEST(CompareBootsTest, OneBootPerSideIsTheTwoReportCompare) {
  SyntheticSpec b, c;
  c.seed = 3;
  c.online_scale = 0.8;
  Comparison plain = CompareSynthetic(b, c);
  Comparison pooled = Compare(Pool({b}), Pool({c}), CompareOptions{});
  EXPECT_FALSE(plain.has_boots());
  EXPECT_FALSE(pooled.has_boots());
  EXPECT_EQ(CompareText(pooled), CompareText(plain));
  const std::string md = CompareMarkdown(plain);  // "bootstrap" is there, no boots
  EXPECT_EQ(md.find("boots (ms)"), std::string::npos) << md;
  EXPECT_EQ(md.find("boots disagree"), std::string::npos) << md;
  EXPECT_FALSE(CompareJson(plain).contains("boots_disagree_rows"));
}

TEST(CompareBootsTest, CommandPoolsEachSideAndReadsPooledReports) {
  std::vector<std::string> base, cand, all;
  for (const SyntheticSpec& s : Boots({1.0, 1.0}, 10))
    base.push_back(WriteTempReport(SyntheticReport(s)));
  for (const SyntheticSpec& s : Boots({0.8, 0.8}, 20))
    cand.push_back(WriteTempReport(SyntheticReport(s)));
  const std::string pooled_base = WriteTempReport(json::object());
  const std::string out_files = WriteTempReport(json::object());
  const std::string out_pooled = WriteTempReport(json::object());
  std::FILE* devnull = std::fopen("/dev/null", "w");
  ASSERT_EQ(MergeCommand(base, pooled_base, devnull), 0);
  CompareOptions o;
  EXPECT_EQ(CompareCommand(base, cand, o, "json", devnull, out_files), 0);
  EXPECT_EQ(CompareCommand({pooled_base}, cand, o, "json", devnull, out_pooled), 0);
  EXPECT_EQ(CompareCommand(cand, base, o, "text", devnull), 1);  // slower
  // A side mixing kernels is refused (exit 2).
  json other = SyntheticReport(SyntheticSpec{});
  other["host"]["kernel_release"] = "6.2.0-test";
  const std::string other_kernel = WriteTempReport(other);
  EXPECT_EQ(CompareCommand({base[0], other_kernel}, cand, o, "text", devnull), 2);
  std::fclose(devnull);
  // From the files or from their pool: the same rows.
  json from_files, from_pooled;
  std::string err;
  ASSERT_TRUE(LoadJsonFile(out_files, 1 << 24, &from_files, &err)) << err;
  ASSERT_TRUE(LoadJsonFile(out_pooled, 1 << 24, &from_pooled, &err)) << err;
  EXPECT_EQ(from_files["rows"], from_pooled["rows"]);
  EXPECT_EQ(from_files["baseline"], base[0] + ", " + base[1]);
  EXPECT_EQ(from_files["baseline_boots"], 2);
  EXPECT_EQ(FindJsonRow(from_files, "online latency", "all")->at("p50").at("verdict"), "improved");
  for (const std::vector<std::string>& v : {base, cand})
    for (const std::string& p : v)
      unlink(p.c_str());
  for (const std::string& p : {pooled_base, out_files, out_pooled, other_kernel})
    unlink(p.c_str());
}

// Issue 28 item 4: a sweep stopped inside its second level compared with a
// complete one. Its "all" rows would pool levels 2-3 against 2-4 (a
// "regression" that is only more CPUs online); only the level both measured
// fully is compared, and a note says so in every format.
TEST(CompareTest, SweepsOfUnlikeLevelsCompareOnlyTheLevelsBothMeasured) {
  auto sweep = [](std::vector<int> complete, std::vector<int> missing) {
    SyntheticSpec s;
    s.ops_per_level = 1000;
    nlohmann::json r = SyntheticReport(s);
    r["config"]["pattern"] = "sweep";
    r["cpus"]["schedule"] = {{"victim", 3},
                             {"levels", {2, 3, 4}},
                             {"cycles_per_level", 1000},
                             {"levels_complete", complete},
                             {"levels_missing", missing}};
    return r;
  };
  const nlohmann::json full = sweep({2, 3, 4}, {});
  Comparison alike = Compare(full, full, CompareOptions{});
  EXPECT_TRUE(std::any_of(alike.rows.begin(), alike.rows.end(),
                          [](const CompareRow& r) { return r.label == "all"; }));
  nlohmann::json cut = sweep({2}, {3, 4});
  for (const char* dir : {"offline", "online"}) {
    nlohmann::json& levels = cut["per_online_count"][dir];
    const int keep = std::string(dir) == "offline" ? 2 : 1;  // level 2's rows
    levels.erase(std::remove_if(levels.begin(), levels.end(),
                                [&](const nlohmann::json& l) { return l["online_cpus"] != keep; }),
                 levels.end());
  }
  Comparison c = Compare(full, cut, CompareOptions{});
  std::set<std::string> rows;
  for (const CompareRow& r : c.rows)
    rows.insert(r.group + " " + r.label);
  EXPECT_EQ(rows, (std::set<std::string>{"offline latency 2", "online latency 1"}));
  const std::string note =
      "sweeps measured different levels: the baseline measured levels 2, 3, 4 fully, the "
      "candidate measured level 2 fully (levels 3, 4 not measured); compared only the "
      "levels both measured fully (2)";
  ASSERT_FALSE(c.notes.empty());
  EXPECT_EQ(c.notes[0].substr(0, note.size()), note);
  for (const std::string& text : {CompareText(c), CompareMarkdown(c), CompareJson(c).dump()})
    EXPECT_NE(text.find("compared only the levels both"), std::string::npos) << text;
}

}  // namespace
}  // namespace cpuhp
