// SPDX-License-Identifier: GPL-2.0
// The drain's parts: events held back past the last write, and the raw
// reader on pages captured from a 6.18 host.
#include "sources/trace_drainer.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <gtest/gtest.h>

#include "sources/trace_join.h"
#include "testing/raw_run.h"
#include "testing/trace_fixtures.h"

namespace cpuhp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

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
  std::vector<RawCpuhpEvent> read = {exit}, now;
  TakeEventsUpTo(&keep, &read, a.start_ns + a.duration_ns, &now);
  EXPECT_TRUE(read.empty());
  EXPECT_TRUE(now.empty());
  ASSERT_EQ(keep.size(), 1u);
  feed(&held, now);
  held.EndOperation(a);
  read = {enter};
  TakeEventsUpTo(&keep, &read, UINT64_MAX, &now);
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

// A recorded run through the drain's conversion and join (RawEventFeed,
// TraceJoiner): 30 offline+online pairs of the raw capture, drained every 7
// writes with the write in flight's first events read too. Its per-state
// tables, per-operation state sums, unaccounted rest and event counts are
// those the code gave before the drain was made cheaper (issue 31), kept in
// x86_64-6.18-raw-joined.json (CPUHP_WRITE_FIXTURE=1 writes it anew).
TEST(RawEventFeed, RecordedRunGivesTheRecordedTables) {
  RawRun run;
  std::string why;
  const std::string dir = std::string(CPUHP_SOURCE_DIR) + "/tests/fixtures/trace";
  ASSERT_TRUE(LoadRawRun(dir, 30, &run, &why)) << why;
  ASSERT_EQ(run.events.size(), 30u * 186);
  TraceJoiner joiner(run.states, 1);
  RawEventFeed feed;
  feed.fun_names = run.fun_names;
  DrainRawRun(&run, 7, &feed, &joiner);
  joiner.Finish();
  json got = joiner.stats().ToJson();
  got["events"] = joiner.EventsJson();
  got["unnamed_callbacks"] = feed.unnamed;
  EXPECT_EQ(got["ops_with_steps"], 60);
  EXPECT_EQ(got["events"]["steps_outside_operations"], 0);
  const std::string path = dir + "/x86_64-6.18-raw-joined.json";
  if (std::getenv("CPUHP_WRITE_FIXTURE"))
    std::ofstream(path) << got.dump(1) << "\n";
  const json want = json::parse(Fixture("x86_64-6.18-raw-joined.json"));
  EXPECT_EQ(got["kernel_states"], want["kernel_states"]);
  EXPECT_EQ(got["phases"], want["phases"]);
  EXPECT_EQ(got["per_operation"], want["per_operation"]);
  EXPECT_EQ(got, want) << got.dump(1);
}

// ---- raw pages (the production reader) ----
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

// A copy of the captured tracefs root with more CPUs: cpu2 and cpu3 hold
// the pages of cpu0 and cpu1 again (the same timestamps).
fs::path RootWithFourCpus(const std::string& name) {
  const fs::path root = fs::path(::testing::TempDir()) / name;
  fs::remove_all(root);
  fs::copy(kRawRoot, root, fs::copy_options::recursive);
  const fs::path per_cpu = root / "instances/cap/per_cpu";
  fs::copy(per_cpu / "cpu0", per_cpu / "cpu2", fs::copy_options::recursive);
  fs::copy(per_cpu / "cpu1", per_cpu / "cpu3", fs::copy_options::recursive);
  return root;
}

// Every per_cpu/cpuN the instance has is read (the buffers of all possible
// CPUs, online or not), and the CPUs' events come out as one run by time:
// on equal times the lower CPU first.
TEST(RawCpuhpReader, EveryCpuReadAndMergedByTime) {
  const fs::path root = RootWithFourCpus("raw-4cpu");
  RawCpuhpReader r;
  std::string why;
  ASSERT_TRUE(r.Open(root.string(), "cap", &why)) << why;
  r.Read();
  ASSERT_EQ(r.events.size(), 2 * 186u);
  EXPECT_EQ(r.missed, 0u);
  std::vector<size_t> per_cpu(4);
  for (const RawCpuhpEvent& e : r.events)
    ++per_cpu.at(static_cast<size_t>(e.event_cpu));
  EXPECT_EQ(per_cpu[0], per_cpu[2]);
  EXPECT_EQ(per_cpu[1], per_cpu[3]);
  EXPECT_GT(per_cpu[0], 0u);
  EXPECT_GT(per_cpu[1], 0u);
  for (size_t i = 1; i < r.events.size(); ++i) {
    const RawCpuhpEvent& a = r.events[i - 1];
    const RawCpuhpEvent& b = r.events[i];
    ASSERT_LE(a.ts_ns, b.ts_ns) << "event " << i;
    if (a.ts_ns == b.ts_ns) {
      EXPECT_LE(a.event_cpu, b.event_cpu) << "event " << i;
    }
  }
  // The files stay open: the next read finds them consumed (a regular file
  // at its end here, an empty ring on tracefs).
  r.events.clear();
  r.Read();
  EXPECT_TRUE(r.events.empty());
  fs::remove_all(root);
}

// A CPU whose trace_pipe_raw cannot be read counts as lost events (the
// report's tracepoints_no_lost_events check fails) and the others are read.
TEST(RawCpuhpReader, UnreadableCpuIsLostEventsNotASilentGap) {
  const fs::path root = RootWithFourCpus("raw-unreadable");
  const fs::path bad = root / "instances/cap/per_cpu/cpu3/trace_pipe_raw";
  fs::remove(bad);
  fs::create_directory(bad);  // opens, and read() fails with EISDIR
  RawCpuhpReader r;
  std::string why;
  ASSERT_TRUE(r.Open(root.string(), "cap", &why)) << why;
  r.Read();
  EXPECT_GE(r.missed, 1u);
  EXPECT_EQ(r.read_errno, EISDIR);
  EXPECT_GT(r.events.size(), 186u);
  EXPECT_LT(r.events.size(), 2 * 186u);
  fs::remove_all(root);
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
