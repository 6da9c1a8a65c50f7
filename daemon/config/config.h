// SPDX-License-Identifier: GPL-2.0
// The run configuration: JSON files in configs/, then command-line overrides.
// Every key is documented in configs/README.md. Validation is strict: an
// unknown key, a wrong type or an out-of-range value is one error line that
// names the key path ("/sweep/cycles_per_level: ...").
//
// config.cc: loading, the JSON form, command-line values; config_keys.cc:
// every key's name, range and setter; config_value.cc: checking one value
// (type, range, the error line) and durations.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace cpuhp {

enum class Pattern { kRoundRobin, kAll, kRandom, kSweep, kFaultSweep, kSmt };
const char* PatternName(Pattern p);
bool ParsePattern(const std::string& s, Pattern* p);

enum class ProgressMode { kAuto, kAlways, kNever };

// The smt pattern (run/schedule.h): switches between two SMT modes.
struct SmtConfig {
  // "on", "off" or a number of threads per core; the switch alternates,
  // the first one to modes[0].
  std::array<std::string, 2> modes = {"off", "on"};
  // "threads": every sibling thread's own online file, core by core, as
  // ppc64_cpu --smt does; "control": the mode written to smt/control, the
  // kernel moving every thread inside that one write.
  std::string method = "threads";
  uint64_t switches = 100;  // the pattern ends after this many; 0: never
};

struct SweepConfig {
  // Online-CPU counts to measure at, ascending. Empty means "auto": powers of
  // two between the lowest and highest reachable level, plus the highest.
  std::vector<int> levels;
  int cycles_per_level = 100;  // offline+online cycles of the victim per level
  int victim = -1;             // -1: the highest-numbered selected CPU
};

struct SimConfig {
  int cpus = 8;                        // simulated CPUs; cpu0 has no online file
  uint64_t offline_base_ns = 2000000;  // modeled offline latency at 1 online CPU
  uint64_t offline_per_cpu_ns = 150000;
  uint64_t online_base_ns = 1000000;
  uint64_t online_per_cpu_ns = 100000;
  double jitter = 0.2;      // +- fraction, seeded
  double error_rate = 0.0;  // fraction of writes failing with EBUSY
  // Every stall_every-th write blocks for stall_ns of wall time (a write
  // stuck in the kernel, for the stuck-operation watchdog); 0: never.
  uint64_t stall_every = 0;
  uint64_t stall_ns = 0;
  // Fault injection: this hotplug state (a number of the sim's table) does
  // not roll back when it fires; -1: every rollback works.
  int broken_rollback_state = -1;
  // SMT: consecutive CPUs are the threads of one core (cpu0-1 core 0, ...,
  // as on powerpc); 1: no SMT (smt/control "notsupported"). Divides cpus.
  int threads_per_core = 1;
};

// The cpuhp_probe kernel module as a timing source (daemon/kmod_source.h).
struct KmodConfig {
  // On by default: without the module the report says so and the run goes on.
  bool enabled = true;
  std::string device = "/dev/cpuhp_probe";
};

// Wakeup-latency probes on the CPUs that stay online (daemon/disturbance.h).
struct DisturbanceConfig {
  bool enabled = false;
  std::string cpus = "auto";          // "auto": every CPU online at start and not toggled
  uint64_t period_ns = 1000000;       // absolute clock_nanosleep period of each probe
  int fifo_priority = 0;              // 0: SCHED_OTHER; 1..99: SCHED_FIFO at that priority
  uint64_t baseline_ns = 1000000000;  // probes alone before the first operation
};

// Kernel log health checks (daemon/kmsg_health.h).
struct HealthConfig {
  bool enabled = true;
  bool stop_on_kernel_warning = false;    // "on_kernel_warning": "stop" | "continue"
  std::map<std::string, bool> stop_kind;  // per-kind override of the above (kind -> stop)
};

// Fault injection through cpuN/hotplug/fail (daemon/faults.h).
struct FaultsConfig {
  double rate = 0.0;                // probability that an operation is preceded by an injected one
  std::string direction = "both";   // offline | online | both
  std::vector<std::string> states;  // state names; empty: "all" (every failable state)
  int repeats = 2;                  // pattern fault_sweep: injections per state, direction, CPU
  bool allow_unsafe = false;        // also inject the states after cpu:kick_ap (faults.h)
};

