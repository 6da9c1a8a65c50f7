// SPDX-License-Identifier: GPL-2.0
// Per-operation costs of the pipeline's parts (Google Benchmark).
#include <benchmark/benchmark.h>

#include "machine/sim_cpu_control.h"
#include "run/oplog.h"
#include "run/runner.h"
#include "stats/histogram.h"
#include "stats/run_stats.h"
#include "util/rng.h"

namespace cpuhp {
namespace {

void BM_HistogramRecord(benchmark::State& state) {
  Histogram h;
  Rng rng(1);
  uint64_t v = 0;
  for (auto _ : state) {
    v = 1000000 + (rng.Next() & 0xfffff);
    h.Record(v);
  }
  benchmark::DoNotOptimize(h.count());
}
BENCHMARK(BM_HistogramRecord);

void BM_RunStatsAdd(benchmark::State& state) {
  RunStats stats(64);
  OpRecord rec;
  uint64_t i = 0;
  for (auto _ : state) {
    rec.cpu = static_cast<int>(i % 63) + 1;
    rec.dir = (i & 1) ? Direction::kOnline : Direction::kOffline;
    rec.online_before = 32 + static_cast<int>(i % 16);
    rec.duration_ns = 1000000 + (i * 7919) % 500000;
    stats.Add(rec);
    ++i;
  }
}
BENCHMARK(BM_RunStatsAdd);

void BM_OpLogFormat(benchmark::State& state) {
  OpRecord rec{123456, 3, Direction::kOffline, 987654321, 1234567, 0, 8, true};
  for (auto _ : state)
    benchmark::DoNotOptimize(OpLog::Format(rec));
}
BENCHMARK(BM_OpLogFormat);

// The whole loop on the simulated backend, per operation.
void BM_RunnerSim(benchmark::State& state) {
  volatile sig_atomic_t stop = 0;
  for (auto _ : state) {
    SimConfig c;
    c.cpus = 8;
    SimCpuControl sim(c, 1);
    OnlineState s;
    s.online.assign(8, 1);
    s.count = 8;
    std::string err;
    auto sched = NewSchedule({Pattern::kRandom, {1, 2, 3, 4, 5, 6, 7}, 1, 1, {}}, s, &err);
    RunStats stats(8);
    Runner r(&sim, sched.get(), s, &stats, {}, nullptr, {.iterations = 100000});
    r.Run(&stop, nullptr);
  }
  state.SetItemsProcessed(state.iterations() * 100000);
}
BENCHMARK(BM_RunnerSim)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace cpuhp

BENCHMARK_MAIN();
