// SPDX-License-Identifier: GPL-2.0
// The tracepoints source on recorded and hand-written trace fixtures
// (tests/fixtures/trace/README.md says which is which), and its file-system
// side on a directory standing in for tracefs.
#include "tracefs_source.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace cpuhp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string Fixture(const std::string& name) {
  std::ifstream f(std::string(CPUHP_SOURCE_DIR) + "/tests/fixtures/trace/" + name);
  EXPECT_TRUE(f) << name;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

HotplugStates States(const std::string& name) {
  HotplugStates s;
  EXPECT_TRUE(ParseHotplugStates(Fixture(name), &s));
  return s;
}

OpRecord Op(uint64_t index, int cpu, Direction dir, double start_s, double dur_ms, int online) {
  OpRecord r;
  r.index = index;
  r.cpu = cpu;
  r.dir = dir;
  r.start_ns = static_cast<uint64_t>(start_s * 1e6 + 0.5) * 1000;
  r.duration_ns = static_cast<uint64_t>(dur_ms * 1e6 + 0.5);
  r.online_before = online;
  return r;
}

const json* FindState(const json& j, const std::string& fun, const std::string& dir) {
  for (const json& s : j["kernel_states"])
    if (s["function"] == fun && s["direction"] == dir)
      return &s;
  return nullptr;
}

const json* FindPhase(const json& j, const std::string& name, const std::string& dir) {
  for (const json& p : j["phases"])
    if (p["name"] == name && p["direction"] == dir)
      return &p;
  return nullptr;
}

// Self times add up to the union of the steps: no double counting.
void ExpectSelfSumsToStateSum(const json& j) {
  uint64_t self = 0, sum = 0;
  for (const json& s : j["kernel_states"])
    self += s["self_ns"].get<uint64_t>();
  for (const json& op : j["first_operations"]) {
    sum += op["state_sum_ns"].get<uint64_t>();
    EXPECT_LE(op["state_sum_ns"].get<uint64_t>(), op["write_ns"].get<uint64_t>());
    EXPECT_EQ(op["state_sum_ns"].get<uint64_t>() + op["unaccounted_ns"].get<uint64_t>(),
              op["write_ns"].get<uint64_t>());
  }
  EXPECT_EQ(self, sum);
}

