// SPDX-License-Identifier: GPL-2.0
// The kmod timing source without the module: record decoding, the version
// check, joining synthetic records (built from the UAPI header) to
// operations, and the unavailable paths of Start().
#include "sources/kmod_source.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace cpuhp {
namespace {

cpuhp_probe_record Rec(uint32_t id, int cpu, uint64_t start, uint64_t dur, uint64_t seq = 0) {
  cpuhp_probe_record r{};
  r.seq = seq;
  r.probe_id = id;
  r.target_cpu = cpu;
  r.exec_cpu = 0;
  r.start_ns = start;
  r.duration_ns = dur;
  r.online_at_entry = 4;
  return r;
}

OpRecord Op(uint64_t index, int cpu, Direction dir, uint64_t start, uint64_t dur, int online) {
  OpRecord op;
  op.index = index;
  op.cpu = cpu;
  op.dir = dir;
  op.start_ns = start;
  op.duration_ns = dur;
  op.online_before = online;
  return op;
}

TEST(KmodRecordTest, LayoutIsFixed) {
  // The ABI both sides agree on: 56 bytes, no padding surprises.
  EXPECT_EQ(sizeof(cpuhp_probe_record), 56u);
  EXPECT_EQ(offsetof(cpuhp_probe_record, probe_id), 32u);
  EXPECT_EQ(offsetof(cpuhp_probe_record, flags), 48u);
}

TEST(KmodRecordTest, DecodesWholeRecords) {
  std::vector<cpuhp_probe_record> in = {Rec(CPUHP_PROBE_TAKEDOWN_CPU, 3, 1000, 500, 7),
                                        Rec(CPUHP_PROBE_CPU_DOWN_GENERIC, 3, 900, 900, 8)};
  std::vector<cpuhp_probe_record> out;
  std::string err;
  ASSERT_TRUE(KmodDecodeRecords(in.data(), in.size() * sizeof(in[0]), &out, &err)) << err;
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].seq, 7u);
  EXPECT_EQ(out[0].probe_id, static_cast<uint32_t>(CPUHP_PROBE_TAKEDOWN_CPU));
  EXPECT_EQ(out[0].target_cpu, 3);
  EXPECT_EQ(out[1].start_ns, 900u);
  EXPECT_EQ(out[1].duration_ns, 900u);
}

TEST(KmodRecordTest, RejectsPartialRecord) {
  cpuhp_probe_record r = Rec(CPUHP_PROBE_TAKEDOWN_CPU, 1, 0, 1);
  std::vector<cpuhp_probe_record> out;
  std::string err;
  EXPECT_FALSE(KmodDecodeRecords(&r, sizeof(r) - 8, &out, &err));
  EXPECT_NE(err.find("48 bytes"), std::string::npos) << err;
  EXPECT_TRUE(out.empty());
}

TEST(KmodVersionTest, AcceptsOwnAndRefusesOthers) {
  cpuhp_probe_version v{};
  v.api_version = CPUHP_PROBE_API_VERSION;
  v.record_size = sizeof(cpuhp_probe_record);
  v.nr_probes = CPUHP_PROBE_NR;
  std::string err;
  EXPECT_TRUE(KmodCheckVersion(v, &err)) << err;
  v.api_version = CPUHP_PROBE_API_VERSION + 1;
  EXPECT_FALSE(KmodCheckVersion(v, &err));
  EXPECT_NE(err.find("API version " + std::to_string(CPUHP_PROBE_API_VERSION + 1)),
            std::string::npos)
      << err;
  v.api_version = CPUHP_PROBE_API_VERSION;
  v.record_size = 40;
  EXPECT_FALSE(KmodCheckVersion(v, &err));
  EXPECT_NE(err.find("40-byte"), std::string::npos) << err;
}

