// SPDX-License-Identifier: GPL-2.0
#include "sources/kmod_source.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <iterator>

#include <spdlog/spdlog.h>

#include "stats/run_stats.h"
#include "util/json_file.h"
#include "util/report_json.h"

namespace cpuhp {

using nlohmann::json;

// The module's layout (kmod/cpuhp_probe.c asserts the same): one for every
// architecture, 64-bit and 32-bit, so a daemon of any of them reads any
// module of the same architecture.
static_assert(sizeof(cpuhp_probe_record) == 56);
static_assert(sizeof(cpuhp_probe_version) == 24);
static_assert(sizeof(cpuhp_probe_info) == 264 && offsetof(cpuhp_probe_info, hits) == 240);
static_assert(sizeof(cpuhp_probe_hist) == 352 && offsetof(cpuhp_probe_hist, count) == 8);
static_assert(sizeof(cpuhp_probe_targets) == 16);
static_assert(sizeof(cpuhp_probe_calib_direct) == 32);

namespace {

constexpr const char* kProbeNames[CPUHP_PROBE_NR] = {
    "__cpu_up",    "native_cpu_up",         "cpuhp_kick_ap_alive", "cpuhp_bringup_ap",
    "bringup_cpu", "takedown_cpu",          "take_cpu_down",       "_cpu_up",
    "_cpu_down",   "get_nohz_timer_target",
};

std::string Errno(int e) {
  return std::strerror(e);
}

}  // namespace

const char* KmodProbeName(uint32_t id) {
  return id < CPUHP_PROBE_NR ? kProbeNames[id] : "";
}

bool KmodProbeDirection(uint32_t id, Direction* dir) {
  switch (id) {
    case CPUHP_PROBE_ARCH_CPU_UP:
    case CPUHP_PROBE_NATIVE_CPU_UP:
    case CPUHP_PROBE_KICK_AP_ALIVE:
    case CPUHP_PROBE_BRINGUP_AP:
    case CPUHP_PROBE_BRINGUP_CPU:
    case CPUHP_PROBE_CPU_UP_GENERIC:
      *dir = Direction::kOnline;
      return true;
    case CPUHP_PROBE_TAKEDOWN_CPU:
    case CPUHP_PROBE_TAKE_CPU_DOWN:
    case CPUHP_PROBE_CPU_DOWN_GENERIC:
      *dir = Direction::kOffline;
      return true;
    default:
      return false;
  }
}

bool KmodCheckVersion(const cpuhp_probe_version& v, std::string* err) {
  if (v.api_version != CPUHP_PROBE_API_VERSION) {
    *err = "cpuhp_probe module speaks API version " + std::to_string(v.api_version) +
           ", this daemon was built for version " + std::to_string(CPUHP_PROBE_API_VERSION) +
           ": rebuild the module and the daemon from the same tree";
    return false;
  }
  if (v.record_size != sizeof(cpuhp_probe_record) || v.nr_probes != CPUHP_PROBE_NR) {
    *err = "cpuhp_probe module API " + std::to_string(v.api_version) + " has " +
           std::to_string(v.record_size) + "-byte records and " + std::to_string(v.nr_probes) +
           " probes, expected " + std::to_string(sizeof(cpuhp_probe_record)) + " and " +
           std::to_string(CPUHP_PROBE_NR);
    return false;
  }
  return true;
}

bool KmodDecodeRecords(const void* buf, size_t len, std::vector<cpuhp_probe_record>* out,
                       std::string* err) {
  constexpr size_t kSize = sizeof(cpuhp_probe_record);
  if (len % kSize != 0) {
    *err = "cpuhp_probe read returned " + std::to_string(len) + " bytes, not a multiple of the " +
           std::to_string(kSize) + "-byte record";
    return false;
  }
  const auto* p = static_cast<const unsigned char*>(buf);
  for (size_t off = 0; off < len; off += kSize) {
    cpuhp_probe_record r;
    std::memcpy(&r, p + off, kSize);
    out->push_back(r);
  }
  return true;
}

void KmodJoiner::Record(Phase* ph, const OpRecord& op, uint64_t duration_ns, bool failed,
                        bool longer_than_write) {
  // A sweep's set-up write (bringing N CPUs online between levels) is
  // not a measurement: like the write itself, kept out of the tables.
  if (!op.setup) {
    ph->all.Record(duration_ns);
    ph->by_online[op.online_before].Record(duration_ns);
  }
  if (failed)
    ++ph->retval_nonzero;
  if (longer_than_write)
    ++ph->longer_than_write;
}

void KmodJoiner::Join(const OpRecord& op, const std::vector<cpuhp_probe_record>& records) {
  json phases_of_op = json::object();
  // The split x86 bring-up of this op (sums: one hit each in practice).
  struct Part {
    bool seen = false, failed = false, late = false;
    uint64_t ns = 0;
  } kick, bringup_ap;
  for (const cpuhp_probe_record& r : records) {
    ++read_;
    Direction dir;
    const bool known = KmodProbeDirection(r.probe_id, &dir);
    const uint64_t op_end = op.start_ns + op.duration_ns;
    // Joined by where it starts; ending after the write returned would break
    // nesting and is counted, not hidden.
    const bool in_window = r.start_ns >= op.start_ns && r.start_ns <= op_end;
    // An smt/control write moves many CPUs: each phase of each of them.
    const bool cpu_ok =
        op.smt_control || r.target_cpu == op.cpu || (r.flags & CPUHP_PROBE_REC_ARG_UNSURE);
    if (!known || dir != op.dir || !in_window || !cpu_ok) {
      ++unjoined_;
      continue;
    }
    ++joined_;
    const bool late = r.start_ns + r.duration_ns > op_end;
    Record(&phases_[static_cast<int>(dir)][r.probe_id], op, r.duration_ns, r.retval != 0, late);
    if (late)
      ++nesting_violations_;
    if (r.probe_id == CPUHP_PROBE_KICK_AP_ALIVE || r.probe_id == CPUHP_PROBE_BRINGUP_AP) {
      Part& part = r.probe_id == CPUHP_PROBE_KICK_AP_ALIVE ? kick : bringup_ap;
      part.seen = true;
      part.ns += r.duration_ns;
      part.failed |= r.retval != 0;
      part.late |= late;
    }
    // Per operation, a phase's time summed over its hits (one per CPU the
    // write moved: one, or every thread of an smt/control switch).
    json& sum = phases_of_op[KmodProbeName(r.probe_id)];
    sum = (sum.is_null() ? 0 : sum.get<uint64_t>()) + r.duration_ns;
  }
  if (kick.seen && bringup_ap.seen) {
    const uint64_t sum_ns = kick.ns + bringup_ap.ns;
    Record(&bringup_pair_, op, sum_ns, kick.failed || bringup_ap.failed,
           kick.late || bringup_ap.late);
    bringup_pair_seen_ = true;
    phases_of_op[kKernelBringupPhase] = sum_ns;
  }
  if (phases_of_op.empty())
    return;
  if (ops_.size() >= kMaxOpsListed) {
    ++ops_dropped_;
    return;
  }
  ops_.push_back({{"index", op.index},
                  {"cpu", op.cpu},
                  {"direction", DirectionName(op.dir)},
                  {"online_before", op.online_before},
                  {"write_ns", op.duration_ns},
                  {"phases", std::move(phases_of_op)}});
  if (op.setup)
    ops_.back()["setup"] = true;
}

json KmodJoiner::ToJson() const {
  auto phase_json = [](const Phase& ph) {
    json levels = json::array();
    for (const auto& [online, h] : ph.by_online) {
      json level = SummarizeWithHistogram(h);
      level["online_cpus"] = online;
      levels.push_back(std::move(level));
    }
    return json{{"all", SummarizeWithHistogram(ph.all)},
                {"by_online", std::move(levels)},
                {"retval_nonzero", ph.retval_nonzero},
                {"longer_than_write", ph.longer_than_write}};
  };
  json kp = json::object();
  for (int d = 0; d < kDirections; ++d) {
    json dir = json::object();
    for (const auto& [id, ph] : phases_[d])
      dir[KmodProbeName(id)] = phase_json(ph);
    if (static_cast<Direction>(d) == Direction::kOnline && bringup_pair_seen_)
      dir[kKernelBringupPhase] = phase_json(bringup_pair_);
    kp[std::string(DirectionName(static_cast<Direction>(d)))] = std::move(dir);
  }
  return {{"records",
           {{"read", read_},
            {"joined", joined_},
            {"unjoined", unjoined_},
            {"nesting_violations", nesting_violations_}}},
          {"kernel_phases", std::move(kp)},
          {"ops", ops_},
          {"ops_dropped", ops_dropped_}};
}

KmodSource::~KmodSource() {
  if (fd_ >= 0)
    close(fd_);
}

std::string KmodMissingHint(bool have_modules, bool loading_disabled, const std::string& lockdown) {
  if (!have_modules)
    return "this kernel has no loadable module support (no /proc/modules): kernel phases "
           "need CONFIG_MODULES";
  if (loading_disabled)
    return "module loading is switched off until reboot (/proc/sys/kernel/modules_disabled "
           "is 1)";
  const size_t open_at = lockdown.find('[');
  const size_t close_at = open_at == std::string::npos ? open_at : lockdown.find(']', open_at);
  if (close_at != std::string::npos) {
    const std::string mode = lockdown.substr(open_at + 1, close_at - open_at - 1);
    if (mode != "none")
      return "kernel lockdown is " + mode +
             " (/sys/kernel/security/lockdown): unsigned modules are refused; load a "
             "cpuhp_probe.ko signed with a key the kernel trusts (DKMS signs with its MOK "
             "key: mokutil --import /var/lib/dkms/mok.pub)";
  }
  return "is the cpuhp_probe module loaded? insmod kmod/cpuhp_probe.ko";
}

bool KmodSource::Start(std::string* why) {
  fd_ = open(device_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) {
    const int e = errno;
    *why = device_ + ": " + Errno(e);
    if (e == ENOENT) {
      std::string lockdown, disabled, err;
      if (!ReadSmallFile("/sys/kernel/security/lockdown", 256, &lockdown, &err))
        lockdown.clear();  // securityfs not mounted, or no lockdown LSM
      if (!ReadSmallFile("/proc/sys/kernel/modules_disabled", 16, &disabled, &err))
        disabled.clear();
      *why +=
          " (" +
          KmodMissingHint(access("/proc/modules", F_OK) == 0, disabled.starts_with("1"), lockdown) +
          ")";
    }
    return false;
  }
  if (ioctl(fd_, CPUHP_PROBE_IOC_VERSION, &version_) != 0) {
    *why = device_ + ": not a cpuhp_probe device (version ioctl: " + Errno(errno) + ")";
    close(fd_);
    fd_ = -1;
    return false;
  }
  if (!KmodCheckVersion(version_, why)) {
    *why = device_ + ": " + *why;
    close(fd_);
    fd_ = -1;
    return false;
  }
  // Records and counters from before this run are not ours.
  if (ioctl(fd_, CPUHP_PROBE_IOC_RESET) != 0) {
    *why = device_ + ": reset ioctl: " + Errno(errno);
    close(fd_);
    fd_ = -1;
    return false;
  }
  buf_.resize(256);
  return true;
}

bool KmodSource::Drain(std::vector<cpuhp_probe_record>* out) {
  for (;;) {
    ssize_t n = read(fd_, buf_.data(), buf_.size() * sizeof(cpuhp_probe_record));
    if (n < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN)
        return true;
      if (read_error_.empty())
        read_error_ = device_ + ": read: " + Errno(errno);
      return false;
    }
    if (n == 0)
      return true;
    std::string err;
    if (!KmodDecodeRecords(buf_.data(), static_cast<size_t>(n), out, &err)) {
      if (read_error_.empty())
        read_error_ = device_ + ": " + err;
      return false;
    }
  }
}