TEST(TraceJoiner, RecordedX86_618OfflineOnline) {
  TraceJoiner j(States("x86_64-6.18.states"));
  const std::string text = Fixture("x86_64-6.18-cpu1-offline-online.trace");
  // Fed in odd-sized chunks, as reads of trace_pipe cut lines anywhere.
  for (size_t at = 0; at < text.size(); at += 97)
    j.FeedText(std::string_view(text).substr(at, 97));
  j.EndOperation(Op(0, 1, Direction::kOffline, 2497.383, 50.0, 2));
  j.EndOperation(Op(1, 1, Direction::kOnline, 2497.468, 4.7, 1));
  j.Finish();
  EXPECT_EQ(j.events(), 174u);
  EXPECT_EQ(j.malformed(), 0u);
  json out = j.stats().ToJson();
  EXPECT_EQ(out["ops_with_steps"], 2);
  EXPECT_EQ(j.EventsJson()["steps_outside_operations"], 0);
  EXPECT_EQ(j.EventsJson()["unmatched_exits"], 0);

  const json* takedown = FindState(out, "takedown_cpu", "offline");
  ASSERT_NE(takedown, nullptr);
  EXPECT_EQ((*takedown)["state"], "cpu:teardown");
  EXPECT_EQ((*takedown)["number"], 144);
  EXPECT_EQ((*takedown)["where"], "control");
  EXPECT_EQ((*takedown)["count"], 1);
  EXPECT_EQ((*takedown)["max_ns"], 23584000);  // 2497.431691 - 2497.408107

  const json* deact = FindState(out, "sched_cpu_deactivate", "offline");
  ASSERT_NE(deact, nullptr);
  EXPECT_EQ((*deact)["where"], "cpuhp_thread");
  EXPECT_EQ((*deact)["state"], "sched:active");
  EXPECT_EQ((*deact)["max_ns"], 5515000);

  // The hand-off wraps the AP states: its self time is what they leave.
  const json* kick = FindState(out, "cpuhp_kick_ap_work", "offline");
  ASSERT_NE(kick, nullptr);
  EXPECT_EQ((*kick)["kind"], "handoff");
  EXPECT_TRUE((*kick)["number"].is_null());
  EXPECT_EQ((*kick)["max_ns"], 24687000);  // 2497.408104 - 2497.383417
  EXPECT_LT((*kick)["self_ns"].get<uint64_t>(), 24687000u - 5515000u - 6974000u + 1);

  const json* dead = FindState(out, "blk_mq_hctx_notify_dead", "offline");
  ASSERT_NE(dead, nullptr);
  EXPECT_EQ((*dead)["kind"], "multi_instance");
  EXPECT_EQ((*dead)["count"], 9);

  // Online, split start-up: cpuhp_kick_ap_alive + cpuhp_bringup_ap.
  for (const char* name : {"cpuhp_kick_ap_alive", "cpuhp_bringup_ap", "sched_cpu_activate"})
    EXPECT_NE(FindPhase(out, name, "online"), nullptr) << name;
  const json* bringup = FindPhase(out, "cpuhp_bringup_ap", "online");
  EXPECT_EQ((*bringup)["state"], "cpu:bringup");
  EXPECT_EQ((*bringup)["per_online_count"][0]["online_cpus"], 1);
  EXPECT_EQ((*bringup)["latency"]["max_ns"], 4266000);
  const json* td = FindPhase(out, "takedown_cpu", "offline");
  ASSERT_NE(td, nullptr);
  EXPECT_EQ((*td)["per_online_count"][0]["online_cpus"], 2);
  EXPECT_NE(FindPhase(out, "sched_cpu_deactivate", "offline"), nullptr);
  ExpectSelfSumsToStateSum(out);
  // The top state by self time is takedown_cpu here.
  EXPECT_EQ(out["kernel_states"][0]["function"], "takedown_cpu");
  std::string summary = KernelStateStats::Summary(out, 3);
  EXPECT_NE(summary.find("cpu:teardown"), std::string::npos) << summary;
  EXPECT_NE(summary.find("23.584"), std::string::npos) << summary;
}

TEST(TraceJoiner, HandWrittenX86_61UsesBringupCpu) {
  TraceJoiner j(States("x86_64-6.1.states"));
  j.FeedText(Fixture("x86_64-6.1-cpu1-offline-online.trace"));
  j.EndOperation(Op(0, 1, Direction::kOffline, 1000.0, 13.0, 2));
  j.EndOperation(Op(1, 1, Direction::kOnline, 1001.0, 3.0, 1));
  j.Finish();
  EXPECT_EQ(j.malformed(), 0u);
  json out = j.stats().ToJson();
  const json* td = FindState(out, "takedown_cpu", "offline");
  ASSERT_NE(td, nullptr);
  EXPECT_EQ((*td)["number"], 128);  // numbers differ from 6.18: resolved by name
  EXPECT_EQ((*td)["state"], "cpu:teardown");
  EXPECT_EQ((*td)["max_ns"], 4200000);
  const json* bc = FindPhase(out, "bringup_cpu", "online");
  ASSERT_NE(bc, nullptr);
  EXPECT_EQ((*bc)["state"], "cpu:bringup");
  EXPECT_EQ(FindPhase(out, "cpuhp_bringup_ap", "online"), nullptr);
  // Online: bringup_cpu [30, 2600] us wraps the AP states; with
  // smpboot_create_threads [10, 20] the union is 2580 us of a 3 ms write.
  EXPECT_EQ(out["first_operations"][1]["state_sum_ns"], 2580000);
  EXPECT_EQ(out["first_operations"][1]["unaccounted_ns"], 420000);
  const json* bcs = FindState(out, "bringup_cpu", "online");
  EXPECT_EQ((*bcs)["self_ns"], 2570000 - 10000 - 500000);
  ExpectSelfSumsToStateSum(out);
}

