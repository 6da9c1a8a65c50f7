// SPDX-License-Identifier: GPL-2.0
// A log-linear (HDR-style) latency histogram: exact below 128 ns, then each
// power of two split into 128 linear sub-buckets, so a recorded value is known
// to within 1/128 of itself (reported at the bucket's midpoint: <= 0.4 %
// relative error). Range 0 .. 2^40 ns (~18 min); larger values land in the top
// bucket while min/max stay exact. Memory is bounded (at most ~34 KiB) and
// allocated an octave at a time as values arrive, so a histogram that only
// ever sees milliseconds costs a few KiB.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace cpuhp {

class Histogram {
 public:
  static constexpr int kSubBucketBits = 7;
  static constexpr int kSubBuckets = 1 << kSubBucketBits;  // 128
  static constexpr int kMaxValueBits = 40;
  static constexpr int kOctaves = kMaxValueBits - kSubBucketBits + 1;  // 34

  Histogram() = default;
  Histogram(const Histogram& other);
  Histogram& operator=(const Histogram& other);
  Histogram(Histogram&&) noexcept = default;
  Histogram& operator=(Histogram&&) noexcept = default;

  void Record(uint64_t value_ns);
  // Adds all of `other` (exactly: counts, min, max, mean and variance).
  void Merge(const Histogram& other);
  void Reset();

  uint64_t count() const { return count_; }
  uint64_t min_ns() const { return count_ ? min_ : 0; }
  uint64_t max_ns() const { return max_; }
  double mean_ns() const { return mean_; }
  double stddev_ns() const;  // population standard deviation

  // The value at percentile p (0..100): the smallest recorded bucket whose
  // cumulative count reaches ceil(p/100 * count), at its midpoint, clamped to
  // [min, max]. 0 when empty.
  uint64_t PercentileNs(double p) const;

  // Serialized form for checkpoints and merges: {"count", "min_ns", "max_ns",
  // "mean_ns", "m2", "buckets": [[index, count], ...]} (non-zero buckets only).
  nlohmann::json ToJson() const;
  // Returns false on malformed or inconsistent input (counts that do not add
  // up, indices out of range); *this is unchanged then.
  bool FromJson(const nlohmann::json& j, std::string* err);

  // Bucket arithmetic, exposed for tests.
  static int BucketIndex(uint64_t value_ns);
  static uint64_t BucketLow(int index);   // smallest value in the bucket
  static uint64_t BucketHigh(int index);  // largest value in the bucket

  // Bytes held by this histogram (for the memory-bound bench and tests).
  size_t MemoryBytes() const;

 private:
  using Octave = std::array<uint64_t, kSubBuckets>;
  std::array<std::unique_ptr<Octave>, kOctaves> octaves_{};
  uint64_t count_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
  double mean_ = 0;  // Welford: mergeable, no overflow over days of ns
  double m2_ = 0;
};

}  // namespace cpuhp
