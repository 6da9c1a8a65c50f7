// SPDX-License-Identifier: GPL-2.0
// The "bpf" timing source: the cpuhp_probe module's probes as BPF
// kprobe/kretprobe programs (sources/bpf/cpuhp_phases.bpf.c), for boards
// whose kernel refuses the module (lockdown `integrity` under Secure Boot
// refuses unsigned modules, not kprobes or BPF) or that have no headers to
// build it. Records are the module's (kmod/uapi/cpuhp_probe.h), joined by
// the same KmodJoiner, so its report section has the kmod section's
// kernel_phases, ops and get_nohz_timer_target.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sources/bpf_symbols.h"
#include "sources/kmod_source.h"
#include "sources/timing_source.h"

namespace cpuhp {

// The attach cookie of probe `id` on `symbol` (cpuhp_phases_abi.h): whether
// the first argument is the target CPU, and whether that is unsure (a
// renamed copy may have dropped or reordered arguments).
uint64_t BpfCookie(uint32_t id, const std::string& symbol);

// Where fentry/fexit is tried for probe `id`, in front of its kprobe pairs:
// the exact function name when it is among the probe's symbols and the
// kernel's BTF describes it (`in_btf`; a renamed copy's prototype may differ
// from what BTF says, so copies always get kprobes). `fentry` empty: no
// attempt, and `reason` says why.
struct BpfFentryChoice {
  std::string fentry;
  std::string reason;
};
BpfFentryChoice BpfChooseFentry(uint32_t id, const std::vector<std::string>& symbols,
                                bool kprobe_only, const std::string& btf_error,
                                const std::function<bool(const std::string&)>& in_btf);

// Why this kernel cannot run the source, before trying: lockdown
// `confidentiality` refuses kprobes and perf events (`lockdown`: the text of
// /sys/kernel/security/lockdown); no kprobes (`have_kprobes`: the kprobe PMU
// or tracefs kprobe_events exists). "" when nothing stops it.
std::string BpfBlockedReason(const std::string& lockdown, bool have_kprobes);

class BpfSource : public TimingSource {
 public:
  // `prefer`: a module source started before this one; when it runs, this
  // one stands down (kernel_phases.source "auto": the module when loaded).
  // `kprobe_only`: no fentry/fexit (kernel_phases.bpf_attach "kprobe").
  explicit BpfSource(const KmodSource* prefer = nullptr, bool kprobe_only = false);
  ~BpfSource() override;

  std::string name() const override { return "bpf"; }
  bool Start(std::string* why_unavailable) override;
  void OpBegin(const Operation&, uint64_t) override {}
  void OpEnd(const OpRecord& rec) override;
  void Stop() override;
  nlohmann::json ReportJson() const override;

  struct State;  // libbpf objects (bpf_source.cc)

 private:
  nlohmann::json Collect() const;

  const KmodSource* prefer_;
  bool kprobe_only_;
  std::unique_ptr<State> st_;
  KmodJoiner joiner_;
  nlohmann::json probes_ = nlohmann::json::array();
  nlohmann::json final_;
};

}  // namespace cpuhp
