// SPDX-License-Identifier: GPL-2.0
// The "kmod" timing source: reads the cpuhp_probe module's records through
// /dev/cpuhp_probe (kmod/uapi/cpuhp_probe.h) and joins them to operations.
// KmodJoiner is the pure part (decoding, joining, per-phase histograms) and
// is tested with synthetic records; KmodSource adds the device I/O.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../../kmod/uapi/cpuhp_probe.h"
#include "sources/timing_source.h"
#include "stats/histogram.h"
#include "stats/op_record.h"

namespace cpuhp {

// The canonical function name of a probe id ("takedown_cpu"), "" if unknown.
const char* KmodProbeName(uint32_t id);
// The direction a hotplug-path probe belongs to; false for the histogram
// probe (get_nohz_timer_target) and unknown ids.
bool KmodProbeDirection(uint32_t id, Direction* dir);

// Checks the module's answer to CPUHP_PROBE_IOC_VERSION against the header
// this daemon was built with. The error names both versions.
bool KmodCheckVersion(const cpuhp_probe_version& v, std::string* err);

// What to tell a lab when the module's device is missing (ENOENT): a
// kernel without loadable modules (`have_modules`: /proc/modules exists)
// or with loading switched off (`loading_disabled`:
// /proc/sys/kernel/modules_disabled is 1) cannot load it at all; one in lockdown (`lockdown`: the
// text of /sys/kernel/security/lockdown, "none [integrity] confidentiality", empty when unreadable;
// Secure Boot puts distribution kernels in integrity mode) refuses it unsigned; otherwise it is not
// loaded. No parentheses: the caller wraps it.
std::string KmodMissingHint(bool have_modules, bool loading_disabled, const std::string& lockdown);

// Splits a read() buffer into records. A length that is not a whole number of
// records is an error (the module only returns whole records).
bool KmodDecodeRecords(const void* buf, size_t len, std::vector<cpuhp_probe_record>* out,
                       std::string* err);

// The module's answers to the table and histogram ioctls, decoded (pure: the
// device I/O stays in KmodSource). A probe-table row from
// CPUHP_PROBE_IOC_PROBE_INFO of probe `id`:
// {"id", "name", "symbol", "selected", "placed", "hits", "nmissed", "dropped",
//  "reason" (only when not placed)}.
nlohmann::json KmodProbeInfoJson(uint32_t id, const cpuhp_probe_info& info);
// The get_nohz_timer_target section from CPUHP_PROBE_IOC_HIST (all CPUs) and
// the CPUHP_PROBE_IOC_TARGETS counts (have_counts false: that ioctl failed).
nlohmann::json KmodNohzJson(const cpuhp_probe_hist& h, const std::vector<uint64_t>& counts,
                            bool have_counts);
// The section when HIST failed with ENODEV (get_nohz_timer_target not placed):
// {"status": "unavailable", "reason"}; never a histogram of zeros.
nlohmann::json KmodNohzUnavailableJson(const std::string& reason);
// CPUHP_PROBE_IOC_CALIB's histogram: the kretprobe's own share of every
// get_nohz_timer_target duration, {"calls", "mean_ns", "max_ns", "log2_buckets"}.
nlohmann::json KmodSelfCostJson(const cpuhp_probe_hist& calib);
// CPUHP_PROBE_IOC_CALIB_DIRECT: the same calls timed from the caller with the
// calibration probe disarmed and armed, and how each probe is attached:
// {"calls", "bare_ns_per_call", "added_ns_per_call", "calibration_mechanism",
//  "probe_mechanism", "same_mechanism"}.
nlohmann::json KmodCalibDirectJson(const cpuhp_probe_calib_direct& d);

class KmodJoiner {
 public:
  static constexpr size_t kMaxOpsListed = 256;

  // Records read after `op` ended. Those that start and end inside the op's
  // write(2) and name its CPU (or come from a renamed symbol, whose CPU
  // argument is unsure) are joined to it; the rest are counted as unjoined.
  void Join(const OpRecord& op, const std::vector<cpuhp_probe_record>& records);

  // {"records": {...}, "kernel_phases": {...}, "ops": [...], "ops_dropped"}
  // On x86 from 6.5 (HOTPLUG_PARALLEL) the bring-up that native_cpu_up and
  // __cpu_up time elsewhere is split into cpuhp_kick_ap_alive and
  // cpuhp_bringup_ap; an online op with both also gets their sum as the
  // phase kKernelBringupPhase, beside the two, so one figure compares
  // across kernels.
  nlohmann::json ToJson() const;

  static constexpr const char* kKernelBringupPhase = "bringup";

  uint64_t joined() const { return joined_; }
  uint64_t unjoined() const { return unjoined_; }
  uint64_t nesting_violations() const { return nesting_violations_; }

 private:
  struct Phase {
    Histogram all;
    std::map<int, Histogram> by_online;
    uint64_t retval_nonzero = 0;
    uint64_t longer_than_write = 0;
  };
  static void Record(Phase* ph, const OpRecord& op, uint64_t duration_ns, bool failed,
                     bool longer_than_write);

  // [direction][probe id]
  std::map<uint32_t, Phase> phases_[kDirections];
  Phase bringup_pair_;  // online: cpuhp_kick_ap_alive + cpuhp_bringup_ap of one op
  bool bringup_pair_seen_ = false;
  uint64_t read_ = 0;
  uint64_t joined_ = 0;
  uint64_t unjoined_ = 0;
  uint64_t nesting_violations_ = 0;
  nlohmann::json ops_ = nlohmann::json::array();
  uint64_t ops_dropped_ = 0;
};

class KmodSource : public TimingSource {
 public:
  explicit KmodSource(std::string device) : device_(std::move(device)) {}
  ~KmodSource() override;

  std::string name() const override { return "kmod"; }
  bool Start(std::string* why_unavailable) override;
  void OpBegin(const Operation&, uint64_t) override {}
  void OpEnd(const OpRecord& rec) override;
  void Stop() override;
  nlohmann::json ReportJson() const override;

  // Started and not stopped: the module's device is open.
  bool running() const { return fd_ >= 0; }

 private:
  bool Drain(std::vector<cpuhp_probe_record>* out);
  nlohmann::json ProbeTable() const;
  nlohmann::json NohzJson() const;

  std::string device_;
  int fd_ = -1;
  cpuhp_probe_version version_{};
  KmodJoiner joiner_;
  std::vector<cpuhp_probe_record> buf_;
  std::string read_error_;
  nlohmann::json final_probes_;
  nlohmann::json final_nohz_;
};

// Human summary lines for the kmod section of a report (or the bpf
// source's, `source` "bpf": the same form): per direction, the kernel
// phases (p50/p99/max ms) beside the write latency. "" if the report has no
// such section with phases.
std::string KmodSummary(const nlohmann::json& report, const char* source = "kmod");

}  // namespace cpuhp
