// SPDX-License-Identifier: GPL-2.0
#include "run/progress.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

namespace cpuhp {
namespace {

RunStats StatsWith(int ops) {
  RunStats stats(4);
  for (int i = 0; i < ops; ++i) {
    OpRecord r;
    r.cpu = 1;
    r.dir = i % 2 ? Direction::kOnline : Direction::kOffline;
    r.duration_ns = i % 2 ? 1000000 : 4000000;
    r.online_before = 2;
    stats.Add(r);
  }
  return stats;
}

TEST(ProgressLineTest, ShowsOpsRateP99AndEtaFromTheIterationTarget) {
  ProgressLine p(false, 1000, 0);
  EXPECT_EQ(p.Format(StatsWith(250), 1000000000ull),
            "250/1000 ops  250.0 ops/s  p99 offline 4.000 ms online 1.000 ms  ETA 0:00:03");
}

TEST(ProgressLineTest, EtaFromTheDurationWhenItComesFirst) {
  ProgressLine p(false, 0, 3600ull * 1000000000ull);
  EXPECT_EQ(p.Format(StatsWith(10), 60ull * 1000000000ull),
            "10 ops  0.2 ops/s  p99 offline 4.000 ms online 1.000 ms  ETA 0:59:00");
}

TEST(ProgressLineTest, NoDataIsADashNotZero) {
  ProgressLine p(false, 1000, 0);
  EXPECT_EQ(p.Format(StatsWith(0), 1000000000ull), "0/1000 ops  0.0 ops/s  p99 offline - online -");
  EXPECT_EQ(p.Format(StatsWith(1), 1000000000ull),
            "1/1000 ops  1.0 ops/s  p99 offline 4.000 ms online -  ETA 0:16:39");
}

TEST(ProgressLineTest, SweepShowsLevelAndEtaOfItsOwnEnd) {
  ProgressLine p(false, 0, 0);
  ScheduleProgress sp{250, 1000, "level 2/4 (4 online)"};
  EXPECT_EQ(p.Format(StatsWith(250), 1000000000ull, &sp),
            "level 2/4 (4 online)  250 ops  250.0 ops/s  p99 offline 4.000 ms online 1.000 ms  "
            "ETA 0:00:03");
}

// Issue 28 item 7: a sim run's line shows the simulated time and rate (the
// clock of its latencies and of --duration), marked, never the loop's wall
// rate as if it were the kernel's; the ETA is the wall time left.
TEST(ProgressLineTest, ASimRunShowsSimulatedTimeAndRate) {
  ProgressLine p(false, 0, 24ull * 3600 * 1000000000ull);  // --duration 24h
  const uint64_t simulated_ns = 3600ull * 1000000000ull;   // 1 h of the model's time
  EXPECT_EQ(p.Format(StatsWith(1000), 1000000000ull, nullptr, &simulated_ns),
            "SIMULATED  1000 ops  3600.000 s simulated, 0.3 ops/s simulated  p99 offline 4.000 ms "
            "online 1.000 ms  ETA 0:00:23");

  class Fixed : public Clock {
   public:
    uint64_t NowNs() override { return 5000000000ull; }
  } sim_clock;
  std::FILE* out = std::tmpfile();
  ProgressLine drawn(true, 0, 0, out);
  drawn.set_simulated_clock(&sim_clock, 1000000000ull);
  drawn.Update(StatsWith(8));
  drawn.Finish();
  std::rewind(out);
  char buf[512] = {};
  ASSERT_GT(std::fread(buf, 1, sizeof(buf) - 1, out), 0u);
  std::fclose(out);
  EXPECT_NE(std::string(buf).find("\rSIMULATED  8 ops  4.000 s simulated, 2.0 ops/s simulated  "),
            std::string::npos)
      << buf;
}

// A log line clears the progress line first: never "ETA 0:00:03cpuhp-stress:
// warning: ..." on one terminal line.
TEST(ProgressLineTest, LogLinesStartOnAClearedLine) {
  std::FILE* f = std::tmpfile();
  auto sink = NewProgressAwareSink(std::make_shared<spdlog::sinks::basic_file_sink_st>(
      "/dev/null"));  // the message itself goes elsewhere; the clear goes to f
  {
    ProgressLine p(true, 10, 0, f);
    p.Update(StatsWith(5));
    const long drawn = std::ftell(f);
    spdlog::logger log("t", sink);
    log.warn("hello");
    std::string all(static_cast<size_t>(std::ftell(f)), '\0');
    std::rewind(f);
    ASSERT_EQ(std::fread(all.data(), 1, all.size(), f), all.size());
    EXPECT_EQ(all.substr(static_cast<size_t>(drawn)), "\r\x1b[K");
    // Cleared: the next update draws at once, not after the 500 ms pause.
    std::fseek(f, 0, SEEK_END);
    p.Update(StatsWith(6));
    EXPECT_GT(std::ftell(f), static_cast<long>(all.size()));
  }
  // No line in use: a log line writes nothing of ours.
  const long before = std::ftell(f);
  spdlog::logger log("t2", sink);
  log.warn("again");
  EXPECT_EQ(std::ftell(f), before);
  std::fclose(f);
}

TEST(ProgressLineTest, DisabledWritesNothing) {
  std::FILE* f = std::tmpfile();
  ProgressLine p(false, 10, 0, f);
  p.Update(StatsWith(5));
  p.Finish();
  EXPECT_EQ(std::ftell(f), 0);
  ProgressLine on(true, 10, 0, f);
  on.Update(StatsWith(5));
  on.Finish();
  EXPECT_GT(std::ftell(f), 0);
  std::fclose(f);
}

}  // namespace
}  // namespace cpuhp
