// SPDX-License-Identifier: GPL-2.0
#include "stats/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cpuhp {
namespace {

constexpr int kBuckets = Histogram::kOctaves * Histogram::kSubBuckets;
constexpr int kTop = kBuckets - 1;
constexpr uint64_t k2To40 = uint64_t{1} << 40;

// Nearest rank of percentile p (given in thousandths, so 99.9 is exact).
uint64_t ExactPercentile(const std::vector<uint64_t>& sorted, uint64_t p_milli) {
  uint64_t n = sorted.size();
  uint64_t rank = (p_milli * n + 99999) / 100000;
  return sorted[std::max<uint64_t>(rank, 1) - 1];
}

std::vector<uint64_t> Uniform(std::mt19937_64& rng, int n) {
  std::uniform_int_distribution<uint64_t> d(1000, 10'000'000);  // 1 us .. 10 ms
  std::vector<uint64_t> v(n);
  for (auto& x : v) {
    x = d(rng);
  }
  return v;
}

std::vector<uint64_t> LogNormal(std::mt19937_64& rng, int n) {
  std::lognormal_distribution<double> d(std::log(100'000.0), 1.0);  // median 100 us
  std::vector<uint64_t> v(n);
  for (auto& x : v) {
    x = static_cast<uint64_t>(d(rng)) + 1;
  }
  return v;
}

// The hotplug shape: most operations fast, a slow mode from a stalled takedown.
std::vector<uint64_t> Bimodal(std::mt19937_64& rng, int n) {
  std::normal_distribution<double> fast(50'000, 5'000);
  std::normal_distribution<double> slow(5'000'000, 500'000);
  std::bernoulli_distribution pick_slow(0.1);
  std::vector<uint64_t> v(n);
  for (auto& x : v) {
    x = static_cast<uint64_t>(std::max(1.0, pick_slow(rng) ? slow(rng) : fast(rng)));
  }
  return v;
}

Histogram FromValues(const std::vector<uint64_t>& values) {
  Histogram h;
  for (uint64_t v : values) {
    h.Record(v);
  }
  return h;
}

TEST(HistogramTest, BucketsAreContiguousAndContainTheirBounds) {
  EXPECT_EQ(Histogram::BucketLow(0), 0u);
  for (int i = 0; i < kBuckets; i++) {
    uint64_t low = Histogram::BucketLow(i);
    uint64_t high = Histogram::BucketHigh(i);
    ASSERT_LE(low, high) << i;
    ASSERT_EQ(Histogram::BucketIndex(low), i) << low;
    ASSERT_EQ(Histogram::BucketIndex(high), i) << high;
    if (i + 1 < kBuckets) {
      ASSERT_EQ(Histogram::BucketLow(i + 1), high + 1) << i;
    }
    // 1/128 of the value (2^k / 128 wide in octave [2^k, 2^(k+1))).
    if (low >= 128 && i != kTop) {
      ASSERT_LE((high - low + 1) * 128, low) << i;
    }
  }
  EXPECT_EQ(Histogram::BucketLow(kTop), k2To40 - (uint64_t{1} << 32));
  EXPECT_EQ(Histogram::BucketHigh(kTop), UINT64_MAX);
}

TEST(HistogramTest, ExactBelow256AndKnownIndices) {
  for (uint64_t v = 0; v < 256; v++) {
    EXPECT_EQ(Histogram::BucketIndex(v), static_cast<int>(v));
    EXPECT_EQ(Histogram::BucketLow(static_cast<int>(v)), v);
    EXPECT_EQ(Histogram::BucketHigh(static_cast<int>(v)), v);
  }
  EXPECT_EQ(Histogram::BucketIndex(256), 256);
  EXPECT_EQ(Histogram::BucketIndex(257), 256);  // width 2 from 256
  EXPECT_EQ(Histogram::BucketIndex(258), 257);
  EXPECT_EQ(Histogram::BucketIndex(k2To40 - 1), kTop);
  EXPECT_EQ(Histogram::BucketIndex(k2To40), kTop);
  EXPECT_EQ(Histogram::BucketIndex(UINT64_MAX), kTop);
  EXPECT_EQ(Histogram::BucketIndex(k2To40 - (uint64_t{1} << 32) - 1), kTop - 1);
}

TEST(HistogramTest, RandomValuesFallInsideTheirBucketMonotonically) {
  std::mt19937_64 rng(1);
  std::vector<uint64_t> values;
  for (int i = 0; i < 200000; i++) {
    int bits = static_cast<int>(rng() % 64);
    values.push_back(rng() >> (63 - bits));  // spread over all magnitudes
  }
  std::sort(values.begin(), values.end());
  int prev = 0;
  for (uint64_t v : values) {
    int i = Histogram::BucketIndex(v);
    ASSERT_GE(i, prev) << v;
    ASSERT_LT(i, kBuckets);
    ASSERT_LE(Histogram::BucketLow(i), v);
    ASSERT_GE(Histogram::BucketHigh(i), v);
    prev = i;
  }
}

TEST(HistogramTest, ReportedValueWithinHalfPercent) {
  std::mt19937_64 rng(2);
  std::uniform_real_distribution<double> log10_ns(3.0, 11.0);  // 1 us .. 100 s
  double worst = 0;
  for (int i = 0; i < 20000; i++) {
    uint64_t v = static_cast<uint64_t>(std::pow(10.0, log10_ns(rng)));
    Histogram h;
    h.Record(1);  // keeps the [min, max] clamp away from v
    h.Record(v);
    h.Record(k2To40 - 1);
    uint64_t reported = h.PercentileNs(50);
    int idx = Histogram::BucketIndex(v);
    ASSERT_GE(reported, Histogram::BucketLow(idx));
    ASSERT_LE(reported, Histogram::BucketHigh(idx));
    double rel = std::abs(static_cast<double>(reported) - static_cast<double>(v)) / v;
    worst = std::max(worst, rel);
  }
  EXPECT_LE(worst, 0.005);
  EXPECT_GT(worst, 0.001);  // the bound is not trivially met by exact buckets
}

void ExpectPercentilesMatch(const std::vector<uint64_t>& values) {
  Histogram h = FromValues(values);
  std::vector<uint64_t> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  for (uint64_t p_milli : {1000, 10000, 25000, 50000, 75000, 90000, 99000, 99900, 99990}) {
    uint64_t exact = ExactPercentile(sorted, p_milli);
    uint64_t got = h.PercentileNs(p_milli / 1000.0);
    double rel = std::abs(static_cast<double>(got) - static_cast<double>(exact)) / exact;
    EXPECT_LE(rel, 0.01) << "p" << p_milli / 1000.0 << " exact " << exact << " got " << got;
    int idx = Histogram::BucketIndex(exact);
    EXPECT_GE(got, Histogram::BucketLow(idx)) << "p" << p_milli / 1000.0;
    EXPECT_LE(got, Histogram::BucketHigh(idx)) << "p" << p_milli / 1000.0;
  }
  EXPECT_EQ(h.PercentileNs(0), sorted.front());
  EXPECT_EQ(h.PercentileNs(100), sorted.back());
  EXPECT_EQ(h.min_ns(), sorted.front());
  EXPECT_EQ(h.max_ns(), sorted.back());
  EXPECT_EQ(h.count(), sorted.size());
}

TEST(HistogramTest, PercentilesUniform) {
  std::mt19937_64 rng(3);
  ExpectPercentilesMatch(Uniform(rng, 100000));
}

TEST(HistogramTest, PercentilesLogNormal) {
  std::mt19937_64 rng(4);
  ExpectPercentilesMatch(LogNormal(rng, 100000));
}

TEST(HistogramTest, PercentilesBimodal) {
  std::mt19937_64 rng(5);
  ExpectPercentilesMatch(Bimodal(rng, 100000));
}

TEST(HistogramTest, PercentileRankIsNearestRank) {
  Histogram h;
  for (uint64_t v = 1; v <= 10; v++) {
    h.Record(v * 10);  // exact buckets: 10, 20, .., 100
  }
  EXPECT_EQ(h.PercentileNs(10), 10u);     // rank 1
  EXPECT_EQ(h.PercentileNs(10.01), 20u);  // rank 2
  EXPECT_EQ(h.PercentileNs(50), 50u);
  EXPECT_EQ(h.PercentileNs(99.9), 100u);
  EXPECT_EQ(h.PercentileNs(-5), 10u);
  EXPECT_EQ(h.PercentileNs(NAN), 10u);
  EXPECT_EQ(h.PercentileNs(250), 100u);

  // 55 / 100.0 * 100 is 55.00000000000001 in doubles; the rank is still 55.
  Histogram hundred;
  for (uint64_t v = 1; v <= 100; v++) {
    hundred.Record(v);
  }
  EXPECT_EQ(hundred.PercentileNs(55), 55u);
  EXPECT_EQ(hundred.PercentileNs(7), 7u);
  EXPECT_EQ(hundred.PercentileNs(7.5), 8u);
}

TEST(HistogramTest, EmptyIsAllZero) {
  Histogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.min_ns(), 0u);
  EXPECT_EQ(h.max_ns(), 0u);
  EXPECT_EQ(h.mean_ns(), 0.0);
  EXPECT_EQ(h.stddev_ns(), 0.0);
  EXPECT_EQ(h.PercentileNs(0), 0u);
  EXPECT_EQ(h.PercentileNs(50), 0u);
  EXPECT_EQ(h.PercentileNs(100), 0u);
}

TEST(HistogramTest, OverflowKeepsExactMax) {
  Histogram h;
  h.Record(5);
  h.Record(k2To40 * 3);
  EXPECT_EQ(h.max_ns(), k2To40 * 3);
  EXPECT_EQ(h.PercentileNs(100), k2To40 * 3);
  // The top bucket has no finite midpoint: it reports the exact maximum.
  EXPECT_EQ(h.PercentileNs(99), k2To40 * 3);
  EXPECT_EQ(h.PercentileNs(50), 5u);
}

TEST(HistogramTest, MeanAndStddevMatchExact) {
  std::mt19937_64 rng(6);
  std::vector<uint64_t> values = LogNormal(rng, 100000);
  long double sum = 0;
  for (uint64_t v : values) {
    sum += v;
  }
  long double mean = sum / values.size();
  long double ss = 0;
  for (uint64_t v : values) {
    ss += (v - mean) * (v - mean);
  }
  double stddev = static_cast<double>(std::sqrt(ss / values.size()));
  Histogram h = FromValues(values);
  EXPECT_NEAR(h.mean_ns(), static_cast<double>(mean), 1e-9 * static_cast<double>(mean));
  EXPECT_NEAR(h.stddev_ns(), stddev, 1e-9 * stddev);
  // Population (divide by n), not sample (n - 1): {10, 20} has stddev 5.
  Histogram two;
  two.Record(10);
  two.Record(20);
  EXPECT_DOUBLE_EQ(two.mean_ns(), 15.0);
  EXPECT_DOUBLE_EQ(two.stddev_ns(), 5.0);
}

TEST(HistogramTest, MergeEqualsRecordingAllInOne) {
  std::mt19937_64 rng(7);
  std::vector<uint64_t> a = Bimodal(rng, 30000);
  std::vector<uint64_t> b = LogNormal(rng, 50000);
  std::vector<uint64_t> all = a;
  all.insert(all.end(), b.begin(), b.end());
  Histogram ha = FromValues(a);
  Histogram hb = FromValues(b);
  Histogram whole = FromValues(all);

  Histogram merged;
  merged.Merge(Histogram());  // empty into empty
  merged.Merge(ha);
  merged.Merge(Histogram());
  merged.Merge(hb);
  EXPECT_EQ(merged.count(), whole.count());
  EXPECT_EQ(merged.min_ns(), whole.min_ns());
  EXPECT_EQ(merged.max_ns(), whole.max_ns());
  EXPECT_EQ(merged.ToJson()["buckets"], whole.ToJson()["buckets"]);
  for (double p : {0.0, 1.0, 50.0, 90.0, 99.0, 99.9, 100.0}) {
    EXPECT_EQ(merged.PercentileNs(p), whole.PercentileNs(p)) << p;
  }
  EXPECT_NEAR(merged.mean_ns(), whole.mean_ns(), 1e-9 * whole.mean_ns());
  EXPECT_NEAR(merged.stddev_ns(), whole.stddev_ns(), 1e-9 * whole.stddev_ns());
  EXPECT_EQ(ha.count(), a.size());  // the source is untouched
}

TEST(HistogramTest, MergeWithItselfDoubles) {
  Histogram h;
  h.Record(100);
  h.Record(300);
  h.Merge(h);
  EXPECT_EQ(h.count(), 4u);
  EXPECT_DOUBLE_EQ(h.mean_ns(), 200.0);
  EXPECT_DOUBLE_EQ(h.stddev_ns(), 100.0);
  EXPECT_EQ(h.PercentileNs(50), 100u);
  EXPECT_EQ(h.PercentileNs(51), 300u);
}

TEST(HistogramTest, CopyIsDeep) {
  Histogram a;
  a.Record(1000);
  Histogram b(a);
  b.Record(1000);
  Histogram c;
  c = a;
  c.Record(1000);
  c.Record(1000);
  EXPECT_EQ(a.count(), 1u);
  EXPECT_EQ(a.ToJson()["buckets"][0][1], 1);
  EXPECT_EQ(b.ToJson()["buckets"][0][1], 2);
  EXPECT_EQ(c.ToJson()["buckets"][0][1], 3);
}

TEST(HistogramTest, ResetEmptiesAndFrees) {
  Histogram h;
  size_t empty_bytes = h.MemoryBytes();
  h.Record(1'000'000);
  EXPECT_GT(h.MemoryBytes(), empty_bytes);
  h.Reset();
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.PercentileNs(50), 0u);
  EXPECT_EQ(h.MemoryBytes(), empty_bytes);
}

TEST(HistogramTest, MemoryDoesNotGrowWithRecords) {
  std::mt19937_64 rng(8);
  std::uniform_int_distribution<uint64_t> in_octave(1 << 20, (1 << 21) - 1);
  Histogram h;
  size_t empty_bytes = h.MemoryBytes();
  for (int i = 0; i < 1000; i++) {
    h.Record(in_octave(rng));
  }
  size_t after_1e3 = h.MemoryBytes();
  EXPECT_EQ(after_1e3, empty_bytes + Histogram::kSubBuckets * sizeof(uint64_t));
  for (int i = 0; i < 1000000; i++) {
    h.Record(in_octave(rng));
  }
  EXPECT_EQ(h.MemoryBytes(), after_1e3);
  // Every octave touched: the documented ~34 KiB bound.
  for (int k = 0; k <= 41; k++) {
    h.Record(uint64_t{1} << k);
  }
  EXPECT_EQ(h.MemoryBytes(),
            empty_bytes + Histogram::kOctaves * Histogram::kSubBuckets * sizeof(uint64_t));
  EXPECT_LT(h.MemoryBytes(), 36u * 1024);
}

TEST(HistogramTest, JsonRoundTrip) {
  std::mt19937_64 rng(9);
  Histogram h = FromValues(Bimodal(rng, 10000));
  h.Record(k2To40 * 2);
  h.Record(0);
  nlohmann::json j = nlohmann::json::parse(h.ToJson().dump());
  Histogram back;
  back.Record(77);  // overwritten
  std::string err;
  ASSERT_TRUE(back.FromJson(j, &err)) << err;
  EXPECT_EQ(back.ToJson(), h.ToJson());
  EXPECT_EQ(back.ToJson().dump(), h.ToJson().dump());
  EXPECT_EQ(back.PercentileNs(99.9), h.PercentileNs(99.9));
  EXPECT_EQ(back.min_ns(), 0u);
  EXPECT_EQ(back.MemoryBytes(), h.MemoryBytes());

  Histogram empty;
  ASSERT_TRUE(back.FromJson(Histogram().ToJson(), &err)) << err;
  EXPECT_EQ(back.ToJson(), empty.ToJson());
  back.Record(5);  // min_ resets correctly after restoring an empty histogram
  EXPECT_EQ(back.min_ns(), 5u);
}

TEST(HistogramTest, FromJsonRejectsAndLeavesUnchanged) {
  Histogram good;
  good.Record(100);
  good.Record(1000);
  good.Record(1000000);
  const nlohmann::json base = good.ToJson();
  struct Case {
    const char* name;
    nlohmann::json j;
    const char* expect;
  };
  auto with = [&](const char* key, nlohmann::json v) {
    nlohmann::json j = base;
    j[key] = std::move(v);
    return j;
  };
  auto without = [&](const char* key) {
    nlohmann::json j = base;
    j.erase(key);
    return j;
  };
  std::vector<Case> cases = {
      {"not an object", nlohmann::json::array(), "expected an object"},
      {"missing count", without("count"), "count: missing"},
      {"negative count", with("count", -3), "count: expected a non-negative integer"},
      {"float count", with("count", 3.5), "count: expected a non-negative integer"},
      {"string min", with("min_ns", "100"), "min_ns: expected a non-negative integer"},
      {"missing m2", without("m2"), "m2: missing"},
      {"negative m2", with("m2", -1.0), "m2: negative"},
      {"string mean", with("mean_ns", "x"), "mean_ns: expected a finite number"},
      {"buckets not array", with("buckets", 5), "buckets: expected an array"},
      {"bucket not a pair", with("buckets", {{100, 1, 2}}), "buckets[0]: expected [index, count]"},
      {"bucket negative", with("buckets", {{-1, 3}}), "buckets[0]: expected [index, count]"},
      {"index out of range", with("buckets", {{100, 1}, {kBuckets, 2}}),
       "buckets[1]: index 4352 out of range"},
      {"count mismatch", with("count", 4), "bucket counts add up to 3, count is 4"},
      {"duplicate index", with("buckets", {{100, 1}, {100, 2}}), "buckets[1]: duplicate index 100"},
      {"zero count", with("buckets", {{100, 1}, {200, 0}, {300, 2}}), "buckets[1]: count 0"},
      {"min > max", with("max_ns", 50), "min_ns 100 > max_ns 50"},
      {"min not lowest", with("min_ns", 101), "min_ns 101 is not in the lowest bucket"},
      {"max not highest", with("max_ns", 2000000), "max_ns 2000000 is not in the highest bucket"},
      {"mean out of range", with("mean_ns", 5e6), "mean_ns outside [min_ns, max_ns]"},
      {"empty with max",
       {{"count", 0},
        {"min_ns", 0},
        {"max_ns", 9},
        {"mean_ns", 0.0},
        {"m2", 0.0},
        {"buckets", nlohmann::json::array()}},
       "empty histogram with non-zero"},
  };
  for (const Case& c : cases) {
    Histogram h = good;
    std::string err;
    EXPECT_FALSE(h.FromJson(c.j, &err)) << c.name;
    EXPECT_NE(err.find(c.expect), std::string::npos) << c.name << ": " << err;
    EXPECT_EQ(h.ToJson(), base) << c.name;
  }
  Histogram h;
  EXPECT_FALSE(h.FromJson(nullptr, nullptr));  // err is optional
}

}  // namespace
}  // namespace cpuhp
