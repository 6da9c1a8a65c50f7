// SPDX-License-Identifier: GPL-2.0
// The instances of other runs and the kept one, on a directory standing in
// for tracefs.
#include "sources/trace_instance.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "testing/fake_tracefs.h"

namespace cpuhp {
namespace {

namespace fs = std::filesystem;

int DeadPid() {
  pid_t p = fork();
  if (p == 0)
    _exit(0);
  waitpid(p, nullptr, 0);
  return p;
}

TEST_F(FakeTracefs, RestoreRemovesTheKeptInstanceOnlyWhenNoRunHoldsIt) {
  const std::string kept = root_ + "/instances/" + kKeptInstance;
  std::string err;
  EXPECT_FALSE(RemoveKeptTraceInstance(root_, &err));  // none
  EXPECT_EQ(err, "");
  fs::create_directories(kept);
  const int held = open(kept.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(held, 0);
  ASSERT_EQ(flock(held, LOCK_EX | LOCK_NB), 0);
  EXPECT_FALSE(RemoveKeptTraceInstance(root_, &err));
  EXPECT_EQ(err, "");
  EXPECT_TRUE(fs::is_directory(kept));
  close(held);
  EXPECT_TRUE(RemoveKeptTraceInstance(root_, &err)) << err;
  EXPECT_FALSE(fs::exists(kept));
}

TEST_F(FakeTracefs, StaleInstancesOfDeadRunsAreRemovedOthersKept) {
  const int dead = DeadPid();
  const std::string mine = "cpuhp-stress-" + std::to_string(getpid());
  const std::string stale = "cpuhp-stress-" + std::to_string(dead);
  for (const std::string& n : {mine, stale, std::string("cpuhp-stress-x"), std::string("user")})
    fs::create_directories(root_ + "/instances/" + n);
  std::vector<std::string> errs;
  std::vector<std::string> removed = RemoveStaleTraceInstances(root_, &errs);
  EXPECT_TRUE(errs.empty());
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(removed[0], stale);
  EXPECT_FALSE(fs::exists(root_ + "/instances/" + stale));
  EXPECT_TRUE(fs::exists(root_ + "/instances/" + mine));
  EXPECT_TRUE(fs::exists(root_ + "/instances/user"));
  EXPECT_TRUE(fs::exists(root_ + "/instances/cpuhp-stress-x"));
}

// The per-CPU buffers an instance has: cpuN directories only, N whole,
// ascending as numbers (the raw reader's and the lost-event stats' CPUs).
TEST(InstanceCpus, EveryCpuNDirectoryInNumericOrder) {
  const fs::path dir = fs::path(::testing::TempDir()) / "instance-cpus";
  fs::remove_all(dir);
  for (const char* n : {"cpu10", "cpu0", "cpu2", "cpu", "cpuX", "cpu1a", "stats"})
    fs::create_directories(dir / "per_cpu" / n);
  EXPECT_EQ(InstanceCpus(dir.string()), (std::vector<int>{0, 2, 10}));
  EXPECT_TRUE(InstanceCpus((dir / "absent").string()).empty());
  fs::remove_all(dir);
}

TEST(FindTracefs, PrefersTheStandardMountPoint) {
  char tmpl[] = "/tmp/cpuhp-mounts.XXXXXX";
  int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(tmpl) << "sysfs /sys sysfs rw 0 0\n"
                         "tracefs /sys/kernel/debug/tracing tracefs rw 0 0\n"
                         "nodev /sys/kernel/tracing tracefs rw,relatime 0 0\n";
  EXPECT_EQ(FindTracefs(tmpl), "/sys/kernel/tracing");
  std::ofstream(tmpl) << "tracefs /sys/kernel/debug/tracing tracefs rw 0 0\n";
  EXPECT_EQ(FindTracefs(tmpl), "/sys/kernel/debug/tracing");
  std::ofstream(tmpl) << "sysfs /sys sysfs rw 0 0\n";
  EXPECT_EQ(FindTracefs(tmpl), "");
  unlink(tmpl);
}

}  // namespace
}  // namespace cpuhp
