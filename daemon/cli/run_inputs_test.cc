// SPDX-License-Identifier: GPL-2.0
// The CPU selection, through `run`: a selection it refuses touches nothing.
#include "cli/run_inputs.h"

#include <csignal>
#include <string>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/run_command.h"
#include "machine/topology.h"
#include "testing/run_command_fixture.h"

namespace cpuhp {
namespace {

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

// Issue 29 item 7: a symlink at cpu3/online got the run's "0" in the first
// byte of the file it named. Refused before any write, naming the link.
TEST_F(CommandsTest, ASymlinkAtASelectedOnlineFileIsBadInput) {
  fs_.Write("victim", "precious\n");
  fs_.Symlink("cpu3/online", fs_.root() + "/victim");
  cfg_.cpus = "1-3";
  cfg_.iterations = 6;
  EXPECT_EQ(RunCommand(cfg_, &g_no_stop, out_), kExitBadInput);
  EXPECT_EQ(fs_.Read("victim"), "precious\n");
  EXPECT_FALSE(ReportExists());
  for (int c = 1; c < 3; ++c)
    EXPECT_EQ(fs_.Online(c), '1');
  Topology topo;
  std::vector<int> selected;
  std::string err;
  auto ctl = NewSysfsCpuControl(fs_.root());
  ASSERT_TRUE(DiscoverTopology(ctl.get(), &topo, &err)) << err;
  EXPECT_FALSE(SelectCpus(cfg_, topo, ctl.get(), &selected, &err));
  EXPECT_EQ(err, fs_.root() +
                     "/cpu3/online: a symbolic link: refused (nothing under a sysfs root is "
                     "followed)");
}

}  // namespace
}  // namespace cpuhp
