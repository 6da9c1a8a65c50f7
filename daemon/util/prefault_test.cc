// SPDX-License-Identifier: GPL-2.0
#include "util/prefault.h"

#include <sys/resource.h>

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace cpuhp {
namespace {

long MinorFaults() {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  return ru.ru_minflt;
}

// Filling what Prefault made takes no page fault; the same fill of memory
// only reserved faults its pages in (issue 31: inside a timed loop).
TEST(Prefault, FillingAfterwardsFaultsNoPage) {
  constexpr size_t kN = (8u << 20) / sizeof(uint64_t);  // 8 MiB
  std::vector<uint64_t> reserved, prefaulted;
  reserved.reserve(kN);
  Prefault(&prefaulted, kN);
  EXPECT_GE(prefaulted.capacity(), kN);
  EXPECT_TRUE(prefaulted.empty());

  long before = MinorFaults();
  for (size_t i = 0; i < kN; ++i)
    prefaulted.push_back(i);
  const long after_prefault = MinorFaults() - before;
  before = MinorFaults();
  for (size_t i = 0; i < kN; ++i)
    reserved.push_back(i);
  const long after_reserve = MinorFaults() - before;
  EXPECT_LE(after_prefault, 2);
  EXPECT_GT(after_reserve, after_prefault);
  EXPECT_EQ(prefaulted, reserved);
}

// What the vector held stays; a vector already large enough is left alone.
TEST(Prefault, KeepsTheElementsAndNeverShrinks) {
  std::vector<int> v{1, 2, 3};
  Prefault(&v, 1000);
  EXPECT_EQ(v, (std::vector<int>{1, 2, 3}));
  EXPECT_GE(v.capacity(), 1000u);
  const int* data = v.data();
  Prefault(&v, 10);
  EXPECT_EQ(v.data(), data);
}

}  // namespace
}  // namespace cpuhp
