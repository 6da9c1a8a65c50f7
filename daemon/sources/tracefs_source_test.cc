// SPDX-License-Identifier: GPL-2.0
// The tracepoints source's own part: the ring's capacity, its start on a
// directory standing in for tracefs, and its summary line.
#include "sources/tracefs_source.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "sources/trace_instance.h"
#include "testing/fake_tracefs.h"

namespace cpuhp {
namespace {

namespace fs = std::filesystem;

TEST(RingCapacity, OperationsOnTheBusiestCpu) {
  // 1410 KB per CPU (an instance's default on x86-64), ~53 events per write
  // on the writer's CPU: 567 writes, so a drain is asked for every ~140 and
  // the writer drains itself past ~280.
  EXPECT_EQ(RingCapacityOps(1410, 53), 1410u * 1024 / (53 * 48));
  EXPECT_EQ(RingCapacityOps(1410, 53), 567u);
  // Before a drain has counted them: 128 events assumed.
  EXPECT_EQ(RingCapacityOps(TracefsSource::kMinBufferKb, TracefsSource::kAssumedEventsPerOp), 170u);
  // Never 0, whatever the sizes.
  EXPECT_EQ(RingCapacityOps(0, 53), 1u);
  EXPECT_EQ(RingCapacityOps(1, 0), 21u);
}

TEST_F(FakeTracefs, WithoutTheStateTableTheSourceIsUnavailable) {
  TracefsSource src(sysfs_, root_);
  std::string why;
  EXPECT_FALSE(src.Start(&why));
  EXPECT_EQ(why, sysfs_ + "/hotplug/states: cannot read: No such file or directory");
  EXPECT_TRUE(fs::is_empty(root_ + "/instances"));
}

TEST_F(FakeTracefs, WithoutCpuhpEventsTheSourceIsUnavailableAndLeavesNothing) {
  std::ofstream(sysfs_ + "/hotplug/states") << "144: cpu:teardown\n";
  TracefsSource src(sysfs_, root_);
  std::string why;
  EXPECT_FALSE(src.Start(&why));
  EXPECT_EQ(why,
            root_ + "/events/cpuhp/cpuhp_enter is missing: this kernel has no cpuhp tracepoints");
  EXPECT_TRUE(fs::is_empty(root_ + "/instances"));
}

TEST_F(FakeTracefs, InstanceThatCannotBeSetUpIsRemoved) {
  MakeStatesAndEvents();
  TracefsSource src(sysfs_, root_);
  std::string why;
  // A plain directory has no trace_clock file in the new "instance".
  EXPECT_FALSE(src.Start(&why));
  EXPECT_NE(why.find("/trace_clock: cannot open"), std::string::npos) << why;
  // Files are opened without O_CREAT, so the directory stays empty and goes.
  EXPECT_TRUE(fs::is_empty(root_ + "/instances"));
}

TEST_F(FakeTracefs, KeptInstanceFoundBeforeStaysWhenSetUpFails) {
  MakeStatesAndEvents();
  const std::string kept = root_ + "/instances/" + kKeptInstance;
  fs::create_directories(kept);
  TracefsSource src(sysfs_, root_);
  std::string why;
  EXPECT_FALSE(src.Start(&why));
  // Found, so stopped first; not this run's to remove.
  EXPECT_EQ(why, kept + "/tracing_on: cannot open: No such file or directory");
  EXPECT_TRUE(fs::is_directory(kept));
}

TEST_F(FakeTracefs, HeldKeptInstanceMakesTheRunUseItsOwn) {
  MakeStatesAndEvents();
  const std::string kept = root_ + "/instances/" + kKeptInstance;
  fs::create_directories(kept);
  const int held = open(kept.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(held, 0);
  ASSERT_EQ(flock(held, LOCK_EX | LOCK_NB), 0);
  TracefsSource src(sysfs_, root_);
  std::string why;
  EXPECT_FALSE(src.Start(&why));
  const std::string own = root_ + "/instances/cpuhp-stress-" + std::to_string(getpid());
  EXPECT_EQ(why, own + "/trace_clock: cannot open: No such file or directory");
  EXPECT_FALSE(fs::exists(own));
  EXPECT_TRUE(fs::is_directory(kept));
  close(held);
}

TEST(TracepointsSummary, SaysWhyWhenUnavailable) {
  EXPECT_EQ(TracepointsSummary({{"status", "unavailable"}, {"reason", "no tracefs"}}),
            "kernel states (tracepoints): unavailable: no tracefs\n");
}

}  // namespace
}  // namespace cpuhp