struct Config {
  Pattern pattern = Pattern::kRoundRobin;
  std::string cpus = "all";  // kernel CPU list or "all" (every hotpluggable CPU)
  int min_online = 1;        // never fewer online CPUs than this (>= 1)
  // Operations (writes to an online file); 0 = no limit. Absent ("auto"):
  // IterationLimit() decides, so a default never ends a duration or a sweep.
  std::optional<uint64_t> iterations;
  uint64_t duration_ns = 0;      // 0 = no limit; from "24h", "90m", "30s", "500ms"
  std::optional<uint64_t> seed;  // absent: drawn at start and recorded
  bool stop_on_error = false;
  int lost_cpu_after = 3;         // consecutive failed onlines of one CPU stop the run; 0 never
  uint64_t interval_ns = 0;       // pause between operations
  std::string backend = "sysfs";  // "sysfs" or "sim"
  std::string sysfs_root = "/sys/devices/system/cpu";
  std::string state_dir;  // empty: $STATE_DIRECTORY or /var/lib/cpuhp-stress
  std::string report = "cpuhp-stress-report.json";
  bool force = false;  // overwrite an existing report (--force); otherwise refused at start
  std::string oplog;   // JSON Lines file of every operation; empty: none
  ProgressMode progress = ProgressMode::kAuto;
  SweepConfig sweep;
  SmtConfig smt;
  SimConfig sim;
  // Per-state kernel timing from the cpuhp tracepoints (tracefs); the sim
  // backend has no kernel events and ignores it.
  bool tracepoints = true;
  KmodConfig kmod;
  // Which sources time the kernel phases (daemon/sources/bpf_source.h):
  // "auto" the module when it is loaded, else the BPF programs; "kmod",
  // "bpf", or "both" (the same operations timed by each, to compare them).
  std::string kernel_phases_source = "auto";
  // How the BPF programs attach: "auto" fentry/fexit where the kernel
  // attaches them (BTF, BPF trampolines), kprobe/kretprobe otherwise;
  // "kprobe" kprobes only (to compare the two, or to avoid trampolines).
  std::string kernel_phases_bpf_attach = "auto";
  // Soak (daemon/soak.h): checkpoints in the state directory, interim
  // reports, stuck-operation watchdog.
  uint64_t checkpoint_interval_ns = 60000000000ull;  // 0: only at stop
  std::string resume = "auto";                       // auto | never
  uint64_t interim_interval_ns = 0;                  // 0: only on SIGUSR1
  uint64_t stuck_timeout_ns = 30000000000ull;        // 0: no watchdog
  // A stuck sysfs call still not returned this long after it started ends
  // the process (exit 5, state.json kept); 0: wait for ever. At least
  // stuck_timeout in effect: only a reported call is given up on.
  uint64_t stuck_give_up_ns = 300000000000ull;
  DisturbanceConfig disturbance;
  HealthConfig health;
  FaultsConfig faults;
  // Where each key given came from, by its path ("/sweep/victim"): the
  // option typed ("--victim") or the config file's path. A key left at its
  // default is absent. Not part of the config's JSON form.
  std::map<std::string, std::string> origins;
};

// An error about a key, found after loading ("/cpus: CPU 9 does not exist"),
// named as the user gave the key: "--cpus: CPU 9 does not exist" for an
// option, "board.json: /cpus: CPU 9 ..." for a config file; unchanged for a
// default or an error that does not start with a key's path.
std::string NameOrigin(const Config& cfg, const std::string& err);

// The iteration limit of `auto`: a plain run stops after this many writes.
inline constexpr uint64_t kDefaultIterations = 1000;

// The iteration limit the run obeys: /iterations when given; otherwise
// kDefaultIterations for roundrobin, all and random without a duration, and
// none (0) for a duration, a sweep or a fault sweep, which end by their own
// measure.
uint64_t IterationLimit(const Config& cfg);

// Parses and validates a config document on top of `*cfg` (keys absent in the
// document keep their current values). `source` names the file in errors.
// Returns false with a one-line *err ("default.json: /min_online: expected an
// integer from 1 to 8192, got -1").
bool ApplyConfigJson(const nlohmann::json& doc, const std::string& source, Config* cfg,
                     std::string* err);
// Reads a file and applies it. Errors name the file (unreadable, not JSON with
// line and column, or a validation error).
bool LoadConfigFile(const std::string& path, Config* cfg, std::string* err);

// The effective config as JSON (same keys as the files; seed as resolved).
nlohmann::json ConfigToJson(const Config& cfg);

// The pattern names joined by `sep` ("roundrobin | all | ..."), for --help.
std::string PatternList(const std::string& sep);

// A command-line value as the config document would hold it: an integer
// literal ("-5", "42") becomes a JSON number, anything else a string, so the
// config's checks judge it ("expected an integer from 0 to ..., got -5").
nlohmann::json CliValue(const std::string& text);
// "8,16,32" -> [8, 16, 32] (each through CliValue); "auto" stays a string.
nlohmann::json CliList(const std::string& text);
// A non-negative decimal count ("20"); false on anything else.
bool ParseCount(const std::string& text, uint64_t* n);

// "24h", "90m", "30s", "500ms", "2h30m", "0". Returns false on bad syntax.
bool ParseDuration(const std::string& text, uint64_t* ns, std::string* err);
std::string FormatDuration(uint64_t ns);

// The state directory to use: cfg.state_dir, else $STATE_DIRECTORY (first
// entry), else /var/lib/cpuhp-stress.
std::string ResolveStateDir(const Config& cfg);

}  // namespace cpuhp
