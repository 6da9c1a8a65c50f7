// SPDX-License-Identifier: GPL-2.0
// Self times and state sums of KernelStateStats against the definition
// (tests of it on recorded traces are in tracefs_source_test.cc).
#include "sources/state_stats.h"

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "util/rng.h"

namespace cpuhp {
namespace {

using Interval = std::pair<uint64_t, uint64_t>;

// The definition, all pairs: a step's self time is its length clipped to
// the write minus the union of the steps inside it (of two identical
// intervals the later is inside the earlier).
std::vector<uint64_t> SelfByDefinition(const std::vector<Interval>& iv) {
  std::vector<uint64_t> self;
  for (size_t i = 0; i < iv.size(); ++i) {
    const auto [b, e] = iv[i];
    std::vector<Interval> inner;
    for (size_t j = 0; j < iv.size(); ++j) {
      if (j == i || iv[j].first < b || iv[j].second > e || (iv[j] == iv[i] && j < i))
        continue;
      inner.push_back(iv[j]);
    }
    self.push_back((e - b) - std::min(e - b, UnionLengthNs(inner)));
  }
  return self;
}

// Random steps on a coarse grid (ties, identical and empty intervals, steps
// reaching outside the write), each its own state: the report's self_ns per
// state and the operation's state sum must be the definition's.
TEST(KernelStateStats, SelfTimesAndStateSumAreTheDefinitions) {
  Rng rng(17);
  for (int round = 0; round < 2000; ++round) {
    const size_t n = 1 + rng.Next() % 40;
    const uint64_t w0 = 1000, w1 = 1000 + 10 * (1 + rng.Next() % 30);
    OpRecord rec;
    rec.index = static_cast<uint64_t>(round);
    rec.cpu = 1;
    rec.dir = Direction::kOffline;
    rec.start_ns = w0;
    rec.duration_ns = w1 - w0;
    std::vector<TraceStep> steps;
    std::vector<Interval> clipped;
    std::vector<std::string> names(n);  // the steps' names point into it
    for (size_t i = 0; i < n; ++i) {
      TraceStep s;
      s.cpu = 1;
      s.idx = static_cast<int>(i);
      names[i] = "f" + std::to_string(i);
      s.fun = names[i];
      if (i > 0 && rng.Next() % 8 == 0) {  // an identical copy of an earlier step
        const TraceStep& o = steps[rng.Next() % i];
        s.begin_ns = o.begin_ns;
        s.end_ns = o.end_ns;
      } else {
        s.begin_ns = w0 - 50 + 10 * (rng.Next() % 40);
        s.end_ns = s.begin_ns + 10 * (rng.Next() % 12);
      }
      clipped.emplace_back(std::clamp(s.begin_ns, w0, w1), std::clamp(s.end_ns, w0, w1));
      steps.push_back(s);
    }
    KernelStateStats stats{HotplugStates{}};
    stats.AddOperation(rec, steps);
    const nlohmann::json j = stats.ToJson();
    const std::vector<uint64_t> want = SelfByDefinition(clipped);
    std::map<std::string, uint64_t> got;
    for (const auto& s : j["kernel_states"])
      got[s["function"].get<std::string>()] = s["self_ns"].get<uint64_t>();
    ASSERT_EQ(got.size(), n) << "round " << round;
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(got["f" + std::to_string(i)], want[i]) << "round " << round << ", step " << i;
    ASSERT_EQ(j["first_operations"][0]["state_sum_ns"].get<uint64_t>(), UnionLengthNs(clipped))
        << "round " << round;
  }
}

// A step's row is found by its matcher's number for the callback, checked
// against the name: the same number from two matchers (two joiners' steps
// into one table) names two functions, and each keeps its own row; a step
// with no number (made by hand) lands in the same row as a numbered one.
TEST(KernelStateStats, SameNumberOtherNameIsAnotherRow) {
  OpRecord rec;
  rec.cpu = 1;
  rec.dir = Direction::kOffline;
  rec.start_ns = 1000;
  rec.duration_ns = 1000;
  auto step = [](std::string_view fun, uint16_t id, uint64_t b, uint64_t e) {
    TraceStep s;
    s.cpu = 1;
    s.idx = 50;
    s.fun = fun;
    s.fun_id = id;
    s.begin_ns = b;
    s.end_ns = e;
    return s;
  };
  KernelStateStats stats{HotplugStates{}};
  const std::vector<TraceStep> a = {step("smpcfd_dying_cpu", 1, 1100, 1200)};
  const std::vector<TraceStep> b = {step("sched_cpu_dying", 1, 1300, 1600)};
  const std::vector<TraceStep> c = {step("smpcfd_dying_cpu", 0, 1100, 1150)};
  for (const auto* steps : {&a, &b, &a, &c})
    stats.AddOperation(rec, *steps);
  std::map<std::string, uint64_t> count, total;
  const nlohmann::json j = stats.ToJson();
  for (const auto& s : j["kernel_states"]) {
    count[s["function"].get<std::string>()] = s["count"].get<uint64_t>();
    total[s["function"].get<std::string>()] = s["total_ns"].get<uint64_t>();
  }
  EXPECT_EQ(count,
            (std::map<std::string, uint64_t>{{"sched_cpu_dying", 1}, {"smpcfd_dying_cpu", 3}}));
  EXPECT_EQ(total["smpcfd_dying_cpu"], 250u);
  EXPECT_EQ(total["sched_cpu_dying"], 300u);
}

TEST(UnionLength, OverlapsAndNesting) {
  EXPECT_EQ(UnionLengthNs({}), 0u);
  EXPECT_EQ(UnionLengthNs({{0, 10}, {2, 5}, {10, 12}, {20, 21}, {7, 7}}), 13u);
  EXPECT_EQ(UnionLengthNs({{5, 9}, {0, 6}}), 9u);
}
}  // namespace
}  // namespace cpuhp
