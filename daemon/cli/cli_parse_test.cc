// SPDX-License-Identifier: GPL-2.0
// The one-line parse errors, over a small app shaped like `run`.
#include "cli/cli_parse.h"

#include <algorithm>

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

namespace cpuhp {
namespace {

class CliParseTest : public ::testing::Test {
 protected:
  CliParseTest() {
    UseCliFormatter(&app_);
    run_ = app_.add_subcommand("run", "run");
    run_->add_option("-n,--iterations", iterations_, "count");
    run_->add_option("--backend", backend_, "backend");
    run_->add_option("--victim", victim_, "victim");
    run_->add_option("-o,--output,-r,--report", report_, "report");
    run_->add_flag("--health,!--no-health", health_, "health; on by default");
    CLI::App* merge = app_.add_subcommand("merge", "merge");
    merge->add_option("reports", reports_, "reports");
    CheckCliValues(&app_);
  }

  // The error line, or "" when the parse succeeds.
  std::string Parse(std::vector<std::string> args) {
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    try {
      app_.parse(reversed);
    } catch (const CLI::ParseError& e) {
      return CliErrorLine(app_, e, args);
    }
    return "";
  }

  CLI::App app_{"test"};
  CLI::App* run_ = nullptr;
  std::string iterations_, backend_, victim_, report_;
  std::vector<std::string> reports_;
  bool health_ = true;
};

TEST_F(CliParseTest, AnOptionIsNotAValue) {
  EXPECT_EQ(Parse({"run", "--iterations", "-o", "e.json"}),
            "--iterations needs a value (found the option -o)");
  EXPECT_EQ(Parse({"run", "-n", "--backend", "sim"}),
            "-n needs a value (found the option --backend)");
  EXPECT_EQ(Parse({"run", "--backend", "sim", "--iterations"}), "--iterations needs a value");
}

TEST_F(CliParseTest, NumbersAndStdoutAreValues) {
  EXPECT_EQ(Parse({"run", "--victim", "-1", "--iterations", "-5", "-o", "-"}), "");
  EXPECT_EQ(victim_, "-1");
  EXPECT_EQ(iterations_, "-5");  // refused later, by the config's rules, naming -5
  EXPECT_EQ(report_, "-");
}

TEST_F(CliParseTest, UnknownOptionWithASuggestion) {
  EXPECT_EQ(Parse({"run", "--iteration", "10"}),
            "unknown option --iteration (did you mean --iterations?)");
  EXPECT_EQ(Parse({"run", "--back=sim"}), "unknown option --back (did you mean --backend?)");
  EXPECT_EQ(Parse({"run", "--frobnicate"}), "unknown option --frobnicate (see --help)");
  EXPECT_EQ(Parse({"run", "-x"}), "unknown option -x (see --help)");
  EXPECT_EQ(Parse({"run", "--iterations", "5", "e.json"}),
            "unexpected argument 'e.json' (see --help)");
}

TEST_F(CliParseTest, GivenTwiceNamesWhatWasTyped) {
  EXPECT_EQ(Parse({"run", "--backend", "sim", "--backend", "sysfs"}), "--backend given twice");
  EXPECT_EQ(Parse({"run", "-o", "a", "--report", "b", "-r", "c"}),
            "-o and --report and -r are one option, given 3 times");
}

TEST_F(CliParseTest, EmptyValuesNameTheOptionAsTyped) {
  EXPECT_EQ(Parse({"run", "-o", ""}), "-o: empty value");
  EXPECT_EQ(Parse({"run", "--report="}), "--report: empty value");
  EXPECT_EQ(Parse({"run", "--backend", "sim", "--backend="}), "--backend given twice");
  EXPECT_EQ(Parse({"merge", "a.json", ""}), "reports: empty value");
}

TEST_F(CliParseTest, HelpShowsNegatableFlagsWithoutAFalseDefault) {
  const std::string help = run_->help();
  EXPECT_NE(help.find("--health,--no-health "), std::string::npos) << help;
  EXPECT_EQ(help.find("{false}"), std::string::npos) << help;
  EXPECT_NE(help.find("-o,-r,--output,--report TEXT"), std::string::npos) << help;
}

}  // namespace
}  // namespace cpuhp
