// SPDX-License-Identifier: GPL-2.0
#include "machine/hotplug_states.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace cpuhp {
namespace {

TEST(HotplugStates, ParsesThePaddedFormat) {
  HotplugStates s;
  int skipped = -1;
  ASSERT_TRUE(
      ParseHotplugStates("  0: offline\n 82: cpu:kick_ap\n144: cpu:teardown\n"
                         "235: sched:active\n196: io-wq/online\n",
                         &s, &skipped));
  EXPECT_EQ(skipped, 0);
  EXPECT_EQ(s.by_number.size(), 5u);
  EXPECT_EQ(s.Name(144), "cpu:teardown");
  EXPECT_EQ(s.Name(196), "io-wq/online");
  EXPECT_EQ(s.Number("sched:active"), 235);
  EXPECT_EQ(s.Name(145), "");
  EXPECT_EQ(s.Number("cpu:bringup"), -1);
}

TEST(HotplugStates, SkipsBadLinesAndRefusesEmpty) {
  HotplugStates s;
  int skipped = 0;
  ASSERT_TRUE(ParseHotplugStates("x: y\n 12 mm/writeback:dead\n-3: neg\n 13: mm/vmstat:dead\n\n",
                                 &s, &skipped));
  EXPECT_EQ(skipped, 3);
  EXPECT_EQ(s.by_number.size(), 1u);
  EXPECT_EQ(s.Name(13), "mm/vmstat:dead");
  HotplugStates before = s;
  EXPECT_FALSE(ParseHotplugStates("garbage\n", &s));
  EXPECT_EQ(s.by_number, before.by_number);
}

TEST(HotplugStates, ReadsTheRecordedTablesAndNamesTheFileOnError) {
  HotplugStates s;
  std::string err;
  // The fixture tree mirrors sysfs: <root>/hotplug/states is not there.
  EXPECT_FALSE(ReadHotplugStates("/nonexistent-root", &s, &err));
  EXPECT_EQ(err, "/nonexistent-root/hotplug/states: cannot read: No such file or directory");
}

TEST(HotplugStates, CapturedDebian61GuestTables) {
  // Captured in Debian 12 guests (tests/fixtures/trace/README.md): the core
  // states share numbers on both arches of this kernel, the arch states do not.
  for (const char* arch : {"x86_64", "arm64"}) {
    std::ifstream f(std::string(CPUHP_SOURCE_DIR) + "/tests/fixtures/trace/" + arch +
                    "-6.1.states");
    std::stringstream ss;
    ss << f.rdbuf();
    HotplugStates s;
    int skipped = -1;
    ASSERT_TRUE(ParseHotplugStates(ss.str(), &s, &skipped)) << arch;
    EXPECT_EQ(skipped, 0) << arch;
    EXPECT_EQ(s.Name(0), "offline");
    EXPECT_EQ(s.Number("cpu:teardown"), 153) << arch;
    EXPECT_EQ(s.Number("cpu:bringup"), 91) << arch;
    EXPECT_EQ(s.Number("sched:active"), 235) << arch;
    EXPECT_EQ(s.Number("online"), 236) << arch;
  }
  HotplugStates x86, arm;
  std::ifstream fx(std::string(CPUHP_SOURCE_DIR) + "/tests/fixtures/trace/x86_64-6.1.states");
  std::ifstream fa(std::string(CPUHP_SOURCE_DIR) + "/tests/fixtures/trace/arm64-6.1.states");
  std::stringstream sx, sa;
  sx << fx.rdbuf();
  sa << fa.rdbuf();
  ASSERT_TRUE(ParseHotplugStates(sx.str(), &x86));
  ASSERT_TRUE(ParseHotplugStates(sa.str(), &arm));
  EXPECT_EQ(x86.by_number.size(), 65u);
  EXPECT_EQ(arm.by_number.size(), 78u);
  EXPECT_EQ(x86.Number("x86/mce:dead"), 9);
  EXPECT_EQ(arm.Number("x86/mce:dead"), -1);
  EXPECT_EQ(x86.Number("irqchip/arm/gic:starting"), -1);
  EXPECT_GT(arm.Number("irqchip/arm/gic:starting"), 0);
}

}  // namespace
}  // namespace cpuhp
