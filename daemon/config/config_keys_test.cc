// SPDX-License-Identifier: GPL-2.0
#include "config/config_keys.h"

#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "config/config.h"
#include "testing/config_documents.h"

namespace cpuhp {
namespace {

using nlohmann::json;

// ---- Validation errors ----

TEST(ConfigErrors, UnknownKeyAtTopLevel) {
  EXPECT_EQ(ApplyError(R"({"iteration": 5})"),
            "t.json: /iteration: unknown key (known keys: comment, pattern, cpus, min_online, "
            "iterations, duration, seed, stop_on_error, lost_cpu_after, interval, backend, "
            "sysfs_root, state_dir, "
            "report, force, oplog, progress, sweep, smt, sim, tracepoints, kmod, kernel_phases, "
            "checkpoint_interval, resume, "
            "interim_interval, stuck_timeout, stuck_give_up, disturbance, health, faults)");
  EXPECT_PRED2(StartsWith, ApplyError(R"({"$schema": "x"})"), "t.json: /$schema: unknown key ");
}

TEST(ConfigErrors, UnknownKeyNested) {
  EXPECT_EQ(ApplyError(R"({"sweep": {"level": [8]}})"),
            "t.json: /sweep/level: unknown key (known keys: levels, cycles_per_level, victim)");
  // "comment" is for the top level only.
  EXPECT_PRED2(StartsWith, ApplyError(R"({"sim": {"comment": "x"}})"),
               "t.json: /sim/comment: unknown key ");
}

TEST(ConfigErrors, WrongTypes) {
  const struct {
    const char* doc;
    const char* err;
  } kCases[] = {
      // JSON booleans, strings, floats and null are not integers.
      {R"({"min_online": true})", "/min_online: expected an integer from 1 to 8192, got true"},
      {R"({"min_online": "2"})", "/min_online: expected an integer from 1 to 8192, got \"2\""},
      {R"({"min_online": 1.5})", "/min_online: expected an integer from 1 to 8192, got 1.5"},
      {R"({"min_online": 2.0})", "/min_online: expected an integer from 1 to 8192, got 2.0"},
      {R"({"iterations": 1e3})",
       "/iterations: expected \"auto\" or an integer from 0 to 1000000000000, got 1000.0"},
      {R"({"iterations": null})",
       "/iterations: expected \"auto\" or an integer from 0 to 1000000000000, got null"},
      {R"({"seed": "1"})",
       "/seed: expected null or an integer from 0 to 18446744073709551615, "
       "got \"1\""},
      {R"({"seed": false})",
       "/seed: expected null or an integer from 0 to "
       "18446744073709551615, got false"},
      {R"({"stop_on_error": 1})", "/stop_on_error: expected true or false, got 1"},
      {R"({"stop_on_error": "true"})", "/stop_on_error: expected true or false, got \"true\""},
      {R"({"lost_cpu_after": -1})",
       "/lost_cpu_after: expected an integer from 0 to 1000000, got -1"},
      {R"({"cpus": 3})", "/cpus: expected \"all\" or a non-empty CPU list like \"1-7,9\", got 3"},
      {R"({"report": ["a"]})", "/report: expected a non-empty file path, got [\"a\"]"},
      {R"({"oplog": null})", "/oplog: expected a file path, or \"\" for none, got null"},
      {R"({"comment": 5})", "/comment: expected a string, got 5"},
      {R"({"duration": 30})",
       "/duration: expected a duration string like \"24h\", \"90m\", \"500ms\" or \"0\", got 30"},
      {R"({"pattern": 1})",
       "/pattern: expected one of \"roundrobin\", \"all\", \"random\", \"sweep\", \"fault_sweep\", "
       "\"smt\", got 1"},
      {R"({"smt": {"modes": ["on", "on"]}})",
       "/smt/modes: expected two different SMT modes, each \"on\", \"off\" or a number of threads "
       "from 1 to 8, like [\"off\", \"on\"], got [\"on\",\"on\"]"},
      {R"({"smt": {"modes": ["off", "9"]}})",
       "/smt/modes: expected two different SMT modes, each \"on\", \"off\" or a number of threads "
       "from 1 to 8, like [\"off\", \"on\"], got [\"off\",\"9\"]"},
      {R"({"smt": {"method": "ppc64_cpu"}})",
       "/smt/method: expected \"threads\" (each sibling's online file, core by core) or "
       "\"control\" (one smt/control write per switch), got \"ppc64_cpu\""},
      {R"({"sweep": [1]})", "/sweep: expected a JSON object, got [1]"},
      {R"({"sim": null})", "/sim: expected a JSON object, got null"},
      {R"({"sweep": {"levels": 8}})",
       "/sweep/levels: expected \"auto\" or a non-empty array of online-CPU counts, got 8"},
      {R"({"sweep": {"levels": [8, "16"]}})",
       "/sweep/levels/1: expected an integer from 1 to 8192, got \"16\""},
      {R"({"sim": {"jitter": "0.1"}})", "/sim/jitter: expected a number from 0 to 1, got \"0.1\""},
      {R"({"sim": {"error_rate": true}})",
       "/sim/error_rate: expected a number from 0 to 1, got true"},
  };
  for (const auto& c : kCases)
    EXPECT_EQ(ApplyError(c.doc), std::string("t.json: ") + c.err);
}

TEST(ConfigErrors, OutOfRange) {
  const struct {
    const char* doc;
    const char* err;
  } kCases[] = {
      {R"({"min_online": 0})", "/min_online: expected an integer from 1 to 8192, got 0"},
      {R"({"min_online": 8193})", "/min_online: expected an integer from 1 to 8192, got 8193"},
      {R"({"min_online": -9223372036854775808})",
       "/min_online: expected an integer from 1 to 8192, got -9223372036854775808"},
      {R"({"iterations": -1})",
       "/iterations: expected \"auto\" or an integer from 0 to 1000000000000, got -1"},
      {R"({"iterations": 1000000000001})",
       "/iterations: expected \"auto\" or an integer from 0 to 1000000000000, got 1000000000001"},
      {R"({"seed": -1})",
       "/seed: expected null or an integer from 0 to 18446744073709551615, got -1"},
      // One past 2^64-1 parses as a float.
      {R"({"seed": 18446744073709551616})",
       "/seed: expected null or an integer from 0 to "
       "18446744073709551615, got 1.8446744073709552e+19"},
      {R"({"sweep": {"cycles_per_level": -3}})",
       "/sweep/cycles_per_level: expected an integer from 1 to 1000000000, got -3"},
      {R"({"sweep": {"cycles_per_level": 1000000001}})",
       "/sweep/cycles_per_level: expected an integer from 1 to 1000000000, got 1000000001"},
      {R"({"sweep": {"victim": -2}})",
       "/sweep/victim: expected an integer from -1 to 8191, got -2"},
      {R"({"sweep": {"victim": 8192}})",
       "/sweep/victim: expected an integer from -1 to 8191, got 8192"},
      {R"({"sweep": {"levels": [0]}})",
       "/sweep/levels/0: expected an integer from 1 to 8192, got 0"},
      {R"({"sweep": {"levels": [8, 8193]}})",
       "/sweep/levels/1: expected an integer from 1 to 8192, got 8193"},
      {R"({"sim": {"cpus": 1}})", "/sim/cpus: expected an integer from 2 to 8192, got 1"},
      {R"({"sim": {"cpus": 8193}})", "/sim/cpus: expected an integer from 2 to 8192, got 8193"},
      {R"({"sim": {"offline_base_ns": -1}})",
       "/sim/offline_base_ns: expected an integer from 0 to 100000000000, got -1"},
      {R"({"sim": {"online_per_cpu_ns": 100000000001}})",
       "/sim/online_per_cpu_ns: expected an integer from 0 to 100000000000, got 100000000001"},
      {R"({"sim": {"jitter": -0.1}})", "/sim/jitter: expected a number from 0 to 1, got -0.1"},
      {R"({"sim": {"error_rate": 1.5}})",
       "/sim/error_rate: expected a number from 0 to 1, got 1.5"},
  };
  for (const auto& c : kCases)
    EXPECT_EQ(ApplyError(c.doc), std::string("t.json: ") + c.err);
}

TEST(ConfigErrors, BadEnums) {
  EXPECT_EQ(ApplyError(R"({"pattern": "round-robin"})"),
            "t.json: /pattern: expected one of \"roundrobin\", \"all\", \"random\", \"sweep\", "
            "\"fault_sweep\", \"smt\", got "
            "\"round-robin\"");
  EXPECT_EQ(ApplyError(R"({"backend": "proc"})"),
            "t.json: /backend: expected one of \"sysfs\", \"sim\", got \"proc\"");
  EXPECT_EQ(ApplyError(R"({"progress": "Always"})"),
            "t.json: /progress: expected one of \"auto\", \"always\", \"never\", got \"Always\"");
}

TEST(ConfigErrors, BadCpuLists) {
  for (const char* cpus : {"", "\n", "3-1", "a", "1,,2", "1-", "ALL", " 1", "0-99999999"}) {
    EXPECT_EQ(ApplyError(json{{"cpus", cpus}}.dump()),
              "t.json: /cpus: expected \"all\" or a non-empty CPU list like \"1-7,9\", got " +
                  json(cpus).dump());
  }
  EXPECT_EQ(ApplyOk(R"({"cpus": "0,2-3"})").cpus, "0,2-3");
}

TEST(ConfigErrors, PathRules) {
  EXPECT_EQ(ApplyError(R"({"report": ""})"),
            "t.json: /report: expected a non-empty file path, got \"\"");
  EXPECT_EQ(ApplyError(R"({"sysfs_root": "sys/devices/system/cpu"})"),
            "t.json: /sysfs_root: expected an absolute path, got \"sys/devices/system/cpu\"");
  EXPECT_EQ(ApplyError(R"({"sysfs_root": ""})"),
            "t.json: /sysfs_root: expected an absolute path, got \"\"");
  EXPECT_EQ(ApplyError(R"({"oplog": "a\u0000b"})"),
            "t.json: /oplog: a path cannot contain a NUL character, got \"a\\u0000b\"");
  Config cfg = ApplyOk(R"({"oplog": "", "state_dir": ""})");
  EXPECT_EQ(cfg.oplog, "");
  EXPECT_EQ(cfg.state_dir, "");
}

// main passes the command line through ApplyConfigJson: argv bytes that are
// not UTF-8 would make every report and checkpoint unwritable.
TEST(ConfigErrors, NonUtf8PathsFromTheCommandLineAreRefused) {
  for (const char* key : {"report", "oplog", "state_dir", "sysfs_root"}) {
    Config cfg;
    std::string err;
    nlohmann::json overrides = {{key, std::string("/tmp/reports/\xffr.json")}};
    EXPECT_FALSE(ApplyConfigJson(overrides, "command line", &cfg, &err)) << key;
    EXPECT_NE(err.find(std::string("command line: /") + key + ": a path must be valid UTF-8"),
              std::string::npos)
        << err;
  }
}

TEST(ConfigErrors, SweepLevelsMustAscend) {
  EXPECT_EQ(ApplyError(R"({"sweep": {"levels": [8, 16, 16]}})"),
            "t.json: /sweep/levels/2: expected a level above the previous one (16): levels are "
            "strictly ascending, got 16");
  EXPECT_EQ(ApplyError(R"({"sweep": {"levels": []}})"),
            "t.json: /sweep/levels: expected \"auto\" or a non-empty array of online-CPU counts, "
            "got []");
}

TEST(ConfigHealth, DisturbanceAndHealthKeys) {
  Config cfg = ApplyOk(R"({"disturbance": {"enabled": true, "cpus": "0,2", "period": "500us",
                          "fifo_priority": 80, "baseline": "250ms"},
                          "health": {"enabled": false, "on_kernel_warning": "stop",
                                     "per_kind": {"warning": "continue", "rcu_stall": "stop"}}})");
  EXPECT_TRUE(cfg.disturbance.enabled);
  EXPECT_EQ(cfg.disturbance.cpus, "0,2");
  EXPECT_EQ(cfg.disturbance.period_ns, 500000u);
  EXPECT_EQ(cfg.disturbance.fifo_priority, 80);
  EXPECT_EQ(cfg.disturbance.baseline_ns, 250000000u);
  EXPECT_FALSE(cfg.health.enabled);
  EXPECT_TRUE(cfg.health.stop_on_kernel_warning);
  EXPECT_EQ(cfg.health.stop_kind,
            (std::map<std::string, bool>{{"warning", false}, {"rcu_stall", true}}));
  const json j = ConfigToJson(cfg);
  EXPECT_EQ(j["disturbance"]["period"], "500us");
  EXPECT_EQ(j["health"]["per_kind"], json({{"warning", "continue"}, {"rcu_stall", "stop"}}));
  Config back;
  std::string err;
  ASSERT_TRUE(ApplyConfigJson(j, "j", &back, &err)) << err;
  EXPECT_EQ(ConfigToJson(back), j);
  // Defaults: probes off, health on and continuing.
  Config def;
  EXPECT_FALSE(def.disturbance.enabled);
  EXPECT_EQ(def.disturbance.period_ns, 1000000u);
  EXPECT_TRUE(def.health.enabled);
  EXPECT_FALSE(def.health.stop_on_kernel_warning);
}