TEST(KmodProbeTest, NamesAndDirections) {
  EXPECT_STREQ(KmodProbeName(CPUHP_PROBE_TAKEDOWN_CPU), "takedown_cpu");
  EXPECT_STREQ(KmodProbeName(CPUHP_PROBE_NOHZ_TIMER_TARGET), "get_nohz_timer_target");
  EXPECT_STREQ(KmodProbeName(CPUHP_PROBE_NR), "");
  Direction d;
  ASSERT_TRUE(KmodProbeDirection(CPUHP_PROBE_ARCH_CPU_UP, &d));
  EXPECT_EQ(d, Direction::kOnline);
  ASSERT_TRUE(KmodProbeDirection(CPUHP_PROBE_TAKE_CPU_DOWN, &d));
  EXPECT_EQ(d, Direction::kOffline);
  EXPECT_FALSE(KmodProbeDirection(CPUHP_PROBE_NOHZ_TIMER_TARGET, &d));
}

TEST(KmodJoinerTest, JoinsByWindowCpuAndDirection) {
  KmodJoiner j;
  // Offline of cpu 3 from t=1000 for 10000 ns, 4 CPUs online.
  OpRecord off = Op(0, 3, Direction::kOffline, 1000, 10000, 4);
  j.Join(off, {
                  Rec(CPUHP_PROBE_CPU_DOWN_GENERIC, 3, 1100, 9000),  // joined
                  Rec(CPUHP_PROBE_TAKEDOWN_CPU, 3, 2000, 6000),      // joined
                  Rec(CPUHP_PROBE_TAKEDOWN_CPU, 2, 2000, 6000),      // other CPU
                  Rec(CPUHP_PROBE_TAKEDOWN_CPU, 3, 500, 100),        // before the write
                  Rec(CPUHP_PROBE_BRINGUP_CPU, 3, 2000, 100),        // wrong direction
              });
  EXPECT_EQ(j.joined(), 2u);
  EXPECT_EQ(j.unjoined(), 3u);
  // Online of cpu 3, 3 CPUs online.
  OpRecord on = Op(1, 3, Direction::kOnline, 20000, 5000, 3);
  j.Join(on, {Rec(CPUHP_PROBE_BRINGUP_CPU, 3, 20100, 4000),
              Rec(CPUHP_PROBE_NATIVE_CPU_UP, 3, 20200, 3000)});
  EXPECT_EQ(j.joined(), 4u);
  EXPECT_EQ(j.nesting_violations(), 0u);

  nlohmann::json out = j.ToJson();
  const auto& take = out["kernel_phases"]["offline"]["takedown_cpu"];
  EXPECT_EQ(take["all"]["count"], 1u);
  EXPECT_EQ(take["all"]["max_ns"], 6000u);
  ASSERT_EQ(take["by_online"].size(), 1u);
  EXPECT_EQ(take["by_online"][0]["online_cpus"], 4);
  EXPECT_EQ(out["kernel_phases"]["online"]["native_cpu_up"]["all"]["count"], 1u);
  EXPECT_EQ(out["kernel_phases"]["online"]["bringup_cpu"]["by_online"][0]["online_cpus"], 3);
  EXPECT_EQ(out["records"]["read"], 7u);
  ASSERT_EQ(out["ops"].size(), 2u);
  EXPECT_EQ(out["ops"][0]["write_ns"], 10000u);
  EXPECT_EQ(out["ops"][0]["phases"]["takedown_cpu"], 6000u);
  EXPECT_EQ(out["ops"][1]["direction"], "online");
}

