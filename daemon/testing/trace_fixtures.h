// SPDX-License-Identifier: GPL-2.0
// For the tracepoints source's tests: the recorded trace fixtures
// (tests/fixtures/trace/README.md says which is which), the state tables
// captured with them, and operation records in the fixtures' seconds.
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "machine/hotplug_states.h"
#include "sources/trace_parser.h"
#include "stats/op_record.h"

namespace cpuhp {

inline std::string Fixture(const std::string& name) {
  std::ifstream f(std::string(CPUHP_SOURCE_DIR) + "/tests/fixtures/trace/" + name);
  EXPECT_TRUE(f) << name;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline HotplugStates States(const std::string& name) {
  HotplugStates s;
  EXPECT_TRUE(ParseHotplugStates(Fixture(name), &s));
  return s;
}

inline OpRecord Op(uint64_t index, int cpu, Direction dir, double start_s, double dur_ms,
                   int online) {
  OpRecord r;
  r.index = index;
  r.cpu = cpu;
  r.dir = dir;
  r.start_ns = static_cast<uint64_t>(start_s * 1e6 + 0.5) * 1000;
  r.duration_ns = static_cast<uint64_t>(dur_ms * 1e6 + 0.5);
  r.online_before = online;
  return r;
}

// Captured on this 6.18 host: offline+online of cpu1 with the three events
// in an instance, then its `trace` text (which does not consume) and each
// CPU's trace_pipe_raw (tests/fixtures/trace/README.md).
inline const std::string kRawRoot =
    std::string(CPUHP_SOURCE_DIR) + "/tests/fixtures/trace/x86_64-6.18-raw";

inline std::vector<TraceEvent> TextEvents(const std::string& text) {
  std::vector<TraceEvent> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    TraceEvent ev;
    if (!line.empty() && line[0] != '#' && ParseTraceLine(line, &ev))
      out.push_back(ev);
  }
  return out;
}

}  // namespace cpuhp
