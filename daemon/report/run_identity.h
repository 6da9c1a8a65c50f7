// SPDX-License-Identifier: GPL-2.0
// Which run a report holds, so that merge and compare never pool one run
// twice: the same file given twice, a copy, or a pooled report given again
// with one of its own inputs (`merge res/*.json -o res/pooled.json` run a
// second time). Pooling a run with itself halves its confidence intervals
// on data that was measured once.
//
// A run is known by the boot it ran in (host.boot_id), its start
// (run.started_at, to the millisecond) and its seed. No new field is
// needed: a resumed soak keeps the first start and the seed (the
// checkpoint holds both), and two runs of one boot differ in their start
// (the machine lock serializes real runs) or, for sim runs started in the
// same millisecond, in their seed unless both were given the same one.
// A pooled report records the run of each boot it pools in "pooled.runs".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

namespace cpuhp {

struct RunId {
  std::string boot_id;  // host.boot_id, "" when the host had none
  std::string started_at;
  uint64_t seed = 0;

  bool operator<(const RunId& o) const {
    return std::tie(boot_id, started_at, seed) < std::tie(o.boot_id, o.started_at, o.seed);
  }
  bool operator==(const RunId& o) const = default;
};

// {"boot_id" (null when ""), "started_at", "seed"}: an entry of pooled.runs.
nlohmann::json RunIdToJson(const RunId& id);

// One entry per boot the report holds: its own run, or a pooled report's
// pooled.runs. nullopt where the run is not known (no run.started_at; a
// pooled report written before pooled.runs existed, or pooling such a one).
std::vector<std::optional<RunId>> RunsOf(const nlohmann::json& report);

// False with *err when a run appears twice among `reports` (read from
// `paths`, same order) or twice within one pooled report: one line naming
// both files and the run.
bool CheckDistinctRuns(const std::vector<std::string>& paths,
                       const std::vector<nlohmann::json>& reports, std::string* err);

}  // namespace cpuhp
