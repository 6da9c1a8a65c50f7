// SPDX-License-Identifier: GPL-2.0
// Index layout (serialized in checkpoints; do not change):
//   index = shift * 128 + (v >> shift), shift = max(0, bit_width(v) - 8)
// so index == v below 256 (octaves 0 and 1 are exact), and octave j >= 1
// holds [2^(j+6), 2^(j+7)) in 128 sub-buckets of width 2^(j-1). Values at or
// above 2^40 are clamped into the last bucket, index 34 * 128 - 1.
#include "stats/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "util/json_file.h"

namespace cpuhp {

namespace {

constexpr int kBuckets = Histogram::kOctaves * Histogram::kSubBuckets;
constexpr int kTopIndex = kBuckets - 1;
constexpr uint64_t kMaxTracked = (uint64_t{1} << Histogram::kMaxValueBits) - 1;

// The value reported for a bucket. In the top bucket this is far above any
// value it can hold, so the [min, max] clamp reports the exact maximum there.
uint64_t BucketMid(int index) {
  uint64_t low = Histogram::BucketLow(index);
  return low + (Histogram::BucketHigh(index) - low) / 2;
}

bool GetFinite(const nlohmann::json& j, const char* key, double* out, std::string* msg) {
  auto it = j.find(key);
  if (it == j.end()) {
    *msg = std::string(key) + ": missing";
    return false;
  }
  if (!it->is_number() || !std::isfinite(it->get<double>())) {
    *msg = std::string(key) + ": expected a finite number";
    return false;
  }
  *out = it->get<double>();
  return true;
}

bool AsU64(const nlohmann::json& v, uint64_t* out) {
  if (v.is_number_unsigned()) {
    *out = v.get<uint64_t>();
    return true;
  }
  if (v.is_number_integer() && v.get<int64_t>() >= 0) {
    *out = static_cast<uint64_t>(v.get<int64_t>());
    return true;
  }
  return false;
}

}  // namespace

Histogram::Histogram(const Histogram& other)
    : count_(other.count_), min_(other.min_), max_(other.max_), mean_(other.mean_), m2_(other.m2_) {
  for (int o = 0; o < kOctaves; o++) {
    if (other.octaves_[o]) {
      octaves_[o] = std::make_unique<Octave>(*other.octaves_[o]);
    }
  }
}

Histogram& Histogram::operator=(const Histogram& other) {
  if (this != &other) {
    Histogram copy(other);
    *this = std::move(copy);
  }
  return *this;
}

int Histogram::BucketIndex(uint64_t value_ns) {
  uint64_t v = std::min(value_ns, kMaxTracked);
  int shift = std::bit_width(v | kSubBuckets) - (kSubBucketBits + 1);
  return (shift << kSubBucketBits) + static_cast<int>(v >> shift);
}

uint64_t Histogram::BucketLow(int index) {
  if (index < 0 || index >= kBuckets) {
    return 0;
  }
  int octave = index >> kSubBucketBits;
  if (octave == 0) {
    return static_cast<uint64_t>(index);
  }
  uint64_t mantissa = kSubBuckets + (index & (kSubBuckets - 1));
  return mantissa << (octave - 1);
}

uint64_t Histogram::BucketHigh(int index) {
  if (index < 0 || index >= kBuckets) {
    return 0;
  }
  if (index == kTopIndex) {
    return UINT64_MAX;  // overflow values land here too
  }
  int octave = index >> kSubBucketBits;
  uint64_t width = octave == 0 ? 1 : uint64_t{1} << (octave - 1);
  return BucketLow(index) + width - 1;
}

void Histogram::Record(uint64_t value_ns) {
  int index = BucketIndex(value_ns);
  std::unique_ptr<Octave>& octave = octaves_[index >> kSubBucketBits];
  if (!octave) [[unlikely]] {
    octave = std::make_unique<Octave>();  // value-initialized: zeros
  }
  (*octave)[index & (kSubBuckets - 1)]++;
  count_++;
  min_ = std::min(min_, value_ns);
  max_ = std::max(max_, value_ns);
  // Welford. The reciprocal does not depend on mean_, so the division runs
  // beside the mean_ -> mean_ dependency chain instead of lengthening it.
  // count_ stays far below 2^63; the signed conversion needs no branch.
  double inv_count = 1.0 / static_cast<double>(static_cast<int64_t>(count_));
  double x = static_cast<double>(value_ns);
  double delta = x - mean_;
  mean_ += delta * inv_count;
  m2_ += delta * (x - mean_);
}

void Histogram::Merge(const Histogram& other) {
  if (other.count_ == 0) {
    return;
  }
  if (&other == this) {
    Histogram copy(other);
    Merge(copy);
    return;
  }
  for (int o = 0; o < kOctaves; o++) {
    if (!other.octaves_[o]) {
      continue;
    }
    if (!octaves_[o]) {
      octaves_[o] = std::make_unique<Octave>(*other.octaves_[o]);
      continue;
    }
    for (int s = 0; s < kSubBuckets; s++) {
      (*octaves_[o])[s] += (*other.octaves_[o])[s];
    }
  }
  // Chan et al.'s pairwise combination of (count, mean, M2).
  double na = static_cast<double>(count_);
  double nb = static_cast<double>(other.count_);
  double n = na + nb;
  double delta = other.mean_ - mean_;
  if (count_ == 0) {
    mean_ = other.mean_;
    m2_ = other.m2_;
  } else {
    mean_ += delta * (nb / n);
    m2_ += other.m2_ + delta * delta * (na * nb / n);
  }
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

void Histogram::Reset() {
  *this = Histogram();
}

double Histogram::stddev_ns() const {
  return count_ ? std::sqrt(m2_ / static_cast<double>(count_)) : 0.0;
}

uint64_t Histogram::PercentileNs(double p) const {
  if (count_ == 0) {
    return 0;
  }
  if (!(p > 0)) {  // also NaN
    return min_;
  }
  if (p >= 100) {
    return max_;
  }
  // Nearest rank. 99.9 is not exact in binary, and 99.9 / 100 * 1e5 comes out
  // as 99900.00000000001; shave the rounding noise so ceil() gives 99900.
  double r = p / 100.0 * static_cast<double>(count_);
  uint64_t rank = static_cast<uint64_t>(std::ceil(r - r * 1e-12));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t cumulative = 0;
  for (int o = 0; o < kOctaves; o++) {
    if (!octaves_[o]) {
      continue;
    }
    for (int s = 0; s < kSubBuckets; s++) {
      cumulative += (*octaves_[o])[s];
      if (cumulative >= rank) {
        return std::clamp(BucketMid(o * kSubBuckets + s), min_, max_);
      }
    }
  }
  return max_;  // unreachable while the bucket counts add up to count_
}

nlohmann::json Histogram::ToJson() const {
  nlohmann::json buckets = nlohmann::json::array();
  for (int o = 0; o < kOctaves; o++) {
    if (!octaves_[o]) {
      continue;
    }
    for (int s = 0; s < kSubBuckets; s++) {
      if (uint64_t c = (*octaves_[o])[s]) {
        buckets.push_back(nlohmann::json::array({o * kSubBuckets + s, c}));
      }
    }
  }
  return nlohmann::json{{"count", count_},  {"min_ns", min_ns()}, {"max_ns", max_},
                        {"mean_ns", mean_}, {"m2", m2_},          {"buckets", std::move(buckets)}};
}

bool Histogram::FromJson(const nlohmann::json& j, std::string* err) {
  std::string msg;
  auto fail = [&](const std::string& m) {
    if (err) {
      *err = "histogram: " + m;
    }
    return false;
  };
  if (!j.is_object()) {
    return fail("expected an object");
  }
  Histogram h;
  uint64_t min_ns = 0;
  if (!ReadU64Field(j, "", "count", &h.count_, &msg) ||
      !ReadU64Field(j, "", "min_ns", &min_ns, &msg) ||
      !ReadU64Field(j, "", "max_ns", &h.max_, &msg) || !GetFinite(j, "mean_ns", &h.mean_, &msg) ||
      !GetFinite(j, "m2", &h.m2_, &msg)) {
    return fail(msg);
  }
  if (h.m2_ < 0) {
    return fail("m2: negative");
  }
  auto it = j.find("buckets");
  if (it == j.end() || !it->is_array()) {
    return fail("buckets: expected an array of [index, count]");
  }
  uint64_t sum = 0;
  int lowest = kBuckets;
  int highest = -1;
  for (size_t i = 0; i < it->size(); i++) {
    const nlohmann::json& b = (*it)[i];
    std::string where = "buckets[" + std::to_string(i) + "]: ";
    uint64_t index = 0;
    uint64_t c = 0;
    if (!b.is_array() || b.size() != 2 || !AsU64(b[0], &index) || !AsU64(b[1], &c)) {
      return fail(where + "expected [index, count] of non-negative integers");
    }
    if (index >= static_cast<uint64_t>(kBuckets)) {
      return fail(where + "index " + std::to_string(index) + " out of range [0, " +
                  std::to_string(kBuckets) + ")");
    }
    if (c == 0) {
      return fail(where + "count 0 (only non-empty buckets are stored)");
    }
    int idx = static_cast<int>(index);
    std::unique_ptr<Octave>& octave = h.octaves_[idx >> kSubBucketBits];
    if (!octave) {
      octave = std::make_unique<Octave>();
    }
    uint64_t& slot = (*octave)[idx & (kSubBuckets - 1)];
    if (slot != 0) {
      return fail(where + "duplicate index " + std::to_string(index));
    }
    slot = c;
    if (sum + c < sum) {
      return fail(where + "bucket counts overflow");
    }
    sum += c;
    lowest = std::min(lowest, idx);
    highest = std::max(highest, idx);
  }
  if (sum != h.count_) {
    return fail("bucket counts add up to " + std::to_string(sum) + ", count is " +
                std::to_string(h.count_));
  }
  if (h.count_ == 0) {
    if (min_ns != 0 || h.max_ != 0 || h.mean_ != 0 || h.m2_ != 0) {
      return fail("empty histogram with non-zero min_ns, max_ns, mean_ns or m2");
    }
    h.min_ = UINT64_MAX;
  } else {
    if (min_ns > h.max_) {
      return fail("min_ns " + std::to_string(min_ns) + " > max_ns " + std::to_string(h.max_));
    }
    if (BucketIndex(min_ns) != lowest) {
      return fail("min_ns " + std::to_string(min_ns) + " is not in the lowest bucket");
    }
    if (BucketIndex(h.max_) != highest) {
      return fail("max_ns " + std::to_string(h.max_) + " is not in the highest bucket");
    }
    // Welford's running mean can sit a rounding error outside [min, max].
    double slack = 1e-9 * static_cast<double>(h.max_) + 1e-9;
    if (h.mean_ < static_cast<double>(min_ns) - slack ||
        h.mean_ > static_cast<double>(h.max_) + slack) {
      return fail("mean_ns outside [min_ns, max_ns]");
    }
    h.min_ = min_ns;
  }
  *this = std::move(h);
  return true;
}

size_t Histogram::MemoryBytes() const {
  size_t octaves = 0;
  for (const auto& o : octaves_) {
    octaves += o != nullptr;
  }
  return sizeof(*this) + octaves * sizeof(Octave);
}

}  // namespace cpuhp
