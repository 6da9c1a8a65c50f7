// SPDX-License-Identifier: GPL-2.0
#include "sources/tracefs_source.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>
#include <tuple>
#include <unordered_set>

#include <spdlog/spdlog.h>

#include <sched.h>
#include <traceevent/event-parse.h>

// libtracefs 1.6's tracefs.h is not C++ (an inline function passes an int
// as an enum), so the few functions used here are declared as it does.
extern "C" {
struct tracefs_instance* tracefs_instance_alloc(const char* tracing_dir, const char* name);
void tracefs_instance_free(struct tracefs_instance* instance);
ssize_t tracefs_instance_get_buffer_size(struct tracefs_instance* instance, int cpu);
int tracefs_instance_set_buffer_size(struct tracefs_instance* instance, size_t size, int cpu);
int tracefs_event_enable(struct tracefs_instance* instance, const char* system, const char* event);
int tracefs_iterate_raw_events(struct tep_handle* tep, struct tracefs_instance* instance,
                               cpu_set_t* cpus, int cpu_size,
                               int (*callback)(struct tep_event*, struct tep_record*, int, void*),
                               void* callback_context);
}

#include "machine/cpu_control.h"

namespace cpuhp {

const char* const kKeptInstance = "cpuhp-stress-kept";

namespace {

constexpr const char* kInstancePrefix = "cpuhp-stress-";
constexpr const char* kDefaultTracefs = "/sys/kernel/tracing";
constexpr size_t kMaxLine = 4096;
constexpr size_t kMalformedExamples = 5;
const char* const kEvents[] = {"cpuhp_enter", "cpuhp_multi_enter", "cpuhp_exit"};

bool WriteFile(const std::string& path, const std::string& value, std::string* err) {
  int fd = open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) {
    *err = path + ": cannot open: " + strerror(errno);
    return false;
  }
  ssize_t n = write(fd, value.data(), value.size());
  int e = errno;
  close(fd);
  if (n != static_cast<ssize_t>(value.size())) {
    *err = path + ": cannot write \"" + value + "\": " + strerror(n < 0 ? e : EIO);
    return false;
  }
  return true;
}

bool ReadText(const std::string& path, std::string* out) {
  std::ifstream f(path);
  if (!f)
    return false;
  std::stringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  return true;
}

bool IsDir(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string Comm(const std::string& pid) {
  std::string c;
  if (!ReadText("/proc/" + pid + "/comm", &c))
    return {};
  while (!c.empty() && c.back() == '\n')
    c.pop_back();
  return c;
}

// "overrun: 3" -> 3 (0 when absent).
uint64_t StatField(const std::string& text, const std::string& key) {
  size_t at = text.find(key + ":");
  if (at == std::string::npos)
    return 0;
  size_t b = text.find_first_not_of(' ', at + key.size() + 1);
  uint64_t v = 0;
  if (b != std::string::npos)
    std::from_chars(text.data() + b, text.data() + text.size(), v);
  return v;
}

// per_cpu/cpuN/stats of an instance: cpu -> (overrun, dropped events).
std::map<int, std::pair<uint64_t, uint64_t>> ReadCpuStats(const std::string& instance) {
  std::map<int, std::pair<uint64_t, uint64_t>> stats;
  const std::string dir = instance + "/per_cpu";
  DIR* d = opendir(dir.c_str());
  if (!d)
    return stats;
  std::vector<int> cpus;
  while (dirent* e = readdir(d)) {
    int cpu = -1;
    std::string_view n = e->d_name;
    if (n.substr(0, 3) == "cpu" &&
        std::from_chars(n.data() + 3, n.data() + n.size(), cpu).ec == std::errc())
      cpus.push_back(cpu);
  }
  closedir(d);
  for (int cpu : cpus) {
    std::string text;
    if (ReadText(dir + "/cpu" + std::to_string(cpu) + "/stats", &text))
      stats[cpu] = {StatField(text, "overrun"), StatField(text, "dropped events")};
  }
  return stats;
}

}  // namespace

// ---- TraceJoiner ----

void TraceJoiner::Line(std::string_view line) {
  if (line.empty() || line.front() == '#')
    return;
  TraceEvent ev;
  if (!ParseTraceLine(line, &ev)) {
    ++malformed_;
    if (malformed_examples_.size() < kMalformedExamples) {
      std::string ex(line.substr(0, 160));
      for (char& c : ex)
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e)
          c = '?';
      malformed_examples_.push_back(std::move(ex));
    }
    return;
  }
  if (ev.kind == TraceKind::kLost) {
    lost_markers_ += ev.lost;
    return;
  }
  ++events_;
  matcher_.Feed(ev, &pending_);
}