// x86 from 6.5: the split bring-up is reported as its two functions and as
// one bring-up phase, their sum per online op; kernels with one bring-up
// function (native_cpu_up, __cpu_up) get no combined phase.
TEST(KmodJoinerTest, SplitBringUpAlsoReportedAsOnePhase) {
  KmodJoiner one_function;
  one_function.Join(Op(0, 1, Direction::kOnline, 1000, 9000, 1),
                    {Rec(CPUHP_PROBE_NATIVE_CPU_UP, 1, 1100, 5000)});
  EXPECT_FALSE(
      one_function.ToJson()["kernel_phases"]["online"].contains(KmodJoiner::kKernelBringupPhase));

  KmodJoiner j;
  j.Join(
      Op(0, 1, Direction::kOnline, 1000, 9000, 1),
      {Rec(CPUHP_PROBE_CPU_UP_GENERIC, 1, 1050, 8000),
       Rec(CPUHP_PROBE_KICK_AP_ALIVE, 1, 1100, 1500), Rec(CPUHP_PROBE_BRINGUP_AP, 1, 3000, 4000)});
  j.Join(Op(1, 1, Direction::kOnline, 20000, 9000, 1),
         {Rec(CPUHP_PROBE_KICK_AP_ALIVE, 1, 20100, 2500),
          Rec(CPUHP_PROBE_BRINGUP_AP, 1, 23000, 6000)});
  // An op where only one of the pair was joined has no sum.
  j.Join(Op(2, 1, Direction::kOnline, 40000, 9000, 1),
         {Rec(CPUHP_PROBE_BRINGUP_AP, 1, 41000, 3000)});
  nlohmann::json out = j.ToJson();
  const auto& online = out["kernel_phases"]["online"];
  EXPECT_EQ(online["cpuhp_kick_ap_alive"]["all"]["count"], 2u);
  EXPECT_EQ(online["cpuhp_bringup_ap"]["all"]["count"], 3u);
  const auto& both = online[KmodJoiner::kKernelBringupPhase];
  EXPECT_EQ(both["all"]["count"], 2u);
  EXPECT_EQ(both["all"]["min_ns"], 5500u);
  EXPECT_EQ(both["all"]["max_ns"], 8500u);
  EXPECT_EQ(both["by_online"][0]["online_cpus"], 1);
  EXPECT_EQ(both["longer_than_write"], 0u);
  ASSERT_EQ(out["ops"].size(), 3u);
  EXPECT_EQ(out["ops"][0]["phases"][KmodJoiner::kKernelBringupPhase], 5500u);
  EXPECT_EQ(out["ops"][1]["phases"][KmodJoiner::kKernelBringupPhase], 8500u);
  EXPECT_FALSE(out["ops"][2]["phases"].contains(KmodJoiner::kKernelBringupPhase));
  EXPECT_FALSE(out["kernel_phases"]["offline"].contains(KmodJoiner::kKernelBringupPhase));
  // The text summary lists it beside the two.
  nlohmann::json report = {{"timing_sources", {{"kmod", out}}}};
  EXPECT_NE(KmodSummary(report).find("  bringup "), std::string::npos) << KmodSummary(report);
}

// A sweep's set-up writes are joined and listed but stay out of the phase
// tables, as they stay out of the write latency tables: one row per level.
TEST(KmodJoinerTest, SetUpWritesStayOutOfThePhaseTables) {
  KmodJoiner j;
  OpRecord setup = Op(0, 3, Direction::kOffline, 1000, 10000, 4);
  setup.setup = true;
  j.Join(setup, {Rec(CPUHP_PROBE_TAKEDOWN_CPU, 3, 2000, 6000)});
  j.Join(Op(1, 2, Direction::kOffline, 20000, 10000, 3),
         {Rec(CPUHP_PROBE_TAKEDOWN_CPU, 2, 21000, 5000)});
  EXPECT_EQ(j.joined(), 2u);
  nlohmann::json out = j.ToJson();
  const auto& take = out["kernel_phases"]["offline"]["takedown_cpu"];
  EXPECT_EQ(take["all"]["count"], 1u);
  ASSERT_EQ(take["by_online"].size(), 1u);
  EXPECT_EQ(take["by_online"][0]["online_cpus"], 3);
  ASSERT_EQ(out["ops"].size(), 2u);
  EXPECT_EQ(out["ops"][0]["setup"], true);
  EXPECT_FALSE(out["ops"][1].contains("setup"));
}

TEST(KmodJoinerTest, CountsPhaseLongerThanWriteAndErrors) {
  KmodJoiner j;
  OpRecord off = Op(0, 1, Direction::kOffline, 1000, 1000, 2);
  cpuhp_probe_record late = Rec(CPUHP_PROBE_TAKEDOWN_CPU, 1, 1500, 900);  // ends after the write
  late.retval = -16;
  j.Join(off, {late});
  EXPECT_EQ(j.joined(), 1u);
  EXPECT_EQ(j.nesting_violations(), 1u);
  nlohmann::json out = j.ToJson();
  EXPECT_EQ(out["kernel_phases"]["offline"]["takedown_cpu"]["longer_than_write"], 1u);
  EXPECT_EQ(out["kernel_phases"]["offline"]["takedown_cpu"]["retval_nonzero"], 1u);
}

