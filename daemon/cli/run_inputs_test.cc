// SPDX-License-Identifier: GPL-2.0
// The CPU selection, through `run`: a selection it refuses touches nothing.
#include "cli/run_inputs.h"

#include <csignal>
#include <string>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/run_command.h"
#include "testing/run_command_fixture.h"

namespace cpuhp {
namespace {

volatile sig_atomic_t g_no_stop = 0;

TEST_F(CommandsTest, BadCpuSelectionTouchesNothing) {
  for (const char* cpus : {"0", "9", "1-2,7"}) {
    cfg_.cpus = cpus;
    EXPECT_EQ(RunCommand(cfg_, &g_no_stop, out_), kExitBadInput) << cpus;
    EXPECT_FALSE(ReportExists());
    for (int c = 1; c < 4; ++c)
      EXPECT_EQ(fs_.Online(c), '1');
  }
}

TEST_F(CommandsTest, NoHotpluggableCpuIsBadInput) {
  FakeSysfs one(1);
  cfg_.sysfs_root = one.root();
  EXPECT_EQ(RunCommand(cfg_, &g_no_stop, out_), kExitBadInput);
  EXPECT_FALSE(ReportExists());
}

}  // namespace
}  // namespace cpuhp
