// SPDX-License-Identifier: GPL-2.0
// The drain's parts: the raw per-CPU reading, the events a drain may feed
// while a write is in flight, and the drainer thread's scheduling. When to
// drain, and who, is the tracepoints source's (tracefs_source.h).
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
// (to learn the callbacks' names: trace_convert.h), then at most once per
// kDrainIntervalNs, and at the end; the buffer (at least kMinBufferKb per
// CPU) holds several intervals of events, and whatever the ring still loses
// is counted (per_cpu/cpuN/stats and the pages' missed-events flags) and
// fails the report's tracepoints_no_lost_events check.
//
// The dying CPU: ring buffers exist for every possible CPU, online or not,
// and the write does not return before cpuhp/N's last callback has exited,
// so a drain after a write sees the dying CPU's events too.
#pragma once

#include <sched.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "sources/trace_convert.h"
#include "sources/trace_join.h"

struct tep_event;
struct tep_format_field;
struct tep_handle;
struct kbuffer;
struct tracefs_instance;

// libtracefs 1.6's tracefs.h is not C++ (an inline function passes an int
// as an enum), so the few functions used here are declared as it does.
extern "C" {
struct tracefs_instance* tracefs_instance_alloc(const char* tracing_dir, const char* name);
void tracefs_instance_free(struct tracefs_instance* instance);
ssize_t tracefs_instance_get_buffer_size(struct tracefs_instance* instance, int cpu);
int tracefs_instance_set_buffer_size(struct tracefs_instance* instance, size_t size, int cpu);
int tracefs_event_enable(struct tracefs_instance* instance, const char* system, const char* event);
}

namespace cpuhp {

// The per-CPU trace_pipe_raw files of one instance, decoded with the formats
// under <tracefs>/events (header_page and the three cpuhp events' format
// files) into a libtraceevent handle of our own: libtracefs's
// tracefs_local_events() would also parse /proc/kallsyms (~0.5 s here).
// The files stay open (non-blocking) from Open to the destructor, and each
// read() of a sub-buffer is walked with libtraceevent's kbuffer into one
// reused vector: libtracefs's tracefs_iterate_raw_events opened every CPU's
// file, allocated its pages and spliced them through a pipe at each drain,
// and looked each record's event up by id (issue 31: its read was 60 % of a
// drain's CPU).
class RawCpuhpReader {
 public:
  RawCpuhpReader() = default;
  ~RawCpuhpReader();
  RawCpuhpReader(const RawCpuhpReader&) = delete;
  RawCpuhpReader& operator=(const RawCpuhpReader&) = delete;

  bool Open(const std::string& tracefs, const std::string& instance_name, std::string* why);
  // Consumes every event the buffers hold now, merged in timestamp order,
  // appended to `events`; events the ring reported missing go to `missed`.
  // A read that fails (not EAGAIN: the buffer is empty) ends that CPU's
  // read and counts in `missed` as events lost (an unknown number, at least
  // one, as a sub-buffer's missed-events flag of -1), its errno kept in
  // `read_errno`.
  void Read();
  // Room for n events, its pages touched now (util/prefault.h) so that a
  // drain's first reads do not fault them in during the timed writes.
  void Reserve(size_t n);
  // One sub-buffer as read() returns it (header, then events), its events
  // appended to `events` as read from `cpu`'s buffer: what Read does for
  // each read; the microbench decodes captured pages with it.
  void DecodeSubbuffer(char* subbuf, int cpu);
  size_t subbuffer_size() const { return subbuf_.size(); }

  tracefs_instance* instance = nullptr;
  std::vector<RawCpuhpEvent> events;
  uint64_t missed = 0;
  int read_errno = 0;
  size_t most_from_one_cpu = 0;  // the last Read's, from its busiest CPU

