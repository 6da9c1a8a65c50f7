// SPDX-License-Identifier: GPL-2.0
#include "sources/bpf_source.h"

#include <errno.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include <spdlog/spdlog.h>

#include "util/json_file.h"

#ifdef CPUHP_HAVE_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cpuhp_phases.skel.h"  // generated: bpftool gen skeleton (CMakeLists.txt)
#include "sources/bpf/cpuhp_phases_abi.h"
#endif

namespace cpuhp {

using nlohmann::json;

namespace {

// The probes' first argument: the target CPU (the module's has_cpu_arg).
bool HasCpuArg(uint32_t id) {
  return id != CPUHP_PROBE_TAKE_CPU_DOWN && id != CPUHP_PROBE_NOHZ_TIMER_TARGET;
}

bool IsTextType(std::string_view t) {
  return t.size() == 1 && (t[0] == 't' || t[0] == 'T');
}

}  // namespace

std::array<std::vector<std::string>, CPUHP_PROBE_NR> BpfPickSymbols(std::string_view kallsyms) {
  std::array<std::vector<std::string>, CPUHP_PROBE_NR> out;
  size_t pos = 0;
  while (pos < kallsyms.size()) {
    size_t end = kallsyms.find('\n', pos);
    if (end == std::string_view::npos)
      end = kallsyms.size();
    std::string_view line = kallsyms.substr(pos, end - pos);
    pos = end + 1;
    // "ADDRESS TYPE NAME" for the core kernel; a module's symbols end in
    // "\t[module]" and are not ours.
    const size_t a = line.find(' ');
    if (a == std::string_view::npos)
      continue;
    const size_t b = line.find(' ', a + 1);
    if (b == std::string_view::npos || !IsTextType(line.substr(a + 1, b - a - 1)))
      continue;
    std::string_view name = line.substr(b + 1);
    if (name.find_first_of("\t ") != std::string_view::npos)
      continue;
    const std::string_view base = name.substr(0, name.find('.'));
    for (uint32_t id = 0; id < CPUHP_PROBE_NR; ++id) {
      if (base != KmodProbeName(id))
        continue;
      auto& list = out[id];
      if (list.size() < kBpfMaxSymbolsPerProbe &&
          std::find(list.begin(), list.end(), name) == list.end())
        list.emplace_back(name);
      break;
    }
  }
  return out;
}

uint64_t BpfCookie(uint32_t id, const std::string& symbol) {
  uint64_t c = id & 0xffu;
  if (HasCpuArg(id)) {
    c |= 0x100u;  // CPUHP_BPF_COOKIE_CPU_ARG
    if (symbol != KmodProbeName(id))
      c |= 0x200u;  // CPUHP_BPF_COOKIE_ARG_UNSURE
  }
  return c;
}

std::string BpfBlockedReason(const std::string& lockdown, bool have_kprobes) {
  if (lockdown.find("[confidentiality]") != std::string::npos)
    return "kernel lockdown is confidentiality (/sys/kernel/security/lockdown): kprobes and "
           "perf events are refused, so are the module's and BPF's probes";
  if (!have_kprobes)
    return "this kernel has no kprobes (no kprobe PMU in /sys/bus/event_source/devices, no "
           "kprobe_events in tracefs): the probes need CONFIG_KPROBES";
  return "";
}

#ifdef CPUHP_HAVE_BPF

namespace {

// libbpf's messages: debug in our log; the last warning kept for a reason.
std::string g_libbpf_last;

int LibbpfPrint(enum libbpf_print_level level, const char* fmt, va_list ap) {
  char buf[512];
  const int n = std::vsnprintf(buf, sizeof(buf), fmt, ap);
  if (n <= 0)
    return n;
  std::string line(buf);
  while (!line.empty() && (line.back() == '\n' || line.back() == ' '))
    line.pop_back();
  if (level != LIBBPF_DEBUG && !line.empty())
    g_libbpf_last = line;
  spdlog::debug("libbpf: {}", line);
  return n;
}

bool HaveKprobes() {
  return access("/sys/bus/event_source/devices/kprobe/type", F_OK) == 0 ||
         access("/sys/kernel/tracing/kprobe_events", F_OK) == 0 ||
         access("/sys/kernel/debug/tracing/kprobe_events", F_OK) == 0;
}

}  // namespace

struct BpfSource::State {
  cpuhp_phases_bpf* skel = nullptr;
  ring_buffer* rb = nullptr;
  std::vector<bpf_link*> links;
  std::vector<cpuhp_probe_record> pending;
  uint32_t nr_cpu_ids = 0;
  int possible = 0;
  int stats_fd = -1;  // BPF_ENABLE_STATS: the programs' run time, while open
  std::string stats_error;