void TraceJoiner::FeedEvent(const TraceEvent& ev) {
  ++events_;
  matcher_.Feed(ev, &pending_);
}

void TraceJoiner::FeedText(std::string_view text) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    if (nl == std::string_view::npos) {
      partial_.append(text);
      if (partial_.size() > kMaxLine) {  // no newline in sight: garbage
        Line(partial_);
        partial_.clear();
      }
      return;
    }
    if (partial_.empty()) {
      Line(text.substr(0, nl));
    } else {
      partial_.append(text.substr(0, nl));
      Line(partial_);
      partial_.clear();
    }
    text.remove_prefix(nl + 1);
  }
}

void TraceJoiner::EndOperation(const OpRecord& rec) {
  EndOperations({rec});
}

// One pass over the pending steps for the whole batch: a step belongs to the
// first operation (in write order) whose write ended at or after the step
// began, when the step is of that operation's CPU and began inside its
// window; a step that began after the last write stays pending; any other is
// outside every operation. The same assignment as ending the operations one
// by one, which walked every pending step once per operation: a drain of N
// operations with ~45 steps each moved O(N^2) steps, 15 % of a CPU at 650
// writes/s (issue 17).
void TraceJoiner::EndOperations(const std::vector<OpRecord>& batch) {
  if (batch.empty())
    return;
  // Write ends in batch order, made non-decreasing (writes are sequential:
  // this only guards the search against a clock that stepped back).
  std::vector<uint64_t> ends(batch.size());
  uint64_t end_max = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    end_max = std::max(end_max, batch[i].start_ns + batch[i].duration_ns);
    ends[i] = end_max;
  }
  std::vector<std::vector<TraceStep>> mine(batch.size());
  std::vector<TraceStep> later;
  for (TraceStep& s : pending_) {
    const size_t k =
        static_cast<size_t>(std::lower_bound(ends.begin(), ends.end(), s.begin_ns) - ends.begin());
    if (k == batch.size()) {
      later.push_back(std::move(s));  // after the last write: a later one's, or none
      continue;
    }
    const OpRecord& rec = batch[k];
    const uint64_t w0 = rec.start_ns - rec.start_ns % resolution_ns_;
    if (s.cpu == rec.cpu && s.begin_ns >= w0 && s.begin_ns <= rec.start_ns + rec.duration_ns)
      mine[k].push_back(std::move(s));
    else
      ++outside_ops_;
  }
  pending_ = std::move(later);
  for (size_t i = 0; i < batch.size(); ++i)
    stats_.AddOperation(batch[i], mine[i]);
}

void TraceJoiner::Finish() {
  if (!partial_.empty()) {
    Line(partial_);
    partial_.clear();
  }
  outside_ops_ += pending_.size();
  pending_.clear();
}

nlohmann::json TraceJoiner::EventsJson() const {
  return {{"parsed", events_},
          {"malformed_lines", malformed_},
          {"malformed_examples", malformed_examples_},
          {"unmatched_enters", matcher_.unmatched_enters()},
          {"unmatched_exits", matcher_.unmatched_exits()},
          {"open_at_end", matcher_.open()},
          {"steps_outside_operations", outside_ops_}};
}

// ---- TracefsSource ----

std::string FindTracefs(const std::string& mounts_path) {
  std::ifstream f(mounts_path);
  std::string dev, dir, type, rest;
  std::string found;
  while (f >> dev >> dir >> type && std::getline(f, rest)) {
    if (type != "tracefs")
      continue;
    if (dir == kDefaultTracefs)
      return dir;
    if (found.empty())
      found = dir;
  }
  return found;
}

std::vector<std::string> RemoveStaleTraceInstances(const std::string& tracefs_root,
                                                   std::vector<std::string>* errs) {
  std::vector<std::string> removed;
  const std::string dir = tracefs_root + "/instances";
  DIR* d = opendir(dir.c_str());
  if (!d)
    return removed;
  const std::string self = Comm("self");
  std::vector<std::string> stale;
  while (dirent* e = readdir(d)) {
    std::string_view n = e->d_name;
    if (n.substr(0, strlen(kInstancePrefix)) != kInstancePrefix)
      continue;
    std::string pid(n.substr(strlen(kInstancePrefix)));
    int p = 0;
    auto [end, ec] = std::from_chars(pid.data(), pid.data() + pid.size(), p);
    if (ec != std::errc() || end != pid.data() + pid.size() || p <= 0)
      continue;
    if (p == getpid() || Comm(pid) == self)
      continue;  // ours, or another live run
    stale.emplace_back(n);
  }
  closedir(d);
  for (const std::string& n : stale) {
    if (rmdir((dir + "/" + n).c_str()) == 0)
      removed.push_back(n);
    else if (errs)
      errs->push_back(dir + "/" + n + ": cannot remove: " + strerror(errno));
  }
  return removed;
}

