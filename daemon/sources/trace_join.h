// SPDX-License-Identifier: GPL-2.0
// The join: cpuhp events (trace_pipe text, or raw events converted by
// trace_convert.h) paired into steps and joined to the operations whose
// write they fell in, by timestamp and CPU, into per-state statistics.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "machine/hotplug_states.h"
#include "sources/state_stats.h"
#include "sources/trace_convert.h"
#include "sources/trace_parser.h"

namespace cpuhp {

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
  // One raw event with its task's and callback's names (ignored for an
  // exit): FeedEvent(ToTraceEvent(e, comm, fun)) without copying a string.
  void FeedRaw(const RawCpuhpEvent& e, std::string_view comm, std::string_view fun);
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
  // Room for n steps between two EndOperations, made before a timed loop
  // (util/prefault.h).
  void Reserve(size_t steps);

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
  // EndOperations' scratch: each pending step's operation, where each
  // operation's steps begin, the steps by operation.
  std::vector<size_t> owner_;
  std::vector<size_t> first_;
  std::vector<TraceStep> grouped_;
  std::string partial_;
  uint64_t events_ = 0;
  uint64_t malformed_ = 0;
  uint64_t lost_markers_ = 0;
  uint64_t outside_ops_ = 0;
  std::vector<std::string> malformed_examples_;
};

}  // namespace cpuhp
