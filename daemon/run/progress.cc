// SPDX-License-Identifier: GPL-2.0
#include "run/progress.h"

#include <algorithm>
#include <mutex>

#include "machine/cpu_control.h"

namespace cpuhp {
namespace {

std::string Ms(uint64_t ns) {
  char b[32];
  snprintf(b, sizeof(b), "%.3f", static_cast<double>(ns) / 1e6);
  return b;
}

// "-" before the first successful operation of a direction: 0.000 ms
// would read as a measurement.
std::string P99(const Histogram& h) {
  return h.count() ? Ms(h.PercentileNs(99)) + " ms" : "-";
}

// The line on the terminal, for the log sink. g_mu orders the main thread's
// redraws against log lines from other threads (the stuck-operation
// watchdog), so neither lands inside the other.
std::mutex g_mu;
ProgressLine* g_active = nullptr;

class ProgressAwareSink : public spdlog::sinks::sink {
 public:
  explicit ProgressAwareSink(std::shared_ptr<spdlog::sinks::sink> inner)
      : inner_(std::move(inner)) {}
  void log(const spdlog::details::log_msg& msg) override {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_active)
      g_active->ClearLocked();
    inner_->log(msg);
  }
  void flush() override { inner_->flush(); }
  void set_pattern(const std::string& pattern) override { inner_->set_pattern(pattern); }
  void set_formatter(std::unique_ptr<spdlog::formatter> f) override {
    inner_->set_formatter(std::move(f));
  }

 private:
  std::shared_ptr<spdlog::sinks::sink> inner_;
};

std::string Hms(uint64_t s) {
  char b[32];
  snprintf(b, sizeof(b), "%llu:%02llu:%02llu", static_cast<unsigned long long>(s / 3600),
           static_cast<unsigned long long>(s / 60 % 60), static_cast<unsigned long long>(s % 60));
  return b;
}

}  // namespace

ProgressLine::ProgressLine(bool enabled, uint64_t target_ops, uint64_t duration_ns, std::FILE* out)
    : enabled_(enabled),
      target_ops_(target_ops),
      duration_ns_(duration_ns),
      out_(out),
      start_ns_(MonotonicClock()->NowNs()) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (enabled_)
    g_active = this;
}

ProgressLine::~ProgressLine() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_active == this)
    g_active = nullptr;
}

std::string ProgressLine::Format(const RunStats& stats, uint64_t elapsed_ns,
                                 const ScheduleProgress* schedule,
                                 const uint64_t* simulated_ns) const {
  const uint64_t ops = stats.ops();
  const double secs = static_cast<double>(elapsed_ns) / 1e9;
  const double rate = secs > 0 ? static_cast<double>(ops) / secs : 0;  // wall: for the ETA
  const double sim_secs = simulated_ns ? static_cast<double>(*simulated_ns) / 1e9 : 0;
  std::string s = std::to_string(ops);
  if (target_ops_)
    s += "/" + std::to_string(target_ops_);
  char b[96];
  if (simulated_ns)
    snprintf(b, sizeof(b), " ops  %.3f s simulated, %.1f ops/s simulated", sim_secs,
             sim_secs > 0 ? static_cast<double>(ops) / sim_secs : 0);
  else
    snprintf(b, sizeof(b), " ops  %.1f ops/s", rate);
  s += b;
  s += "  p99 offline " + P99(stats.by_direction(Direction::kOffline)) + " online " +
       P99(stats.by_direction(Direction::kOnline));
  if (stats.failed_ops())
    s += "  errors " + std::to_string(stats.failed_ops());
  // ETA from whichever limit comes first.
  double eta = -1;
  if (target_ops_ && rate > 0)
    eta = static_cast<double>(target_ops_ - std::min(ops, target_ops_)) / rate;
  if (schedule && schedule->total) {
    s = schedule->label + "  " + s;
    // The schedule's own end: its measured operations to go at the rate of
    // those done so far.
    if (schedule->done && eta < 0)
      eta = secs *
            static_cast<double>(schedule->total - std::min(schedule->done, schedule->total)) /
            static_cast<double>(schedule->done);
  }
  if (duration_ns_) {
    // The duration counts the sim clock on sim: its time left, at the
    // simulated seconds per wall second so far, in wall time.
    const uint64_t used = simulated_ns ? *simulated_ns : elapsed_ns;
    double left = static_cast<double>(duration_ns_ - std::min(duration_ns_, used)) / 1e9;
    if (simulated_ns)
      left = sim_secs > 0 ? left * secs / sim_secs : -1;
    if (left >= 0)
      eta = eta < 0 ? left : std::min(eta, left);
  }
  if (eta >= 0)
    s += "  ETA " + Hms(static_cast<uint64_t>(eta + 0.5));
  return simulated_ns ? "SIMULATED  " + s : s;
}

void ProgressLine::Update(const RunStats& stats, const ScheduleProgress* schedule) {
  if (!enabled_)
    return;
  const uint64_t now = MonotonicClock()->NowNs();
  std::lock_guard<std::mutex> lock(g_mu);
  if (drawn_ && now - last_draw_ns_ < 500000000ull)
    return;
  const uint64_t simulated_ns = sim_clock_ ? sim_clock_->NowNs() - sim_zero_ns_ : 0;
  const std::string line =
      Format(stats, now - start_ns_, schedule, sim_clock_ ? &simulated_ns : nullptr);
  last_draw_ns_ = now;
  drawn_ = true;
  std::fprintf(out_, "\r%s\x1b[K", line.c_str());
  std::fflush(out_);
}

void ProgressLine::Clear() {
  std::lock_guard<std::mutex> lock(g_mu);
  ClearLocked();
}

void ProgressLine::ClearLocked() {
  if (enabled_ && drawn_) {
    std::fprintf(out_, "\r\x1b[K");
    std::fflush(out_);
    drawn_ = false;
  }
}

std::shared_ptr<spdlog::sinks::sink> NewProgressAwareSink(
    std::shared_ptr<spdlog::sinks::sink> inner) {
  return std::make_shared<ProgressAwareSink>(std::move(inner));
}

void ProgressLine::Finish() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (enabled_ && drawn_) {
    std::fprintf(out_, "\r\x1b[K");
    std::fflush(out_);
  }
}

}  // namespace cpuhp
