// SPDX-License-Identifier: GPL-2.0
// The pieces of a checkpoint: schedules and the simulated machine continue
// the same sequence after SaveState/RestoreState; the file format refuses
// what it cannot trust; the operation log resumes at the checkpoint.
#include "soak/checkpoint.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "machine/sim_cpu_control.h"
#include "run/oplog.h"
#include "run/schedule.h"

namespace cpuhp {
namespace {

OnlineState AllOnline(int n) {
  OnlineState s;
  s.online.assign(static_cast<size_t>(n), 0);
  for (int c = 0; c < n; ++c)
    s.Set(c, true);
  return s;
}

// Applies ops to `s` as if every write succeeded.
std::vector<std::pair<int, int>> Take(Schedule* sch, OnlineState* s, int n) {
  std::vector<std::pair<int, int>> ops;
  for (int i = 0; i < n; ++i) {
    auto op = sch->Next(*s);
    if (!op)
      break;
    ops.push_back({op->cpu, static_cast<int>(op->dir)});
    s->Set(op->cpu, op->dir == Direction::kOnline);
  }
  return ops;
}

class ScheduleResume : public ::testing::TestWithParam<Pattern> {};

TEST_P(ScheduleResume, RestoredScheduleContinuesTheSameSequence) {
  ScheduleParams p;
  p.pattern = GetParam();
  p.cpus = {1, 2, 3, 4, 5};
  p.seed = 99;
  p.sweep.cycles_per_level = 3;
  std::string err;
  OnlineState s = AllOnline(6);
  auto a = NewSchedule(p, s, &err);
  ASSERT_TRUE(a) << err;
  Take(a.get(), &s, 37);
  const nlohmann::json saved = a->SaveState();
  OnlineState s2 = s;
  const auto expected = Take(a.get(), &s, 40);

  auto b = NewSchedule(p, AllOnline(6), &err);
  ASSERT_TRUE(b->RestoreState(saved, &err)) << err;
  EXPECT_EQ(Take(b.get(), &s2, 40), expected);
}

INSTANTIATE_TEST_SUITE_P(AllPatterns, ScheduleResume,
                         ::testing::Values(Pattern::kRoundRobin, Pattern::kAll, Pattern::kRandom,
                                           Pattern::kSweep));

TEST(ScheduleResume, RefusesStateOfAnotherPattern) {
  ScheduleParams p;
  p.cpus = {1, 2};
  std::string err;
  auto rr = NewSchedule(p, AllOnline(3), &err);
  p.pattern = Pattern::kRandom;
  auto rnd = NewSchedule(p, AllOnline(3), &err);
  EXPECT_FALSE(rnd->RestoreState(rr->SaveState(), &err));
  EXPECT_EQ(err, "schedule state is not for pattern random");
  nlohmann::json bad = rr->SaveState();
  bad["cursor"] = 7;
  EXPECT_FALSE(rr->RestoreState(bad, &err));
  EXPECT_EQ(err, "roundrobin schedule state out of range");
}

TEST(SimResume, RestoredMachineGivesTheSameLatenciesAndErrors) {
  SimConfig cfg;
  cfg.error_rate = 0.2;
  SimCpuControl a(cfg, 5);
  for (int i = 0; i < 100; ++i)
    a.WriteOnline(1 + i % 7, i % 2);
  const nlohmann::json saved = a.SaveState();
  std::vector<std::pair<int, uint64_t>> expected;
  for (int i = 0; i < 100; ++i) {
    int err = a.WriteOnline(1 + i % 5, i % 3 == 0);
    expected.push_back({err, a.clock()->NowNs()});
  }
  SimCpuControl b(cfg, 77);  // another seed: everything comes from the state
  std::string err;
  ASSERT_TRUE(b.RestoreState(saved, &err)) << err;
  for (int i = 0; i < 100; ++i) {
    int e = b.WriteOnline(1 + i % 5, i % 3 == 0);
    EXPECT_EQ(std::make_pair(e, b.clock()->NowNs()), expected[static_cast<size_t>(i)]) << i;
  }
  SimConfig small;
  small.cpus = 4;
  SimCpuControl c(small, 5);
  EXPECT_FALSE(c.RestoreState(saved, &err));
  EXPECT_EQ(err, "sim state is for 8 CPUs, not 4");
}

TEST(CheckpointFormat, RoundTripsAndRefusesBadFields) {
  Checkpoint c;
  c.identity = {{"pattern", "all"}};
  c.seed = 42;
  c.next_index = 17;
  c.first_errors.push_back(OpRecord{3, 1, Direction::kOnline, 100, 200, 16, 4, true});
  c.stats = nlohmann::json::object();
  Checkpoint back;
  std::string err;
  ASSERT_TRUE(CheckpointFromJson(CheckpointToJson(c), &back, &err)) << err;
  EXPECT_EQ(back.seed, 42u);
  EXPECT_EQ(back.next_index, 17u);
  ASSERT_EQ(back.first_errors.size(), 1u);
  EXPECT_EQ(back.first_errors[0].err, 16);
  EXPECT_EQ(back.first_errors[0].dir, Direction::kOnline);

  nlohmann::json j = CheckpointToJson(c);
  j["next_index"] = "seventeen";
  EXPECT_FALSE(CheckpointFromJson(j, &back, &err));
  EXPECT_EQ(err.rfind("checkpoint field \"next_index\": ", 0), 0u) << err;
  j = CheckpointToJson(c);
  j.erase("format");
  EXPECT_FALSE(CheckpointFromJson(j, &back, &err));
  EXPECT_NE(err.find("not a cpuhp-stress checkpoint"), std::string::npos);
}

TEST(CheckpointFormat, IdentityIgnoresOutputsButNotLimits) {
  Config a;
  Config b = a;
  b.report = "elsewhere.json";
  b.checkpoint_interval_ns = 1;
  b.sim.stall_every = 3;
  EXPECT_EQ(RunIdentity(a), RunIdentity(b));
  b.iterations = 5;
  EXPECT_NE(RunIdentity(a), RunIdentity(b));
}

TEST(OpLogResume, OpenAtCutsTheLogBackToTheCheckpoint) {
  const std::string path = std::filesystem::temp_directory_path() / "cpuhp-oplog-resume.jsonl";
  std::string err;
  OpLog log;
  ASSERT_TRUE(log.Open(path, &err));
  OpRecord r;
  log.Append(r, &err);
  const OpLog::Position at = log.position();
  r.index = 1;
  log.Append(r, &err);
  ASSERT_TRUE(log.Close(&err));
  EXPECT_EQ(std::filesystem::file_size(path), 2 * at.bytes);
  OpLog again;
  std::string warning;
  ASSERT_TRUE(again.OpenAt(path, at, &err, &warning)) << err;
  EXPECT_EQ(warning, "");
  r.index = 9;
  again.Append(r, &err);
  ASSERT_TRUE(again.Close(&err));
  std::ifstream f(path);
  std::string l1, l2, l3;
  std::getline(f, l1);
  std::getline(f, l2);
  EXPECT_FALSE(std::getline(f, l3));
  EXPECT_NE(l1.find("\"i\":0,"), std::string::npos);
  EXPECT_NE(l2.find("\"i\":9,"), std::string::npos);
  std::filesystem::remove(path);
}

// mv ops.jsonl ops.1; kill -HUP: the new file counts from 0, so a checkpoint
// after the rotation records the new file's length, not the total.
TEST(OpLogResume, ARotatedLogCountsFromZero) {
  const std::filesystem::path d = std::filesystem::temp_directory_path() / "cpuhp-oplog-rotate";
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  const std::string path = d / "ops.jsonl";
  std::string err;
  OpLog log;
  ASSERT_TRUE(log.Open(path, &err));
  OpRecord r;
  ASSERT_TRUE(log.Append(r, &err));
  const OpLog::Position before = log.position();
  std::filesystem::rename(path, d / "ops.1");
  ASSERT_TRUE(log.Reopen(&err)) << err;
  const OpLog::Position after = log.position();
  EXPECT_EQ(after.bytes, 0u);
  EXPECT_NE(after.ino, before.ino);
  ASSERT_TRUE(log.Append(r, &err));
  ASSERT_TRUE(log.Sync(&err)) << err;
  EXPECT_EQ(log.position().bytes, std::filesystem::file_size(path));
  // A reopen without a rotation continues the same file at its length.
  ASSERT_TRUE(log.Reopen(&err)) << err;
  EXPECT_EQ(log.position().bytes, before.bytes);
  EXPECT_EQ(log.position().ino, after.ino);
  ASSERT_TRUE(log.Close(&err));
  EXPECT_EQ(std::filesystem::file_size(d / "ops.1"), before.bytes);
  std::filesystem::remove_all(d);
}

// A log rotated since the checkpoint does not stop the resume (issue 29.3:
// logrotate kept the service down): the run goes on at the end of what is
// there, never cutting a file that is not the one recorded, and says so in
// one line naming the file.
TEST(OpLogResume, ARotatedLogIsContinuedNotRefused) {
  const std::filesystem::path d = std::filesystem::temp_directory_path() / "cpuhp-oplog-refuse";
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  const std::string path = d / "ops.jsonl";
  std::string err;
  OpLog::Position at;
  {
    OpLog log;
    ASSERT_TRUE(log.Open(path, &err));
    OpRecord r;
    log.Append(r, &err);
    log.Append(r, &err);
    at = log.position();
    ASSERT_TRUE(log.Close(&err));
  }
  const std::string whole = [&] {
    std::ifstream f(path);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }();
  std::string warning;
  // Shorter than recorded (copytruncate): appended at its end, untouched.
  std::filesystem::resize_file(path, at.bytes - 10);
  {
    OpLog shorter;
    ASSERT_TRUE(shorter.OpenAt(path, at, &err, &warning)) << err;
    EXPECT_EQ(
        warning.rfind(path + ": " + std::to_string(at.bytes - 10) + " bytes, shorter than the " +
                          std::to_string(at.bytes) + " the checkpoint recorded",
                      0),
        0u)
        << warning;
    EXPECT_EQ(warning.find('\n'), std::string::npos);
    EXPECT_EQ(shorter.position().bytes, at.bytes - 10);
  }
  EXPECT_EQ(std::filesystem::file_size(path), at.bytes - 10);  // untouched
  // Another inode, longer than recorded (a rotated-in file). Written beside
  // and renamed over: while the old file exists the new one cannot get its
  // inode number. Appended to, not cut.
  std::ofstream(path + ".new") << whole << whole;
  std::filesystem::rename(path + ".new", path);
  {
    OpLog other;
    ASSERT_TRUE(other.OpenAt(path, at, &err, &warning)) << err;
    EXPECT_NE(warning.find(path + ": another file than the checkpoint's (device "),
              std::string::npos)
        << warning;
  }
  EXPECT_EQ(std::filesystem::file_size(path), 2 * whole.size());  // not cut
  // Missing (rotated away): a new log.
  std::filesystem::remove(path);
  {
    OpLog missing;
    ASSERT_TRUE(missing.OpenAt(path, at, &err, &warning)) << err;
    EXPECT_EQ(warning, path +
                           ": the checkpoint's operation log is gone (rotated away?): a new "
                           "log begins with the operations from the checkpoint on");
  }
  EXPECT_TRUE(std::filesystem::exists(path));
  // A directory in its place: refused in one line.
  std::filesystem::remove(path);
  std::filesystem::create_directory(path);
  OpLog dir;
  EXPECT_FALSE(dir.OpenAt(path, at, &err, &warning));
  EXPECT_EQ(err.rfind(path + ": cannot reopen the checkpoint's operation log: ", 0), 0u) << err;
  std::filesystem::remove(path);
  // No log at the checkpoint: a new one.
  OpLog fresh;
  EXPECT_TRUE(fresh.OpenAt(path, OpLog::Position{}, &err, &warning)) << err;
  std::filesystem::remove_all(d);
}

}  // namespace
}  // namespace cpuhp
