// SPDX-License-Identifier: GPL-2.0
#include "hotplug_states.h"

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

}  // namespace
}  // namespace cpuhp
