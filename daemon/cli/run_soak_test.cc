// SPDX-License-Identifier: GPL-2.0
// `run` as a soak, end to end: checkpoint and resume on the simulated backend: a run stopped
// part way and resumed ends with the report of an uninterrupted run (except
// the run timing, the process and the restart records); a corrupt or foreign
// checkpoint is refused and moved aside; interim reports.
#include "soak/soak.h"

#include <signal.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "cli/run_command.h"
#include "sources/timing_source.h"

namespace cpuhp {
namespace {

volatile sig_atomic_t g_stop = 0;

// Plays the signal handler: asks the runner to stop after operation `at`.
class StopAt : public TimingSource {
 public:
  explicit StopAt(uint64_t at) : at_(at) {}
  std::string name() const override { return "stop_at"; }
  bool Start(std::string*) override { return true; }
  void OpBegin(const Operation&, uint64_t) override {}
  void OpEnd(const OpRecord& rec) override {
    if (rec.index == at_)
      g_stop = SIGTERM;
  }
  void Stop() override {}
  nlohmann::json ReportJson() const override { return nlohmann::json::object(); }

 private:
  uint64_t at_;
};

class SoakTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cpuhp-soak.XXXXXX";
    dir_ = mkdtemp(tmpl);
    cfg_.backend = "sim";
    cfg_.pattern = Pattern::kRandom;
    cfg_.iterations = 20000;
    cfg_.sim.error_rate = 0.01;
    cfg_.seed = 1234;
    cfg_.state_dir = dir_ + "/state";
    cfg_.report = dir_ + "/report.json";
    cfg_.oplog = dir_ + "/ops.jsonl";
    cfg_.progress = ProgressMode::kNever;
    out_ = std::tmpfile();
    g_stop = 0;
  }
  void TearDown() override {
    std::fclose(out_);
    std::filesystem::remove_all(dir_);
  }
  nlohmann::json Report(const std::string& path) {
    std::ifstream f(path);
    return nlohmann::json::parse(f);
  }
  // The parts that must match an uninterrupted run.
  static nlohmann::json Comparable(nlohmann::json r) {
    for (const char* k : {"run", "process", "soak", "timing_sources"})
      r.erase(k);
    r["config"].erase("report");
    r["config"].erase("oplog");
    r["config"].erase("state_dir");
    return r;
  }
  std::string ReadAll(const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }
  int Run(const Config& cfg, std::vector<TimingSource*> sources = {}) {
    g_stop = 0;
    return RunCommand(cfg, &g_stop, out_, sources);
  }

  std::string dir_;
  Config cfg_;
  std::FILE* out_ = nullptr;
};

TEST_F(SoakTest, StoppedAndResumedRunMatchesUninterruptedRun) {
  Config whole = cfg_;
  whole.state_dir = dir_ + "/state-whole";
  whole.report = dir_ + "/whole.json";
  whole.oplog = dir_ + "/whole.jsonl";
  ASSERT_EQ(Run(whole), kExitFinishedWithFailures);  // 1 %% of writes fail: exit 3, report written
  const nlohmann::json expected = Report(whole.report);
  ASSERT_EQ(expected["totals"]["ops"], 20000);
  ASSERT_GT(expected["totals"]["failed"].get<uint64_t>(), 100u);
  EXPECT_FALSE(std::filesystem::exists(whole.state_dir + "/checkpoint.json"));

  // Two stops part way: each exits 4 (interrupted, not "finished") and keeps
  // a final checkpoint that the next run resumes.
  StopAt first(6999);
  EXPECT_EQ(Run(cfg_, {&first}), kExitInterrupted);
  nlohmann::json r1 = Report(cfg_.report);
  EXPECT_EQ(r1["run"]["stop_reason"], "signal");
  EXPECT_EQ(r1["totals"]["ops"], 7000);
  ASSERT_TRUE(std::filesystem::exists(cfg_.state_dir + "/checkpoint.json"));
  StopAt second(12344);
  EXPECT_EQ(Run(cfg_, {&second}), kExitInterrupted);
  EXPECT_EQ(Report(cfg_.report)["totals"]["ops"], 12345);
  ASSERT_EQ(Run(cfg_), kExitFinishedWithFailures);
  const nlohmann::json got = Report(cfg_.report);
  EXPECT_EQ(got["run"]["stop_reason"], "iterations");
  EXPECT_EQ(Comparable(got), Comparable(expected));
  EXPECT_EQ(got["run"]["started_at"], r1["run"]["started_at"]);
  ASSERT_EQ(got["soak"]["restarts"].size(), 2u);
  EXPECT_EQ(got["soak"]["restarts"][0]["kind"], "stop");
  EXPECT_EQ(got["soak"]["restarts"][0]["resumed_at_index"], 7000);
  EXPECT_EQ(got["soak"]["restarts"][1]["resumed_at_index"], 12345);
  EXPECT_TRUE(got["soak"]["checkpoint"]["resumed"].get<bool>());
  EXPECT_FALSE(std::filesystem::exists(cfg_.state_dir + "/checkpoint.json"));
  // The operation log is the uninterrupted run's, line for line.
  EXPECT_EQ(ReadAll(cfg_.oplog), ReadAll(whole.oplog));
}

