// SPDX-License-Identifier: GPL-2.0
// `run` with fault injection, end to end on the sim backend.
#include <csignal>
#include <filesystem>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/run_command.h"
#include "faults/faults.h"
#include "machine/restore.h"
#include "sources/timing_source.h"
#include "testing/fake_sysfs.h"
#include "testing/run_command_fixture.h"

namespace cpuhp {
namespace {

// RunCommand end to end on the sim backend: exit code, report (validated
// against the schema, failures included) and the summary line.
class FaultsCommandTest : public RunCommandFixture {
 protected:
  FaultsCommandTest() : RunCommandFixture("cpuhp-faults-cmd") {}
  void SetUp() override {
    RunCommandFixture::SetUp();
    cfg_.backend = "sim";
    cfg_.sim.cpus = 3;
    cfg_.seed = 3;
    cfg_.iterations = 0;
    cfg_.pattern = Pattern::kFaultSweep;
    cfg_.faults.states = {"mm/vmstat:online", "sched:active", "cpu:teardown"};
  }
  void ExpectValid() {
    int rc = ReportValidates();
    if (rc == 77)
      GTEST_SKIP() << "python3-jsonschema missing";
    EXPECT_EQ(rc, 0) << "report does not validate: " << cfg_.report;
  }
};

// Fault setup fails and fail cannot be cleared (here: cpu1/hotplug/fail is a
// directory): the state file that says fail may be armed must stay for
// `restore`, which clears it.
TEST(SysfsFaultSetupTest, StateStaysWhenFailCannotBeCleared) {
  FakeSysfs fs(2);
  std::filesystem::create_directories(fs.root() + "/cpu1/hotplug/fail");
  std::filesystem::create_directories(fs.root() + "/hotplug");
  fs.Write("cpu1/hotplug/state", "236\n");
  fs.Write("hotplug/states", "  0: offline\n235: sched:active\n236: online\n");
  char tmpl[] = "/tmp/cpuhp-faults-setup.XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  Config cfg;
  cfg.sysfs_root = fs.root();
  cfg.state_dir = dir + "/state";
  cfg.report = dir + "/report.json";
  cfg.progress = ProgressMode::kNever;
  cfg.tracepoints = false;
  cfg.pattern = Pattern::kFaultSweep;
  cfg.seed = 1;
  std::FILE* out = std::tmpfile();
  volatile sig_atomic_t no_stop = 0;
  EXPECT_NE(RunCommand(cfg, &no_stop, out), kExitOk);
  std::fclose(out);
  ASSERT_TRUE(std::filesystem::exists(cfg.state_dir + "/state.json"));
  StateDir sd(cfg.state_dir);
  SavedState saved;
  std::string err;
  ASSERT_TRUE(sd.Read(&saved, &err)) << err;
  EXPECT_TRUE(saved.fail_may_be_armed);
  std::filesystem::remove_all(dir);
}

// Plays SIGTERM after operation `at`.
class StopAfter : public TimingSource {
 public:
  explicit StopAfter(uint64_t at) : at_(at) {}
  std::string name() const override { return "stop_after"; }
  bool Start(std::string*) override { return true; }
  void OpBegin(const Operation&, uint64_t) override {}
  void OpEnd(const OpRecord& rec) override {
    if (rec.index == at_)
      flag = SIGTERM;
  }
  void Stop() override {}
  nlohmann::json ReportJson() const override { return nlohmann::json::object(); }

  volatile sig_atomic_t flag = 0;

