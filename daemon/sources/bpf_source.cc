// SPDX-License-Identifier: GPL-2.0
#include "sources/bpf_source.h"

#include <errno.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <span>

#include <spdlog/spdlog.h>

#include "util/json_file.h"

#ifdef CPUHP_HAVE_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <bpf/btf.h>

#include "cpuhp_phases.skel.h"  // generated: bpftool gen skeleton (CMakeLists.txt)
#include "sources/bpf/cpuhp_phases_abi.h"
#include "sources/btf_funcs.h"

// cpuhp_phases.bpf.c has one fentry/fexit pair per probe id: 0..8 the
// hotplug path (cp_fentry_N), 9 get_nohz_timer_target (cp_nohz_fentry).
static_assert(CPUHP_PROBE_NOHZ_TIMER_TARGET == 9 && CPUHP_PROBE_NR == 10);
#endif

namespace cpuhp {

using nlohmann::json;

namespace {

// The probes' first argument: the target CPU (the module's has_cpu_arg).
bool HasCpuArg(uint32_t id) {
  return id != CPUHP_PROBE_TAKE_CPU_DOWN && id != CPUHP_PROBE_NOHZ_TIMER_TARGET;
}

}  // namespace

uint64_t BpfCookie(uint32_t id, const std::string& symbol) {
  uint64_t c = id & 0xffu;
  if (HasCpuArg(id)) {
    c |= 0x100u;  // CPUHP_BPF_COOKIE_CPU_ARG
    if (symbol != KmodProbeName(id))
      c |= 0x200u;  // CPUHP_BPF_COOKIE_ARG_UNSURE
  }
  return c;
}

BpfFentryChoice BpfChooseFentry(uint32_t id, const std::vector<std::string>& symbols,
                                bool kprobe_only, const std::string& btf_error,
                                const std::function<bool(const std::string&)>& in_btf) {
  const std::string name = KmodProbeName(id);
  if (symbols.empty())
    return {};  // nothing to attach to: the probe's own reason says so
  if (kprobe_only)
    return {"", "kernel_phases.bpf_attach is \"kprobe\""};
  if (!btf_error.empty())
    return {"", btf_error};
  if (std::find(symbols.begin(), symbols.end(), name) == symbols.end())
    return {"", "only renamed copies (" + symbols.front() +
                    "): fentry is placed on the exact function, whose prototype BTF describes"};
  if (!in_btf(name))
    return {"", name + " is not in the kernel's BTF (/sys/kernel/btf/vmlinux)"};
  return {name, ""};
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

constexpr const char* kVmlinuxBtf = "/sys/kernel/btf/vmlinux";

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
  if (line.rfind("libbpf: ", 0) == 0)
    line.erase(0, 8);
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
  // Per probe id, the fentry and fexit programs (cpuhp_phases.bpf.c).
  std::array<bpf_program*, CPUHP_PROBE_NR> fentry{}, fexit{};
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
  // ENOTSUPP (524) is the kernel's own, unknown to libc: for fentry/fexit,
  // no BPF trampoline for this architecture or kernel.
  if (err == 524)  // libbpf's own text adds nothing ("strerror_r(-524)=22")
    return "ENOTSUPP (no BPF trampoline for it on this architecture and kernel)";
  std::string s = std::strerror(err);
  if (!g_libbpf_last.empty())
    s += " (libbpf: " + g_libbpf_last + ")";
  return s;
}

using FentryChoices = std::array<BpfFentryChoice, CPUHP_PROBE_NR>;
using Symbols = BpfSymbols;

// Step 1: fentry/fexit where the kernel's BTF describes the exact function.
// /sys/kernel/btf/vmlinux is walked for the probes' names alone
// (btf_funcs.h): libbpf parses it whole at the object's load, and a second
// parse here cost ~45 ms of every run's start-up. libbpf answers when the
// walk cannot (a kind newer than the walk). Then one 2-instruction fentry
// program on the first of them: a kernel that refuses it (EPERM, ENOTSUPP)
// refuses ours, and says so before the object is opened and loaded.
struct FentryBtf {
  std::array<uint32_t, CPUHP_PROBE_NR> ids{};  // BTF type id of the exact function, 0: none
  std::string error;                           // why fentry cannot be used at all
};

std::string TryFentry(uint32_t btf_id) {
  const bpf_insn insns[] = {
      {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .src_reg = 0, .off = 0, .imm = 0},
      {.code = BPF_JMP | BPF_EXIT, .dst_reg = 0, .src_reg = 0, .off = 0, .imm = 0},
  };
  LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FENTRY,
              .attach_btf_id = btf_id);
  g_libbpf_last.clear();
  const int fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "cp_fentry_try", "GPL", insns, 2, &opts);
  if (fd >= 0) {
    close(fd);
    return "";
  }
  return LibbpfError(errno);
}