TEST(KmodJoinerTest, RenamedSymbolJoinsOnTimeAlone) {
  KmodJoiner j;
  cpuhp_probe_record r = Rec(CPUHP_PROBE_CPU_UP_GENERIC, 99, 1100, 100);
  r.flags = CPUHP_PROBE_REC_ARG_UNSURE;
  j.Join(Op(0, 2, Direction::kOnline, 1000, 1000, 1), {r});
  EXPECT_EQ(j.joined(), 1u);
}

TEST(KmodJoinerTest, OpsListIsBounded) {
  KmodJoiner j;
  for (uint64_t i = 0; i < KmodJoiner::kMaxOpsListed + 5; ++i) {
    uint64_t t = 1000 + i * 10000;
    j.Join(Op(i, 1, Direction::kOffline, t, 5000, 2),
           {Rec(CPUHP_PROBE_TAKEDOWN_CPU, 1, t + 1, 10)});
  }
  nlohmann::json out = j.ToJson();
  EXPECT_EQ(out["ops"].size(), KmodJoiner::kMaxOpsListed);
  EXPECT_EQ(out["ops_dropped"], 5u);
  EXPECT_EQ(out["kernel_phases"]["offline"]["takedown_cpu"]["all"]["count"],
            KmodJoiner::kMaxOpsListed + 5);
}

TEST(KmodSourceTest, MissingDeviceIsUnavailableWithReason) {
  KmodSource s("/nonexistent/cpuhp_probe");
  std::string why;
  EXPECT_FALSE(s.Start(&why));
  EXPECT_NE(why.find("/nonexistent/cpuhp_probe: No such file or directory"), std::string::npos)
      << why;
  // The hint after it is this machine's: KmodMissingHint below.
  EXPECT_NE(why.find("/nonexistent/cpuhp_probe: No such file or directory ("), std::string::npos)
      << why;
}

TEST(KmodSourceTest, MissingDeviceHintNamesWhatStopsTheModule) {
  // Lockdown off (or no lockdown LSM, or securityfs not mounted): not loaded.
  for (const char* text : {"[none] integrity confidentiality\n", ""})
    EXPECT_EQ(KmodMissingHint(true, false, text),
              "is the cpuhp_probe module loaded? insmod kmod/cpuhp_probe.ko")
        << text;
  // Secure Boot's mode, and the stricter one: refused unsigned, named.
  for (const char* mode : {"integrity", "confidentiality"}) {
    std::string text = std::string("none integrity confidentiality\n");
    text.replace(text.find(mode), strlen(mode), std::string("[") + mode + "]");
    const std::string hint = KmodMissingHint(true, false, text);
    EXPECT_EQ(hint.rfind(std::string("kernel lockdown is ") + mode +
                             " (/sys/kernel/security/lockdown): unsigned modules are refused",
                         0),
              0u)
        << hint;
  }
  // No module support wins: nothing could load it, signed or not.
  EXPECT_EQ(KmodMissingHint(false, false, "none [integrity] confidentiality\n")
                .rfind("this kernel has no loadable module support (no /proc/modules)", 0),
            0u);
  // modules_disabled: nothing loads until reboot, signed or not.
  EXPECT_EQ(
      KmodMissingHint(true, true, "[none] integrity confidentiality\n")
          .rfind("module loading is switched off until reboot (/proc/sys/kernel/modules_disabled",
                 0),
      0u);
  // A malformed text (no closing bracket) is not a mode.
  EXPECT_EQ(KmodMissingHint(true, false, "none [integ"),
            "is the cpuhp_probe module loaded? insmod kmod/cpuhp_probe.ko");
}

TEST(KmodSourceTest, OrdinaryFileIsNotTheDevice) {
  char path[] = "/tmp/kmod_source_test.XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  KmodSource s(path);
  std::string why;
  EXPECT_FALSE(s.Start(&why));
  EXPECT_NE(why.find("not a cpuhp_probe device"), std::string::npos) << why;
  unlink(path);
}

