// SPDX-License-Identifier: GPL-2.0
#include "util/systemd_glue.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <gtest/gtest.h>

namespace cpuhp {
namespace {

// The watchdog thread logs while the main thread does: a sink without a
// mutex (stderr_color_st) is a data race outside systemd.
TEST(StderrLoggerTest, TheSinkIsThreadSafe) {
  auto logger = NewStderrLogger("cpuhp-stress");
  ASSERT_EQ(logger->sinks().size(), 1u);
  EXPECT_NE(dynamic_cast<spdlog::sinks::stderr_color_sink_mt*>(logger->sinks()[0].get()), nullptr);
  EXPECT_EQ(dynamic_cast<spdlog::sinks::stderr_color_sink_st*>(logger->sinks()[0].get()), nullptr);
  EXPECT_EQ(logger->name(), "cpuhp-stress");
}

}  // namespace
}  // namespace cpuhp
