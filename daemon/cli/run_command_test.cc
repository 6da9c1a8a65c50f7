// SPDX-License-Identifier: GPL-2.0
// RunCommand end to end over a fake sysfs tree: report written, mask
// restored, state file gone; bad input touches nothing.
#include "cli/run_command.h"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "machine/machine_lock.h"
#include "machine/restore.h"
#include "testing/fake_sysfs.h"
#include "testing/run_command_fixture.h"

namespace cpuhp {
namespace {

TEST_F(CommandsTest, RunWritesAReportAndRestoresTheMask) {
  fs_.Write("cpu3/online", "0\n");
  fs_.Write("online", "0-2\n");
  cfg_.iterations = 20;
  ASSERT_EQ(RunCommand(cfg_, &g_no_stop, out_), kExitOk) << Output();
  nlohmann::json r = Report();
  EXPECT_EQ(r["schema_version"], 1);
  EXPECT_EQ(r["seed"], 7);
  EXPECT_EQ(r["totals"]["ops"], 20);
  EXPECT_EQ(r["run"]["stop_reason"], "iterations");
  EXPECT_EQ(r["cpus"]["selected"], "1-3");
  EXPECT_EQ(r["restore"]["ok"], true);
  EXPECT_EQ(r["process"]["loop_ops"], 20);
  EXPECT_GT(r["process"]["loop_cpu_ns"].get<uint64_t>(), 0u);
  // The starting mask is back: cpu3 offline as it was, the others online.
  EXPECT_EQ(fs_.Online(1), '1');
  EXPECT_EQ(fs_.Online(2), '1');
  EXPECT_EQ(fs_.Online(3), '0');
  EXPECT_FALSE(std::filesystem::exists(cfg_.state_dir + "/state.json"));
  EXPECT_NE(Output().find("offline latency"), std::string::npos) << Output();
  EXPECT_EQ(ReportValidates(), 0);
}

TEST_F(CommandsTest, SameSeedSameOperationLog) {
  cfg_.pattern = Pattern::kRandom;
  cfg_.iterations = 50;
  auto ops = [&](const std::string& name) {
    cfg_.oplog = dir_ + "/" + name;
    EXPECT_EQ(RunCommand(cfg_, &g_no_stop, out_), kExitOk);
    std::ifstream f(cfg_.oplog);
    std::string seq, line;
    int lines = 0;
    while (std::getline(f, line)) {
      nlohmann::json j = nlohmann::json::parse(line);
      seq += j["dir"].get<std::string>() + std::to_string(j["cpu"].get<int>()) + " ";
      ++lines;
    }
    EXPECT_EQ(lines, 50);
    return seq;
  };
  std::string a = ops("a.jsonl");
  EXPECT_EQ(a, ops("b.jsonl"));
  EXPECT_EQ(Report()["config"]["seed"], 7);
}

// A line of a sim run's operation log, read alone (grep, a rotated file, a
// resumed log), still says it is no measurement; a real run's lines do not.
TEST_F(CommandsTest, EveryLineOfASimOperationLogSaysSimulated) {
  cfg_.iterations = 30;
  for (const char* backend : {"sim", "sysfs"}) {
    cfg_.backend = backend;
    cfg_.oplog = dir_ + "/" + backend + ".jsonl";
    ASSERT_EQ(RunCommand(cfg_, &g_no_stop, out_), kExitOk) << Output();
    std::ifstream f(cfg_.oplog);
    int lines = 0, marked = 0;
    for (std::string line; std::getline(f, line); ++lines) {
      const nlohmann::json j = nlohmann::json::parse(line);
      EXPECT_TRUE(j.contains("duration_ns")) << line;  // the fields it always had
      marked += j.value("simulated", false);
    }
    EXPECT_EQ(lines, 30) << backend;
    EXPECT_EQ(marked, backend == std::string("sim") ? 30 : 0) << backend;
  }
}

// The smt pattern on the sim with 2 threads per core: every switch timed
// whole in the report's smt section and the summary, the schema holds.
TEST_F(CommandsTest, SmtPatternTimesEachSwitchOnTheSim) {
  cfg_.backend = "sim";
  cfg_.sim.cpus = 8;
  cfg_.sim.threads_per_core = 2;
  cfg_.pattern = Pattern::kSmt;
  cfg_.smt.switches = 6;
  ASSERT_EQ(RunCommand(cfg_, &g_no_stop, out_), kExitOk) << Output();
  nlohmann::json r = Report();
  EXPECT_EQ(r["run"]["stop_reason"], "schedule_complete");
  EXPECT_EQ(r["cpus"]["selected"], "1,3,5,7");  // every core's second thread
  EXPECT_EQ(r["totals"]["ops"], 24);
  EXPECT_EQ(r["cpus"]["schedule"]["cores"], nlohmann::json({"0-1", "2-3", "4-5", "6-7"}));
  const nlohmann::json& smt = r["smt"];
  EXPECT_EQ(smt["incomplete"], 0);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(smt["to"][i]["mode"], i ? "on" : "off");
    EXPECT_EQ(smt["to"][i]["switches"], 3);
    EXPECT_EQ(smt["to"][i]["cpus_per_switch_min"], 4);
    EXPECT_EQ(smt["to"][i]["cpus_per_switch_max"], 4);
    // Four modeled writes a switch: at least four times the fastest write.
    EXPECT_GE(smt["to"][i]["min_ns"].get<uint64_t>(),
              4 * r["directions"][i ? "online" : "offline"]["min_ns"].get<uint64_t>());
  }
  EXPECT_NE(Output().find("SMT switches (threads method):\n  to off  3 switches"),
            std::string::npos)
      << Output();
  EXPECT_EQ(ReportValidates(), 0);

