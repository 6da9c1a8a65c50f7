// SPDX-License-Identifier: GPL-2.0
#include "sources/disturbance.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include <cinttypes>
#include <cstdio>

#include "machine/cpu_control.h"
#include "util/cpu_list.h"

namespace cpuhp {
namespace {

using nlohmann::json;

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

timespec ToTimespec(uint64_t ns) {
  return {static_cast<time_t>(ns / 1000000000ull), static_cast<long>(ns % 1000000000ull)};
}

bool PinTo(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(static_cast<size_t>(cpu), &set);
  return sched_setaffinity(0, sizeof(set), &set) == 0;
}

// How many periods between two attempts to get back a CPU that went away.
constexpr uint64_t kRepinEvery = 10;

json StatsJson(const Histogram& h) {
  return {{"count", h.count()},           {"p50_ns", h.PercentileNs(50)},
          {"p99_ns", h.PercentileNs(99)}, {"p99_9_ns", h.PercentileNs(99.9)},
          {"max_ns", h.max_ns()},         {"mean_ns", h.count() ? h.mean_ns() : 0.0}};
}

}  // namespace

const char* ProbeBucketName(int bucket) {
  switch (bucket) {
    case kProbeBaseline:
      return "baseline";
    case kProbeOffline:
      return "offline";
    case kProbeOnline:
      return "online";
  }
  return "unknown";
}

void OpWindows::Begin(uint64_t index, Direction dir, uint64_t now_ns) {
  Slot& s = slots_[index % kSlots];
  s.seq.fetch_add(1);  // odd: readers retry or skip
  s.index.store(index);
  s.begin_ns.store(now_ns);
  s.end_ns.store(kOpen);
  s.dir.store(static_cast<uint8_t>(dir));
  s.seq.fetch_add(1);
  begun_.store(index + 1);
}

void OpWindows::End(uint64_t index, uint64_t now_ns) {
  Slot& s = slots_[index % kSlots];
  if (s.index.load() != index)
    return;
  s.seq.fetch_add(1);
  s.end_ns.store(now_ns);
  s.seq.fetch_add(1);
}

std::optional<Direction> OpWindows::Attribute(uint64_t from_ns, uint64_t to_ns) const {
  const uint64_t begun = begun_.load();
  const uint64_t oldest = begun > kSlots ? begun - kSlots : 0;
  // Newest first: the windows are disjoint and in order, so the first one
  // that ended before the sample's interval ends the search.
  for (uint64_t i = begun; i-- > oldest;) {
    const Slot& s = slots_[i % kSlots];
    uint64_t seq, index, begin, end;
    uint8_t dir;
    int tries = 0;
    do {
      seq = s.seq.load();
      index = s.index.load();
      begin = s.begin_ns.load();
      end = s.end_ns.load();
      dir = s.dir.load();
    } while (((seq & 1) || seq != s.seq.load()) && ++tries < 100);
    if (tries >= 100 || index != i)
      return std::nullopt;  // overwritten under us: far older than this sample
    if (end != kOpen && end < from_ns)
      return std::nullopt;
    if (begin <= to_ns)
      return static_cast<Direction>(dir);
  }
  return std::nullopt;
}

Disturbance::Disturbance(DisturbanceOptions opts) : opts_(std::move(opts)) {}

Disturbance::~Disturbance() {
  Stop();
}

bool Disturbance::Start(std::string* why_unavailable) {
  if (opts_.cpus.empty()) {
    *why_unavailable = "no CPU stays online outside the toggled ones (" +
                       FormatCpuList(opts_.toggled) + "): nowhere to run a probe";
    return false;
  }
  stop_ = false;
  ready_ = 0;
  for (int cpu : opts_.cpus) {
    auto p = std::make_unique<Probe>();
    p->cpu = cpu;
    probes_.push_back(std::move(p));
  }
  for (auto& p : probes_)
    p->thread = std::thread(&Disturbance::Loop, this, p.get());
  running_ = true;
  // Each probe says when it is pinned (or why not); bounded in case a
  // thread never gets the CPU.
  const uint64_t deadline = NowNs() + 5000000000ull;
  while (ready_.load() < static_cast<int>(probes_.size()) && NowNs() < deadline) {
    timespec ts = ToTimespec(1000000);
    clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, nullptr);
  }
  std::string err = ready_.load() < static_cast<int>(probes_.size())
                        ? "a probe thread did not start within 5 s"
                        : "";
  for (auto& p : probes_)
    if (err.empty() && !p->error.empty())
      err = p->error;
  if (!err.empty()) {
    Stop();
    probes_.clear();
    *why_unavailable = err;
    return false;
  }
  // The baseline: the probes alone, before the first operation. Samples
  // between operations count as baseline too, but with back-to-back
  // operations there are few of those.
  const uint64_t t0 = NowNs();
  // A signal ends it: the baseline may last an hour, and SIGTERM must not
  // wait that out (the stop flag is checked right after Start). The report
  // says how long it actually was.
  timespec ts = ToTimespec(opts_.baseline_ns);
  if (opts_.baseline_ns)
    clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, nullptr);
  baseline_measured_ns_ = NowNs() - t0;
  return true;
}

