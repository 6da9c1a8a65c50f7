// SPDX-License-Identifier: GPL-2.0
// The "tracepoints" timing source: the kernel's cpuhp_enter /
// cpuhp_multi_enter / cpuhp_exit events, read from a tracefs instance of our
// own, turned into per-state and per-phase timings of each operation.
//
// Its parts: the instance's life (trace_instance.h), the raw reading and the
// drainer thread (trace_drainer.h), the raw events made TraceEvents with
// their names (trace_convert.h), and the join into operations (trace_join.h).
// This file wires them: when to drain and who, and the report section.
//
// Who drains: a thread of its own at SCHED_IDLE (nice 19 where the policy is
// refused), pinned to the CPUs the run does not toggle when there are any,
// woken by OpEnd (a push under a mutex). A drain inline in OpEnd cost the
// run ~8 ms every second on the writer's own path. The drainer runs while
// the next operation is in flight, so it feeds the joiner only the events up
// to the end of the last operation it took (all of them are in the buffers
// once that write has returned) and keeps the later ones for the next drain.
// Where nothing is idle (a CPU hog on every CPU, or a 2-CPU host whose cpu1
// hotplugs at ~650 writes/s: cpu0 never idles) SCHED_IDLE can starve, even in
// the middle of a drain, holding its lock: when no drain has finished for
// kStarvedDrainNs, or the operations since the last one fill half the ring
// (RingCapacityOps: 1410 KB per CPU holds ~850 writes' events on the
// writer's CPU there, 1.3 s at that rate; a drain is asked for at a quarter),
// OpEnd drains itself, and the report counts those drains; a drainer starved
// while it holds the lock is first lent normal priority until it lets go
// (BoostDrainer: std::mutex has no priority inheritance; `drainer_boosts` in
// the report). Without the wait, a 10 s run on such a host drained only at
// the end and lost 196 596 events; with the 2 s limit alone, a loaded CI
// run still lost the oldest enters (two exits without their enter).
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "sources/timing_source.h"
#include "sources/trace_convert.h"
#include "sources/trace_drainer.h"
#include "sources/trace_join.h"

namespace cpuhp {

// How many operations' events the ring holds on its busiest CPU: buffer_kb
// per CPU at kRingBytesPerEvent, events_per_op on that CPU (at least 1 op).
size_t RingCapacityOps(size_t buffer_kb, size_t events_per_op);

class TracefsSource : public TimingSource {
 public:
  // tracefs_root "": find tracefs in /proc/mounts, else mount it at
  // /sys/kernel/tracing. Tests pass a directory.
  explicit TracefsSource(std::string sysfs_root, std::string tracefs_root = "");
  ~TracefsSource() override;

  std::string name() const override { return "tracepoints"; }
  bool Start(std::string* why_unavailable) override;
  void OpBegin(const Operation&, uint64_t) override {}
  void OpEnd(const OpRecord& rec) override;
  void Stop() override;
  nlohmann::json ReportJson() const override;

  const std::string& instance_path() const { return instance_; }
  // The CPUs the drainer may run on (the online ones the run does not
  // toggle); empty: no pinning. Before Start.
  void set_drainer_cpus(std::vector<int> cpus) { drainer_cpus_ = std::move(cpus); }

  static constexpr uint64_t kDrainIntervalNs = 1000000000;
  static constexpr uint64_t kStarvedDrainNs = 2 * kDrainIntervalNs;
  static constexpr size_t kMinBufferKb = 1024;
  // Ring space per event, rounded up (an enter is 32 bytes with its header
  // on x86-64 6.18; page headers and time extends on top), and the events
  // per operation on the busiest CPU assumed before a drain has counted
  // them (~53 there).
  static constexpr size_t kRingBytesPerEvent = 48;
  static constexpr size_t kAssumedEventsPerOp = 128;

 private:
  bool SetUpReader(std::string* why);
  // Takes the ended operations, reads the buffers, joins. `final`: no
  // operation is in flight (every event may be fed). Serialised by drain_mu_.
  void Drain(bool final);
  void DrainLocked(bool final);  // drain_mu_ held
  void DrainerLoop();
  void StopDrainer();
  void LearnNamesFromText(const std::string& text);
  void ResolveFromKallsyms();
  bool OpenInstance(std::string* why);
  void ReadLostStats();
  void ReleaseInstance();

  std::string sysfs_root_;
  std::string tracefs_;
  bool mounted_by_us_ = false;
  std::string instance_;
  bool instance_created_ = false;  // ours alone: removed at the end
  bool instance_removed_ = false;
  int kept_fd_ = -1;         // the kept instance's directory, flocked
  bool kept_found_ = false;  // the kept instance existed before this run
  bool ready_ = false;       // set up and recording
  std::map<int, std::pair<uint64_t, uint64_t>> stats_base_;  // cpu -> overrun, dropped
  std::string remove_error_;
  std::unique_ptr<RawCpuhpReader> raw_;
  std::unique_ptr<TraceJoiner> joiner_;
  // Shared between OpEnd and the drainer, under mu_.
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<OpRecord> ops_;    // ended, not yet joined (joined at each drain)
  std::vector<OpRecord> batch_;  // the drain's, swapped with ops_ (drain_mu_)
  bool saw_offline_ = false, saw_online_ = false;
  bool names_asked_ = false;  // the names drain was requested
  bool drain_wanted_ = false, drainer_stop_ = false;
  uint64_t last_request_ns_ = 0;
  uint64_t last_drain_ns_ = 0;  // end of the last finished drain
  // Operations whose events may still be in the ring (ended since the last
  // finished drain took its batch), and how many fit in it.
  size_t ops_in_ring_ = 0;
  size_t ops_since_request_ = 0;
  size_t ring_ops_ = 0;
  // The drain itself, under drain_mu_ (one drain at a time).
  std::mutex drain_mu_;
  RawEventFeed feed_;  // held events, callback names
  TaskNames comms_;    // pid -> task name, from /proc
  bool names_learned_ = false;
  bool batch_offline_ = false, batch_online_ = false;  // directions drained so far
  uint64_t drains_ = 0;
  uint64_t drain_cpu_ns_ = 0;  // CPU time of the drains, whichever thread
  uint64_t inline_drains_ = 0;
  size_t events_per_op_ = 0;  // busiest CPU, the most a drain counted; 0: none yet
  size_t EventsPerOp() const { return events_per_op_ ? events_per_op_ : kAssumedEventsPerOp; }
  // The drainer thread.
  std::thread drainer_;
  std::vector<int> drainer_cpus_;
  std::string drainer_policy_ = "inline";  // what the drainer got
  std::atomic<pid_t> drainer_tid_{0};
  int drainer_sched_ = -1;  // SCHED_IDLE, or -1: nice 19 (or nothing)
  uint64_t drainer_boosts_ = 0;
  void BoostDrainer(bool on);
  uint64_t kallsyms_lookups_ = 0;
  size_t buffer_kb_ = 0;
  nlohmann::json lost_ = nlohmann::json::object();
  std::vector<std::string> stale_removed_;
};

// Lines for the human summary: the top states by self time, lost events, or
// why the source was unavailable.
std::string TracepointsSummary(const nlohmann::json& section);

}  // namespace cpuhp
