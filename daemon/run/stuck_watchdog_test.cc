// SPDX-License-Identifier: GPL-2.0
// The stuck-operation watchdog: sees a write past the timeout once, records
// CPU, direction and a stack (or why not), notes when it returns (end to end,
// cli/run_soak_test.cc: a stalled simulated write shows up in the report).
#include "run/stuck_watchdog.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "stats/op_record.h"
#include "util/systemd_glue.h"

namespace cpuhp {
namespace {

TEST(StuckWatchdog, ReportsAStuckWriteOnceAndItsReturn) {
  InFlight f;
  std::vector<std::string> lines;
  StuckWatchdog w(&f, 30000000000ull, [&](const std::string& l) { lines.push_back(l); });
  f.call = static_cast<int>(SysfsCall::kOnlineWrite);
  f.cpu = 3;
  f.dir = static_cast<int>(Direction::kOnline);
  f.index = 41;
  f.tid = gettid();
  f.start_wall_ns = 1000000000000ull;
  w.Poll(1000000000000ull + 29000000000ull);  // 29 s: not yet
  EXPECT_EQ(w.Records().size(), 0u);
  w.Poll(1000000000000ull + 31000000000ull);
  w.Poll(1000000000000ull + 32000000000ull);  // the same write: once
  ASSERT_EQ(w.Records().size(), 1u);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "STUCK: cpu3 online (op 41) has not returned after 31 s");
  nlohmann::json r = w.Records()[0];
  EXPECT_EQ(r["cpu"], 3);
  EXPECT_EQ(r["dir"], "online");
  EXPECT_EQ(r["index"], 41);
  EXPECT_EQ(r["detected_after_ns"], 31000000000ull);
  EXPECT_TRUE(r.contains("stack") != r.contains("stack_unavailable"));
  f.start_wall_ns = 0;  // returned
  w.Poll(1000000000000ull + 40000000000ull);
  EXPECT_EQ(w.Records()[0]["returned_after_ns"], 40000000000ull);
}

// Issue 28 item 2: the STUCK line and the record name the hotplug state the
// CPU was in when the watchdog saw the write stuck, as the failed-rollback
// lines do; a backend that cannot tell leaves both out.
TEST(StuckWatchdog, NamesTheHotplugStateTheCpuIsIn) {
  InFlight f;
  std::vector<std::string> lines;
  StuckWatchdog w(&f, 1000000000ull, [&](const std::string& l) { lines.push_back(l); });
  std::vector<int> asked;
  w.set_state_reader([&](int cpu, int* state, std::string* name) {
    asked.push_back(cpu);
    if (cpu != 2)
      return false;
    *state = 148;
    *name = "sched:waitempty";
    return true;
  });
  f.call = static_cast<int>(SysfsCall::kOnlineWrite);
  f.cpu = 2;
  f.dir = static_cast<int>(Direction::kOffline);
  f.index = 19;
  f.tid = gettid();
  f.start_wall_ns = 1000000000ull;
  w.Poll(3000000000ull);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(
      lines[0],
      "STUCK: cpu2 offline (op 19) in state 148 (sched:waitempty) has not returned after 2 s");
  EXPECT_EQ(w.Records()[0]["hotplug_state"], 148);
  EXPECT_EQ(w.Records()[0]["hotplug_state_name"], "sched:waitempty");
  f.cpu = 5;  // the next stuck write, on a CPU the reader knows nothing of
  f.index = 20;
  f.start_wall_ns = 4000000000ull;
  w.Poll(6000000000ull);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1], "STUCK: cpu5 offline (op 20) has not returned after 2 s");
  EXPECT_FALSE(w.Records()[1].contains("hotplug_state"));
  EXPECT_EQ(asked, (std::vector<int>{2, 5}));
}

