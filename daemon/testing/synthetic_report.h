// SPDX-License-Identifier: GPL-2.0
// Test helper: a complete report whose latencies follow a known model, for
// compare and format tests. Offline latency at n online CPUs is
// scale * (2 ms + 0.15 ms * n), online scale * (1 ms + 0.1 ms * n), each
// varied uniformly by +-20 % (the sim backend's shape), `ops_per_level`
// operations per direction and level.
#pragma once

#include <unistd.h>

#include <fstream>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "report/compare.h"
#include "report/report.h"
#include "stats/run_stats.h"

namespace cpuhp {

struct SyntheticSpec {
  double offline_scale = 1.0;
  double online_scale = 1.0;
  uint64_t seed = 1;
  int ops_per_level = 1000;
  int failed = 0;  // EBUSY failures added on cpu1
  bool restore_ok = true;
  std::string cpus = "1-3";
};

inline nlohmann::json SyntheticReport(const SyntheticSpec& spec) {
  RunStats stats(8);
  std::mt19937_64 rng(spec.seed);
  std::uniform_real_distribution<double> jitter(0.8, 1.2);
  uint64_t index = 0;
  uint64_t t = 1000000000;
  for (int online = 2; online <= 4; online++) {
    for (int i = 0; i < spec.ops_per_level; i++) {
      for (int d = 0; d < 2; d++) {
        OpRecord r;
        r.index = index++;
        r.cpu = 1 + i % 3;
        r.dir = d == 0 ? Direction::kOffline : Direction::kOnline;
        r.online_before = d == 0 ? online : online - 1;
        double model = d == 0 ? spec.offline_scale * (2e6 + 0.15e6 * online)
                              : spec.online_scale * (1e6 + 0.1e6 * online);
        r.duration_ns = static_cast<uint64_t>(model * jitter(rng));
        r.start_ns = t;
        t += r.duration_ns + 1000;
        stats.Add(r);
      }
    }
  }
  for (int i = 0; i < spec.failed; i++) {
    OpRecord r;
    r.index = index++;
    r.cpu = 1;
    r.err = 16;
    r.online_before = 4;
    r.start_ns = t;
    stats.Add(r);
  }
  ReportInputs in;
  in.config = {
      {"pattern", "roundrobin"}, {"backend", "sim"}, {"iterations", index}, {"duration", "0"}};
  in.host = {{"kernel_release", "6.1.0-test"},
             {"hostname", "testhost"},
             {"cpu_model", "Test CPU"},
             {"boot_id", "b00t"},
             {"arch", "x86_64"},
             {"cpus", {{"present_list", "0-7"}}}};
  in.cpus = {{"selected", spec.cpus}, {"backend", "sim:8"}};
  in.seed = spec.seed;
  in.started_at = "2026-11-30T05:00:00.000Z";
  in.ended_at = "2026-11-30T05:00:10.000Z";
  in.elapsed_ns = 10000000000ull;
  in.stop_reason = "iterations";
  in.stats = &stats;
  in.restore = {{"ok", spec.restore_ok},
                {"writes", 0},
                {"failures", nlohmann::json::array()},
                {"mask", "0-7"}};
  return BuildReport(in);
}

// The comparison of two synthetic reports at `threshold` (compare tests).
inline Comparison CompareSynthetic(const SyntheticSpec& b, const SyntheticSpec& c,
                                   double threshold = 0.05) {
  CompareOptions o;
  o.threshold = threshold;
  return Compare(SyntheticReport(b), SyntheticReport(c), o);
}

// Writes `j` to a new file in /tmp and returns its path; the test unlinks it.
inline std::string WriteTempReport(const nlohmann::json& j) {
  char path[] = "/tmp/cpuhp-compare-test.XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << j.dump();
  return path;
}

}  // namespace cpuhp
