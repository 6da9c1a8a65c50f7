// SPDX-License-Identifier: GPL-2.0
// The "tracepoints" timing source: the kernel's cpuhp_enter /
// cpuhp_multi_enter / cpuhp_exit events, read from a tracefs instance of our
// own, turned into per-state and per-phase timings of each operation.
//
// Reader: the instance's per-CPU trace_pipe_raw, in binary, decoded with
// the event formats the kernel publishes (libtracefs + libtraceevent, the
// libraries under trace-cmd and rtla), and only between operations: nothing
// blocks on the pipe, so the kernel wakes no reader while a CPU goes down or
// up. Issue 17 measured the old reader (the text trace_pipe drained after
// every write) at 0.66-0.72x the bare write loop on a 2-CPU host: the kernel
// formatted ~90 lines per write (a %ps symbol lookup each) on the CPU that
// stop_machine and the hotplug kworkers need. Each operation's record is
// kept (OpEnd) and the events are joined to it after a drain, by timestamp
// and CPU, exactly as before. Drains: after the first offline and online
// (to learn the callbacks' names, below), then at most once per
// kDrainIntervalNs, and at the end; the buffer (at least kMinBufferKb per
// CPU) holds several intervals of events, and whatever the ring still loses
// is counted (per_cpu/cpuN/stats and the pages' missed-events flags) and
// fails the report's tracepoints_no_lost_events check.
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
//
// Callback names: the raw events carry the callback's address. The first
// drain reads the instance's text `trace` file (not consuming, so the same
// events are still there for the raw read) and takes each address's name
// from the kernel's own %ps of the same event; an address first seen later
// is looked up in /proc/kallsyms (a full read costs 50-250 ms here, so it is
// the fallback, not the way).
//
// The dying CPU: ring buffers exist for every possible CPU, online or not,
// and the write does not return before cpuhp/N's last callback has exited,
// so a drain after a write sees the dying CPU's events too.
//
// Instance: instances/cpuhp-stress-kept, made once and kept between runs.
// A new instance starts on the "local" clock, and switching it to "mono"
// resets its buffers behind an RCU grace period (~35 ms on a 2-CPU VM), as
// does removing it (~30 ms): most of what a short run paid on top of its
// writes (issue 17: startup under 100 ms). A run takes the kept instance
// under flock(2) on its directory, stops and empties it, reads its lost-event
// counters as the baseline, and at the end stops it and disables the events
// again, so between runs it records nothing. trace_pipe_raw is consuming, so
// two runs must never share one: a run that finds it locked (a second run
// beside a test, another state directory) uses instances/cpuhp-stress-<pid>
// and removes it at the end, as every run did before. A killed run leaves
// its pid instance: the next run and `cpuhp-stress restore` remove instances
// whose pid is gone; `restore` also removes the kept instance when no run
// holds it, so a machine put back has no instance of ours.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "machine/hotplug_states.h"
#include "sources/state_stats.h"
#include "sources/timing_source.h"
#include "sources/trace_parser.h"

struct tep_event;
struct tep_format_field;
struct tep_handle;
struct tep_record;
struct tracefs_instance;

namespace cpuhp {

// One cpuhp event of a raw ring-buffer page; the callback as its address.
struct RawCpuhpEvent {
  TraceKind kind = TraceKind::kEnter;
  int pid = -1;
  int event_cpu = -1;  // whose buffer held it
  uint64_t ts_ns = 0;  // trace clock, nanoseconds
  int cpu = -1, idx = -1, target = -1, ret = 0;
  uint64_t fun = 0;  // enters only
};

// The per-CPU trace_pipe_raw files of one instance, decoded with the formats
// under <tracefs>/events (header_page and the three cpuhp events' format
// files) into a libtraceevent handle of our own: libtracefs's
// tracefs_local_events() would also parse /proc/kallsyms (~0.5 s here).
class RawCpuhpReader {
 public:
  RawCpuhpReader() = default;
  ~RawCpuhpReader();
  RawCpuhpReader(const RawCpuhpReader&) = delete;
  RawCpuhpReader& operator=(const RawCpuhpReader&) = delete;

  bool Open(const std::string& tracefs, const std::string& instance_name, std::string* why);
  // Consumes every event the buffers hold now, merged in timestamp order,
  // appended to `events`; events the ring reported missing go to `missed`.
  void Read();

  tracefs_instance* instance = nullptr;
  std::vector<RawCpuhpEvent> events;
  uint64_t missed = 0;

 private:
  struct Format {
    tep_event* event = nullptr;
    tep_format_field* cpu = nullptr;
    tep_format_field* target = nullptr;  // "target" (enters) or "state" (exit)
    tep_format_field* idx = nullptr;
    tep_format_field* fun = nullptr;  // enters only
    tep_format_field* ret = nullptr;  // exit only
  };
  static int Callback(tep_event* ev, tep_record* rec, int cpu, void* ctx);
  void Add(tep_event* ev, tep_record* rec, int cpu);

