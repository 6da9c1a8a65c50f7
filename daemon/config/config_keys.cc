// SPDX-License-Identifier: GPL-2.0
#include "config/config_keys.h"

#include <map>
#include <string>
#include <vector>

#include "config/kmsg_kinds.h"
#include "util/cpu_list.h"

namespace cpuhp {
namespace {

constexpr int kMaxCpus = 8192;  // NR_CPUS of today's largest kernel configs
constexpr uint64_t kMaxIterations = 1000000000000ull;
constexpr uint64_t kMaxSimNs = 100000000000ull;  // 100 s per modeled operation

constexpr const char* kBackendNames[] = {"sysfs", "sim"};
constexpr const char* kResumeNames[] = {"auto", "never"};
constexpr const char* kKernelPhasesSourceNames[] = {"auto", "kmod", "bpf", "both"};
constexpr const char* kBpfAttachNames[] = {"auto", "kprobe"};
constexpr uint64_t kMinProbePeriodNs = 10000;       // 10 us: below that a probe is a busy loop
constexpr uint64_t kMaxProbePeriodNs = 1000000000;  // 1 s
constexpr uint64_t kMaxBaselineNs = 3600000000000ull;

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

const Field kSweepFields[] = {
    {"levels", [](const Value& v, Config* c) { return GetLevels(v, &c->sweep.levels); }},
    {"cycles_per_level",
     [](const Value& v, Config* c) {
       return GetInt(v, 1, 1000000000, &c->sweep.cycles_per_level);
     }},
    {"victim",
     [](const Value& v, Config* c) { return GetInt(v, -1, kMaxCpus - 1, &c->sweep.victim); }},
};

const Field kSmtFields[] = {
    {"modes",
     [](const Value& v, Config* c) {
       const auto mode = [](const nlohmann::json& m) {
         if (!m.is_string())
           return false;
         const std::string& t = m.get_ref<const std::string&>();
         return t == "on" || t == "off" || (t.size() == 1 && t[0] >= '1' && t[0] <= '8');
       };
       if (!v.j.is_array() || v.j.size() != 2 || !mode(v.j[0]) || !mode(v.j[1]) || v.j[0] == v.j[1])
         return v.Got(
             "expected two different SMT modes, each \"on\", \"off\" or a number of "
             "threads from 1 to 8, like [\"off\", \"on\"]");
       c->smt.modes = {v.j[0].get<std::string>(), v.j[1].get<std::string>()};
       return true;
     }},
    {"method",
     [](const Value& v, Config* c) {
       if (!v.j.is_string() || (v.j != "threads" && v.j != "control"))
         return v.Got(
             "expected \"threads\" (each sibling's online file, core by core) or "
             "\"control\" (one smt/control write per switch)");
       c->smt.method = v.j.get<std::string>();
       return true;
     }},
    {"switches",
     [](const Value& v, Config* c) { return GetU64(v, kMaxIterations, &c->smt.switches); }},
};

const Field kKmodFields[] = {
    {"enabled", [](const Value& v, Config* c) { return GetBool(v, &c->kmod.enabled); }},
    {"device",
     [](const Value& v, Config* c) {
       return GetPath(v, "an absolute path", PathRule::kAbsolute, &c->kmod.device);
     }},
};

const Field kKernelPhasesFields[] = {
    {"source",
     [](const Value& v, Config* c) {
       size_t i = 0;
       return GetChoice(v, kKernelPhasesSourceNames, &i) &&
              (c->kernel_phases_source = kKernelPhasesSourceNames[i], true);
     }},
    {"bpf_attach",
     [](const Value& v, Config* c) {
       size_t i = 0;
       return GetChoice(v, kBpfAttachNames, &i) &&
              (c->kernel_phases_bpf_attach = kBpfAttachNames[i], true);
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
    {"threads_per_core",
     [](const Value& v, Config* c) { return GetInt(v, 1, 8, &c->sim.threads_per_core); }},
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
    {"smt", [](const Value& v, Config* c) { return ApplyObject(v, kSmtFields, c); }},
    {"sim", [](const Value& v, Config* c) { return ApplyObject(v, kSimFields, c); }},
    {"tracepoints", [](const Value& v, Config* c) { return GetBool(v, &c->tracepoints); }},
    {"kmod", [](const Value& v, Config* c) { return ApplyObject(v, kKmodFields, c); }},
    {"kernel_phases",
     [](const Value& v, Config* c) { return ApplyObject(v, kKernelPhasesFields, c); }},
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
    {"stuck_give_up",
     [](const Value& v, Config* c) { return GetDuration(v, &c->stuck_give_up_ns); }},
    {"disturbance",
     [](const Value& v, Config* c) { return ApplyObject(v, kDisturbanceFields, c); }},
    {"health", [](const Value& v, Config* c) { return ApplyObject(v, kHealthFields, c); }},
    {"faults", [](const Value& v, Config* c) { return ApplyObject(v, kFaultsFields, c); }},
};

}  // namespace

std::span<const Field> TopLevelKeys() {
  return kTopFields;
}

}  // namespace cpuhp