TEST(ConfigHealth, BadValuesNameTheKey) {
  EXPECT_EQ(ApplyError(R"({"disturbance": {"period": "1us"}})"),
            "t.json: /disturbance/period: expected a period from 10us to 1s, got \"1us\"");
  EXPECT_EQ(ApplyError(R"({"disturbance": {"period": "2s"}})"),
            "t.json: /disturbance/period: expected a period from 10us to 1s, got \"2s\"");
  EXPECT_EQ(ApplyError(R"({"disturbance": {"fifo_priority": 100}})"),
            "t.json: /disturbance/fifo_priority: expected an integer from 0 to 99, got 100");
  EXPECT_EQ(ApplyError(R"({"disturbance": {"cpus": "x"}})"),
            "t.json: /disturbance/cpus: expected \"auto\" or a non-empty CPU list like "
            "\"0,2-3\", got \"x\"");
  EXPECT_EQ(ApplyError(R"({"disturbance": {"baseline": "2h"}})"),
            "t.json: /disturbance/baseline: expected a duration from 0 to 1h, got \"2h\"");
  EXPECT_EQ(ApplyError(R"({"health": {"on_kernel_warning": "panic"}})"),
            "t.json: /health/on_kernel_warning: expected one of \"continue\", \"stop\", got "
            "\"panic\"");
  EXPECT_EQ(ApplyError(R"({"health": {"per_kind": {"warn": "stop"}}})"),
            "t.json: /health/per_kind/warn: unknown key (known keys: soft_lockup, hard_lockup, "
            "rcu_stall, hung_task, failed_online, didnt_die, oops, bug, warning)");
  EXPECT_EQ(ApplyError(R"({"health": {"per_kind": {"bug": true}}})"),
            "t.json: /health/per_kind/bug: expected one of \"continue\", \"stop\", got true");
  EXPECT_EQ(ApplyError(R"({"health": {"per_kind": []}})"),
            "t.json: /health/per_kind: expected a JSON object of kind: \"continue\" or "
            "\"stop\", got []");
}

}  // namespace
}  // namespace cpuhp
