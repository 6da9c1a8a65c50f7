// SPDX-License-Identifier: GPL-2.0
// The "tracepoints" timing source: the kernel's cpuhp_enter /
// cpuhp_multi_enter / cpuhp_exit events, read from a tracefs instance of our
// own, turned into per-state and per-phase timings of each operation.
//
// Reader choice: the instance's text trace_pipe, drained (non-blocking)
// right after each write returns. Measured with bench/tracefs_reader.sh on
// the 2-CPU dev VM (6.18, ~88 events per write of cpu1, 200 writes x 3
// interleaved rounds, twice, machine shared with 4 builds), writes/s as a
// ratio to the same loop without tracing:
//   C loop + a text trace_pipe reader            1.07, 1.15
//   C loop + per-CPU trace_pipe_raw readers      0.98, 1.05
//   cpuhp-stress, this source on vs off          0.99, 0.94
// Neither reader costs anything measurable (the spread is the shared
// machine's noise): a hotplug write takes milliseconds and emits ~100
// events, so reading them is not where time goes. Text wins on what matters
// here: the kernel merges the per-CPU buffers in timestamp order (so enters
// and exits of a task that migrates stay in order), includes the task name
// (which tells the control side from cpuhp/N without a pid->comm lookup
// racing thread exit), prints LOST markers, and its format is the same from
// 4.x to 7.x, while the raw pages' layout depends on the ring-buffer ABI and
// each event's format file. Its cost: timestamps have microsecond
// resolution (tracefs prints sec.usec), so sub-microsecond callbacks read as
// 0 or 1 us; the states that matter take 10 us..10 ms.
//
// The dying CPU: the merged trace_pipe reads every CPU's buffer, online or
// not (ring buffers live for every possible CPU), and the write does not
// return before cpuhp/N's last callback has exited, so draining after the
// write collects the dying CPU's events too. Overruns are counted from the
// instance's per_cpu/cpuN/stats ("overrun", "dropped events") and LOST lines.
//
// Instance name: instances/cpuhp-stress-<pid>. trace_pipe is consuming, so
// two runs (different --state-dir, or a run beside a test) sharing one
// instance would steal each other's events and one's exit would delete the
// other's instance. A killed run leaves its instance: the next run and
// `cpuhp-stress restore` remove instances whose pid is gone.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "machine/hotplug_states.h"
#include "sources/state_stats.h"
#include "sources/timing_source.h"
#include "sources/trace_parser.h"

namespace cpuhp {

// Text in, steps joined to operations out (no file system): the part of the
// source that unit tests drive with recorded trace fixtures.
class TraceJoiner {
 public:
  explicit TraceJoiner(HotplugStates states) : stats_(std::move(states)) {}

  // Any chunk of trace_pipe text; a line cut between two chunks is kept until
  // its end arrives.
  void FeedText(std::string_view text);
  // The operation's write has returned: its steps are the finished ones of
  // rec.cpu that began inside [start, start + duration] (start rounded down
  // to the microsecond: text timestamps are truncated).
  void EndOperation(const OpRecord& rec);
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
  StepMatcher matcher_;
  std::vector<TraceStep> pending_;
  std::string partial_;
  uint64_t events_ = 0;
  uint64_t malformed_ = 0;
  uint64_t lost_markers_ = 0;
  uint64_t outside_ops_ = 0;
  std::vector<std::string> malformed_examples_;
};

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

 private:
  void Drain();
  void ReadLostStats();
  void RemoveInstance();

  std::string sysfs_root_;
  std::string tracefs_;
  bool mounted_by_us_ = false;
  std::string instance_;
  bool instance_created_ = false;
  bool instance_removed_ = false;
  std::string remove_error_;
  int fd_ = -1;
  std::unique_ptr<TraceJoiner> joiner_;
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

// For `cpuhp-stress restore`: removes stale instances under a mounted
// tracefs (never mounts it) and says so on `out`.
void RestoreTraceInstances(std::FILE* out);

// Lines for the human summary: the top states by self time, lost events, or
// why the source was unavailable.
std::string TracepointsSummary(const nlohmann::json& section);

}  // namespace cpuhp
