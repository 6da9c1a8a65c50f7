// SPDX-License-Identifier: GPL-2.0
// The soak pieces on their own (end to end with `run`: cli/run_soak_test.cc).
#include "soak/soak.h"

#include <gtest/gtest.h>

namespace cpuhp {
namespace {

TEST(InterimReportPath, InsertsBeforeExtension) {
  EXPECT_EQ(InterimReportPath("/var/log/x/report.json"), "/var/log/x/report.interim.json");
  EXPECT_EQ(InterimReportPath("a.b/report"), "a.b/report.interim.json");
  EXPECT_EQ(InterimReportPath(".hidden"), ".hidden.interim.json");
}

}  // namespace
}  // namespace cpuhp
