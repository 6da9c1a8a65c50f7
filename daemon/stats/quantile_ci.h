// SPDX-License-Identifier: GPL-2.0
// Confidence intervals for the ratio of a quantile (median, p99) between two
// latency histograms, from the histograms alone (reports carry buckets, not
// samples).
//
// Method: a percentile bootstrap where each resample's quantile is drawn
// exactly rather than by resampling n values. For a sample of n values with
// bucket CDF F_k, the quantile at rank r = ceil(q * n) of a resample (n draws
// with replacement) is at or below bucket k exactly when at least r draws fall
// at or below it: P = P(Binomial(n, F_k) >= r). Drawing from that
// distribution costs one binary search per resample, whatever n is, so the CI
// of the ratio cand_q / base_q is the [(1-c)/2, (1+c)/2] percentiles of B
// independent draws. Bucket values are their midpoints clamped to [min, max]
// (at most 0.39 % off), like every percentile in the report.
#pragma once

#include <cstdint>
#include <vector>

#include "stats/histogram.h"

namespace cpuhp {

// P(Binomial(n, p) >= r): exact for n <= 2000, normal approximation with
// continuity correction above.
double BinomialUpperTail(uint64_t n, double p, uint64_t r);

// The bootstrap distribution of one histogram's quantile q (0..1).
class QuantileSampler {
 public:
  QuantileSampler(const Histogram& h, double q);
  bool empty() const { return values_.empty(); }
  // The quantile of one resample, for u uniform in [0, 1).
  double Draw(double u) const;

 private:
  std::vector<double> values_;  // bucket value, ascending
  std::vector<double> cdf_;     // P(resample quantile <= values_[k])
};

struct RatioInterval {
  bool ok = false;  // false when either histogram is empty
  double lo = 0;
  double hi = 0;
};

// CI of quantile_q(cand) / quantile_q(base). Deterministic for a seed.
RatioInterval QuantileRatioInterval(const Histogram& base, const Histogram& cand, double q,
                                    double confidence, int resamples, uint64_t seed);

}  // namespace cpuhp