void KmodSource::OpEnd(const OpRecord& rec) {
  // Every record of this op was written before its write(2) returned.
  std::vector<cpuhp_probe_record> recs;
  Drain(&recs);
  std::sort(recs.begin(), recs.end(),
            [](const cpuhp_probe_record& a, const cpuhp_probe_record& b) { return a.seq < b.seq; });
  joiner_.Join(rec, recs);
}

json KmodProbeInfoJson(uint32_t id, const cpuhp_probe_info& info) {
  // The module NUL-terminates its strings (a full array is cut at its end)
  // and writes ASCII: any other byte becomes '?', so the report stays UTF-8.
  auto text = [](const char* s, size_t n) {
    std::string t(s, strnlen(s, n));
    for (char& c : t)
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e)
        c = '?';
    return t;
  };
  json p = {{"id", id},
            {"name", text(info.name, sizeof(info.name) - 1)},
            {"symbol", text(info.symbol, sizeof(info.symbol) - 1)},
            {"selected", info.selected != 0},
            {"placed", info.placed != 0},
            {"hits", info.hits},
            {"nmissed", info.nmissed},
            {"dropped", info.dropped}};
  if (!info.placed)
    p["reason"] = text(info.reason, sizeof(info.reason) - 1);
  return p;
}

namespace {

json Log2Buckets(const cpuhp_probe_hist& h) {
  json buckets = json::array();
  for (int i = 0; i < CPUHP_PROBE_HIST_BUCKETS; ++i)
    if (h.buckets[i])
      buckets.push_back({{"low_ns", i == 0 ? 0 : (uint64_t{1} << i)}, {"count", h.buckets[i]}});
  return buckets;
}

double MeanNs(const cpuhp_probe_hist& h) {
  return h.count ? static_cast<double>(h.sum_ns) / static_cast<double>(h.count) : 0.0;
}

}  // namespace