TEST(KmodSummaryTest, ShowsPhasesBesideWrite) {
  KmodJoiner j;
  j.Join(Op(0, 1, Direction::kOffline, 1000, 8000000, 2),
         {Rec(CPUHP_PROBE_TAKEDOWN_CPU, 1, 2000, 5000000)});
  nlohmann::json report;
  report["timing_sources"]["kmod"] = j.ToJson();
  report["directions"]["offline"] = {
      {"count", 1}, {"p50_ns", 8000000}, {"p99_ns", 8000000}, {"max_ns", 8000000}};
  std::string s = KmodSummary(report);
  EXPECT_NE(s.find("offline kernel phases"), std::string::npos) << s;
  EXPECT_NE(s.find("write(2)"), std::string::npos) << s;
  EXPECT_NE(s.find("takedown_cpu"), std::string::npos) << s;
  EXPECT_NE(s.find("5.000"), std::string::npos) << s;
  EXPECT_EQ(KmodSummary(nlohmann::json::object()), "");
  // The bpf source's section has the same form (the same joiner): its own
  // lines, labelled, and none from the kmod section.
  EXPECT_EQ(KmodSummary(report, "bpf"), "");
  report["timing_sources"]["bpf"] = report["timing_sources"]["kmod"];
  report["timing_sources"]["bpf"]["get_nohz_timer_target"] = {
      {"status", "ok"}, {"count", 3}, {"mean_ns", 900.0}, {"max_ns", 2000}};
  report["timing_sources"].erase("kmod");
  s = KmodSummary(report, "bpf");
  EXPECT_NE(s.find("offline kernel phases beside the write (ms, bpf source)"), std::string::npos)
      << s;
  EXPECT_NE(s.find("takedown_cpu"), std::string::npos) << s;
  EXPECT_NE(s.find("get_nohz_timer_target (bpf): 3 hits"), std::string::npos) << s;
  EXPECT_EQ(KmodSummary(report), "");
}

TEST(KmodIoctlDecodeTest, ProbeInfoRow) {
  cpuhp_probe_info info{};
  info.id = CPUHP_PROBE_BRINGUP_CPU;
  info.placed = 1;
  info.selected = 1;
  std::snprintf(info.name, sizeof(info.name), "bringup_cpu");
  std::snprintf(info.symbol, sizeof(info.symbol), "bringup_cpu.constprop.0");
  std::snprintf(info.reason, sizeof(info.reason), "not shown when placed");
  info.hits = 7;
  info.nmissed = 1;
  info.dropped = 2;
  nlohmann::json row = KmodProbeInfoJson(CPUHP_PROBE_BRINGUP_CPU, info);
  EXPECT_EQ(row, nlohmann::json({{"id", CPUHP_PROBE_BRINGUP_CPU},
                                 {"name", "bringup_cpu"},
                                 {"symbol", "bringup_cpu.constprop.0"},
                                 {"selected", true},
                                 {"placed", true},
                                 {"hits", 7},
                                 {"nmissed", 1},
                                 {"dropped", 2}}));
  info.placed = 0;
  std::snprintf(info.reason, sizeof(info.reason), "symbol not found");
  EXPECT_EQ(KmodProbeInfoJson(0, info)["reason"], "symbol not found");
}

// Found by fuzz/kmod_fuzz.cc: a name that is not UTF-8 (or not terminated)
// made writing the report throw. Strings are cut at the array's last byte
// and bytes outside printable ASCII shown as '?'.
TEST(KmodIoctlDecodeTest, ProbeInfoStringsStayPrintable) {
  cpuhp_probe_info info{};
  std::memset(info.name, 'a', sizeof(info.name));  // no NUL
  std::memcpy(info.symbol, "take\xff\xfe_cpu\n", 12);
  std::memset(info.reason, 0xc3, sizeof(info.reason));
  nlohmann::json row = KmodProbeInfoJson(1, info);
  EXPECT_EQ(row["name"], std::string(sizeof(info.name) - 1, 'a'));
  EXPECT_EQ(row["symbol"], "take??_cpu?");
  EXPECT_EQ(row["reason"], std::string(sizeof(info.reason) - 1, '?'));
  EXPECT_NO_THROW(row.dump());
}

