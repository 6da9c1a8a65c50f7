// SPDX-License-Identifier: GPL-2.0
#include "machine/machine_lock.h"

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "testing/fake_sysfs.h"

namespace cpuhp {
namespace {

class MachineLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cpuhp-mlock.XXXXXX";
    run_ = mkdtemp(tmpl);
  }
  void TearDown() override { std::filesystem::remove_all(run_); }

  std::string run_;  // the holder records
  FakeSysfs fs_{2};
};

TEST_F(MachineLockTest, SecondHolderOfOneSysfsRootIsToldWhoHoldsIt) {
  MachineLock a;
  MachineLock b;
  std::string err;
  ASSERT_TRUE(a.Acquire(fs_.root(), "/var/lib/cpuhp-stress/a", run_, &err)) << err;
  EXPECT_FALSE(b.Acquire(fs_.root(), "/var/lib/cpuhp-stress/b", run_, &err));
  EXPECT_EQ(err, fs_.root() + ": another cpuhp-stress run is using these CPUs (pid " +
                     std::to_string(getpid()) + ", state directory /var/lib/cpuhp-stress/a)");
  EXPECT_FALSE(b.held());
  // The same root by another path is the same directory: still refused.
  EXPECT_FALSE(b.Acquire(fs_.root() + "/cpu0/..", "/x", run_, &err));
  a.Release();
  EXPECT_TRUE(std::filesystem::is_empty(run_));  // the record went with the lock
  EXPECT_TRUE(b.Acquire(fs_.root(), "/var/lib/cpuhp-stress/b", run_, &err)) << err;
}

TEST_F(MachineLockTest, OtherSysfsRootsAreIndependent) {
  FakeSysfs other(2);
  MachineLock a;
  MachineLock b;
  std::string err;
  ASSERT_TRUE(a.Acquire(fs_.root(), "/a", run_, &err)) << err;
  EXPECT_TRUE(b.Acquire(other.root(), "/b", run_, &err)) << err;
}

TEST_F(MachineLockTest, WithoutARecordTheHolderIsUnknownButStillExcluded) {
  MachineLock a;
  MachineLock b;
  std::string err;
  ASSERT_TRUE(a.Acquire(fs_.root(), "/a", "", &err)) << err;
  EXPECT_FALSE(b.Acquire(fs_.root(), "/b", run_, &err));
  EXPECT_NE(err.find("holder unknown"), std::string::npos) << err;
}

TEST_F(MachineLockTest, MissingRootIsAnErrorNamingIt) {
  MachineLock a;
  std::string err;
  EXPECT_FALSE(a.Acquire(fs_.root() + "/nope", "/a", run_, &err));
  EXPECT_EQ(err, fs_.root() + "/nope: cannot open CPU sysfs directory: No such file or directory");
}

}  // namespace
}  // namespace cpuhp
