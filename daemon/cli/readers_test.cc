// SPDX-License-Identifier: GPL-2.0
// The readers of reports (compare, report), checkpoints and sysfs CPU lists
// share json_file.h's reading: bounded size, line and column in JSON errors,
// one line naming the file.
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "machine/cpu_control.h"
#include "report/compare.h"
#include "report/compare_input.h"
#include "report/report.h"
#include "report/report_formats.h"
#include "soak/checkpoint.h"
#include "testing/fake_sysfs.h"
#include "testing/synthetic_report.h"
#include "util/json_file.h"

namespace cpuhp {
namespace {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/cpuhp-readers.XXXXXX";
    root_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(root_); }
  std::string Write(const std::string& name, const std::string& text) const {
    std::string path = root_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

 private:
  std::string root_;
};

TEST(ReportReaderTest, ErrorsAreOneLineWithLineAndColumn) {
  TempDir d;
  nlohmann::json out;
  std::string err;
  const std::string garbage = d.Write("garbage.json", "{not json");
  EXPECT_FALSE(LoadReport(garbage, &out, &err));
  EXPECT_EQ(err, garbage +
                     ": invalid JSON at line 1, column 3: invalid literal; expected string "
                     "literal");
  const std::string cut = d.Write("cut.json", "{\"schema_version\": 1,\n \"directions\": {");
  EXPECT_FALSE(LoadReport(cut, &out, &err));
  EXPECT_EQ(err, cut +
                     ": invalid JSON at line 2, column 17: unexpected end of input; expected "
                     "string literal");
  EXPECT_FALSE(LoadReport(d.Write("deep.json", std::string(100, '[')), &out, &err));
  EXPECT_NE(err.find("deep.json: invalid JSON at line 1, column 65: nested deeper than 64 levels"),
            std::string::npos)
      << err;
  EXPECT_FALSE(LoadReport("/nonexistent/r.json", &out, &err));
  EXPECT_EQ(err, "/nonexistent/r.json: cannot read: No such file or directory");
  const std::string dir_path = d.Write("x", "") + "-dir";
  std::filesystem::create_directory(dir_path);
  EXPECT_FALSE(LoadReport(dir_path, &out, &err));
  EXPECT_EQ(err, dir_path + ": not a regular file");
}

TEST(ReportReaderTest, ChecksTheShapeAndAcceptsAReport) {
  nlohmann::json out;
  std::string err;
  EXPECT_FALSE(ParseReport("[]", "a.json", &out, &err));
  EXPECT_EQ(err, "a.json: not a cpuhp-stress report (no schema_version)");
  EXPECT_FALSE(ParseReport(R"({"schema_version": "1"})", "a.json", &out, &err));
  EXPECT_EQ(err, "a.json: schema_version \"1\", this cpuhp-stress reads 1");
  EXPECT_FALSE(ParseReport(R"({"schema_version": 1, "directions": {}, "totals": {}})", "a.json",
                           &out, &err));
  EXPECT_EQ(err, "a.json: per_online_count: missing or not an object");
  const nlohmann::json report = SyntheticReport(SyntheticSpec());
  ASSERT_TRUE(ParseReport(report.dump(), "a.json", &out, &err)) << err;
  EXPECT_EQ(out, report);
}

TEST(CheckpointReaderTest, CorruptJsonNamesTheFileAndThePlace) {
  TempDir d;
  Checkpoint c;
  std::string err;
  const std::string path =
      d.Write("checkpoint.json", "{\"format\": \"cpuhp-stress-checkpoint\",\n");
  EXPECT_FALSE(ReadCheckpoint(path, &c, &err));
  EXPECT_EQ(err, path +
                     ": corrupt checkpoint: invalid JSON at line 2, column 1: unexpected end of "
                     "input; expected string literal");
  EXPECT_FALSE(ReadCheckpoint(d.Write("bin.json", std::string("\x7f"
                                                              "ELF\x01\x00",
                                                              6)),
                              &c, &err));
  EXPECT_NE(err.find("bin.json: corrupt checkpoint: invalid JSON at line 1, column 1"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find('\n'), std::string::npos);
  EXPECT_FALSE(ReadCheckpoint(d.Write("other.json", "{}"), &c, &err));
  EXPECT_NE(err.find("other.json: not a cpuhp-stress checkpoint"), std::string::npos) << err;
  EXPECT_FALSE(ReadCheckpoint("/nonexistent/checkpoint.json", &c, &err));
  EXPECT_EQ(err, "/nonexistent/checkpoint.json: cannot read: No such file or directory");

  Checkpoint good;
  good.identity = {{"pattern", "all"}};
  good.seed = 7;
  const std::string ok = d.Write("good.json", CheckpointToJson(good).dump());
  ASSERT_TRUE(ReadCheckpoint(ok, &c, &err)) << err;
  EXPECT_EQ(c.seed, 7u);
}

TEST(JsonTextTest, DuplicateKeysAreRefusedWithTheirPath) {
  nlohmann::json doc;
  std::string err;
  EXPECT_FALSE(ParseJsonText(R"({"iterations": 5, "iterations": 6})", "c.json", &doc, &err));
  EXPECT_EQ(err, "c.json: /iterations: duplicate key (each key once)");
  EXPECT_FALSE(ParseJsonText(R"({"sweep": {"levels": [1], "levels": [2]}})", "c.json", &doc, &err));
  EXPECT_EQ(err, "c.json: /sweep/levels: duplicate key (each key once)");
  EXPECT_FALSE(ParseJsonText(R"({"a": [{"x": 1}, {"x": 1, "x": 2}]})", "c.json", &doc, &err));
  EXPECT_EQ(err, "c.json: /a/1/x: duplicate key (each key once)");
  // A key with control characters is named escaped: the error stays one
  // line (found by config_fuzz).
  EXPECT_FALSE(ParseJsonText("{\"a\\nb\\u007f\": 1, \"a\\nb\\u007f\": 2}", "c.json", &doc, &err));
  EXPECT_EQ(err, "c.json: /a\\u000ab\\u007f: duplicate key (each key once)");
  // The same key in two objects is no duplicate.
  EXPECT_TRUE(ParseJsonText(R"({"a": {"x": 1}, "b": {"x": 1}, "c": [{"x": 1}, {"x": 2}]})",
                            "c.json", &doc, &err))
      << err;
  EXPECT_EQ(doc["c"][1]["x"], 2);
}

// `cpuhp-stress compare fifo x` used to block in open() forever. Run in a
// child so that the old behaviour fails the test instead of hanging it.
TEST(ReportReaderTest, AFifoIsRefusedWithoutBlocking) {
  TempDir dir;
  const std::string fifo = dir.Write("r.json", "") + ".fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    nlohmann::json doc;
    std::string err;
    const bool refused = !LoadReport(fifo, &doc, &err) && err == fifo + ": not a regular file";
    _exit(refused ? 0 : 1);
  }
  int status = 0;
  for (int i = 0; i < 100 && waitpid(child, &status, WNOHANG) == 0; ++i)
    usleep(50000);
  if (waitpid(child, &status, WNOHANG) == 0) {
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    FAIL() << "LoadReport blocked on a FIFO for 5 s";
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(SmallFileTest, GivesTheErrnoAndRefusesTooLarge) {
  TempDir d;
  std::string text, err;
  int e = 0;
  EXPECT_FALSE(ReadSmallFile("/nonexistent/f", 10, &text, &err, &e));
  EXPECT_EQ(e, ENOENT);
  const std::string big = d.Write("big", std::string(11, 'x'));
  EXPECT_FALSE(ReadSmallFile(big, 10, &text, &err, &e));
  EXPECT_EQ(e, EFBIG);
  EXPECT_EQ(err, big + ": too large (more than 10 bytes)");
  text.clear();
  EXPECT_TRUE(ReadSmallFile(big, 11, &text, &err, &e));
  EXPECT_EQ(text, std::string(11, 'x'));
}

TEST(SysfsListReaderTest, ReadsThroughTheSharedReader) {
  FakeSysfs fs(2);
  auto ctl = NewSysfsCpuControl(fs.root());
  std::vector<int> cpus;
  std::string err;
  int e = 0;
  ASSERT_TRUE(ctl->ReadList("present", &cpus, &err, &e)) << err;
  EXPECT_EQ(cpus, (std::vector<int>{0, 1}));
  // More than 1 MiB is no CPU list: refused, not cut and parsed.
  fs.Write("isolated", std::string((1 << 20) + 1, ','));
  EXPECT_FALSE(ctl->ReadList("isolated", &cpus, &err, &e));
  EXPECT_EQ(e, EFBIG);
  EXPECT_EQ(err, fs.root() + "/isolated: too large (more than 1 MiB)");
  EXPECT_FALSE(ctl->ReadList("nohz_full", &cpus, &err, &e));
  EXPECT_EQ(e, ENOENT);
  EXPECT_EQ(err, fs.root() + "/nohz_full: cannot read: No such file or directory");
}

// Found by fuzz/report_fuzz.cc: a negative, fractional or huge number where
// a count belongs (a hand-edited report) was converted to uint64_t, which is
// undefined (UBSan stopped `report` and `compare`). Negative reads as 0, too
// large as the largest count.
TEST(ReportNumbersTest, OutOfRangeCountsAreClampedNotConverted) {
  nlohmann::json r = SyntheticReport(SyntheticSpec());
  r["directions"]["offline"]["count"] = -4.1e7;
  r["directions"]["online"]["count"] = 1e300;
  r["directions"]["online"]["p50_ns"] = 2.5e6;
  const std::string text = HumanSummary(r);
  EXPECT_NE(text.find("online latency (ms)"), std::string::npos) << text;
  EXPECT_NE(text.find(" 18446744073709551615 "), std::string::npos) << text;
  EXPECT_NE(text.find(" 2.500 "), std::string::npos) << text;
  ReportOptions opts;
  EXPECT_NO_THROW(FormatMarkdown(r, opts));
  CompareOptions copts;
  copts.resamples = 50;
  Comparison c = Compare(r, r, copts);
  EXPECT_FALSE(c.regressed());
}

}  // namespace
}  // namespace cpuhp
