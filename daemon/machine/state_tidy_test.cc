// SPDX-License-Identifier: GPL-2.0
#include "machine/state_tidy.h"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "machine/restore.h"

namespace cpuhp {
namespace {

namespace fs = std::filesystem;

class StateTidyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cpuhp-tidy-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Touch(const std::string& name) { std::ofstream(dir_ + "/" + name) << "{}\n"; }
  bool Has(const std::string& name) { return fs::exists(dir_ + "/" + name); }
  // A pid that is certainly not alive: a child that has exited and been reaped.
  static pid_t DeadPid() {
    const pid_t pid = fork();
    if (pid == 0)
      _exit(0);
    waitpid(pid, nullptr, 0);
    return pid;
  }
  std::string dir_;
};

// Issue 29 item 9: a kill -9 between write and rename leaves
// checkpoint.json.tmp.<pid>, and every refused checkpoint is set aside as
// checkpoint.json.rejected-<stamp>; taking the state directory clears the
// first (writer dead) and keeps the newest 5 of the second.
TEST_F(StateTidyTest, LockRemovesDeadTempFilesAndOldRejectedOnes) {
  const std::string dead = "checkpoint.json.tmp." + std::to_string(DeadPid());
  const std::string live = "checkpoint.json.tmp." + std::to_string(getppid());
  Touch(dead);
  Touch(live);
  Touch("state.json");
  Touch("checkpoint.json");
  Touch("notes.tmp.x1");  // not a pid: left alone
  for (int i = 0; i < 8; ++i)
    Touch("checkpoint.json.rejected-2026120" + std::to_string(i) + "T000000000Z");
  Touch("state.json.rejected-20261201T000000000Z");
  {
    StateDir d(dir_);
    std::string err;
    ASSERT_TRUE(d.Lock(&err)) << err;
  }
  EXPECT_FALSE(Has(dead));
  EXPECT_TRUE(Has(live));
  EXPECT_TRUE(Has("state.json"));
  EXPECT_TRUE(Has("checkpoint.json"));
  EXPECT_TRUE(Has("notes.tmp.x1"));
  for (int i = 0; i < 3; ++i)
    EXPECT_FALSE(Has("checkpoint.json.rejected-2026120" + std::to_string(i) + "T000000000Z")) << i;
  for (int i = 3; i < 8; ++i)
    EXPECT_TRUE(Has("checkpoint.json.rejected-2026120" + std::to_string(i) + "T000000000Z")) << i;
  EXPECT_TRUE(Has("state.json.rejected-20261201T000000000Z"));
  // Nothing more to do the second time.
  EXPECT_TRUE(TidyStateDir(dir_, kKeepRejected).empty());
}

}  // namespace
}  // namespace cpuhp
