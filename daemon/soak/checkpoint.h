// SPDX-License-Identifier: GPL-2.0
// Checkpoints: the whole state of a run (statistics, schedule position, the
// simulated machine, first errors, restarts), written atomically to
// <state_dir>/checkpoint.json so a restarted run resumes toward the same
// target. A checkpoint is only ever resumed by a run with the same identity
// (RunIdentity); anything else is refused and moved aside, never merged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "stats/op_record.h"

namespace cpuhp {

// 2: the operation log's position is per file (oplog_dev, oplog_ino).
inline constexpr int kCheckpointVersion = 2;
inline constexpr const char* kCheckpointFormat = "cpuhp-stress-checkpoint";

struct Checkpoint {
  nlohmann::json identity;  // RunIdentity of the config that started the run
  uint64_t seed = 0;        // as resolved at the first start
  std::string started_at;   // RFC 3339, the first start
  std::string written_at;   // RFC 3339
  std::string boot_id;
  int pid = 0;
  // Written at a clean stop (SIGTERM, SIGINT): why the run stopped. Empty for
  // a periodic checkpoint, so a resume without it means the process died.
  std::string stopped_by;
  // Written when the run ended by itself (its target, an error, a lost CPU):
  // {"stop_reason", "message"}; null while it runs. The checkpoint stays
  // until the report is written and the CPUs are back, so a restart in
  // between writes the report from it and redoes no operation.
  nlohmann::json finished;
  uint64_t next_index = 0;  // operations done
  uint64_t elapsed_ns = 0;  // run time used toward `duration`
  nlohmann::json stats;     // RunStats::StateToJson
  nlohmann::json schedule;  // Schedule::SaveState
  nlohmann::json sim;       // SimCpuControl::SaveState, null for sysfs
  std::vector<OpRecord> first_errors;
  uint64_t first_errors_dropped = 0;
  // The operation log at next_index: the length of the file it was writing
  // and that file's identity (0, 0, 0: no log).
  uint64_t oplog_bytes = 0;
  uint64_t oplog_dev = 0;
  uint64_t oplog_ino = 0;
  nlohmann::json restarts = nlohmann::json::array();  // see soak.h
  nlohmann::json stuck = nlohmann::json::array();
  uint64_t stuck_dropped = 0;  // stuck writes past the record limit
};

// The config keys that define what a run does (pattern, CPUs, limits, seed
// when given, backend, sweep, sim); output paths, progress and soak timings
// may change between restarts.
nlohmann::json RunIdentity(const Config& cfg);

nlohmann::json CheckpointToJson(const Checkpoint& c);
// Refuses a wrong format, version or a missing/mistyped field, naming it.
bool CheckpointFromJson(const nlohmann::json& j, Checkpoint* c, std::string* err);

// Reads and parses `path` (at most kMaxCheckpointBytes, read as json_file.h
// does). false with *err naming the path and the cause ("<path>: corrupt
// checkpoint: invalid JSON at line 3, column 1: ...").
inline constexpr size_t kMaxCheckpointBytes = size_t{256} << 20;
bool ReadCheckpoint(const std::string& path, Checkpoint* c, std::string* err);
bool WriteCheckpoint(const std::string& path, const Checkpoint& c, std::string* err);
// Renames `path` to `path.rejected-<utc>` and returns the new name ("" and
// *err on failure).
std::string MoveAside(const std::string& path, const std::string& utc_stamp, std::string* err);

OpRecord OpRecordFromJson(const nlohmann::json& j);  // throws on a bad field

}  // namespace cpuhp