  ~State() {
    if (stats_fd >= 0)
      close(stats_fd);
    if (rb)
      ring_buffer__free(rb);
    for (bpf_link* l : links)
      bpf_link__destroy(l);
    if (skel)
      cpuhp_phases_bpf__destroy(skel);
  }
};

namespace {

int OnRecord(void* ctx, void* data, size_t len) {
  auto* pending = static_cast<std::vector<cpuhp_probe_record>*>(ctx);
  if (len < sizeof(cpuhp_probe_record))
    return 0;
  cpuhp_probe_record r;
  std::memcpy(&r, data, sizeof(r));
  pending->push_back(r);
  return 0;
}

std::string LibbpfError(int err) {
  std::string s = std::strerror(err);
  if (!g_libbpf_last.empty())
    s += " (libbpf: " + g_libbpf_last + ")";
  return s;
}

}  // namespace

BpfSource::BpfSource(const KmodSource* prefer) : prefer_(prefer) {}
BpfSource::~BpfSource() = default;

bool BpfSource::Start(std::string* why) {
  if (prefer_ && prefer_->running()) {
    *why =
        "the kmod source runs (kernel_phases.source \"auto\" uses the module when it is "
        "loaded; \"both\" runs both)";
    return false;
  }
  std::string lockdown, err;
  if (!ReadSmallFile("/sys/kernel/security/lockdown", 256, &lockdown, &err))
    lockdown.clear();
  if (std::string r = BpfBlockedReason(lockdown, HaveKprobes()); !r.empty()) {
    *why = r;
    return false;
  }
  libbpf_set_print(LibbpfPrint);
  g_libbpf_last.clear();
  auto st = std::make_unique<State>();
  st->skel = cpuhp_phases_bpf__open();
  if (!st->skel) {
    *why = "BPF object open: " + LibbpfError(errno);
    return false;
  }
  const int possible = libbpf_num_possible_cpus();
  if (possible <= 0) {
    *why = "cannot read the possible CPUs (/sys/devices/system/cpu/possible)";
    return false;
  }
  st->possible = possible;
  st->nr_cpu_ids = static_cast<uint32_t>(possible);
  bpf_map__set_max_entries(st->skel->maps.cp_targets, st->nr_cpu_ids);
  if (int e = cpuhp_phases_bpf__load(st->skel); e != 0) {
    const int code = e < 0 ? -e : e;
    *why = "BPF programs refused by the kernel: " + LibbpfError(code);
    if (code == EPERM)
      *why +=
          "; bpf() needs CAP_BPF and CAP_PERFMON (or root), and a kernel with "
          "CONFIG_BPF_SYSCALL and CONFIG_BPF_EVENTS";
    return false;
  }
  // The programs' own cost per hit, counted by the kernel while this fd is
  // open (kernel.bpf_stats_enabled without touching the sysctl).
  st->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
  if (st->stats_fd < 0)
    st->stats_error = std::string("BPF_ENABLE_STATS: ") + std::strerror(errno);
  std::string kallsyms;
  if (!ReadSmallFile("/proc/kallsyms", size_t{256} << 20, &kallsyms, &err)) {
    *why = "/proc/kallsyms: " + err;
    return false;
  }
  const auto symbols = BpfPickSymbols(kallsyms);
  bool any_path_probe = false;
  std::string first_error;
  for (uint32_t id = 0; id < CPUHP_PROBE_NR; ++id) {
    const bool nohz = id == CPUHP_PROBE_NOHZ_TIMER_TARGET;
    bpf_program* entry = nohz ? st->skel->progs.cp_nohz_entry : st->skel->progs.cp_entry;
    bpf_program* ret = nohz ? st->skel->progs.cp_nohz_return : st->skel->progs.cp_return;
    json row = {{"id", id}, {"name", KmodProbeName(id)}, {"selected", true}};
    std::string placed_on, reason;
    if (symbols[id].empty())
      reason = std::string("no symbol ") + KmodProbeName(id) + "* in /proc/kallsyms";
    for (const std::string& sym : symbols[id]) {
      g_libbpf_last.clear();
      LIBBPF_OPTS(bpf_kprobe_opts, opts, .bpf_cookie = BpfCookie(id, sym));
      bpf_link* e = bpf_program__attach_kprobe_opts(entry, sym.c_str(), &opts);
      const int e_err = e ? 0 : errno;
      opts.retprobe = true;
      bpf_link* r = e ? bpf_program__attach_kprobe_opts(ret, sym.c_str(), &opts) : nullptr;
      if (!e || !r) {
        const int code = e ? errno : e_err;
        if (e)
          bpf_link__destroy(e);
        if (reason.empty())
          reason = sym + ": " + (e ? "kretprobe" : "kprobe") + " attach: " + LibbpfError(code);
        continue;
      }
      st->links.push_back(e);
      st->links.push_back(r);
      placed_on += (placed_on.empty() ? "" : ",") + sym;
    }
    row["placed"] = !placed_on.empty();
    row["mechanism"] = placed_on.empty() ? "none" : "kprobe";
    if (!placed_on.empty()) {
      row["symbol"] = placed_on;
      any_path_probe |= !nohz;
    } else {
      row["reason"] = reason;
      if (first_error.empty() && !symbols[id].empty())
        first_error = reason;
    }
    probes_.push_back(std::move(row));
  }
  if (!any_path_probe) {
    *why = "no hotplug-path probe could be placed" +
           (first_error.empty() ? std::string() : ": " + first_error);
    probes_ = json::array();
    return false;
  }
  st->rb =
      ring_buffer__new(bpf_map__fd(st->skel->maps.cp_records), OnRecord, &st->pending, nullptr);
  if (!st->rb) {
    *why = "BPF ring buffer: " + LibbpfError(errno);
    probes_ = json::array();
    return false;
  }
  st_ = std::move(st);
  return true;
}

void BpfSource::OpEnd(const OpRecord& rec) {
  if (!st_)
    return;
  // Every record of this op was submitted before its write(2) returned.
  ring_buffer__consume(st_->rb);
  std::sort(st_->pending.begin(), st_->pending.end(),
            [](const cpuhp_probe_record& a, const cpuhp_probe_record& b) { return a.seq < b.seq; });
  joiner_.Join(rec, st_->pending);
  st_->pending.clear();
}

json BpfSource::Collect() const {
  json out;
  const State& st = *st_;
  // Per-CPU values are 8-byte aligned, one per possible CPU.
  std::vector<cpuhp_bpf_counters> counters(static_cast<size_t>(st.possible));
  const int counters_fd = bpf_map__fd(st.skel->maps.cp_counters);
  json probes = probes_;
  uint64_t dropped = 0;
  for (json& row : probes) {
    const uint32_t id = row["id"].get<uint32_t>();
    cpuhp_bpf_counters sum{};
    if (bpf_map_lookup_elem(counters_fd, &id, counters.data()) == 0)
      for (const auto& c : counters) {
        sum.hits += c.hits;
        sum.dropped += c.dropped;
        sum.unmatched += c.unmatched;
      }
    row["hits"] = sum.hits;
    row["unmatched"] = sum.unmatched;
    row["dropped"] = sum.dropped;
    dropped += sum.dropped;
  }
  out["probes"] = std::move(probes);
  out["records_dropped"] = dropped;
  if (st.stats_fd < 0) {
    out["program_cost"] = {{"status", "unavailable"}, {"reason", st.stats_error}};
  } else {
    json programs = json::object();
    const std::pair<const char*, const bpf_program*> progs[] = {
        {"cp_entry", st.skel->progs.cp_entry},
        {"cp_return", st.skel->progs.cp_return},
        {"cp_nohz_entry", st.skel->progs.cp_nohz_entry},
        {"cp_nohz_return", st.skel->progs.cp_nohz_return}};
    for (const auto& [name, prog] : progs) {
      bpf_prog_info info{};
      uint32_t len = sizeof(info);
      if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) != 0)
        continue;
      programs[name] = {{"runs", info.run_cnt},
                        {"run_time_ns", info.run_time_ns},
                        {"mean_ns", info.run_cnt ? static_cast<double>(info.run_time_ns) /
                                                       static_cast<double>(info.run_cnt)
                                                 : 0.0},
                        {"recursion_misses", info.recursion_misses}};
    }
    out["program_cost"] = {{"status", "ok"}, {"programs", std::move(programs)}};
  }

  const json& nohz_row = probes_[CPUHP_PROBE_NOHZ_TIMER_TARGET];
  if (!nohz_row.value("placed", false)) {
    out["get_nohz_timer_target"] = KmodNohzUnavailableJson("get_nohz_timer_target not placed: " +
                                                           nohz_row.value("reason", std::string()));
    return out;
  }
  std::vector<cpuhp_bpf_nohz> per_cpu(static_cast<size_t>(st.possible));
  cpuhp_probe_hist h{};
  h.cpu = CPUHP_PROBE_ALL_CPUS;
  const uint32_t zero = 0;
  if (bpf_map_lookup_elem(bpf_map__fd(st.skel->maps.cp_nohz), &zero, per_cpu.data()) == 0)
    for (const auto& c : per_cpu) {
      h.count += c.count;
      h.sum_ns += c.sum_ns;
      h.max_ns = std::max(h.max_ns, c.max_ns);
      for (int b = 0; b < CPUHP_PROBE_HIST_BUCKETS; ++b)
        h.buckets[b] += c.buckets[b];
    }
  std::vector<uint64_t> counts(st.nr_cpu_ids);
  bool have_counts = true;
  const int targets_fd = bpf_map__fd(st.skel->maps.cp_targets);
  for (uint32_t cpu = 0; cpu < st.nr_cpu_ids && have_counts; ++cpu)
    have_counts = bpf_map_lookup_elem(targets_fd, &cpu, &counts[cpu]) == 0;
  out["get_nohz_timer_target"] = KmodNohzJson(h, counts, have_counts);
  return out;
}

