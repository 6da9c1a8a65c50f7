// SPDX-License-Identifier: GPL-2.0
// Text lines of the cpuhp tracepoints (tracefs trace_pipe), and the pairing of
// each cpuhp_enter/cpuhp_multi_enter with its cpuhp_exit into one step.
//
//   kworker/0:1-8772 [000] ..... 2497.408107: cpuhp_enter: cpu: 0001 target:   0 step: 144
//   (takedown_cpu) kworker/0:1-8772 [000] ..... 2497.431691: cpuhp_exit:  cpu: 0001  state:  84
//   step: 144 ret: 0 CPU:1 [LOST 12 EVENTS]
//
// The format is the same from 4.x to 7.x (print fmt of include/trace/events/
// cpuhp.h); the flags column varies in width and the "(tgid)" column is
// optional, so the prefix is read from the right of the event name.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cpuhp {

enum class TraceKind : uint8_t { kEnter, kMultiEnter, kExit, kLost };

struct TraceEvent {
  TraceKind kind = TraceKind::kEnter;
  std::string comm;  // task name ("cpuhp/1", "kworker/0:1", "sh")
  int pid = -1;
  int event_cpu = -1;  // the CPU that emitted it ([001])
  uint64_t ts_ns = 0;  // trace clock; text gives microseconds, so a multiple of 1000
  int cpu = -1;        // the CPU being hotplugged
  int idx = -1;        // "step": the state whose callback runs
  int target = -1;     // enter: the target state; exit: the state reached
  int ret = 0;         // exit only
  std::string fun;     // enter only: the callback's symbol ("takedown_cpu")
  uint64_t lost = 0;   // kLost: events the ring dropped on event_cpu
};

// Returns false for lines that are not a complete cpuhp event or LOST marker
// (headers, other events, truncated or garbled lines).
bool ParseTraceLine(std::string_view line, TraceEvent* ev);

// Where a step ran, from the task name: the target CPU's own hotplug thread
// (cpuhp/N), another context on the target CPU (its stopper migration/N or
// idle swapper/N, for STARTING/DYING states), or the control side (the
// writer or the kworker running _cpu_down).
enum class StepWhere : uint8_t { kControl = 0, kCpuhpThread = 1, kTargetCpu = 2 };
inline constexpr int kStepWheres = 3;
const char* StepWhereName(StepWhere w);
StepWhere ClassifyTask(std::string_view comm, int target_cpu);

// One state callback (or the cpuhp_kick_ap_work hand-off), enter to exit.
struct TraceStep {
  int cpu = -1;  // hotplugged CPU
  int idx = -1;  // state number (for cpuhp_kick_ap_work: the state it started from)
  // The callback: a name kept by the StepMatcher that made the step, valid
  // for its life (no string per step: issue 31), and that matcher's number
  // for it (1, 2, ...; 0 for a step made otherwise, or past 65535 names:
  // a kernel has a few hundred callbacks), which KernelStateStats keys its
  // per-step lookups by. 16 bits keep a step at 48 bytes.
  std::string_view fun;
  uint16_t fun_id = 0;
  StepWhere where = StepWhere::kControl;
  bool multi = false;  // cpuhp_multi_enter: one instance of a multi-instance state
  int ret = 0;
  uint64_t begin_ns = 0;
  uint64_t end_ns = 0;
};
static_assert(sizeof(TraceStep) <= 48, "a drain moves ~5000 steps a time");

// Pairs enters with exits per task: a task runs one callback at a time, and
// cpuhp_kick_ap_work's own enter/exit nests the same way, so a stack per pid
// matched on (cpu, idx) is exact. An exit with no matching enter, or enters
// abandoned under a later exit, are counted, never guessed.
class StepMatcher {
 public:
  StepMatcher() = default;
  StepMatcher(const StepMatcher&) = delete;  // the steps' names point into it
  StepMatcher& operator=(const StepMatcher&) = delete;
  StepMatcher(StepMatcher&&) = default;
  // Feeds one event; appends a finished step to *out when it completes one.
  void Feed(const TraceEvent& ev, std::vector<TraceStep>* out);
  // The same with the event's fields one by one and its task and callback
  // names as views (the raw path, trace_join.h: no string copied).
  void Feed(TraceKind kind, int pid, int cpu, int idx, int ret, uint64_t ts_ns,
            std::string_view comm, std::string_view fun, std::vector<TraceStep>* out);

  uint64_t unmatched_exits() const { return unmatched_exits_; }
  uint64_t unmatched_enters() const { return unmatched_enters_; }
  // Enters still waiting for their exit.
  size_t open() const;

 private:
  static constexpr size_t kMaxDepth = 64;
  // A task's empty stack is kept for its next enter, until this many tasks
  // have one.
  static constexpr size_t kKeptStacks = 256;
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  // Every callback name seen, with its number: a node's string does not move.
  std::unordered_map<std::string, uint16_t, NameHash, std::equal_to<>> names_;
  std::unordered_map<int, std::vector<TraceStep>> stacks_;
  uint64_t unmatched_exits_ = 0;
  uint64_t unmatched_enters_ = 0;
};

}  // namespace cpuhp
