// SPDX-License-Identifier: GPL-2.0
#include "faults/faults.h"

#include <errno.h>

#include <sys/wait.h>

#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "machine/restore.h"
#include "machine/sim_cpu_control.h"
#include "sources/timing_source.h"
#include "testing/fake_sysfs.h"

namespace cpuhp {
namespace {

volatile sig_atomic_t g_no_stop = 0;

SimConfig Sim(int cpus) {
  SimConfig c;
  c.cpus = cpus;
  c.jitter = 0;
  return c;
}

OnlineState AllOnline(int cpus) {
  OnlineState s;
  s.online.assign(static_cast<size_t>(cpus), 1);
  s.count = cpus;
  return s;
}

// The sim's modeled table (sim_cpu_control.cc), as the kernel of this
// machine behaves (measured on 6.18, tests/integration/faults_test.py):
// going offline from online, 144 148 149 150 188 193 235 are armable and
// 150 188 (startup-only) are not reached; going online from offline, the
// PREPARE states with callbacks are armable too and the teardown-only
// ones (10 62 144 148) are not reached.
const std::vector<int> kOfflineArmable = {144, 148, 149, 150, 188, 193, 235};
const std::vector<int> kOfflineFired = {144, 148, 149, 193, 235};
const std::vector<int> kOnlineArmable = {1,   10,  35,  36,  58,  62,  82, 83,
                                         144, 148, 149, 150, 188, 193, 235};
const std::vector<int> kOnlineFired = {1, 35, 36, 58, 82, 83, 149, 150, 188, 193, 235};

TEST(SimFailTest, FollowsTheKernelRules) {
  SimCpuControl sim(Sim(2), 1);
  EXPECT_EQ(sim.WriteFail(1, 87), EINVAL);   // sched:starting: atomic
  EXPECT_EQ(sim.WriteFail(1, 36), EINVAL);   // workqueue:prepare while up
  EXPECT_EQ(sim.WriteFail(1, 0), EINVAL);    // offline: no callbacks
  EXPECT_EQ(sim.WriteFail(1, 236), EINVAL);  // online: no callbacks
  EXPECT_EQ(sim.WriteFail(1, 999), EINVAL);
  int v = 0;
  ASSERT_EQ(sim.ReadFail(1, &v), 0);
  EXPECT_EQ(v, -1);
  ASSERT_EQ(sim.WriteFail(1, 193), 0);
  ASSERT_EQ(sim.ReadFail(1, &v), 0);
  EXPECT_EQ(v, 193);
  // Fires once: EAGAIN, rolled back, cleared.
  EXPECT_EQ(sim.WriteOnline(1, false), EAGAIN);
  std::string err;
  EXPECT_EQ(sim.ReadOnline(1, &err), 1);
  ASSERT_EQ(sim.ReadHotplugState(1, &v), 0);
  EXPECT_EQ(v, 236);
  ASSERT_EQ(sim.ReadFail(1, &v), 0);
  EXPECT_EQ(v, -1);
  EXPECT_EQ(sim.WriteOnline(1, false), 0);
  ASSERT_EQ(sim.ReadHotplugState(1, &v), 0);
  EXPECT_EQ(v, 0);
  // Offline: PREPARE states are armable; a teardown-only one is not run
  // going online and stays armed.
  EXPECT_EQ(sim.WriteFail(1, 36), 0);
  EXPECT_EQ(sim.WriteFail(1, 10), 0);
  EXPECT_EQ(sim.WriteOnline(1, true), 0);
  ASSERT_EQ(sim.ReadFail(1, &v), 0);
  EXPECT_EQ(v, 10);
  EXPECT_EQ(sim.WriteFail(1, -1), 0);
  EXPECT_EQ(sim.fires(), 1);
  std::string table;
  ASSERT_EQ(sim.ReadHotplugStates(&table), 0);
  EXPECT_NE(table.find("193: mm/vmstat:online\n"), std::string::npos);
}

TEST(SimFailTest, BrokenRollbackLeavesTheCpuHalfWay) {
  SimCpuControl sim(Sim(2), 1);
  sim.SetBrokenRollback(193);
  ASSERT_EQ(sim.WriteFail(1, 193), 0);
  EXPECT_EQ(sim.WriteOnline(1, false), EAGAIN);
  int v = 0;
  ASSERT_EQ(sim.ReadHotplugState(1, &v), 0);
  EXPECT_EQ(v, 193);
  EXPECT_EQ(sim.WriteOnline(1, false), 0);  // the next write completes the move
  ASSERT_EQ(sim.ReadHotplugState(1, &v), 0);
  EXPECT_EQ(v, 0);
}

// Hands out queued /dev/kmsg records, then EAGAIN.
class QueueKmsg : public KmsgReader {
 public:
  bool Open(std::string*) override { return true; }
  long Read(char* buf, size_t len, int* err_no) override {
    if (queue.empty() || queue.front().size() > len) {
      *err_no = EAGAIN;
      return -1;
    }
    std::string s = queue.front();
    queue.pop_front();
    memcpy(buf, s.data(), s.size());
    return static_cast<long>(s.size());
  }
  std::deque<std::string> queue;
};

struct Rig {
  Rig(int cpus, FaultOptions o, Pattern pattern = Pattern::kRoundRobin)
      : sim(Sim(cpus), 7), state(AllOnline(cpus)) {
    for (int c = 1; c < cpus; ++c)
      selected.push_back(c);
    injector = std::make_unique<FaultInjector>(&sim, selected, o);
    ScheduleParams p{pattern, selected, 1, 7, {}};
    std::string err;
    schedule =
        o.sweep ? NewFaultSweepSchedule(p, state, injector.get()) : NewSchedule(p, state, &err);
  }
  RunOutcome Run(uint64_t iterations) {
    std::string err;
    EXPECT_EQ(injector->Begin(state, &err), FaultInjector::Start::kOk) << err;
    runner =
        std::make_unique<Runner>(&sim, schedule.get(), state, &stats, std::vector<TimingSource*>{},
                                 nullptr, RunLimits{.iterations = iterations});
    runner->set_hook(injector.get());
    return runner->Run(&g_no_stop, nullptr);
  }
  nlohmann::json Totals() const { return injector->ReportJson()["totals"]; }

