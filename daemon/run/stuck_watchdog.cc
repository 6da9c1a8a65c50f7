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

#include "machine/cpu_control.h"
#include "stats/op_record.h"
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

void StuckWatchdog::set_on_stuck(std::function<void(const std::string&)> f) {
  std::lock_guard<std::mutex> l(mu_);
  on_stuck_ = std::move(f);
}

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
  std::function<void(const std::string&)> give_up;
  std::string give_up_line;
  {
    std::lock_guard<std::mutex> l(mu_);
    // The reported call has returned: note how long it took, as seen from here.
    if (reported_start_ns_ && start != reported_start_ns_) {
      const uint64_t took = now_ns > reported_start_ns_ ? now_ns - reported_start_ns_ : 0;
      if (reported_pos_ < records_.size())
        records_[reported_pos_]["returned_after_ns"] = took;
      spdlog::warn("stuck call returned after about {:.1f} s", static_cast<double>(took) / 1e9);
      reported_start_ns_ = 0;
    }
    // `now_ns` was read before `start` was loaded: a call that began in
    // between started after "now", and has not been stuck for anything yet.
    if (!start || start > now_ns)
      return;
    const uint64_t stuck_ns = now_ns - start;
    // The process is alive and waiting on the kernel: systemd's watchdog is
    // fed while it waits, and the give-up below bounds the wait instead.
    if (keepalive_ && stuck_ns >= kKeepaliveAfterNs)
      keepalive_();
    if (start == reported_start_ns_) {
      if (give_up_ns_ && stuck_ns >= give_up_ns_ && !gave_up_) {
        gave_up_ = true;
        give_up = on_give_up_;
        give_up_line = "GIVING UP: " + reported_what_ + " has not returned after " +
                       std::to_string(stuck_ns / 1000000000ull) + " s (stuck_give_up " +
                       std::to_string(give_up_ns_ / 1000000000ull) + " s)";
      }
    } else if (stuck_ns >= timeout_ns_) {
      Report(start, stuck_ns);
    }
  }
  if (give_up) {
    spdlog::error("{}", give_up_line);
    give_up(give_up_line);
  }
}

void StuckWatchdog::Report(uint64_t start, uint64_t stuck_ns) {
  const int cpu = in_flight_->cpu.load(std::memory_order_relaxed);
  const Direction dir = static_cast<Direction>(in_flight_->dir.load(std::memory_order_relaxed));
  const uint64_t index = in_flight_->index.load(std::memory_order_relaxed);
  const int tid = in_flight_->tid.load(std::memory_order_relaxed);
  const auto call = static_cast<SysfsCall>(in_flight_->call.load(std::memory_order_relaxed));
  const char* list = in_flight_->list.load(std::memory_order_relaxed);
  const bool op = index != InFlight::kNoIndex;
  const std::string what = DescribeCall(call, cpu, dir == Direction::kOnline, list);
  nlohmann::json rec = {{"call", SysfsCallName(call)},
                        {"what", what},
                        {"timeout_ns", timeout_ns_},
                        {"detected_after_ns", stuck_ns}};
  if (cpu >= 0)
    rec["cpu"] = cpu;
  if (op)
    rec["index"] = index;
  if (call == SysfsCall::kOnlineWrite)
    rec["dir"] = DirectionName(dir);
  std::string in_state;
  int hp_state = -1;
  std::string hp_name;
  if (cpu >= 0 && state_reader_ && state_reader_(cpu, &hp_state, &hp_name)) {
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
  reported_what_ = what + (op ? " (op " + std::to_string(index) + ")" : "");
  const std::string line = "STUCK: " + reported_what_ + in_state + " has not returned after " +
                           std::to_string(stuck_ns / 1000000000ull) + " s";
  {
    ScopedLogFields f({cpu,
                       call != SysfsCall::kOnlineWrite ? nullptr
                       : dir == Direction::kOnline     ? "online"
                                                       : "offline",
                       -1, op ? static_cast<int64_t>(index) : -1});
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
  // The checkpoint's records come first; any this process made before it
  // read them (a stuck read at start-up) follow, under the same cap.
  const size_t before = records.size();
  for (nlohmann::json& r : records_) {
    if (records.size() < kMaxRecords)
      records.push_back(std::move(r));
    else
      ++dropped;
  }
  if (reported_pos_ != SIZE_MAX)
    reported_pos_ = reported_pos_ + before < records.size() ? reported_pos_ + before : SIZE_MAX;
  records_ = std::move(records);
  dropped_ += dropped;
}

uint64_t StuckWatchdog::dropped() const {
  std::lock_guard<std::mutex> l(mu_);
  return dropped_;
}

}  // namespace cpuhp
