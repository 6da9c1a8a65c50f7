// SPDX-License-Identifier: GPL-2.0
// A recorded run for the drain path's test and microbench: the raw capture's
// offline+online of cpu1 (tests/fixtures/trace/x86_64-6.18-raw, 186 events)
// again and again, 200 ms apart, with the records of its writes and the
// names the drain would give its tasks and callbacks.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "machine/hotplug_states.h"
#include "sources/trace_convert.h"
#include "sources/trace_drainer.h"
#include "sources/trace_instance.h"
#include "sources/trace_join.h"
#include "stats/op_record.h"

namespace cpuhp {

struct RawRun {
  HotplugStates states;
  std::vector<RawCpuhpEvent> events;                    // in time order
  std::vector<OpRecord> ops;                            // offline, online, offline, ...
  std::unordered_map<int, std::string> comms;           // pid -> task
  std::unordered_map<uint64_t, std::string> fun_names;  // address -> callback
};

// `fixtures`: tests/fixtures/trace. Each write's window is its events' span
// with 20 us either side; offline and online are split at the longest gap.
inline bool LoadRawRun(const std::string& fixtures, int pairs, RawRun* run, std::string* why) {
  std::string states, text;
  if (!ReadText(fixtures + "/x86_64-6.18.states", &states) ||
      !ReadText(fixtures + "/x86_64-6.18-raw/trace.txt", &text)) {
    *why = fixtures + ": the raw capture's states or trace.txt cannot be read";
    return false;
  }
  if (!ParseHotplugStates(states, &run->states)) {
    *why = fixtures + "/x86_64-6.18.states does not parse";
    return false;
  }
  RawCpuhpReader r;
  if (!r.Open(fixtures + "/x86_64-6.18-raw", "cap", why))
    return false;
  r.Read();
  const std::vector<RawCpuhpEvent> one = r.events;
  if (one.size() < 2) {
    *why = "the raw capture holds no events";
    return false;
  }
  run->fun_names = CallbackNamesFromText(text, one);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    TraceEvent t;
    if (!line.empty() && line[0] != '#' && ParseTraceLine(line, &t) && t.pid > 0)
      run->comms[t.pid] = t.comm;
  }
  size_t gap = 1;
  for (size_t i = 1; i < one.size(); ++i)
    if (one[i].ts_ns - one[i - 1].ts_ns > one[gap].ts_ns - one[gap - 1].ts_ns)
      gap = i;
  const uint64_t margin = 20000, period = 200000000;
  for (int k = 0; k < pairs; ++k) {
    const uint64_t shift = static_cast<uint64_t>(k) * period;
    for (RawCpuhpEvent e : one) {
      e.ts_ns += shift;
      run->events.push_back(e);
    }
    const uint64_t spans[2][2] = {{one.front().ts_ns, one[gap - 1].ts_ns},
                                  {one[gap].ts_ns, one.back().ts_ns}};
    for (int d = 0; d < 2; ++d) {
      OpRecord op;
      op.index = run->ops.size();
      op.cpu = 1;
      op.dir = d == 0 ? Direction::kOffline : Direction::kOnline;
      op.start_ns = spans[d][0] + shift - margin;
      op.duration_ns = spans[d][1] - spans[d][0] + 2 * margin;
      op.online_before = d == 0 ? 2 : 1;
      run->ops.push_back(op);
    }
  }
  return true;
}

// The run drained as TracefsSource drains it, every `per_drain` writes: the
// events read (up to 100 us into the next write: the one in flight) fed up to
// the end of the last write taken, then the batch ended; the rest at the end.
inline void DrainRawRun(RawRun* run, size_t per_drain, RawEventFeed* feed, TraceJoiner* joiner) {
  // The task names as TracefsSource gives them, from the recorded ones.
  TaskNames names([run](int pid) {
    auto it = run->comms.find(pid);
    return it == run->comms.end() ? std::string() : it->second;
  });
  std::vector<RawCpuhpEvent> read;
  size_t next_event = 0;
  for (size_t first = 0; first < run->ops.size(); first += per_drain) {
    const size_t end = std::min(first + per_drain, run->ops.size());
    const std::vector<OpRecord> batch(run->ops.begin() + static_cast<ptrdiff_t>(first),
                                      run->ops.begin() + static_cast<ptrdiff_t>(end));
    const uint64_t cutoff = batch.back().start_ns + batch.back().duration_ns;
    const uint64_t read_to = end < run->ops.size() ? run->ops[end].start_ns + 100000 : UINT64_MAX;
    while (next_event < run->events.size() && run->events[next_event].ts_ns <= read_to)
      read.push_back(run->events[next_event++]);
    feed->Feed(&read, end < run->ops.size() ? cutoff : UINT64_MAX, &names, joiner);
    joiner->EndOperations(batch);
  }
}

}  // namespace cpuhp
