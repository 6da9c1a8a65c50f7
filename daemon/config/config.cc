// SPDX-License-Identifier: GPL-2.0
#include "config/config.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string_view>

#include <nlohmann/json.hpp>

#include "config/kmsg_kinds.h"
#include "util/cpu_list.h"
#include "util/json_file.h"

namespace cpuhp {
namespace {

using nlohmann::json;

constexpr size_t kMaxFileBytes = 1 << 20;  // a config is a few hundred bytes
constexpr size_t kMaxRendered = 40;        // bytes of a value quoted in an error line
constexpr int kMaxCpus = 8192;             // NR_CPUS of today's largest kernel configs
constexpr uint64_t kMaxIterations = 1000000000000ull;
constexpr uint64_t kMaxSimNs = 100000000000ull;  // 100 s per modeled operation

// Index = enum value.
constexpr const char* kPatternNames[] = {"roundrobin", "all", "random", "sweep", "fault_sweep"};
constexpr const char* kProgressNames[] = {"auto", "always", "never"};
constexpr const char* kBackendNames[] = {"sysfs", "sim"};
constexpr const char* kResumeNames[] = {"auto", "never"};
constexpr const char* kOnWarningNames[] = {"continue", "stop"};
constexpr uint64_t kMinProbePeriodNs = 10000;       // 10 us: below that a probe is a busy loop
constexpr uint64_t kMaxProbePeriodNs = 1000000000;  // 1 s
constexpr uint64_t kMaxBaselineNs = 3600000000000ull;

struct DurationUnit {
  const char* name;
  uint64_t ns;
};
// Largest first: the order a duration must be written in.
constexpr DurationUnit kDurationUnits[] = {
    {"d", 86400000000000ull}, {"h", 3600000000000ull}, {"m", 60000000000ull}, {"s", 1000000000ull},
    {"ms", 1000000ull},       {"us", 1000ull},         {"ns", 1ull},
};
constexpr const char* kUnitHint = "(use ns, us, ms, s, m, h or d)";

// ---- Error lines: one line, whatever the input held ----

// Cuts to kMaxRendered bytes on a UTF-8 character boundary.
std::string Truncate(std::string s) {
  if (s.size() <= kMaxRendered)
    return s;
  size_t cut = kMaxRendered - 3;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80)
    --cut;
  s.resize(cut);
  return s + "...";
}

std::string DumpString(const std::string& s) {
  return json(s).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string Quote(const std::string& s) {
  return Truncate(DumpString(s));
}

// Compact JSON that stops growing past the limit, so a huge or deeply nested
// value costs little (the recursion depth is bounded by the limit too).
void RenderTo(const json& v, std::string* out) {
  if (out->size() > kMaxRendered)
    return;
  if (v.is_object() || v.is_array()) {
    *out += v.is_object() ? '{' : '[';
    bool first = true;
    for (auto it = v.begin(); it != v.end() && out->size() <= kMaxRendered; ++it) {
      if (!first)
        *out += ',';
      first = false;
      if (v.is_object())
        *out += DumpString(it.key()) + ":";
      RenderTo(it.value(), out);
    }
    *out += v.is_object() ? '}' : ']';
  } else if (v.is_number_float() && !std::isfinite(v.get<double>())) {
    // dump() would print "null"; only a document built in code gets here.
    double d = v.get<double>();
    *out += std::isnan(d) ? "nan" : d > 0 ? "inf" : "-inf";
  } else {
    *out += v.dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

std::string Render(const json& v) {
  std::string s;
  RenderTo(v, &s);
  return Truncate(s);
}

// A key as a JSON pointer token, control characters escaped, cut to the
// rendering limit.
std::string PathKey(const std::string& key) {
  return Truncate(JsonPointerToken(key.substr(0, kMaxRendered + 1)));
}

// A JSON value under check: where it is, for the one-line error.
struct Value {
  const std::string& source;
  std::string* err;
  const json& j;
  std::string path;

  Value At(const std::string& key, const json& child) const {
    return {source, err, child, path + "/" + key};
  }
  bool Fail(const std::string& problem) const {
    *err = source + ": " + (path.empty() ? "/" : path) + ": " + problem;
    return false;
  }
  bool Got(const std::string& problem) const { return Fail(problem + ", got " + Render(j)); }
};

// ---- Durations ----

bool ParseDurationReason(std::string_view text, uint64_t* ns, std::string* reason) {
  if (text.empty()) {
    *reason = "expected a duration like \"30s\", \"2h30m\" or \"0\", not an empty string";
    return false;
  }
  if (text == "0") {
    *ns = 0;
    return true;
  }
  const char* const end = text.data() + text.size();
  const char* p = text.data();
  uint64_t total = 0;
  int last_unit = -1;
  while (p < end) {
    uint64_t n = 0;
    auto [num_end, ec] = std::from_chars(p, end, n);
    if (num_end == p) {
      *reason = *p == '-' ? "negative durations are not allowed"
                          : "expected a number before " + Quote(std::string(p, end));
      return false;
    }
    std::string number(p, num_end);
    p = num_end;
    if (p < end && *p == '.') {
      *reason = "fractions are not allowed (write 1h30m, 1500ms)";
      return false;
    }
    const char* unit_end = std::find_if(p, end, [](char c) { return c >= '0' && c <= '9'; });
    std::string unit(p, unit_end);
    p = unit_end;
    if (unit.empty()) {
      *reason = "missing unit after \"" + number + "\" " + kUnitHint;
      return false;
    }
    int u = 0;
    while (u < static_cast<int>(std::size(kDurationUnits)) && unit != kDurationUnits[u].name)
      ++u;
    if (u == static_cast<int>(std::size(kDurationUnits))) {
      *reason = "unknown unit " + Quote(unit) + " " + kUnitHint;
      return false;
    }
    if (u <= last_unit) {
      *reason = "units must come largest first, each at most once (e.g. 2h30m)";
      return false;
    }
    last_unit = u;
    uint64_t part = 0;
    if (ec != std::errc() || __builtin_mul_overflow(n, kDurationUnits[u].ns, &part) ||
        __builtin_add_overflow(total, part, &total)) {
      *reason = "too large (the maximum is " + FormatDuration(UINT64_MAX) + ")";
      return false;
    }
  }
  *ns = total;
  return true;
}

// ---- Typed getters: each checks the JSON type and range, or fails naming the key ----

bool AsU64(const json& j, uint64_t* out) {
  if (j.is_number_unsigned())
    *out = j.get<uint64_t>();
  else if (j.is_number_integer() && j.get<int64_t>() >= 0)
    *out = static_cast<uint64_t>(j.get<int64_t>());
  else
    return false;  // negative, boolean, float (1.0, 1e3, integers past 2^64-1), other types
  return true;
}

std::string IntegerRange(int64_t lo, uint64_t hi) {
  return "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
}

bool GetU64(const Value& v, uint64_t hi, uint64_t* out) {
  uint64_t u = 0;
  if (!AsU64(v.j, &u) || u > hi)
    return v.Got("expected " + IntegerRange(0, hi));
  *out = u;
  return true;
}

bool GetInt(const Value& v, int lo, int hi, int* out) {
  int64_t i = 0;
  if (v.j.is_number_unsigned())
    i = static_cast<int64_t>(std::min<uint64_t>(v.j.get<uint64_t>(), INT64_MAX));
  else if (v.j.is_number_integer())
    i = v.j.get<int64_t>();
  if (!v.j.is_number_integer() || i < lo || i > hi)
    return v.Got("expected " + IntegerRange(lo, static_cast<uint64_t>(hi)));
  *out = static_cast<int>(i);
  return true;
}

bool GetFraction(const Value& v, double* out) {
  // !(>= && <=) also catches NaN.
  if (!v.j.is_number() || !(v.j.get<double>() >= 0.0 && v.j.get<double>() <= 1.0))
    return v.Got("expected a number from 0 to 1");
  *out = v.j.get<double>();
  return true;
}

bool GetBool(const Value& v, bool* out) {
  if (!v.j.is_boolean())
    return v.Got("expected true or false");
  *out = v.j.get<bool>();
  return true;
}

// Sets *index to the position of the string in `names`.
template <size_t N>
bool GetChoice(const Value& v, const char* const (&names)[N], size_t* index) {
  for (size_t i = 0; i < N && v.j.is_string(); ++i) {
    if (v.j.get_ref<const std::string&>() == names[i]) {
      *index = i;
      return true;
    }
  }
  std::string what = "expected one of";
  for (size_t i = 0; i < N; ++i)
    what += std::string(i ? ", \"" : " \"") + names[i] + "\"";
  return v.Got(what);
}

bool GetDuration(const Value& v, uint64_t* out) {
  if (!v.j.is_string())
    return v.Got("expected a duration string like \"24h\", \"90m\", \"500ms\" or \"0\"");
  std::string reason;
  return ParseDurationReason(v.j.get_ref<const std::string&>(), out, &reason) || v.Got(reason);
}

enum class PathRule { kMayBeEmpty, kNonEmpty, kAbsolute };

bool GetPath(const Value& v, const char* what, PathRule rule, std::string* out) {
  const std::string expected = std::string("expected ") + what;
  if (!v.j.is_string())
    return v.Got(expected);
  const std::string& s = v.j.get_ref<const std::string&>();
  if ((rule != PathRule::kMayBeEmpty && s.empty()) || (rule == PathRule::kAbsolute && s[0] != '/'))
    return v.Got(expected);
  if (s.find('\0') != std::string::npos)  // open() would silently use a shorter path
    return v.Got("a path cannot contain a NUL character");
  if (!IsUtf8(s))  // it goes into reports and checkpoints: JSON is UTF-8
    return v.Got("a path must be valid UTF-8");
  *out = s;
  return true;
}

bool GetCpus(const Value& v, std::string* out) {
  const char* what = "expected \"all\" or a non-empty CPU list like \"1-7,9\"";
  if (!v.j.is_string())
    return v.Got(what);
  const std::string& s = v.j.get_ref<const std::string&>();
  std::vector<int> cpus;
  std::string err;
  if (s != "all" && (!ParseCpuList(s, &cpus, &err) || cpus.empty()))
    return v.Got(what);
  *out = s;
  return true;
}

bool GetLevels(const Value& v, std::vector<int>* out) {
  if (v.j.is_string() && v.j.get_ref<const std::string&>() == "auto") {
    out->clear();
    return true;
  }
  if (!v.j.is_array() || v.j.empty())
    return v.Got("expected \"auto\" or a non-empty array of online-CPU counts");
  std::vector<int> levels;
  for (size_t i = 0; i < v.j.size(); ++i) {
    const Value elem = v.At(std::to_string(i), v.j[i]);
    int level = 0;
    if (!GetInt(elem, 1, kMaxCpus, &level))
      return false;
    if (!levels.empty() && level <= levels.back())
      return elem.Got("expected a level above the previous one (" + std::to_string(levels.back()) +
                      "): levels are strictly ascending");
    levels.push_back(level);
  }
  *out = std::move(levels);
  return true;
}

bool GetIterations(const Value& v, std::optional<uint64_t>* out) {
  uint64_t n = 0;
  if (v.j.is_string() && v.j.get_ref<const std::string&>() == "auto")
    out->reset();
  else if (AsU64(v.j, &n) && n <= kMaxIterations)
    *out = n;
  else
    return v.Got("expected \"auto\" or " + IntegerRange(0, kMaxIterations));
  return true;
}

bool GetSeed(const Value& v, std::optional<uint64_t>* out) {
  uint64_t seed = 0;
  if (v.j.is_null())
    out->reset();
  else if (AsU64(v.j, &seed))
    *out = seed;
  else
    return v.Got("expected null or " + IntegerRange(0, UINT64_MAX));
  return true;
}

// ---- Objects: one table per level, so the known keys live in one place ----

using Setter = bool (*)(const Value& v, Config* c);
struct Field {
  const char* key;
  Setter set;
};

bool ApplyObject(const Value& v, std::span<const Field> fields, Config* c) {
  if (!v.j.is_object()) {
    if (v.path.empty())  // the whole document: its type says enough
      return v.Fail(std::string("expected a JSON object, got ") + v.j.type_name());
    return v.Got("expected a JSON object");
  }
  for (auto it = v.j.begin(); it != v.j.end(); ++it) {
    const Value child = v.At(PathKey(it.key()), it.value());
    auto f = std::find_if(fields.begin(), fields.end(),
                          [&](const Field& f) { return it.key() == f.key; });
    if (f == fields.end()) {
      std::string known;
      for (const Field& k : fields)
        known += std::string(known.empty() ? "" : ", ") + k.key;
      return child.Fail("unknown key (known keys: " + known + ")");
    }
    if (!f->set(child, c))
      return false;
  }
  return true;
}

const Field kSweepFields[] = {
    {"levels", [](const Value& v, Config* c) { return GetLevels(v, &c->sweep.levels); }},
    {"cycles_per_level",
     [](const Value& v, Config* c) {
       return GetInt(v, 1, 1000000000, &c->sweep.cycles_per_level);
     }},
    {"victim",
     [](const Value& v, Config* c) { return GetInt(v, -1, kMaxCpus - 1, &c->sweep.victim); }},
};

const Field kKmodFields[] = {
    {"enabled", [](const Value& v, Config* c) { return GetBool(v, &c->kmod.enabled); }},
    {"device",
     [](const Value& v, Config* c) {
       return GetPath(v, "an absolute path", PathRule::kAbsolute, &c->kmod.device);
     }},
};

const Field kSimFields[] = {
    {"cpus", [](const Value& v, Config* c) { return GetInt(v, 2, kMaxCpus, &c->sim.cpus); }},
    {"offline_base_ns",
     [](const Value& v, Config* c) { return GetU64(v, kMaxSimNs, &c->sim.offline_base_ns); }},
    {"offline_per_cpu_ns",
     [](const Value& v, Config* c) { return GetU64(v, kMaxSimNs, &c->sim.offline_per_cpu_ns); }},
    {"online_base_ns",
     [](const Value& v, Config* c) { return GetU64(v, kMaxSimNs, &c->sim.online_base_ns); }},
    {"online_per_cpu_ns",
     [](const Value& v, Config* c) { return GetU64(v, kMaxSimNs, &c->sim.online_per_cpu_ns); }},
    {"jitter", [](const Value& v, Config* c) { return GetFraction(v, &c->sim.jitter); }},
    {"error_rate", [](const Value& v, Config* c) { return GetFraction(v, &c->sim.error_rate); }},
    {"stall_every",
     [](const Value& v, Config* c) { return GetU64(v, kMaxIterations, &c->sim.stall_every); }},
    {"stall_ns", [](const Value& v, Config* c) { return GetU64(v, kMaxSimNs, &c->sim.stall_ns); }},
    {"broken_rollback_state",
     [](const Value& v, Config* c) {
       return GetInt(v, -1, 100000, &c->sim.broken_rollback_state);
     }},
};

const Field kDisturbanceFields[] = {
    {"enabled", [](const Value& v, Config* c) { return GetBool(v, &c->disturbance.enabled); }},
    {"cpus",
     [](const Value& v, Config* c) {
       std::vector<int> cpus;
       std::string err;
       if (!v.j.is_string() ||
           (v.j.get_ref<const std::string&>() != "auto" &&
            (!ParseCpuList(v.j.get_ref<const std::string&>(), &cpus, &err) || cpus.empty())))
         return v.Got("expected \"auto\" or a non-empty CPU list like \"0,2-3\"");
       c->disturbance.cpus = v.j.get<std::string>();
       return true;
     }},
    {"period",
     [](const Value& v, Config* c) {
       uint64_t ns = 0;
       if (!GetDuration(v, &ns))
         return false;
       if (ns < kMinProbePeriodNs || ns > kMaxProbePeriodNs)
         return v.Got("expected a period from 10us to 1s");
       c->disturbance.period_ns = ns;
       return true;
     }},
    {"fifo_priority",
     [](const Value& v, Config* c) { return GetInt(v, 0, 99, &c->disturbance.fifo_priority); }},
    {"baseline",
     [](const Value& v, Config* c) {
       uint64_t ns = 0;
       if (!GetDuration(v, &ns))
         return false;
       if (ns > kMaxBaselineNs)
         return v.Got("expected a duration from 0 to 1h");
       c->disturbance.baseline_ns = ns;
       return true;
     }},
};

bool GetStopKinds(const Value& v, Config* c) {
  if (!v.j.is_object())
    return v.Got("expected a JSON object of kind: \"continue\" or \"stop\"");
  std::map<std::string, bool> kinds;
  for (auto it = v.j.begin(); it != v.j.end(); ++it) {
    const Value child = v.At(PathKey(it.key()), it.value());
    if (KmsgKindFromName(it.key()) < 0) {
      std::string known;
      for (int k = 0; k < kKmsgKinds; ++k)
        known += std::string(k ? ", " : "") + KmsgKindName(k);
      return child.Fail("unknown key (known keys: " + known + ")");
    }
    size_t i = 0;
    if (!GetChoice(child, kOnWarningNames, &i))
      return false;
    kinds[it.key()] = i == 1;
  }
  c->health.stop_kind = std::move(kinds);
  return true;
}

const Field kHealthFields[] = {
    {"enabled", [](const Value& v, Config* c) { return GetBool(v, &c->health.enabled); }},
    {"on_kernel_warning",
     [](const Value& v, Config* c) {
       size_t i = 0;
       return GetChoice(v, kOnWarningNames, &i) &&
              (c->health.stop_on_kernel_warning = i == 1, true);
     }},
    {"per_kind", GetStopKinds},
};

constexpr const char* kFaultDirectionNames[] = {"offline", "online", "both"};

bool GetFaultStates(const Value& v, Config* c) {
  if (v.j.is_string() && v.j.get_ref<const std::string&>() == "all") {
    c->faults.states.clear();
    return true;
  }
  if (!v.j.is_array() || v.j.empty())
    return v.Got("expected \"all\" or a non-empty list of state names from hotplug/states");
  std::vector<std::string> names;
  for (size_t i = 0; i < v.j.size(); ++i) {
    const Value elem = v.At(std::to_string(i), v.j[i]);
    if (!elem.j.is_string() || elem.j.get_ref<const std::string&>().empty() ||
        elem.j.get_ref<const std::string&>().size() > 200)
      return elem.Got("expected a state name like \"sched:active\"");
    names.push_back(elem.j.get<std::string>());
  }
  c->faults.states = std::move(names);
  return true;
}

const Field kFaultsFields[] = {
    {"rate", [](const Value& v, Config* c) { return GetFraction(v, &c->faults.rate); }},
    {"direction",
     [](const Value& v, Config* c) {
       size_t i = 0;
       return GetChoice(v, kFaultDirectionNames, &i) &&
              (c->faults.direction = kFaultDirectionNames[i], true);
     }},
    {"states", GetFaultStates},
    {"repeats", [](const Value& v, Config* c) { return GetInt(v, 1, 1000, &c->faults.repeats); }},
    {"allow_unsafe", [](const Value& v, Config* c) { return GetBool(v, &c->faults.allow_unsafe); }},
};

const Field kTopFields[] = {
    {"comment",
     [](const Value& v, Config*) { return v.j.is_string() || v.Got("expected a string"); }},
    {"pattern",
     [](const Value& v, Config* c) {
       size_t i = 0;
       return GetChoice(v, kPatternNames, &i) && (c->pattern = static_cast<Pattern>(i), true);
     }},
    {"cpus", [](const Value& v, Config* c) { return GetCpus(v, &c->cpus); }},
    {"min_online",
     [](const Value& v, Config* c) { return GetInt(v, 1, kMaxCpus, &c->min_online); }},
    {"iterations", [](const Value& v, Config* c) { return GetIterations(v, &c->iterations); }},
    {"duration", [](const Value& v, Config* c) { return GetDuration(v, &c->duration_ns); }},
    {"seed", [](const Value& v, Config* c) { return GetSeed(v, &c->seed); }},
    {"stop_on_error", [](const Value& v, Config* c) { return GetBool(v, &c->stop_on_error); }},
    {"lost_cpu_after",
     [](const Value& v, Config* c) { return GetInt(v, 0, 1000000, &c->lost_cpu_after); }},
    {"interval", [](const Value& v, Config* c) { return GetDuration(v, &c->interval_ns); }},
    {"backend",
     [](const Value& v, Config* c) {
       size_t i = 0;
       return GetChoice(v, kBackendNames, &i) && (c->backend = kBackendNames[i], true);
     }},
    {"sysfs_root",
     [](const Value& v, Config* c) {
       return GetPath(v, "an absolute path", PathRule::kAbsolute, &c->sysfs_root);
     }},
    {"state_dir",
     [](const Value& v, Config* c) {
       return GetPath(v, "a directory path, or \"\" for the default", PathRule::kMayBeEmpty,
                      &c->state_dir);
     }},
    {"report",
     [](const Value& v, Config* c) {
       return GetPath(v, "a non-empty file path", PathRule::kNonEmpty, &c->report);
     }},
    {"force", [](const Value& v, Config* c) { return GetBool(v, &c->force); }},
    {"oplog",
     [](const Value& v, Config* c) {
       return GetPath(v, "a file path, or \"\" for none", PathRule::kMayBeEmpty, &c->oplog);
     }},
    {"progress",
     [](const Value& v, Config* c) {
       size_t i = 0;
       return GetChoice(v, kProgressNames, &i) &&
              (c->progress = static_cast<ProgressMode>(i), true);
     }},
    {"sweep", [](const Value& v, Config* c) { return ApplyObject(v, kSweepFields, c); }},
    {"sim", [](const Value& v, Config* c) { return ApplyObject(v, kSimFields, c); }},
    {"tracepoints", [](const Value& v, Config* c) { return GetBool(v, &c->tracepoints); }},
    {"kmod", [](const Value& v, Config* c) { return ApplyObject(v, kKmodFields, c); }},
    {"checkpoint_interval",
     [](const Value& v, Config* c) { return GetDuration(v, &c->checkpoint_interval_ns); }},
    {"resume",
     [](const Value& v, Config* c) {
       size_t i = 0;
       return GetChoice(v, kResumeNames, &i) && (c->resume = kResumeNames[i], true);
     }},
    {"interim_interval",
     [](const Value& v, Config* c) { return GetDuration(v, &c->interim_interval_ns); }},
    {"stuck_timeout",
     [](const Value& v, Config* c) { return GetDuration(v, &c->stuck_timeout_ns); }},
    {"disturbance",
     [](const Value& v, Config* c) { return ApplyObject(v, kDisturbanceFields, c); }},
    {"health", [](const Value& v, Config* c) { return ApplyObject(v, kHealthFields, c); }},
    {"faults", [](const Value& v, Config* c) { return ApplyObject(v, kFaultsFields, c); }},
};

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
  const bool ends_by_itself = cfg.pattern == Pattern::kSweep || cfg.pattern == Pattern::kFaultSweep;
  return cfg.duration_ns || ends_by_itself ? 0 : kDefaultIterations;
}

bool ApplyConfigJson(const json& doc, const std::string& source, Config* cfg, std::string* err) {
  std::string scratch;
  Config next = *cfg;  // applied to a copy: on error *cfg is unchanged
  if (!ApplyObject(Value{source, err ? err : &scratch, doc, ""}, kTopFields, &next))
    return false;
  *cfg = std::move(next);
  return true;
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
      {"sim", std::move(sim)},
      {"tracepoints", cfg.tracepoints},
      {"kmod", {{"enabled", cfg.kmod.enabled}, {"device", cfg.kmod.device}}},
      {"checkpoint_interval", FormatDuration(cfg.checkpoint_interval_ns)},
      {"resume", cfg.resume},
      {"interim_interval", FormatDuration(cfg.interim_interval_ns)},
      {"stuck_timeout", FormatDuration(cfg.stuck_timeout_ns)},
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

bool ParseDuration(const std::string& text, uint64_t* ns, std::string* err) {
  std::string reason;
  if (ParseDurationReason(text, ns, &reason))
    return true;
  if (err)
    *err = "bad duration " + Quote(text) + ": " + reason;
  return false;
}

std::string FormatDuration(uint64_t ns) {
  if (ns == 0)
    return "0";
  std::string s;
  // From hours down: "24h" reads better than "1d" in a report.
  for (size_t i = 1; i < std::size(kDurationUnits); ++i) {
    const DurationUnit& u = kDurationUnits[i];
    if (ns >= u.ns) {
      s += std::to_string(ns / u.ns) + u.name;
      ns %= u.ns;
    }
  }
  return s;
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
