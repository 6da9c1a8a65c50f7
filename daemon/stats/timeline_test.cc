// SPDX-License-Identifier: GPL-2.0
#include "stats/timeline.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace cpuhp {
namespace {

OpRecord Op(uint64_t i, Direction dir, uint64_t duration_ns, int err = 0) {
  OpRecord r;
  r.index = i;
  r.cpu = 1;
  r.dir = dir;
  r.start_ns = 1000 + i * 10;
  r.duration_ns = duration_ns;
  r.err = err;
  return r;
}

TEST(TimelineTest, OnePointPerOpUntilFull) {
  Timeline t;
  for (uint64_t i = 0; i < 10; i++)
    t.Add(Op(i, i % 2 ? Direction::kOnline : Direction::kOffline, 100 + i));
  ASSERT_EQ(t.points().size(), 10u);
  EXPECT_EQ(t.ops_per_point(), 1u);
  EXPECT_EQ(t.points()[3].first_index, 3u);
  EXPECT_EQ(t.points()[3].dir[1].max_ns, 103u);
  EXPECT_EQ(t.points()[3].dir[0].n, 0u);
}

TEST(TimelineTest, StaysBoundedAndKeepsExactExtremes) {
  Timeline t;
  const uint64_t n = 1234567;
  for (uint64_t i = 0; i < n; i++) {
    // One spike at op 777777; one failure at op 5.
    uint64_t ns = i == 777777 ? 9000000 : 1000 + i % 100;
    t.Add(Op(i, i % 2 ? Direction::kOnline : Direction::kOffline, ns, i == 5 ? 16 : 0));
  }
  ASSERT_LE(t.points().size(), Timeline::kMaxPoints);
  ASSERT_GE(t.points().size(), Timeline::kMaxPoints / 2);
  uint64_t ops = 0, failed = 0, max_ns = 0, spike_at = 0;
  for (const auto& p : t.points()) {
    EXPECT_EQ(p.first_index, ops);  // contiguous, in order
    EXPECT_EQ(p.first_start_ns, 1000 + ops * 10);
    ops += p.ops;
    failed += p.failed;
    if (p.dir[1].max_ns > max_ns) {
      max_ns = p.dir[1].max_ns;
      spike_at = p.first_index;
    }
  }
  EXPECT_EQ(ops, n);
  EXPECT_EQ(failed, 1u);
  EXPECT_EQ(max_ns, 9000000u);
  EXPECT_LE(spike_at, 777777u);
  EXPECT_GT(spike_at + t.ops_per_point(), 777777u);

  nlohmann::json j = t.ToJson();
  EXPECT_EQ(j["points"].size(), t.points().size());
  EXPECT_EQ(j["columns"].size(), j["points"][0].size());
  EXPECT_EQ(j["ops_per_point"], t.ops_per_point());
  // mean of 1000..1099 spread is in range
  double mean = j["points"][10][6].get<double>();
  EXPECT_GE(mean, 1000);
  EXPECT_LE(mean, 1099);
}

}  // namespace
}  // namespace cpuhp
