// SPDX-License-Identifier: GPL-2.0
#include "machine/smt.h"

#include <errno.h>

#include <filesystem>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "machine/sim_cpu_control.h"
#include "testing/fake_sysfs.h"

namespace cpuhp {
namespace {

std::vector<int> Range(int lo, int hi) {
  std::vector<int> v;
  for (int c = lo; c <= hi; ++c)
    v.push_back(c);
  return v;
}

// x86 numbers a core's two threads N and N + cores; a sysfs tree says so.
TEST(SmtTest, DiscoversSiblingsFromSysfs) {
  FakeSysfs fs(4);
  fs.Smt("on", "1");
  for (int c = 0; c < 4; ++c)
    fs.Siblings(c, c % 2 ? "1,3" : "0,2");
  auto ctl = NewSysfsCpuControl(fs.root());
  SmtTopology smt;
  std::string err;
  ASSERT_TRUE(DiscoverSmt(ctl.get(), Range(0, 3), &smt, &err)) << err;
  EXPECT_EQ(smt.control, "on");
  EXPECT_TRUE(smt.active);
  EXPECT_EQ(smt.threads_per_core, 2);
  EXPECT_EQ(smt.cores, (std::vector<std::vector<int>>{{0, 2}, {1, 3}}));
  EXPECT_EQ(smt.CoreOf(3), 1);
  EXPECT_EQ(SmtSwitchRefusal(smt), "");
  EXPECT_EQ(SmtModeCpus(smt, 1), (std::vector<int>{0, 1}));
  EXPECT_EQ(SmtToJson(smt)["cores"], nlohmann::json({"0,2", "1,3"}));

  // cpu3 offline: its topology directory is gone.
  std::filesystem::remove_all(fs.root() + "/cpu3/topology");
  fs.Siblings(1, "1");
  EXPECT_FALSE(DiscoverSmt(ctl.get(), Range(0, 3), &smt, &err));
  EXPECT_EQ(err, fs.root() +
                     "/cpu3/topology/thread_siblings_list: absent: cpu3 is offline (its "
                     "topology is gone while it is): bring every CPU online first");
  // Lists that are not a partition of the present CPUs.
  fs.Siblings(1, "1,2");
  EXPECT_FALSE(DiscoverSmt(ctl.get(), Range(0, 3), &smt, &err));
  EXPECT_EQ(err, fs.root() +
                     "/cpu1/topology/thread_siblings_list: 1-2 names cpu2, not present or "
                     "already in another core");
  fs.Siblings(1, "3");
  EXPECT_FALSE(DiscoverSmt(ctl.get(), Range(0, 3), &smt, &err));
  EXPECT_EQ(err, fs.root() + "/cpu1/topology/thread_siblings_list: 3 does not name cpu1");

  std::filesystem::remove_all(fs.root() + "/smt");
  EXPECT_FALSE(DiscoverSmt(ctl.get(), Range(0, 3), &smt, &err));
  EXPECT_EQ(
      err, fs.root() + "/smt/control: absent: this kernel has no SMT control (CONFIG_HOTPLUG_SMT)");
}

TEST(SmtTest, RefusalsAndModes) {
  SmtTopology smt;
  smt.control = "notsupported";
  smt.cores = {{0}, {1}};
  EXPECT_EQ(SmtSwitchRefusal(smt),
            "smt/control is \"notsupported\": this machine's SMT cannot be switched");
  smt.control = "forceoff";
  EXPECT_NE(SmtSwitchRefusal(smt).find("nosmt=force"), std::string::npos);
  smt.control = "on";
  EXPECT_EQ(SmtSwitchRefusal(smt), "no SMT: every core has one thread (thread_siblings_list)");

  smt.cores = {{0, 1, 2, 3}, {4, 5, 6, 7}};
  smt.threads_per_core = 4;
  int threads = 0;
  std::string err;
  for (const auto& [mode, want] : std::vector<std::pair<std::string, int>>{
           {"on", 4}, {"off", 1}, {"1", 1}, {"2", 2}, {"4", 4}}) {
    ASSERT_TRUE(SmtModeThreads(smt, mode, &threads, &err)) << mode << ": " << err;
    EXPECT_EQ(threads, want) << mode;
  }
  EXPECT_EQ(SmtModeCpus(smt, 2), (std::vector<int>{0, 1, 4, 5}));
  for (const std::string bad : {"5", "0", "", "2x", "forceoff", "-1"}) {
    EXPECT_FALSE(SmtModeThreads(smt, bad, &threads, &err)) << bad;
    EXPECT_EQ(err, "SMT mode \"" + bad +
                       "\": not \"on\", \"off\" or a number of threads 1..4 (this machine's "
                       "threads per core)");
  }
}

// The sim behaves as kernel/cpu.c: smt/control takes the excluded threads
// down and brings the allowed ones of online cores up, in one write that
// costs each CPU's modeled latency; a sibling SMT excludes refuses online.
TEST(SmtTest, SimSwitchesLikeTheKernel) {
  SimConfig cfg;
  cfg.cpus = 8;
  cfg.threads_per_core = 4;
  cfg.jitter = 0;
  SimCpuControl sim(cfg, 1);
  SmtTopology smt;
  std::string err, text;
  ASSERT_TRUE(DiscoverSmt(&sim, Range(0, 7), &smt, &err)) << err;
  EXPECT_EQ(smt.cores, (std::vector<std::vector<int>>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(smt.control, "on");
  EXPECT_TRUE(smt.active);

  const uint64_t t0 = sim.clock()->NowNs();
  ASSERT_EQ(sim.WriteSmtControl("2"), 0);
  EXPECT_EQ(sim.online_count(), 4);
  // Four CPUs offline at 8, 7, 6 and 5 online: the modeled latency of each.
  EXPECT_EQ(sim.clock()->NowNs() - t0,
            4 * cfg.offline_base_ns + (8 + 7 + 6 + 5) * cfg.offline_per_cpu_ns);
  ASSERT_EQ(sim.ReadSmtFile("control", &text, &err), 0);
  EXPECT_EQ(text, "2");
  EXPECT_EQ(sim.WriteOnline(3, true), EPERM);  // cpu_smt_allowed()
  EXPECT_EQ(sim.ReadOnline(3, &err), 0);
  std::vector<int> siblings;
  EXPECT_EQ(sim.ReadThreadSiblings(3, &siblings, &err), ENOENT);
  ASSERT_EQ(sim.ReadThreadSiblings(5, &siblings, &err), 0);
  EXPECT_EQ(siblings, (std::vector<int>{4, 5, 6, 7}));

  ASSERT_EQ(sim.WriteSmtControl("off"), 0);
  ASSERT_EQ(sim.ReadSmtFile("control", &text, &err), 0);
  EXPECT_EQ(text, "off");
  ASSERT_EQ(sim.ReadSmtFile("active", &text, &err), 0);
  EXPECT_EQ(text, "0");
  std::vector<int> online;
  ASSERT_TRUE(sim.ReadList("online", &online, &err, nullptr));
  EXPECT_EQ(online, SmtModeCpus(smt, 1));

  // A core whose first thread is offline stays down when SMT comes on.
  ASSERT_EQ(sim.WriteOnline(4, false), 0);
  ASSERT_EQ(sim.WriteSmtControl("on"), 0);
  ASSERT_TRUE(sim.ReadList("online", &online, &err, nullptr));
  EXPECT_EQ(online, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(sim.WriteSmtControl("5"), EINVAL);
  EXPECT_EQ(sim.WriteSmtControl("forceoff"), EINVAL);

  // The mode is part of the machine a checkpoint restores.
  ASSERT_EQ(sim.WriteSmtControl("1"), 0);
  SimCpuControl resumed(cfg, 1);
  ASSERT_TRUE(resumed.RestoreState(sim.SaveState(), &err)) << err;
  ASSERT_EQ(resumed.ReadSmtFile("control", &text, &err), 0);
  EXPECT_EQ(text, "1");
  EXPECT_EQ(resumed.WriteOnline(1, true), EPERM);

  // Without SMT: notsupported, and the write is refused as the kernel does.
  SimConfig flat;
  SimCpuControl none(flat, 1);
  ASSERT_TRUE(DiscoverSmt(&none, Range(0, 7), &smt, &err)) << err;
  EXPECT_EQ(smt.control, "notsupported");
  EXPECT_EQ(smt.threads_per_core, 1);
  EXPECT_NE(SmtSwitchRefusal(smt), "");
  EXPECT_EQ(none.WriteSmtControl("off"), ENODEV);
}

}  // namespace
}  // namespace cpuhp
