// SPDX-License-Identifier: GPL-2.0
// xoshiro256** seeded through splitmix64: the same sequence on every libc and
// compiler (std:: distributions are not portable), and a 4-word state that a
// checkpoint can save.
#pragma once

#include <array>
#include <cstdint>

namespace cpuhp {

// a * b as 128 bits: the low half returned, the high half in *high. With
// the compiler's 128-bit integer where it has one (64-bit targets), else
// from 32-bit halves (armhf, issue 36): the same values, so a seed draws
// the same sequence on every architecture.
inline uint64_t MulWideHalves(uint64_t a, uint64_t b, uint64_t* high) {
  const uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
  const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
  *high = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
  return (mid << 32) | (p00 & 0xffffffffu);
}
inline uint64_t MulWide(uint64_t a, uint64_t b, uint64_t* high) {
#ifdef __SIZEOF_INT128__
  const unsigned __int128 m = static_cast<unsigned __int128>(a) * b;
  *high = static_cast<uint64_t>(m >> 64);
  return static_cast<uint64_t>(m);
#else
  return MulWideHalves(a, b, high);
#endif
}

class Rng {
 public:
  explicit Rng(uint64_t seed = 0) { Seed(seed); }

  void Seed(uint64_t seed) {
    for (auto& w : s_) {
      seed += 0x9e3779b97f4a7c15ull;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      w = z ^ (z >> 31);
    }
  }

  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, n), unbiased (Lemire). n > 0.
  uint64_t Below(uint64_t n) {
    uint64_t high = 0;
    uint64_t low = MulWide(Next(), n, &high);
    if (low < n) {
      const uint64_t threshold = -n % n;
      while (low < threshold)
        low = MulWide(Next(), n, &high);
    }
    return high;
  }

  // Uniform in [0, 1).
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

  const std::array<uint64_t, 4>& state() const { return s_; }
  // xoshiro's one forbidden state is all zero: Next() would return 0 forever
  // and Below() never leave its loop. A checkpoint cannot give us that one.
  bool set_state(const std::array<uint64_t, 4>& s) {
    if ((s[0] | s[1] | s[2] | s[3]) == 0)
      return false;
    s_ = s;
    return true;
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::array<uint64_t, 4> s_;
};

}  // namespace cpuhp