TracefsSource::TracefsSource(std::string sysfs_root, std::string tracefs_root)
    : sysfs_root_(std::move(sysfs_root)), tracefs_(std::move(tracefs_root)) {}

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
  for (const char* ev : kEvents) {
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
// it, an instance of this run's own (see the header).
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

// The three events' formats parsed into a tep handle of our own: libtracefs's
// tracefs_local_events() would also parse /proc/kallsyms (~0.5 s here) for
// function names that only the first drain needs (see the header).
RawCpuhpReader::~RawCpuhpReader() {
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
  for (int k = 0; k < 3; ++k) {
    const std::string path = tracefs + "/events/cpuhp/" + kEvents[k] + "/format";
    // tep_parse_event, not tep_parse_format: the handle must know the event
    // for tracefs_iterate_raw_events to find it by id.
    tep_event* ev = nullptr;
    if (!ReadText(path, &text) ||
        tep_parse_event(tep, text.data(), text.size(), "cpuhp") != TEP_ERRNO__SUCCESS ||
        !(ev = tep_find_event_by_name(tep, "cpuhp", kEvents[k]))) {
      *why = path + ": cannot read or parse the event format";
      return false;
    }
    Format& f = formats[k];
    f.event = ev;
    f.cpu = tep_find_field(ev, "cpu");
    f.idx = tep_find_field(ev, "idx");
    const bool exit = k == 2;
    f.target = tep_find_field(ev, exit ? "state" : "target");
    f.fun = exit ? nullptr : tep_find_field(ev, "fun");
    f.ret = exit ? tep_find_field(ev, "ret") : nullptr;
    if (!f.cpu || !f.idx || !f.target || (exit ? !f.ret : !f.fun)) {
      *why = path +
             ": the event lacks a field this reader needs (cpu, idx, target/state, "
             "fun/ret)";
      return false;
    }
  }
  return true;
}

int RawCpuhpReader::Callback(tep_event* ev, tep_record* rec, int cpu, void* ctx) {
  static_cast<RawCpuhpReader*>(ctx)->Add(ev, rec, cpu);
  return 0;
}

void RawCpuhpReader::Add(tep_event* ev, tep_record* rec, int cpu) {
  if (rec->missed_events)  // -1: an unknown number, at least one
    missed += rec->missed_events > 0 ? static_cast<uint64_t>(rec->missed_events) : 1;
  for (int k = 0; k < 3; ++k) {
    const Format& f = formats[k];
    if (f.event != ev && (!f.event || f.event->id != ev->id))
      continue;
    RawCpuhpEvent e;
    e.kind = k == 0 ? TraceKind::kEnter : k == 1 ? TraceKind::kMultiEnter : TraceKind::kExit;
    e.pid = tep_data_pid(tep, rec);
    e.event_cpu = cpu;
    e.ts_ns = rec->ts;
    unsigned long long v = 0;
    tep_read_number_field(f.cpu, rec->data, &v);
    e.cpu = static_cast<int>(static_cast<unsigned int>(v));
    tep_read_number_field(f.idx, rec->data, &v);
    e.idx = static_cast<int>(v);
    tep_read_number_field(f.target, rec->data, &v);
    e.target = static_cast<int>(v);
    if (f.ret) {
      tep_read_number_field(f.ret, rec->data, &v);
      e.ret = static_cast<int>(v);
    } else {
      tep_read_number_field(f.fun, rec->data, &v);
      e.fun = v;
    }
    events.push_back(e);
    return;
  }
}

void RawCpuhpReader::Read() {
  tracefs_iterate_raw_events(tep, instance, nullptr, 0, Callback, this);
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
  for (const char* ev : kEvents) {
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

const std::string& TracefsSource::CommOf(int pid, int event_cpu) {
  // The idle tasks are all pid 0, one per CPU: keyed -1 - cpu.
  const int key = pid == 0 ? -1 - event_cpu : pid;
  auto it = comms_.find(key);
  if (it == comms_.end())
    it = comms_
             .emplace(key, pid == 0 ? "swapper/" + std::to_string(event_cpu)
                                    : Comm(std::to_string(pid)))  // "" once the task is gone
             .first;
  return it->second;
}

TraceEvent ToTraceEvent(const RawCpuhpEvent& e, std::string comm, std::string fun) {
  TraceEvent ev;
  ev.kind = e.kind;
  ev.pid = e.pid;
  ev.event_cpu = e.event_cpu;
  ev.ts_ns = e.ts_ns;
  ev.cpu = e.cpu;
  ev.idx = e.idx;
  ev.target = e.target;
  ev.ret = e.ret;
  ev.comm = std::move(comm);
  if (e.kind != TraceKind::kExit)
    ev.fun = std::move(fun);
  return ev;
}

std::unordered_map<uint64_t, std::string> CallbackNamesFromText(
    std::string_view text, const std::vector<RawCpuhpEvent>& events) {
  // Key: (event CPU, pid, hotplugged CPU, state, microsecond).
  std::map<std::tuple<int, int, int, int, uint64_t>, std::string> by_key;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    TraceEvent ev;
    if (line.empty() || line.front() == '#' || !ParseTraceLine(line, &ev) ||
        ev.kind == TraceKind::kExit || ev.kind == TraceKind::kLost)
      continue;
    by_key[{ev.event_cpu, ev.pid, ev.cpu, ev.idx, ev.ts_ns / 1000}] = ev.fun;
  }
  std::unordered_map<uint64_t, std::string> names;
  for (const RawCpuhpEvent& e : events) {
    if (e.kind == TraceKind::kExit || names.count(e.fun))
      continue;
    // The text prints the timestamp rounded to the microsecond (ns2usecs);
    // truncated is tried too.
    auto it = by_key.find({e.event_cpu, e.pid, e.cpu, e.idx, (e.ts_ns + 500) / 1000});
    if (it == by_key.end())
      it = by_key.find({e.event_cpu, e.pid, e.cpu, e.idx, e.ts_ns / 1000});
    if (it != by_key.end())
      names.emplace(e.fun, it->second);
  }
  return names;
}

// The names of the callbacks among the events still in the buffer, from the
// kernel's own text of the same events (the `trace` file does not consume).
void TracefsSource::LearnNamesFromText(const std::string& text) {
  for (auto& [addr, name] : CallbackNamesFromText(text, raw_->events))
    fun_names_.emplace(addr, std::move(name));
}

// Addresses no text gave a name to: one pass over /proc/kallsyms, stopping
// when all are found.
void TracefsSource::ResolveFromKallsyms() {
  std::unordered_set<uint64_t> want;
  for (const RawCpuhpEvent& e : raw_->events)
    if (e.kind != TraceKind::kExit && !fun_names_.count(e.fun))
      want.insert(e.fun);
  if (want.empty())
    return;
  ++kallsyms_lookups_;
  std::ifstream f("/proc/kallsyms");
  std::string line;
  while (!want.empty() && std::getline(f, line)) {
    uint64_t addr = 0;
    auto [p, ec] = std::from_chars(line.data(), line.data() + line.size(), addr, 16);
    if (ec != std::errc() || !want.count(addr))
      continue;
    // "ffffffff81362e20 t cpuhp_kick_ap_work [module]"
    std::string_view rest(p, static_cast<size_t>(line.data() + line.size() - p));
    size_t b = rest.find_first_not_of(' ', rest.find(' ', 1));
    if (b == std::string_view::npos)
      continue;
    rest.remove_prefix(b);
    std::string name(rest.substr(0, rest.find_first_of(" \t")));
    fun_names_.emplace(addr, name);
    want.erase(addr);
  }
  for (uint64_t a : want) {
    char hex[24];
    std::snprintf(hex, sizeof(hex), "0x%llx", static_cast<unsigned long long>(a));
    fun_names_.emplace(a, hex);  // kallsyms hidden (kptr_restrict) or an unloaded module
  }
}

namespace {
// CPU time of the calling thread: what a drain costs, not how long an idle
// thread waited for a CPU.
uint64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}
}  // namespace

std::vector<RawCpuhpEvent> TakeEventsUpTo(std::vector<RawCpuhpEvent>* held,
                                          std::vector<RawCpuhpEvent> read, uint64_t cutoff) {
  std::vector<RawCpuhpEvent> all = std::move(*held);
  held->clear();
  if (all.empty()) {
    all = std::move(read);
  } else {  // what was held, then this read: merged by time
    all.insert(all.end(), read.begin(), read.end());
    std::stable_sort(all.begin(), all.end(), [](const RawCpuhpEvent& a, const RawCpuhpEvent& b) {
      return a.ts_ns < b.ts_ns;
    });
  }
  const auto later = std::find_if(all.begin(), all.end(),
                                  [cutoff](const RawCpuhpEvent& e) { return e.ts_ns > cutoff; });
  held->assign(later, all.end());
  all.erase(later, all.end());
  return all;
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
  const uint64_t cpu0 = ThreadCpuNs();
  std::vector<OpRecord> batch;
  {
    std::lock_guard<std::mutex> l(mu_);
    batch.swap(ops_);
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
  // The busiest CPU's events per operation, from drains of a few writes
  // (the events of the one in flight are read too: at most 1/4 more).
  if (batch.size() >= 4) {
    std::map<int, size_t> per_cpu;
    size_t most = 0;
    for (const RawCpuhpEvent& e : raw_->events)
      most = std::max(most, ++per_cpu[e.event_cpu]);
    events_per_op_ = std::max(events_per_op_, (most + batch.size() - 1) / batch.size());
  }
  for (const RawCpuhpEvent& e : TakeEventsUpTo(&held_, std::move(raw_->events), cutoff)) {
    std::string fun;
    if (e.kind != TraceKind::kExit) {
      fun = fun_names_[e.fun];
      if (fun.empty() || fun[0] == '0')
        ++unnamed_;
    }
    joiner_->FeedEvent(ToTraceEvent(e, CommOf(e.pid, e.event_cpu), std::move(fun)));
  }
  joiner_->EndOperations(batch);
  drain_cpu_ns_ += ThreadCpuNs() - cpu0;
  std::lock_guard<std::mutex> l(mu_);
  last_drain_ns_ = MonotonicClock()->NowNs();
  ops_in_ring_ = ops_.size();  // ended after this drain took its batch
  ring_ops_ = RingCapacityOps(buffer_kb_, EventsPerOp());
}

void TracefsSource::DrainerLoop() {
  // Idle priority: the kernel runs it only where nothing else wants the CPU.
  sched_param sp{};
  std::string policy;
  if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp) == 0) {
    policy = "SCHED_IDLE";
    drainer_sched_ = SCHED_IDLE;
  } else if (setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19) == 0)
    policy = "nice 19";
  else
    policy = "normal";
  if (!drainer_cpus_.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : drainer_cpus_)
      if (c >= 0 && c < CPU_SETSIZE)
        CPU_SET(c, &set);
    std::string list;
    for (int c : drainer_cpus_)
      list += (list.empty() ? "" : ",") + std::to_string(c);
    if (sched_setaffinity(0, sizeof(set), &set) == 0)
      policy += " on CPU " + list;
  }
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