FentryBtf FindFentryTargets(bool kprobe_only) {
  FentryBtf out;
  if (kprobe_only)
    return out;
  std::vector<std::string> names;
  for (uint32_t id = 0; id < CPUHP_PROBE_NR; ++id)
    names.emplace_back(KmodProbeName(id));
  std::vector<uint32_t> ids;
  std::string walk_error;
  if (BtfFileHasFuncs(kVmlinuxBtf, names, &ids, &walk_error)) {
    std::copy(ids.begin(), ids.end(), out.ids.begin());
    for (uint32_t id = 0; id < CPUHP_PROBE_NR; ++id) {
      if (!out.ids[id])
        continue;
      if (std::string e = TryFentry(out.ids[id]); !e.empty())
        out.error = "fentry/fexit programs refused at load: " + e +
                    " (a 2-instruction fentry program on " + names[id] + ")";
      break;
    }
    return out;
  }
  if (access(kVmlinuxBtf, F_OK) == 0)
    spdlog::debug("bpf: {}; libbpf parses the BTF instead", walk_error);
  btf* vmlinux = btf__load_vmlinux_btf();
  if (!vmlinux && access(kVmlinuxBtf, F_OK) != 0)
    out.error = "no kernel BTF (no /sys/kernel/btf/vmlinux): fentry needs CONFIG_DEBUG_INFO_BTF";
  else if (!vmlinux)
    out.error =
        "kernel BTF unreadable (/sys/kernel/btf/vmlinux: " + std::string(std::strerror(errno)) +
        ")";
  for (uint32_t id = 0; vmlinux && id < CPUHP_PROBE_NR; ++id)
    out.ids[id] = static_cast<uint32_t>(
        std::max(0, btf__find_by_name_kind(vmlinux, names[id].c_str(), BTF_KIND_FUNC)));
  btf__free(vmlinux);
  return out;
}

FentryChoices ChooseFentry(const Symbols& symbols, bool kprobe_only, const FentryBtf& btf) {
  FentryChoices out;
  for (uint32_t id = 0; id < CPUHP_PROBE_NR; ++id) {
    const auto in_btf = [&](const std::string& fn) {
      return fn == KmodProbeName(id) && btf.ids[id] != 0;
    };
    out[id] = BpfChooseFentry(id, symbols[id], kprobe_only, btf.error, in_btf);
  }
  return out;
}

// Step 2: the object opened and loaded with the chosen fentry/fexit pairs
// bound to their functions, the others not loaded. A kernel that refuses
// any of them at load fails the whole object: then kprobes only, and each
// choice says why.
std::unique_ptr<BpfSource::State> LoadPrograms(int possible, FentryChoices* fentry,
                                               std::string* why) {
  std::string load_error;
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto s = std::make_unique<BpfSource::State>();
    s->skel = cpuhp_phases_bpf__open();
    if (!s->skel) {
      *why = "BPF object open: " + LibbpfError(errno);
      return nullptr;
    }
    s->possible = possible;
    s->nr_cpu_ids = static_cast<uint32_t>(possible);
    bpf_map__set_max_entries(s->skel->maps.cp_targets, s->nr_cpu_ids);
    bool any_fentry = false;
    for (uint32_t id = 0; id < CPUHP_PROBE_NR; ++id) {
      const bool nohz = id == CPUHP_PROBE_NOHZ_TIMER_TARGET;
      const std::string n = std::to_string(id);
      bpf_object* obj = s->skel->obj;
      s->fentry[id] = nohz ? s->skel->progs.cp_nohz_fentry
                           : bpf_object__find_program_by_name(obj, ("cp_fentry_" + n).c_str());
      s->fexit[id] = nohz ? s->skel->progs.cp_nohz_fexit
                          : bpf_object__find_program_by_name(obj, ("cp_fexit_" + n).c_str());
      const std::string& fn = (*fentry)[id].fentry;
      for (bpf_program* prog : {s->fentry[id], s->fexit[id]}) {
        if (!fn.empty() && bpf_program__set_attach_target(prog, 0, fn.c_str()) == 0) {
          any_fentry = true;
          continue;
        }
        bpf_program__set_autoload(prog, false);
      }
    }
    g_libbpf_last.clear();
    const int e = cpuhp_phases_bpf__load(s->skel);
    if (e == 0)
      return s;
    const int code = e < 0 ? -e : e;
    if (!any_fentry) {
      *why = "BPF programs refused by the kernel: " + LibbpfError(code);
      if (code == EPERM)
        *why +=
            "; bpf() needs CAP_BPF and CAP_PERFMON (or root), and a kernel with "
            "CONFIG_BPF_SYSCALL and CONFIG_BPF_EVENTS";
      return nullptr;
    }
    load_error = "fentry/fexit programs refused at load: " + LibbpfError(code);
    for (auto& c : *fentry)
      if (!c.fentry.empty())
        c = {"", load_error};
  }
  *why = "BPF programs refused by the kernel: " + load_error;
  return nullptr;
}

