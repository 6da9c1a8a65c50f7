// SPDX-License-Identifier: GPL-2.0
#include "stats/smt_switches.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace cpuhp {
namespace {

OpRecord Rec(uint64_t group, uint64_t start_ns, uint64_t duration_ns, int err = 0) {
  OpRecord r;
  r.group = group;
  r.start_ns = start_ns;
  r.duration_ns = duration_ns;
  r.err = err;
  return r;
}

// A switch is timed from its first write's start to its last one's end, by
// the mode it goes to; the one a stop cuts short is counted, not timed.
TEST(SmtSwitchStatsTest, TimesEachSwitchWhole) {
  SmtSwitchStats st({"off", "on"}, "threads");
  st.Add(Rec(0, 0, 5));  // not an smt write
  st.Add(Rec(1, 1000, 100));
  st.Add(Rec(1, 1200, 100));  // switch 1 (to off): 1000..1300
  st.Add(Rec(2, 2000, 50));
  st.Add(Rec(2, 2100, 50, 16));  // switch 2 (to on): 2000..2150, one failed write
  st.Add(Rec(3, 3000, 400));
  st.Add(Rec(3, 3500, 100));  // switch 3 (to off): 3000..3600
  st.Add(Rec(4, 4000, 10));   // cut short by the stop
  st.Finish(false);
  const nlohmann::json j = st.ToJson();
  EXPECT_EQ(j["method"], "threads");
  EXPECT_EQ(j["incomplete"], 1);
  const nlohmann::json& off = j["to"][0];
  EXPECT_EQ(off["mode"], "off");
  EXPECT_EQ(off["switches"], 2);
  EXPECT_EQ(off["min_ns"], 300);
  EXPECT_EQ(off["max_ns"], 600);
  EXPECT_EQ(off["cpus_changed"], 4);
  EXPECT_EQ(off["cpus_per_switch_min"], 2);
  EXPECT_EQ(off["failed_writes"], 0);
  const nlohmann::json& on = j["to"][1];
  EXPECT_EQ(on["switches"], 1);
  EXPECT_EQ(on["max_ns"], 150);
  EXPECT_EQ(on["cpus_changed"], 1);
  EXPECT_EQ(on["failed_writes"], 1);
  EXPECT_EQ(st.switches(0), 2u);

  // A pattern that ended by itself finished its last switch: it is timed.
  SmtSwitchStats done({"1", "4"}, "threads");
  done.Add(Rec(1, 10, 20));
  done.Finish(true);
  EXPECT_EQ(done.ToJson()["to"][0]["switches"], 1);
  EXPECT_EQ(done.ToJson()["incomplete"], 0);
}

}  // namespace
}  // namespace cpuhp