 private:
  // A number field's place in the record, from the event's format file: read
  // with a load, not libtraceevent's lookup by field (a quarter of a drain's
  // CPU in issue 31's profile).
  struct Field {
    int offset = -1;
    int size = 0;  // 1, 2, 4 or 8
  };
  struct Format {
    int id = -1;  // the event's id: a record's first two bytes (common_type)
    Field pid, cpu, idx;
    Field target;  // "target" (enters) or "state" (exit)
    Field fun;     // enters only
    Field ret;     // exit only
  };
  static uint64_t Load(const char* data, int size, Field f);
  void Add(const char* data, int size, uint64_t ts, int cpu);
  void ReadCpu(int fd, int cpu);

  tep_handle* tep = nullptr;
  kbuffer* kbuf_ = nullptr;
  Format formats[3];  // cpuhp_enter, cpuhp_multi_enter, cpuhp_exit
  Field common_type_;
  std::vector<std::pair<int, int>> cpu_fds_;  // (cpu, trace_pipe_raw)
  std::vector<char> subbuf_;                  // one sub-buffer, as read()
  std::vector<size_t> runs_;                  // where each CPU's events begin
  std::vector<RawCpuhpEvent> merged_;         // the runs merged pairwise
};

// The events a drain may feed while a write may be in flight: `held` (left by
// earlier drains) and `read` (this drain's, each CPU's merged by time),
// merged by time, up to `cutoff` (the end of the last write taken: each of
// its events is in the buffers), into *out; the later ones are left in
// *held, and *read is emptied. The buffers are read one CPU after the other,
// so a task that moved CPUs in the middle of a callback can have its exit
// read before its enter. The vectors keep their capacity from drain to
// drain: a drain of ~10 000 events that allocated them anew spent most of
// its time in page faults (issue 31).
void TakeEventsUpTo(std::vector<RawCpuhpEvent>* held, std::vector<RawCpuhpEvent>* read,
                    uint64_t cutoff, std::vector<RawCpuhpEvent>* out);

// The events' task names, each pid asked once: the idle tasks (all pid 0,
// one per CPU) are "swapper/N"; any other is lookup(pid), "" once the task
// is gone.
class TaskNames {
 public:
  explicit TaskNames(std::function<std::string(int pid)> lookup) : lookup_(std::move(lookup)) {}
  const std::string& Of(int pid, int event_cpu);

 private:
  std::function<std::string(int pid)> lookup_;
  std::unordered_map<int, std::string> names_;  // pid; the idle tasks keyed -1 - cpu
};

// A drain after its read (no file system but names'): the events up to
// `cutoff` (TakeEventsUpTo), named and fed to the joiner in time order; the
// later ones are held for the next drain.
class RawEventFeed {
 public:
  void Feed(std::vector<RawCpuhpEvent>* read, uint64_t cutoff, TaskNames* names,
            TraceJoiner* joiner);
  void Reserve(size_t n);  // as RawCpuhpReader::Reserve

  std::unordered_map<uint64_t, std::string> fun_names;  // callback address -> symbol
  uint64_t unnamed = 0;  // enters whose callback address has no symbol

 private:
  std::vector<RawCpuhpEvent> held_;  // read, after the last joined operation
  std::vector<RawCpuhpEvent> now_;   // this drain's, up to the cutoff
};

// The drainer thread's idle priority: the kernel runs it only where nothing
// else wants the CPU. The calling thread goes to SCHED_IDLE (then *sched is
// SCHED_IDLE), else nice 19, and onto `cpus` when there are any. Returns
// what it got ("SCHED_IDLE on CPU 0,2", "nice 19", "normal").
std::string LowerDrainerPriority(const std::vector<int>& cpus, int* sched);

// Lends the drainer thread `tid` normal priority (on), or puts it back to
// SCHED_IDLE (when `sched` is) or nice 19: std::mutex has no priority
// inheritance (tracefs_source.h).
void BoostDrainerThread(pid_t tid, int sched, bool on);

}  // namespace cpuhp
