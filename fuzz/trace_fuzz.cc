// SPDX-License-Identifier: GPL-2.0
// libFuzzer target: any bytes as the text of a tracefs trace_pipe with the
// cpuhp events, through everything the tracepoints source does with it:
// ParseTraceLine on each line, TraceJoiner (lines cut across reads, the
// enter/exit matcher, the join to operations, KernelStateStats) and the
// report section and summary. States are named from the recorded 6.18 table
// (tests/fixtures/trace/x86_64-6.18.states).
//
// Input lines "#op CPU DIR START_NS DURATION_NS ONLINE_BEFORE" (DIR: offline
// or online) end an operation there, as the source does after each write
// returns; the joiner itself skips them as '#' header lines. Each line is fed
// in two pieces so a line cut between two reads is exercised too.
//
// Checked: nothing crashes, hangs or throws; a parsed event has a task name,
// a pid, a non-negative hotplugged CPU and, for an enter, a function name;
// per operation the state sum plus the unaccounted time is the write's
// latency, and no state sum is longer than its write.
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "machine/hotplug_states.h"
#include "sources/trace_join.h"
#include "sources/trace_parser.h"
#include "sources/tracefs_source.h"
#include "stats/op_record.h"

namespace {

using nlohmann::json;

cpuhp::HotplugStates* g_states;

template <typename T>
bool Num(std::string_view* s, T* v) {
  size_t b = s->find_first_not_of(' ');
  if (b == std::string_view::npos)
    return false;
  s->remove_prefix(b);
  auto [p, ec] = std::from_chars(s->data(), s->data() + s->size(), *v);
  if (ec != std::errc())
    return false;
  s->remove_prefix(static_cast<size_t>(p - s->data()));
  return true;
}

// "#op 1 offline 2497383000000 50000000 2"
bool ParseOp(std::string_view line, cpuhp::OpRecord* op) {
  if (line.substr(0, 4) != "#op ")
    return false;
  line.remove_prefix(4);
  if (!Num(&line, &op->cpu))
    return false;
  line.remove_prefix(std::min(line.find_first_not_of(' '), line.size()));
  if (line.substr(0, 8) == "offline ")
    op->dir = cpuhp::Direction::kOffline;
  else if (line.substr(0, 7) == "online ")
    op->dir = cpuhp::Direction::kOnline;
  else
    return false;
  line.remove_prefix(line.find(' '));
  if (!Num(&line, &op->start_ns) || !Num(&line, &op->duration_ns) ||
      !Num(&line, &op->online_before))
    return false;
  // Monotonic clock readings: the write's end never wraps.
  return op->start_ns + op->duration_ns >= op->start_ns;
}

void CheckEvent(std::string_view line) {
  cpuhp::TraceEvent ev;
  if (!cpuhp::ParseTraceLine(line, &ev) || ev.kind == cpuhp::TraceKind::kLost)
    return;
  if (ev.comm.empty() || ev.pid < 0 || ev.cpu < 0)
    abort();
  if (ev.kind != cpuhp::TraceKind::kExit && ev.fun.empty())
    abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const std::string path = CPUHP_SOURCE_DIR "/tests/fixtures/trace/x86_64-6.18.states";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  g_states = new cpuhp::HotplugStates;
  if (!cpuhp::ParseHotplugStates(text.str(), g_states)) {
    std::fprintf(stderr, "%s: no states\n", path.c_str());
    abort();
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  cpuhp::TraceJoiner joiner(*g_states);
  uint64_t index = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    const size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    const std::string_view piece = text.substr(pos, end - pos);
    const std::string_view line =
        piece.substr(0, nl == std::string_view::npos ? piece.size() : piece.size() - 1);
    CheckEvent(line);
    joiner.FeedText(piece.substr(0, piece.size() / 2));
    joiner.FeedText(piece.substr(piece.size() / 2));
    cpuhp::OpRecord op;
    if (nl != std::string_view::npos && ParseOp(line, &op)) {
      op.index = index++;
      joiner.EndOperation(op);
    }
    pos = end;
  }
  joiner.Finish();

  json section = joiner.stats().ToJson();
  for (const json& op : section["first_operations"]) {
    const uint64_t write = op["write_ns"].get<uint64_t>();
    const uint64_t sum = op["state_sum_ns"].get<uint64_t>();
    if (sum > write || sum + op["unaccounted_ns"].get<uint64_t>() != write)
      abort();
  }
  for (const char* dir : {"offline", "online"})
    if (section["per_operation"][dir]["max_state_sum_fraction"].get<double>() > 1.0)
      abort();
  section["status"] = "ok";
  section["events"] = joiner.EventsJson();
  section["lost_events"] = {{"total", joiner.lost_markers()}};
  (void)section.dump(2);
  (void)cpuhp::TracepointsSummary(section);
  return 0;
}
