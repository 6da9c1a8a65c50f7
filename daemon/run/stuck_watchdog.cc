// SPDX-License-Identifier: GPL-2.0
#include "run/stuck_watchdog.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

#include <spdlog/spdlog.h>

#include "util/systemd_glue.h"

namespace cpuhp {

std::string ReadKernelStackAt(const std::string& task_dir, std::string* why) {
  const std::string path = task_dir + "/stack";
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  std::string text;
  int err = fd < 0 ? errno : 0;
  if (fd >= 0) {
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
      if (n > 0)
        text.append(buf, static_cast<size_t>(n));
    if (n < 0)
      err = errno;
    close(fd);
  }
  // What failed, by its errno: the file exists only with CONFIG_STACKTRACE,
  // and since Linux 4.20 reading it needs CAP_SYS_ADMIN (root in a container
  // may lack it); a thread that is running, not blocked, has no frames to show.
  struct stat st;
  if (err == ENOENT && stat(task_dir.c_str(), &st) != 0)
    *why = task_dir + ": the thread has exited";
  else if (err == ENOENT)
    *why = path + ": no such file: the kernel was built without CONFIG_STACKTRACE";
  else if (err == EACCES || err == EPERM)
    *why = path + ": " + strerror(err) +
           ": reading a kernel stack needs CAP_SYS_ADMIN (in the initial user namespace)";
  else if (err)
    *why = path + ": " + strerror(err);
  else if (text.empty())
    *why = path + ": no frames: the thread was not blocked in the kernel when read";
  return err ? "" : text;
}

std::string ReadKernelStack(int tid, std::string* why) {
  return ReadKernelStackAt("/proc/" + std::to_string(getpid()) + "/task/" + std::to_string(tid),
                           why);
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
    const uint64_t took = now_ns > reported_start_ns_ ? now_ns - reported_start_ns_ : 0;
    if (reported_pos_ < records_.size())
      records_[reported_pos_]["returned_after_ns"] = took;
    spdlog::warn("stuck write returned after about {:.1f} s", static_cast<double>(took) / 1e9);
    reported_start_ns_ = 0;
  }
  // `now_ns` was read before `start` was loaded: a write that began in
  // between started after "now", and has not been stuck for anything yet.
  if (!start || start == reported_start_ns_ || start > now_ns || now_ns - start < timeout_ns_)
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
  int hp_state = -1;
  std::string hp_name;
  std::string in_state;
  if (state_reader_ && state_reader_(cpu, &hp_state, &hp_name)) {
    rec["hotplug_state"] = hp_state;
    rec["hotplug_state_name"] = hp_name;
    in_state =
        " in state " + std::to_string(hp_state) + (hp_name.empty() ? "" : " (" + hp_name + ")");
  }
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
                           std::to_string(index) + ")" + in_state + " has not returned after " +
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
