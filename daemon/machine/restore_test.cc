// SPDX-License-Identifier: GPL-2.0
#include "machine/restore.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "machine/sim_cpu_control.h"
#include "testing/fake_sysfs.h"

namespace cpuhp {
namespace {

std::string TempDir() {
  char tmpl[] = "/tmp/cpuhp-state.XXXXXX";
  return mkdtemp(tmpl);
}

TEST(RestoreTest, StateFileRoundTrip) {
  std::string d = TempDir();
  StateDir dir(d);
  std::string err;
  ASSERT_TRUE(dir.Lock(&err)) << err;
  EXPECT_FALSE(dir.HasState());
  SavedState s{1234,
               "8f4c1f52-3b0e-4c5a-9d55-2f0c1a2b3c4d",
               "2026-11-30T00:00:00.000Z",
               "/sys/devices/system/cpu",
               {0, 1, 3},
               {1, 2, 3}};
  ASSERT_TRUE(dir.Write(s, &err)) << err;
  EXPECT_TRUE(dir.HasState());
  SavedState r;
  ASSERT_TRUE(dir.Read(&r, &err)) << err;
  EXPECT_EQ(r.pid, 1234);
  EXPECT_EQ(r.online_at_start, (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(r.controlled, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(r.sysfs_root, "/sys/devices/system/cpu");
  EXPECT_EQ(r.boot_id, "8f4c1f52-3b0e-4c5a-9d55-2f0c1a2b3c4d");
  EXPECT_EQ(r.smt_control, "");
  s.smt_control = "4";
  ASSERT_TRUE(dir.Write(s, &err)) << err;
  ASSERT_TRUE(dir.Read(&r, &err)) << err;
  EXPECT_EQ(r.smt_control, "4");
  ASSERT_TRUE(dir.Remove(&err));
  EXPECT_FALSE(dir.HasState());
  std::filesystem::remove_all(d);
}

TEST(RestoreTest, ASecondRunCannotTakeTheLock) {
  std::string d = TempDir();
  StateDir a(d);
  StateDir b(d);
  std::string err;
  ASSERT_TRUE(a.Lock(&err));
  EXPECT_FALSE(b.Lock(&err));
  EXPECT_EQ(err, d + "/lock: another cpuhp-stress run holds this state directory (pid " +
                     std::to_string(getpid()) + ")");
  std::filesystem::remove_all(d);
}

TEST(RestoreTest, ALockSymlinkIsNotFollowed) {
  std::string d = TempDir();
  std::ofstream(d + "/victim") << "precious\n";
  std::filesystem::create_symlink(d + "/victim", d + "/lock");
  StateDir dir(d);
  std::string err;
  EXPECT_FALSE(dir.Lock(&err));
  EXPECT_EQ(err.rfind(d + "/lock: open: ", 0), 0u) << err;
  std::ifstream f(d + "/victim");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(f), {}), "precious\n");
  std::filesystem::remove_all(d);
}

TEST(RestoreTest, AStateDirectoryOthersMayWriteIsRefused) {
  std::string d = TempDir();
  std::string err;
  chmod(d.c_str(), 0777);
  EXPECT_FALSE(StateDir(d).Lock(&err));
  EXPECT_NE(err.find("mode 0777"), std::string::npos) << err;
  chmod(d.c_str(), 0775);
  EXPECT_FALSE(StateDir(d).Lock(&err));
  chmod(d.c_str(), 0755);
  EXPECT_TRUE(StateDir(d).Lock(&err)) << err;
  if (geteuid() == 0) {  // only root can give a directory away
    ASSERT_EQ(chown(d.c_str(), 65534, 65534), 0);
    EXPECT_FALSE(StateDir(d).Lock(&err));
    EXPECT_NE(err.find("owner uid 65534"), std::string::npos) << err;
  }
  std::filesystem::remove_all(d);
}

// Issue 29 item 9: whoever may write a directory above the state directory
// (without the sticky bit) can rename it away and plant their own; a
// symlinked state directory is someone else's choice of where root writes.
TEST(RestoreTest, AStateDirectoryUnderAParentAnyoneMayReplaceIsRefused) {
  const std::string d = TempDir();  // under /tmp: anyone may write, but sticky
  const std::string open = d + "/open";
  ASSERT_EQ(mkdir(open.c_str(), 0700), 0);
  ASSERT_EQ(chmod(open.c_str(), 0777), 0);
  std::string err;
  for (const std::string& state : {open + "/state", open + "/deeper/state"}) {
    EXPECT_FALSE(StateDir(state).Lock(&err)) << state;
    EXPECT_EQ(err, state + ": state directory under " + open +
                       ", which anyone may write (no sticky bit): refused");
    EXPECT_FALSE(std::filesystem::exists(state + "/lock")) << state;
  }
  ASSERT_EQ(chmod(open.c_str(), 01777), 0);  // sticky, as /tmp
  EXPECT_TRUE(StateDir(open + "/state").Lock(&err)) << err;
  std::filesystem::remove_all(d);
}

TEST(RestoreTest, ASymlinkedStateDirectoryIsRefused) {
  const std::string d = TempDir();
  ASSERT_EQ(mkdir((d + "/real").c_str(), 0700), 0);
  std::filesystem::create_symlink(d + "/real", d + "/link");
  std::string err;
  EXPECT_FALSE(StateDir(d + "/link").Lock(&err));
  EXPECT_EQ(err, d + "/link: state directory is a symbolic link: refused (give the directory "
                     "itself)");
  EXPECT_FALSE(std::filesystem::exists(d + "/real/lock"));
  EXPECT_TRUE(StateDir(d + "/real").Lock(&err)) << err;
  std::filesystem::remove_all(d);
}

TEST(RestoreTest, CorruptStateFileIsRefusedWithItsPath) {
  std::string d = TempDir();
  StateDir dir(d);
  std::string err;
  SavedState r;
  for (const char* bad :
       {"", "garbage\x01", "[]", "{\"online_at_start\": 3}",
        "{\"online_at_start\": \"0-x\", \"controlled\": \"1\", \"sysfs_root\": \"/\"}",
        "{\"online_at_start\": \"\", \"controlled\": \"1\", \"sysfs_root\": \"/\"}"}) {
    std::ofstream(dir.state_path()) << bad;
    EXPECT_FALSE(dir.Read(&r, &err)) << bad;
    EXPECT_EQ(err.rfind(dir.state_path() + ": corrupt state file: ", 0), 0u) << err;
  }
  std::filesystem::remove_all(d);
}

TEST(RestoreTest, RestoresExactlyTheMask) {
  FakeSysfs fs(4);
  fs.Write("cpu1/online", "0\n");
  fs.Write("cpu3/online", "1\n");
  auto ctl = NewSysfsCpuControl(fs.root());
  // At start cpu1 and cpu2 were online, cpu3 offline.
  RestoreResult r = RestoreMask(ctl.get(), {1, 2, 3}, {0, 1, 2});
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.writes, 2);
  EXPECT_EQ(fs.Online(1), '1');
  EXPECT_EQ(fs.Online(2), '1');
  EXPECT_EQ(fs.Online(3), '0');
}

// The smt pattern's control method left smt/control "off": the mode goes
// back first (a sibling refuses online while "off" excludes it), then the
// mask, which may keep a sibling offline that "on" brought back.
TEST(RestoreTest, PutsTheSmtModeBackBeforeTheMask) {
  SimConfig c;
  c.cpus = 8;
  c.threads_per_core = 2;
  SimCpuControl sim(c, 1);
  ASSERT_EQ(sim.WriteSmtControl("off"), 0);
  EXPECT_EQ(sim.ReadOnline(1, nullptr), 0);
  EXPECT_EQ(sim.WriteOnline(1, true), EPERM);
  // At start: smt/control "on", every CPU online but cpu7.
  RestoreResult r = RestoreMask(&sim, {1, 3, 5, 7}, {0, 1, 2, 3, 4, 5, 6}, "on");
  EXPECT_TRUE(r.ok) << (r.failures.empty() ? "" : r.failures[0]);
  std::string mode, err;
  ASSERT_EQ(sim.ReadSmtFile("control", &mode, &err), 0);
  EXPECT_EQ(mode, "on");
  for (int cpu = 1; cpu < 7; ++cpu)
    EXPECT_EQ(sim.ReadOnline(cpu, nullptr), 1) << cpu;
  EXPECT_EQ(sim.ReadOnline(7, nullptr), 0);
  // Without the mode, the siblings stay refused.
  ASSERT_EQ(sim.WriteSmtControl("off"), 0);
  r = RestoreMask(&sim, {1, 3, 5, 7}, {0, 1, 2, 3, 4, 5, 6});
  EXPECT_FALSE(r.ok);
  ASSERT_FALSE(r.failures.empty());
  EXPECT_EQ(r.failures[0], "cpu1 online: EPERM");
}

TEST(RestoreTest, RetriesTransientBusyAndReportsHardFailures) {
  SimConfig c;
  c.cpus = 3;
  SimCpuControl sim(c, 1);
  sim.SetOnline(1, false);
  sim.SetOnline(2, false);
  sim.QueueFault({1, EBUSY, false});
  sim.QueueFault({1, EBUSY, false});
  sim.QueueFault({2, EIO, false});
  RestoreResult r = RestoreMask(&sim, {1, 2}, {0, 1, 2});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(sim.ReadOnline(1, nullptr), 1);  // after two EBUSY
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0], "cpu2 online: EIO");
}

}  // namespace
}  // namespace cpuhp
