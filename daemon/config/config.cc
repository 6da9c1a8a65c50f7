// SPDX-License-Identifier: GPL-2.0
#include "config/config.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include <nlohmann/json.hpp>

#include "config/config_keys.h"
#include "config/config_value.h"
#include "util/json_file.h"

namespace cpuhp {
namespace {

using nlohmann::json;

constexpr size_t kMaxFileBytes = 1 << 20;  // a config is a few hundred bytes

}  // namespace

const char* PatternName(Pattern p) {
  size_t i = static_cast<size_t>(p);
  return i < std::size(kPatternNames) ? kPatternNames[i] : "unknown";
}

bool ParsePattern(const std::string& s, Pattern* p) {
  for (size_t i = 0; i < std::size(kPatternNames); ++i) {
    if (s == kPatternNames[i]) {
      *p = static_cast<Pattern>(i);
      return true;
    }
  }
  return false;
}

uint64_t IterationLimit(const Config& cfg) {
  if (cfg.iterations)
    return *cfg.iterations;
  const bool ends_by_itself = cfg.pattern == Pattern::kSweep ||
                              cfg.pattern == Pattern::kFaultSweep ||
                              (cfg.pattern == Pattern::kSmt && cfg.smt.switches > 0);
  return cfg.duration_ns || ends_by_itself ? 0 : kDefaultIterations;
}

namespace {

// Every key the document sets, by path (objects walked; a list is one key).
void RecordOrigins(const json& j, const std::string& path, const std::string& source,
                   std::map<std::string, std::string>* origins) {
  if (!j.is_object()) {
    (*origins)[path] = source;
    return;
  }
  for (const auto& [key, child] : j.items())
    RecordOrigins(child, path + "/" + key, source, origins);
}

}  // namespace

bool ApplyConfigJson(const json& doc, const std::string& source, Config* cfg, std::string* err) {
  std::string scratch;
  Config next = *cfg;  // applied to a copy: on error *cfg is unchanged
  if (!ApplyObject(Value{source, err ? err : &scratch, doc, ""}, TopLevelKeys(), &next))
    return false;
  RecordOrigins(doc, "", source, &next.origins);
  *cfg = std::move(next);
  return true;
}

std::string NameOrigin(const Config& cfg, const std::string& err) {
  if (err.empty() || err[0] != '/')
    return err;
  const size_t colon = err.find(": ");
  if (colon == std::string::npos)
    return err;
  const auto it = cfg.origins.find(err.substr(0, colon));
  if (it == cfg.origins.end())
    return err;
  if (it->second.rfind("--", 0) == 0)  // an option: its name stands for the key
    return it->second + err.substr(colon);
  return it->second + ": " + err;
}

bool LoadConfigFile(const std::string& path, Config* cfg, std::string* err) {
  std::string scratch;
  if (!err)
    err = &scratch;
  json doc;
  return LoadJsonFile(path, kMaxFileBytes, &doc, err) && ApplyConfigJson(doc, path, cfg, err);
}

json ConfigToJson(const Config& cfg) {
  const size_t progress = static_cast<size_t>(cfg.progress);
  json sweep = {
      {"levels", cfg.sweep.levels.empty() ? json("auto") : json(cfg.sweep.levels)},
      {"cycles_per_level", cfg.sweep.cycles_per_level},
      {"victim", cfg.sweep.victim},
  };
  json sim = {
      {"cpus", cfg.sim.cpus},
      {"offline_base_ns", cfg.sim.offline_base_ns},
      {"offline_per_cpu_ns", cfg.sim.offline_per_cpu_ns},
      {"online_base_ns", cfg.sim.online_base_ns},
      {"online_per_cpu_ns", cfg.sim.online_per_cpu_ns},
      {"jitter", cfg.sim.jitter},
      {"error_rate", cfg.sim.error_rate},
      {"stall_every", cfg.sim.stall_every},
      {"stall_ns", cfg.sim.stall_ns},
      {"broken_rollback_state", cfg.sim.broken_rollback_state},
      {"threads_per_core", cfg.sim.threads_per_core},
  };
  json per_kind = json::object();
  for (const auto& [kind, stop] : cfg.health.stop_kind)
    per_kind[kind] = kOnWarningNames[stop ? 1 : 0];
  json health = {
      {"enabled", cfg.health.enabled},
      {"on_kernel_warning", kOnWarningNames[cfg.health.stop_on_kernel_warning ? 1 : 0]},
      {"per_kind", std::move(per_kind)},
  };
  return {
      {"pattern", PatternName(cfg.pattern)},
      {"cpus", cfg.cpus},
      {"min_online", cfg.min_online},
      {"iterations", cfg.iterations ? json(*cfg.iterations) : json("auto")},
      {"duration", FormatDuration(cfg.duration_ns)},
      {"seed", cfg.seed ? json(*cfg.seed) : json(nullptr)},
      {"stop_on_error", cfg.stop_on_error},
      {"lost_cpu_after", cfg.lost_cpu_after},
      {"interval", FormatDuration(cfg.interval_ns)},
      {"backend", cfg.backend},
      {"sysfs_root", cfg.sysfs_root},
      {"state_dir", cfg.state_dir},
      {"report", cfg.report},
      {"force", cfg.force},
      {"oplog", cfg.oplog},
      {"progress", progress < std::size(kProgressNames) ? kProgressNames[progress] : "unknown"},
      {"sweep", std::move(sweep)},
      {"smt",
       {{"modes", cfg.smt.modes}, {"method", cfg.smt.method}, {"switches", cfg.smt.switches}}},
      {"sim", std::move(sim)},
      {"tracepoints", cfg.tracepoints},
      {"kmod", {{"enabled", cfg.kmod.enabled}, {"device", cfg.kmod.device}}},
      {"kernel_phases",
       {{"source", cfg.kernel_phases_source}, {"bpf_attach", cfg.kernel_phases_bpf_attach}}},
      {"checkpoint_interval", FormatDuration(cfg.checkpoint_interval_ns)},
      {"resume", cfg.resume},
      {"interim_interval", FormatDuration(cfg.interim_interval_ns)},
      {"stuck_timeout", FormatDuration(cfg.stuck_timeout_ns)},
      {"stuck_give_up", FormatDuration(cfg.stuck_give_up_ns)},
      {"disturbance",
       {{"enabled", cfg.disturbance.enabled},
        {"cpus", cfg.disturbance.cpus},
        {"period", FormatDuration(cfg.disturbance.period_ns)},
        {"fifo_priority", cfg.disturbance.fifo_priority},
        {"baseline", FormatDuration(cfg.disturbance.baseline_ns)}}},
      {"health", std::move(health)},
      {"faults",
       {{"rate", cfg.faults.rate},
        {"direction", cfg.faults.direction},
        {"states", cfg.faults.states.empty() ? json("all") : json(cfg.faults.states)},
        {"repeats", cfg.faults.repeats},
        {"allow_unsafe", cfg.faults.allow_unsafe}}},
  };
}

std::string PatternList(const std::string& sep) {
  std::string out;
  for (const char* name : kPatternNames)
    out += (out.empty() ? "" : sep) + name;
  return out;
}

json CliValue(const std::string& text) {
  const bool negative = !text.empty() && text[0] == '-';
  const std::string digits = negative ? text.substr(1) : text;
  if (digits.empty() || digits.size() > 20 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return text;
  uint64_t u = 0;
  if (std::from_chars(digits.data(), digits.data() + digits.size(), u).ec != std::errc())
    return text;  // beyond 2^64-1: the config says what it expected
  if (!negative)
    return u;
  if (u > static_cast<uint64_t>(INT64_MAX))
    return text;
  return -static_cast<int64_t>(u);
}

json CliList(const std::string& text) {
  if (text == "auto" || text.empty())
    return text;
  json out = json::array();
  size_t from = 0;
  for (;;) {
    const size_t comma = text.find(',', from);
    out.push_back(CliValue(text.substr(from, comma - from)));
    if (comma == std::string::npos)
      return out;
    from = comma + 1;
  }
}

bool ParseCount(const std::string& text, uint64_t* n) {
  json v = CliValue(text);
  if (!v.is_number_unsigned())
    return false;
  *n = v.get<uint64_t>();
  return true;
}

std::string ResolveStateDir(const Config& cfg) {
  if (!cfg.state_dir.empty())
    return cfg.state_dir;
  // systemd's StateDirectory= may list several, ':'-separated.
  if (const char* env = std::getenv("STATE_DIRECTORY")) {
    std::string first(env, std::strcspn(env, ":"));
    if (!first.empty())
      return first;
  }
  return "/var/lib/cpuhp-stress";
}

}  // namespace cpuhp