  SimCpuControl sim;
  OnlineState state;
  std::vector<int> selected;
  std::unique_ptr<FaultInjector> injector;
  std::unique_ptr<Schedule> schedule;
  RunStats stats{8};
  std::unique_ptr<Runner> runner;
};

FaultOptions Sweep(int repeats) {
  FaultOptions o;
  o.sweep = true;
  o.repeats = repeats;
  return o;
}

TEST(FaultSweepTest, InjectsEveryFailableStateBothWaysOnEachCpu) {
  FaultOptions o = Sweep(2);
  o.allow_unsafe = true;  // 83 cpu:bringup too: the sim rolls it back
  Rig rig(3, o, Pattern::kFaultSweep);
  RunOutcome out = rig.Run(0);
  EXPECT_EQ(out.stop_reason, "schedule_complete") << out.message;
  nlohmann::json r = rig.injector->ReportJson();
  const uint64_t fired = kOfflineFired.size() + kOnlineFired.size();
  const uint64_t unreached = (kOfflineArmable.size() - kOfflineFired.size()) +
                             (kOnlineArmable.size() - kOnlineFired.size());
  // 2 CPUs x 2 repeats x fired, plus one try of each unreachable state.
  EXPECT_EQ(r["totals"]["rolled_back"], 2 * 2 * fired);
  EXPECT_EQ(r["totals"]["not_reached"], 2 * unreached);
  EXPECT_EQ(r["totals"]["injected"], 2 * (2 * fired + unreached));
  EXPECT_EQ(r["totals"]["not_rolled_back"], 0);
  EXPECT_EQ(r["totals"]["unverified"], 0);
  EXPECT_EQ(rig.injector->failed_rollbacks(), 0u);
  EXPECT_EQ(static_cast<uint64_t>(rig.sim.fires()), 2 * 2 * fired);
  // Injected writes are not operations of the run: no error in the stats.
  EXPECT_EQ(rig.stats.failed_ops(), 0u);
  EXPECT_EQ(rig.stats.ops(), out.ops);
  // Every CPU back online, nothing armed.
  for (int c = 1; c < 3; ++c) {
    int v = 0;
    std::string err;
    EXPECT_EQ(rig.sim.ReadOnline(c, &err), 1);
    ASSERT_EQ(rig.sim.ReadFail(c, &v), 0);
    EXPECT_EQ(v, -1);
  }
  // Learned sets per CPU and direction.
  ASSERT_EQ(r["learned"].size(), 4u);
  for (const auto& l : r["learned"]) {
    const bool off = l["direction"] == "offline";
    EXPECT_EQ(l["armable"].get<std::vector<int>>(), off ? kOfflineArmable : kOnlineArmable);
    EXPECT_TRUE(l["refused"].contains("EINVAL"));
    EXPECT_EQ(l["refused"].size(), 1u);
    EXPECT_EQ(l["skipped_unsafe"], nlohmann::json::array());
  }
  for (const auto& s : r["states"]) {
    if (s["state"] == 235 && s["direction"] == "offline") {
      EXPECT_EQ(s["name"], "sched:active");
      EXPECT_EQ(s["injected"], 4);
      EXPECT_EQ(s["rolled_back"], 4);
      EXPECT_EQ(s["errnos"]["EAGAIN"], 4);
    }
    if (s["state"] == 150 && s["direction"] == "offline") {
      EXPECT_EQ(s["not_reached"], 2);
      EXPECT_EQ(s["errnos"]["ok"], 2);
    }
  }
}

// With cpu:kick_ap in the table (x86 split startup), cpu:bringup fails while
// the CPU is already kicked: armable, but skipped unless allowed.
TEST(FaultSweepTest, TheStateAfterKickApIsSkippedUnlessAllowed) {
  Rig rig(2, Sweep(1), Pattern::kFaultSweep);
  RunOutcome out = rig.Run(0);
  EXPECT_EQ(out.stop_reason, "schedule_complete") << out.message;
  nlohmann::json r = rig.injector->ReportJson();
  EXPECT_EQ(r["allow_unsafe"], false);
  for (const auto& l : r["learned"]) {
    const bool off = l["direction"] == "offline";
    EXPECT_EQ(l["armable"].get<std::vector<int>>(), off ? kOfflineArmable : kOnlineArmable);
    EXPECT_EQ(l["skipped_unsafe"], off ? nlohmann::json::array() : nlohmann::json({83}));
    EXPECT_EQ(l["not_reached"].size(), off ? 2u : 4u);  // 83 is not "not reached"
  }
  for (const auto& s : r["states"])
    EXPECT_NE(s["state"], 83);
  EXPECT_EQ(r["totals"]["rolled_back"], kOfflineFired.size() + kOnlineFired.size() - 1);
  EXPECT_EQ(r["totals"]["not_rolled_back"], 0);
  nlohmann::json report = {{"faults", r}};
  EXPECT_NE(FaultsSummary(report).find("skipped as unsafe going online (the CPU is already "
                                       "kicked; faults.allow_unsafe includes them): 83 "
                                       "(cpu:bringup)\n"),
            std::string::npos)
      << FaultsSummary(report);
}

TEST(FaultInjectorTest, NamingAnUnsafeStateNeedsAllowUnsafe) {
  SimCpuControl sim(Sim(2), 1);
  FaultOptions o;
  o.rate = 0.1;
  o.states = {"sched:active", "cpu:bringup"};
  std::string err;
  FaultInjector refused(&sim, {1}, o);
  EXPECT_EQ(refused.Begin(AllOnline(2), &err), FaultInjector::Start::kBadInput);
  EXPECT_EQ(err,
            "/faults/states: \"cpu:bringup\" fails after cpu:kick_ap has started the CPU, and its "
            "rollback relies on the CPU being kicked again (this once left a CPU unable to come "
            "online until reboot): set /faults/allow_unsafe to true to inject it anyway");
  o.online = false;  // offline only: the kernel refuses 83 while the CPU is up anyway
  FaultInjector offline_only(&sim, {1}, o);
  EXPECT_EQ(offline_only.Begin(AllOnline(2), &err), FaultInjector::Start::kOk) << err;
  o.online = true;
  o.allow_unsafe = true;
  FaultInjector allowed(&sim, {1}, o);
  EXPECT_EQ(allowed.Begin(AllOnline(2), &err), FaultInjector::Start::kOk) << err;
}

TEST(FaultSweepTest, OneDirectionAndNamedStatesOnly) {
  FaultOptions o = Sweep(3);
  o.online = false;
  o.states = {"sched:active", "mm/vmstat:online", "sched:starting"};
  Rig rig(2, o, Pattern::kFaultSweep);
  RunOutcome out = rig.Run(0);
  EXPECT_EQ(out.stop_reason, "schedule_complete");
  nlohmann::json r = rig.injector->ReportJson();
  EXPECT_EQ(r["totals"]["rolled_back"], 6);  // 2 states x 3
  EXPECT_EQ(r["totals"]["injected"], 6);
  ASSERT_EQ(r["learned"].size(), 1u);
  EXPECT_EQ(r["learned"][0]["refused"]["EINVAL"], nlohmann::json({87}));
  EXPECT_EQ(r["state_names"]["87"], "sched:starting");
}

TEST(FaultSweepTest, BrokenRollbackIsAnErrorWithItsIndexAndKernelLog) {
  FaultOptions o = Sweep(1);
  o.states = {"mm/vmstat:online", "sched:active"};
  Rig rig(2, o, Pattern::kFaultSweep);
  rig.sim.SetBrokenRollback(193);
  auto kmsg = std::make_unique<QueueKmsg>();
  kmsg->queue.push_back("4,100,5000000,-;CPU1: hotplug state mm/vmstat:online failed\n");
  rig.injector->set_kmsg_reader(std::move(kmsg));
  RunOutcome out = rig.Run(0);
  EXPECT_EQ(out.stop_reason, "schedule_complete");
  EXPECT_EQ(rig.injector->failed_rollbacks(), 2u);  // offline and online
  nlohmann::json r = rig.injector->ReportJson();
  EXPECT_EQ(r["totals"]["not_rolled_back"], 2);
  EXPECT_EQ(r["totals"]["rolled_back"], 2);  // sched:active both ways
  ASSERT_EQ(r["failures"].size(), 2u);
  const auto& f = r["failures"][0];
  EXPECT_EQ(f["state"], 193);
  EXPECT_EQ(f["direction"], "offline");
  EXPECT_EQ(f["errno"], "EAGAIN");
  EXPECT_EQ(f["hotplug_state_before"], 236);
  EXPECT_EQ(f["hotplug_state_after"], 193);
  EXPECT_NE(f["why"].get<std::string>().find("not rolled back"), std::string::npos);
  ASSERT_EQ(f["kernel_log"].size(), 1u);
  EXPECT_EQ(f["kernel_log"][0], "[    5.000000] CPU1: hotplug state mm/vmstat:online failed");
  EXPECT_EQ(r["kernel_log"], "ok");
  EXPECT_NE(FaultsSummary({{"faults", r}}).find("NOT rolled back: cpu1 offline state 193"),
            std::string::npos);
}

TEST(FaultSweepTest, StopOnErrorStopsAtTheFirstBrokenRollback) {
  FaultOptions o = Sweep(1);
  o.states = {"sched:active", "mm/vmstat:online"};
  o.stop_on_error = true;
  Rig rig(2, o, Pattern::kFaultSweep);
  rig.sim.SetBrokenRollback(193);
  RunOutcome out = rig.Run(0);
  EXPECT_EQ(out.stop_reason, "error");
  EXPECT_EQ(out.message,
            "fault injection: cpu1 offline state 193 (mm/vmstat:online): not rolled back: "
            "online 1 -> 1, hotplug/state 236 -> 193");
  EXPECT_EQ(rig.injector->failed_rollbacks(), 1u);
}

TEST(FaultRateTest, MixesInjectedAndNormalOperations) {
  FaultOptions o;
  o.rate = 0.5;
  Rig rig(4, o);
  RunOutcome out = rig.Run(400);
  EXPECT_EQ(out.stop_reason, "iterations");
  EXPECT_EQ(rig.stats.ops(), 400u);
  EXPECT_EQ(rig.stats.failed_ops(), 0u);
  nlohmann::json t = rig.Totals();
  EXPECT_GT(t["injected"].get<uint64_t>(), 120u);
  EXPECT_LT(t["injected"].get<uint64_t>(), 280u);
  EXPECT_EQ(t["not_rolled_back"], 0);
  EXPECT_EQ(t["injected"].get<uint64_t>(), t["rolled_back"].get<uint64_t>() +
                                               t["not_reached"].get<uint64_t>() +
                                               t["unverified"].get<uint64_t>());
  // Unreachable states are learned once per CPU and direction, never retried.
  EXPECT_LE(t["not_reached"].get<uint64_t>(), 3u * 6u);
  EXPECT_GT(t["rolled_back"].get<uint64_t>(), 0u);
}

TEST(FaultRateTest, DirectionFilterAndSeedDeterminism) {
  FaultOptions o;
  o.rate = 1.0;
  o.online = false;
  Rig a(3, o), b(3, o);
  a.Run(50);
  b.Run(50);
  EXPECT_EQ(a.injector->ReportJson()["states"], b.injector->ReportJson()["states"]);
  const nlohmann::json states = a.injector->ReportJson()["states"];  // not a temporary's member
  for (const auto& s : states)
    EXPECT_EQ(s["direction"], "offline");
  EXPECT_EQ(a.Totals()["injected"], 25);  // every offline of the 50 operations
}

TEST(FaultInjectorTest, UnknownStateNameIsBadInput) {
  SimCpuControl sim(Sim(2), 1);
  FaultOptions o;
  o.rate = 0.1;
  o.states = {"sched:active", "no/such:state"};
  FaultInjector inj(&sim, {1}, o);
  std::string err;
  EXPECT_EQ(inj.Begin(AllOnline(2), &err), FaultInjector::Start::kBadInput);
  EXPECT_EQ(err,
            "/faults/states: no hotplug state named \"no/such:state\" in sim:2/hotplug/states");
  int v = 0;
  ASSERT_EQ(sim.ReadFail(1, &v), 0);
  EXPECT_EQ(v, -1);
}

TEST(FaultInjectorTest, ClearsAFailLeftArmed) {
  SimCpuControl sim(Sim(2), 1);
  ASSERT_EQ(sim.WriteFail(1, 193), 0);
  FaultOptions o;
  o.rate = 0.1;
  FaultInjector inj(&sim, {1}, o);
  std::string err;
  ASSERT_EQ(inj.Begin(AllOnline(2), &err), FaultInjector::Start::kOk) << err;
  int v = 0;
  ASSERT_EQ(sim.ReadFail(1, &v), 0);
  EXPECT_EQ(v, -1);
  EXPECT_EQ(inj.ReportJson()["cleared_at_start"], nlohmann::json({"cpu1: 193 (mm/vmstat:online)"}));
  EXPECT_EQ(sim.fires(), 0);
}

TEST(FaultInjectorTest, ClearArmedFailForRestore) {
  SimCpuControl sim(Sim(3), 1);
  ASSERT_EQ(sim.WriteFail(2, 235), 0);
  std::vector<std::string> cleared;
  EXPECT_TRUE(ClearArmedFail(&sim, {1, 2}, &cleared).empty());
  EXPECT_EQ(cleared, std::vector<std::string>({"cpu2: 235"}));
  int v = 0;
  ASSERT_EQ(sim.ReadFail(2, &v), 0);
  EXPECT_EQ(v, -1);
}

TEST(FaultInjectorTest, UnavailableWithoutHotplugFiles) {
  FakeSysfs fs(3);
  auto ctl = NewSysfsCpuControl(fs.root());
  FaultOptions o;
  o.rate = 0.5;
  FaultInjector inj(ctl.get(), {1, 2}, o);
  std::string err;
  EXPECT_EQ(inj.Begin(AllOnline(3), &err), FaultInjector::Start::kUnavailable);
  EXPECT_EQ(err, fs.root() + "/hotplug/states: cannot read: No such file or directory");
  nlohmann::json r = inj.ReportJson();
  EXPECT_EQ(r["status"], "unavailable");
  EXPECT_EQ(r["reason"], err);
  EXPECT_FALSE(inj.available());
  // And restore has nothing to clear there.
  std::vector<std::string> cleared;
  EXPECT_TRUE(ClearArmedFail(ctl.get(), {1, 2}, &cleared).empty());
  EXPECT_TRUE(cleared.empty());
}

TEST(SysfsFailTest, ReadsAndWritesTheHotplugFiles) {
  FakeSysfs fs(2);
  std::filesystem::create_directories(fs.root() + "/cpu1/hotplug");
  std::filesystem::create_directories(fs.root() + "/hotplug");
  fs.Write("cpu1/hotplug/fail", "-1\n");
  fs.Write("cpu1/hotplug/state", "236\n");
  fs.Write("hotplug/states", "  0: offline\n235: sched:active\n236: online\n");
  auto ctl = NewSysfsCpuControl(fs.root());
  int v = 0;
  ASSERT_EQ(ctl->ReadFail(1, &v), 0);
  EXPECT_EQ(v, -1);
  ASSERT_EQ(ctl->ReadHotplugState(1, &v), 0);
  EXPECT_EQ(v, 236);
  ASSERT_EQ(ctl->WriteFail(1, 235), 0);
  EXPECT_EQ(fs.Read("cpu1/hotplug/fail").substr(0, 3), "235");
  ASSERT_EQ(ctl->ReadFail(1, &v), 0);
  EXPECT_EQ(v, 235);
  std::string text;
  ASSERT_EQ(ctl->ReadHotplugStates(&text), 0);
  EXPECT_EQ(text, "  0: offline\n235: sched:active\n236: online\n");
  EXPECT_EQ(ctl->ReadFail(0, &v), ENOENT);
  EXPECT_EQ(ctl->WriteFail(0, 1), ENOENT);
  fs.Write("cpu1/hotplug/state", "garbage\n");
  EXPECT_EQ(ctl->ReadHotplugState(1, &v), EINVAL);
  fs.Write("cpu1/hotplug/state", "");
  EXPECT_EQ(ctl->ReadHotplugState(1, &v), EINVAL);

  // Restore clears it through the same files.
  fs.Write("cpu1/hotplug/fail", "235\n");
  std::vector<std::string> cleared;
  EXPECT_TRUE(ClearArmedFail(ctl.get(), {1}, &cleared).empty());
  EXPECT_EQ(cleared, std::vector<std::string>({"cpu1: 235"}));
  EXPECT_EQ(fs.Read("cpu1/hotplug/fail").substr(0, 2), "-1");
}

TEST(SysfsFailTest, StateFileRecordsThatFailMayBeArmed) {
  char tmpl[] = "/tmp/cpuhp-faults-state.XXXXXX";
  std::string dir = mkdtemp(tmpl);
  StateDir sd(dir);
  std::string err;
  ASSERT_TRUE(sd.Lock(&err)) << err;
  SavedState s;
  s.pid = getpid();
  s.sysfs_root = "/sys/devices/system/cpu";
  s.online_at_start = {0, 1};
  s.controlled = {1};
  s.fail_may_be_armed = true;
  ASSERT_TRUE(sd.Write(s, &err)) << err;
  SavedState back;
  ASSERT_TRUE(sd.Read(&back, &err)) << err;
  EXPECT_TRUE(back.fail_may_be_armed);
  s.fail_may_be_armed = false;
  ASSERT_TRUE(sd.Write(s, &err));
  ASSERT_TRUE(sd.Read(&back, &err));
  EXPECT_FALSE(back.fail_may_be_armed);
  std::filesystem::remove_all(dir);
}

TEST(FaultsConfigTest, KeysAreCheckedStrictly) {
  Config cfg;
  std::string err;
  ASSERT_TRUE(
      ApplyConfigJson(nlohmann::json::parse(R"({"pattern": "fault_sweep", "faults": {"rate": 0.25,
        "direction": "offline", "states": ["sched:active"], "repeats": 5}})"),
                      "f.json", &cfg, &err))
      << err;
  EXPECT_EQ(cfg.pattern, Pattern::kFaultSweep);
  EXPECT_TRUE(FaultsWanted(cfg));
  FaultOptions o = FaultOptionsFrom(cfg, 9);
  EXPECT_TRUE(o.sweep);
  EXPECT_TRUE(o.offline);
  EXPECT_FALSE(o.online);
  EXPECT_EQ(o.repeats, 5);
  EXPECT_EQ(o.states, std::vector<std::string>({"sched:active"}));
  EXPECT_EQ(ConfigToJson(cfg)["faults"]["states"], nlohmann::json({"sched:active"}));
  EXPECT_FALSE(FaultsWanted(Config{}));
  EXPECT_EQ(ConfigToJson(Config{})["faults"]["states"], "all");

