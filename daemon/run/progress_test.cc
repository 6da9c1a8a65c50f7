// SPDX-License-Identifier: GPL-2.0
#include "run/progress.h"

#include <gtest/gtest.h>

namespace cpuhp {
namespace {

RunStats StatsWith(int ops) {
  RunStats stats(4);
  for (int i = 0; i < ops; ++i) {
    OpRecord r;
    r.cpu = 1;
    r.dir = i % 2 ? Direction::kOnline : Direction::kOffline;
    r.duration_ns = i % 2 ? 1000000 : 4000000;
    r.online_before = 2;
    stats.Add(r);
  }
  return stats;
}

TEST(ProgressLineTest, ShowsOpsRateP99AndEtaFromTheIterationTarget) {
  ProgressLine p(false, 1000, 0);
  EXPECT_EQ(p.Format(StatsWith(250), 1000000000ull),
            "250/1000 ops  250.0 ops/s  p99 offline 4.000 ms online 1.000 ms  ETA 0:00:03");
}

TEST(ProgressLineTest, EtaFromTheDurationWhenItComesFirst) {
  ProgressLine p(false, 0, 3600ull * 1000000000ull);
  EXPECT_EQ(p.Format(StatsWith(10), 60ull * 1000000000ull),
            "10 ops  0.2 ops/s  p99 offline 4.000 ms online 1.000 ms  ETA 0:59:00");
}

TEST(ProgressLineTest, DisabledWritesNothing) {
  std::FILE* f = std::tmpfile();
  ProgressLine p(false, 10, 0, f);
  p.Update(StatsWith(5));
  p.Finish();
  EXPECT_EQ(std::ftell(f), 0);
  ProgressLine on(true, 10, 0, f);
  on.Update(StatsWith(5));
  on.Finish();
  EXPECT_GT(std::ftell(f), 0);
  std::fclose(f);
}

}  // namespace
}  // namespace cpuhp
