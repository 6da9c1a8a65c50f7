// SPDX-License-Identifier: GPL-2.0
#include "run/schedule.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "util/rng.h"

namespace cpuhp {
namespace {

OnlineState AllOnline(int n) {
  OnlineState s;
  s.online.assign(static_cast<size_t>(n), 1);
  s.count = n;
  return s;
}

// Drives a schedule against a perfect machine (every write succeeds) and
// returns the sequence as "-1 +1 ..." (- offline, + online).
std::string Drive(Schedule* sched, OnlineState* s, int ops) {
  std::string seq;
  for (int i = 0; i < ops; ++i) {
    std::optional<Operation> op = sched->Next(*s);
    if (!op)
      return seq + "end";
    seq += (op->dir == Direction::kOffline ? "-" : "+") + std::to_string(op->cpu) + " ";
    EXPECT_NE(s->IsOnline(op->cpu), op->dir == Direction::kOnline) << "no-op emitted: " << seq;
    s->Set(op->cpu, op->dir == Direction::kOnline);
  }
  return seq;
}

std::unique_ptr<Schedule> Make(Pattern p, std::vector<int> cpus, const OnlineState& s,
                               int min_online = 1, uint64_t seed = 1, SweepConfig sweep = {}) {
  std::string err;
  auto sched = NewSchedule({p, std::move(cpus), min_online, seed, sweep}, s, &err);
  EXPECT_TRUE(sched) << err;
  return sched;
}

TEST(ScheduleTest, RoundRobinTogglesEachCpuAndBack) {
  OnlineState s = AllOnline(4);
  auto sched = Make(Pattern::kRoundRobin, {1, 2, 3}, s);
  EXPECT_EQ(Drive(sched.get(), &s, 8), "-1 +1 -2 +2 -3 +3 -1 +1 ");
}

TEST(ScheduleTest, RoundRobinOnlinesACpuThatStartedOffline) {
  OnlineState s = AllOnline(3);
  s.Set(2, false);
  auto sched = Make(Pattern::kRoundRobin, {1, 2}, s);
  EXPECT_EQ(Drive(sched.get(), &s, 6), "-1 +1 +2 -2 -1 +1 ");
}

TEST(ScheduleTest, RoundRobinSkipsTheBackStepWhenTheFirstFailed) {
  OnlineState s = AllOnline(3);
  auto sched = Make(Pattern::kRoundRobin, {1, 2}, s);
  ASSERT_EQ(sched->Next(s)->cpu, 1);  // offline cpu1 "fails": state unchanged
  std::optional<Operation> op = sched->Next(s);
  EXPECT_EQ(op->cpu, 2);
  EXPECT_EQ(op->dir, Direction::kOffline);
}

TEST(ScheduleTest, AllOfflinesEverySelectedCpuThenOnlinesThem) {
  OnlineState s = AllOnline(4);
  auto sched = Make(Pattern::kAll, {1, 2, 3}, s);
  EXPECT_EQ(Drive(sched.get(), &s, 12), "-1 -2 -3 +1 +2 +3 -1 -2 -3 +1 +2 +3 ");
}

TEST(ScheduleTest, AllHonoursMinOnline) {
  OnlineState s = AllOnline(4);
  auto sched = Make(Pattern::kAll, {0, 1, 2, 3}, s, /*min_online=*/2);
  EXPECT_EQ(Drive(sched.get(), &s, 8), "-0 -1 +0 +1 -0 -1 +0 +1 ");
}

TEST(ScheduleTest, NeverTakesTheLastCpuOffline) {
  OnlineState s = AllOnline(2);
  auto sched = Make(Pattern::kAll, {0, 1}, s, /*min_online=*/1);
  EXPECT_EQ(Drive(sched.get(), &s, 4), "-0 +0 -0 +0 ");
  for (Pattern p : {Pattern::kRoundRobin, Pattern::kRandom}) {
    OnlineState t = AllOnline(2);
    auto r = Make(p, {0, 1}, t, 1);
    for (int i = 0; i < 200; ++i) {
      Operation op = *r->Next(t);
      t.Set(op.cpu, op.dir == Direction::kOnline);
      ASSERT_GE(t.count, 1);
    }
  }
}

TEST(ScheduleTest, StuckScheduleSaysWhy) {
  OnlineState s = AllOnline(3);
  auto sched = Make(Pattern::kRoundRobin, {1, 2}, s, /*min_online=*/3);
  EXPECT_FALSE(sched->Next(s));
  EXPECT_NE(sched->error().find("min_online 3"), std::string::npos) << sched->error();
}

TEST(ScheduleTest, RandomIsReplayableFromTheSeedAndStaysWithinMinOnline) {
  auto run = [](uint64_t seed) {
    OnlineState s = AllOnline(8);
    auto sched = Make(Pattern::kRandom, {1, 2, 3, 4, 5, 6, 7}, s, 3, seed);
    std::string seq;
    for (int i = 0; i < 2000; ++i) {
      Operation op = *sched->Next(s);
      s.Set(op.cpu, op.dir == Direction::kOnline);
      EXPECT_GE(s.count, 3);
      seq += std::to_string(op.cpu) + (op.dir == Direction::kOnline ? "+" : "-");
    }
    return seq;
  };
  EXPECT_EQ(run(42), run(42));
  EXPECT_NE(run(42), run(43));
  // Every selected CPU is visited.
  std::string seq = run(7);
  for (char c = '1'; c <= '7'; ++c)
    EXPECT_NE(seq.find(c), std::string::npos) << c;
}

TEST(ScheduleTest, SweepSetsEachLevelThenCyclesTheVictim) {
  OnlineState s = AllOnline(5);  // cpu0 stays online: levels 2..5
  SweepConfig sw;
  sw.levels = {2, 4};
  sw.cycles_per_level = 2;
  auto sched = Make(Pattern::kSweep, {1, 2, 3, 4}, s, 1, 1, sw);
  // Level 2: offline 3, 2, 1 (top first); cycle victim 4 twice.
  // Level 4: online 1, 2; cycle 4 twice; end.
  EXPECT_EQ(Drive(sched.get(), &s, 30), "-3 -2 -1 -4 +4 -4 +4 +1 +2 -4 +4 -4 +4 end");
}

// Set-up writes are marked so that statistics keep them out of the latency
// tables; the victim's cycles are not. Describe says which levels a stop
// left unmeasured.
TEST(ScheduleTest, SweepMarksSetupWritesAndNamesMissingLevels) {
  OnlineState s = AllOnline(5);
  SweepConfig sw;
  sw.levels = {2, 4};
  sw.cycles_per_level = 2;
  auto sched = Make(Pattern::kSweep, {1, 2, 3, 4}, s, 1, 1, sw);
  std::string seq;
  for (int i = 0; i < 5; ++i) {
    std::optional<Operation> op = sched->Next(s);
    ASSERT_TRUE(op);
    seq += (op->setup ? "s" : "") + std::string(op->dir == Direction::kOffline ? "-" : "+") +
           std::to_string(op->cpu) + " ";
    s.Set(op->cpu, op->dir == Direction::kOnline);
  }
  // Level 2: cpu0 and the victim 4 online; 3 and 2 and 1 go offline first.
  EXPECT_EQ(seq, "s-3 s-2 s-1 -4 +4 ");
  EXPECT_EQ(sched->Describe()["levels_complete"], nlohmann::json::array());
  EXPECT_EQ(sched->Describe()["levels_missing"], nlohmann::json({2, 4}));
  ASSERT_TRUE(sched->Progress());
  EXPECT_EQ(sched->Progress()->label, "level 1/2 (2 online)");
  Drive(sched.get(), &s, 100);
  EXPECT_EQ(sched->Describe()["levels_complete"], nlohmann::json({2, 4}));
  EXPECT_EQ(sched->Describe()["levels_missing"], nlohmann::json::array());
}

TEST(ScheduleTest, SweepVictimOfflinesAtExactlyTheLevel) {
  OnlineState s = AllOnline(8);
  auto sched = Make(Pattern::kSweep, {1, 2, 3, 4, 5, 6, 7}, s, 1, 1, SweepConfig{});
  nlohmann::json d = sched->Describe();
  EXPECT_EQ(d["levels"], nlohmann::json({2, 4, 8}));
  EXPECT_EQ(d["victim"], 7);
  std::map<int, int> victim_offlines_at;
  for (;;) {
    std::optional<Operation> op = sched->Next(s);
    if (!op)
      break;
    if (op->cpu == 7 && op->dir == Direction::kOffline)
      ++victim_offlines_at[s.count];
    s.Set(op->cpu, op->dir == Direction::kOnline);
  }
  EXPECT_EQ(victim_offlines_at, (std::map<int, int>{{2, 100}, {4, 100}, {8, 100}}));
}

TEST(ScheduleTest, SweepRejectsUnreachableLevelsAndVictims) {
  OnlineState s = AllOnline(4);
  std::string err;
  SweepConfig sw;
  sw.levels = {2, 8};
  EXPECT_FALSE(NewSchedule({Pattern::kSweep, {1, 2, 3}, 1, 1, sw}, s, &err));
  EXPECT_EQ(err,
            "/sweep/levels: level 8 is not reachable: with CPUs 1-3 selected and min_online 1, "
            "online counts 2 to 4 are reachable");
  sw.levels = {};
  sw.victim = 0;
  EXPECT_FALSE(NewSchedule({Pattern::kSweep, {1, 2, 3}, 1, 1, sw}, s, &err));
  EXPECT_EQ(err, "/sweep/victim: CPU 0 is not among the selected CPUs 1-3");
}

TEST(ScheduleTest, SweepStopsWhenSetupKeepsFailing) {
  OnlineState s = AllOnline(4);
  SweepConfig sw;
  sw.levels = {2};
  auto sched = Make(Pattern::kSweep, {1, 2, 3}, s, 1, 1, sw);
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(sched->Next(s));  // offline cpu2 "fails" every time
  EXPECT_FALSE(sched->Next(s));
  EXPECT_EQ(sched->error(), "sweep: cannot reach level 2: CPU 2 refuses to go offline");
}

// A checkpoint is a file: every field a schedule restores is checked before
// it is used. rng all zero used to be taken, and Rng::Below then never
// returned (deaf to SIGTERM); a back_cpu outside the selection indexed the
// online state out of bounds.
TEST(ScheduleTest, RestoreRefusesStateThatCannotHappen) {
  OnlineState s = AllOnline(4);
  std::string err;
  auto random = Make(Pattern::kRandom, {1, 2, 3}, s);
  nlohmann::json saved = random->SaveState();
  saved["rng"] = {0, 0, 0, 0};
  EXPECT_FALSE(random->RestoreState(saved, &err));
  EXPECT_EQ(err, "random schedule state out of range");

  auto rr = Make(Pattern::kRoundRobin, {1, 2, 3}, s);
  saved = rr->SaveState();
  saved["pending_back"] = true;
  saved["back_cpu"] = 1000000;
  EXPECT_FALSE(rr->RestoreState(saved, &err));
  saved["back_cpu"] = 2;
  EXPECT_TRUE(rr->RestoreState(saved, &err)) << err;

  SweepConfig sw;
  sw.cycles_per_level = 5;
  auto sweep = Make(Pattern::kSweep, {1, 2, 3}, s, 1, 1, sw);
  const nlohmann::json good = sweep->SaveState();
  for (const auto& [key, value] :
       std::vector<std::pair<const char*, nlohmann::json>>{{"setup_attempts", -1},
                                                           {"setup_attempts", 1000},
                                                           {"cycle_ops", 11},
                                                           {"last_setup_cpu", 77}}) {
    saved = good;
    saved[key] = value;
    EXPECT_FALSE(sweep->RestoreState(saved, &err)) << key << " " << value;
  }
  EXPECT_TRUE(sweep->RestoreState(good, &err)) << err;
}

// The smt pattern over 4 cores of 2 threads (x86 numbering: core k is k
// and k + 4): switches to "off" then "on", core by core, each write tagged
// with its switch; the first thread of a core is never written.
ScheduleParams SmtParams(uint64_t switches, std::array<int, 2> threads = {1, 2}) {
  ScheduleParams p{Pattern::kSmt, {4, 5, 6, 7}, 1, 1, {}};
  p.smt.switches = switches;
  p.smt_cores = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};
  p.smt_threads = threads;
  return p;
}

TEST(ScheduleTest, SmtSwitchesEveryCoreAndEndsAfterItsSwitches) {
  OnlineState s = AllOnline(8);
  std::string err;
  auto sched = NewSchedule(SmtParams(4), s, &err);
  ASSERT_TRUE(sched) << err;
  std::string seq;
  std::vector<uint64_t> groups;
  while (std::optional<Operation> op = sched->Next(s)) {
    seq += (op->dir == Direction::kOffline ? "-" : "+") + std::to_string(op->cpu) + " ";
    groups.push_back(op->group);
    s.Set(op->cpu, op->dir == Direction::kOnline);
  }
  EXPECT_EQ(sched->error(), "");
  EXPECT_EQ(seq, "-4 -5 -6 -7 +4 +5 +6 +7 -4 -5 -6 -7 +4 +5 +6 +7 ");
  EXPECT_EQ(groups, (std::vector<uint64_t>{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4}));
  EXPECT_EQ(sched->Describe()["switches_done"], 4);
  EXPECT_EQ(sched->Describe()["cores"], nlohmann::json({"0,4", "1,5", "2,6", "3,7"}));
}

// A write that does not take leaves its CPU out for the rest of that switch;
// a core whose first thread is offline gets no sibling back.
TEST(ScheduleTest, SmtSkipsARefusedThreadAndACoreThatIsDown) {
  OnlineState s = AllOnline(8);
  std::string err;
  auto sched = NewSchedule(SmtParams(0), s, &err);
  ASSERT_TRUE(sched) << err;
  std::optional<Operation> op = sched->Next(s);
  ASSERT_TRUE(op);
  EXPECT_EQ(op->cpu, 4);  // refused: the state stays as it was
  std::string seq;
  for (int i = 0; i < 3; ++i) {
    op = sched->Next(s);
    seq += std::to_string(op->cpu) + " ";
    s.Set(op->cpu, false);
  }
  EXPECT_EQ(seq, "5 6 7 ");
  s.Set(1, false);  // core 1's first thread taken down behind the pattern's back
  op = sched->Next(s);
  ASSERT_TRUE(op);  // switch 2, to "on": cpu4 is already on, cpu5's core is down
  EXPECT_EQ(op->group, 2u);
  EXPECT_EQ(op->cpu, 6);
  EXPECT_EQ(op->dir, Direction::kOnline);
  const nlohmann::json saved = sched->SaveState();
  auto again = NewSchedule(SmtParams(0), s, &err);
  ASSERT_TRUE(again->RestoreState(saved, &err)) << err;
  EXPECT_EQ(again->SaveState(), saved);
  nlohmann::json bad = saved;
  bad["given_up"] = {3};  // a first thread: never one of the pattern's CPUs
  EXPECT_FALSE(again->RestoreState(bad, &err));
}

TEST(ScheduleTest, SmtRefusesModesThatMoveNothing) {
  std::string err;
  ScheduleParams p = SmtParams(2, {2, 2});
  p.smt.modes = {"on", "2"};
  EXPECT_FALSE(NewSchedule(p, AllOnline(8), &err));
  EXPECT_EQ(err,
            "/smt/modes: \"on\" and \"2\" leave the same 2 thread(s) per core online here: "
            "nothing to switch");
}

// Method "control": one smt/control write per switch, with the mask the mode
// implies; a switch that finds the machine there has none; three switches
// in a row that leave the mask elsewhere stop the pattern; the position
// (a write done, its mask) survives a checkpoint.
TEST(ScheduleTest, SmtControlWritesTheModeOncePerSwitch) {
  OnlineState s = AllOnline(8);
  ScheduleParams p = SmtParams(3);
  p.smt.method = "control";
  std::string err;
  auto sched = NewSchedule(p, s, &err);
  ASSERT_TRUE(sched) << err;
  std::string seq;
  while (std::optional<Operation> op = sched->Next(s)) {
    ASSERT_TRUE(op->smt_mode && op->expect_online);
    EXPECT_EQ(op->cpu, -1);
    seq += std::string(DirectionName(op->dir)) + " " + *op->smt_mode + " " +
           std::to_string(op->group) + "; ";
    for (size_t c = 0; c < s.online.size(); ++c)
      s.Set(static_cast<int>(c), (*op->expect_online)[c] != 0);
    seq += std::to_string(s.count) + " online; ";
  }
  EXPECT_EQ(sched->error(), "");
  EXPECT_EQ(seq, "offline off 1; 4 online; online on 2; 8 online; offline off 3; 4 online; ");

  // Already "off": the first switch has no write.
  OnlineState off = AllOnline(8);
  for (int c = 4; c < 8; ++c)
    off.Set(c, false);
  auto from_off = NewSchedule(p, off, &err);
  std::optional<Operation> op = from_off->Next(off);
  ASSERT_TRUE(op);
  EXPECT_EQ(op->group, 2u);
  EXPECT_EQ(*op->smt_mode, "on");
  // A core whose first thread is down keeps its sibling down.
  off.Set(1, false);
  auto core_down = NewSchedule(p, off, &err);
  op = core_down->Next(off);
  ASSERT_TRUE(op);
  EXPECT_EQ((*op->expect_online)[5], 0);
  EXPECT_EQ((*op->expect_online)[4], 1);

  // The kernel refuses the mode: nothing moves, three switches, then a stop.
  OnlineState stuck = AllOnline(8);
  auto refused = NewSchedule(SmtParams(0), stuck, &err);
  ScheduleParams pc = SmtParams(0);
  pc.smt.method = "control";
  refused = NewSchedule(pc, stuck, &err);
  int writes = 0;
  while (refused->Next(stuck))
    ++writes;
  EXPECT_EQ(writes, 3);
  EXPECT_EQ(refused->error(),
            "smt: smt/control \"off\" left the online CPUs at 0-7 3 switches in a row, not "
            "where the mode puts them");

  // Checkpointed after a write: the resumed schedule judges that write.
  OnlineState r = AllOnline(8);
  auto first = NewSchedule(pc, r, &err);
  ASSERT_TRUE(first->Next(r));
  const nlohmann::json saved = first->SaveState();
  EXPECT_EQ(saved["control_written"], true);
  auto resumed = NewSchedule(pc, r, &err);
  ASSERT_TRUE(resumed->RestoreState(saved, &err)) << err;
  EXPECT_EQ(resumed->SaveState(), saved);
  for (int c = 4; c < 8; ++c)
    r.Set(c, false);  // the write took
  op = resumed->Next(r);
  ASSERT_TRUE(op);
  EXPECT_EQ(op->group, 2u);
  EXPECT_EQ(resumed->SaveState()["failed_in_a_row"], 0);
}

// Drives the smt schedule on a perfect machine ("-4 -5 ..." for threads,
// "off 1" for smt/control writes, each with its group), settling before every
// operation when `settle` (a checkpoint before each).
std::string DriveSmt(Schedule* sched, OnlineState* s, bool settle) {
  std::string seq;
  for (;;) {
    if (settle)
      sched->Settle(*s);
    std::optional<Operation> op = sched->Next(*s);
    if (!op)
      return seq + "end";
    if (op->smt_mode) {
      seq += *op->smt_mode + " " + std::to_string(op->group) + " ";
      for (size_t c = 0; c < s->online.size(); ++c)
        s->Set(static_cast<int>(c), (*op->expect_online)[c] != 0);
      continue;
    }
    seq += (op->dir == Direction::kOffline ? "-" : "+") + std::to_string(op->cpu) + "/" +
           std::to_string(op->group) + " ";
    s->Set(op->cpu, op->dir == Direction::kOnline);
  }
}

// Settle (before each checkpoint) changes nothing that follows on the same
// machine; it closes a switch with no write left (next_group). A resume
// finds the start mask restored: the switch that restore undid is redone or,
// already there, skipped without counting, so the run still makes its
// switches; a switch with no write never counts (modes "on" first).
TEST(ScheduleTest, SmtSettlesBeforeACheckpointAndResumesOnARestoredMachine) {
  std::string err;
  for (const char* method : {"threads", "control"}) {
    SCOPED_TRACE(method);
    ScheduleParams p = SmtParams(4);
    p.smt.method = method;
    OnlineState a = AllOnline(8), b = AllOnline(8);
    auto plain = NewSchedule(p, a, &err);
    auto settled = NewSchedule(p, b, &err);
    ASSERT_TRUE(plain && settled) << err;
    const std::string whole = DriveSmt(plain.get(), &a, false);
    EXPECT_EQ(DriveSmt(settled.get(), &b, true), whole);
    EXPECT_EQ(settled->Describe()["switches_done"], 4);

    // Checkpointed right after switch 1 (to off), resumed on the restored
    // machine: switch 2 (on) has nothing to do, 3, 4 and 5 make the four.
    OnlineState s = AllOnline(8);
    auto first = NewSchedule(p, s, &err);
    const int writes = p.smt.method == "control" ? 1 : 4;
    for (int i = 0; i < writes; ++i) {
      std::optional<Operation> op = first->Next(s);
      ASSERT_TRUE(op);
      if (op->smt_mode)
        for (int c = 4; c < 8; ++c)
          s.Set(c, false);
      else
        s.Set(op->cpu, false);
    }
    EXPECT_EQ(first->next_group(), 1u);
    first->Settle(s);
    EXPECT_EQ(first->next_group(), 2u);  // switch 1 is over
    const nlohmann::json saved = first->SaveState();
    OnlineState restored = AllOnline(8);
    auto resumed = NewSchedule(p, restored, &err);
    ASSERT_TRUE(resumed->RestoreState(saved, &err)) << err;
    const std::string rest = DriveSmt(resumed.get(), &restored, false);
    EXPECT_EQ(rest, p.smt.method == "control"
                        ? "off 3 on 4 off 5 end"
                        : "-4/3 -5/3 -6/3 -7/3 +4/4 +5/4 +6/4 +7/4 -4/5 -5/5 -6/5 -7/5 end");
    EXPECT_EQ(resumed->Describe()["switches_done"], 4);
    EXPECT_EQ(resumed->SaveState()["failed_in_a_row"], 0);
    EXPECT_EQ(resumed->error(), "");
  }

  // Threads method cut inside switch 2 (to on, two of four written): the
  // restored machine is already on, switch 2 counts (it wrote), 3 and 4 end.
  OnlineState s = AllOnline(8);
  auto cut = NewSchedule(SmtParams(4), s, &err);
  for (int i = 0; i < 6; ++i) {
    std::optional<Operation> op = cut->Next(s);
    s.Set(op->cpu, op->dir == Direction::kOnline);
  }
  cut->Settle(s);
  EXPECT_EQ(cut->next_group(), 2u);  // in progress
  OnlineState restored = AllOnline(8);
  auto resumed = NewSchedule(SmtParams(4), restored, &err);
  ASSERT_TRUE(resumed->RestoreState(cut->SaveState(), &err)) << err;
  EXPECT_EQ(DriveSmt(resumed.get(), &restored, false),
            "-4/3 -5/3 -6/3 -7/3 +4/4 +5/4 +6/4 +7/4 end");

  // Modes "on" then "off" on a machine that is on: the first switch has no
  // write and does not count.
  ScheduleParams on_first = SmtParams(2, {2, 1});
  on_first.smt.modes = {"on", "off"};
  OnlineState o = AllOnline(8);
  auto sched = NewSchedule(on_first, o, &err);
  ASSERT_TRUE(sched) << err;
  EXPECT_EQ(DriveSmt(sched.get(), &o, false), "-4/2 -5/2 -6/2 -7/2 +4/3 +5/3 +6/3 +7/3 end");
}

TEST(RngTest, AllZeroStateIsRefused) {
  Rng rng(1);
  const auto before = rng.state();
  EXPECT_FALSE(rng.set_state({0, 0, 0, 0}));
  EXPECT_EQ(rng.state(), before);
  EXPECT_TRUE(rng.set_state({0, 0, 0, 1}));
}

}  // namespace
}  // namespace cpuhp
