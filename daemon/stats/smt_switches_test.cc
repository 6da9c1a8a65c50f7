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

// An smt/control write is a whole switch: the CPUs it moved come from the
// record; a failed one counts what it moved before the kernel stopped.
TEST(SmtSwitchStatsTest, CountsTheCpusAControlWriteMoved) {
  SmtSwitchStats st({"1", "4"}, "control");
  OpRecord a = Rec(1, 1000, 700);
  a.smt_control = true;
  a.cpus_changed = 24;
  st.Add(a);
  OpRecord b = Rec(2, 2000, 900, 16);
  b.smt_control = true;
  b.cpus_changed = 5;
  st.Add(b);
  st.Finish(true);
  const nlohmann::json j = st.ToJson();
  EXPECT_EQ(j["method"], "control");
  EXPECT_EQ(j["to"][0]["cpus_changed"], 24);
  EXPECT_EQ(j["to"][0]["max_ns"], 700);
  EXPECT_EQ(j["to"][1]["cpus_changed"], 5);
  EXPECT_EQ(j["to"][1]["failed_writes"], 1);
}

// A checkpoint keeps the table; the switch in progress at it is counted
// incomplete after the resume and its remaining writes are not timed (the
// resume comes after a gap), then the next switch is timed as before.
TEST(SmtSwitchStatsTest, StateSurvivesACheckpoint) {
  SmtSwitchStats st({"off", "on"}, "threads");
  st.Add(Rec(1, 1000, 100));
  st.Add(Rec(1, 1200, 100));
  st.Add(Rec(2, 2000, 50));  // switch 2 in progress at the checkpoint
  const nlohmann::json saved = st.StateToJson();
  SmtSwitchStats resumed({"off", "on"}, "threads");
  std::string err;
  ASSERT_TRUE(resumed.StateFromJson(saved, &err)) << err;
  resumed.Add(Rec(2, 9000, 50));  // switch 2's rest, after the gap: not timed
  resumed.Add(Rec(3, 9100, 70));
  resumed.Finish(true);
  const nlohmann::json j = resumed.ToJson();
  EXPECT_EQ(j["incomplete"], 1);
  EXPECT_EQ(j["to"][1]["switches"], 0);  // switch 2 went to "on"
  EXPECT_EQ(j["to"][0]["switches"], 2);  // switches 1 and 3
  EXPECT_EQ(j["to"][0]["max_ns"], 300);
  EXPECT_EQ(j["to"][0]["min_ns"], 70);
  // A second checkpoint inside the cut switch keeps it cut.
  SmtSwitchStats again({"off", "on"}, "threads");
  SmtSwitchStats mid({"off", "on"}, "threads");
  ASSERT_TRUE(mid.StateFromJson(saved, &err)) << err;
  ASSERT_TRUE(again.StateFromJson(mid.StateToJson(), &err)) << err;
  again.Add(Rec(2, 9500, 50));
  again.Finish(true);
  EXPECT_EQ(again.ToJson()["incomplete"], 1);
  EXPECT_EQ(again.ToJson()["to"][1]["switches"], 0);

  SmtSwitchStats other({"1", "8"}, "threads");
  EXPECT_FALSE(other.StateFromJson(saved, &err));
  EXPECT_NE(err.find("not this run's"), std::string::npos) << err;
  nlohmann::json broken = saved;
  broken["to"][0]["switches"] = "x";
  const nlohmann::json before = resumed.ToJson();
  EXPECT_FALSE(resumed.StateFromJson(broken, &err));
  EXPECT_EQ(resumed.ToJson(), before);  // unchanged
}

}  // namespace
}  // namespace cpuhp