TEST_F(SoakTest, CrashAfterCheckpointRedoesLostOperations) {
  // A checkpoint at 5000, then the process "dies" at 8000 (its report and
  // log tail are garbage): the resumed run redoes 5000..7999 exactly once.
  Config whole = cfg_;
  whole.state_dir = dir_ + "/state-whole";
  whole.report = dir_ + "/whole.json";
  whole.oplog = dir_ + "/whole.jsonl";
  Run(whole);
  StopAt at(4999);
  Run(cfg_, {&at});
  const std::string ckpt = cfg_.state_dir + "/checkpoint.json";
  const std::string saved = ReadAll(ckpt);
  StopAt later(7999);
  Run(cfg_, {&later});  // the ops the dead process did after the checkpoint
  nlohmann::json c = nlohmann::json::parse(saved);
  c["stopped_by"] = "";  // the crash wrote no final checkpoint
  std::ofstream(ckpt) << c.dump();
  ASSERT_EQ(Run(cfg_), kExitFinishedWithFailures);
  const nlohmann::json got = Report(cfg_.report);
  EXPECT_EQ(Comparable(got), Comparable(Report(whole.report)));
  ASSERT_EQ(got["soak"]["restarts"].size(), 1u);  // the 5000 checkpoint's history + this one
  EXPECT_EQ(got["soak"]["restarts"][0]["kind"], "crash");
  EXPECT_EQ(got["soak"]["restarts"][0]["resumed_at_index"], 5000);
  EXPECT_EQ(ReadAll(cfg_.oplog), ReadAll(whole.oplog));
}

// mv ops.jsonl ops.1; kill -HUP; kill -9 after a checkpoint; resume: the
// resumed run cuts the new file back to the checkpoint's length in it, so
// ops.1 followed by ops.jsonl is the uninterrupted run's log, with no torn
// line and no record twice.
TEST_F(SoakTest, ARotatedLogResumesInTheNewFile) {
  Config whole = cfg_;
  whole.state_dir = dir_ + "/state-whole";
  whole.report = dir_ + "/whole.json";
  whole.oplog = dir_ + "/whole.jsonl";
  Run(whole);
  StopAt at(4999);
  Run(cfg_, {&at});
  // The resumed run: rotated at 6000 (the runner's last tick reopens), stopped
  // at 7999 with a checkpoint that counts in the new file.
  class RotateAt : public StopAt {
   public:
    RotateAt(const std::string& log, uint64_t stop_at) : StopAt(stop_at), log_(log) {}
    void OpEnd(const OpRecord& rec) override {
      StopAt::OpEnd(rec);
      if (rec.index == 6000) {
        std::filesystem::rename(log_, log_ + ".1");
        GlobalSoakSignals().reopen = 1;
      }
    }

   private:
    std::string log_;
  } rotate(cfg_.oplog, 7999);
  Run(cfg_, {&rotate});
  EXPECT_EQ(GlobalSoakSignals().reopen, 0);
  const std::string ckpt = cfg_.state_dir + "/checkpoint.json";
  const std::string saved = ReadAll(ckpt);
  StopAt later(8999);
  Run(cfg_, {&later});  // the ops the dead process did after the checkpoint
  nlohmann::json c = nlohmann::json::parse(saved);
  c["stopped_by"] = "";
  std::ofstream(ckpt) << c.dump();
  ASSERT_EQ(Run(cfg_), kExitFinishedWithFailures);
  EXPECT_EQ(Report(cfg_.report)["totals"]["ops"], 20000);
  EXPECT_EQ(ReadAll(cfg_.oplog + ".1") + ReadAll(cfg_.oplog), ReadAll(whole.oplog));
}

