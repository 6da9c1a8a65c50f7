// SPDX-License-Identifier: GPL-2.0
#include "sources/trace_drainer.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <iterator>

#include <traceevent/event-parse.h>
// kbuffer.h, unlike event-parse.h, declares its functions without extern "C"
extern "C" {
#include <traceevent/kbuffer.h>
}

#include "sources/trace_instance.h"
#include "util/prefault.h"

namespace cpuhp {

// The three events' formats parsed into a tep handle of our own: libtracefs's
// tracefs_local_events() would also parse /proc/kallsyms (~0.5 s here) for
// function names that only the first drain needs (trace_convert.h).
RawCpuhpReader::~RawCpuhpReader() {
  for (const auto& [cpu, fd] : cpu_fds_)
    close(fd);
  if (kbuf_)
    kbuffer_free(kbuf_);
  if (instance)
    tracefs_instance_free(instance);
  if (tep)
    tep_free(tep);
}

bool RawCpuhpReader::Open(const std::string& tracefs, const std::string& name, std::string* why) {
  instance = tracefs_instance_alloc(tracefs.c_str(), name.c_str());
  if (!instance) {
    *why = tracefs + "/instances/" + name + ": libtracefs cannot open the instance";
    return false;
  }
  tep = tep_alloc();
  if (!tep) {
    *why = "libtraceevent: out of memory";
    return false;
  }
  tep_set_long_size(tep, sizeof(long));
  tep_set_page_size(tep, static_cast<int>(sysconf(_SC_PAGESIZE)));
  const bool big = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
  tep_set_file_bigendian(tep, big ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
  tep_set_local_bigendian(tep, big ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
  std::string text;
  const std::string header = tracefs + "/events/header_page";
  if (!ReadText(header, &text) ||
      tep_parse_header_page(tep, text.data(), static_cast<unsigned long>(text.size()),
                            sizeof(long)) != 0) {
    *why = header + ": cannot read or parse the ring buffer's page header";
    return false;
  }
  // The kernel's long, not ours: the sub-buffer's commit field is a long of
  // the kernel that wrote it, and a 32-bit daemon (armhf) on a 64-bit kernel
  // (an arm64 board with a 32-bit user space) would otherwise read every
  // sub-buffer 4 bytes off (issue 36). As perf reads header_page.
  tep_set_long_size(tep, tep_get_header_page_size(tep));
  for (int k = 0; k < 3; ++k) {
    const std::string path = tracefs + "/events/cpuhp/" + kCpuhpEvents[k] + "/format";
    tep_event* ev = nullptr;
    if (!ReadText(path, &text) ||
        tep_parse_event(tep, text.data(), text.size(), "cpuhp") != TEP_ERRNO__SUCCESS ||
        !(ev = tep_find_event_by_name(tep, "cpuhp", kCpuhpEvents[k]))) {
      *why = path + ": cannot read or parse the event format";
      return false;
    }
    Format& f = formats[k];
    f.id = ev->id;
    if (const tep_format_field* t = tep_find_common_field(ev, "common_type"))
      common_type_ = {t->offset, t->size};
    const bool exit = k == 2;
    const char* names[5] = {"common_pid", "cpu", "idx", exit ? "state" : "target",
                            exit ? "ret" : "fun"};
    Field* fields[5] = {&f.pid, &f.cpu, &f.idx, &f.target, exit ? &f.ret : &f.fun};
    for (int i = 0; i < 5; ++i) {
      const tep_format_field* t =
          i == 0 ? tep_find_common_field(ev, names[i]) : tep_find_field(ev, names[i]);
      if (!t || (t->size != 1 && t->size != 2 && t->size != 4 && t->size != 8)) {
        *why = path + ": the event lacks a number field this reader needs (" + names[i] +
               "; also cpu, idx, target/state, fun/ret)";
        return false;
      }
      *fields[i] = {t->offset, t->size};
    }
  }
  if (common_type_.size != 1 && common_type_.size != 2 && common_type_.size != 4) {
    *why = tracefs + "/events/cpuhp/" + kCpuhpEvents[0] + "/format: no common_type field";
    return false;
  }
  kbuf_ = tep_kbuffer(tep);
  if (!kbuf_) {
    *why = "libtraceevent: cannot make a sub-buffer reader from " + header;
    return false;
  }
  subbuf_.resize(
      static_cast<size_t>(std::max<long>(tep_get_sub_buffer_size(tep), sysconf(_SC_PAGESIZE))));
  const std::string dir = tracefs + "/instances/" + name;
  for (int cpu : InstanceCpus(dir)) {
    const std::string path = dir + "/per_cpu/cpu" + std::to_string(cpu) + "/trace_pipe_raw";
    const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
      *why = path + ": " + strerror(errno);
      return false;
    }
    cpu_fds_.emplace_back(cpu, fd);
  }
  if (cpu_fds_.empty()) {
    *why = dir + "/per_cpu: no cpuN directory to read";
    return false;
  }
  return true;
}

// As tep_read_number_field reads it: the local kernel's byte order,
// zero-extended.
uint64_t RawCpuhpReader::Load(const char* data, int size, Field f) {
  if (f.offset < 0 || f.offset + f.size > size)
    return 0;
  const char* p = data + f.offset;
  switch (f.size) {
    case 1:
      return static_cast<unsigned char>(*p);
    case 2: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case 4: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default: {
      uint64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}

void RawCpuhpReader::Add(const char* data, int size, uint64_t ts, int cpu) {
  const int id = static_cast<int>(Load(data, size, common_type_));
  for (int k = 0; k < 3; ++k) {
    const Format& f = formats[k];
    if (f.id != id)
      continue;
    RawCpuhpEvent e;
    e.kind = k == 0 ? TraceKind::kEnter : k == 1 ? TraceKind::kMultiEnter : TraceKind::kExit;
    e.pid = static_cast<int>(Load(data, size, f.pid));
    e.event_cpu = cpu;
    e.ts_ns = ts;
    e.cpu = static_cast<int>(static_cast<unsigned int>(Load(data, size, f.cpu)));
    e.idx = static_cast<int>(Load(data, size, f.idx));
    e.target = static_cast<int>(Load(data, size, f.target));
    if (k == 2)
      e.ret = static_cast<int>(Load(data, size, f.ret));
    else
      e.fun = Load(data, size, f.fun);
    events.push_back(e);
    return;
  }
}

// Each read() returns one sub-buffer (a page, or buffer_subbuf_size_kb on
// 6.8+ kernels), whole or as far as the writer has committed it; EAGAIN
// when the CPU's buffer is empty.
void RawCpuhpReader::ReadCpu(int fd, int cpu) {
  for (;;) {
    const ssize_t n = read(fd, subbuf_.data(), subbuf_.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (n < 0 && errno != EAGAIN) {
        ++missed;
        read_errno = errno;
      }
      return;
    }
    DecodeSubbuffer(subbuf_.data(), cpu);
  }
}

void RawCpuhpReader::DecodeSubbuffer(char* subbuf, int cpu) {
  if (kbuffer_load_subbuffer(kbuf_, subbuf) < 0)
    return;
  // Events the ring overwrote or dropped before this sub-buffer (-1: an
  // unknown number, at least one).
  if (const int lost = kbuffer_missed_events(kbuf_))
    missed += lost > 0 ? static_cast<uint64_t>(lost) : 1;
  unsigned long long ts = 0;
  for (void* d = kbuffer_read_event(kbuf_, &ts); d; d = kbuffer_next_event(kbuf_, &ts))
    Add(static_cast<const char*>(d), kbuffer_event_size(kbuf_), ts, cpu);
}

void RawCpuhpReader::Read() {
  // Each CPU's events are in time order: read one after the other, then
  // merged pairwise, run by run (stable: on equal times the lower CPU first).
  runs_.clear();
  most_from_one_cpu = 0;
  for (const auto& [cpu, fd] : cpu_fds_) {
    const size_t at = events.size();
    ReadCpu(fd, cpu);
    most_from_one_cpu = std::max(most_from_one_cpu, events.size() - at);
    if (events.size() > at)
      runs_.push_back(at);
  }
  const auto by_time = [](const RawCpuhpEvent& a, const RawCpuhpEvent& b) {
    return a.ts_ns < b.ts_ns;
  };
  while (runs_.size() > 1) {
    const size_t first = runs_[0];
    runs_.push_back(events.size());
    merged_.clear();
    size_t kept = 0;
    for (size_t r = 0; r + 1 < runs_.size(); r += 2) {
      const auto at = [this](size_t i) { return events.begin() + static_cast<std::ptrdiff_t>(i); };
      const size_t end = r + 2 < runs_.size() ? runs_[r + 2] : runs_[r + 1];
      std::merge(at(runs_[r]), at(runs_[r + 1]), at(runs_[r + 1]), at(end),
                 std::back_inserter(merged_), by_time);
      runs_[kept++] = first + (merged_.size() - (end - runs_[r]));
    }
    runs_.resize(kept);
    if (first == 0)  // all of them: the merged copy becomes the events
      events.swap(merged_);
    else
      std::copy(merged_.begin(), merged_.end(),
                events.begin() + static_cast<std::ptrdiff_t>(first));
  }
}

void RawCpuhpReader::Reserve(size_t n) {
  Prefault(&events, n);
  Prefault(&merged_, n);
}

void RawEventFeed::Reserve(size_t n) {
  Prefault(&held_, n);
  Prefault(&now_, n);
}

void TakeEventsUpTo(std::vector<RawCpuhpEvent>* held, std::vector<RawCpuhpEvent>* read,
                    uint64_t cutoff, std::vector<RawCpuhpEvent>* out) {
  const auto by_time = [](const RawCpuhpEvent& a, const RawCpuhpEvent& b) {
    return a.ts_ns < b.ts_ns;
  };
  out->clear();
  // What was held, then this read, merged by time (stable: held first).
  if (std::is_sorted(read->begin(), read->end(), by_time)) {
    std::merge(held->begin(), held->end(), read->begin(), read->end(), std::back_inserter(*out),
               by_time);
  } else {
    out->insert(out->end(), held->begin(), held->end());
    out->insert(out->end(), read->begin(), read->end());
    std::stable_sort(out->begin(), out->end(), by_time);
  }
  read->clear();
  const auto later = std::find_if(out->begin(), out->end(),
                                  [cutoff](const RawCpuhpEvent& e) { return e.ts_ns > cutoff; });
  held->assign(later, out->end());
  out->erase(later, out->end());
}

const std::string& TaskNames::Of(int pid, int event_cpu) {
  const int key = pid == 0 ? -1 - event_cpu : pid;
  auto it = names_.find(key);
  if (it == names_.end())
    it =
        names_.emplace(key, pid == 0 ? "swapper/" + std::to_string(event_cpu) : lookup_(pid)).first;
  return it->second;
}

void RawEventFeed::Feed(std::vector<RawCpuhpEvent>* read, uint64_t cutoff, TaskNames* names,
                        TraceJoiner* joiner) {
  TakeEventsUpTo(&held_, read, cutoff, &now_);
  for (const RawCpuhpEvent& e : now_) {
    std::string_view fun;
    if (e.kind != TraceKind::kExit) {
      fun = fun_names[e.fun];
      if (fun.empty() || fun[0] == '0')
        ++unnamed;
    }
    joiner->FeedRaw(e, names->Of(e.pid, e.event_cpu), fun);
  }
}

std::string LowerDrainerPriority(const std::vector<int>& cpus, int* sched) {
  sched_param sp{};
  std::string policy;
  if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp) == 0) {
    policy = "SCHED_IDLE";
    *sched = SCHED_IDLE;
  } else if (setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19) == 0)
    policy = "nice 19";
  else
    policy = "normal";
  if (!cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus)
      if (c >= 0 && c < CPU_SETSIZE)
        CPU_SET(c, &set);
    std::string list;
    for (int c : cpus)
      list += (list.empty() ? "" : ",") + std::to_string(c);
    if (sched_setaffinity(0, sizeof(set), &set) == 0)
      policy += " on CPU " + list;
  }
  return policy;
}

// Best effort (raising a thread's priority needs CAP_SYS_NICE): at worst the
// writer waits for the drainer as it is.
void BoostDrainerThread(pid_t tid, int sched, bool on) {
  sched_param sp{};
  if (on) {
    sched_setscheduler(tid, SCHED_OTHER, &sp);
    setpriority(PRIO_PROCESS, static_cast<id_t>(tid), 0);
  } else if (sched == SCHED_IDLE) {
    sched_setscheduler(tid, SCHED_IDLE, &sp);
  } else {
    setpriority(PRIO_PROCESS, static_cast<id_t>(tid), 19);
  }
}

}  // namespace cpuhp
