// SPDX-License-Identifier: GPL-2.0
// The tracepoints source on recorded and hand-written trace fixtures
// (tests/fixtures/trace/README.md says which is which), and its file-system
// side on a directory standing in for tracefs.
#include "sources/tracefs_source.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

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

// Facts every real capture of a 6.1 guest shows: all events parsed and
// paired, each state resolved to its name in the captured table, the
// hand-off and multi-instance kinds, and no step "on the target CPU":
// STARTING/DYING callbacks run while the CPU is not in cpu_online_mask, and
// tracepoints do not fire on an offline CPU (the hand-written fixtures these
// replace had them).
void ExpectRealCapture(const TraceJoiner& j, const HotplugStates& states, uint64_t events) {
  EXPECT_EQ(j.events(), events);  // the header's entries-in-buffer
  EXPECT_EQ(j.malformed(), 0u);
  EXPECT_EQ(j.lost_markers(), 0u);
  json ev = j.EventsJson();
  EXPECT_EQ(ev["unmatched_exits"], 0);
  EXPECT_EQ(ev["unmatched_enters"], 0);
  EXPECT_EQ(ev["steps_outside_operations"], 0);
  json out = j.stats().ToJson();
  EXPECT_EQ(out["ops_with_steps"], 2);
  size_t named = 0;
  for (const json& s : out["kernel_states"]) {
    EXPECT_NE(s["where"], "target_cpu") << s["function"];
    if (s["kind"] == "handoff") {
      EXPECT_EQ(s["function"], "cpuhp_kick_ap_work");
      continue;
    }
    ASSERT_TRUE(s["state"].is_string()) << s["function"];
    EXPECT_EQ(s["state"], states.Name(s["number"].get<int>()));
    ++named;
  }
  EXPECT_GT(named, 50u);
  EXPECT_EQ(FindState(out, "sched_cpu_starting", "online"), nullptr);
  EXPECT_EQ(FindState(out, "sched_cpu_dying", "offline"), nullptr);
  const json* td = FindState(out, "takedown_cpu", "offline");
  ASSERT_NE(td, nullptr);
  EXPECT_EQ((*td)["number"], states.Number("cpu:teardown"));
  EXPECT_EQ((*td)["state"], "cpu:teardown");
  EXPECT_EQ((*td)["where"], "control");
  EXPECT_EQ((*td)["count"], 1);
  const json* bc = FindState(out, "bringup_cpu", "online");
  ASSERT_NE(bc, nullptr);
  EXPECT_EQ((*bc)["number"], states.Number("cpu:bringup"));
  EXPECT_EQ(FindPhase(out, "cpuhp_bringup_ap", "online"), nullptr);  // no split start-up on 6.1
  const json* deact = FindState(out, "sched_cpu_deactivate", "offline");
  ASSERT_NE(deact, nullptr);
  EXPECT_EQ((*deact)["where"], "cpuhp_thread");
  EXPECT_EQ((*deact)["state"], "sched:active");
  const json* rb = FindState(out, "trace_rb_cpu_prepare", "online");
  ASSERT_NE(rb, nullptr);
  EXPECT_EQ((*rb)["kind"], "multi_instance");
  EXPECT_EQ((*rb)["count"], 5);  // one instance per ring buffer, as captured
  ExpectSelfSumsToStateSum(out);
}

// Captured in a Debian 12 arm64 guest (6.1.0-57-arm64, QEMU TCG virt,
// 4 vCPUs; tests/fixtures/trace/README.md): offline+online of cpu1 with
// options/record-tgid on. The operation times are the guest's
// CLOCK_MONOTONIC around each write (the .ops file), the trace clock is mono.
OpRecord OpNs(uint64_t index, int cpu, Direction dir, uint64_t start_ns, uint64_t dur_ns,
              int online) {
  OpRecord r;
  r.index = index;
  r.cpu = cpu;
  r.dir = dir;
  r.start_ns = start_ns;
  r.duration_ns = dur_ns;
  r.online_before = online;
  return r;
}

// A sweep's set-up write is counted apart and stays out of every table.
TEST(TraceJoiner, SetUpWritesStayOutOfTheStateTables) {
  TraceJoiner j(States("x86_64-6.18.states"));
  j.FeedText(Fixture("x86_64-6.18-cpu1-offline-online.trace"));
  OpRecord setup = Op(0, 1, Direction::kOffline, 2497.383, 50.0, 2);
  setup.setup = true;
  j.EndOperation(setup);
  j.EndOperation(Op(1, 1, Direction::kOnline, 2497.468, 4.7, 1));
  j.Finish();
  json out = j.stats().ToJson();
  EXPECT_EQ(out["setup_ops"], 1);
  EXPECT_EQ(out["ops_with_steps"], 1);
  EXPECT_EQ(out["ops_without_steps"], 0);
  EXPECT_EQ(FindState(out, "takedown_cpu", "offline"), nullptr);
  EXPECT_NE(FindPhase(out, "cpuhp_bringup_ap", "online"), nullptr);
}