// The log the checkpoint counted was emptied (copytruncate) or replaced (a
// rotation): the resume goes on at the end of what is there (issue 29.3:
// refusing kept a service down until --fresh). Every operation from the
// checkpoint on is in the log once, after what was left; no NUL bytes.
TEST_F(SoakTest, AShorterOrReplacedLogIsContinuedOnResume) {
  StopAt at(999);
  Run(cfg_, {&at});
  std::filesystem::resize_file(cfg_.oplog, 0);
  ASSERT_EQ(Run(cfg_), kExitFinishedWithFailures);
  EXPECT_EQ(Report(cfg_.report)["totals"]["ops"], 20000);
  const std::string log = ReadAll(cfg_.oplog);
  EXPECT_EQ(log.find('\0'), std::string::npos);
  std::istringstream lines(log);
  std::string line;
  uint64_t next = 1000;  // stopped after operation 999
  for (; std::getline(lines, line); ++next)
    ASSERT_EQ(nlohmann::json::parse(line)["i"], next) << line;
  EXPECT_EQ(next, 20000u);
  // Another file at the path (rotated in): appended to, not cut.
  StopAt again(500);
  std::filesystem::remove(cfg_.state_dir + "/checkpoint.json");
  Run(cfg_, {&again});
  std::filesystem::rename(cfg_.oplog, cfg_.oplog + ".1");
  std::ofstream(cfg_.oplog) << "{\"rotated\":true}\n";
  ASSERT_EQ(Run(cfg_), kExitFinishedWithFailures);
  EXPECT_EQ(ReadAll(cfg_.oplog).rfind("{\"rotated\":true}\n{\"i\":501,", 0), 0u);
}

// The smt pattern as a soak (issue 35), both methods, 8 simulated CPUs of
// 2 threads, 40 switches. Stopped between two switches and resumed: the
// uninterrupted run's report and log, no switch cut. Stopped inside one
// (threads): that switch counts incomplete, untimed, everything else as
// uninterrupted. Killed, and the machine restored to its start mask before
// the resume (as `run` does on a real one): the run still makes its 40
// switches, the one the restore undid redone or counted incomplete.
TEST_F(SoakTest, SmtSwitchesSurviveStopsAndARestoredMachine) {
  cfg_.pattern = Pattern::kSmt;
  cfg_.smt.switches = 40;
  cfg_.sim.error_rate = 0;
  cfg_.sim.threads_per_core = 2;
  for (const char* method : {"threads", "control"}) {
    SCOPED_TRACE(method);
    cfg_.smt.method = method;
    const bool threads = cfg_.smt.method == "threads";
    const uint64_t writes = threads ? 4 : 1;  // per switch
    std::filesystem::remove_all(dir_);
    Config whole = cfg_;
    whole.state_dir = dir_ + "/state-whole";
    whole.report = dir_ + "/whole.json";
    whole.oplog = dir_ + "/whole.jsonl";
    ASSERT_EQ(Run(whole), kExitOk);
    const nlohmann::json expected = Report(whole.report);
    ASSERT_EQ(expected["totals"]["ops"], 40 * writes);
    ASSERT_EQ(expected["smt"]["incomplete"], 0);

    StopAt boundary(7 * writes - 1);  // after switch 7
    EXPECT_EQ(Run(cfg_, {&boundary}), kExitInterrupted);
    EXPECT_EQ(Report(cfg_.report)["smt"]["incomplete"], 0);  // switch 7 was over
    ASSERT_EQ(Run(cfg_), kExitOk);
    EXPECT_EQ(Comparable(Report(cfg_.report)), Comparable(expected));
    EXPECT_EQ(ReadAll(cfg_.oplog), ReadAll(whole.oplog));

    if (threads) {
      std::filesystem::remove_all(cfg_.state_dir);
      std::filesystem::remove(cfg_.oplog);
      StopAt inside(7 * writes + 1);  // two writes into switch 8 (to on)
      EXPECT_EQ(Run(cfg_, {&inside}), kExitInterrupted);
      EXPECT_EQ(Report(cfg_.report)["smt"]["incomplete"], 1);
      ASSERT_EQ(Run(cfg_), kExitOk);
      nlohmann::json got = Comparable(Report(cfg_.report));
      EXPECT_EQ(got["smt"]["incomplete"], 1);
      EXPECT_EQ(got["smt"]["to"][1]["switches"], 19);
      EXPECT_EQ(got["smt"]["to"][0], expected["smt"]["to"][0]);
      got.erase("smt");
      nlohmann::json want = Comparable(expected);
      want.erase("smt");
      EXPECT_EQ(got, want);
      EXPECT_EQ(ReadAll(cfg_.oplog), ReadAll(whole.oplog));
    }

    // Killed after a checkpoint (none after it), the machine back at its
    // start mask (every thread on). After switch 8 (to on): switch 9 (off)
    // follows. After switch 9's smt/control write: switch 10 (on) has
    // nothing to do and does not count. Two writes into switch 9 (threads):
    // the restore undid them, switch 9 is redone. Always 40 switches.
    for (uint64_t at : {8 * writes - 1, 9 * writes - 1 - (threads ? 2 : 0)}) {
      SCOPED_TRACE(at);
      std::filesystem::remove_all(cfg_.state_dir);
      std::filesystem::remove(cfg_.oplog);
      StopAt stop(at);
      EXPECT_EQ(Run(cfg_, {&stop}), kExitInterrupted);
      const std::string ckpt = cfg_.state_dir + "/checkpoint.json";
      nlohmann::json c = nlohmann::json::parse(ReadAll(ckpt));
      c["stopped_by"] = "";  // died: no final checkpoint of its own
      c["sim"]["online"] = std::vector<int>(8, 1);
      c["sim"]["smt_control"] = "on";
      c["sim"]["smt_threads"] = 2;
      std::ofstream(ckpt) << c.dump();
      ASSERT_EQ(Run(cfg_), kExitOk);
      const nlohmann::json r = Report(cfg_.report);
      EXPECT_EQ(r["run"]["stop_reason"], "schedule_complete");
      EXPECT_EQ(r["soak"]["restarts"][0]["kind"], "crash");
      EXPECT_EQ(r["totals"]["failed"], 0);
      EXPECT_EQ(r["totals"]["readback_mismatches"], 0);
      const nlohmann::json& smt = r["smt"];
      const uint64_t done = smt["to"][0]["switches"].get<uint64_t>() +
                            smt["to"][1]["switches"].get<uint64_t>() +
                            smt["incomplete"].get<uint64_t>();
      EXPECT_EQ(done, 40u) << smt.dump();
      // Switch 9 redone: untimed, incomplete; between switches none is cut.
      EXPECT_EQ(smt["incomplete"], at % writes == writes - 1 ? 0 : 1) << smt.dump();
      for (const nlohmann::json& row : smt["to"])
        EXPECT_EQ(row["cpus_per_switch_min"], 4) << smt.dump();
    }
  }
}

