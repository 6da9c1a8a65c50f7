// SPDX-License-Identifier: GPL-2.0
#include "soak/checkpoint.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"
#include "util/json_file.h"

namespace cpuhp {

using nlohmann::json;

json RunIdentity(const Config& cfg) {
  json j = ConfigToJson(cfg);
  for (const char* key :
       {"report", "force", "oplog", "progress", "state_dir", "checkpoint_interval", "resume",
        "interim_interval", "stuck_timeout", "stuck_give_up"})
    j.erase(key);
  // A stall is a test hook for the watchdog; it changes no statistic's meaning.
  j["sim"].erase("stall_every");
  j["sim"].erase("stall_ns");
  return j;
}

OpRecord OpRecordFromJson(const json& j) {
  OpRecord r;
  r.index = j.at("i").get<uint64_t>();
  r.cpu = j.at("cpu").get<int>();
  const std::string dir = j.at("dir").get<std::string>();
  if (dir != "offline" && dir != "online")
    throw std::out_of_range("dir \"" + dir + "\"");
  r.dir = dir == "online" ? Direction::kOnline : Direction::kOffline;
  r.start_ns = j.at("start_ns").get<uint64_t>();
  r.duration_ns = j.at("duration_ns").get<uint64_t>();
  r.err = j.at("errno").get<int>();
  r.online_before = j.at("online_before").get<int>();
  r.readback_ok = j.at("readback_ok").get<bool>();
  r.setup = j.value("setup", false);
  r.group = j.value("smt_switch", uint64_t{0});
  r.smt_control = j.value("smt_control", false);
  r.cpus_changed = j.value("cpus_changed", 0);
  return r;
}

json CheckpointToJson(const Checkpoint& c) {
  json errors = json::array();
  for (const OpRecord& r : c.first_errors)
    errors.push_back(OpRecordToJson(r));
  return {{"format", kCheckpointFormat},
          {"version", kCheckpointVersion},
          {"identity", c.identity},
          {"seed", c.seed},
          {"started_at", c.started_at},
          {"written_at", c.written_at},
          {"boot_id", c.boot_id},
          {"pid", c.pid},
          {"stopped_by", c.stopped_by},
          {"finished", c.finished},
          {"next_index", c.next_index},
          {"elapsed_ns", c.elapsed_ns},
          {"stats", c.stats},
          {"schedule", c.schedule},
          {"sim", c.sim},
          {"first_errors", std::move(errors)},
          {"first_errors_dropped", c.first_errors_dropped},
          {"oplog_bytes", c.oplog_bytes},
          {"oplog_dev", c.oplog_dev},
          {"oplog_ino", c.oplog_ino},
          {"restarts", c.restarts},
          {"stuck", c.stuck},
          {"stuck_dropped", c.stuck_dropped}};
}

bool CheckpointFromJson(const json& j, Checkpoint* c, std::string* err) {
  if (!j.is_object() || j.value("format", "") != kCheckpointFormat) {
    *err = "not a cpuhp-stress checkpoint (no \"format\": \"cpuhp-stress-checkpoint\")";
    return false;
  }
  const json* v = j.contains("version") ? &j["version"] : nullptr;
  if (!v || !v->is_number_integer() || v->get<int>() != kCheckpointVersion) {
    *err = "checkpoint version " + (v ? v->dump() : std::string("missing")) +
           ", this build reads version " + std::to_string(kCheckpointVersion);
    return false;
  }
  const char* field = "";
  try {
    Checkpoint out;
    out.identity = j.at(field = "identity");
    out.seed = j.at(field = "seed").get<uint64_t>();
    out.started_at = j.at(field = "started_at").get<std::string>();
    out.written_at = j.at(field = "written_at").get<std::string>();
    out.boot_id = j.at(field = "boot_id").get<std::string>();
    out.pid = j.at(field = "pid").get<int>();
    out.stopped_by = j.at(field = "stopped_by").get<std::string>();
    // Optional: a checkpoint written before it existed is a running one.
    out.finished = j.value(field = "finished", json());
    if (!out.finished.is_null() &&
        (!out.finished.is_object() || !out.finished.value("stop_reason", json()).is_string() ||
         !out.finished.value("message", json()).is_string()))
      throw std::invalid_argument("expected null or {\"stop_reason\", \"message\"}");
    out.next_index = j.at(field = "next_index").get<uint64_t>();
    out.elapsed_ns = j.at(field = "elapsed_ns").get<uint64_t>();
    out.stats = j.at(field = "stats");
    out.schedule = j.at(field = "schedule");
    out.sim = j.at(field = "sim");
    for (const json& e : j.at(field = "first_errors"))
      out.first_errors.push_back(OpRecordFromJson(e));
    out.first_errors_dropped = j.at(field = "first_errors_dropped").get<uint64_t>();
    out.oplog_bytes = j.at(field = "oplog_bytes").get<uint64_t>();
    out.oplog_dev = j.at(field = "oplog_dev").get<uint64_t>();
    out.oplog_ino = j.at(field = "oplog_ino").get<uint64_t>();
    out.restarts = j.at(field = "restarts");
    out.stuck = j.at(field = "stuck");
    out.stuck_dropped = j.at(field = "stuck_dropped").get<uint64_t>();
    if (!out.identity.is_object() || !out.restarts.is_array() || !out.stuck.is_array())
      throw std::invalid_argument("wrong type");
    *c = std::move(out);
    return true;
  } catch (const std::exception& e) {
    *err = std::string("checkpoint field \"") + field + "\": " + e.what();
    return false;
  }
}

bool ReadCheckpoint(const std::string& path, Checkpoint* c, std::string* err) {
  std::string text;
  if (!ReadSmallFile(path, kMaxCheckpointBytes, &text, err, nullptr, FileKind::kRegularOnly))
    return false;
  json j;
  if (!ParseJsonText(text, path + ": corrupt checkpoint", &j, err))
    return false;
  std::string why;
  if (!CheckpointFromJson(j, c, &why)) {
    *err = path + ": " + why;
    return false;
  }
  return true;
}

bool WriteCheckpoint(const std::string& path, const Checkpoint& c, std::string* err) {
  return WriteFileAtomic(path, DumpJson(CheckpointToJson(c)) + "\n", err);
}

std::string MoveAside(const std::string& path, const std::string& utc_stamp, std::string* err) {
  std::string to = path + ".rejected-" + utc_stamp;
  if (rename(path.c_str(), to.c_str()) != 0) {
    *err = path + ": cannot move aside to " + to + ": " + strerror(errno);
    return "";
  }
  return to;
}

}  // namespace cpuhp
