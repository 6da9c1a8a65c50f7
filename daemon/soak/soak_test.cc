// SPDX-License-Identifier: GPL-2.0
// The soak pieces on their own (end to end with `run`: cli/run_soak_test.cc).
#include "soak/soak.h"

#include <gtest/gtest.h>

namespace cpuhp {
namespace {

// STATUS= (systemctl status) shows the same p99 as the report: 98 offlines of
// 1 ms and 2 of 10 ms have a p99 of 10 ms (rank 99), not the minimum.
TEST(SoakStatusLine, P99IsThe99thPercentile) {
  RunStats stats(4);
  for (uint64_t i = 0; i < 100; ++i) {
    OpRecord rec;
    rec.index = i;
    rec.cpu = 1;
    rec.dir = Direction::kOffline;
    rec.duration_ns = i < 98 ? 1000000 : 10000000;
    rec.online_before = 4;
    stats.Add(rec);
  }
  Config cfg;
  SoakSession session(cfg, nullptr, nullptr);
  Runner runner(nullptr, nullptr, OnlineState{}, &stats, {}, nullptr, RunLimits{});
  const std::string line = session.StatusLine(runner, stats);
  const size_t at = line.find("p99 offline ");
  ASSERT_NE(at, std::string::npos) << line;
  const double p99_ms = std::stod(line.substr(at + 12));
  EXPECT_NEAR(p99_ms, 10.0, 0.05) << line;
}

// A sim run's STATUS= counts its --duration on the sim clock and says so.
TEST(SoakStatusLine, ASimRunShowsSimulatedTime) {
  RunStats stats(4);
  Config cfg;
  cfg.duration_ns = 24ull * 3600 * 1000000000;
  SoakSession session(cfg, nullptr, nullptr);
  class Fixed : public Clock {
   public:
    uint64_t NowNs() override { return 3601000000000ull; }
  } sim_clock;
  Runner runner(nullptr, nullptr, OnlineState{}, &stats, {}, nullptr,
                RunLimits{.duration_ns = cfg.duration_ns,
                          .duration_clock = &sim_clock,
                          .duration_zero_ns = 1000000000ull});
  EXPECT_EQ(session.StatusLine(runner, stats)
                .rfind("ops 0, 3600/86400 s simulated, 0 ops/s "
                       "simulated, p99 offline ",
                       0),
            0u)
      << session.StatusLine(runner, stats);
}
TEST(InterimReportPath, InsertsBeforeExtension) {
  EXPECT_EQ(InterimReportPath("/var/log/x/report.json"), "/var/log/x/report.interim.json");
  EXPECT_EQ(InterimReportPath("a.b/report"), "a.b/report.interim.json");
  EXPECT_EQ(InterimReportPath(".hidden"), ".hidden.interim.json");
}

}  // namespace
}  // namespace cpuhp
