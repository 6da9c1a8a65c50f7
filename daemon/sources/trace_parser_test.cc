// SPDX-License-Identifier: GPL-2.0
#include "sources/trace_parser.h"

#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace cpuhp {
namespace {

TEST(TraceParser, EnterLineFrom618) {
  TraceEvent ev;
  ASSERT_TRUE(ParseTraceLine(
      "     kworker/0:1-8772    [000] .....  2497.408107: cpuhp_enter: cpu: 0001 target:   0 "
      "step: 144 (takedown_cpu)",
      &ev));
  EXPECT_EQ(ev.kind, TraceKind::kEnter);
  EXPECT_EQ(ev.comm, "kworker/0:1");
  EXPECT_EQ(ev.pid, 8772);
  EXPECT_EQ(ev.event_cpu, 0);
  EXPECT_EQ(ev.ts_ns, 2497408107000ull);
  EXPECT_EQ(ev.cpu, 1);
  EXPECT_EQ(ev.target, 0);
  EXPECT_EQ(ev.idx, 144);
  EXPECT_EQ(ev.fun, "takedown_cpu");
}

TEST(TraceParser, ExitAndMultiEnter) {
  TraceEvent ev;
  ASSERT_TRUE(ParseTraceLine(
      "         cpuhp/1-20      [001] .....  2497.397595: cpuhp_exit:  cpu: 0001  state: 234 "
      "step: 235 ret: -16",
      &ev));
  EXPECT_EQ(ev.kind, TraceKind::kExit);
  EXPECT_EQ(ev.comm, "cpuhp/1");
  EXPECT_EQ(ev.target, 234);
  EXPECT_EQ(ev.idx, 235);
  EXPECT_EQ(ev.ret, -16);
  ASSERT_TRUE(ParseTraceLine(
      "         cpuhp/1-20      [001] .....  2497.397598: cpuhp_multi_enter: cpu: 0001 target: "
      "144 step: 201 (virtnet_cpu_down_prep)",
      &ev));
  EXPECT_EQ(ev.kind, TraceKind::kMultiEnter);
  EXPECT_EQ(ev.fun, "virtnet_cpu_down_prep");
}

TEST(TraceParser, TaskNamesWithSpacesDashesAndTgidColumn) {
  TraceEvent ev;
  ASSERT_TRUE(ParseTraceLine(
      "  my-tool v2-1234    (   1234) [003] d..1.   500.000100: cpuhp_enter: cpu: 0003 target: "
      "211 step:   1 (smpboot_create_threads)",
      &ev));
  EXPECT_EQ(ev.comm, "my-tool v2");
  EXPECT_EQ(ev.pid, 1234);
  EXPECT_EQ(ev.event_cpu, 3);
  EXPECT_EQ(ev.cpu, 3);
  // No flags column (options/irq-info off).
  ASSERT_TRUE(
      ParseTraceLine("sh-5 [000] 12.000001: cpuhp_exit: cpu: 0001 state: 1 step: 1 ret: 0", &ev));
  EXPECT_EQ(ev.ts_ns, 12000001000ull);
}

// Every event line of the two 6.1 guest captures parses (the arm64 one has
// the (tgid) column; both have need-resched ".N..." flags), and the counts
// per kind are those of the files.
TEST(TraceParser, CapturedDebian61GuestTraces) {
  struct Want {
    const char* file;
    int enter, multi, exit;
  };
  for (const Want& w : {Want{"x86_64-6.1-cpu1-offline-online.trace", 66, 9, 75},
                        Want{"arm64-6.1-cpu1-offline-online.trace", 64, 9, 73}}) {
    std::ifstream f(std::string(CPUHP_SOURCE_DIR) + "/tests/fixtures/trace/" + w.file);
    ASSERT_TRUE(f) << w.file;
    int enter = 0, multi = 0, exit = 0, bad = 0;
    std::string line;
    while (std::getline(f, line)) {
      if (line.empty() || line[0] == '#')
        continue;
      TraceEvent ev;
      if (!ParseTraceLine(line, &ev)) {
        ++bad;
        continue;
      }
      EXPECT_EQ(ev.cpu, 1) << line;
      EXPECT_GE(ev.idx, 0) << line;
      EXPECT_GT(ev.ts_ns, 0u) << line;
      if (ev.kind == TraceKind::kExit)
        EXPECT_EQ(ev.ret, 0) << line;
      else
        EXPECT_FALSE(ev.fun.empty()) << line;
      enter += ev.kind == TraceKind::kEnter;
      multi += ev.kind == TraceKind::kMultiEnter;
      exit += ev.kind == TraceKind::kExit;
    }
    EXPECT_EQ(bad, 0) << w.file;
    EXPECT_EQ(enter, w.enter) << w.file;
    EXPECT_EQ(multi, w.multi) << w.file;
    EXPECT_EQ(exit, w.exit) << w.file;
  }
}

TEST(TraceParser, LostMarker) {
  TraceEvent ev;
  ASSERT_TRUE(ParseTraceLine("CPU:1 [LOST 123 EVENTS]", &ev));
  EXPECT_EQ(ev.kind, TraceKind::kLost);
  EXPECT_EQ(ev.event_cpu, 1);
  EXPECT_EQ(ev.lost, 123u);
}

TEST(TraceParser, RejectsTruncatedAndForeignLines) {
  const char* bad[] = {
      "",
      "# tracer: nop",
      "this is not a trace line",
      "     kworker/0:1-8772    [000] .....  3000.0",
      "     kworker/0:1-8772    [000] .....  3000.004410: cpuhp_enter: cpu: 0001 target:   0 step:",
      "     kworker/0:1-8772    [000] .....  3000.004410: cpuhp_enter: cpu: 0001 target:   0 step: "
      "144 (takedo",
      "         cpuhp/1-20      [001] .....  3000.004320: cpuhp_exit:  cpu: 0001  state: 147 step: "
      "148 ret:",
      "         cpuhp/1-20      [001] .....  3000.004320: cpuhp_exit:  cpu: 0001  state: 147 step: "
      "148 ret: 0x",
      "  <idle>-0 [001] d.h.. 2497.1: sched_switch: prev_comm=a",
      "nopid [000] ..... 1.000001: cpuhp_exit: cpu: 0001 state: 1 step: 1 ret: 0",
      "CPU:1 [LOST x EVENTS]",
      "CPU:1 [LOST 5 EVE",
  };
  for (const char* line : bad) {
    TraceEvent ev;
    EXPECT_FALSE(ParseTraceLine(line, &ev)) << line;
  }
}

TEST(TraceParser, ClassifiesWhereByTaskName) {
  EXPECT_EQ(ClassifyTask("cpuhp/1", 1), StepWhere::kCpuhpThread);
  EXPECT_EQ(ClassifyTask("cpuhp/1", 11), StepWhere::kControl);
  EXPECT_EQ(ClassifyTask("cpuhp/11", 1), StepWhere::kControl);
  EXPECT_EQ(ClassifyTask("migration/3", 3), StepWhere::kTargetCpu);
  EXPECT_EQ(ClassifyTask("swapper/3", 3), StepWhere::kTargetCpu);
  EXPECT_EQ(ClassifyTask("kworker/0:1", 1), StepWhere::kControl);
  EXPECT_EQ(ClassifyTask("sh", 1), StepWhere::kControl);
}

std::vector<TraceStep> FeedLines(StepMatcher* m, const std::vector<std::string>& lines) {
  std::vector<TraceStep> out;
  for (const std::string& l : lines) {
    TraceEvent ev;
    EXPECT_TRUE(ParseTraceLine(l, &ev)) << l;
    m->Feed(ev, &out);
  }
  return out;
}

TEST(StepMatcher, PairsPerTaskAcrossInterleavedCpus) {
  StepMatcher m;
  auto steps = FeedLines(
      &m, {
              "kworker/0:1-10 [000] ..... 1.000010: cpuhp_enter: cpu: 0001 target: 144 step: 236 "
              "(cpuhp_kick_ap_work)",
              "cpuhp/1-20 [001] ..... 1.000100: cpuhp_enter: cpu: 0001 target: 144 step: 235 "
              "(sched_cpu_deactivate)",
              "kworker/1:0-30 [001] ..... 1.000110: cpuhp_enter: cpu: 0002 target: 144 step: 235 "
              "(sched_cpu_deactivate)",
              "cpuhp/1-20 [001] ..... 1.004100: cpuhp_exit: cpu: 0001 state: 234 step: 235 ret: 0",
              "kworker/1:0-30 [001] ..... 1.005110: cpuhp_exit: cpu: 0002 state: 234 step: 235 "
              "ret: 0",
              "kworker/0:1-10 [000] ..... 1.006000: cpuhp_exit: cpu: 0001 state: 144 step: 236 "
              "ret: 0",
          });
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].fun, "sched_cpu_deactivate");
  EXPECT_EQ(steps[0].cpu, 1);
  EXPECT_EQ(steps[0].where, StepWhere::kCpuhpThread);
  EXPECT_EQ(steps[0].end_ns - steps[0].begin_ns, 4000000u);
  EXPECT_EQ(steps[1].cpu, 2);
  EXPECT_EQ(steps[1].end_ns - steps[1].begin_ns, 5000000u);
  EXPECT_EQ(steps[2].fun, "cpuhp_kick_ap_work");
  EXPECT_EQ(steps[2].where, StepWhere::kControl);
  EXPECT_EQ(steps[2].end_ns - steps[2].begin_ns, 5990000u);
  EXPECT_EQ(m.open(), 0u);
  EXPECT_EQ(m.unmatched_exits(), 0u);
}