json KmodNohzUnavailableJson(const std::string& reason) {
  return {{"status", "unavailable"}, {"reason", reason}};
}

json KmodSelfCostJson(const cpuhp_probe_hist& calib) {
  return {{"calls", calib.count},
          {"mean_ns", MeanNs(calib)},
          {"max_ns", calib.max_ns},
          {"log2_buckets", Log2Buckets(calib)}};
}

json KmodCalibDirectJson(const cpuhp_probe_calib_direct& d) {
  static constexpr const char* kMech[] = {"none", "trap", "ftrace", "jump"};
  auto mech = [](uint32_t m) { return m < std::size(kMech) ? kMech[m] : "unknown"; };
  auto per_call = [&d](uint64_t ns) {
    return d.calls ? static_cast<double>(ns) / static_cast<double>(d.calls) : 0.0;
  };
  return {{"calls", d.calls},
          {"bare_ns_per_call", per_call(d.bare_ns)},
          {"added_ns_per_call", d.probed_ns > d.bare_ns ? per_call(d.probed_ns - d.bare_ns) : 0.0},
          {"calibration_mechanism", mech(d.calib_mech)},
          {"probe_mechanism", mech(d.nohz_mech)},
          {"same_mechanism", d.calib_mech == d.nohz_mech}};
}