TEST_F(SoakTest, CorruptCheckpointIsRefusedAndMovedAside) {
  std::filesystem::create_directories(cfg_.state_dir);
  std::ofstream(cfg_.state_dir + "/checkpoint.json") << "{\"format\": \"cpuhp-stress-checkp";
  ASSERT_EQ(Run(cfg_), kExitFinishedWithFailures);
  const nlohmann::json r = Report(cfg_.report);
  EXPECT_EQ(r["totals"]["ops"], 20000);  // a fresh run, nothing merged
  EXPECT_FALSE(r["soak"]["checkpoint"]["resumed"].get<bool>());
  ASSERT_EQ(r["soak"]["checkpoint"]["refused"].size(), 1u);
  EXPECT_NE(r["soak"]["checkpoint"]["refused"][0]["reason"].get<std::string>().find("corrupt"),
            std::string::npos);
  const std::string aside = r["soak"]["checkpoint"]["refused"][0]["moved_to"];
  EXPECT_TRUE(std::filesystem::exists(aside));
  EXPECT_EQ(r["soak"]["restarts"].size(), 0u);
}

TEST_F(SoakTest, CheckpointOfAnotherConfigIsRefusedNotMerged) {
  StopAt at(99);
  Run(cfg_, {&at});
  Config other = cfg_;
  other.iterations = 500;
  Run(other);
  const nlohmann::json r = Report(cfg_.report);
  EXPECT_EQ(r["totals"]["ops"], 500);
  ASSERT_EQ(r["soak"]["checkpoint"]["refused"].size(), 1u);
  EXPECT_NE(r["soak"]["checkpoint"]["refused"][0]["reason"].get<std::string>().find(
                "iterations (here 500, checkpoint 20000)"),
            std::string::npos)
      << r["soak"]["checkpoint"]["refused"][0]["reason"];
}

TEST_F(SoakTest, IncompatibleVersionIsRefused) {
  StopAt at(99);
  Run(cfg_, {&at});
  const std::string ckpt = cfg_.state_dir + "/checkpoint.json";
  nlohmann::json c = nlohmann::json::parse(ReadAll(ckpt));
  c["version"] = 99;
  std::ofstream(ckpt) << c.dump();
  Run(cfg_);
  const nlohmann::json r = Report(cfg_.report);
  EXPECT_EQ(r["totals"]["ops"], 20000);
  EXPECT_NE(r["soak"]["checkpoint"]["refused"][0]["reason"].get<std::string>().find(
                "checkpoint version 99, this build reads version 2"),
            std::string::npos);
}