TEST(TraceJoiner, HandWrittenArm64StartingStateOnTheTargetCpu) {
  TraceJoiner j(States("arm64-6.1.states"));
  j.FeedText(Fixture("arm64-6.1-cpu3-online.trace"));
  j.EndOperation(Op(0, 3, Direction::kOnline, 500.0, 2.1, 3));
  j.Finish();
  EXPECT_EQ(j.malformed(), 0u);
  json out = j.stats().ToJson();
  const json* st = FindState(out, "sched_cpu_starting", "online");
  ASSERT_NE(st, nullptr);
  EXPECT_EQ((*st)["where"], "target_cpu");
  EXPECT_EQ((*st)["state"], "sched:starting");
  EXPECT_EQ((*st)["max_ns"], 40000);
  const json* act = FindState(out, "sched_cpu_activate", "online");
  EXPECT_EQ((*act)["where"], "cpuhp_thread");
  EXPECT_EQ((*FindPhase(out, "bringup_cpu", "online"))["per_online_count"][0]["online_cpus"], 3);
  // bringup_cpu [140, 2000] us holds the three nested steps (40 + 20 + 400).
  EXPECT_EQ((*FindState(out, "bringup_cpu", "online"))["self_ns"], 1860000 - 460000);
  ExpectSelfSumsToStateSum(out);
}

TEST(TraceJoiner, MalformedLinesUnknownStatesAndAnotherCpu) {
  TraceJoiner j(States("x86_64-6.18.states"));
  j.FeedText(Fixture("malformed.trace"));
  j.EndOperation(Op(0, 1, Direction::kOffline, 3000.0, 7.5, 2));
  j.Finish();
  EXPECT_EQ(j.events(), 11u);
  EXPECT_EQ(j.malformed(), 4u);
  EXPECT_EQ(j.lost_markers(), 7u);
  json ev = j.EventsJson();
  EXPECT_EQ(ev["unmatched_exits"], 1);  // the exit of step 61, and the cut "ret:" line is malformed
  EXPECT_EQ(ev["steps_outside_operations"], 1);  // cpu2's takedown_cpu
  EXPECT_EQ(ev["malformed_examples"].size(), 4u);
  json out = j.stats().ToJson();
  const json* mystery = FindState(out, "mystery_cpu_offline", "offline");
  ASSERT_NE(mystery, nullptr);
  EXPECT_TRUE((*mystery)["state"].is_null());  // 250 is not in the table
  EXPECT_EQ((*mystery)["number"], 250);
  EXPECT_EQ((*mystery)["max_ns"], 190000);
  const json* td = FindState(out, "takedown_cpu", "offline");
  EXPECT_EQ((*td)["count"], 1);  // cpu2's is not ours
  EXPECT_EQ((*td)["max_ns"], 3000000);
  // Union: [10, 4400] + [4410, 7410] us = 7390 us of a 7500 us write.
  EXPECT_EQ(out["first_operations"][0]["state_sum_ns"], 7390000);
  EXPECT_EQ(out["first_operations"][0]["unaccounted_ns"], 110000);
  EXPECT_EQ((*FindState(out, "cpuhp_kick_ap_work", "offline"))["self_ns"], 200000);
  ExpectSelfSumsToStateSum(out);
}

TEST(TraceJoiner, OperationWithoutEventsIsCountedNotZeroed) {
  TraceJoiner j(States("x86_64-6.18.states"));
  j.EndOperation(Op(0, 1, Direction::kOffline, 1.0, 3.0, 2));
  json out = j.stats().ToJson();
  EXPECT_EQ(out["ops_without_steps"], 1);
  EXPECT_EQ(out["ops_with_steps"], 0);
  EXPECT_EQ(out["per_operation"]["offline"]["state_sum"]["count"], 0);
  EXPECT_TRUE(out["kernel_states"].empty());
}

TEST(UnionLength, OverlapsAndNesting) {
  EXPECT_EQ(UnionLengthNs({}), 0u);
  EXPECT_EQ(UnionLengthNs({{0, 10}, {2, 5}, {10, 12}, {20, 21}, {7, 7}}), 13u);
  EXPECT_EQ(UnionLengthNs({{5, 9}, {0, 6}}), 9u);
}

// ---- The file-system side, on a directory standing in for tracefs ----

class FakeTracefs : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cpuhp-tracefs.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    sysfs_ = root_ + "/cpu";
    fs::create_directories(root_ + "/instances");
    fs::create_directories(sysfs_ + "/hotplug");
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string root_;
  std::string sysfs_;
};