// A drain ends its whole batch in one pass (EndOperations): the same steps
// for the same operations as ending them one by one, including steps that
// belong to no operation (another CPU's window, between writes) and steps
// after the last write, which stay pending for the next batch.
TEST(TraceJoiner, BatchEndIsOperationByOperation) {
  const std::string text = Fixture("x86_64-6.18-cpu1-offline-online.trace");
  const std::vector<std::vector<OpRecord>> batches = {
      {Op(0, 1, Direction::kOffline, 2497.383, 50.0, 2)},
      // a write of cpu2 in between (cpu1's steps there are outside), and
      // the online write cut short: its later steps are outside too
      {Op(1, 2, Direction::kOffline, 2497.440, 10.0, 2),
       Op(2, 1, Direction::kOnline, 2497.468, 0.05, 1)},
      {Op(3, 1, Direction::kOnline, 2497.470, 3.0, 1)}};
  TraceJoiner one(States("x86_64-6.18.states")), batch(States("x86_64-6.18.states"));
  one.FeedText(text);
  batch.FeedText(text);
  for (const auto& b : batches) {
    for (const OpRecord& rec : b)
      one.EndOperation(rec);
    batch.EndOperations(b);
  }
  one.Finish();
  batch.Finish();
  EXPECT_EQ(batch.stats().ToJson(), one.stats().ToJson());
  EXPECT_EQ(batch.EventsJson(), one.EventsJson());
  EXPECT_GT(one.EventsJson()["steps_outside_operations"].get<uint64_t>(), 0u);
  EXPECT_GE(one.stats().ToJson()["ops_with_steps"].get<uint64_t>(), 2u);
}

TEST(TraceJoiner, CapturedArm64_61OfflineOnline) {
  const HotplugStates states = States("arm64-6.1.states");
  TraceJoiner j(states);
  j.FeedText(Fixture("arm64-6.1-cpu1-offline-online.trace"));
  j.EndOperation(OpNs(0, 1, Direction::kOffline, 7435488400, 273142960, 4));
  j.EndOperation(OpNs(1, 1, Direction::kOnline, 8763144704, 45795120, 3));
  j.Finish();
  ExpectRealCapture(j, states, 146);  // with the (tgid) column
  json out = j.stats().ToJson();
  const json* td = FindState(out, "takedown_cpu", "offline");
  ASSERT_NE(td, nullptr);
  EXPECT_EQ((*td)["number"], 153);
  EXPECT_EQ((*td)["max_ns"], 122486000);  // 7.619369 - 7.496883 (stop_machine under TCG)
  EXPECT_EQ(FindPhase(out, "takedown_cpu", "offline")->at("per_online_count")[0]["online_cpus"], 4);
  EXPECT_EQ((*FindState(out, "bringup_cpu", "online"))["max_ns"], 6685000);  // 8.799892 - 8.793207
  EXPECT_EQ((*FindState(out, "bringup_cpu", "online"))["state"], "cpu:bringup");
}