  // Refused in one line before any write: no SMT, or a CPU list.
  std::ostringstream log;
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));
  cfg_.sim.threads_per_core = 1;
  const int no_smt = RunCommand(cfg_, &g_no_stop, out_);
  cfg_.sim.threads_per_core = 2;
  cfg_.cpus = "1,3";
  const int listed = RunCommand(cfg_, &g_no_stop, out_);
  spdlog::set_default_logger(previous);
  EXPECT_EQ(no_smt, kExitBadInput);
  EXPECT_EQ(listed, kExitBadInput);
  EXPECT_NE(log.str().find("/pattern: smt: smt/control is \"notsupported\""), std::string::npos)
      << log.str();
  EXPECT_NE(log.str().find("/cpus: the smt pattern writes the sibling threads"), std::string::npos)
      << log.str();
}

// Method "control": one smt/control write per switch, cpu -1, the kernel's
// moves read back from every online file; the switch table counts the
// CPUs each write moved, the per-CPU tables stay empty (no one-CPU write),
// the operation log and the report say which writes were switches, the
// verdict passes, and fault injection is refused with it.
TEST_F(CommandsTest, SmtControlMethodWritesSmtControlOnTheSim) {
  cfg_.backend = "sim";
  cfg_.sim.cpus = 8;
  cfg_.sim.threads_per_core = 2;
  cfg_.pattern = Pattern::kSmt;
  cfg_.smt.method = "control";
  cfg_.smt.switches = 6;
  cfg_.oplog = dir_ + "/ops.jsonl";
  ASSERT_EQ(RunCommand(cfg_, &g_no_stop, out_), kExitOk) << Output();
  nlohmann::json r = Report();
  EXPECT_EQ(r["run"]["stop_reason"], "schedule_complete");
  EXPECT_EQ(r["totals"]["ops"], 6);
  EXPECT_EQ(r["totals"]["failed"], 0);
  EXPECT_EQ(r["directions"]["offline"]["count"], 0);
  const nlohmann::json& smt = r["smt"];
  EXPECT_EQ(smt["method"], "control");
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(smt["to"][i]["switches"], 3);
    EXPECT_EQ(smt["to"][i]["cpus_per_switch_min"], 4);
    EXPECT_EQ(smt["to"][i]["cpus_changed"], 12);
  }
  std::ifstream log(cfg_.oplog);
  std::string first;
  std::getline(log, first);
  const nlohmann::json line = nlohmann::json::parse(first);
  EXPECT_EQ(line["cpu"], -1);
  EXPECT_EQ(line["smt_control"], true);
  EXPECT_EQ(line["cpus_changed"], 4);
  EXPECT_EQ(line["smt_switch"], 1);
  EXPECT_NE(Output().find("SMT switches (control method):\n  to off  3 switches"),
            std::string::npos)
      << Output();
  EXPECT_NE(Output().find("none: every write went to smt/control"), std::string::npos);
  EXPECT_EQ(r["restore"]["ok"], true);
  EXPECT_EQ(ReportValidates(), 0);

  cfg_.faults.rate = 0.5;
  EXPECT_EQ(RunCommand(cfg_, &g_no_stop, out_), kExitBadInput);
}