// Best effort (raising a thread's priority needs CAP_SYS_NICE): at worst the
// writer waits for the drainer as it is.
void TracefsSource::BoostDrainer(bool on) {
  const pid_t tid = drainer_tid_;
  if (tid <= 0)
    return;
  sched_param sp{};
  if (on) {
    ++drainer_boosts_;
    sched_setscheduler(tid, SCHED_OTHER, &sp);
    setpriority(PRIO_PROCESS, static_cast<id_t>(tid), 0);
  } else if (drainer_sched_ == SCHED_IDLE) {
    sched_setscheduler(tid, SCHED_IDLE, &sp);
  } else {
    setpriority(PRIO_PROCESS, static_cast<id_t>(tid), 19);
  }
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
      for (const char* ev : kEvents)
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
  j["unnamed_callbacks"] = unnamed_;
  j["events"] = joiner_ ? joiner_->EventsJson() : nlohmann::json::object();
  j["lost_events"] = std::move(lost);
  return j;
}

bool RemoveKeptTraceInstance(const std::string& tracefs_root, std::string* err) {
  const std::string path = tracefs_root + "/instances/" + kKeptInstance;
  const int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return false;  // none
  bool removed = false;
  if (flock(fd, LOCK_EX | LOCK_NB) == 0) {  // else a run holds it
    removed = rmdir(path.c_str()) == 0;
    if (!removed)
      *err = path + ": cannot remove: " + strerror(errno);
  }
  close(fd);
  return removed;
}

void RestoreTraceInstances(std::FILE* out) {
  const std::string root = FindTracefs();
  if (root.empty())
    return;
  std::string err;
  if (RemoveKeptTraceInstance(root, &err))
    std::fprintf(out, "removed tracefs instance %s/instances/%s (kept between runs)\n",
                 root.c_str(), kKeptInstance);
  else if (!err.empty())
    spdlog::error("{}", err);
  std::vector<std::string> errs;
  for (const std::string& n : RemoveStaleTraceInstances(root, &errs))
    std::fprintf(out,
                 "removed tracefs instance %s/instances/%s left by a run that did not finish\n",
                 root.c_str(), n.c_str());
  for (const std::string& e : errs)
    spdlog::error("{}", e);
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