json KmodNohzJson(const cpuhp_probe_hist& h, const std::vector<uint64_t>& counts,
                  bool have_counts) {
  json buckets = Log2Buckets(h);
  json targets = json::object();
  if (have_counts) {
    for (size_t cpu = 0; cpu < counts.size(); ++cpu)
      if (counts[cpu])
        targets[std::to_string(cpu)] = counts[cpu];
  }
  return {{"status", "ok"},
          {"count", h.count},
          {"sum_ns", h.sum_ns},
          {"max_ns", h.max_ns},
          {"mean_ns", MeanNs(h)},
          {"log2_buckets", std::move(buckets)},
          {"targets", std::move(targets)}};
}

json KmodSource::ProbeTable() const {
  json table = json::array();
  for (uint32_t id = 0; id < version_.nr_probes; ++id) {
    cpuhp_probe_info info{};
    info.id = id;
    if (ioctl(fd_, CPUHP_PROBE_IOC_PROBE_INFO, &info) != 0) {
      table.push_back({{"id", id}, {"name", KmodProbeName(id)}, {"error", Errno(errno)}});
      continue;
    }
    table.push_back(KmodProbeInfoJson(id, info));
  }
  return table;
}

json KmodSource::NohzJson() const {
  cpuhp_probe_hist h{};
  h.cpu = CPUHP_PROBE_ALL_CPUS;
  if (ioctl(fd_, CPUHP_PROBE_IOC_HIST, &h) != 0) {
    if (errno != ENODEV)
      return {{"error", "hist ioctl: " + Errno(errno)}};
    cpuhp_probe_info info{};
    info.id = CPUHP_PROBE_NOHZ_TIMER_TARGET;
    std::string why = "probe not placed";
    if (ioctl(fd_, CPUHP_PROBE_IOC_PROBE_INFO, &info) == 0 && info.reason[0])
      why = std::string(info.reason, strnlen(info.reason, sizeof(info.reason)));
    return KmodNohzUnavailableJson("get_nohz_timer_target not placed: " + why);
  }
  std::vector<uint64_t> counts(version_.nr_cpu_ids);
  cpuhp_probe_targets t{};
  t.counts_ptr = reinterpret_cast<uintptr_t>(counts.data());
  t.nr = static_cast<uint32_t>(counts.size());
  const bool have_counts = ioctl(fd_, CPUHP_PROBE_IOC_TARGETS, &t) == 0;
  json j = KmodNohzJson(h, counts, have_counts);
  cpuhp_probe_hist calib{};
  calib.cpu = CPUHP_PROBE_ALL_CPUS;
  if (ioctl(fd_, CPUHP_PROBE_IOC_CALIB, &calib) != 0) {
    j["probe_self_cost"] = {{"error", "calib ioctl: " + Errno(errno)}};
    return j;
  }
  j["probe_self_cost"] = KmodSelfCostJson(calib);
  cpuhp_probe_calib_direct direct{};
  if (ioctl(fd_, CPUHP_PROBE_IOC_CALIB_DIRECT, &direct) == 0)
    j["probe_self_cost"]["direct"] = KmodCalibDirectJson(direct);
  else
    j["probe_self_cost"]["direct"] = {{"error", "calib_direct ioctl: " + Errno(errno)}};
  return j;
}

