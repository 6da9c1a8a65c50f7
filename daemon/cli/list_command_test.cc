// SPDX-License-Identifier: GPL-2.0
// `list` over a fake sysfs tree.
#include "cli/list_command.h"

#include <string>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "testing/run_command_fixture.h"

namespace cpuhp {
namespace {

TEST_F(CommandsTest, ListShowsHotpluggableCpus) {
  EXPECT_EQ(ListCommand(fs_.root(), out_), kExitOk);
  std::string o = Output();
  EXPECT_NE(o.find("    0  no "), std::string::npos) << o;
  EXPECT_NE(o.find("hotpluggable 1-3"), std::string::npos) << o;
  EXPECT_EQ(ListCommand("/nonexistent", out_), kExitBadInput);
}

// The SMT line: the cores when every CPU is online, what is missing when not.
TEST_F(CommandsTest, ListShowsSmt) {
  EXPECT_EQ(ListCommand(fs_.root(), out_), kExitOk);
  EXPECT_NE(Output().find("smt: unknown: " + fs_.root() +
                          "/smt/control: absent: this kernel has no SMT control"),
            std::string::npos)
      << Output();
  fs_.Smt("on", "1");
  for (int c = 0; c < 4; ++c)
    fs_.Siblings(c, c < 2 ? "0-1" : "2-3");
  EXPECT_EQ(ListCommand(fs_.root(), out_), kExitOk);
  EXPECT_NE(Output().find("smt: control on, active 1, 2 threads per core, cores 0-1 2-3\n"),
            std::string::npos)
      << Output();
  fs_.Smt("notsupported", "1");
  for (int c = 0; c < 4; ++c)
    fs_.Siblings(c, std::to_string(c));
  EXPECT_EQ(ListCommand(fs_.root(), out_), kExitOk);
  EXPECT_NE(Output().find("smt: control notsupported, active 1, 1 thread per core, cores 0 1 2 3; "
                          "smt/control is \"notsupported\""),
            std::string::npos)
      << Output();
}

}  // namespace
}  // namespace cpuhp
