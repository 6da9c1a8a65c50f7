// SPDX-License-Identifier: GPL-2.0
#include "stats/run_stats.h"

#include <errno.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/errno_name.h"

namespace cpuhp {
namespace {

using nlohmann::json;

OpRecord Op(int cpu, Direction dir, uint64_t duration_ns, int online_before, int err = 0,
            bool readback_ok = true) {
  OpRecord r;
  r.cpu = cpu;
  r.dir = dir;
  r.duration_ns = duration_ns;
  r.online_before = online_before;
  r.err = err;
  r.readback_ok = readback_ok;
  return r;
}

constexpr Direction kOff = Direction::kOffline;
constexpr Direction kOn = Direction::kOnline;

std::set<std::string> Keys(const json& j) {
  std::set<std::string> keys;
  for (const auto& [k, v] : j.items()) {
    keys.insert(k);
  }
  return keys;
}

const std::set<std::string> kSummaryKeys = {"count",  "min_ns", "max_ns", "mean_ns", "stddev_ns",
                                            "p50_ns", "p90_ns", "p99_ns", "p99_9_ns"};

void ExpectSummaryShape(const json& s, const std::string& where) {
  ASSERT_EQ(Keys(s), kSummaryKeys) << where;
  for (const auto& [k, v] : s.items()) {
    if (k == "mean_ns" || k == "stddev_ns") {
      EXPECT_TRUE(v.is_number_float()) << where << "." << k;
    } else {
      EXPECT_TRUE(v.is_number_unsigned()) << where << "." << k;
    }
  }
}

// Equal, except floats may differ by a relative 1e-9 (merge order rounding).
void ExpectJsonNear(const json& a, const json& b, const std::string& path = "") {
  if (a.is_number_float() || b.is_number_float()) {
    ASSERT_TRUE(a.is_number() && b.is_number()) << path;
    double x = a.get<double>();
    double y = b.get<double>();
    EXPECT_NEAR(x, y, 1e-9 * std::max(std::abs(x), std::abs(y))) << path;
    return;
  }
  ASSERT_EQ(a.type(), b.type()) << path;
  if (a.is_object()) {
    ASSERT_EQ(Keys(a), Keys(b)) << path;
    for (const auto& [k, v] : a.items()) {
      ExpectJsonNear(v, b[k], path + "." + k);
    }
  } else if (a.is_array()) {
    ASSERT_EQ(a.size(), b.size()) << path;
    for (size_t i = 0; i < a.size(); i++) {
      ExpectJsonNear(a[i], b[i], path + "[" + std::to_string(i) + "]");
    }
  } else {
    EXPECT_EQ(a, b) << path;
  }
}

// A run over CPUs 1..3 with errors, readback mismatches and varying online counts.
std::vector<OpRecord> MixedRun(uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> ms(std::log(2e6), 0.5);
  std::vector<OpRecord> ops;
  for (int i = 0; i < n; i++) {
    int cpu = 1 + static_cast<int>(rng() % 3);
    Direction dir = i % 2 ? kOn : kOff;
    int err = rng() % 10 == 0 ? EBUSY : (rng() % 50 == 0 ? EIO : 0);
    bool readback_ok = rng() % 40 != 0;
    ops.push_back(Op(cpu, dir, static_cast<uint64_t>(ms(rng)), 2 + static_cast<int>(rng() % 3), err,
                     readback_ok));
  }
  return ops;
}

TEST(ErrnoNameTest, KnownAndUnknown) {
  EXPECT_EQ(ErrnoName(EBUSY), "EBUSY");
  EXPECT_EQ(ErrnoName(EINVAL), "EINVAL");
  EXPECT_EQ(ErrnoName(4095), "E4095");
}

TEST(RunStatsTest, FailedOpsGoToErrnoTablesNotHistograms) {
  RunStats s(4);
  s.Add(Op(1, kOff, 1000, 4));
  s.Add(Op(1, kOff, 999999, 3, EBUSY));
  s.Add(Op(2, kOff, 888888, 3, EBUSY));
  s.Add(Op(2, kOn, 777777, 3, EIO));
  EXPECT_EQ(s.ops(), 4u);
  EXPECT_EQ(s.failed_ops(), 3u);
  EXPECT_EQ(s.by_direction(kOff).count(), 1u);
  EXPECT_EQ(s.by_direction(kOff).max_ns(), 1000u);
  EXPECT_EQ(s.by_direction(kOn).count(), 0u);
  EXPECT_EQ(s.by_cpu(2, kOff).count(), 0u);
  EXPECT_EQ(s.by_online_count(kOff).count(3), 0u);  // failures make no online-count level
  std::map<std::pair<int, int>, uint64_t> want_by_cpu = {
      {{1, EBUSY}, 1}, {{2, EBUSY}, 1}, {{2, EIO}, 1}};
  EXPECT_EQ(s.errors_by_cpu(), want_by_cpu);
  std::map<int, uint64_t> want_by_errno = {{EIO, 1}, {EBUSY, 2}};
  EXPECT_EQ(s.errors_by_errno(), want_by_errno);

  json j = s.ToJson();
  EXPECT_EQ(j["totals"], json({{"ops", 4},
                               {"ok", 1},
                               {"failed", 3},
                               {"readback_mismatches", 0},
                               {"offline_ops", 3},
                               {"online_ops", 1},
                               {"setup_ops", 0}}));
  EXPECT_EQ(j["errors"]["by_errno"], json::parse(R"([{"errno": 5, "name": "EIO", "count": 1},
                                                     {"errno": 16, "name": "EBUSY", "count": 2}])"));
  EXPECT_EQ(j["errors"]["by_cpu"],
            json::parse(R"([{"cpu": 1, "errno": 16, "name": "EBUSY", "count": 1},
                            {"cpu": 2, "errno": 5, "name": "EIO", "count": 1},
                            {"cpu": 2, "errno": 16, "name": "EBUSY", "count": 1}])"));
  EXPECT_EQ(j["per_cpu"][1]["errors"], json::parse(R"([{"errno": 5, "name": "EIO", "count": 1},
                                                       {"errno": 16, "name": "EBUSY", "count": 1}])"));
}

TEST(RunStatsTest, PerOnlineCountLevels) {
  RunStats s;
  s.Add(Op(1, kOff, 100, 4));
  s.Add(Op(2, kOff, 200, 3));
  s.Add(Op(3, kOff, 300, 3));
  s.Add(Op(3, kOn, 400, 2));
  const auto& off = s.by_online_count(kOff);
  ASSERT_EQ(off.size(), 2u);
  EXPECT_EQ(off.at(3).count(), 2u);
  EXPECT_EQ(off.at(3).max_ns(), 300u);
  EXPECT_EQ(off.at(4).count(), 1u);
  ASSERT_EQ(s.by_online_count(kOn).size(), 1u);
  EXPECT_EQ(s.by_online_count(kOn).at(2).min_ns(), 400u);

  json levels = s.ToJson()["per_online_count"];
  EXPECT_EQ(Keys(levels), (std::set<std::string>{"offline", "online"}));
  ASSERT_EQ(levels["offline"].size(), 2u);
  EXPECT_EQ(levels["offline"][0]["online_cpus"], 3);  // ascending
  EXPECT_EQ(levels["offline"][0]["count"], 2);
  EXPECT_EQ(levels["offline"][0]["p50_ns"], 200);
  EXPECT_EQ(levels["offline"][1]["online_cpus"], 4);
  EXPECT_EQ(levels["online"][0]["online_cpus"], 2);
  std::set<std::string> level_keys = kSummaryKeys;
  level_keys.insert("online_cpus");
  level_keys.insert("histogram");
  EXPECT_EQ(Keys(levels["offline"][0]), level_keys);
  // The buckets behind the summary, for compare: the same histogram back.
  Histogram back;
  std::string herr;
  ASSERT_TRUE(back.FromJson(levels["offline"][0]["histogram"], &herr)) << herr;
  EXPECT_EQ(back.count(), 2u);
  EXPECT_EQ(back.PercentileNs(50), 200u);
}

TEST(RunStatsTest, PerCpuGrowsBeyondMaxCpus) {
  RunStats s(2);
  s.Add(Op(7, kOn, 5000, 1));
  s.Add(Op(1, kOff, 6000, 2));
  s.Add(Op(5, kOff, 1, 2, EBUSY));  // only failures: still a CPU with ops
  EXPECT_EQ(s.by_cpu(7, kOn).count(), 1u);
  EXPECT_EQ(s.by_cpu(7, kOn).min_ns(), 5000u);
  EXPECT_EQ(s.by_cpu(7, kOff).count(), 0u);
  EXPECT_EQ(s.by_cpu(1, kOff).count(), 1u);
  EXPECT_EQ(s.by_cpu(100, kOff).count(), 0u);
  EXPECT_EQ(s.by_cpu(-1, kOff).count(), 0u);
  EXPECT_EQ(s.cpus_seen(), (std::vector<int>{1, 5, 7}));
  json per_cpu = s.ToJson()["per_cpu"];
  ASSERT_EQ(per_cpu.size(), 3u);
  EXPECT_EQ(per_cpu[0]["cpu"], 1);
  EXPECT_EQ(per_cpu[1]["cpu"], 5);
  EXPECT_EQ(per_cpu[1]["offline"]["count"], 0);
  EXPECT_EQ(per_cpu[1]["errors"][0]["name"], "EBUSY");
  EXPECT_EQ(per_cpu[2]["cpu"], 7);
  EXPECT_EQ(per_cpu[2]["online"]["p99_ns"], 5000);
}

TEST(RunStatsTest, OutOfRangeCpuCountsEverywhereButPerCpu) {
  RunStats s;
  s.Add(Op(-1, kOff, 100, 2));
  s.Add(Op(-1, kOff, 100, 2, EBUSY));
  EXPECT_EQ(s.ops(), 2u);
  EXPECT_EQ(s.by_direction(kOff).count(), 1u);
  EXPECT_TRUE(s.cpus_seen().empty());
  EXPECT_EQ(s.errors_by_errno().at(EBUSY), 1u);
  RunStats back;
  std::string err;
  ASSERT_TRUE(back.StateFromJson(s.StateToJson(), &err)) << err;
  EXPECT_EQ(back.ToJson(), s.ToJson());
}

// The smt pattern's switch table rides in the checkpoint, and stays
// attached to the stats a resume restores (it is fed by them).
TEST(RunStatsTest, SmtTableSurvivesStateRoundTrip) {
  SmtSwitchStats smt({"off", "on"}, "control");
  RunStats st(8);
  st.set_smt(&smt);
  OpRecord sw = Op(-1, Direction::kOffline, 5000, 8);
  sw.smt_control = true;
  sw.group = 1;
  sw.cpus_changed = 4;
  st.Add(sw);
  OpRecord failed = sw;
  failed.group = 2;
  failed.dir = Direction::kOnline;
  failed.err = EBUSY;
  failed.cpus_changed = 0;
  st.Add(failed);
  EXPECT_EQ(st.ToJson()["directions"]["offline"]["count"], 0);  // no one-CPU write
  EXPECT_EQ(st.failed_ops(), 1u);
  const nlohmann::json saved = st.StateToJson();
  ASSERT_TRUE(saved.contains("smt"));

  SmtSwitchStats smt2({"off", "on"}, "control");
  RunStats resumed(8);
  resumed.set_smt(&smt2);
  std::string err;
  ASSERT_TRUE(resumed.StateFromJson(saved, &err)) << err;
  OpRecord next = sw;
  next.group = 3;
  resumed.Add(next);
  smt2.Finish(true);
  EXPECT_EQ(smt2.ToJson()["to"][0]["switches"], 2);  // before and after the resume
  EXPECT_EQ(smt2.ToJson()["to"][1]["failed_writes"], 1);
}

TEST(RunStatsTest, ReadbackMismatches) {
  RunStats s;
  s.Add(Op(2, kOn, 3000, 3, 0, false));      // succeeded but reads back wrong
  s.Add(Op(2, kOn, 3000, 3, EBUSY, false));  // both failed and mismatched
  s.Add(Op(3, kOn, 3000, 3));
  EXPECT_EQ(s.readback_mismatches(), 2u);
  EXPECT_EQ(s.failed_ops(), 1u);
  EXPECT_EQ(s.by_cpu(2, kOn).count(), 1u);  // the latency still counts
  json j = s.ToJson();
  EXPECT_EQ(j["totals"]["readback_mismatches"], 2);
  EXPECT_EQ(j["per_cpu"][0]["cpu"], 2);
  EXPECT_EQ(j["per_cpu"][0]["readback_mismatches"], 2);
  EXPECT_EQ(j["per_cpu"][1]["readback_mismatches"], 0);
}

TEST(RunStatsTest, JsonShapeIsExact) {
  RunStats s;
  for (const OpRecord& r : MixedRun(1, 2000)) {
    s.Add(r);
  }
  json j = s.ToJson();
  EXPECT_EQ(Keys(j), (std::set<std::string>{"totals", "directions", "per_cpu", "per_online_count",
                                            "errors", "timeline"}));
  EXPECT_EQ(Keys(j["totals"]), (std::set<std::string>{"ops", "ok", "failed", "readback_mismatches",
                                                      "setup_ops", "offline_ops", "online_ops"}));
  EXPECT_EQ(Keys(j["directions"]), (std::set<std::string>{"offline", "online"}));
  for (const char* d : {"offline", "online"}) {
    json summary = j["directions"][d];
    ASSERT_TRUE(summary.contains("histogram")) << d;
    EXPECT_EQ(summary["histogram"]["count"], summary["count"]) << d;
    summary.erase("histogram");
    ExpectSummaryShape(summary, std::string("directions.") + d);
  }
  ASSERT_EQ(j["per_cpu"].size(), 3u);
  for (const json& c : j["per_cpu"]) {
    EXPECT_EQ(Keys(c), (std::set<std::string>{"cpu", "offline", "online", "offline_failed",
                                              "online_failed", "errors", "readback_mismatches"}));
    ExpectSummaryShape(c["offline"], "per_cpu.offline");
    ExpectSummaryShape(c["online"], "per_cpu.online");
    for (const json& e : c["errors"]) {
      EXPECT_EQ(Keys(e), (std::set<std::string>{"errno", "name", "count"}));
    }
  }
  EXPECT_EQ(Keys(j["errors"]), (std::set<std::string>{"by_errno", "by_cpu"}));
  ASSERT_EQ(j["errors"]["by_errno"].size(), 2u);
  EXPECT_EQ(Keys(j["errors"]["by_cpu"][0]),
            (std::set<std::string>{"cpu", "errno", "name", "count"}));

  // Values tie back to the histograms and add up.
  const Histogram& off = s.by_direction(kOff);
  EXPECT_EQ(j["directions"]["offline"]["p99_9_ns"], off.PercentileNs(99.9));
  EXPECT_EQ(j["directions"]["offline"]["p90_ns"], off.PercentileNs(90));
  EXPECT_EQ(j["directions"]["offline"]["mean_ns"].get<double>(), off.mean_ns());
  EXPECT_EQ(j["totals"]["ok"].get<uint64_t>() + j["totals"]["failed"].get<uint64_t>(), 2000u);
  EXPECT_EQ(j["totals"]["offline_ops"], 1000);
  uint64_t cpu_count = 0;
  for (const json& c : j["per_cpu"]) {
    cpu_count += c["offline"]["count"].get<uint64_t>() + c["online"]["count"].get<uint64_t>();
  }
  EXPECT_EQ(cpu_count, j["totals"]["ok"].get<uint64_t>());

  // An empty run is all zeros, with the same shape.
  json empty = RunStats().ToJson();
  empty["directions"]["online"].erase("histogram");
  ExpectSummaryShape(empty["directions"]["online"], "empty");
  EXPECT_EQ(empty["directions"]["online"], json::parse(R"({"count": 0, "min_ns": 0, "max_ns": 0,
      "mean_ns": 0.0, "stddev_ns": 0.0, "p50_ns": 0, "p90_ns": 0, "p99_ns": 0, "p99_9_ns": 0})"));
  EXPECT_TRUE(empty["per_cpu"].empty());
  EXPECT_TRUE(empty["per_online_count"]["offline"].is_array());
}

// A sweep's set-up writes: counted, their errors too, but in no latency
// table (before, each set-up write was a one-operation row and one more op
// in the level it left the machine at).
TEST(RunStatsTest, SetupWritesStayOutOfLatencyTables) {
  RunStats s(4);
  OpRecord setup = Op(2, kOff, 50000000, 3);
  setup.setup = true;
  s.Add(setup);
  OpRecord failed_setup = Op(2, kOff, 1, 3, EBUSY);
  failed_setup.setup = true;
  s.Add(failed_setup);
  s.Add(Op(3, kOff, 2000000, 2));
  s.Add(Op(3, kOn, 1000000, 1, EIO));
  json j = s.ToJson();
  EXPECT_EQ(j["totals"]["ops"], 4);
  EXPECT_EQ(j["totals"]["setup_ops"], 2);
  EXPECT_EQ(j["totals"]["failed"], 2);
  EXPECT_EQ(j["directions"]["offline"]["count"], 1);
  EXPECT_EQ(j["directions"]["offline"]["max_ns"], 2000000);
  ASSERT_EQ(j["per_online_count"]["offline"].size(), 1u);
  EXPECT_EQ(j["per_online_count"]["offline"][0]["online_cpus"], 2);
  // Failures per CPU and direction: cpu2 offline (the set-up), cpu3 online.
  for (const json& c : j["per_cpu"]) {
    if (c["cpu"] == 2) {
      EXPECT_EQ(std::make_pair(c["offline_failed"], c["online_failed"]),
                std::make_pair(json(1), json(0)));
    }
    if (c["cpu"] == 3) {
      EXPECT_EQ(std::make_pair(c["offline_failed"], c["online_failed"]),
                std::make_pair(json(0), json(1)));
    }
  }
  // The checkpoint keeps all of it.
  RunStats back;
  std::string err;
  ASSERT_TRUE(back.StateFromJson(json::parse(s.StateToJson().dump()), &err)) << err;
  EXPECT_EQ(back.ToJson().dump(), j.dump());
}

TEST(RunStatsTest, StateRoundTrip) {
  RunStats s(4);
  for (const OpRecord& r : MixedRun(2, 3000)) {
    s.Add(r);
  }
  json state = json::parse(s.StateToJson().dump());
  RunStats back;
  back.Add(Op(9, kOff, 1, 1));  // overwritten
  std::string err;
  ASSERT_TRUE(back.StateFromJson(state, &err)) << err;
  EXPECT_EQ(back.ToJson().dump(), s.ToJson().dump());
  EXPECT_EQ(back.StateToJson(), s.StateToJson());
  // A restored run continues exactly like the original.
  for (const OpRecord& r : MixedRun(3, 500)) {
    s.Add(r);
    back.Add(r);
  }
  EXPECT_EQ(back.ToJson().dump(), s.ToJson().dump());
}

TEST(RunStatsTest, StateFromJsonRejectsAndLeavesUnchanged) {
  RunStats good;
  good.Add(Op(1, kOff, 1000, 3));
  good.Add(Op(1, kOn, 2000, 2, EBUSY, false));
  const json base = good.StateToJson();
  struct Case {
    const char* name;
    json j;
    const char* expect;
  };
  auto edit = [&](const json::json_pointer& ptr, json v) {
    json j = base;
    j[ptr] = std::move(v);
    return j;
  };
  auto drop = [&](const char* key) {
    json j = base;
    j.erase(key);
    return j;
  };
  using P = json::json_pointer;
  std::vector<Case> cases = {
      {"not an object", json::array(), "run stats: expected an object"},
      {"missing ops", drop("ops"), "ops: missing"},
      {"negative ops", edit(P("/ops"), -1), "ops: expected a non-negative integer"},
      {"missing by_cpu", drop("by_cpu"), "by_cpu: expected an array"},
      {"direction object", edit(P("/by_direction"), {{"offline", 1}}), "by_direction: expected"},
      {"bad nested histogram", edit(P("/by_direction/offline/count"), 5),
       "by_direction.offline: histogram: bucket counts add up to 1, count is 5"},
      {"ops mismatch", edit(P("/ops"), 3), "ops_by_direction: offline + online != ops"},
      {"failed mismatch", edit(P("/failed_ops"), 0), "failed_ops"},
      {"cpu direction", edit(P("/by_cpu/0/direction"), "sideways"), "by_cpu[0].direction"},
      {"cpu negative", edit(P("/by_cpu/0/cpu"), -2), "by_cpu[0].cpu: expected an integer >= 0"},
      {"cpu too large", edit(P("/by_cpu/0/cpu"), 1 << 20), "by_cpu[0].cpu: 1048576 not below"},
      {"online level histogram", edit(P("/by_online_count/offline/0/histogram/buckets/0/0"), 99999),
       "by_online_count.offline[0].histogram: histogram: buckets[0]: index 99999 out of range"},
      {"online level mismatch", edit(P("/by_online_count/offline"), json::array()),
       "by_online_count.offline: counts add up to 0"},
      {"error count", edit(P("/errors_by_cpu/0/count"), 7), "errors_by_cpu: counts add up to 7"},
      {"errno zero", edit(P("/errors_by_cpu/0/errno"), 0), "errors_by_cpu[0]: errno and count"},
      {"readback sum", edit(P("/readback_mismatches"), 2), "readback"},
      {"readback cpu", edit(P("/readback_by_cpu/0/cpu"), "one"), "readback_by_cpu[0].cpu"},
  };
  for (const Case& c : cases) {
    RunStats s = good;
    std::string err;
    EXPECT_FALSE(s.StateFromJson(c.j, &err)) << c.name;
    EXPECT_NE(err.find(c.expect), std::string::npos) << c.name << ": " << err;
    EXPECT_EQ(s.StateToJson(), base) << c.name;
  }
  // A duplicate CPU entry would double its samples.
  json dup = base;
  dup["by_cpu"].push_back(dup["by_cpu"][0]);
  RunStats s;
  std::string err;
  EXPECT_FALSE(s.StateFromJson(dup, &err));
  EXPECT_NE(err.find("by_cpu[1]: duplicate cpu 1 offline"), std::string::npos) << err;
}

TEST(RunStatsTest, MergeEqualsAddingAll) {
  std::vector<OpRecord> a = MixedRun(4, 1500);
  std::vector<OpRecord> b = MixedRun(5, 2500);
  b.push_back(Op(12, kOn, 42, 9, EINVAL, false));  // a CPU only the second part saw
  RunStats sa(2);
  RunStats sb(16);
  RunStats all;
  for (const OpRecord& r : a) {
    sa.Add(r);
    all.Add(r);
  }
  for (const OpRecord& r : b) {
    sb.Add(r);
    all.Add(r);
  }
  RunStats merged;
  merged.Merge(sa);
  merged.Merge(RunStats());
  merged.Merge(sb);
  // The timeline is one run's series over its operation index: not merged.
  json merged_json = merged.ToJson();
  json all_json = all.ToJson();
  EXPECT_TRUE(merged_json["timeline"]["points"].empty());
  merged_json.erase("timeline");
  all_json.erase("timeline");
  ExpectJsonNear(merged_json, all_json);
  json merged_state = merged.StateToJson();
  json all_state = all.StateToJson();
  merged_state.erase("timeline");
  all_state.erase("timeline");
  ExpectJsonNear(merged_state, all_state);
  EXPECT_EQ(merged.ops(), 4001u);
  EXPECT_EQ(merged.by_cpu(12, kOn).count(), 0u);
  EXPECT_EQ(merged.errors_by_cpu().at({12, EINVAL}), 1u);

  RunStats twice = sa;
  twice.Merge(twice);
  EXPECT_EQ(twice.ops(), 2 * sa.ops());
  EXPECT_EQ(twice.by_direction(kOff).count(), 2 * sa.by_direction(kOff).count());
  EXPECT_EQ(twice.errors_by_errno().at(EBUSY), 2 * sa.errors_by_errno().at(EBUSY));
}

}  // namespace
}  // namespace cpuhp