TEST_F(CommandsTest, UnwritableReportDirectoryIsRefusedBeforeAnyOperation) {
  cfg_.report = dir_ + "/missing/dir/report.json";
  cfg_.oplog = dir_ + "/ops.jsonl";
  EXPECT_EQ(RunCommand(cfg_, &g_no_stop, out_), kExitBadInput);
  EXPECT_FALSE(std::filesystem::exists(cfg_.oplog));
  EXPECT_FALSE(std::filesystem::exists(cfg_.state_dir + "/state.json"));
}

TEST_F(CommandsTest, ASecondRunOnTheSameCpusIsRefusedWhateverItsStateDirectory) {
  // Run A, with another state directory, holds the CPUs and has 1-3 offline.
  const std::string records = dir_ + "/run";
  setenv("RUNTIME_DIRECTORY", records.c_str(), 1);
  MachineLock a;
  std::string err;
  ASSERT_TRUE(a.Acquire(fs_.root(), dir_ + "/state-a", records, &err)) << err;
  for (int c = 1; c < 4; ++c)
    fs_.Write("cpu" + std::to_string(c) + "/online", "0\n");
  fs_.Write("online", "0\n");
  cfg_.iterations = 10;
  EXPECT_EQ(RunCommand(cfg_, &g_no_stop, out_), kExitBadInput);
  // B neither recorded A's offline CPUs as its start mask nor touched them.
  EXPECT_FALSE(std::filesystem::exists(cfg_.state_dir + "/state.json"));
  EXPECT_FALSE(ReportExists());
  for (int c = 1; c < 4; ++c)
    EXPECT_EQ(fs_.Online(c), '0');
  // A finishes: B may run.
  for (int c = 1; c < 4; ++c)
    fs_.Write("cpu" + std::to_string(c) + "/online", "1\n");
  fs_.Write("online", "0-3\n");
  a.Release();
  EXPECT_EQ(RunCommand(cfg_, &g_no_stop, out_), kExitOk) << Output();
  unsetenv("RUNTIME_DIRECTORY");
}

TEST_F(CommandsTest, TheWritabilityProbeFollowsNoSymlink) {
  // The old probe name was predictable (.cpuhp-stress-probe.<pid>): a link
  // planted there made root truncate its target.
  std::ofstream(dir_ + "/victim") << "precious\n";
  std::filesystem::create_symlink(dir_ + "/victim",
                                  dir_ + "/.cpuhp-stress-probe." + std::to_string(getpid()));
  cfg_.iterations = 2;
  EXPECT_EQ(RunCommand(cfg_, &g_no_stop, out_), kExitOk) << Output();
  std::ifstream f(dir_ + "/victim");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(f), {}), "precious\n");
}

TEST_F(CommandsTest, InvalidUtf8IsReplacedNotFatal) {
  // A sysfs root (and so a state file, a report) holding a byte that is not
  // UTF-8: json::dump used to throw, before the first operation here.
  const std::string root = dir_ + "/sys\xff";
  std::filesystem::rename(fs_.root(), root);
  cfg_.sysfs_root = root;
  cfg_.iterations = 4;
  EXPECT_EQ(RunCommand(cfg_, &g_no_stop, out_), kExitOk) << Output();
  std::filesystem::rename(root, fs_.root());
  ASSERT_TRUE(ReportExists());
  EXPECT_EQ(Report()["config"]["sysfs_root"], dir_ + "/sys\xef\xbf\xbd");  // U+FFFD
  EXPECT_EQ(Report()["restore"]["ok"], true);
}

