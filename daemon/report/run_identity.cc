// SPDX-License-Identifier: GPL-2.0
#include "report/run_identity.h"

#include <algorithm>
#include <map>
#include <utility>

#include "util/report_json.h"

namespace cpuhp {
namespace {

using nlohmann::json;
using report_json::Get;
using report_json::U64;

std::optional<RunId> FromParts(const json& boot_id, const json& started_at, const json& seed) {
  if (!started_at.is_string() || started_at.get<std::string>().empty())
    return std::nullopt;
  RunId id;
  id.boot_id = boot_id.is_string() ? boot_id.get<std::string>() : "";
  id.started_at = started_at.get<std::string>();
  id.seed = seed.is_number_unsigned() ? seed.get<uint64_t>() : 0;
  return id;
}

bool IsPooled(const json& report) {
  return Get(report, "pooled").is_object();
}

std::string Describe(const RunId& id) {
  return "the run started " + id.started_at + " on boot " +
         (id.boot_id.empty() ? "(no boot id)" : id.boot_id) + " with seed " +
         std::to_string(id.seed);
}

}  // namespace

json RunIdToJson(const RunId& id) {
  return {{"boot_id", id.boot_id.empty() ? json(nullptr) : json(id.boot_id)},
          {"started_at", id.started_at},
          {"seed", id.seed}};
}

std::vector<std::optional<RunId>> RunsOf(const json& report) {
  const json& pooled = Get(report, "pooled");
  if (!pooled.is_object())
    return {FromParts(Get(Get(report, "host"), "boot_id"), Get(Get(report, "run"), "started_at"),
                      Get(report, "seed"))};
  const uint64_t boots = std::max<uint64_t>(1, U64(pooled, "boots"));
  const json& runs = Get(pooled, "runs");
  std::vector<std::optional<RunId>> out(boots);
  if (runs.is_array() && runs.size() == boots)
    for (size_t b = 0; b < boots; ++b)
      out[b] = FromParts(Get(runs[b], "boot_id"), Get(runs[b], "started_at"), Get(runs[b], "seed"));
  return out;
}

bool CheckDistinctRuns(const std::vector<std::string>& paths, const std::vector<json>& reports,
                       std::string* err) {
  std::map<RunId, size_t> seen;  // the input that first holds each run
  for (size_t i = 0; i < reports.size() && i < paths.size(); ++i) {
    for (const std::optional<RunId>& id : RunsOf(reports[i])) {
      if (!id)
        continue;
      auto [it, added] = seen.emplace(*id, i);
      if (added)
        continue;
      const size_t first = it->second;
      auto name = [&](size_t k) {
        return paths[k] + (IsPooled(reports[k]) ? " (a pooled report)" : "");
      };
      *err = first == i ? "the same run twice: " + name(i) + " holds " + Describe(*id) + " twice"
                        : "the same run twice: " + name(first) + " and " + name(i) + " both hold " +
                              Describe(*id);
      *err += "; pool each run once";
      return false;
    }
  }
  return true;
}

}  // namespace cpuhp