  tep_handle* tep = nullptr;
  Format formats[3];  // cpuhp_enter, cpuhp_multi_enter, cpuhp_exit
};

// Text in, steps joined to operations out (no file system): the part of the
// source that unit tests drive with recorded trace fixtures.
class TraceJoiner {
 public:
  // timestamp_resolution_ns: 1000 for text (sec.usec), 1 for raw events.
  explicit TraceJoiner(HotplugStates states, uint64_t timestamp_resolution_ns = 1000)
      : stats_(std::move(states)), resolution_ns_(timestamp_resolution_ns) {}

  // Any chunk of trace_pipe text; a line cut between two chunks is kept until
  // its end arrives.
  void FeedText(std::string_view text);
  // One decoded event, in timestamp order.
  void FeedEvent(const TraceEvent& ev);
  // Events the ring buffer reported missing before the next event.
  void AddLost(uint64_t n) { lost_markers_ += n; }
  // The operation's write has returned and every event up to its end has
  // been fed: its steps are the finished ones of rec.cpu that began inside
  // [start, start + duration] (start rounded down to the timestamp
  // resolution: text timestamps are truncated).
  void EndOperation(const OpRecord& rec);
  // The same for operations in write order, in one pass over the steps.
  void EndOperations(const std::vector<OpRecord>& batch);
  // Whatever is still buffered belongs to no operation.
  void Finish();

  const KernelStateStats& stats() const { return stats_; }
  nlohmann::json EventsJson() const;
  uint64_t lost_markers() const { return lost_markers_; }
  uint64_t malformed() const { return malformed_; }
  uint64_t events() const { return events_; }

 private:
  void Line(std::string_view line);

  KernelStateStats stats_;
  uint64_t resolution_ns_;
  StepMatcher matcher_;
  std::vector<TraceStep> pending_;
  std::string partial_;
  uint64_t events_ = 0;
  uint64_t malformed_ = 0;
  uint64_t lost_markers_ = 0;
  uint64_t outside_ops_ = 0;
  std::vector<std::string> malformed_examples_;
};

// The events a drain may feed while a write may be in flight: `held` (left by
// earlier drains) and `read` (this drain's, each CPU's merged by time),
// merged by time, up to `cutoff` (the end of the last write taken: each of
// its events is in the buffers); the later ones are left in *held. The
// buffers are read one CPU after the other, so a task that moved CPUs in the
// middle of a callback can have its exit read before its enter.
std::vector<RawCpuhpEvent> TakeEventsUpTo(std::vector<RawCpuhpEvent>* held,
                                          std::vector<RawCpuhpEvent> read, uint64_t cutoff);

// The event as the joiner takes it, named: `comm` the task, `fun` the
// callback (ignored for exits, which carry none).
TraceEvent ToTraceEvent(const RawCpuhpEvent& e, std::string comm, std::string fun);

// Callback address -> name, from the text (`trace` file) of the same events:
// each raw enter takes the name of the text enter with its event CPU, pid,
// hotplugged CPU, state and microsecond.
std::unordered_map<uint64_t, std::string> CallbackNamesFromText(
    std::string_view text, const std::vector<RawCpuhpEvent>& events);

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
  const std::string& CommOf(int pid, int event_cpu);
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
  std::vector<OpRecord> ops_;  // ended, not yet joined (joined at each drain)
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
  std::vector<RawCpuhpEvent> held_;                      // read, after the last joined operation
  std::unordered_map<uint64_t, std::string> fun_names_;  // callback address -> symbol
  std::unordered_map<int, std::string> comms_;           // pid -> task name
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
  uint64_t unnamed_ = 0;  // enters whose callback address has no symbol
  size_t buffer_kb_ = 0;
  nlohmann::json lost_ = nlohmann::json::object();
  std::vector<std::string> stale_removed_;
};

// tracefs's mount point from a mounts file ("" when not mounted).
std::string FindTracefs(const std::string& mounts_path = "/proc/mounts");

// Removes <tracefs>/instances/cpuhp-stress-<pid> left by runs that are gone
// (no such pid, or a pid now running something else). Returns their names;
// failures go to *errs.
std::vector<std::string> RemoveStaleTraceInstances(const std::string& tracefs_root,
                                                   std::vector<std::string>* errs);

// The kept instance's name under <tracefs>/instances.
extern const char* const kKeptInstance;

// Removes the kept instance when no run holds it (flock). Returns whether it
// was removed; a failure goes to *err.
bool RemoveKeptTraceInstance(const std::string& tracefs_root, std::string* err);

// For `cpuhp-stress restore`: removes stale instances and the kept one (when
// no run holds it) under a mounted tracefs (never mounts it) and says so on
// `out`.
void RestoreTraceInstances(std::FILE* out);

// Lines for the human summary: the top states by self time, lost events, or
// why the source was unavailable.
std::string TracepointsSummary(const nlohmann::json& section);

}  // namespace cpuhp