// Captured likewise in a Debian 12 amd64 guest (6.1.0-57-amd64, QEMU TCG
// -cpu max, 4 vCPUs): x86 6.1 brings a CPU up through bringup_cpu at
// cpu:bringup (native_cpu_up inside it), not the split start-up of 6.5+.
TEST(TraceJoiner, CapturedX86_61OfflineOnline) {
  const HotplugStates states = States("x86_64-6.1.states");
  TraceJoiner j(states);
  const std::string text = Fixture("x86_64-6.1-cpu1-offline-online.trace");
  for (size_t at = 0; at < text.size(); at += 113)
    j.FeedText(std::string_view(text).substr(at, 113));
  j.EndOperation(OpNs(0, 1, Direction::kOffline, 15702306310, 636512470, 4));
  j.EndOperation(OpNs(1, 1, Direction::kOnline, 17499760130, 481068110, 3));
  j.Finish();
  ExpectRealCapture(j, states, 150);
  json out = j.stats().ToJson();
  const json* td = FindState(out, "takedown_cpu", "offline");
  ASSERT_NE(td, nullptr);
  EXPECT_EQ((*td)["number"], 153);
  EXPECT_EQ((*td)["max_ns"], 340829000);  // 16.185144 - 15.844315
  const json* bc = FindState(out, "bringup_cpu", "online");
  EXPECT_EQ((*bc)["state"], "cpu:bringup");
  EXPECT_EQ((*bc)["max_ns"], 431384000);  // 17.976305 - 17.544921
  EXPECT_EQ((*FindPhase(out, "bringup_cpu", "online"))["per_online_count"][0]["online_cpus"], 3);
  // The state sum stays within each write, with a real unaccounted rest.
  for (const json& op : out["first_operations"])
    EXPECT_GT(op["unaccounted_ns"].get<uint64_t>(), 0u);
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

// A drain runs while the next write is in flight and reads the buffers one
// CPU after the other: a task that moved from CPU 0 to CPU 1 inside a
// callback can have its exit read (CPU 1, read last) a drain before its
// enter (CPU 0, read first). Fed as read, the step is lost; held back past
// the last write taken, it is joined whole.
TEST(TakeEventsUpTo, EventsAfterTheLastWriteWaitForTheNextDrain) {
  auto ev = [](TraceKind kind, int event_cpu, double t_ms) {
    RawCpuhpEvent e;
    e.kind = kind;
    e.pid = 100;
    e.event_cpu = event_cpu;
    e.ts_ns = static_cast<uint64_t>(t_ms * 1e6);
    e.cpu = 1;
    e.idx = 50;
    e.fun = 0xffffffff81000000;
    return e;
  };
  const RawCpuhpEvent enter = ev(TraceKind::kEnter, 0, 10), exit = ev(TraceKind::kExit, 1, 20);
  const OpRecord a = Op(0, 1, Direction::kOffline, 0.0, 5, 2);
  const OpRecord b = Op(1, 1, Direction::kOnline, 0.006, 24, 1);  // 6..30 ms
  auto feed = [](TraceJoiner* j, const std::vector<RawCpuhpEvent>& evs) {
    for (const RawCpuhpEvent& e : evs)
      j->FeedEvent(ToTraceEvent(e, "cpuhp-stress", e.kind == TraceKind::kExit ? "" : "f"));
  };
  const HotplugStates states = States("x86_64-6.18.states");

  // Drain 1 (after write a, cutoff its end): CPU 0 read before the enter,
  // CPU 1 after the exit. Drain 2 (the last): the enter.
  TraceJoiner held(states, 1);
  std::vector<RawCpuhpEvent> keep;
  std::vector<RawCpuhpEvent> now = TakeEventsUpTo(&keep, {exit}, a.start_ns + a.duration_ns);
  EXPECT_TRUE(now.empty());
  ASSERT_EQ(keep.size(), 1u);
  feed(&held, now);
  held.EndOperation(a);
  now = TakeEventsUpTo(&keep, {enter}, UINT64_MAX);
  ASSERT_EQ(now.size(), 2u);
  EXPECT_EQ(now[0].kind, TraceKind::kEnter);  // merged by time
  EXPECT_TRUE(keep.empty());
  feed(&held, now);
  held.EndOperation(b);
  held.Finish();
  json out = held.stats().ToJson();
  EXPECT_EQ(out["ops_with_steps"], 1);
  EXPECT_EQ(held.EventsJson()["unmatched_exits"], 0);
  EXPECT_EQ(held.EventsJson()["open_at_end"], 0);

  // The same reads fed as they come: the exit has no enter yet.
  TraceJoiner as_read(states, 1);
  feed(&as_read, {exit});
  as_read.EndOperation(a);
  feed(&as_read, {enter});
  as_read.EndOperation(b);
  as_read.Finish();
  EXPECT_EQ(as_read.EventsJson()["unmatched_exits"], 1);
  EXPECT_EQ(as_read.stats().ToJson()["ops_with_steps"], 0);
}

TEST(RingCapacity, OperationsOnTheBusiestCpu) {
  // 1410 KB per CPU (an instance's default on x86-64), ~53 events per write
  // on the writer's CPU: 567 writes, so a drain is asked for every ~140 and
  // the writer drains itself past ~280.
  EXPECT_EQ(RingCapacityOps(1410, 53), 1410u * 1024 / (53 * 48));
  EXPECT_EQ(RingCapacityOps(1410, 53), 567u);
  // Before a drain has counted them: 128 events assumed.
  EXPECT_EQ(RingCapacityOps(TracefsSource::kMinBufferKb, TracefsSource::kAssumedEventsPerOp), 170u);
  // Never 0, whatever the sizes.
  EXPECT_EQ(RingCapacityOps(0, 53), 1u);
  EXPECT_EQ(RingCapacityOps(1, 0), 21u);
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
  // A state table and the three cpuhp event directories: what Start checks
  // before it makes an instance.
  void MakeStatesAndEvents() {
    std::ofstream(sysfs_ + "/hotplug/states") << "144: cpu:teardown\n";
    for (const char* e : {"cpuhp_enter", "cpuhp_multi_enter", "cpuhp_exit"})
      fs::create_directories(root_ + "/events/cpuhp/" + e);
  }
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
  MakeStatesAndEvents();
  TracefsSource src(sysfs_, root_);
  std::string why;
  // A plain directory has no trace_clock file in the new "instance".
  EXPECT_FALSE(src.Start(&why));
  EXPECT_NE(why.find("/trace_clock: cannot open"), std::string::npos) << why;
  // Files are opened without O_CREAT, so the directory stays empty and goes.
  EXPECT_TRUE(fs::is_empty(root_ + "/instances"));
}

TEST_F(FakeTracefs, KeptInstanceFoundBeforeStaysWhenSetUpFails) {
  MakeStatesAndEvents();
  const std::string kept = root_ + "/instances/" + kKeptInstance;
  fs::create_directories(kept);
  TracefsSource src(sysfs_, root_);
  std::string why;
  EXPECT_FALSE(src.Start(&why));
  // Found, so stopped first; not this run's to remove.
  EXPECT_EQ(why, kept + "/tracing_on: cannot open: No such file or directory");
  EXPECT_TRUE(fs::is_directory(kept));
}

TEST_F(FakeTracefs, HeldKeptInstanceMakesTheRunUseItsOwn) {
  MakeStatesAndEvents();
  const std::string kept = root_ + "/instances/" + kKeptInstance;
  fs::create_directories(kept);
  const int held = open(kept.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(held, 0);
  ASSERT_EQ(flock(held, LOCK_EX | LOCK_NB), 0);
  TracefsSource src(sysfs_, root_);
  std::string why;
  EXPECT_FALSE(src.Start(&why));
  const std::string own = root_ + "/instances/cpuhp-stress-" + std::to_string(getpid());
  EXPECT_EQ(why, own + "/trace_clock: cannot open: No such file or directory");
  EXPECT_FALSE(fs::exists(own));
  EXPECT_TRUE(fs::is_directory(kept));
  close(held);
}

TEST_F(FakeTracefs, RestoreRemovesTheKeptInstanceOnlyWhenNoRunHoldsIt) {
  const std::string kept = root_ + "/instances/" + kKeptInstance;
  std::string err;
  EXPECT_FALSE(RemoveKeptTraceInstance(root_, &err));  // none
  EXPECT_EQ(err, "");
  fs::create_directories(kept);
  const int held = open(kept.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(held, 0);
  ASSERT_EQ(flock(held, LOCK_EX | LOCK_NB), 0);
  EXPECT_FALSE(RemoveKeptTraceInstance(root_, &err));
  EXPECT_EQ(err, "");
  EXPECT_TRUE(fs::is_directory(kept));
  close(held);
  EXPECT_TRUE(RemoveKeptTraceInstance(root_, &err)) << err;
  EXPECT_FALSE(fs::exists(kept));
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

// ---- raw pages (the production reader) ----

// Captured on this 6.18 host: offline+online of cpu1 with the three events
// in an instance, then its `trace` text (which does not consume) and each
// CPU's trace_pipe_raw (tests/fixtures/trace/README.md).
const std::string kRawRoot =
    std::string(CPUHP_SOURCE_DIR) + "/tests/fixtures/trace/x86_64-6.18-raw";

std::vector<TraceEvent> TextEvents(const std::string& text) {
  std::vector<TraceEvent> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    TraceEvent ev;
    if (!line.empty() && line[0] != '#' && ParseTraceLine(line, &ev))
      out.push_back(ev);
  }
  return out;
}

TEST(RawCpuhpReader, DecodesTheSameEventsTheKernelPrintsAsText) {
  RawCpuhpReader r;
  std::string why;
  ASSERT_TRUE(r.Open(kRawRoot, "cap", &why)) << why;
  r.Read();
  const std::string text = Fixture("x86_64-6.18-raw/trace.txt");
  const std::vector<TraceEvent> want = TextEvents(text);
  ASSERT_EQ(want.size(), 186u);
  ASSERT_EQ(r.events.size(), want.size());
  EXPECT_EQ(r.missed, 0u);
  const std::unordered_map<uint64_t, std::string> names = CallbackNamesFromText(text, r.events);
  for (size_t i = 0; i < want.size(); ++i) {
    const RawCpuhpEvent& e = r.events[i];
    const TraceEvent& t = want[i];
    SCOPED_TRACE("event " + std::to_string(i));
    EXPECT_EQ(e.kind, t.kind);
    EXPECT_EQ(e.pid, t.pid);
    EXPECT_EQ(e.event_cpu, t.event_cpu);
    EXPECT_EQ((e.ts_ns + 500) / 1000, t.ts_ns / 1000);  // text: rounded microseconds
    EXPECT_EQ(e.cpu, t.cpu);
    EXPECT_EQ(e.idx, t.idx);
    EXPECT_EQ(e.target, t.target);
    if (t.kind == TraceKind::kExit) {
      EXPECT_EQ(e.ret, t.ret);
    } else {
      ASSERT_TRUE(names.count(e.fun)) << t.fun;
      EXPECT_EQ(names.at(e.fun), t.fun);
    }
  }
  // The raw timestamps are nanoseconds: not all multiples of 1000.
  EXPECT_TRUE(std::any_of(r.events.begin(), r.events.end(),
                          [](const RawCpuhpEvent& e) { return e.ts_ns % 1000 != 0; }));
}

TEST(RawCpuhpReader, SameStepsAndStatesAsTheTextPath) {
  // Both paths through the joiner over one operation spanning the capture:
  // the same steps and the same per-state rows (within the microsecond the
  // text truncates).
  RawCpuhpReader r;
  std::string why;
  ASSERT_TRUE(r.Open(kRawRoot, "cap", &why)) << why;
  r.Read();
  const std::string text = Fixture("x86_64-6.18-raw/trace.txt");
  const auto names = CallbackNamesFromText(text, r.events);
  HotplugStates states = States("x86_64-6.18.states");
  TraceJoiner from_text(states), from_raw(states, 1);
  from_text.FeedText(text);
  const std::vector<TraceEvent> text_events = TextEvents(text);
  for (const RawCpuhpEvent& e : r.events) {
    std::string comm = e.pid == 0 ? "swapper/" + std::to_string(e.event_cpu) : "";
    for (const TraceEvent& t : text_events)
      if (t.pid == e.pid)
        comm = t.comm;
    from_raw.FeedEvent(
        ToTraceEvent(e, std::move(comm), e.kind != TraceKind::kExit ? names.at(e.fun) : ""));
  }
  OpRecord op;
  op.cpu = 1;
  op.dir = Direction::kOffline;
  op.start_ns = r.events.front().ts_ns - r.events.front().ts_ns % 1000 - 1000;
  op.duration_ns = r.events.back().ts_ns + 1000 - op.start_ns;
  op.online_before = 2;
  from_text.EndOperation(op);
  from_raw.EndOperation(op);
  const json a = from_text.stats().ToJson(), b = from_raw.stats().ToJson();
  ASSERT_EQ(a["kernel_states"].size(), b["kernel_states"].size());
  EXPECT_GT(a["kernel_states"].size(), 30u);
  // One row per (function, where, state number): a callback can serve two
  // states (its startup and its teardown).
  auto find = [](const json& j, const json& row) -> const json* {
    for (const json& r : j["kernel_states"])
      if (r["function"] == row["function"] && r["where"] == row["where"] &&
          r["number"] == row["number"] && r["direction"] == row["direction"])
        return &r;
    return nullptr;
  };
  for (const json& s : a["kernel_states"]) {
    const json* o = find(b, s);
    ASSERT_NE(o, nullptr) << s.dump();
    EXPECT_EQ((*o)["count"], s["count"]);
    EXPECT_EQ((*o)["state"], s["state"]);
    EXPECT_EQ((*o)["kind"], s["kind"]);
    // Text timestamps are rounded to the microsecond at both ends.
    EXPECT_NEAR((*o)["max_ns"].get<double>(), s["max_ns"].get<double>(), 1000.0);
    EXPECT_NEAR((*o)["self_ns"].get<double>(), s["self_ns"].get<double>(),
                2000.0 * s["count"].get<double>());
  }
  EXPECT_EQ(from_text.events(), from_raw.events());
}

TEST(RawCpuhpReader, MissingFormatIsUnavailableNamingTheFile) {
  const fs::path root = fs::path(::testing::TempDir()) / "raw-noformat";
  fs::remove_all(root);
  fs::create_directories(root / "events");
  fs::create_directories(root / "instances/cap");
  fs::copy_file(kRawRoot + "/events/header_page", root / "events/header_page");
  RawCpuhpReader r;
  std::string why;
  EXPECT_FALSE(r.Open(root.string(), "cap", &why));
  EXPECT_NE(why.find("events/cpuhp/cpuhp_enter/format"), std::string::npos) << why;
  fs::remove_all(root);
}

}  // namespace
}  // namespace cpuhp