// Step 3, per probe: the fentry/fexit pair on the exact function when
// chosen, kprobe/kretprobe pairs on every other copy (and on the function
// when fentry failed). The probe table's row says which, and why not.
json AttachProbe(BpfSource::State* st, uint32_t id, const std::vector<std::string>& symbols,
                 const BpfFentryChoice& fentry, const std::string& no_kprobes) {
  const bool nohz = id == CPUHP_PROBE_NOHZ_TIMER_TARGET;
  bpf_program* entry = nohz ? st->skel->progs.cp_nohz_entry : st->skel->progs.cp_entry;
  bpf_program* ret = nohz ? st->skel->progs.cp_nohz_return : st->skel->progs.cp_return;
  json row = {{"id", id}, {"name", KmodProbeName(id)}, {"selected", true}};
  std::string placed_on, reason, fentry_reason = fentry.reason;
  bool on_fentry = false, on_kprobe = false;
  if (symbols.empty())
    reason = std::string("no symbol ") + KmodProbeName(id) + "* in /proc/kallsyms";
  if (!fentry.fentry.empty()) {
    g_libbpf_last.clear();
    bpf_link* e = bpf_program__attach(st->fentry[id]);
    const int e_err = e ? 0 : errno;
    bpf_link* r = e ? bpf_program__attach(st->fexit[id]) : nullptr;
    if (e && r) {
      st->links.push_back(e);
      st->links.push_back(r);
      placed_on = fentry.fentry;
      on_fentry = true;
    } else {
      const int code = e ? errno : e_err;
      if (e)
        bpf_link__destroy(e);
      fentry_reason = std::string(e ? "fexit" : "fentry") + " attach: " + LibbpfError(code);
    }
  }
  for (const std::string& sym : symbols) {
    if (on_fentry && sym == fentry.fentry)
      continue;
    if (!no_kprobes.empty()) {
      if (reason.empty())
        reason = sym + ": " + no_kprobes;
      continue;
    }
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
    on_kprobe = true;
  }
  row["placed"] = !placed_on.empty();
  row["mechanism"] =
      on_fentry ? (on_kprobe ? "fentry+kprobe" : "fentry") : (on_kprobe ? "kprobe" : "none");
  if (!on_fentry && !fentry_reason.empty())
    row["fentry_reason"] = fentry_reason;
  if (!placed_on.empty()) {
    row["symbol"] = placed_on;
  } else {
    if (reason.empty())
      reason = fentry_reason;
    row["reason"] = reason;
  }
  return row;
}

}  // namespace