// Issue 28 item 3: the thread reads its clock, then loads the write in
// flight; a write that started in between is later than "now". It has not
// been stuck at all (it once read as 18446744073 s).
TEST(StuckWatchdog, AWriteThatStartedAfterNowIsNotStuck) {
  InFlight f;
  std::vector<std::string> lines;
  StuckWatchdog w(&f, 1000000000ull, [&](const std::string& l) { lines.push_back(l); });
  f.call = static_cast<int>(SysfsCall::kOnlineWrite);
  f.cpu = 5;
  f.dir = static_cast<int>(Direction::kOnline);
  f.index = 71404505;
  f.tid = gettid();
  const uint64_t now = 5000000000000ull;
  f.start_wall_ns = now + 750;  // began 750 ns after the clock was read
  w.Poll(now);
  EXPECT_EQ(w.Records().size(), 0u) << w.Records();
  EXPECT_TRUE(lines.empty()) << lines[0];
  w.Poll(now + 750 + 999999999);  // just under the timeout
  EXPECT_EQ(w.Records().size(), 0u);
  w.Poll(now + 750 + 1000000000);
  ASSERT_EQ(w.Records().size(), 1u);
  EXPECT_EQ(w.Records()[0]["detected_after_ns"], 1000000000u);
}

// Issue 29 item 6: a read outside the operation loop (start-up, the final
// restore) is watched like the write; its line and record say what it is,
// with neither an operation index nor a direction.
TEST(StuckWatchdog, ReportsAStuckReadOutsideAnOperation) {
  InFlight f;
  std::vector<std::string> lines;
  StuckWatchdog w(&f, 1000000000ull, [&](const std::string& l) { lines.push_back(l); });
  f.call = static_cast<int>(SysfsCall::kOnlineRead);
  f.cpu = 1;
  f.tid = gettid();
  f.start_wall_ns = 1000000000ull;
  w.Poll(3500000000ull);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "STUCK: cpu1/online read has not returned after 2 s");
  const nlohmann::json r = w.Records()[0];
  EXPECT_EQ(r["call"], "online_read");
  EXPECT_EQ(r["what"], "cpu1/online read");
  EXPECT_EQ(r["cpu"], 1);
  EXPECT_FALSE(r.contains("index")) << r;
  EXPECT_FALSE(r.contains("dir")) << r;
  f.index = 7;  // the readback of operation 7, on another call
  f.start_wall_ns = 4000000000ull;
  w.Poll(6000000000ull);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1], "STUCK: cpu1/online read (op 7) has not returned after 2 s");
  EXPECT_EQ(w.Records()[1]["index"], 7);
}

// While a call is in flight for a second or more, systemd's watchdog is fed
// (the process waits on the kernel, it is not hung); the give-up ends the
// wait instead, once, and only for a call already reported stuck.
TEST(StuckWatchdog, FeedsTheServiceWatchdogAndGivesUpOnce) {
  InFlight f;
  StuckWatchdog w(&f, 2000000000ull, nullptr);
  int pings = 0;
  std::vector<std::string> gave_up;
  w.set_keepalive([&] { ++pings; });
  w.set_give_up(5000000000ull, [&](const std::string& l) { gave_up.push_back(l); });
  f.call = static_cast<int>(SysfsCall::kListRead);
  f.list = "online";
  f.tid = gettid();
  const uint64_t t0 = 1000000000000ull;
  f.start_wall_ns = t0;
  w.Poll(t0 + 500000000ull);  // in flight half a second: nothing
  EXPECT_EQ(pings, 0);
  w.Poll(t0 + 1000000000ull);
  EXPECT_EQ(pings, 1);
  w.Poll(t0 + 2000000000ull);  // reported
  ASSERT_EQ(w.Records().size(), 1u);
  EXPECT_EQ(w.Records()[0]["what"], "the online list read");
  w.Poll(t0 + 4900000000ull);
  EXPECT_TRUE(gave_up.empty());
  w.Poll(t0 + 5000000000ull);
  w.Poll(t0 + 6000000000ull);
  ASSERT_EQ(gave_up.size(), 1u);
  EXPECT_EQ(gave_up[0],
            "GIVING UP: the online list read has not returned after 5 s (stuck_give_up 5 s)");
  EXPECT_EQ(pings, 5);
  f.start_wall_ns = 0;
  w.Poll(t0 + 7000000000ull);
  EXPECT_EQ(pings, 5);  // nothing in flight: no ping
}