// Turns the given paths into directories when the run stops its sources:
// after the output paths were checked, before the report is written.
class MakesDirsOnStop : public TimingSource {
 public:
  explicit MakesDirsOnStop(std::vector<std::string> dirs) : dirs_(std::move(dirs)) {}
  std::string name() const override { return "makes_dirs_on_stop"; }
  bool Start(std::string*) override { return true; }
  void OpBegin(const Operation&, uint64_t) override {}
  void OpEnd(const OpRecord&) override {}
  void Stop() override {
    for (const std::string& d : dirs_)
      std::filesystem::create_directories(d + "/x");
  }
  nlohmann::json ReportJson() const override { return nlohmann::json::object(); }

 private:
  std::vector<std::string> dirs_;
};

TEST_F(CommandsTest, AFailedFallbackReportIsLogged) {
  // The report path and the fallback in the state directory both become
  // directories during the run: the up-front check passed, both renames fail.
  cfg_.report = dir_ + "/adir";
  const std::string fallback =
      cfg_.state_dir + "/report-unsaved-" + std::to_string(getpid()) + ".json";
  MakesDirsOnStop saboteur({cfg_.report, fallback});
  std::ostringstream log;
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));
  cfg_.iterations = 2;
  const int rc = RunCommand(cfg_, &g_no_stop, out_, {&saboteur});
  spdlog::set_default_logger(previous);
  EXPECT_EQ(rc, kExitFailed);
  EXPECT_NE(log.str().find(fallback + ": rename: "), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("the report is lost"), std::string::npos) << log.str();
  EXPECT_EQ(fs_.Online(1), '1');
}

TEST_F(CommandsTest, RunRestoresAStaleStateBeforeStarting) {
  fs_.Write("cpu2/online", "0\n");
  {
    StateDir d(cfg_.state_dir);
    std::string err;
    ASSERT_TRUE(d.Lock(&err));
    ASSERT_TRUE(d.Write({999999, ReadBootId(), "", fs_.root(), {0, 1, 2, 3}, {1, 2, 3}}, &err));
  }
  cfg_.iterations = 2;
  EXPECT_EQ(RunCommand(cfg_, &g_no_stop, out_), kExitOk);
  EXPECT_NE(Output().find("restored online mask 0-3"), std::string::npos);
  EXPECT_EQ(Report()["cpus"]["topology"]["online"], "0-3");
}

TEST_F(CommandsTest, SimBackendRunsWithoutSysfs) {
  cfg_.backend = "sim";
  cfg_.sysfs_root = "/nonexistent";
  cfg_.pattern = Pattern::kSweep;
  cfg_.sweep.cycles_per_level = 10;
  cfg_.iterations = 0;
  ASSERT_EQ(RunCommand(cfg_, &g_no_stop, out_), kExitOk) << Output();
  nlohmann::json r = Report();
  EXPECT_EQ(r["run"]["stop_reason"], "schedule_complete");
  EXPECT_EQ(r["cpus"]["schedule"]["levels"], nlohmann::json({2, 4, 8}));
  EXPECT_GE(r["per_online_count"]["offline"].size(), 3u);
  EXPECT_EQ(ReportValidates(), 0);
}

// A kernel-side source stand-in: counts what it is shown.
class CountingSource : public TimingSource {
 public:
  CountingSource(std::string name, std::string unavailable)
      : name_(std::move(name)), unavailable_(std::move(unavailable)) {}
  std::string name() const override { return name_; }
  bool Start(std::string* why) override {
    *why = unavailable_;
    return unavailable_.empty();
  }
  void OpBegin(const Operation&, uint64_t) override { ++begins_; }
  void OpEnd(const OpRecord& rec) override { ends_ += rec.err == 0; }
  void Stop() override { stopped_ = true; }
  nlohmann::json ReportJson() const override {
    return {{"begins", begins_}, {"ends_ok", ends_}, {"stopped", stopped_}};
  }

 private:
  std::string name_, unavailable_;
  int begins_ = 0, ends_ = 0;
  bool stopped_ = false;
};

