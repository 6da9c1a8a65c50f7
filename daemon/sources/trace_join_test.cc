// SPDX-License-Identifier: GPL-2.0
// The join on recorded and hand-written trace fixtures
// (tests/fixtures/trace/README.md says which is which).
#include "sources/trace_join.h"

#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "testing/raw_run.h"
#include "testing/trace_fixtures.h"

namespace cpuhp {
namespace {

using nlohmann::json;

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

// The per-state tables (states, phases by online count, per-operation sums,
// first operations) of every recorded trace, as the code gave them before
// the join's per-step lookups were made cheaper (issue 31), kept in
// tests/fixtures/trace/state-tables.json (CPUHP_WRITE_FIXTURE=1 writes it
// anew). The raw capture runs 12 times with what one capture lacks: online
// counts from 1 to 4, failed callbacks, a set-up write, drains of 5 writes.
TEST(TraceJoiner, RecordedTracesGiveTheRecordedTables) {
  json got;
  {
    RawRun run;
    std::string why;
    ASSERT_TRUE(LoadRawRun(std::string(CPUHP_SOURCE_DIR) + "/tests/fixtures/trace", 12, &run, &why))
        << why;
    for (OpRecord& op : run.ops) {
      const int pair = static_cast<int>(op.index / 2);
      op.online_before = (op.dir == Direction::kOffline ? 2 : 1) + pair % 3;
      op.setup = op.index == 5;
    }
    const size_t per_pair = run.events.size() / 12;
    for (size_t i = 3 * per_pair; i < 4 * per_pair; ++i)
      if (run.events[i].kind == TraceKind::kExit && run.events[i].idx % 2 == 1)
        run.events[i].ret = -16;
    TraceJoiner j(run.states, 1);
    RawEventFeed feed;
    feed.fun_names = run.fun_names;
    DrainRawRun(&run, 5, &feed, &j);
    j.Finish();
    got["raw_run"] = j.stats().ToJson();
    got["raw_run"]["events"] = j.EventsJson();
  }
  auto text = [](const std::string& states, const std::string& trace,
                 const std::vector<OpRecord>& ops) {
    TraceJoiner j(States(states));
    j.FeedText(Fixture(trace));
    j.EndOperations(ops);
    j.Finish();
    json out = j.stats().ToJson();
    out["events"] = j.EventsJson();
    return out;
  };
  got["x86_64-6.18"] = text("x86_64-6.18.states", "x86_64-6.18-cpu1-offline-online.trace",
                            {Op(0, 1, Direction::kOffline, 2497.383, 50.0, 2),
                             Op(1, 1, Direction::kOnline, 2497.468, 4.7, 1)});
  got["x86_64-6.1"] = text("x86_64-6.1.states", "x86_64-6.1-cpu1-offline-online.trace",
                           {OpNs(0, 1, Direction::kOffline, 15702306310, 636512470, 4),
                            OpNs(1, 1, Direction::kOnline, 17499760130, 481068110, 3)});
  got["arm64-6.1"] = text("arm64-6.1.states", "arm64-6.1-cpu1-offline-online.trace",
                          {OpNs(0, 1, Direction::kOffline, 7435488400, 273142960, 4),
                           OpNs(1, 1, Direction::kOnline, 8763144704, 45795120, 3)});
  got["malformed"] = text("x86_64-6.18.states", "malformed.trace",
                          {Op(0, 1, Direction::kOffline, 3000.0, 7.5, 2)});
  EXPECT_EQ(got["raw_run"]["setup_ops"], 1);
  EXPECT_EQ(got["raw_run"]["ops_with_steps"], 23);
  const std::string path =
      std::string(CPUHP_SOURCE_DIR) + "/tests/fixtures/trace/state-tables.json";
  if (std::getenv("CPUHP_WRITE_FIXTURE"))
    std::ofstream(path) << got.dump(1) << "\n";
  const json want = json::parse(Fixture("state-tables.json"));
  for (const char* k : {"raw_run", "x86_64-6.18", "x86_64-6.1", "arm64-6.1", "malformed"})
    for (const char* t : {"kernel_states", "phases", "per_operation", "first_operations"})
      EXPECT_EQ(got[k][t], want[k][t]) << k << " " << t;
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace cpuhp
