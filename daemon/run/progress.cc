// SPDX-License-Identifier: GPL-2.0
#include "run/progress.h"

#include <algorithm>

#include "machine/cpu_control.h"

namespace cpuhp {
namespace {

std::string Ms(uint64_t ns) {
  char b[32];
  snprintf(b, sizeof(b), "%.3f", static_cast<double>(ns) / 1e6);
  return b;
}

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
      start_ns_(MonotonicClock()->NowNs()) {}

std::string ProgressLine::Format(const RunStats& stats, uint64_t elapsed_ns) const {
  const uint64_t ops = stats.ops();
  const double secs = static_cast<double>(elapsed_ns) / 1e9;
  const double rate = secs > 0 ? static_cast<double>(ops) / secs : 0;
  std::string s = std::to_string(ops);
  if (target_ops_)
    s += "/" + std::to_string(target_ops_);
  char b[64];
  snprintf(b, sizeof(b), " ops  %.1f ops/s", rate);
  s += b;
  s += "  p99 offline " + Ms(stats.by_direction(Direction::kOffline).PercentileNs(99)) +
       " ms online " + Ms(stats.by_direction(Direction::kOnline).PercentileNs(99)) + " ms";
  if (stats.failed_ops())
    s += "  errors " + std::to_string(stats.failed_ops());
  // ETA from whichever limit comes first.
  double eta = -1;
  if (target_ops_ && rate > 0)
    eta = static_cast<double>(target_ops_ - std::min(ops, target_ops_)) / rate;
  if (duration_ns_) {
    double left = static_cast<double>(duration_ns_ - std::min(duration_ns_, elapsed_ns)) / 1e9;
    eta = eta < 0 ? left : std::min(eta, left);
  }
  if (eta >= 0)
    s += "  ETA " + Hms(static_cast<uint64_t>(eta + 0.5));
  return s;
}

void ProgressLine::Update(const RunStats& stats) {
  if (!enabled_)
    return;
  const uint64_t now = MonotonicClock()->NowNs();
  if (drawn_ && now - last_draw_ns_ < 500000000ull)
    return;
  last_draw_ns_ = now;
  drawn_ = true;
  std::fprintf(out_, "\r%s\x1b[K", Format(stats, now - start_ns_).c_str());
  std::fflush(out_);
}

void ProgressLine::Finish() {
  if (enabled_ && drawn_) {
    std::fprintf(out_, "\r\x1b[K");
    std::fflush(out_);
  }
}

}  // namespace cpuhp
