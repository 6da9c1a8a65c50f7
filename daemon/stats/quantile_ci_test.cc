// SPDX-License-Identifier: GPL-2.0
#include "stats/quantile_ci.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace cpuhp {
namespace {

TEST(QuantileCiTest, BinomialTail) {
  EXPECT_DOUBLE_EQ(BinomialUpperTail(10, 0.5, 0), 1.0);
  EXPECT_NEAR(BinomialUpperTail(10, 0.5, 10), 1.0 / 1024, 1e-12);
  EXPECT_NEAR(BinomialUpperTail(10, 0.5, 5), 638.0 / 1024, 1e-12);
  EXPECT_NEAR(BinomialUpperTail(3, 0.2, 2), 3 * 0.04 * 0.8 + 0.008, 1e-12);
  EXPECT_DOUBLE_EQ(BinomialUpperTail(5, 0.0, 1), 0.0);
  EXPECT_DOUBLE_EQ(BinomialUpperTail(5, 1.0, 5), 1.0);
  // Exact and normal-approximation branches agree around the switch.
  EXPECT_NEAR(BinomialUpperTail(2000, 0.5, 1000), BinomialUpperTail(2001, 0.5, 1001), 0.02);
}

// The exact branch sums from the tail's largest term by recurrence (issue
// 29.8: term-by-term lgamma cost minutes in compare); it agrees with the
// term-by-term sum everywhere, on both sides of the mode, at the edges and
// where the largest term underflows.
TEST(QuantileCiTest, BinomialTailAgreesWithTheTermByTermSum) {
  auto direct = [](uint64_t n, double p, uint64_t r) {
    const double nd = static_cast<double>(n);
    double sum = 0;
    for (uint64_t k = r; k <= n; k++) {
      const double kd = static_cast<double>(k);
      sum += std::exp(std::lgamma(nd + 1) - std::lgamma(kd + 1) - std::lgamma(nd - kd + 1) +
                      kd * std::log(p) + (nd - kd) * std::log1p(-p));
    }
    return std::min(1.0, sum);
  };
  for (uint64_t n : {1, 2, 7, 100, 999, 2000})
    for (double p : {1e-9, 0.001, 0.1, 0.37, 0.5, 0.5005, 0.9, 0.999, 1 - 1e-9})
      for (uint64_t r : {uint64_t{1}, n / 100 + 1, n / 3 + 1, n / 2, n / 2 + 1, n * 99 / 100, n}) {
        if (r == 0 || r > n)
          continue;
        const double want = direct(n, p, r);
        EXPECT_NEAR(BinomialUpperTail(n, p, r), want, 1e-12 + 1e-9 * want)
            << "n " << n << " p " << p << " r " << r;
      }
}

Histogram Uniform(double lo, double hi, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  Histogram h;
  for (int i = 0; i < n; i++)
    h.Record(static_cast<uint64_t>(u(rng)));
  return h;
}

TEST(QuantileCiTest, IntervalCoversTheTrueRatioAndNarrowsWithN) {
  // Median 1e6 vs 1.1e6: ratio 1.1.
  Histogram b = Uniform(0.8e6, 1.2e6, 2000, 1);
  Histogram c = Uniform(0.88e6, 1.32e6, 2000, 2);
  RatioInterval ci = QuantileRatioInterval(b, c, 0.5, 0.95, 2000, 7);
  ASSERT_TRUE(ci.ok);
  EXPECT_LT(ci.lo, 1.1);
  EXPECT_GT(ci.hi, 1.1);
  EXPECT_GT(ci.lo, 1.07);
  EXPECT_LT(ci.hi, 1.13);
  Histogram b2 = Uniform(0.8e6, 1.2e6, 50, 3);
  Histogram c2 = Uniform(0.88e6, 1.32e6, 50, 4);
  RatioInterval wide = QuantileRatioInterval(b2, c2, 0.5, 0.95, 2000, 7);
  EXPECT_GT(wide.hi - wide.lo, ci.hi - ci.lo);
}

TEST(QuantileCiTest, CoverageOverRepeatedExperiments) {
  // Same distribution on both sides: the 95 % interval holds 1 most times.
  int covered = 0;
  const int trials = 100;
  for (int t = 0; t < trials; t++) {
    Histogram b = Uniform(1e6, 2e6, 300, 100 + t);
    Histogram c = Uniform(1e6, 2e6, 300, 500 + t);
    RatioInterval ci = QuantileRatioInterval(b, c, 0.5, 0.95, 1000, t);
    covered += ci.lo <= 1.0 && ci.hi >= 1.0;
  }
  EXPECT_GE(covered, 88);
}

TEST(QuantileCiTest, EmptyHistogramHasNoInterval) {
  Histogram empty;
  Histogram h = Uniform(1, 100, 10, 1);
  EXPECT_FALSE(QuantileRatioInterval(empty, h, 0.5, 0.95, 100, 1).ok);
}

}  // namespace
}  // namespace cpuhp
