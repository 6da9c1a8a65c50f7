// SPDX-License-Identifier: GPL-2.0
#include "report/report.h"

#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

namespace cpuhp {
namespace internal {
// host_info.cc; not in report.h because only this test needs it.
std::string CpuModelFromCpuinfo(std::string_view cpuinfo);
}  // namespace internal

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/cpuhp-report-test.XXXXXX";
    path_ = mkdtemp(tmpl) ? tmpl : "";
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::set<std::string> DirEntries(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir))
    names.insert(e.path().filename().string());
  return names;
}

OpRecord Rec(uint64_t i, int cpu, Direction dir, uint64_t duration_ns, int err, int online_before,
             bool readback_ok = true) {
  return OpRecord{i,           cpu, dir,           1'000'000'000 + i * 10'000'000,
                  duration_ns, err, online_before, readback_ok};
}

// A 4-CPU machine sweeping cpu3 down from 4 online CPUs to 2 and back, with
// latency growing by 150 us (offline) and 100 us (online) per online CPU, as
// in the stop_machine() table; cpu2 fails three offline writes with EBUSY and
// one online write does not read back.
RunStats SyntheticStats(std::vector<OpRecord>* failures) {
  RunStats stats(4);
  uint64_t i = 0;
  for (int online = 2; online <= 4; ++online) {
    for (uint64_t k = 0; k < 50; ++k) {
      stats.Add(
          Rec(i++, 3, Direction::kOffline, 2'000'000 + online * 150'000 + k * 1'000, 0, online));
      stats.Add(
          Rec(i++, 3, Direction::kOnline, 1'000'000 + online * 100'000 + k * 1'000, 0, online - 1));
    }
  }
  for (int k = 0; k < 3; ++k) {
    failures->push_back(Rec(i++, 2, Direction::kOffline, 40'000, EBUSY, 4));
    stats.Add(failures->back());
  }
  failures->push_back(Rec(i++, 3, Direction::kOnline, 1'300'000, 0, 3, false));
  stats.Add(failures->back());
  return stats;
}

Topology FourCpus() {
  Topology t;
  t.present = t.online = {0, 1, 2, 3};
  t.possible = {0, 1, 2, 3, 4, 5, 6, 7};
  t.hotpluggable = {1, 2, 3};
  t.has_isolated_file = true;  // present but empty, as on most machines
  t.max_cpu = 7;
  return t;
}

ReportInputs Inputs(const RunStats* stats, const std::vector<OpRecord>& failures) {
  ReportInputs in;
  in.config = {{"pattern", "sweep"}, {"cpus", "1-3"}, {"backend", "sysfs"}, {"seed", 42}};
  in.host = CollectHostInfo(FourCpus());
  in.cpus = {{"selected", "1-3"},
             {"backend", "/sys/devices/system/cpu"},
             {"topology",
              {{"present", "0-3"},
               {"possible", "0-7"},
               {"online", "0-3"},
               {"hotpluggable", "1-3"},
               {"isolated", ""},
               {"nohz_full", nullptr}}},
             {"schedule", {{"victim", 3}, {"levels", {2, 3, 4}}, {"cycles_per_level", 50}}}};
  in.seed = UINT64_MAX;  // must survive as an exact integer
  in.started_at = "2026-11-30T05:07:45.123Z";
  in.ended_at = "2026-11-30T05:07:46.623Z";
  in.elapsed_ns = 1'500'000'000;
  in.stop_reason = "schedule_complete";
  in.stats = stats;
  in.first_errors = failures;
  in.first_errors_dropped = 7;
  in.timing_sources = {{"write", {{"status", "ok"}, {"clock", "CLOCK_MONOTONIC"}}},
                       {"tracepoints", {{"status", "unavailable"}, {"reason", "no tracefs"}}}};
  in.restore = {{"ok", true}, {"writes", 1}, {"failures", json::array()}, {"mask", "0-3"}};
  in.max_rss_kib = 4096;
  in.loop_cpu_ns = 7000000;
  in.loop_ops = 304;
  return in;
}

TEST(OpRecordToJsonTest, SuccessCarriesNoErrorName) {
  json j = OpRecordToJson(Rec(5, 3, Direction::kOnline, 1'234'567, 0, 2));
  EXPECT_EQ(j, json::parse(R"({"i": 5, "cpu": 3, "dir": "online", "start_ns": 1050000000,
      "duration_ns": 1234567, "errno": 0, "online_before": 2, "readback_ok": true})"));
}

TEST(OpRecordToJsonTest, FailureNamesTheErrno) {
  json j = OpRecordToJson(Rec(0, 1, Direction::kOffline, 40'000, EBUSY, 2, false));
  EXPECT_EQ(j["errno"], 16);
  EXPECT_EQ(j["error"], "EBUSY");
  EXPECT_EQ(j["dir"], "offline");
  EXPECT_EQ(j["readback_ok"], false);
  EXPECT_EQ(OpRecordToJson(Rec(0, 1, Direction::kOffline, 1, 4095, 2))["error"], "E4095");
}

TEST(BuildReportTest, SectionsAndRunFacts) {
  std::vector<OpRecord> failures;
  RunStats stats = SyntheticStats(&failures);
  json r = BuildReport(Inputs(&stats, failures));

  std::set<std::string> keys;
  for (const auto& [k, v] : r.items())
    keys.insert(k);
  EXPECT_EQ(keys,
            (std::set<std::string>{
                "schema_version", "tool", "interim", "host", "config", "seed", "cpus", "run",
                "totals", "directions", "per_cpu", "per_online_count", "errors", "first_errors",
                "first_errors_dropped", "timing_sources", "restore", "process", "timeline"}));
  EXPECT_EQ(r["schema_version"], kReportSchemaVersion);
  EXPECT_EQ(r["tool"]["name"], "cpuhp-stress");
  EXPECT_EQ(r["interim"], false);
  EXPECT_EQ(r["seed"].get<uint64_t>(), UINT64_MAX);
  EXPECT_EQ(r["run"], json::parse(R"({"started_at": "2026-11-30T05:07:45.123Z",
      "ended_at": "2026-11-30T05:07:46.623Z", "elapsed_ns": 1500000000,
      "stop_reason": "schedule_complete", "stop_message": null, "clock": "CLOCK_MONOTONIC",
      "simulated_elapsed_ns": null,
      "histogram": {"sub_buckets_per_octave": 128, "max_relative_error": 0.00390625}})"));

  json sections = stats.ToJson();
  for (const char* k : {"totals", "directions", "per_cpu", "per_online_count", "errors"})
    EXPECT_EQ(r[k], sections[k]) << k;
  EXPECT_EQ(r["totals"]["ops"], 304);
  EXPECT_EQ(r["per_online_count"]["offline"].size(), 3u);

  ASSERT_EQ(r["first_errors"].size(), 4u);
  EXPECT_EQ(r["first_errors"][0]["error"], "EBUSY");
  EXPECT_EQ(r["first_errors"][3]["readback_ok"], false);
  EXPECT_FALSE(r["first_errors"][3].contains("error"));
  EXPECT_EQ(r["first_errors_dropped"], 7);
  EXPECT_EQ(r["restore"]["mask"], "0-3");
  EXPECT_EQ(r["process"]["max_rss_kib"], 4096);
  EXPECT_EQ(r["process"]["loop_cpu_ns"], 7000000);
  EXPECT_EQ(r["process"]["loop_ops"], 304);
}

TEST(BuildReportTest, InterimHasNoStopReasonNorRestore) {
  RunStats stats;
  ReportInputs in = Inputs(&stats, {});
  in.interim = true;
  in.stop_reason.clear();
  in.restore = nullptr;
  json r = BuildReport(in);
  EXPECT_EQ(r["interim"], true);
  EXPECT_TRUE(r["run"]["stop_reason"].is_null());
  EXPECT_TRUE(r["restore"].is_null());
  EXPECT_EQ(r["totals"]["ops"], 0);
}

TEST(BuildReportTest, SimBackendDoesNotClaimTheMonotonicClock) {
  ReportInputs in = Inputs(nullptr, {});
  in.config["backend"] = "sim";
  json r = BuildReport(in);
  EXPECT_EQ(r["run"]["clock"], "simulated");
  EXPECT_EQ(r["directions"]["offline"]["count"], 0);  // no stats: empty sections, no crash
}

TEST(CollectHostInfoTest, CpuCountsComeFromTheTopology) {
  json h = CollectHostInfo(FourCpus());
  EXPECT_EQ(h["cpus"], json::parse(R"({"present": 4, "possible": 8, "online_at_start": 4,
      "hotpluggable": 3, "present_list": "0-3", "isolated": "", "nohz_full": null})"));
  struct utsname u;
  ASSERT_EQ(uname(&u), 0);
  EXPECT_EQ(h["kernel_release"], u.release);
  EXPECT_EQ(h["arch"], u.machine);
  EXPECT_FALSE(h["cpu_model"].get<std::string>().empty());
  std::string boot_id = ReadFile("/proc/sys/kernel/random/boot_id");
  if (!boot_id.empty()) {
    EXPECT_EQ(h["boot_id"].get<std::string>() + "\n", boot_id);
  }
  std::string cmdline = ReadFile("/proc/cmdline");
  if (!cmdline.empty()) {
    EXPECT_EQ(h["kernel_cmdline"].get<std::string>() + "\n", cmdline);
  }
}

TEST(CollectHostInfoTest, CpuModelOnEachArchitecture) {
  using internal::CpuModelFromCpuinfo;
  EXPECT_EQ(CpuModelFromCpuinfo("processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n"
                                "model\t\t: 85\nmodel name\t: Intel(R) Xeon(R) Gold 6148 CPU\n"
                                "cpu MHz\t\t: 2400.000\n"),
            "Intel(R) Xeon(R) Gold 6148 CPU");
  EXPECT_EQ(CpuModelFromCpuinfo("processor\t: 0\ncpu\t\t: POWER9 (raw), altivec supported\n"
                                "clock\t\t: 2900.000000MHz\n"),
            "POWER9 (raw), altivec supported");
  EXPECT_EQ(CpuModelFromCpuinfo("processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd\n"
                                "CPU implementer\t: 0x41\nCPU architecture: 8\n"
                                "CPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n"),
            "CPU implementer 0x41 part 0xd0c");
  EXPECT_EQ(CpuModelFromCpuinfo("processor\t: 0\nBogoMIPS\t: 38.40\nHardware\t: BCM2835\n"),
            "BCM2835");
  // "cpu MHz" and "cpu family" are not "cpu".
  EXPECT_EQ(CpuModelFromCpuinfo("cpu family\t: 6\ncpu MHz\t\t: 2400.000\n"), "unknown");
  EXPECT_EQ(CpuModelFromCpuinfo(""), "unknown");
}

TEST(WriteFileAtomicTest, CreatesThenReplacesLeavingNoTempFile) {
  TempDir dir;
  const std::string path = dir.path() + "/report.json";
  std::string err;
  ASSERT_TRUE(WriteFileAtomic(path, "first\n", &err)) << err;
  EXPECT_EQ(ReadFile(path), "first\n");
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  mode_t mask = umask(0);
  umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0644u & ~mask);
  ASSERT_TRUE(WriteFileAtomic(path, "second\n", &err)) << err;
  EXPECT_EQ(ReadFile(path), "second\n");
  EXPECT_EQ(DirEntries(dir.path()), std::set<std::string>{"report.json"});
}

TEST(WriteFileAtomicTest, ReplacesATempFileLeftByACrashWithOurPid) {
  TempDir dir;
  const std::string path = dir.path() + "/report.json";
  std::ofstream(path + ".tmp." + std::to_string(getpid())) << "half a report";
  std::string err;
  ASSERT_TRUE(WriteFileAtomic(path, "{}\n", &err)) << err;
  EXPECT_EQ(ReadFile(path), "{}\n");
  EXPECT_EQ(DirEntries(dir.path()), std::set<std::string>{"report.json"});
}

TEST(WriteFileAtomicTest, MissingDirectoryNamesPathAndCall) {
  TempDir dir;
  const std::string path = dir.path() + "/no-such-dir/report.json";
  std::string err;
  EXPECT_FALSE(WriteFileAtomic(path, "x", &err));
  EXPECT_EQ(err, path + ": open: No such file or directory");
}

TEST(WriteFileAtomicTest, ParentIsARegularFile) {
  TempDir dir;
  std::ofstream(dir.path() + "/file") << "x";
  const std::string path = dir.path() + "/file/report.json";
  std::string err;
  EXPECT_FALSE(WriteFileAtomic(path, "x", &err));
  EXPECT_EQ(err, path + ": open: Not a directory");
}

TEST(WriteFileAtomicTest, ProcRefusesNewFilesEvenToRoot) {
  const std::string path = "/proc/cpuhp-report-test.json";
  std::string err;
  EXPECT_FALSE(WriteFileAtomic(path, "x", &err));
  EXPECT_EQ(err.rfind(path + ": open: ", 0), 0u) << err;
}

TEST(WriteFileAtomicTest, ReadOnlyDirectory) {
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0500), 0);
  std::string probe = dir.path() + "/probe";
  if (std::ofstream(probe)) {
    chmod(dir.path().c_str(), 0700);
    GTEST_SKIP() << "permissions do not apply (running as root or with CAP_DAC_OVERRIDE); "
                    "ProcRefusesNewFilesEvenToRoot covers the failure path";
  }
  const std::string path = dir.path() + "/report.json";
  std::string err;
  EXPECT_FALSE(WriteFileAtomic(path, "x", &err));
  EXPECT_EQ(err, path + ": open: Permission denied");
  chmod(dir.path().c_str(), 0700);
}

// A 16 KiB tmpfs: a report that does not fit fails with ENOSPC mid-write.
class FullDiskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0)
      GTEST_SKIP() << "mounting a tiny tmpfs needs root";
    if (mount("tmpfs", dir_.path().c_str(), "tmpfs", 0, "size=16k") != 0)
      GTEST_SKIP() << "mount -t tmpfs -o size=16k failed: " << strerror(errno);
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) {
      EXPECT_EQ(umount(dir_.path().c_str()), 0) << strerror(errno);
    }
  }
  TempDir dir_;
  bool mounted_ = false;
};

