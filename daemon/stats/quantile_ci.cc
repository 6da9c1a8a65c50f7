// SPDX-License-Identifier: GPL-2.0
#include "stats/quantile_ci.h"

#include <algorithm>
#include <cmath>
#include <random>

#include <nlohmann/json.hpp>

namespace cpuhp {

double BinomialUpperTail(uint64_t n, double p, uint64_t r) {
  if (r == 0)
    return 1.0;
  if (r > n || p <= 0.0)
    return 0.0;
  if (p >= 1.0)
    return 1.0;
  const double nd = static_cast<double>(n);
  if (n > 2000) {
    double sd = std::sqrt(nd * p * (1 - p));
    double z = (static_cast<double>(r) - 0.5 - nd * p) / sd;
    return 0.5 * std::erfc(z / std::sqrt(2.0));
  }
  // Summed from the tail's largest term outwards, each term from the one
  // before, until the terms no longer change the sum: a few hundred
  // multiplications where a term-by-term lgamma sum cost n of each (the
  // bootstrap calls this once per bucket: issue 29.8's compare spent
  // minutes here). Terms fall on either side of the mode floor((n+1)p), so
  // the upper tail from r is summed upwards when r is past the mode, else 1
  // minus the lower tail from r - 1 downwards.
  const double lp = std::log(p);
  const double lq = std::log1p(-p);
  const double lgn = std::lgamma(nd + 1);
  auto term = [&](uint64_t k) {
    const double kd = static_cast<double>(k);
    return std::exp(lgn - std::lgamma(kd + 1) - std::lgamma(nd - kd + 1) + kd * lp +
                    (nd - kd) * lq);
  };
  const double odds = p / (1 - p);
  double sum = 0;
  if (static_cast<double>(r) >= std::floor((nd + 1) * p)) {
    double t = term(r);
    for (uint64_t k = r; k <= n; k++) {
      sum += t;
      if (t <= sum * 1e-17)
        break;
      t *= static_cast<double>(n - k) / static_cast<double>(k + 1) * odds;
    }
    return std::min(1.0, sum);
  }
  double t = term(r - 1);
  for (uint64_t k = r - 1;; k--) {
    sum += t;
    if (t <= sum * 1e-17 || k == 0)
      break;
    t *= static_cast<double>(k) / static_cast<double>(n - k + 1) / odds;
  }
  return std::max(0.0, 1.0 - sum);
}

QuantileSampler::QuantileSampler(const Histogram& h, double q) {
  const uint64_t n = h.count();
  if (n == 0)
    return;
  uint64_t rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(n)));
  rank = std::clamp<uint64_t>(rank, 1, n);
  nlohmann::json j = h.ToJson();
  uint64_t cum = 0;
  for (const auto& b : j["buckets"]) {
    int index = b[0].get<int>();
    cum += b[1].get<uint64_t>();
    uint64_t low = Histogram::BucketLow(index);
    uint64_t mid = low + (Histogram::BucketHigh(index) - low) / 2;
    mid = std::clamp(mid, h.min_ns(), h.max_ns());
    values_.push_back(static_cast<double>(mid));
    double f = static_cast<double>(cum) / static_cast<double>(n);
    double g = cum >= n ? 1.0 : BinomialUpperTail(n, f, rank);
    cdf_.push_back(cdf_.empty() ? g : std::max(cdf_.back(), g));
  }
}

double QuantileSampler::Draw(double u) const {
  auto it = std::lower_bound(cdf_.begin(), cdf_.end(), u);
  size_t k = it == cdf_.end() ? cdf_.size() - 1 : static_cast<size_t>(it - cdf_.begin());
  return values_[k];
}

RatioInterval QuantileRatioInterval(const Histogram& base, const Histogram& cand, double q,
                                    double confidence, int resamples, uint64_t seed) {
  RatioInterval out;
  QuantileSampler b(base, q);
  QuantileSampler c(cand, q);
  if (b.empty() || c.empty() || resamples < 10)
    return out;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uni(0.0, 1.0);
  std::vector<double> ratios;
  ratios.reserve(static_cast<size_t>(resamples));
  for (int i = 0; i < resamples; i++) {
    double bv = b.Draw(uni(rng));
    double cv = c.Draw(uni(rng));
    ratios.push_back(bv > 0 ? cv / bv : (cv > 0 ? INFINITY : 1.0));
  }
  std::sort(ratios.begin(), ratios.end());
  double alpha = (1 - confidence) / 2;
  auto at = [&](double p) {
    size_t i = static_cast<size_t>(std::floor(p * static_cast<double>(ratios.size() - 1)));
    return ratios[std::min(i, ratios.size() - 1)];
  };
  out.ok = true;
  out.lo = at(alpha);
  out.hi = at(1 - alpha);
  return out;
}

}  // namespace cpuhp
