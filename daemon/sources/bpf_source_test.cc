// SPDX-License-Identifier: GPL-2.0
// The bpf timing source without a kernel that runs it: the attach cookies
// the programs decode, the reasons given before trying, and Start()
// standing down for a running module (the symbols it picks:
// bpf_symbols_test.cc).
#include "sources/bpf_source.h"

#include <string>

#include <gtest/gtest.h>

#include "sources/bpf/cpuhp_phases_abi.h"

namespace cpuhp {
namespace {

TEST(BpfSourceTest, CookieCarriesIdAndWhatTheFirstArgumentIs) {
  const uint64_t plain = BpfCookie(CPUHP_PROBE_TAKEDOWN_CPU, "takedown_cpu");
  EXPECT_EQ(plain & CPUHP_BPF_COOKIE_ID_MASK, CPUHP_PROBE_TAKEDOWN_CPU);
  EXPECT_TRUE(plain & CPUHP_BPF_COOKIE_CPU_ARG);
  EXPECT_FALSE(plain & CPUHP_BPF_COOKIE_ARG_UNSURE);
  // A renamed copy may have lost or moved the argument: joined by direction
  // and window only (CPUHP_PROBE_REC_ARG_UNSURE), as the module does.
  const uint64_t renamed = BpfCookie(CPUHP_PROBE_CPU_UP_GENERIC, "_cpu_up.constprop.0");
  EXPECT_EQ(renamed & CPUHP_BPF_COOKIE_ID_MASK, CPUHP_PROBE_CPU_UP_GENERIC);
  EXPECT_TRUE(renamed & CPUHP_BPF_COOKIE_CPU_ARG);
  EXPECT_TRUE(renamed & CPUHP_BPF_COOKIE_ARG_UNSURE);
  // take_cpu_down's argument is a pointer, get_nohz_timer_target has none.
  for (uint32_t id :
       {uint32_t{CPUHP_PROBE_TAKE_CPU_DOWN}, uint32_t{CPUHP_PROBE_NOHZ_TIMER_TARGET}}) {
    const uint64_t c = BpfCookie(id, std::string(KmodProbeName(id)) + ".constprop.0");
    EXPECT_EQ(c, id) << KmodProbeName(id);
  }
}

TEST(BpfSourceTest, FentryOnlyOnTheExactFunctionBtfDescribes) {
  const auto all = [](const std::string&) { return true; };
  const auto none = [](const std::string&) { return false; };
  const uint32_t id = CPUHP_PROBE_TAKEDOWN_CPU;
  // The exact name among the symbols and in BTF: fentry there.
  BpfFentryChoice c = BpfChooseFentry(id, {"takedown_cpu"}, false, "", all);
  EXPECT_EQ(c.fentry, "takedown_cpu");
  EXPECT_EQ(c.reason, "");
  c = BpfChooseFentry(id, {"takedown_cpu", "takedown_cpu.cold"}, false, "", all);
  EXPECT_EQ(c.fentry, "takedown_cpu");
  // Only a renamed copy: kprobes, and the reason names the copy.
  c = BpfChooseFentry(id, {"takedown_cpu.constprop.0"}, false, "", all);
  EXPECT_EQ(c.fentry, "");
  EXPECT_NE(c.reason.find("takedown_cpu.constprop.0"), std::string::npos) << c.reason;
  // Not in BTF, no BTF at all, or kprobes asked for: each says so.
  c = BpfChooseFentry(id, {"takedown_cpu"}, false, "", none);
  EXPECT_EQ(c.fentry, "");
  EXPECT_NE(c.reason.find("not in the kernel's BTF"), std::string::npos) << c.reason;
  c = BpfChooseFentry(id, {"takedown_cpu"}, false, "no kernel BTF (x)", all);
  EXPECT_EQ(c.fentry, "");
  EXPECT_EQ(c.reason, "no kernel BTF (x)");
  c = BpfChooseFentry(id, {"takedown_cpu"}, true, "", all);
  EXPECT_EQ(c.fentry, "");
  EXPECT_NE(c.reason.find("bpf_attach"), std::string::npos) << c.reason;
  // Nothing to attach to: no choice, no fentry reason (the probe has its own).
  c = BpfChooseFentry(id, {}, false, "", all);
  EXPECT_EQ(c.fentry, "");
  EXPECT_EQ(c.reason, "");
  // The BTF lookup is by the canonical name, never a copy's.
  std::vector<std::string> asked;
  BpfChooseFentry(CPUHP_PROBE_CPU_UP_GENERIC, {"_cpu_up.constprop.0", "_cpu_up"}, false, "",
                  [&asked](const std::string& fn) {
                    asked.push_back(fn);
                    return true;
                  });
  EXPECT_EQ(asked, std::vector<std::string>{"_cpu_up"});
}

TEST(BpfSourceTest, BlockedReasonNamesLockdownOrMissingKprobes) {
  EXPECT_EQ(BpfBlockedReason("", true), "");
  EXPECT_EQ(BpfBlockedReason("[none] integrity confidentiality\n", true), "");
  // Integrity (Secure Boot's) refuses unsigned modules, not kprobes or BPF.
  EXPECT_EQ(BpfBlockedReason("none [integrity] confidentiality\n", true), "");
  const std::string conf = BpfBlockedReason("none integrity [confidentiality]\n", true);
  EXPECT_NE(conf.find("lockdown is confidentiality"), std::string::npos) << conf;
  EXPECT_NE(conf.find("/sys/kernel/security/lockdown"), std::string::npos) << conf;
  const std::string nokp = BpfBlockedReason("none [integrity] confidentiality\n", false);
  EXPECT_NE(nokp.find("CONFIG_KPROBES"), std::string::npos) << nokp;
}

TEST(BpfSourceTest, StandsDownWhenTheModuleRuns) {
  // A module source that never started (no device): this one does not stand
  // down for it, and says why it could not run, whatever the kernel.
  KmodSource kmod("/nonexistent/cpuhp_probe");
  std::string why;
  ASSERT_FALSE(kmod.Start(&why));
  EXPECT_FALSE(kmod.running());
  BpfSource bpf(&kmod);
  EXPECT_EQ(bpf.name(), "bpf");
  why.clear();
  if (!bpf.Start(&why)) {
    EXPECT_FALSE(why.empty());
    EXPECT_EQ(why.find("the kmod source runs"), std::string::npos) << why;
  } else {
    bpf.Stop();
  }
}

}  // namespace
}  // namespace cpuhp