TEST(KmodIoctlDecodeTest, NohzHistogramAndTargets) {
  cpuhp_probe_hist h{};
  h.count = 4;
  h.sum_ns = 4000;
  h.max_ns = 2500;
  h.buckets[0] = 1;
  h.buckets[10] = 3;
  nlohmann::json j = KmodNohzJson(h, {5, 0, 2}, true);
  EXPECT_EQ(j["count"], 4);
  EXPECT_DOUBLE_EQ(j["mean_ns"].get<double>(), 1000.0);
  EXPECT_EQ(j["log2_buckets"], nlohmann::json::parse(R"([{"low_ns": 0, "count": 1},
                                                         {"low_ns": 1024, "count": 3}])"));
  EXPECT_EQ(j["targets"], nlohmann::json({{"0", 5}, {"2", 2}}));
  EXPECT_EQ(KmodNohzJson(h, {5, 0, 2}, false)["targets"], nlohmann::json::object());
  h.count = 0;
  EXPECT_EQ(KmodNohzJson(h, {}, true)["mean_ns"], 0.0);
}

// HIST's ENODEV (probe not placed) is a section marked unavailable with the
// reason, never a histogram of zeros (issue 13 part 3).
TEST(KmodNohz, NotPlacedIsUnavailableNotZeros) {
  nlohmann::json j = KmodNohzUnavailableJson("get_nohz_timer_target not placed: not selected");
  EXPECT_EQ(j["status"], "unavailable");
  EXPECT_EQ(j["reason"], "get_nohz_timer_target not placed: not selected");
  EXPECT_FALSE(j.contains("count"));
  EXPECT_FALSE(j.contains("log2_buckets"));
  cpuhp_probe_hist h{};
  EXPECT_EQ(KmodNohzJson(h, {}, true)["status"], "ok");
}

TEST(KmodNohz, SelfCostFromCalib) {
  cpuhp_probe_hist c{};
  c.count = 1000;
  c.sum_ns = 1500000;
  c.max_ns = 9000;
  c.buckets[10] = 990;
  c.buckets[13] = 10;
  nlohmann::json j = KmodSelfCostJson(c);
  EXPECT_EQ(j["calls"], 1000);
  EXPECT_DOUBLE_EQ(j["mean_ns"].get<double>(), 1500.0);
  EXPECT_EQ(j["max_ns"], 9000);
  EXPECT_EQ(j["log2_buckets"], nlohmann::json::parse(R"([{"low_ns": 1024, "count": 990},
                                                         {"low_ns": 8192, "count": 10}])"));
}

TEST(KmodNohz, CalibDirectPerCallAndMechanisms) {
  cpuhp_probe_calib_direct d{};
  d.calls = 1000;
  d.bare_ns = 50000;
  d.probed_ns = 2050000;
  d.calib_mech = CPUHP_PROBE_MECH_TRAP;
  d.nohz_mech = CPUHP_PROBE_MECH_JUMP;
  nlohmann::json j = KmodCalibDirectJson(d);
  EXPECT_EQ(j["calls"], 1000);
  EXPECT_DOUBLE_EQ(j["bare_ns_per_call"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(j["added_ns_per_call"].get<double>(), 2000.0);
  EXPECT_EQ(j["calibration_mechanism"], "trap");
  EXPECT_EQ(j["probe_mechanism"], "jump");
  EXPECT_FALSE(j["same_mechanism"].get<bool>());
  // Noise that makes the armed rounds faster is no negative cost; an
  // unknown mechanism number is named so, never indexed past the table.
  d.probed_ns = 40000;
  d.calib_mech = d.nohz_mech = 7;
  j = KmodCalibDirectJson(d);
  EXPECT_DOUBLE_EQ(j["added_ns_per_call"].get<double>(), 0.0);
  EXPECT_EQ(j["calibration_mechanism"], "unknown");
  EXPECT_TRUE(j["same_mechanism"].get<bool>());
  d.calls = 0;
  EXPECT_DOUBLE_EQ(KmodCalibDirectJson(d)["bare_ns_per_call"].get<double>(), 0.0);
}

}  // namespace
}  // namespace cpuhp
