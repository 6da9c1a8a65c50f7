// SPDX-License-Identifier: GPL-2.0
#include "config/config.h"

#include <sys/stat.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/config_documents.h"

namespace cpuhp {
namespace {

using nlohmann::json;

#ifdef CPUHP_SOURCE_DIR
const std::string kSourceDir = CPUHP_SOURCE_DIR;
#else
const std::string kSourceDir = ".";  // the repository root as working directory
#endif

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "config_test.XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string Write(const std::string& name, const std::string& content) const {
    std::string p = path_ + "/" + name;
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Loads `content` from a file; returns the error with the directory cut off.
std::string LoadError(const std::string& content) {
  TempDir dir;
  Config cfg;
  std::string err;
  EXPECT_FALSE(LoadConfigFile(dir.Write("c.json", content), &cfg, &err));
  EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  EXPECT_EQ(err.rfind(dir.path() + "/", 0), 0u) << err;
  return err.substr(dir.path().size() + 1);
}

TEST(ConfigPattern, NamesRoundTrip) {
  for (Pattern p : {Pattern::kRoundRobin, Pattern::kAll, Pattern::kRandom, Pattern::kSweep}) {
    Pattern back = Pattern::kRoundRobin;
    ASSERT_TRUE(ParsePattern(PatternName(p), &back)) << PatternName(p);
    EXPECT_EQ(back, p);
  }
  EXPECT_STREQ(PatternName(Pattern::kRoundRobin), "roundrobin");
  Pattern p = Pattern::kAll;
  EXPECT_FALSE(ParsePattern("RoundRobin", &p));
  EXPECT_FALSE(ParsePattern("", &p));
  EXPECT_EQ(p, Pattern::kAll);
}

// ---- Applying documents ----

TEST(ConfigOrigin, AnErrorNamesTheKeyAsItWasGiven) {
  Config cfg;
  std::string err;
  ASSERT_TRUE(
      ApplyConfigJson(json{{"cpus", "1-3"}, {"sweep", {{"levels", {2, 4}}}}}, "b.json", &cfg, &err))
      << err;
  ASSERT_TRUE(ApplyConfigJson(json{{"sweep", {{"victim", 3}}}}, "--victim", &cfg, &err)) << err;
  EXPECT_EQ(NameOrigin(cfg, "/cpus: CPU 9 does not exist"), "b.json: /cpus: CPU 9 does not exist");
  EXPECT_EQ(NameOrigin(cfg, "/sweep/levels: level 4"), "b.json: /sweep/levels: level 4");
  EXPECT_EQ(NameOrigin(cfg, "/sweep/victim: CPU 3 is not"), "--victim: CPU 3 is not");
  // A later option replaces the file as the key's origin.
  ASSERT_TRUE(ApplyConfigJson(json{{"cpus", "2"}}, "--cpus", &cfg, &err)) << err;
  EXPECT_EQ(NameOrigin(cfg, "/cpus: CPU 9 does not exist"), "--cpus: CPU 9 does not exist");
  // Defaults and errors about no key stay as they are.
  EXPECT_EQ(NameOrigin(cfg, "/min_online: 8 leaves no CPU"), "/min_online: 8 leaves no CPU");
  EXPECT_EQ(NameOrigin(cfg, "report.json: exists"), "report.json: exists");
  // An option's own value error names the option, not the key's path.
  EXPECT_FALSE(ApplyConfigJson(json{{"min_online", -1}}, "--min-online", &cfg, &err));
  EXPECT_EQ(err, "--min-online: expected an integer from 1 to 8192, got -1");
  EXPECT_FALSE(ApplyConfigJson(json{{"min_online", -1}}, "c.json", &cfg, &err));
  EXPECT_EQ(err, "c.json: /min_online: expected an integer from 1 to 8192, got -1");
}

TEST(ConfigApply, EmptyObjectKeepsDefaults) {
  EXPECT_EQ(ConfigToJson(ApplyOk("{}")), ConfigToJson(Config{}));
}

TEST(ConfigApply, AbsentKeysKeepCurrentValues) {
  Config cfg;
  std::string err;
  ASSERT_TRUE(
      ApplyConfigJson(json::parse(R"({"iterations": 5, "sim": {"cpus": 64}})"), "a", &cfg, &err));
  ASSERT_TRUE(
      ApplyConfigJson(json::parse(R"({"pattern": "all", "sim": {"jitter": 0}})"), "b", &cfg, &err));
  EXPECT_EQ(cfg.iterations, 5u);
  EXPECT_EQ(cfg.sim.cpus, 64);
  EXPECT_EQ(cfg.sim.jitter, 0.0);
  EXPECT_EQ(cfg.pattern, Pattern::kAll);
}

TEST(ConfigApply, SetsEveryKey) {
  Config cfg = ApplyOk(R"({
    "comment": "all keys", "pattern": "sweep", "cpus": "1-7,9", "min_online": 2,
    "iterations": 1000000000000, "duration": "2h30m", "seed": 18446744073709551615,
    "stop_on_error": true, "interval": "500ms", "backend": "sim", "sysfs_root": "/tmp/fake",
    "state_dir": "/run/x", "report": "r.json", "oplog": "ops.jsonl", "progress": "never",
    "sweep": {"levels": [2, 4, 8192], "cycles_per_level": 1000000000, "victim": 8191},
    "sim": {"cpus": 8192, "offline_base_ns": 0, "offline_per_cpu_ns": 100000000000,
            "online_base_ns": 1, "online_per_cpu_ns": 2, "jitter": 1, "error_rate": 0.5}})");
  EXPECT_EQ(cfg.pattern, Pattern::kSweep);
  EXPECT_EQ(cfg.cpus, "1-7,9");
  EXPECT_EQ(cfg.min_online, 2);
  EXPECT_EQ(cfg.iterations, 1000000000000u);
  EXPECT_EQ(cfg.duration_ns, 9000000000000u);
  EXPECT_EQ(cfg.seed, std::optional<uint64_t>(UINT64_MAX));
  EXPECT_TRUE(cfg.stop_on_error);
  EXPECT_EQ(cfg.interval_ns, 500000000u);
  EXPECT_EQ(cfg.backend, "sim");
  EXPECT_EQ(cfg.sysfs_root, "/tmp/fake");
  EXPECT_EQ(cfg.state_dir, "/run/x");
  EXPECT_EQ(cfg.report, "r.json");
  EXPECT_EQ(cfg.oplog, "ops.jsonl");
  EXPECT_EQ(cfg.progress, ProgressMode::kNever);
  EXPECT_EQ(cfg.sweep.levels, (std::vector<int>{2, 4, 8192}));
  EXPECT_EQ(cfg.sweep.cycles_per_level, 1000000000);
  EXPECT_EQ(cfg.sweep.victim, 8191);
  EXPECT_EQ(cfg.sim.cpus, 8192);
  EXPECT_EQ(cfg.sim.offline_base_ns, 0u);
  EXPECT_EQ(cfg.sim.offline_per_cpu_ns, 100000000000u);
  EXPECT_EQ(cfg.sim.online_base_ns, 1u);
  EXPECT_EQ(cfg.sim.online_per_cpu_ns, 2u);
  EXPECT_EQ(cfg.sim.jitter, 1.0);
  EXPECT_EQ(cfg.sim.error_rate, 0.5);
}

TEST(ConfigApply, SeedNullMeansDrawAtStart) {
  Config cfg;
  cfg.seed = 42;
  std::string err;
  ASSERT_TRUE(ApplyConfigJson(json::parse(R"({"seed": null})"), "t", &cfg, &err)) << err;
  EXPECT_FALSE(cfg.seed.has_value());
  EXPECT_EQ(ApplyOk(R"({"seed": 0})").seed, std::optional<uint64_t>(0));
}

TEST(ConfigApply, SweepLevelsAutoClearsList) {
  Config cfg;
  cfg.sweep.levels = {2, 4};
  std::string err;
  ASSERT_TRUE(ApplyConfigJson(json::parse(R"({"sweep": {"levels": "auto"}})"), "t", &cfg, &err));
  EXPECT_TRUE(cfg.sweep.levels.empty());
}

TEST(ConfigApply, ErrorLeavesConfigUnchanged) {
  Config cfg;
  cfg.iterations = 7;
  const json before = ConfigToJson(cfg);
  std::string err;
  // Keys apply in name order: backend and iterations would be set before
  // min_online fails.
  EXPECT_FALSE(ApplyConfigJson(
      json::parse(R"({"backend": "sim", "iterations": 9, "min_online": 0, "sim": {"cpus": 4}})"),
      "t.json", &cfg, &err));
  EXPECT_EQ(err, "t.json: /min_online: expected an integer from 1 to 8192, got 0");
  EXPECT_EQ(ConfigToJson(cfg), before);
  EXPECT_FALSE(
      ApplyConfigJson(json::parse(R"({"sim": {"cpus": 4, "jitter": 2}})"), "t.json", &cfg, &err));
  EXPECT_EQ(ConfigToJson(cfg), before);
}

// ---- Files ----

TEST(ConfigFile, LoadsAndNamesFileInValidationErrors) {
  TempDir dir;
  Config cfg;
  std::string err;
  ASSERT_TRUE(LoadConfigFile(dir.Write("ok.json", R"({"iterations": 3})"), &cfg, &err)) << err;
  EXPECT_EQ(cfg.iterations, 3u);
  const std::string bad = dir.Write("bad.json", R"({"iterations": 3, "min_online": -1})");
  EXPECT_FALSE(LoadConfigFile(bad, &cfg, &err));
  EXPECT_EQ(err, bad + ": /min_online: expected an integer from 1 to 8192, got -1");
  EXPECT_EQ(cfg.iterations, 3u);
}

TEST(ConfigFile, DuplicateKeysAreRefusedLikeUnknownOnes) {
  EXPECT_EQ(LoadError(R"({"iterations": 100, "pattern": "all", "iterations": 5})"),
            "c.json: /iterations: duplicate key (each key once)");
  EXPECT_EQ(LoadError(R"({"faults": {"rate": 0.1, "rate": 0.2}})"),
            "c.json: /faults/rate: duplicate key (each key once)");
}

TEST(ConfigFile, UnreadablePaths) {
  TempDir dir;
  Config cfg;
  std::string err;
  EXPECT_FALSE(LoadConfigFile(dir.path() + "/missing.json", &cfg, &err));
  EXPECT_EQ(err, dir.path() + "/missing.json: cannot read: No such file or directory");
  EXPECT_FALSE(LoadConfigFile(dir.path(), &cfg, &err));
  EXPECT_EQ(err, dir.path() + ": cannot read: Is a directory");
  EXPECT_EQ(ConfigToJson(cfg), ConfigToJson(Config{}));
}

TEST(ConfigFile, InvalidJsonHasLineAndColumn) {
  EXPECT_EQ(LoadError(""),
            "c.json: invalid JSON at line 1, column 1: unexpected end of input; expected '[', "
            "'{', or a literal");
  // Truncated mid-file.
  EXPECT_EQ(LoadError("{\n  \"pattern\": \"all\",\n  \"iterations\": 10"),
            "c.json: invalid JSON at line 3, column 19: unexpected end of input; expected '}'");
  EXPECT_EQ(LoadError("{\n  \"pattern\": \"all\",\n}\n"),
            "c.json: invalid JSON at line 3, column 1: unexpected '}'; expected string literal");
  EXPECT_EQ(LoadError("{\"report\": \"a\nb\"}"),
            "c.json: invalid JSON at line 1, column 14: invalid string: control character U+000A "
            "(LF) must be escaped to \\u000A or \\n");
  EXPECT_EQ(LoadError("{} {}"),
            "c.json: invalid JSON at line 1, column 4: unexpected '{'; expected end of input");
  // Comments are not JSON; use the "comment" key.
  EXPECT_PRED2(StartsWith, LoadError("// x\n{}"), "c.json: invalid JSON at line 1, column 1");
}

TEST(ConfigFile, BinaryGarbageIsInvalidJson) {
  const char kElf[] =
      "\x7f"
      "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0\x01\0\0\0\xff\xfe\n\r";
  std::string elf(kElf, sizeof kElf - 1);
  EXPECT_EQ(LoadError(elf), "c.json: invalid JSON at line 1, column 1: invalid literal");
  // Raw bytes inside a string are not echoed back.
  EXPECT_EQ(LoadError("{\"report\": \"\xff\xfe\x01\"}"),
            "c.json: invalid JSON at line 1, column 13: invalid string: ill-formed UTF-8 byte");
}

TEST(ConfigFile, HugeNumberIsRejectedWithPosition) {
  EXPECT_EQ(LoadError("{\n  \"iterations\": 1e400\n}"),
            "c.json: invalid JSON at line 2, column 17: number overflow parsing '1e400'");
  EXPECT_EQ(LoadError("{\"sim\": {\"jitter\": -1e400}}"),
            "c.json: invalid JSON at line 1, column 20: number overflow parsing '-1e400'");
  EXPECT_EQ(LoadError("1e400"),
            "c.json: invalid JSON at line 1, column 1: number overflow parsing '1e400'");
}

TEST(ConfigFile, DeepNestingIsRefusedBeforeParsing) {
  EXPECT_EQ(LoadError(std::string(100000, '[')),
            "c.json: invalid JSON at line 1, column 65: nested deeper than 64 levels");
  EXPECT_EQ(LoadError("{\"sweep\":\n" + std::string(100000, '{')),
            "c.json: invalid JSON at line 2, column 64: nested deeper than 64 levels");
  // 64 levels parse; the error is then about the value.
  EXPECT_EQ(LoadError("{\"comment\": " + std::string(63, '[') + std::string(63, ']') + "}"),
            "c.json: /comment: expected a string, got " + std::string(37, '[') + "...");
  // Brackets in strings do not count.
  TempDir dir;
  Config cfg;
  std::string err;
  EXPECT_TRUE(LoadConfigFile(
      dir.Write("s.json", "{\"comment\": \"\\\"" + std::string(1000, '[') + "\"}"), &cfg, &err))
      << err;
}

TEST(ConfigFile, RefusesFilesOverOneMiB) {
  const std::string doc = R"({"iterations": 3})";
  std::string at_limit = doc + std::string((1 << 20) - doc.size(), ' ');
  TempDir dir;
  Config cfg;
  std::string err;
  EXPECT_TRUE(LoadConfigFile(dir.Write("limit.json", at_limit), &cfg, &err)) << err;
  EXPECT_EQ(LoadError(at_limit + " "), "c.json: too large (more than 1 MiB)");
}

// ---- Shipped configs and the JSON form ----

std::vector<std::string> ShippedConfigs() {
  std::vector<std::string> paths;
  for (const auto& e : std::filesystem::directory_iterator(kSourceDir + "/configs"))
    if (e.path().extension() == ".json")
      paths.push_back(e.path().string());
  std::sort(paths.begin(), paths.end());
  return paths;
}

Config LoadShipped(const std::string& name) {
  Config cfg;
  std::string err;
  EXPECT_TRUE(LoadConfigFile(kSourceDir + "/configs/" + name, &cfg, &err)) << err;
  return cfg;
}

TEST(ConfigShipped, EveryFileLoadsAndRoundTrips) {
  std::set<std::string> names;
  for (const std::string& path : ShippedConfigs()) {
    names.insert(std::filesystem::path(path).filename().string());
    Config cfg;
    std::string err;
    ASSERT_TRUE(LoadConfigFile(path, &cfg, &err)) << err;
    const json j = ConfigToJson(cfg);
    Config again;
    ASSERT_TRUE(ApplyConfigJson(j, "roundtrip", &again, &err)) << path << ": " << err;
    EXPECT_EQ(ConfigToJson(again), j) << path;
  }
  for (const char* want :
       {"default.json", "soak-24h.json", "all-cpus.json", "sweep.json", "random.json"})
    EXPECT_EQ(names.count(want), 1u) << want;
}

TEST(ConfigShipped, DefaultJsonIsWhatRunsWithoutConfig) {
  EXPECT_EQ(ConfigToJson(LoadShipped("default.json")), ConfigToJson(Config{}));
  Config cfg = LoadShipped("default.json");
  EXPECT_EQ(cfg.pattern, Pattern::kRoundRobin);
  EXPECT_EQ(cfg.cpus, "all");
  EXPECT_EQ(cfg.min_online, 1);
  EXPECT_EQ(IterationLimit(cfg), 1000u);
}

// default.json says it lists every key at its default: the file itself,
// not only what it loads to, is the built-in config (`run --print-config`).
TEST(ConfigShipped, DefaultJsonListsEveryKeyAtItsDefault) {
  std::ifstream in(kSourceDir + "/configs/default.json");
  json file = json::parse(in);
  file.erase("comment");
  const json code = ConfigToJson(Config{});
  const json code_flat = code.flatten();  // items() refers into it
  const json file_flat = file.flatten();
  for (const auto& [key, value] : code_flat.items())
    EXPECT_TRUE(file_flat.contains(key)) << "default.json lacks " << key;
  EXPECT_EQ(file, code) << "default.json: " << json::diff(code, file).dump();
}

// The key table's Default column is the code's default, for every key.
TEST(ConfigShipped, ReadmeDefaultsAreTheCodesDefaults) {
  std::ifstream in(kSourceDir + "/configs/README.md");
  const json defaults = ConfigToJson(Config{});
  std::string line;
  int rows = 0;
  while (std::getline(in, line)) {
    // | `/key` | type | `default` | range | meaning |
    if (line.rfind("| `/", 0) != 0)
      continue;
    std::vector<std::string> cells;
    std::stringstream row(line.substr(1));
    for (std::string cell; std::getline(row, cell, '|');) {
      const size_t b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
      cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
    }
    ASSERT_GE(cells.size(), 3u) << line;
    const std::string key = cells[0].substr(1, cells[0].size() - 2);
    const std::string def = cells[2];
    if (key == "/comment")
      continue;
    const json::json_pointer ptr(key);
    ASSERT_TRUE(defaults.contains(ptr))
        << "configs/README.md documents " << key << ", which the code does not have";
    ++rows;
    if (defaults[ptr].is_object() && def.empty())
      continue;
    ASSERT_TRUE(def.size() > 2 && def.front() == '`' && def.back() == '`') << key << ": " << def;
    EXPECT_EQ(json::parse(def.substr(1, def.size() - 2)), defaults[ptr])
        << "configs/README.md: " << key << " default " << def;
  }
  size_t keys = 0;
  for (auto it = defaults.begin(); it != defaults.end(); ++it)
    keys += 1 + (it->is_object() && it.key() != "per_kind" ? it->size() : 0);
  EXPECT_EQ(static_cast<size_t>(rows), keys);
}

// A default the user never typed does not end a duration, a sweep or a
// fault sweep; a number they typed does.
TEST(ConfigIterations, AutoLimitOnlyForOpenEndedPatternsWithoutDuration) {
  Config cfg;
  EXPECT_FALSE(cfg.iterations.has_value());
  EXPECT_EQ(IterationLimit(cfg), kDefaultIterations);
  cfg.duration_ns = 24ull * 3600 * 1000000000;
  EXPECT_EQ(IterationLimit(cfg), 0u);
  cfg.duration_ns = 0;
  cfg.pattern = Pattern::kSweep;
  EXPECT_EQ(IterationLimit(cfg), 0u);
  cfg.pattern = Pattern::kFaultSweep;
  EXPECT_EQ(IterationLimit(cfg), 0u);
  cfg.iterations = 5;
  EXPECT_EQ(IterationLimit(cfg), 5u);
  cfg = ApplyOk(R"({"iterations": "auto", "pattern": "all", "duration": "1h"})");
  EXPECT_EQ(IterationLimit(cfg), 0u);
  EXPECT_EQ(ConfigToJson(cfg)["iterations"], "auto");
}

TEST(ConfigShipped, EachFileSaysWhatItRuns) {
  Config soak = LoadShipped("soak-24h.json");
  EXPECT_EQ(soak.pattern, Pattern::kAll);
  EXPECT_EQ(soak.duration_ns, 24ull * 3600 * 1000000000);
  EXPECT_EQ(IterationLimit(soak), 0u);
  // A lab soak leaves numbers behind even if the board dies at hour 20.
  EXPECT_EQ(soak.interim_interval_ns, 3600ull * 1000000000);
  EXPECT_FALSE(soak.stop_on_error);
  EXPECT_EQ(soak.oplog, "");
  Config all = LoadShipped("all-cpus.json");
  EXPECT_EQ(all.pattern, Pattern::kAll);
  EXPECT_EQ(all.iterations, 10000u);
  Config sweep = LoadShipped("sweep.json");
  EXPECT_EQ(sweep.pattern, Pattern::kSweep);
  EXPECT_TRUE(sweep.sweep.levels.empty());
  // compare needs about 1000 per level and side for a p99 interval.
  EXPECT_GE(sweep.sweep.cycles_per_level, 1000);
  EXPECT_EQ(IterationLimit(sweep), 0u);  // the sweep ends itself; a limit would cut it short
  Config random = LoadShipped("random.json");
  EXPECT_EQ(random.pattern, Pattern::kRandom);
  EXPECT_EQ(random.iterations, 10000u);
  EXPECT_EQ(random.seed, std::optional<uint64_t>(1));
}

TEST(ConfigShipped, ReadmeDocumentsEveryKey) {
  std::ifstream in(kSourceDir + "/configs/README.md");
  ASSERT_TRUE(in) << "configs/README.md";
  std::stringstream readme;
  readme << in.rdbuf();
  std::vector<std::string> keys = {"/comment"};
  const json j = ConfigToJson(Config{});
  for (auto it = j.begin(); it != j.end(); ++it) {
    keys.push_back("/" + it.key());
    if (it->is_object())
      for (auto sub = it->begin(); sub != it->end(); ++sub)
        keys.push_back("/" + it.key() + "/" + sub.key());
  }
  for (const std::string& key : keys)
    EXPECT_NE(readme.str().find("`" + key + "`"), std::string::npos) << key;
}

TEST(ConfigToJson, RoundTripsEveryField) {
  Config cfg;
  cfg.pattern = Pattern::kRandom;
  cfg.cpus = "2,4-6";
  cfg.min_online = 3;
  cfg.iterations = 0;
  cfg.duration_ns = 9000000000001;
  cfg.seed = UINT64_MAX;
  cfg.stop_on_error = true;
  cfg.lost_cpu_after = 0;
  cfg.tracepoints = false;
  cfg.interval_ns = 1500;
  cfg.backend = "sim";
  cfg.sysfs_root = "/tmp/sys";
  cfg.state_dir = "/tmp/state";
  cfg.report = "out/report.json";
  cfg.oplog = "out/ops.jsonl";
  cfg.progress = ProgressMode::kAlways;
  cfg.sweep = {{1, 3, 9}, 7, 5};
  cfg.smt = {{"2", "4"}, "threads", 12};
  cfg.sim = {16, 1, 2, 3, 4, 0.1, 0.3};
  cfg.sim.threads_per_core = 4;
  cfg.kmod = {false, "/dev/other_probe"};
  cfg.kernel_phases_source = "both";
  cfg.kernel_phases_bpf_attach = "kprobe";
  cfg.stuck_give_up_ns = 90000000000;
  const json j = ConfigToJson(cfg);
  EXPECT_EQ(j["stuck_give_up"], "1m30s");
  EXPECT_EQ(j["duration"], "2h30m1ns");
  EXPECT_EQ(j["interval"], "1us500ns");
  EXPECT_EQ(j["seed"], UINT64_MAX);
  EXPECT_EQ(j["progress"], "always");
  EXPECT_EQ(j["lost_cpu_after"], 0);
  EXPECT_EQ(j["sweep"]["levels"], json({1, 3, 9}));
  Config back;
  std::string err;
  ASSERT_TRUE(ApplyConfigJson(j, "j", &back, &err)) << err;
  EXPECT_EQ(ConfigToJson(back), j);
  EXPECT_EQ(back.sim.jitter, 0.1);
  EXPECT_EQ(back.seed, cfg.seed);
  EXPECT_FALSE(back.kmod.enabled);
  EXPECT_EQ(back.kmod.device, "/dev/other_probe");
  EXPECT_EQ(back.kernel_phases_source, "both");
  EXPECT_EQ(back.kernel_phases_bpf_attach, "kprobe");
  EXPECT_EQ(back.stuck_give_up_ns, 90000000000u);
  EXPECT_EQ(back.smt.modes[1], "4");
  EXPECT_EQ(back.smt.switches, 12u);
  EXPECT_EQ(back.sim.threads_per_core, 4);

  const json d = ConfigToJson(Config{});
  EXPECT_EQ(d["seed"], nullptr);
  EXPECT_EQ(d["sweep"]["levels"], "auto");
  EXPECT_EQ(d["duration"], "0");
  EXPECT_EQ(d.size(), 30u);  // every struct key, no "comment"
}

TEST(ConfigStateDir, ConfigThenEnvironmentThenDefault) {
  const char* saved = std::getenv("STATE_DIRECTORY");
  std::string saved_value = saved ? saved : "";
  Config cfg;
  unsetenv("STATE_DIRECTORY");
  EXPECT_EQ(ResolveStateDir(cfg), "/var/lib/cpuhp-stress");
  setenv("STATE_DIRECTORY", "", 1);
  EXPECT_EQ(ResolveStateDir(cfg), "/var/lib/cpuhp-stress");
  setenv("STATE_DIRECTORY", "/var/lib/a:/var/lib/b", 1);
  EXPECT_EQ(ResolveStateDir(cfg), "/var/lib/a");
  setenv("STATE_DIRECTORY", ":/var/lib/b", 1);
  EXPECT_EQ(ResolveStateDir(cfg), "/var/lib/cpuhp-stress");
  cfg.state_dir = "/srv/state";
  EXPECT_EQ(ResolveStateDir(cfg), "/srv/state");
  if (saved)
    setenv("STATE_DIRECTORY", saved_value.c_str(), 1);
  else
    unsetenv("STATE_DIRECTORY");
}

}  // namespace
}  // namespace cpuhp
