// SPDX-License-Identifier: GPL-2.0
// The JSON report (schema in daemon/report/schema/report.schema.json), written
// atomically, and the human summary printed at the end of a run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "machine/cpu_control.h"
#include "machine/topology.h"
#include "sources/timing_source.h"
#include "stats/run_stats.h"
#include "util/errno_name.h"
#include "util/file_util.h"

namespace cpuhp {

inline constexpr int kReportSchemaVersion = 1;

// Host facts: kernel release, arch, kernel command line, CPU model, CPU counts.
// Reads /proc and uname; `topo` gives the CPU counts.
nlohmann::json CollectHostInfo(const Topology& topo);

struct ReportInputs {
  nlohmann::json config;  // effective config (ConfigToJson)
  nlohmann::json host;    // CollectHostInfo
  nlohmann::json cpus;    // {"selected": "1-7", "topology": TopologyToJson}
  uint64_t seed = 0;
  std::string started_at;  // RFC 3339 UTC, e.g. 2026-11-30T05:07:45.123Z
  std::string ended_at;
  uint64_t elapsed_ns = 0;
  uint64_t simulated_elapsed_ns = 0;  // sim backend: its clock's time over the run
  std::string stop_reason;            // iterations|duration|schedule_complete|error|signal|fatal
  std::string stop_message;           // why, for error|fatal|signal; empty otherwise
  const RunStats* stats = nullptr;
  // First operations that failed (err != 0 or readback mismatch), bounded.
  std::vector<OpRecord> first_errors;
  uint64_t first_errors_dropped = 0;
  // name -> {"status": "ok"|"unavailable", "reason"?, ...source section}
  nlohmann::json timing_sources = nlohmann::json::object();
  nlohmann::json smt;  // the smt pattern's switch table (SmtSwitchStats::ToJson); null otherwise
  nlohmann::json restore;  // RestoreResult::ToJson; null for an interim report
  bool interim = false;
  uint64_t max_rss_kib = 0;
  uint64_t loop_cpu_ns = 0, loop_ops = 0;  // Runner::loop_cpu_ns, loop_ops
};

nlohmann::json BuildReport(const ReportInputs& in);

// The table shaped like seed 001's, per direction:
//   online CPUs | ops | p50 | p99 | max   (ms with 3 decimals)
// preceded by a totals line and followed by errors, if any.
std::string HumanSummary(const nlohmann::json& report);

}  // namespace cpuhp

namespace cpuhp {
// One operation as a JSON object, used by first_errors and the JSON Lines
// operation log: {"i", "cpu", "dir", "start_ns", "duration_ns", "errno",
// "error" (errno name, only when errno != 0), "online_before", "readback_ok"}.
nlohmann::json OpRecordToJson(const OpRecord& rec);
}  // namespace cpuhp