 private:
  uint64_t at_;
};

// Stopped part way and restarted: not resumed from a checkpoint that lacks
// the injector's state (72 injected / 8 not rolled back after a resume where
// the uninterrupted run had 108 / 12), but started over and said so.
TEST_F(FaultsCommandTest, AFaultRunIsNotResumed) {
  cfg_.state_dir = dir_ + "/state";
  StopAfter stop(10);
  ASSERT_EQ(RunCommand(cfg_, &stop.flag, out_, {&stop}), kExitInterrupted) << Output();
  ASSERT_EQ(Report()["run"]["stop_reason"], "signal");
  ASSERT_TRUE(std::filesystem::exists(cfg_.state_dir + "/checkpoint.json"));
  ASSERT_EQ(RunCommand(cfg_, &g_no_stop, out_), kExitOk) << Output();
  nlohmann::json r = Report();
  EXPECT_EQ(r["soak"]["restarts"].size(), 0u) << r["soak"].dump();
  EXPECT_NE(r["soak"].dump().find("a fault-injection run is not resumed"), std::string::npos)
      << r["soak"].dump();
  EXPECT_EQ(r["faults"]["totals"]["rolled_back"], 2 * 2 * 5);  // the whole sweep
}

TEST_F(FaultsCommandTest, SweepThatRollsBackExitsZero) {
  ASSERT_EQ(RunCommand(cfg_, &g_no_stop, out_), kExitOk) << Output();
  nlohmann::json r = Report();
  // 2 CPUs: 193 and 235 fire both ways, 144 offline only (teardown-only:
  // one try online, not reached), 2 repeats each.
  EXPECT_EQ(r["faults"]["totals"]["rolled_back"], 2 * 2 * 5);
  EXPECT_EQ(r["faults"]["totals"]["not_reached"], 2);
  EXPECT_EQ(r["faults"]["cleared_at_end"], true);
  EXPECT_EQ(r["totals"]["failed"], 0);
  EXPECT_EQ(r["run"]["stop_reason"], "schedule_complete");
  EXPECT_NE(Output().find("fault injection (sweep): 22 injected, 20 rolled back (verified), 0 NOT "
                          "rolled back, 2 not reached"),
            std::string::npos)
      << Output();
  ExpectValid();
}

TEST_F(FaultsCommandTest, BrokenRollbackExitsThreeWithTheFailureReported) {
  cfg_.sim.broken_rollback_state = 193;
  ASSERT_EQ(RunCommand(cfg_, &g_no_stop, out_), kExitFinishedWithFailures) << Output();
  nlohmann::json r = Report();
  const auto& f = r["faults"];
  EXPECT_EQ(f["totals"]["not_rolled_back"], 2 * 2 * 2);
  ASSERT_EQ(f["failures"].size(), 8u);
  EXPECT_EQ(f["failures"][0]["name"], "mm/vmstat:online");
  EXPECT_EQ(f["failures"][0]["hotplug_state_after"], 193);
  // Injected writes are not errors of the run; the restore still worked.
  EXPECT_EQ(r["totals"]["failed"], 0);
  EXPECT_EQ(r["restore"]["ok"], true);
  EXPECT_NE(Output().find("NOT rolled back: cpu1 offline state 193 (mm/vmstat:online)"),
            std::string::npos);
  ExpectValid();
}

// Fault injection inside SMT switches (threads method): an injected write
// before a sibling's is not part of the switch's time. On the sim without
// jitter every switch to a mode takes the same modeled time, with faults
// injected or not; the table says how many switches had one.
TEST_F(FaultsCommandTest, SmtSwitchTimesLeaveTheInjectedWritesOut) {
  cfg_.sim.cpus = 8;
  cfg_.sim.threads_per_core = 2;
  cfg_.sim.jitter = 0;
  cfg_.pattern = Pattern::kSmt;
  cfg_.smt.switches = 20;
  cfg_.faults.states = Config{}.faults.states;
  ASSERT_EQ(RunCommand(cfg_, &g_no_stop, out_), kExitOk) << Output();
  const nlohmann::json plain = Report()["smt"];
  cfg_.faults.rate = 0.5;
  ASSERT_EQ(RunCommand(cfg_, &g_no_stop, out_), kExitOk) << Output();
  const nlohmann::json r = Report();
  ASSERT_GT(r["faults"]["totals"]["injected"].get<uint64_t>(), 10u) << r["faults"].dump();
  for (int i = 0; i < 2; ++i) {
    const nlohmann::json& row = r["smt"]["to"][i];
    EXPECT_EQ(row["switches"], 10);
    EXPECT_GT(row["with_injected_faults"].get<uint64_t>(), 0u) << row.dump();
    EXPECT_EQ(plain["to"][i]["with_injected_faults"], 0);
    EXPECT_EQ(row["min_ns"], plain["to"][i]["min_ns"]);
    EXPECT_EQ(row["max_ns"], plain["to"][i]["max_ns"]);
  }
  EXPECT_NE(Output().find("with an injected fault (its writes not in the time)"), std::string::npos)
      << Output();
  ExpectValid();
}

TEST_F(FaultsCommandTest, RateWithoutHotplugFilesSaysUnavailableAndRuns) {
  FakeSysfs fs(3);
  cfg_.backend = "sysfs";
  cfg_.sysfs_root = fs.root();
  cfg_.state_dir = dir_ + "/state";
  cfg_.pattern = Pattern::kRoundRobin;
  cfg_.iterations = 10;
  cfg_.tracepoints = false;
  cfg_.kmod.enabled = false;
  cfg_.health.enabled = false;
  cfg_.faults.rate = 0.5;
  ASSERT_EQ(RunCommand(cfg_, &g_no_stop, out_), kExitOk) << Output();
  nlohmann::json r = Report();
  EXPECT_EQ(r["faults"]["status"], "unavailable");
  EXPECT_EQ(r["faults"]["reason"],
            fs.root() + "/hotplug/states: cannot read: No such file or directory");
  EXPECT_EQ(r["totals"]["ops"], 10);
  ExpectValid();
  // The fault sweep cannot do its job there: an error, nothing left behind.
  cfg_.pattern = Pattern::kFaultSweep;
  cfg_.iterations = 0;
  EXPECT_EQ(RunCommand(cfg_, &g_no_stop, out_), kExitFailed);
  EXPECT_FALSE(std::filesystem::exists(cfg_.state_dir + "/state.json"));
  EXPECT_EQ(fs.Online(1), '1');
}

}  // namespace
}  // namespace cpuhp
