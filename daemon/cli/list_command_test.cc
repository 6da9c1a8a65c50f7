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

}  // namespace
}  // namespace cpuhp