void KmodSource::Stop() {
  if (fd_ < 0)
    return;
  final_probes_ = ProbeTable();
  final_nohz_ = NohzJson();
  close(fd_);
  fd_ = -1;
}

json KmodSource::ReportJson() const {
  json j = joiner_.ToJson();
  j["device"] = device_;
  j["api_version"] = version_.api_version;
  j["clock"] = "CLOCK_MONOTONIC (ktime_get_mono_fast_ns), ns";
  j["probes"] = fd_ >= 0 ? ProbeTable() : final_probes_;
  j["get_nohz_timer_target"] = fd_ >= 0 ? NohzJson() : final_nohz_;
  if (!read_error_.empty())
    j["read_error"] = read_error_;
  return j;
}

namespace {

using report_json::Get;
using report_json::Num;
using report_json::U64;

std::string Row(const std::string& label, const json& s) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "  %-22s %8" PRIu64 " %10.3f %10.3f %10.3f\n", label.c_str(),
                U64(s, "count"), static_cast<double>(U64(s, "p50_ns")) / 1e6,
                static_cast<double>(U64(s, "p99_ns")) / 1e6,
                static_cast<double>(U64(s, "max_ns")) / 1e6);
  return buf;
}

}  // namespace

std::string KmodSummary(const json& report, const char* source) {
  const bool bpf = std::string(source) == "bpf";
  const json& kmod = Get(Get(report, "timing_sources"), source);
  const json& phases = Get(kmod, "kernel_phases");
  if (!phases.is_object())
    return "";
  std::string out;
  for (const char* dir : {"offline", "online"}) {
    const json& d = Get(phases, dir);
    if (!d.is_object() || d.empty())
      continue;
    out += std::string("\n") + dir + " kernel phases beside the write (ms" +
           (bpf ? ", bpf source" : "") + ")\n";
    char head[160];
    std::snprintf(head, sizeof(head), "  %-22s %8s %10s %10s %10s\n", "phase", "n", "p50", "p99",
                  "max");
    out += head;
    out += Row("write(2)", Get(Get(report, "directions"), dir));
    for (const auto& [name, ph] : d.items())
      out += Row(name, Get(ph, "all"));
  }
  const json& nohz = Get(kmod, "get_nohz_timer_target");
  if (nohz.contains("status") && nohz["status"] == "unavailable") {
    out += "get_nohz_timer_target: unavailable (" + nohz.value("reason", std::string()) + ")\n";
  } else if (U64(nohz, "count") && bpf) {
    char buf[200];
    std::snprintf(buf, sizeof(buf),
                  "get_nohz_timer_target (bpf): %" PRIu64 " hits, mean %.0f ns, max %" PRIu64
                  " ns (function + the BPF kprobe pair)\n",
                  U64(nohz, "count"), Num(nohz, "mean_ns"), U64(nohz, "max_ns"));
    out += buf;
  } else if (U64(nohz, "count")) {
    char buf[240];
    const json& self = Get(nohz, "probe_self_cost");
    std::snprintf(buf, sizeof(buf),
                  "get_nohz_timer_target: %" PRIu64 " hits, mean %.0f ns, max %" PRIu64
                  " ns (function + kretprobe; the kretprobe alone: mean %.0f ns over %" PRIu64
                  " calls of an empty function)\n",
                  U64(nohz, "count"), Num(nohz, "mean_ns"), U64(nohz, "max_ns"),
                  Num(self, "mean_ns"), U64(self, "calls"));
    out += buf;
  }
  return out;
}

}  // namespace cpuhp