int DeadPid() {
  pid_t p = fork();
  if (p == 0)
    _exit(0);
  waitpid(p, nullptr, 0);
  return p;
}

TEST_F(FakeTracefs, WithoutTheStateTableTheSourceIsUnavailable) {
  TracefsSource src(sysfs_, root_);
  std::string why;
  EXPECT_FALSE(src.Start(&why));
  EXPECT_EQ(why, sysfs_ + "/hotplug/states: cannot read: No such file or directory");
  EXPECT_TRUE(fs::is_empty(root_ + "/instances"));
}

TEST_F(FakeTracefs, WithoutCpuhpEventsTheSourceIsUnavailableAndLeavesNothing) {
  std::ofstream(sysfs_ + "/hotplug/states") << "144: cpu:teardown\n";
  TracefsSource src(sysfs_, root_);
  std::string why;
  EXPECT_FALSE(src.Start(&why));
  EXPECT_EQ(why,
            root_ + "/events/cpuhp/cpuhp_enter is missing: this kernel has no cpuhp tracepoints");
  EXPECT_TRUE(fs::is_empty(root_ + "/instances"));
}

TEST_F(FakeTracefs, InstanceThatCannotBeSetUpIsRemoved) {
  std::ofstream(sysfs_ + "/hotplug/states") << "144: cpu:teardown\n";
  for (const char* e : {"cpuhp_enter", "cpuhp_multi_enter", "cpuhp_exit"})
    fs::create_directories(root_ + "/events/cpuhp/" + e);
  TracefsSource src(sysfs_, root_);
  std::string why;
  // A plain directory has no trace_clock file in the new "instance".
  EXPECT_FALSE(src.Start(&why));
  EXPECT_NE(why.find("/trace_clock: cannot open"), std::string::npos) << why;
  // Files are opened without O_CREAT, so the directory stays empty and goes.
  EXPECT_TRUE(fs::is_empty(root_ + "/instances"));
}

TEST_F(FakeTracefs, StaleInstancesOfDeadRunsAreRemovedOthersKept) {
  const int dead = DeadPid();
  const std::string mine = "cpuhp-stress-" + std::to_string(getpid());
  const std::string stale = "cpuhp-stress-" + std::to_string(dead);
  for (const std::string& n : {mine, stale, std::string("cpuhp-stress-x"), std::string("user")})
    fs::create_directories(root_ + "/instances/" + n);
  std::vector<std::string> errs;
  std::vector<std::string> removed = RemoveStaleTraceInstances(root_, &errs);
  EXPECT_TRUE(errs.empty());
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(removed[0], stale);
  EXPECT_FALSE(fs::exists(root_ + "/instances/" + stale));
  EXPECT_TRUE(fs::exists(root_ + "/instances/" + mine));
  EXPECT_TRUE(fs::exists(root_ + "/instances/user"));
  EXPECT_TRUE(fs::exists(root_ + "/instances/cpuhp-stress-x"));
}

TEST(FindTracefs, PrefersTheStandardMountPoint) {
  char tmpl[] = "/tmp/cpuhp-mounts.XXXXXX";
  int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(tmpl) << "sysfs /sys sysfs rw 0 0\n"
                         "tracefs /sys/kernel/debug/tracing tracefs rw 0 0\n"
                         "nodev /sys/kernel/tracing tracefs rw,relatime 0 0\n";
  EXPECT_EQ(FindTracefs(tmpl), "/sys/kernel/tracing");
  std::ofstream(tmpl) << "tracefs /sys/kernel/debug/tracing tracefs rw 0 0\n";
  EXPECT_EQ(FindTracefs(tmpl), "/sys/kernel/debug/tracing");
  std::ofstream(tmpl) << "sysfs /sys sysfs rw 0 0\n";
  EXPECT_EQ(FindTracefs(tmpl), "");
  unlink(tmpl);
}

TEST(TracepointsSummary, SaysWhyWhenUnavailable) {
  EXPECT_EQ(TracepointsSummary({{"status", "unavailable"}, {"reason", "no tracefs"}}),
            "kernel states (tracepoints): unavailable: no tracefs\n");
}

}  // namespace
}  // namespace cpuhp