TEST_F(FullDiskTest, FailedReplaceKeepsThePreviousReport) {
  const std::string path = dir_.path() + "/report.json";
  std::string err;
  ASSERT_TRUE(WriteFileAtomic(path, "previous report\n", &err)) << err;
  EXPECT_FALSE(WriteFileAtomic(path, std::string(64 * 1024, 'x'), &err));
  EXPECT_EQ(err, path + ": write: No space left on device");
  EXPECT_EQ(ReadFile(path), "previous report\n");
  EXPECT_EQ(DirEntries(dir_.path()), std::set<std::string>{"report.json"});
}

json Summary(uint64_t count, uint64_t p50_ns, uint64_t p99_ns, uint64_t max_ns,
             double mean_ns = 0.0, double stddev_ns = 0.0) {
  return {{"count", count},     {"min_ns", 0},        {"max_ns", max_ns},
          {"p50_ns", p50_ns},   {"p90_ns", 0},        {"p99_ns", p99_ns},
          {"p99_9_ns", max_ns}, {"mean_ns", mean_ns}, {"stddev_ns", stddev_ns}};
}

json Level(int online_cpus, json s) {
  s["online_cpus"] = online_cpus;
  return s;
}

TEST(HumanSummaryTest, TablePerDirectionLikeTheStopMachineSeries) {
  json r = {
      {"interim", false},
      {"host", {{"kernel_release", "6.12.9-arm64"}, {"arch", "aarch64"}}},
      {"cpus", {{"selected", "1-3"}, {"backend", "sysfs"}}},
      {"config", {{"pattern", "roundrobin"}}},
      {"seed", 7},
      {"run", {{"elapsed_ns", 16'864'211'077}, {"stop_reason", "iterations"}}},
      {"totals", {{"ops", 203}, {"ok", 200}, {"failed", 3}, {"readback_mismatches", 0}}},
      {"directions",
       {{"offline", Summary(100, 4'500'000, 7'766'016, 9'871'120, 4'813'000.4, 1'250'000)},
        {"online", Summary(100, 1'314'816, 2'588'672, 3'390'004, 1'400'000, 300'000)}}},
      {"per_online_count",
       {{"offline", json::array({Level(3, Summary(40, 5'001'000, 6'000'000, 7'000'000)),
                                 Level(2, Summary(60, 4'112'384, 7'766'016, 9'871'120))})},
        {"online", json::array({Level(1, Summary(100, 1'314'816, 2'588'672, 3'390'004))})}}},
      {"errors",
       {{"by_errno", json::array({json{{"errno", 16}, {"name", "EBUSY"}, {"count", 3}}})}}},
      {"restore", {{"ok", true}, {"writes", 0}, {"failures", json::array()}, {"mask", "0-3"}}}};
  EXPECT_EQ(HumanSummary(r),
            "kernel 6.12.9-arm64 aarch64, CPUs 1-3, pattern roundrobin, seed 7, backend sysfs\n"
            "203 ops, 200 ok, 3 failed in 16.864 s (12.0 ops/s), stop reason: iterations\n"
            "\n"
            "offline latency (ms), by online CPUs before the write\n"
            "  online before      ops     mean   stddev      p50      p99      max\n"
            "              2       60    0.000    0.000    4.112    7.766    9.871\n"
            "              3       40    0.000    0.000    5.001    6.000    7.000\n"
            "            all      100    4.813    1.250    4.500    7.766    9.871\n"
            "\n"
            "online latency (ms), by online CPUs before the write\n"
            "  online before      ops     mean   stddev      p50      p99      max\n"
            "              1      100    0.000    0.000    1.315    2.589    3.390\n"
            "            all      100    1.400    0.300    1.315    2.589    3.390\n"
            "\n"
            "errors\n"
            "  EBUSY (errno 16): 3 ops\n"
            "\n"
            "restore: ok (0 writes, online CPUs 0-3)\n");
}

// A hand-edited report with negative counts: read as 0, not as 2^64 - n.
TEST(HumanSummaryTest, NegativeCountsReadAsZero) {
  json r = {{"run", {{"elapsed_ns", -1}, {"stop_reason", "iterations"}}},
            {"totals", {{"ops", -5}, {"ok", -1}, {"failed", 3}}}};
  const std::string s = HumanSummary(r);
  const size_t second = s.find('\n') + 1;
  EXPECT_EQ(s.substr(0, second), "kernel ?, CPUs ?, pattern ?, seed ?, backend ?\n");
  EXPECT_EQ(s.substr(second, s.find('\n', second) - second),
            "0 ops, 0 ok, 3 failed in 0.000 s (- ops/s), stop reason: iterations");
}

TEST(HumanSummaryTest, InterimEmptyRunAndFailedRestore) {
  json r = {
      {"interim", true},
      {"run", {{"elapsed_ns", 0}, {"stop_reason", nullptr}}},
      {"totals", {{"ops", 2}, {"ok", 2}, {"failed", 0}, {"readback_mismatches", 1}}},
      {"directions",
       {{"offline", Summary(2, 4'000'000, 4'000'000, 4'000'000)}, {"online", Summary(0, 0, 0, 0)}}},
      {"per_online_count",
       {{"offline", json::array({Level(4, Summary(2, 4'000'000, 4'000'000, 4'000'000))})}}},
      {"restore",
       {{"ok", false},
        {"writes", 2},
        {"failures", json::array({"cpu3 online: EBUSY"})},
        {"mask", "0-3"}}}};
  EXPECT_EQ(HumanSummary(r),
            "kernel ?, CPUs ?, pattern ?, seed ?, backend ?\n"
            "interim: 2 ops, 2 ok, 0 failed in 0.000 s (- ops/s), stop reason: still running\n"
            "\n"
            "offline latency (ms), by online CPUs before the write\n"
            "  online before      ops     mean   stddev      p50      p99      max\n"
            "              4        2    0.000    0.000    4.000    4.000    4.000\n"
            "            all        2    0.000    0.000    4.000    4.000    4.000\n"
            "\n"
            "online latency (ms), by online CPUs before the write\n"
            "  no successful operations\n"
            "\n"
            "readback mismatches: 1 ops\n"
            "\n"
            "restore: FAILED (2 writes, online CPUs 0-3)\n"
            "  cpu3 online: EBUSY\n");
  EXPECT_NE(HumanSummary(json::object()).find("restore: not run"), std::string::npos);
  EXPECT_NE(HumanSummary(json()).find("0 ops"), std::string::npos);  // never throws
}

// The report BuildReport writes is what the schema describes: validated with
// the same script CI runs on real reports.
class ReportSchemaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("/usr/bin/python3 -c 'import jsonschema' >/dev/null 2>&1") != 0)
      GTEST_SKIP() << "/usr/bin/python3 cannot import jsonschema (apt install python3-jsonschema)";
  }
  // Exit status of tests/validate_report.py on `report` written to a file.
  int Validate(const json& report, const std::string& name) {
    const std::string path = dir_.path() + "/" + name;
    std::string err;
    EXPECT_TRUE(WriteFileAtomic(path, report.dump(2) + "\n", &err)) << err;
    std::string cmd = "/usr/bin/python3 " CPUHP_SOURCE_DIR "/tests/validate_report.py " +
                      std::string(CPUHP_SOURCE_DIR "/daemon/report/schema/report.schema.json ") +
                      path;
    int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  TempDir dir_;
};

TEST_F(ReportSchemaTest, FinalReportFromSyntheticRecordsIsValid) {
  std::vector<OpRecord> failures;
  RunStats stats = SyntheticStats(&failures);
  EXPECT_EQ(Validate(BuildReport(Inputs(&stats, failures)), "final.json"), 0);
}

TEST_F(ReportSchemaTest, InterimReportIsValid) {
  std::vector<OpRecord> failures;
  RunStats stats = SyntheticStats(&failures);
  ReportInputs in = Inputs(&stats, failures);
  in.interim = true;
  in.stop_reason.clear();
  in.restore = nullptr;
  EXPECT_EQ(Validate(BuildReport(in), "interim.json"), 0);
}

TEST_F(ReportSchemaTest, DriftIsCaught) {
  std::vector<OpRecord> failures;
  RunStats stats = SyntheticStats(&failures);
  json r = BuildReport(Inputs(&stats, failures));
  r["directions"]["offline"]["p95_ns"] = 1;
  EXPECT_EQ(Validate(r, "drift.json"), 1);
}

}  // namespace
}  // namespace cpuhp