TEST_F(CommandsTest, TimingSourcesJoinTheRunOrSayWhyNot) {
  CountingSource ok("counting", "");
  CountingSource missing("other", "/dev/other: No such file or directory");
  cfg_.iterations = 10;
  ASSERT_EQ(RunCommand(cfg_, &g_no_stop, out_, {&ok, &missing}), kExitOk) << Output();
  nlohmann::json ts = Report()["timing_sources"];
  EXPECT_EQ(ts["write"]["status"], "ok");
  EXPECT_EQ(ts["counting"],
            nlohmann::json({{"status", "ok"}, {"begins", 10}, {"ends_ok", 10}, {"stopped", true}}));
  EXPECT_EQ(ts["other"], nlohmann::json({{"status", "unavailable"},
                                         {"reason", "/dev/other: No such file or directory"}}));
  // The module is not loaded here: the kmod source says so and why.
  EXPECT_EQ(ts["kmod"]["status"], "unavailable");
  EXPECT_NE(ts["kmod"]["reason"].get<std::string>().find("/dev/cpuhp_probe"), std::string::npos);
  EXPECT_EQ(ReportValidates(), 0);
}

// Throws after the first offline: the loop dies with a CPU offline.
class ThrowingSource : public CountingSource {
 public:
  ThrowingSource() : CountingSource("throwing", "") {}
  void OpEnd(const OpRecord& rec) override {
    if (rec.dir == Direction::kOffline)
      throw std::runtime_error("source blew up");
  }
};

TEST_F(CommandsTest, AnExceptionMidRunStillRestoresAndReports) {
  ThrowingSource bad;
  cfg_.iterations = 10;
  EXPECT_EQ(RunCommand(cfg_, &g_no_stop, out_, {&bad}), kExitFailed);
  EXPECT_EQ(fs_.Online(1), '1');
  nlohmann::json r = Report();
  EXPECT_EQ(r["run"]["stop_reason"], "fatal");
  EXPECT_EQ(r["restore"]["writes"], 1);
  EXPECT_FALSE(std::filesystem::exists(cfg_.state_dir + "/state.json"));
}

// Throws when stopped, after the loop: outside the loop's own catch.
class ThrowsOnStop : public CountingSource {
 public:
  ThrowsOnStop() : CountingSource("throws_on_stop", "") {}
  void Stop() override { throw std::runtime_error("stop blew up"); }
};

TEST_F(CommandsTest, AnExceptionAfterTheLoopStillPutsTheMachineBackAndReports) {
  ThrowsOnStop bad;
  cfg_.pattern = Pattern::kAll;
  cfg_.iterations = 2;  // cpu1 and cpu2 offline when the loop ends
  EXPECT_EQ(RunCommand(cfg_, &g_no_stop, out_, {&bad}), kExitFailed);
  // The machine is put back, and only then the state forgotten.
  EXPECT_EQ(fs_.Online(1), '1');
  EXPECT_EQ(fs_.Online(2), '1');
  EXPECT_FALSE(std::filesystem::exists(cfg_.state_dir + "/state.json"));
  // A report still says what was done and how the run ended.
  nlohmann::json r = Report();
  EXPECT_EQ(r["run"]["stop_reason"], "fatal");
  EXPECT_EQ(r["run"]["stop_message"], "internal error: stop blew up");
  EXPECT_EQ(r["totals"]["ops"], 2);
  EXPECT_EQ(r["restore"]["ok"], true);
  EXPECT_EQ(r["restore"]["writes"], 2);
  EXPECT_EQ(ReportValidates(), 0);
}

TEST_F(CommandsTest, TracepointsSayWhyUnavailableOrStayOff) {
  cfg_.iterations = 2;
  ASSERT_EQ(RunCommand(cfg_, &g_no_stop, out_), kExitOk) << Output();
  // The fake tree has no hotplug/states: nothing to name states with.
  EXPECT_EQ(Report()["timing_sources"]["tracepoints"],
            nlohmann::json({{"status", "unavailable"},
                            {"reason", fs_.root() + "/hotplug/states: cannot read: No such file or "
                                                    "directory"}}));
  EXPECT_NE(Output().find("kernel states (tracepoints): unavailable: "), std::string::npos);
  EXPECT_EQ(ReportValidates(), 0);
  cfg_.tracepoints = false;
  ASSERT_EQ(RunCommand(cfg_, &g_no_stop, out_), kExitOk) << Output();
  EXPECT_FALSE(Report()["timing_sources"].contains("tracepoints"));
}

}  // namespace
}  // namespace cpuhp