  const std::pair<const char*, const char*> bad[] = {
      {R"({"faults": {"rate": 1.5}})",
       "f.json: /faults/rate: expected a number from 0 to 1, got 1.5"},
      {R"({"faults": {"rate": -0.1}})",
       "f.json: /faults/rate: expected a number from 0 to 1, got -0.1"},
      {R"({"faults": {"direction": "up"}})",
       "f.json: /faults/direction: expected one of \"offline\", \"online\", \"both\", got \"up\""},
      {R"({"faults": {"states": []}})",
       "f.json: /faults/states: expected \"all\" or a non-empty list of state names from "
       "hotplug/states, got []"},
      {R"({"faults": {"states": ["ok", 3]}})",
       "f.json: /faults/states/1: expected a state name like \"sched:active\", got 3"},
      {R"({"faults": {"repeats": 0}})",
       "f.json: /faults/repeats: expected an integer from 1 to 1000, got 0"},
      {R"({"faults": {"every": 3}})",
       "f.json: /faults/every: unknown key (known keys: rate, direction, states, repeats, "
       "allow_unsafe)"},
      {R"({"faults": 1})", "f.json: /faults: expected a JSON object, got 1"},
  };
  for (const auto& [doc, want] : bad) {
    Config c;
    EXPECT_FALSE(ApplyConfigJson(nlohmann::json::parse(doc), "f.json", &c, &err)) << doc;
    EXPECT_EQ(err, want) << doc;
  }
}

}  // namespace
}  // namespace cpuhp