BpfSource::BpfSource(const KmodSource* prefer, bool kprobe_only)
    : prefer_(prefer), kprobe_only_(kprobe_only) {}
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
  // Confidentiality refuses kprobes and BPF tracing alike; a kernel without
  // kprobes may still attach fentry/fexit.
  if (std::string r = BpfBlockedReason(lockdown, true); !r.empty()) {
    *why = r;
    return false;
  }
  libbpf_set_print(LibbpfPrint);
  g_libbpf_last.clear();
  const bool have_kprobes = HaveKprobes();
  const FentryBtf btf = FindFentryTargets(kprobe_only_);
  // Neither kprobes nor fentry: nothing can be placed, said before kallsyms
  // is read (~30 ms) and the object loaded.
  if (!have_kprobes && (kprobe_only_ || !btf.error.empty())) {
    *why = "no hotplug-path probe could be placed: " + BpfBlockedReason("", false) + "; fentry: " +
           (kprobe_only_ ? std::string("kernel_phases.bpf_attach is \"kprobe\"") : btf.error);
    return false;
  }
  // Read in pieces: holding the 5+ MB file whole cost ~40 ms of start-up
  // here in the copies and page faults of a growing string.
  Symbols symbols;
  if (!BpfPickSymbolsFromFile("/proc/kallsyms", &symbols, &err)) {
    *why = err;
    return false;
  }
  const int possible = libbpf_num_possible_cpus();
  if (possible <= 0) {
    *why = "cannot read the possible CPUs (/sys/devices/system/cpu/possible)";
    return false;
  }
  FentryChoices fentry = ChooseFentry(symbols, kprobe_only_, btf);
  std::unique_ptr<State> st = LoadPrograms(possible, &fentry, why);
  if (!st)
    return false;
  // The programs' own cost per hit, counted by the kernel while this fd is
  // open (kernel.bpf_stats_enabled without touching the sysctl).
  st->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
  if (st->stats_fd < 0)
    st->stats_error = std::string("BPF_ENABLE_STATS: ") + std::strerror(errno);
  const std::string no_kprobes = have_kprobes ? "" : BpfBlockedReason("", false);
  bool any_path_probe = false;
  std::string first_error;
  for (uint32_t id = 0; id < CPUHP_PROBE_NR; ++id) {
    json row = AttachProbe(st.get(), id, symbols[id], fentry[id], no_kprobes);
    if (row["placed"].get<bool>()) {
      any_path_probe |= id != CPUHP_PROBE_NOHZ_TIMER_TARGET;
    } else if (first_error.empty() && !symbols[id].empty()) {
      const std::string reason = row["reason"].get<std::string>();
      const std::string fr = row.value("fentry_reason", std::string());
      first_error = reason + (fr.empty() || fr == reason ? std::string() : "; fentry: " + fr);
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
    // The kprobe programs, and each fentry/fexit kind summed over its
    // per-probe copies; programs not loaded are left out.
    json programs = json::object();
    const auto add = [&programs](const char* name, std::span<bpf_program* const> progs) {
      uint64_t runs = 0, run_time_ns = 0, misses = 0;
      bool any = false;
      for (const bpf_program* prog : progs) {
        bpf_prog_info info{};
        uint32_t len = sizeof(info);
        if (!prog || bpf_program__fd(prog) < 0 ||
            bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) != 0)
          continue;
        any = true;
        runs += info.run_cnt;
        run_time_ns += info.run_time_ns;
        misses += info.recursion_misses;
      }
      if (any)
        programs[name] = {
            {"runs", runs},
            {"run_time_ns", run_time_ns},
            {"mean_ns", runs ? static_cast<double>(run_time_ns) / static_cast<double>(runs) : 0.0},
            {"recursion_misses", misses}};
    };
    const auto& sk = st.skel->progs;
    add("cp_entry", {&sk.cp_entry, 1});
    add("cp_return", {&sk.cp_return, 1});
    add("cp_nohz_entry", {&sk.cp_nohz_entry, 1});
    add("cp_nohz_return", {&sk.cp_nohz_return, 1});
    // Probe ids below CPUHP_PROBE_NOHZ_TIMER_TARGET are the hotplug path.
    const std::span<bpf_program*const> f(st.fentry), x(st.fexit);
    const size_t nohz = CPUHP_PROBE_NOHZ_TIMER_TARGET;
    add("cp_fentry", f.first(nohz));
    add("cp_fexit", x.first(nohz));
    add("cp_nohz_fentry", f.subspan(nohz, 1));
    add("cp_nohz_fexit", x.subspan(nohz, 1));
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
  j["program"] =
      "BPF programs, fentry/fexit or kprobe/kretprobe per probe "
      "(daemon/sources/bpf/cpuhp_phases.bpf.c)";
  j["clock"] = "CLOCK_MONOTONIC (bpf_ktime_get_ns), ns";
  const json now = st_ ? Collect() : final_;
  for (const char* k : {"probes", "records_dropped", "program_cost", "get_nohz_timer_target"})
    if (now.contains(k))
      j[k] = now[k];
  return j;
}

#else  // !CPUHP_HAVE_BPF

struct BpfSource::State {};

BpfSource::BpfSource(const KmodSource* prefer, bool kprobe_only)
    : prefer_(prefer), kprobe_only_(kprobe_only) {}
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
