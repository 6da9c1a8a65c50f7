// SPDX-License-Identifier: GPL-2.0
// The symbols the bpf source probes, picked from kallsyms text and from a
// file read in pieces.
#include "sources/bpf_symbols.h"

#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace cpuhp {
namespace {

TEST(BpfSymbolsTest, PicksTextSymbolsAndTheirRenamedCopies) {
  const std::string kallsyms =
      "ffffffff81000000 T _stext\n"
      "ffffffff810a1230 t takedown_cpu\n"
      "ffffffff810a2000 t _cpu_up.constprop.0\n"
      "ffffffff810a3000 t _cpu_down.isra.0.constprop.0\n"
      "ffffffff810a3100 t _cpu_down.cold\n"              // a split-off block, not a copy
      "ffffffff810a3200 t _cpu_down.part.0\n"            // a part, not a copy
      "ffffffff810a3300 t _cpu_down.constprop.x\n"       // not a number
      "ffffffff810a3400 t _cpu_down.constprop.1.cold\n"  // a copy's split-off block
      "ffffffff810a4000 T __cpu_up\n"
      "ffffffff810a5000 t bringup_cpu.llvm.1234567\n"
      "ffffffff810a6000 d takedown_cpu_data\n"            // not text
      "ffffffff810a7000 D take_cpu_down\n"                // data, not the function
      "ffffffff810a8000 t take_cpu_down_helper\n"         // another function
      "ffffffff810a9000 t __cpu_up_done\n"                // another function
      "ffffffffc0001000 t takedown_cpu\t[cpuhp_probe]\n"  // a module's
      "ffffffff810a1230 t takedown_cpu\n"                 // listed twice: once
      "ffffffff810b0000 T get_nohz_timer_target";         // no newline at the end
  const auto s = BpfPickSymbols(kallsyms);
  EXPECT_EQ(s[CPUHP_PROBE_TAKEDOWN_CPU], std::vector<std::string>{"takedown_cpu"});
  EXPECT_EQ(s[CPUHP_PROBE_CPU_UP_GENERIC], std::vector<std::string>{"_cpu_up.constprop.0"});
  EXPECT_EQ(s[CPUHP_PROBE_CPU_DOWN_GENERIC],
            std::vector<std::string>{"_cpu_down.isra.0.constprop.0"});
  EXPECT_EQ(s[CPUHP_PROBE_ARCH_CPU_UP], std::vector<std::string>{"__cpu_up"});
  EXPECT_EQ(s[CPUHP_PROBE_BRINGUP_CPU], std::vector<std::string>{"bringup_cpu.llvm.1234567"});
  EXPECT_TRUE(s[CPUHP_PROBE_TAKE_CPU_DOWN].empty());
  EXPECT_TRUE(s[CPUHP_PROBE_NATIVE_CPU_UP].empty());
  EXPECT_EQ(s[CPUHP_PROBE_NOHZ_TIMER_TARGET], std::vector<std::string>{"get_nohz_timer_target"});
}

TEST(BpfSymbolsTest, AtMostSoManyCopiesPerProbe) {
  std::string kallsyms;
  for (int i = 0; i < 20; ++i)
    kallsyms += "ffffffff81000000 t takedown_cpu.constprop." + std::to_string(i) + "\n";
  EXPECT_EQ(BpfPickSymbols(kallsyms)[CPUHP_PROBE_TAKEDOWN_CPU].size(), kBpfMaxSymbolsPerProbe);
  EXPECT_TRUE(BpfPickSymbols("")[CPUHP_PROBE_TAKEDOWN_CPU].empty());
  EXPECT_TRUE(BpfPickSymbols("garbage\n\n  \nffff t\n")[CPUHP_PROBE_TAKEDOWN_CPU].empty());
}

// kallsyms read in pieces picks what the whole text picks, whatever the
// piece size: with pieces smaller than a line every line is split, and each
// probe's symbol appears once, so a line lost at a boundary is a miss. A line
// longer than a piece and a missing file are errors naming the file.
TEST(BpfSymbolsTest, PiecesOfTheFilePickWhatTheWholeTextPicks) {
  std::string text;
  for (uint32_t id = 0; id < CPUHP_PROBE_NR; ++id) {
    for (int i = 0; i < 50; ++i)
      text += "ffffffff81" + std::to_string(100000 + i) + " t filler_" + std::to_string(i) + "\n";
    text += "ffffffff81000000 t " + std::string(KmodProbeName(id)) + ".constprop.0\n";
  }
  text += "ffffffff810b0000 t filler_without_a_newline_at_the_end";
  const BpfSymbols want = BpfPickSymbols(text);
  for (uint32_t id = 0; id < CPUHP_PROBE_NR; ++id)
    ASSERT_EQ(want[id].size(), 1u) << KmodProbeName(id);
  const std::string path = testing::TempDir() + "/kallsyms-pieces";
  {
    std::ofstream f(path, std::ios::binary);
    f << text;
  }
  BpfSymbols got;
  std::string err;
  for (size_t piece : {size_t{64}, size_t{97}, size_t{4096}, size_t{64} << 10}) {
    ASSERT_TRUE(BpfPickSymbolsFromFile(path, &got, &err, piece)) << piece << ": " << err;
    EXPECT_EQ(got, want) << piece;
  }
  EXPECT_FALSE(BpfPickSymbolsFromFile(path, &got, &err, 40));
  EXPECT_EQ(err, path + ": a line longer than 40 bytes (not kallsyms text)");
  std::remove(path.c_str());
  EXPECT_FALSE(BpfPickSymbolsFromFile(path, &got, &err));
  EXPECT_EQ(err, path + ": cannot read: No such file or directory");
}

}  // namespace
}  // namespace cpuhp
