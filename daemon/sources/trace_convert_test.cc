// SPDX-License-Identifier: GPL-2.0
// Raw events converted and named give the joiner what the text path gives.
#include "sources/trace_convert.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sources/trace_drainer.h"
#include "sources/trace_join.h"
#include "testing/trace_fixtures.h"

namespace cpuhp {
namespace {

using nlohmann::json;

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

}  // namespace
}  // namespace cpuhp
