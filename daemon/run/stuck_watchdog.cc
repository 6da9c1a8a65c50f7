// SPDX-License-Identifier: GPL-2.0
#include "run/stuck_watchdog.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

#include "util/systemd_glue.h"

namespace cpuhp {

std::string ReadKernelStack(int tid, std::string* why) {
  const std::string path =
      "/proc/" + std::to_string(getpid()) + "/task/" + std::to_string(tid) + "/stack";
  std::ifstream in(path);
  if (!in) {
    *why = path + ": " + strerror(errno);
    return "";
  }
  std::stringstream s;
  s << in.rdbuf();
  if (s.str().empty())
    *why = path + ": empty (the kernel hides it without CAP_SYS_ADMIN)";
  return s.str();
}

StuckWatchdog::StuckWatchdog(InFlight* in_flight, uint64_t timeout_ns,
                             std::function<void(const std::string&)> on_stuck)
    : in_flight_(in_flight), timeout_ns_(timeout_ns), on_stuck_(std::move(on_stuck)) {}

StuckWatchdog::~StuckWatchdog() {
  Stop();
}

void StuckWatchdog::Start() {
  if (timeout_ns_ == 0 || thread_.joinable())
    return;
  thread_ = std::thread([this] { Loop(); });
}

void StuckWatchdog::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
    Poll(MonotonicClock()->NowNs());  // a reported write that returned since the last poll
  }
}

void StuckWatchdog::Loop() {
  // Poll at a quarter of the timeout, between 10 ms and 1 s.
  const uint64_t period_ns = std::clamp<uint64_t>(timeout_ns_ / 4, 10000000ull, 1000000000ull);
  std::unique_lock<std::mutex> l(mu_);
  while (!stop_) {
    cv_.wait_for(l, std::chrono::nanoseconds(period_ns));
    if (stop_)
      break;
    l.unlock();
    Poll(MonotonicClock()->NowNs());
    l.lock();
  }
}

void StuckWatchdog::Poll(uint64_t now_ns) {
  const uint64_t start = in_flight_->start_wall_ns.load(std::memory_order_acquire);
  std::lock_guard<std::mutex> l(mu_);
  // The reported write has returned: note how long it took, as seen from here.
  if (reported_start_ns_ && start != reported_start_ns_) {
    if (reported_pos_ < records_.size())
      records_[reported_pos_]["returned_after_ns"] = now_ns - reported_start_ns_;
    spdlog::warn("stuck write returned after about {:.1f} s",
                 static_cast<double>(now_ns - reported_start_ns_) / 1e9);
    reported_start_ns_ = 0;
  }
  if (!start || start == reported_start_ns_ || now_ns - start < timeout_ns_)
    return;
  const int cpu = in_flight_->cpu.load(std::memory_order_relaxed);
  const Direction dir = static_cast<Direction>(in_flight_->dir.load(std::memory_order_relaxed));
  const uint64_t index = in_flight_->index.load(std::memory_order_relaxed);
  const int tid = in_flight_->tid.load(std::memory_order_relaxed);
  const uint64_t stuck_ns = now_ns - start;
  nlohmann::json rec = {{"index", index},
                        {"cpu", cpu},
                        {"dir", DirectionName(dir)},
                        {"timeout_ns", timeout_ns_},
                        {"detected_after_ns", stuck_ns}};
  std::string why;
  std::string stack = ReadKernelStack(tid, &why);
  if (!stack.empty())
    rec["stack"] = stack;
  else
    rec["stack_unavailable"] = why;
  if (records_.size() < kMaxRecords) {
    records_.push_back(std::move(rec));
    reported_pos_ = records_.size() - 1;
  } else {
    ++dropped_;
    reported_pos_ = SIZE_MAX;
  }
  reported_start_ns_ = start;
  const std::string dir_name(DirectionName(dir));
  const std::string line = "STUCK: cpu" + std::to_string(cpu) + " " + dir_name + " (op " +
                           std::to_string(index) + ") has not returned after " +
                           std::to_string(stuck_ns / 1000000000ull) + " s";
  {
    ScopedLogFields f(
        {cpu, dir == Direction::kOnline ? "online" : "offline", -1, static_cast<int64_t>(index)});
    spdlog::error("{}{}", line,
                  stack.empty() ? " (kernel stack: " + why + ")" : "; kernel stack:\n" + stack);
  }
  if (on_stuck_)
    on_stuck_(line);
}

nlohmann::json StuckWatchdog::Records() const {
  std::lock_guard<std::mutex> l(mu_);
  return records_;
}

void StuckWatchdog::SetRecords(nlohmann::json records, uint64_t dropped) {
  std::lock_guard<std::mutex> l(mu_);
  records_ = std::move(records);
  dropped_ = dropped;
}

uint64_t StuckWatchdog::dropped() const {
  std::lock_guard<std::mutex> l(mu_);
  return dropped_;
}

}  // namespace cpuhp
