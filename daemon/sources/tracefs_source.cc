// SPDX-License-Identifier: GPL-2.0
#include "sources/tracefs_source.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <system_error>

#include <spdlog/spdlog.h>

#include "machine/cpu_control.h"
#include "sources/trace_instance.h"

namespace cpuhp {

TracefsSource::TracefsSource(std::string sysfs_root, std::string tracefs_root)
    : sysfs_root_(std::move(sysfs_root)),
      tracefs_(std::move(tracefs_root)),
      comms_([](int pid) { return Comm(std::to_string(pid)); }) {}

TracefsSource::~TracefsSource() {
  StopDrainer();
  ReleaseInstance();
}

bool TracefsSource::Start(std::string* why) {
  // The state table first: without it nothing can be named, and a fake or
  // foreign sysfs root must not lead to mounting anything.
  HotplugStates states;
  if (!ReadHotplugStates(sysfs_root_, &states, why))
    return false;
  if (tracefs_.empty()) {
    tracefs_ = FindTracefs();
    if (tracefs_.empty()) {
      // systemd mounts it at boot; a minimal system may not have.
      if (mount("nodev", kDefaultTracefs, "tracefs", 0, nullptr) != 0) {
        *why = std::string("tracefs is not mounted and mounting it at ") + kDefaultTracefs +
               " failed: " + strerror(errno);
        return false;
      }
      tracefs_ = kDefaultTracefs;
      mounted_by_us_ = true;
      spdlog::info("mounted tracefs at {} (it was not mounted; it stays mounted)", tracefs_);
    }
  }
  for (const char* ev : kCpuhpEvents) {
    if (!IsDir(tracefs_ + "/events/cpuhp/" + ev)) {
      *why = tracefs_ + "/events/cpuhp/" + ev + " is missing: this kernel has no cpuhp tracepoints";
      return false;
    }
  }
  std::vector<std::string> errs;
  stale_removed_ = RemoveStaleTraceInstances(tracefs_, &errs);
  for (const std::string& n : stale_removed_)
    spdlog::warn("removed tracefs instance {} left by a run that did not finish", n);
  for (const std::string& e : errs)
    spdlog::warn("{}", e);

  if (!OpenInstance(why))
    return false;
  if (!SetUpReader(why)) {
    ReleaseInstance();
    return false;
  }
  joiner_ = std::make_unique<TraceJoiner>(std::move(states), 1);
  ops_.reserve(4096);
  batch_.reserve(4096);
  // A drain is asked for once a quarter of the ring's operations ended (one
  // CPU's): room for half of one CPU's ring, before the timed writes.
  const size_t drain_events = buffer_kb_ * 1024 / kRingBytesPerEvent / 2;
  raw_->Reserve(drain_events);
  feed_.Reserve(drain_events);
  joiner_->Reserve(drain_events / 2);  // a step: an enter and its exit

  last_drain_ns_ = last_request_ns_ = MonotonicClock()->NowNs();
  try {
    drainer_ = std::thread(&TracefsSource::DrainerLoop, this);
  } catch (const std::system_error& e) {
    spdlog::warn("tracepoints: no drainer thread ({}): the run drains between its writes",
                 e.what());
  }
  return true;
}

// The kept instance, under flock(2) on its directory; when another run holds
// it, an instance of this run's own (see trace_instance.h).
bool TracefsSource::OpenInstance(std::string* why) {
  const std::string kept = tracefs_ + "/instances/" + kKeptInstance;
  const bool made = mkdir(kept.c_str(), 0700) == 0;
  const int fd = open(kept.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0) {
    instance_ = kept;
    kept_fd_ = fd;
    kept_found_ = !made;
    return true;
  }
  if (fd >= 0)
    close(fd);
  instance_ = tracefs_ + "/instances/" + kInstancePrefix + std::to_string(getpid());
  if (mkdir(instance_.c_str(), 0700) != 0) {
    *why = instance_ + ": cannot create the tracefs instance: " + strerror(errno);
    instance_.clear();
    return false;
  }
  instance_created_ = true;
  return true;
}

bool TracefsSource::SetUpReader(std::string* why) {
  std::string err, clock;
  // A kept instance is stopped between runs, unless a run was killed.
  if (kept_found_ && !WriteFile(instance_ + "/tracing_on", "0", &err)) {
    *why = err;
    return false;
  }
  // "mono" is CLOCK_MONOTONIC: the clock of OpRecord::start_ns. Setting it
  // resets the buffers behind an RCU grace period: only when it is not set.
  if ((!ReadText(instance_ + "/trace_clock", &clock) ||
       clock.find("[mono]") == std::string::npos) &&
      !WriteFile(instance_ + "/trace_clock", "mono", &err)) {
    *why = err;
    return false;
  }
  raw_ = std::make_unique<RawCpuhpReader>();
  const std::string name = instance_.substr(instance_.rfind('/') + 1);
  if (!raw_->Open(tracefs_, name, why))
    return false;
  const ssize_t kb = tracefs_instance_get_buffer_size(raw_->instance, 0);
  buffer_kb_ = kb > 0 ? static_cast<size_t>(kb) : 0;
  if (buffer_kb_ < kMinBufferKb) {
    if (tracefs_instance_set_buffer_size(raw_->instance, kMinBufferKb, -1) != 0) {
      *why = instance_ + "/buffer_size_kb: cannot set " + std::to_string(kMinBufferKb) + ": " +
             strerror(errno);
      return false;
    }
    buffer_kb_ = kMinBufferKb;
  }
  ring_ops_ = RingCapacityOps(buffer_kb_, EventsPerOp());
  if (kept_found_) {  // what a killed run left is not this run's
    raw_->Read();
    raw_->events.clear();
    raw_->missed = 0;
  }
  stats_base_ = ReadCpuStats(instance_);
  for (const char* ev : kCpuhpEvents) {
    if (tracefs_event_enable(raw_->instance, "cpuhp", ev) != 0) {
      *why = instance_ + "/events/cpuhp/" + ev + "/enable: cannot enable: " + strerror(errno);
      return false;
    }
  }
  if (!WriteFile(instance_ + "/tracing_on", "1", &err)) {
    *why = err;
    return false;
  }
  ready_ = true;
  return true;
}

// The names of the callbacks among the events still in the buffer, from the
// kernel's own text of the same events (the `trace` file does not consume).
void TracefsSource::LearnNamesFromText(const std::string& text) {
  for (auto& [addr, name] : CallbackNamesFromText(text, raw_->events))
    feed_.fun_names.emplace(addr, std::move(name));
}
void TracefsSource::ResolveFromKallsyms() {
  if (NamesFromKallsyms(raw_->events, &feed_.fun_names))
    ++kallsyms_lookups_;
}

size_t RingCapacityOps(size_t buffer_kb, size_t events_per_op) {
  const size_t per_op = std::max<size_t>(events_per_op, 1) * TracefsSource::kRingBytesPerEvent;
  return std::max<size_t>(buffer_kb * 1024 / per_op, 1);
}

void TracefsSource::Drain(bool final) {
  std::lock_guard<std::mutex> drain_lock(drain_mu_);
  DrainLocked(final);
}

void TracefsSource::DrainLocked(bool final) {
  if (!raw_)
    return;
  // CPU time of this thread: what a drain costs, not how long it waited for a CPU.
  const uint64_t cpu0 = CpuTimeNs(/*thread=*/true);
  std::vector<OpRecord>& batch = batch_;
  batch.clear();
  {
    std::lock_guard<std::mutex> l(mu_);
    batch.swap(ops_);  // both keep their capacity: OpEnd's push_back never grows
  }
  ++drains_;
  // Every event up to the end of the last write taken is in the buffers;
  // later ones may belong to the write in flight and are held back, so the
  // joiner sees each task's events in order.
  uint64_t cutoff = 0;
  for (const OpRecord& rec : batch) {
    cutoff = std::max(cutoff, rec.start_ns + rec.duration_ns);
    (rec.dir == Direction::kOffline ? batch_offline_ : batch_online_) = true;
  }
  if (final)
    cutoff = UINT64_MAX;
  raw_->events.clear();
  const bool learn = !names_learned_;
  std::string text;
  if (learn)  // before the raw read consumes the events
    ReadText(instance_ + "/trace", &text);
  raw_->Read();
  if (learn) {
    LearnNamesFromText(text);
    // Learned once both directions' callbacks have been seen.
    names_learned_ = batch_offline_ && batch_online_;
  }
  ResolveFromKallsyms();
  joiner_->AddLost(raw_->missed);
  raw_->missed = 0;
  if (raw_->read_errno != 0) {
    spdlog::warn("{}/per_cpu: reading trace_pipe_raw failed: {} (counted as lost events)",
                 instance_, strerror(raw_->read_errno));
    raw_->read_errno = 0;
  }
  // The busiest CPU's events per operation, from drains of a few writes
  // (the events of the one in flight are read too: at most 1/4 more).
  if (batch.size() >= 4) {
    const size_t most = raw_->most_from_one_cpu;
    events_per_op_ = std::max(events_per_op_, (most + batch.size() - 1) / batch.size());
  }
  feed_.Feed(&raw_->events, cutoff, &comms_, joiner_.get());
  joiner_->EndOperations(batch);
  drain_cpu_ns_ += CpuTimeNs(/*thread=*/true) - cpu0;
  std::lock_guard<std::mutex> l(mu_);
  last_drain_ns_ = MonotonicClock()->NowNs();
  ops_in_ring_ = ops_.size();  // ended after this drain took its batch
  ring_ops_ = RingCapacityOps(buffer_kb_, EventsPerOp());
}

void TracefsSource::DrainerLoop() {
  std::string policy = LowerDrainerPriority(drainer_cpus_, &drainer_sched_);
  // Published last: BoostDrainer reads drainer_sched_ once it sees the tid.
  drainer_tid_ = gettid();
  std::unique_lock<std::mutex> l(mu_);
  drainer_policy_ = policy;
  for (;;) {
    cv_.wait(l, [this] { return drain_wanted_ || drainer_stop_; });
    if (drainer_stop_)
      return;
    drain_wanted_ = false;
    l.unlock();
    Drain(false);
    l.lock();
  }
}

void TracefsSource::BoostDrainer(bool on) {
  const pid_t tid = drainer_tid_;
  if (tid <= 0)
    return;
  if (on)
    ++drainer_boosts_;
  BoostDrainerThread(tid, drainer_sched_, on);
}

void TracefsSource::StopDrainer() {
  if (!drainer_.joinable())
    return;
  {
    std::lock_guard<std::mutex> l(mu_);
    drainer_stop_ = true;
  }
  cv_.notify_one();
  drainer_.join();
}

void TracefsSource::OpEnd(const OpRecord& rec) {
  if (!joiner_)
    return;
  const uint64_t end_ns = rec.start_ns + rec.duration_ns;
  bool here = false;
  {
    std::lock_guard<std::mutex> l(mu_);
    ops_.push_back(rec);
    ++ops_in_ring_;
    ++ops_since_request_;
    (rec.dir == Direction::kOffline ? saw_offline_ : saw_online_) = true;
    const bool names = !names_asked_ && saw_offline_ && saw_online_;
    const bool ring_half = ops_in_ring_ >= std::max<size_t>(ring_ops_ / 2, 1);
    if (!names && !ring_half && ops_since_request_ < ring_ops_ / 4 &&
        end_ns - std::min(end_ns, last_request_ns_) < kDrainIntervalNs)
      return;
    names_asked_ = names_asked_ || names;
    last_request_ns_ = end_ns;
    ops_since_request_ = 0;
    if (!drainer_.joinable() || ring_half ||
        end_ns - std::min(end_ns, last_drain_ns_) >= kStarvedDrainNs) {
      here = true;  // no drainer, or it has not run for long
    } else {
      drain_wanted_ = true;
      cv_.notify_one();
    }
  }
  if (!here)
    return;
  // A drainer starved in the middle of a drain holds the lock: lend it normal
  // priority until it lets go, then drain here.
  std::unique_lock<std::mutex> drain_lock(drain_mu_, std::try_to_lock);
  if (!drain_lock.owns_lock()) {
    BoostDrainer(true);
    drain_lock.lock();
    BoostDrainer(false);
  }
  ++inline_drains_;
  DrainLocked(false);
}

void TracefsSource::ReadLostStats() {
  uint64_t overrun = 0, dropped = 0;
  nlohmann::json per_cpu = nlohmann::json::array();
  for (const auto& [cpu, now] : ReadCpuStats(instance_)) {
    // Counters of a kept instance run from its creation: this run's share.
    const auto base =
        stats_base_.count(cpu) ? stats_base_.at(cpu) : std::pair<uint64_t, uint64_t>();
    const uint64_t o = now.first - std::min(now.first, base.first);
    const uint64_t dr = now.second - std::min(now.second, base.second);
    overrun += o;
    dropped += dr;
    if (o || dr)
      per_cpu.push_back({{"cpu", cpu}, {"overrun", o}, {"dropped", dr}});
  }
  lost_ = {{"overrun", overrun},
           {"dropped", dropped},
           {"lost_markers", joiner_ ? joiner_->lost_markers() : 0},
           {"per_cpu", std::move(per_cpu)}};
}

void TracefsSource::Stop() {
  if (!joiner_)
    return;
  StopDrainer();
  Drain(true);
  joiner_->Finish();
  WriteFile(instance_ + "/tracing_on", "0", &remove_error_);
  ReadLostStats();
  ReleaseInstance();
  if (!remove_error_.empty())
    spdlog::error("{}", remove_error_);
}

void TracefsSource::ReleaseInstance() {
  raw_.reset();
  if (kept_fd_ >= 0) {
    const bool made_and_failed = !kept_found_ && !ready_;
    std::string err;
    if (made_and_failed) {  // an instance that never worked is not kept
      if (rmdir(instance_.c_str()) != 0)
        remove_error_ = instance_ + ": cannot remove the tracefs instance: " + strerror(errno);
    } else {
      // Silent until the next run: tracing off, the events disabled.
      bool ok = WriteFile(instance_ + "/tracing_on", "0", &err);
      for (const char* ev : kCpuhpEvents)
        ok = WriteFile(instance_ + "/events/cpuhp/" + ev + "/enable", "0", &err) && ok;
      if (!ok)
        remove_error_ = err + "; `cpuhp-stress restore` removes the instance";
    }
    close(kept_fd_);
    kept_fd_ = -1;
    return;
  }
  if (!instance_created_ || instance_removed_)
    return;
  // Retry: the kernel refuses while a reader of the instance is still
  // closing (EBUSY).
  for (int i = 0; i < 50; ++i) {
    if (rmdir(instance_.c_str()) == 0 || errno == ENOENT) {
      instance_removed_ = true;
      remove_error_.clear();
      return;
    }
    if (errno != EBUSY)
      break;
    usleep(10000);
  }
  remove_error_ = instance_ + ": cannot remove the tracefs instance: " + strerror(errno) +
                  "; `cpuhp-stress restore` removes it";
}

nlohmann::json TracefsSource::ReportJson() const {
  nlohmann::json j = joiner_ ? joiner_->stats().ToJson() : nlohmann::json::object();
  uint64_t lost_total = lost_.value("overrun", uint64_t{0}) + lost_.value("dropped", uint64_t{0}) +
                        lost_.value("lost_markers", uint64_t{0});
  nlohmann::json lost = lost_;
  lost["total"] = lost_total;
  j["tracefs"] = tracefs_;
  j["mounted_by_us"] = mounted_by_us_;
  j["instance"] = instance_;
  j["instance_removed"] = instance_removed_;
  j["instance_kept"] = instance_ == tracefs_ + "/instances/" + kKeptInstance;
  j["instance_reused"] = kept_found_;
  if (!remove_error_.empty())
    j["instance_error"] = remove_error_;
  j["stale_instances_removed"] = stale_removed_;
  j["reader"] = "trace_pipe_raw";
  j["trace_clock"] = "mono";
  j["timestamp_resolution_ns"] = 1;
  j["buffer_kb_per_cpu"] = buffer_kb_;
  j["drains"] = drains_;
  j["drain_cpu_ns"] = drain_cpu_ns_;
  j["inline_drains"] = inline_drains_;
  j["drainer_boosts"] = drainer_boosts_;
  j["drainer"] = drainer_policy_;
  j["kallsyms_lookups"] = kallsyms_lookups_;
  j["unnamed_callbacks"] = feed_.unnamed;
  j["events"] = joiner_ ? joiner_->EventsJson() : nlohmann::json::object();
  j["lost_events"] = std::move(lost);
  return j;
}

std::string TracepointsSummary(const nlohmann::json& section) {
  if (section.value("status", "") != "ok")
    return "kernel states (tracepoints): unavailable: " + section.value("reason", "") + "\n";
  std::string out = KernelStateStats::Summary(section, 10);
  const auto& lost = section["lost_events"];
  char line[200];
  std::snprintf(line, sizeof(line),
                "  %llu operations traced, %llu without events; lost events: %llu\n",
                static_cast<unsigned long long>(section.value("ops_with_steps", uint64_t{0})),
                static_cast<unsigned long long>(section.value("ops_without_steps", uint64_t{0})),
                static_cast<unsigned long long>(lost.value("total", uint64_t{0})));
  return out + line;
}

}  // namespace cpuhp