void Disturbance::Loop(Probe* p) {
  if (!PinTo(p->cpu)) {
    p->error = "cannot pin a probe to CPU " + std::to_string(p->cpu) + ": " + strerror(errno);
    ready_.fetch_add(1);
    return;
  }
  if (opts_.fifo_priority > 0) {
    sched_param sp{};
    sp.sched_priority = opts_.fifo_priority;
    int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
    if (rc != 0) {
      p->error = "cannot run a probe as SCHED_FIFO priority " +
                 std::to_string(opts_.fifo_priority) + ": " + strerror(rc);
      ready_.fetch_add(1);
      return;
    }
  }
  ready_.fetch_add(1);
  const uint64_t period = opts_.period_ns;
  uint64_t intended = NowNs() + period;
  uint64_t n = 0;
  bool away = false;
  while (!stop_.load(std::memory_order_relaxed)) {
    timespec ts = ToTimespec(intended);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
    const uint64_t actual = NowNs();
    const uint64_t latency = actual > intended ? actual - intended : 0;
    std::optional<Direction> dir = windows_.Attribute(intended, actual);
    const int bucket = !dir                          ? kProbeBaseline
                       : *dir == Direction::kOffline ? kProbeOffline
                                                     : kProbeOnline;
    p->hist[bucket].Record(latency);
    // The kernel moved us off a CPU that went offline (our affinity was
    // broken to let it go): count it, and ask for the CPU again from time to
    // time; that fails (EINVAL) until it is back.
    if (sched_getcpu() != p->cpu) {
      ++p->off_cpu_samples;
      away = true;
    }
    if (away && ++n % kRepinEvery == 0 && PinTo(p->cpu)) {
      ++p->repins;
      away = false;
    }
    intended += period;
    // A wakeup later than whole periods: skip them rather than wake at once
    // and count the same delay again (cyclictest does the same).
    while (intended <= actual) {
      intended += period;
      ++p->missed_periods;
    }
  }
}

void Disturbance::OpBegin(const Operation& op, uint64_t index) {
  windows_.Begin(index, op.dir, NowNs());
}

void Disturbance::OpEnd(const OpRecord& rec) {
  windows_.End(rec.index, NowNs());
}

void Disturbance::Stop() {
  if (!running_)
    return;
  stop_ = true;
  for (auto& p : probes_)
    if (p->thread.joinable())
      p->thread.join();
  running_ = false;
}

json Disturbance::ReportJson() const {
  Histogram all[kProbeBuckets];
  json per_cpu = json::array();
  uint64_t samples = 0;
  for (const auto& p : probes_) {
    json row = {{"cpu", p->cpu},
                {"off_cpu_samples", p->off_cpu_samples},
                {"repins", p->repins},
                {"missed_periods", p->missed_periods}};
    for (int b = 0; b < kProbeBuckets; ++b) {
      all[b].Merge(p->hist[b]);
      samples += p->hist[b].count();
      row[ProbeBucketName(b)] = StatsJson(p->hist[b]);
    }
    per_cpu.push_back(std::move(row));
  }
  json total = json::object();
  for (int b = 0; b < kProbeBuckets; ++b)
    total[ProbeBucketName(b)] = StatsJson(all[b]);
  return {
      {"clock", "CLOCK_MONOTONIC"},
      {"measures", "wakeup latency of a periodic absolute clock_nanosleep (actual - intended)"},
      {"period_ns", opts_.period_ns},
      {"policy", opts_.fifo_priority > 0 ? "SCHED_FIFO" : "SCHED_OTHER"},
      {"fifo_priority", opts_.fifo_priority},
      {"probe_cpus", FormatCpuList(opts_.cpus)},
      {"toggled_cpus", FormatCpuList(opts_.toggled)},
      {"baseline_phase_ns", baseline_measured_ns_},
      {"samples", samples},
      {"total", std::move(total)},
      {"per_cpu", std::move(per_cpu)},
  };
}

std::string DisturbanceSummary(const json& report) {
  auto ts = report.find("timing_sources");
  if (ts == report.end() || !ts->is_object())
    return "";
  auto it = ts->find("disturbance");
  if (it == ts->end() || !it->is_object())
    return "";
  const json& d = *it;
  if (d.value("status", "") != "ok")
    return "disturbance probes: unavailable: " + d.value("reason", std::string("?")) + "\n";
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "wakeup latency of the other CPUs (us; probes on CPUs %s, period %.3f ms, %s)\n",
                d.value("probe_cpus", std::string("?")).c_str(),
                static_cast<double>(d.value("period_ns", uint64_t{0})) / 1e6,
                d.value("policy", std::string("?")).c_str());
  std::string out = buf;
  std::snprintf(buf, sizeof buf, "  %-14s %9s %9s %9s %9s\n", "", "samples", "p99", "p99.9", "max");
  out += buf;
  const json total = d.value("total", json::object());
  for (const char* b : {"baseline", "offline", "online"}) {
    const json s = total.value(b, json::object());
    const uint64_t count = s.value("count", uint64_t{0});
    auto us = [&](const char* key) {
      char v[32];
      if (count == 0)
        return std::string("-");
      std::snprintf(v, sizeof v, "%.1f", static_cast<double>(s.value(key, uint64_t{0})) / 1e3);
      return std::string(v);
    };
    std::string label = std::string(b == std::string("baseline") ? "baseline" : "during ") +
                        (b == std::string("baseline") ? "" : b);
    std::snprintf(buf, sizeof buf, "  %-14s %9" PRIu64 " %9s %9s %9s\n", label.c_str(), count,
                  us("p99_ns").c_str(), us("p99_9_ns").c_str(), us("max_ns").c_str());
    out += buf;
  }
  return out;
}

}  // namespace cpuhp
