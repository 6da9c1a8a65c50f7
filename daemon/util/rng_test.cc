// SPDX-License-Identifier: GPL-2.0
#include "util/rng.h"

#include <gtest/gtest.h>

namespace cpuhp {
namespace {

// The 32-bit halves' product against products known by hand, on every
// target (armhf takes this path, 64-bit targets the compiler's 128 bits).
TEST(RngTest, WideProductFromHalvesIsExact) {
  uint64_t high = 0;
  EXPECT_EQ(MulWideHalves(~0ull, ~0ull, &high), 1u);
  EXPECT_EQ(high, 0xfffffffffffffffeull);
  EXPECT_EQ(MulWideHalves(1ull << 32, 1ull << 32, &high), 0u);
  EXPECT_EQ(high, 1u);
  EXPECT_EQ(MulWideHalves(0xffffffffull, 0xffffffffull, &high), 0xfffffffe00000001ull);
  EXPECT_EQ(high, 0u);
  EXPECT_EQ(MulWideHalves(0x123456789abcdef0ull, 0, &high), 0u);
  EXPECT_EQ(high, 0u);
  // (2^64 - 1) * 3 = 2 * 2^64 + (2^64 - 3)
  EXPECT_EQ(MulWideHalves(~0ull, 3, &high), ~0ull - 2);
  EXPECT_EQ(high, 2u);
  Rng r(3);
  for (int i = 0; i < 100000; ++i) {
    const uint64_t a = r.Next(), b = r.Next();
    uint64_t h1 = 0, h2 = 0;
    ASSERT_EQ(MulWideHalves(a, b, &h1), MulWide(a, b, &h2)) << a << " * " << b;
    ASSERT_EQ(h1, h2) << a << " * " << b;
    ASSERT_EQ(MulWideHalves(a, b, &h1), a * b);  // the low half is the wrapped product
  }
}

// A seed draws the same numbers on every architecture and compiler: a run's
// seed and a checkpoint's state mean the same schedule on a 32-bit board
// (values from x86-64, before the 32-bit path existed).
TEST(RngTest, SeedDrawsTheSameSequenceEverywhere) {
  Rng r(42);
  for (uint64_t want :
       {83862971ull, 378980253ull, 680043415ull, 924692951ull, 991803921ull, 769739465ull})
    EXPECT_EQ(r.Below(1000000007ull), want);
  Rng q(7);
  for (uint64_t want :
       {0xb358faf74ef9764full, 0x475c3d964f482ccdull, 0xd6f1d349952c7989ull, 0xfb2938731e807231ull})
    EXPECT_EQ(q.Below(0xfffffffffffffff1ull), want);
}

}  // namespace
}  // namespace cpuhp