void BpfSource::Stop() {
  if (!st_)
    return;
  final_ = Collect();
  st_.reset();  // detaches every probe
}

json BpfSource::ReportJson() const {
  json j = joiner_.ToJson();
  j["program"] = "kprobe/kretprobe BPF programs (daemon/sources/bpf/cpuhp_phases.bpf.c)";
  j["clock"] = "CLOCK_MONOTONIC (bpf_ktime_get_ns), ns";
  const json now = st_ ? Collect() : final_;
  for (const char* k : {"probes", "records_dropped", "program_cost", "get_nohz_timer_target"})
    if (now.contains(k))
      j[k] = now[k];
  return j;
}

#else  // !CPUHP_HAVE_BPF

struct BpfSource::State {};

BpfSource::BpfSource(const KmodSource* prefer) : prefer_(prefer) {}
BpfSource::~BpfSource() = default;

bool BpfSource::Start(std::string* why) {
  *why =
      "this cpuhp-stress was built without BPF support (CMake CPUHP_BPF=OFF: libbpf, "
      "clang or bpftool missing at build time)";
  return false;
}
void BpfSource::OpEnd(const OpRecord&) {}
void BpfSource::Stop() {}
json BpfSource::Collect() const {
  return json::object();
}
json BpfSource::ReportJson() const {
  return joiner_.ToJson();
}

#endif  // CPUHP_HAVE_BPF

}  // namespace cpuhp
