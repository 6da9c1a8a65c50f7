// SPDX-License-Identifier: GPL-2.0
// Per-operation costs of the pipeline's parts (Google Benchmark).
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "machine/hotplug_states.h"
#include "machine/sim_cpu_control.h"
#include "report/merge.h"
#include "run/oplog.h"
#include "run/runner.h"
#include "sources/trace_drainer.h"
#include "sources/trace_instance.h"
#include "sources/trace_join.h"
#include "sources/trace_parser.h"
#include "stats/histogram.h"
#include "stats/quantile_ci.h"
#include "stats/run_stats.h"
#include "testing/raw_run.h"
#include "testing/synthetic_report.h"
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

std::string TraceFixture(const std::string& name) {
  std::ifstream f(std::string(CPUHP_SOURCE_DIR) + "/tests/fixtures/trace/" + name);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// What a drain does per write once the events are decoded: pair enters with
// exits, join the steps to their write, add them to the per-state tables.
// A real offline+online of cpu1 (x86_64 6.18 fixture, 174 events), again and
// again into one joiner, as in a run; per write.
void BM_JoinWrite(benchmark::State& state) {
  HotplugStates states;
  if (!ParseHotplugStates(TraceFixture("x86_64-6.18.states"), &states)) {
    state.SkipWithError("tests/fixtures/trace/x86_64-6.18.states does not parse");
    return;
  }
  std::vector<TraceEvent> events;
  std::istringstream lines(TraceFixture("x86_64-6.18-cpu1-offline-online.trace"));
  for (std::string line; std::getline(lines, line);) {
    TraceEvent ev;
    if (!line.empty() && line[0] != '#' && ParseTraceLine(line, &ev) && ev.kind != TraceKind::kLost)
      events.push_back(ev);
  }
  auto op = [](uint64_t i, Direction dir, uint64_t start_us, uint64_t dur_us, int online) {
    OpRecord r;
    r.index = i;
    r.cpu = 1;
    r.dir = dir;
    r.start_ns = start_us * 1000;
    r.duration_ns = dur_us * 1000;
    r.online_before = online;
    return r;
  };
  const std::vector<OpRecord> ops = {op(0, Direction::kOffline, 2497383000, 50000, 2),
                                     op(1, Direction::kOnline, 2497468000, 4700, 1)};
  TraceJoiner j(states);
  for (auto _ : state) {
    for (const TraceEvent& ev : events)
      j.FeedEvent(ev);
    j.EndOperations(ops);
  }
  if (j.stats().ops_with_steps() != 2 * static_cast<uint64_t>(state.iterations()))
    state.SkipWithError("the fixture's steps did not join to both writes");
  state.SetItemsProcessed(state.iterations() * 2);
  state.counters["events_per_write"] = static_cast<double>(events.size()) / 2;
}
BENCHMARK(BM_JoinWrite);

// The drain's decoding: a captured offline+online of cpu1 (186 events in two
// 4 KiB trace_pipe_raw pages, tests/fixtures/trace/x86_64-6.18-raw) decoded
// from memory into raw events, sub-buffer by sub-buffer as RawCpuhpReader
// decodes each read(); per write. The read() itself is the kernel's (a page
// copied) and is not here.
void BM_ReadRawWrite(benchmark::State& state) {
  const std::string root = std::string(CPUHP_SOURCE_DIR) + "/tests/fixtures/trace/x86_64-6.18-raw";
  RawCpuhpReader r;
  std::string why;
  if (!r.Open(root, "cap", &why)) {
    state.SkipWithError(why.c_str());
    return;
  }
  std::vector<std::pair<int, std::vector<char>>> pages;
  for (int cpu = 0; cpu < 2; ++cpu) {
    std::string data;
    ReadText(root + "/instances/cap/per_cpu/cpu" + std::to_string(cpu) + "/trace_pipe_raw", &data);
    for (size_t at = 0; at + r.subbuffer_size() <= data.size(); at += r.subbuffer_size())
      pages.emplace_back(
          cpu,
          std::vector<char>(data.begin() + static_cast<std::ptrdiff_t>(at),
                            data.begin() + static_cast<std::ptrdiff_t>(at + r.subbuffer_size())));
  }
  for (auto _ : state) {
    r.events.clear();
    for (auto& [cpu, page] : pages)
      r.DecodeSubbuffer(page.data(), cpu);
  }
  if (r.events.size() != 186)
    state.SkipWithError("the capture did not decode to its 186 events");
  state.SetItemsProcessed(state.iterations() * 2);
  state.counters["events_per_write"] = static_cast<double>(r.events.size()) / 2;
}
BENCHMARK(BM_ReadRawWrite);

// The drain after its read, as a run drains: 500 writes (the capture again
// and again, testing/raw_run.h) drained every range(0) writes, the raw events
// held past the write in flight, named, fed to the joiner, joined to their
// writes and added to the per-state tables; per write. A 2000-write run at
// ~800 writes/s drains every ~125 writes.
void BM_DrainWrite(benchmark::State& state) {
  RawRun run;
  std::string why;
  if (!LoadRawRun(std::string(CPUHP_SOURCE_DIR) + "/tests/fixtures/trace", 250, &run, &why)) {
    state.SkipWithError(why.c_str());
    return;
  }
  uint64_t with_steps = 0;
  for (auto _ : state) {
    TraceJoiner j(run.states, 1);
    RawEventFeed feed;
    feed.fun_names = run.fun_names;
    DrainRawRun(&run, static_cast<size_t>(state.range(0)), &feed, &j);
    with_steps += j.stats().ops_with_steps();
  }
  if (with_steps != run.ops.size() * static_cast<uint64_t>(state.iterations()))
    state.SkipWithError("the run's steps did not join to every write");
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(run.ops.size()));
}
BENCHMARK(BM_DrainWrite)->Arg(8)->Arg(128)->Unit(benchmark::kMillisecond);

// merge of two boots with an array of range(0) small rows each, per row:
// flat across sizes when matching is linear (issue 29.8: a linear search
// per row made 100k rows take 20 s).
void BM_MergeRows(benchmark::State& state) {
  const nlohmann::json base = SyntheticReport(SyntheticSpec{});
  std::vector<nlohmann::json> boots;
  for (int b = 0; b < 2; ++b) {
    nlohmann::json r = base;
    r["host"]["boot_id"] = "boot-" + std::to_string(b);
    nlohmann::json rows = nlohmann::json::array();
    for (int64_t i = 0; i < state.range(0); ++i)
      rows.push_back({{"name", "row-" + std::to_string(i)}, {"hits", 1}});
    r["timing_sources"]["crafted"] = {{"rows", std::move(rows)}};
    boots.push_back(std::move(r));
  }
  for (auto _ : state) {
    nlohmann::json pooled;
    std::string err;
    if (!MergeReports({"a.json", "b.json"}, boots, &pooled, &err))
      state.SkipWithError(err.c_str());
    benchmark::DoNotOptimize(pooled);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_MergeRows)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

// compare's bootstrap of one summary of 2000 operations in 2000 buckets
// (the worst case of the exact binomial, issue 29.8's crafted rows): the
// p50 interval, 2000 resamples, per summary and side pair.
void BM_QuantileIntervalWorstCase(benchmark::State& state) {
  Histogram h;
  for (int i = 0; i < 2000; ++i)
    h.Record(Histogram::BucketLow(1100 + i));
  for (auto _ : state)
    benchmark::DoNotOptimize(QuantileRatioInterval(h, h, 0.5, 0.95, 2000, 1));
}
BENCHMARK(BM_QuantileIntervalWorstCase)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace cpuhp

BENCHMARK_MAIN();
