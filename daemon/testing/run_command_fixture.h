// SPDX-License-Identifier: GPL-2.0
// Test fixture for RunCommand end to end: a scratch directory, a Config that
// writes its report there, the command's stdout captured in a temporary
// file, and the report read back and checked against the schema.
#pragma once

#include <signal.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "testing/fake_sysfs.h"

namespace cpuhp {

// A stop flag no signal sets: RunCommand runs to its end.
inline volatile sig_atomic_t g_no_stop = 0;

class RunCommandFixture : public ::testing::Test {
 protected:
  // prefix: the scratch directory's name in /tmp, without the XXXXXX.
  explicit RunCommandFixture(const char* prefix) : prefix_(prefix) {}

  void SetUp() override {
    std::string tmpl = "/tmp/" + prefix_ + ".XXXXXX";
    dir_ = mkdtemp(tmpl.data());
    cfg_.report = dir_ + "/report.json";
    cfg_.progress = ProgressMode::kNever;
    out_ = std::tmpfile();
  }
  void TearDown() override {
    std::fclose(out_);
    std::filesystem::remove_all(dir_);
  }
  // What the command wrote to out_ so far.
  std::string Output() {
    std::rewind(out_);
    std::string s;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), out_)) > 0)
      s.append(buf, n);
    return s;
  }
  nlohmann::json Report() {
    std::ifstream f(cfg_.report);
    return nlohmann::json::parse(f);
  }
  bool ReportExists() { return std::filesystem::exists(cfg_.report); }
  // Exit status of the schema validator on the report (77: no jsonschema).
  int ReportValidates() {
    std::string cmd = std::string("/usr/bin/python3 ") + CPUHP_SOURCE_DIR +
                      "/tests/validate_report.py " + CPUHP_SOURCE_DIR +
                      "/daemon/report/schema/report.schema.json " + cfg_.report + " > /dev/null";
    int rc = std::system(cmd.c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }

  std::string prefix_;
  std::string dir_;
  Config cfg_;
  std::FILE* out_ = nullptr;
};

// The commands on a fake sysfs tree of 4 CPUs (cpu0 not hotpluggable), their
// state directory in the scratch directory, seed 7.
class CommandsTest : public RunCommandFixture {
 protected:
  CommandsTest() : RunCommandFixture("cpuhp-cmd") {}
  void SetUp() override {
    RunCommandFixture::SetUp();
    cfg_.sysfs_root = fs_.root();
    cfg_.state_dir = dir_ + "/state";
    cfg_.seed = 7;
  }

  FakeSysfs fs_{4};
};

}  // namespace cpuhp
