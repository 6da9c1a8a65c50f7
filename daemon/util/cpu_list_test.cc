// SPDX-License-Identifier: GPL-2.0
#include "util/cpu_list.h"

#include <chrono>

#include <gtest/gtest.h>

namespace cpuhp {
namespace {

std::vector<int> Parse(const char* s) {
  std::vector<int> v;
  std::string err;
  EXPECT_TRUE(ParseCpuList(s, &v, &err)) << s << ": " << err;
  return v;
}

TEST(CpuListTest, ParsesKernelSyntax) {
  EXPECT_EQ(Parse("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(Parse("1"), (std::vector<int>{1}));
  EXPECT_EQ(Parse("\n"), (std::vector<int>{}));
  EXPECT_EQ(Parse("5,1-2,2"), (std::vector<int>{1, 2, 5}));
}

TEST(CpuListTest, RejectsBadSyntax) {
  for (const char* bad :
       {"a", "1,,2", "3-1", "-1", "1-", ",", "1 2", "99999999", "1-70000", "0x1"}) {
    std::vector<int> v{42};
    std::string err;
    EXPECT_FALSE(ParseCpuList(bad, &v, &err)) << bad;
    EXPECT_NE(err.find("bad CPU list"), std::string::npos) << err;
    EXPECT_TRUE(v.empty());
  }
}

// A planted state.json, a 1 MiB config or --cpus value: the work and the
// memory are bounded by the largest CPU number, not by what is repeated.
TEST(CpuListTest, RepeatedRangesCostNoMoreThanOneCopy) {
  std::string list;
  for (int i = 0; i < 2000; ++i)
    list += "0-65535,";
  list += "7";
  std::vector<int> v;
  std::string err;
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(ParseCpuList(list, &v, &err)) << err;
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(v.size(), 65536u);
  EXPECT_EQ(v.back(), 65535);
  EXPECT_LT(took.count(), 0.5);  // the old expansion: 131 million entries, seconds
  EXPECT_EQ(Parse("8-9,0-3,2-5,9"), (std::vector<int>{0, 1, 2, 3, 4, 5, 8, 9}));
  // An error quotes a megabyte list in one short line.
  EXPECT_FALSE(ParseCpuList(list + ",x", &v, &err));
  EXPECT_LT(err.size(), 250u) << err.size();
}

TEST(CpuListTest, FormatsRanges) {
  EXPECT_EQ(FormatCpuList({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(FormatCpuList({}), "");
  EXPECT_EQ(FormatCpuList({7}), "7");
  EXPECT_EQ(FormatCpuList(Parse("1-7,9")), "1-7,9");
}

}  // namespace
}  // namespace cpuhp