TEST(StepMatcher, CountsUnmatchedNeverGuesses) {
  StepMatcher m;
  auto steps = FeedLines(
      &m, {
              "sh-5 [000] ..... 1.000010: cpuhp_exit: cpu: 0001 state: 1 step: 1 ret: 0",
              "sh-5 [000] ..... 1.000020: cpuhp_enter: cpu: 0001 target: 236 step: 30 (a)",
              "sh-5 [000] ..... 1.000030: cpuhp_enter: cpu: 0001 target: 236 step: 35 (b)",
              // The exit of 30 abandons the enter of 35 (its exit was lost).
              "sh-5 [000] ..... 1.000040: cpuhp_exit: cpu: 0001 state: 30 step: 30 ret: 0",
              "sh-5 [000] ..... 1.000050: cpuhp_enter: cpu: 0001 target: 236 step: 36 (c)",
          });
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].fun, "a");
  EXPECT_EQ(m.unmatched_exits(), 1u);
  EXPECT_EQ(m.unmatched_enters(), 1u);
  EXPECT_EQ(m.open(), 1u);
}

// Found by fuzz/trace_fuzz.cc: bytes that are no symbol in the function name
// reached the report as invalid UTF-8 and made writing it throw.
TEST(ParseTraceLine, FunctionNameMustBeASymbol) {
  TraceEvent ev;
  const std::string head = "cpuhp/3-30 [003] .... 500.001500: cpuhp_enter: cpu: 0003 target: 211 ";
  EXPECT_TRUE(ParseTraceLine(head + "step: 145 (smpboot_unpark_threads)", &ev));
  EXPECT_EQ(ev.fun, "smpboot_unpark_threads");
  EXPECT_TRUE(ParseTraceLine(head + "step: 145 (bringup_cpu.constprop.0)", &ev));
  EXPECT_FALSE(ParseTraceLine(head + "step: 145 (smpboot_unpark\xff\xffthreads)", &ev));
  EXPECT_FALSE(ParseTraceLine(head + "step: 145 (two words)", &ev));
  EXPECT_FALSE(ParseTraceLine(head + "step: 145 (tab\there)", &ev));
}

}  // namespace
}  // namespace cpuhp
