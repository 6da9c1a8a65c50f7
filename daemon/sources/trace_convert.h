// SPDX-License-Identifier: GPL-2.0
// Event conversion: a raw cpuhp event (trace_drainer.h reads them) made the
// TraceEvent the joiner takes (trace_join.h), with its task and callback
// names.
//
// Callback names: the raw events carry the callback's address. The first
// drain reads the instance's text `trace` file (not consuming, so the same
// events are still there for the raw read) and takes each address's name
// from the kernel's own %ps of the same event; an address first seen later
// is looked up in /proc/kallsyms (a full read costs 50-250 ms here, so it is
// the fallback, not the way).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sources/trace_parser.h"

namespace cpuhp {

// One cpuhp event of a raw ring-buffer page; the callback as its address.
struct RawCpuhpEvent {
  TraceKind kind = TraceKind::kEnter;
  int pid = -1;
  int event_cpu = -1;  // whose buffer held it
  uint64_t ts_ns = 0;  // trace clock, nanoseconds
  int cpu = -1, idx = -1, target = -1, ret = 0;
  uint64_t fun = 0;  // enters only
};

// The event as the joiner takes it, named: `comm` the task, `fun` the
// callback (ignored for exits, which carry none).
// (The drain feeds raw events without one: TraceJoiner::FeedRaw.)
TraceEvent ToTraceEvent(const RawCpuhpEvent& e, std::string comm, std::string fun);

// Callback address -> name, from the text (`trace` file) of the same events:
// each raw enter takes the name of the text enter with its event CPU, pid,
// hotplugged CPU, state and microsecond.
std::unordered_map<uint64_t, std::string> CallbackNamesFromText(
    std::string_view text, const std::vector<RawCpuhpEvent>& events);

// Names for the enters' callback addresses not in *names yet: one pass over
// /proc/kallsyms, stopping when all are found; an address it lacks gets its
// hex. Returns whether there was any to look up (kallsyms was read).
bool NamesFromKallsyms(const std::vector<RawCpuhpEvent>& events,
                       std::unordered_map<uint64_t, std::string>* names);

}  // namespace cpuhp