// A give-up shorter than the timeout waits for the call to be reported.
TEST(StuckWatchdog, GiveUpNeverComesBeforeTheStuckReport) {
  InFlight f;
  StuckWatchdog w(&f, 3000000000ull, nullptr);
  std::vector<std::string> gave_up;
  w.set_give_up(1000000000ull, [&](const std::string& l) { gave_up.push_back(l); });
  f.call = static_cast<int>(SysfsCall::kOnlineWrite);
  f.cpu = 1;
  f.tid = gettid();
  f.start_wall_ns = 1000000000ull;
  w.Poll(3000000000ull);
  EXPECT_TRUE(gave_up.empty());
  w.Poll(4000000000ull);  // reported
  w.Poll(4100000000ull);
  EXPECT_EQ(gave_up.size(), 1u);
}

// A stuck read at start-up is recorded before the checkpoint's records are
// read back: both are kept, the checkpoint's first.
TEST(StuckWatchdog, RecordsFromACheckpointComeBeforeThisProcesss) {
  InFlight f;
  StuckWatchdog w(&f, 1000000000ull, nullptr);
  f.call = static_cast<int>(SysfsCall::kOnlineRead);
  f.cpu = 2;
  f.tid = gettid();
  f.start_wall_ns = 1000000000ull;
  w.Poll(2500000000ull);
  w.SetRecords(nlohmann::json::array({{{"cpu", 1}, {"what", "cpu1 online"}}}), 3);
  f.start_wall_ns = 0;
  w.Poll(3000000000ull);  // the start-up read returned: noted in its record
  const nlohmann::json r = w.Records();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0]["what"], "cpu1 online");
  EXPECT_EQ(r[1]["what"], "cpu2/online read");
  EXPECT_EQ(r[1]["returned_after_ns"], 2000000000ull);
  EXPECT_EQ(w.dropped(), 3u);
}

// Why a stack is missing, by what failed: never CAP_SYS_ADMIN for a file
// that read fine but empty, or for one that is not there.
TEST(StuckWatchdog, TheStackReasonNamesWhatFailed) {
  char tmpl[] = "/tmp/cpuhp-stack.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  std::string why;
  EXPECT_EQ(ReadKernelStackAt(dir, &why), "");  // a task without a stack file
  EXPECT_EQ(why, dir + "/stack: no such file: the kernel was built without CONFIG_STACKTRACE");
  std::ofstream(dir + "/stack").close();  // the kernel found no frames
  why.clear();
  EXPECT_EQ(ReadKernelStackAt(dir, &why), "");
  EXPECT_EQ(why, dir + "/stack: no frames: the thread was not blocked in the kernel when read");
  std::ofstream(dir + "/stack") << "[<0>] hrtimer_nanosleep+0xb5/0x130\n";
  why.clear();
  EXPECT_EQ(ReadKernelStackAt(dir, &why), "[<0>] hrtimer_nanosleep+0xb5/0x130\n");
  EXPECT_EQ(why, "");
  std::filesystem::remove_all(dir);
  EXPECT_EQ(ReadKernelStackAt(dir, &why), "");
  EXPECT_EQ(why, dir + ": the thread has exited");
  // This very thread, as the watchdog reads it: a stack, or a reason that
  // is not a guess.
  why.clear();
  const std::string own = ReadKernelStack(gettid(), &why);
  EXPECT_TRUE(!own.empty() || why.find("CAP_SYS_ADMIN") == std::string::npos ||
              why.find("Permission denied") != std::string::npos ||
              why.find("Operation not permitted") != std::string::npos)
      << why;
}

TEST(JournalFields, CarryCpuOpErrnoIteration) {
  EXPECT_TRUE(JournalFieldsForTest(LogFields{}).empty());
  {
    ScopedLogFields s({2, "offline", 16, 12345});
    EXPECT_EQ(JournalFieldsForTest(CurrentLogFields()),
              (std::vector<std::string>{"CPU=2", "OP=offline", "ERRNO=16", "ITERATION=12345"}));
  }
  EXPECT_EQ(CurrentLogFields().cpu, -1);
}

}  // namespace
}  // namespace cpuhp
