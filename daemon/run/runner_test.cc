// SPDX-License-Identifier: GPL-2.0
#include "run/runner.h"

#include <errno.h>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "machine/sim_cpu_control.h"

namespace cpuhp {
namespace {

volatile sig_atomic_t g_no_stop = 0;

struct Rig {
  explicit Rig(int cpus = 4, Pattern pattern = Pattern::kRoundRobin) : sim(Cfg(cpus), 1) {
    state.online.assign(static_cast<size_t>(cpus), 1);
    state.count = cpus;
    std::vector<int> sel;
    for (int c = 1; c < cpus; ++c)
      sel.push_back(c);
    std::string err;
    schedule = NewSchedule({pattern, sel, 1, 1, {}}, state, &err);
  }
  static SimConfig Cfg(int cpus) {
    SimConfig c;
    c.cpus = cpus;
    c.jitter = 0;
    return c;
  }
  RunOutcome Run(RunLimits limits, std::vector<TimingSource*> sources = {}) {
    runner =
        std::make_unique<Runner>(&sim, schedule.get(), state, &stats, sources, nullptr, limits);
    return runner->Run(&g_no_stop, nullptr);
  }

  SimCpuControl sim;
  OnlineState state;
  std::unique_ptr<Schedule> schedule;
  RunStats stats{8};
  std::unique_ptr<Runner> runner;
};

TEST(RunnerTest, TimesEveryOperationWithTheOnlineCountBeforeIt) {
  Rig rig(4);
  RunOutcome out = rig.Run({.iterations = 6});
  EXPECT_EQ(out.stop_reason, "iterations");
  EXPECT_EQ(out.ops, 6u);
  EXPECT_EQ(rig.stats.ops(), 6u);
  EXPECT_EQ(rig.stats.failed_ops(), 0u);
  // Offlines happen at 4 online CPUs, onlines at 3; the modeled latency is
  // base + per_cpu * online count, exactly (no jitter).
  const auto& off = rig.stats.by_online_count(Direction::kOffline);
  ASSERT_EQ(off.size(), 1u);
  EXPECT_EQ(off.begin()->first, 4);
  EXPECT_EQ(off.begin()->second.count(), 3u);
  const SimConfig c = Rig::Cfg(4);
  const uint64_t want = c.offline_base_ns + 4 * c.offline_per_cpu_ns;
  EXPECT_NEAR(static_cast<double>(off.begin()->second.max_ns()), static_cast<double>(want),
              want * 0.005);
  EXPECT_EQ(rig.stats.by_online_count(Direction::kOnline).begin()->first, 3);
  EXPECT_EQ(rig.runner->state().count, 4);
}

TEST(RunnerTest, ErrnoPathsAreCountedPerCpuAndErrnoAndTheStateStaysTrue) {
  for (int e : {EBUSY, EIO, EINVAL, EPERM}) {
    Rig rig(3);
    rig.sim.QueueFault({2, e, false});
    RunOutcome out = rig.Run({.iterations = 8});
    EXPECT_EQ(out.stop_reason, "iterations");
    EXPECT_EQ(rig.stats.failed_ops(), 1u) << e;
    EXPECT_EQ(rig.stats.errors_by_cpu().at({2, e}), 1u);
    EXPECT_EQ(rig.stats.errors_by_errno().at(e), 1u);
    ASSERT_EQ(rig.runner->first_errors().size(), 1u);
    const OpRecord& r = rig.runner->first_errors()[0];
    EXPECT_EQ(r.cpu, 2);
    EXPECT_EQ(r.err, e);
    EXPECT_TRUE(r.readback_ok);  // failed write, file still reads the old value
    EXPECT_EQ(rig.runner->state().count, rig.sim.online_count());
  }
}

TEST(RunnerTest, ReadbackMismatchIsDetected) {
  Rig rig(3);
  rig.sim.QueueFault({1, 0, true});  // write "succeeds", CPU stays online
  rig.Run({.iterations = 4});
  EXPECT_EQ(rig.stats.readback_mismatches(), 1u);
  ASSERT_FALSE(rig.runner->first_errors().empty());
  EXPECT_FALSE(rig.runner->first_errors()[0].readback_ok);
  EXPECT_EQ(rig.runner->state().count, rig.sim.online_count());
}

TEST(RunnerTest, StopOnErrorStopsAtTheFirstFailure) {
  Rig rig(4);
  rig.sim.QueueFault({3, EBUSY, false});
  RunOutcome out = rig.Run({.iterations = 100, .stop_on_error = true});
  EXPECT_EQ(out.stop_reason, "error");
  EXPECT_EQ(out.ops, 5u);  // -1 +1 -2 +2 -3(fails)
  EXPECT_EQ(out.message, "cpu3 offline: write failed: Device or resource busy");
}

// cpu1 starts offline and its onlines fail `failures` times (EIO), as on a
// machine whose kernel can no longer bring it back.
RunOutcome RunWithFailedOnlines(int failures, RunLimits limits, Rig* rig) {
  rig->sim.SetOnline(1, false);
  rig->state.Set(1, false);
  std::string err;
  rig->schedule = NewSchedule({Pattern::kRoundRobin, {1}, 1, 1, {}}, rig->state, &err);
  for (int i = 0; i < failures; ++i)
    rig->sim.QueueFault({1, EIO, false});
  return rig->Run(limits);
}

TEST(RunnerTest, ACpuThatKeepsFailingToComeOnlineIsLostAndStopsTheRun) {
  Rig rig(2);
  RunOutcome out = RunWithFailedOnlines(5, {.iterations = 100}, &rig);
  EXPECT_EQ(out.stop_reason, "error");
  EXPECT_EQ(out.ops, 3u);  // the default: 3 in a row
  EXPECT_EQ(out.message,
            "cpu1 lost: 3 online writes in a row left it offline (last: Input/output error); "
            "see the kernel log");
  EXPECT_EQ(rig.stats.failed_ops(), 3u);
}

TEST(RunnerTest, ASuccessfulOnlineResetsTheLostCount) {
  Rig rig(2);
  RunOutcome out = RunWithFailedOnlines(2, {.iterations = 10, .lost_cpu_after = 3}, &rig);
  EXPECT_EQ(out.stop_reason, "iterations");
  EXPECT_EQ(rig.stats.failed_ops(), 2u);
  EXPECT_EQ(rig.runner->state().count, rig.sim.online_count());
}

TEST(RunnerTest, LostCpuAfterZeroNeverStops) {
  Rig rig(2);
  RunOutcome out = RunWithFailedOnlines(6, {.iterations = 8, .lost_cpu_after = 0}, &rig);
  EXPECT_EQ(out.stop_reason, "iterations");
  EXPECT_EQ(rig.stats.failed_ops(), 6u);
}

// On the sim backend --duration counts the sim clock, the clock of every
// latency it reports: 100 ms of modeled writes, however fast the loop runs,
// and a resumed run counts from where its checkpointed clock stood.
TEST(RunnerTest, ADurationOnTheSimClockIsSimulatedTime) {
  Rig rig(4);
  Clock* sim_clock = rig.sim.clock();
  const RunLimits limits{.duration_ns = 100000000ull,
                         .duration_clock = sim_clock,
                         .duration_zero_ns = SimClock::kStartNs};
  RunOutcome out = rig.Run(limits);
  EXPECT_EQ(out.stop_reason, "duration");
  const uint64_t simulated = sim_clock->NowNs() - SimClock::kStartNs;
  EXPECT_GE(simulated, 100000000ull);
  EXPECT_LT(simulated, 100000000ull + 5000000ull);  // one write more at most
  EXPECT_EQ(rig.runner->duration_elapsed_ns(), simulated);
  EXPECT_TRUE(rig.runner->duration_is_simulated());
  // About 2 ms a write: ~50 writes, not the millions a wall-time limit gives.
  EXPECT_GT(out.ops, 30u);
  EXPECT_LT(out.ops, 80u);

  Rig resumed(4);
  static_cast<SimClock*>(resumed.sim.clock())->Set(SimClock::kStartNs + 60000000ull);
  RunLimits again = limits;
  again.duration_clock = resumed.sim.clock();
  RunOutcome rest = resumed.Run(again);
  EXPECT_EQ(rest.stop_reason, "duration");
  EXPECT_GT(rest.ops, 10u);
  EXPECT_LT(rest.ops, out.ops * 6 / 10);
}

TEST(RunnerTest, ASignalStopsTheRun) {
  Rig rig(3);
  static volatile sig_atomic_t stop = SIGTERM;
  Runner r(&rig.sim, rig.schedule.get(), rig.state, &rig.stats, {}, nullptr, {.iterations = 10});
  RunOutcome out = r.Run(&stop, nullptr);
  EXPECT_EQ(out.stop_reason, "signal");
  EXPECT_EQ(out.ops, 0u);
}

TEST(RunnerTest, SweepCompletesTheSchedule) {
  Rig rig(4, Pattern::kSweep);
  RunOutcome out = rig.Run({});
  EXPECT_EQ(out.stop_reason, "schedule_complete");
  // Levels 2 and 4: set-up offlines cpu2 (at 4 online) and cpu1 (at 3), 100
  // cycles of cpu3 at 2; set-up onlines cpu1 and cpu2, 100 cycles at 4. The
  // four set-up writes count as operations but stay out of the latency
  // tables: exactly 100 per level, no row at 3 online.
  EXPECT_EQ(out.ops, 404u);
  EXPECT_EQ(rig.stats.setup_ops(), 4u);
  const auto& off = rig.stats.by_online_count(Direction::kOffline);
  EXPECT_EQ(off.size(), 2u);
  EXPECT_EQ(off.at(2).count(), 100u);
  EXPECT_EQ(off.at(4).count(), 100u);
}

class RecordingSource : public TimingSource {
 public:
  std::string name() const override { return "recording"; }
  bool Start(std::string*) override { return true; }
  void OpBegin(const Operation& op, uint64_t index) override {
    begins.push_back(index * 1000 + static_cast<uint64_t>(op.cpu));
  }
  void OpEnd(const OpRecord& rec) override { ends.push_back(rec); }
  void Stop() override {}
  nlohmann::json ReportJson() const override { return nlohmann::json::object(); }
  std::vector<uint64_t> begins;
  std::vector<OpRecord> ends;
};

TEST(RunnerTest, TimingSourcesSeeEveryOperation) {
  Rig rig(3);
  RecordingSource src;
  rig.Run({.iterations = 4}, {&src});
  EXPECT_EQ(src.begins, (std::vector<uint64_t>{1, 1001, 2002, 3002}));
  ASSERT_EQ(src.ends.size(), 4u);
  EXPECT_EQ(src.ends[2].cpu, 2);
  EXPECT_EQ(src.ends[2].dir, Direction::kOffline);
  EXPECT_GT(src.ends[2].duration_ns, 0u);
}

// Asks to stop once it has seen `after` operations end.
class StoppingSource : public RecordingSource {
 public:
  explicit StoppingSource(size_t after) : after_(after) {}
  std::string name() const override { return "kmsg"; }
  bool WantsStop(std::string* why) override {
    ++asked;
    if (ends.size() < after_)
      return false;
    *why = "WARNING: at kernel/cpu.c:42";
    return true;
  }
  size_t asked = 0;