TEST_F(SoakTest, FreshMovesCheckpointAside) {
  StopAt at(99);
  Run(cfg_, {&at});
  Config fresh = cfg_;
  fresh.resume = "never";
  Run(fresh);
  const nlohmann::json r = Report(cfg_.report);
  EXPECT_FALSE(r["soak"]["checkpoint"]["resumed"].get<bool>());
  EXPECT_EQ(r["soak"]["checkpoint"]["refused"].size(), 1u);
}

TEST_F(SoakTest, ReportValidatesAgainstSchema) {
  StopAt at(99);
  Run(cfg_, {&at});
  Run(cfg_);
  std::string cmd = std::string("/usr/bin/python3 ") + CPUHP_SOURCE_DIR +
                    "/tests/validate_report.py " + CPUHP_SOURCE_DIR +
                    "/daemon/report/schema/report.schema.json " + cfg_.report + " > /dev/null";
  int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  if (WEXITSTATUS(rc) == 77)
    GTEST_SKIP() << "python3-jsonschema missing";
  EXPECT_EQ(WEXITSTATUS(rc), 0);
}

TEST_F(SoakTest, Sigusr1WritesInterimReport) {
  class Usr1At : public StopAt {
   public:
    using StopAt::StopAt;
    void OpEnd(const OpRecord& rec) override {
      if (rec.index == 10)
        GlobalSoakSignals().interim = 1;
    }
  } usr1(10);
  cfg_.iterations = 3000;
  cfg_.interval_ns = 100000;  // 0.3 s: a few runner ticks
  Run(cfg_, {&usr1});
  const std::string interim = dir_ + "/report.interim.json";
  ASSERT_TRUE(std::filesystem::exists(interim));
  const nlohmann::json r = Report(interim);
  EXPECT_TRUE(r["interim"].get<bool>());
  EXPECT_TRUE(r["run"]["stop_reason"].is_null());
  EXPECT_GT(r["totals"]["ops"].get<uint64_t>(), 10u);
  EXPECT_LT(r["totals"]["ops"].get<uint64_t>(), 3000u);
  EXPECT_EQ(Report(cfg_.report)["soak"]["interim_reports_written"], 1);
}

// A run given no target (no iterations, no duration) ends only by a signal:
// that is its end, exit 0 (its checkpoint stays: a service restarted resumes).
TEST_F(SoakTest, RunWithoutATargetStoppedBySignalFinished) {
  cfg_.iterations = 0;
  cfg_.sim.error_rate = 0;
  StopAt at(500);
  EXPECT_EQ(Run(cfg_, {&at}), kExitOk);
  EXPECT_EQ(Report(cfg_.report)["run"]["stop_reason"], "signal");
}

TEST(StuckWatchdog, StalledSimWriteIsInTheReport) {
  char tmpl[] = "/tmp/cpuhp-stuck.XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  Config cfg;
  cfg.backend = "sim";
  cfg.iterations = 6;
  cfg.seed = 1;
  cfg.sim.stall_every = 4;
  cfg.sim.stall_ns = 300000000;  // 0.3 s
  cfg.stuck_timeout_ns = 100000000;
  cfg.report = dir + "/r.json";
  cfg.progress = ProgressMode::kNever;
  volatile sig_atomic_t stop = 0;
  std::FILE* out = std::tmpfile();
  // A stuck write is a failure the run found: exit 3, as for a failed write.
  EXPECT_EQ(RunCommand(cfg, &stop, out), kExitFinishedWithFailures);
  std::fclose(out);
  std::ifstream f(cfg.report);
  nlohmann::json r = nlohmann::json::parse(f);
  const nlohmann::json& stuck = r["soak"]["stuck_operations"];
  ASSERT_EQ(stuck.size(), 1u) << stuck;
  EXPECT_EQ(stuck[0]["index"], 3);  // the 4th write
  EXPECT_GE(stuck[0]["detected_after_ns"].get<uint64_t>(), 100000000u);
  EXPECT_GE(stuck[0]["returned_after_ns"].get<uint64_t>(), 300000000u);
  // The simulated state the stalled write waits in, read while it waited.
  const bool online = stuck[0]["dir"] == "online";
  EXPECT_EQ(stuck[0].value("hotplug_state", -1), online ? 83 : 148) << stuck[0];
  EXPECT_EQ(stuck[0].value("hotplug_state_name", ""), online ? "cpu:bringup" : "sched:waitempty");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cpuhp