 private:
  size_t after_;
};

TEST(RunnerTest, ASourceCanStopTheRunAfterTheOperationItSawSomethingIn) {
  Rig rig(3);
  RecordingSource quiet;
  StoppingSource stopper(3);
  RunOutcome out = rig.Run({.iterations = 100}, {&quiet, &stopper});
  EXPECT_EQ(out.stop_reason, "error");
  EXPECT_EQ(out.message, "kmsg: WARNING: at kernel/cpu.c:42");
  EXPECT_EQ(out.ops, 3u);
  EXPECT_EQ(rig.stats.ops(), 3u);  // the operation that triggered it is counted
  EXPECT_EQ(quiet.ends.size(), 3u);
  EXPECT_EQ(stopper.asked, 3u);  // asked once per operation, after OpEnd
  // A source that never asks leaves the run alone.
  Rig rig2(3);
  RecordingSource plain;
  EXPECT_EQ(rig2.Run({.iterations = 10}, {&plain}).stop_reason, "iterations");
}

TEST(RunnerTest, SameSeedSameSequence) {
  auto seq = [](uint64_t seed) {
    SimConfig c = Rig::Cfg(6);
    SimCpuControl sim(c, seed);
    OnlineState s;
    s.online.assign(6, 1);
    s.count = 6;
    std::string err;
    auto sched = NewSchedule({Pattern::kRandom, {1, 2, 3, 4, 5}, 2, seed, {}}, s, &err);
    RecordingSource src;
    RunStats stats(6);
    Runner r(&sim, sched.get(), s, &stats, {&src}, nullptr, {.iterations = 500});
    r.Run(&g_no_stop, nullptr);
    std::vector<std::pair<int, uint64_t>> out;
    for (const OpRecord& rec : src.ends)
      out.push_back({rec.cpu, rec.duration_ns});
    return out;
  };
  EXPECT_EQ(seq(5), seq(5));
  EXPECT_NE(seq(5), seq(6));
}

}  // namespace
}  // namespace cpuhp
