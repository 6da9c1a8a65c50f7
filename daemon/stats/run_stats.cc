// SPDX-License-Identifier: GPL-2.0
#include "stats/run_stats.h"

#include <algorithm>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "util/errno_name.h"
#include "util/json_file.h"

namespace cpuhp {

namespace {

using nlohmann::json;

// Bounds the per-CPU vector against a corrupt record or checkpoint (Linux
// caps NR_CPUS at 8192). CPUs outside [0, kCpuLimit) still count in totals,
// directions, online counts and errno tables, just not in per-CPU histograms.
constexpr int kCpuLimit = 1 << 16;

bool CpuInRange(int cpu) {
  return cpu >= 0 && cpu < kCpuLimit;
}

const char* const kDirNames[kDirections] = {"offline", "online"};

// Field readers: on failure they set *msg to "<path>: <problem>".
bool ReadInt(const json& obj, const std::string& path, const char* key, int lo, int* out,
             std::string* msg) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    *msg = path + key + ": missing";
    return false;
  }
  if (it->is_number_integer()) {
    int64_t v = it->is_number_unsigned()
                    ? static_cast<int64_t>(std::min<uint64_t>(it->get<uint64_t>(), INT64_MAX))
                    : it->get<int64_t>();
    if (v >= lo && v <= std::numeric_limits<int>::max()) {
      *out = static_cast<int>(v);
      return true;
    }
  }
  *msg = path + key + ": expected an integer >= " + std::to_string(lo);
  return false;
}

bool ReadHistogram(const json& obj, const std::string& path, const char* key, Histogram* out,
                   std::string* msg) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    *msg = path + key + ": missing";
    return false;
  }
  std::string herr;
  if (!out->FromJson(*it, &herr)) {
    *msg = path + key + ": " + herr;
    return false;
  }
  return true;
}

bool ReadArray(const json& obj, const char* key, const json** out, std::string* msg) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_array()) {
    *msg = std::string(key) + ": expected an array";
    return false;
  }
  *out = &*it;
  return true;
}

bool ReadDirObject(const json& obj, const char* key, const json** out, std::string* msg) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_object() || it->size() != kDirections ||
      !it->contains("offline") || !it->contains("online")) {
    *msg = std::string(key) + ": expected an object with \"offline\" and \"online\"";
    return false;
  }
  *out = &*it;
  return true;
}

json ErrorEntry(int err, uint64_t count) {
  return json{{"errno", err}, {"name", ErrnoName(err)}, {"count", count}};
}

}  // namespace

json SummarizeHistogram(const Histogram& h) {
  return json{{"count", h.count()},
              {"min_ns", h.min_ns()},
              {"max_ns", h.max_ns()},
              {"mean_ns", h.mean_ns()},
              {"stddev_ns", h.stddev_ns()},
              {"p50_ns", h.PercentileNs(50)},
              {"p90_ns", h.PercentileNs(90)},
              {"p99_ns", h.PercentileNs(99)},
              {"p99_9_ns", h.PercentileNs(99.9)}};
}

json SummarizeWithHistogram(const Histogram& h) {
  json j = SummarizeHistogram(h);
  j["histogram"] = h.ToJson();
  return j;
}

RunStats::RunStats(int max_cpus) {
  by_cpu_.resize(static_cast<size_t>(std::clamp(max_cpus, 0, kCpuLimit)) * kDirections);
}

Histogram& RunStats::cpu_hist(int cpu, Direction d) {
  size_t i = static_cast<size_t>(cpu) * kDirections + static_cast<size_t>(d);
  if (i >= by_cpu_.size()) {
    by_cpu_.resize((static_cast<size_t>(cpu) + 1) * kDirections);
  }
  return by_cpu_[i];
}

const Histogram& RunStats::by_cpu(int cpu, Direction d) const {
  static const Histogram kEmpty;
  if (cpu < 0) {
    return kEmpty;
  }
  size_t i = static_cast<size_t>(cpu) * kDirections + static_cast<size_t>(d);
  return i < by_cpu_.size() ? by_cpu_[i] : kEmpty;
}

void RunStats::Add(const OpRecord& rec) {
  if (smt_)
    smt_->Add(rec);
  int d = static_cast<int>(rec.dir);
  timeline_.Add(rec);
  ops_++;
  ops_by_dir_[d]++;
  if (!rec.readback_ok) {
    readback_mismatches_++;
    if (!rec.smt_control)
      readback_by_cpu_[rec.cpu]++;
  }
  setup_ops_ += rec.setup;
  smt_control_ops_ += rec.smt_control;
  if (rec.err != 0) {
    failed_ops_++;
    setup_failed_ops_ += rec.setup;
    smt_control_failed_ops_ += rec.smt_control;
    errors_by_cpu_[{rec.cpu, rec.err}]++;  // cpu -1: an smt/control write
    failed_by_cpu_dir_[{rec.cpu, d}]++;
    return;
  }
  // A switch of many CPUs is no one CPU's write: it has its own table
  // (smt_switches.h), not the per-direction, per-online-count or per-CPU
  // latency tables.
  if (rec.setup || rec.smt_control)
    return;
  by_dir_[d].Record(rec.duration_ns);
  by_online_[d][rec.online_before].Record(rec.duration_ns);
  if (CpuInRange(rec.cpu)) {
    cpu_hist(rec.cpu, rec.dir).Record(rec.duration_ns);
  }
}

std::map<int, uint64_t> RunStats::errors_by_errno() const {
  std::map<int, uint64_t> out;
  for (const auto& [key, count] : errors_by_cpu_) {
    out[key.second] += count;
  }
  return out;
}

std::vector<int> RunStats::cpus_seen() const {
  // Every operation either succeeded (a per-CPU histogram) or failed (an
  // errno entry); readback mismatches are a subset of those.
  std::set<int> cpus;
  for (size_t i = 0; i < by_cpu_.size(); i++) {
    if (by_cpu_[i].count() != 0) {
      cpus.insert(static_cast<int>(i / kDirections));
    }
  }
  for (const auto& [key, count] : errors_by_cpu_) {
    if (CpuInRange(key.first)) {
      cpus.insert(key.first);
    }
  }
  return std::vector<int>(cpus.begin(), cpus.end());
}

void RunStats::Merge(const RunStats& other) {
  if (&other == this) {
    RunStats copy(other);
    Merge(copy);
    return;
  }
  ops_ += other.ops_;
  failed_ops_ += other.failed_ops_;
  readback_mismatches_ += other.readback_mismatches_;
  setup_ops_ += other.setup_ops_;
  setup_failed_ops_ += other.setup_failed_ops_;
  smt_control_ops_ += other.smt_control_ops_;
  smt_control_failed_ops_ += other.smt_control_failed_ops_;
  for (int d = 0; d < kDirections; d++) {
    ops_by_dir_[d] += other.ops_by_dir_[d];
    by_dir_[d].Merge(other.by_dir_[d]);
    for (const auto& [online, h] : other.by_online_[d]) {
      by_online_[d][online].Merge(h);
    }
  }
  if (other.by_cpu_.size() > by_cpu_.size()) {
    by_cpu_.resize(other.by_cpu_.size());
  }
  for (size_t i = 0; i < other.by_cpu_.size(); i++) {
    by_cpu_[i].Merge(other.by_cpu_[i]);
  }
  for (const auto& [key, count] : other.errors_by_cpu_) {
    errors_by_cpu_[key] += count;
  }
  for (const auto& [cpu, count] : other.readback_by_cpu_) {
    readback_by_cpu_[cpu] += count;
  }
  for (const auto& [key, count] : other.failed_by_cpu_dir_) {
    failed_by_cpu_dir_[key] += count;
  }
}

json RunStats::ToJson() const {
  json totals = {{"ops", ops_},
                 {"ok", ops_ - failed_ops_},
                 {"failed", failed_ops_},
                 {"readback_mismatches", readback_mismatches_},
                 {"setup_ops", setup_ops_},
                 {"offline_ops", ops_by_dir_[0]},
                 {"online_ops", ops_by_dir_[1]}};

  json directions = json::object();
  for (int d = 0; d < kDirections; d++) {
    directions[kDirNames[d]] = SummarizeHistogram(by_dir_[d]);
    directions[kDirNames[d]]["histogram"] = by_dir_[d].ToJson();
  }

  json per_cpu = json::array();
  for (int cpu : cpus_seen()) {
    json errors = json::array();
    for (auto it = errors_by_cpu_.lower_bound({cpu, std::numeric_limits<int>::min()});
         it != errors_by_cpu_.end() && it->first.first == cpu; ++it) {
      errors.push_back(ErrorEntry(it->first.second, it->second));
    }
    auto rb = readback_by_cpu_.find(cpu);
    auto failed = [&](int d) {
      auto f = failed_by_cpu_dir_.find({cpu, d});
      return f == failed_by_cpu_dir_.end() ? uint64_t{0} : f->second;
    };
    per_cpu.push_back({{"cpu", cpu},
                       {"offline", SummarizeHistogram(by_cpu(cpu, Direction::kOffline))},
                       {"online", SummarizeHistogram(by_cpu(cpu, Direction::kOnline))},
                       {"offline_failed", failed(0)},
                       {"online_failed", failed(1)},
                       {"errors", std::move(errors)},
                       {"readback_mismatches", rb == readback_by_cpu_.end() ? 0 : rb->second}});
  }

  json per_online = json::object();
  for (int d = 0; d < kDirections; d++) {
    json levels = json::array();
    for (const auto& [online, h] : by_online_[d]) {
      json level = SummarizeHistogram(h);
      level["online_cpus"] = online;
      level["histogram"] = h.ToJson();
      levels.push_back(std::move(level));
    }
    per_online[kDirNames[d]] = std::move(levels);
  }

  json by_errno = json::array();
  for (const auto& [err, count] : errors_by_errno()) {
    by_errno.push_back(ErrorEntry(err, count));
  }
  json by_cpu_errors = json::array();
  for (const auto& [key, count] : errors_by_cpu_) {
    json e = ErrorEntry(key.second, count);
    e["cpu"] = key.first;
    by_cpu_errors.push_back(std::move(e));
  }

  json out =
      json{{"totals", std::move(totals)},
           {"directions", std::move(directions)},
           {"per_cpu", std::move(per_cpu)},
           {"per_online_count", std::move(per_online)},
           {"errors", {{"by_errno", std::move(by_errno)}, {"by_cpu", std::move(by_cpu_errors)}}}};
  out["timeline"] = timeline_.ToJson();
  return out;
}

// Checkpoint form. Histograms keep their buckets; only non-empty per-CPU
// histograms are written, so the size follows the CPUs actually used.
json RunStats::StateToJson() const {
  json ops_by_dir = json::object();
  json by_dir = json::object();
  json by_online = json::object();
  for (int d = 0; d < kDirections; d++) {
    ops_by_dir[kDirNames[d]] = ops_by_dir_[d];
    by_dir[kDirNames[d]] = by_dir_[d].ToJson();
    json levels = json::array();
    for (const auto& [online, h] : by_online_[d]) {
      levels.push_back({{"online_cpus", online}, {"histogram", h.ToJson()}});
    }
    by_online[kDirNames[d]] = std::move(levels);
  }
  json by_cpu = json::array();
  for (size_t i = 0; i < by_cpu_.size(); i++) {
    if (by_cpu_[i].count() != 0) {
      by_cpu.push_back({{"cpu", i / kDirections},
                        {"direction", kDirNames[i % kDirections]},
                        {"histogram", by_cpu_[i].ToJson()}});
    }
  }
  json errors = json::array();
  for (const auto& [key, count] : errors_by_cpu_) {
    errors.push_back({{"cpu", key.first}, {"errno", key.second}, {"count", count}});
  }
  json readback = json::array();
  for (const auto& [cpu, count] : readback_by_cpu_) {
    readback.push_back({{"cpu", cpu}, {"count", count}});
  }
  json failed_by_dir = json::array();
  for (const auto& [key, count] : failed_by_cpu_dir_) {
    failed_by_dir.push_back(
        {{"cpu", key.first}, {"direction", kDirNames[key.second]}, {"count", count}});
  }
  json out{{"ops", ops_},
           {"failed_ops", failed_ops_},
           {"readback_mismatches", readback_mismatches_},
           {"setup_ops", setup_ops_},
           {"setup_failed_ops", setup_failed_ops_},
           {"smt_control_ops", smt_control_ops_},
           {"smt_control_failed_ops", smt_control_failed_ops_},
           {"ops_by_direction", std::move(ops_by_dir)},
           {"by_direction", std::move(by_dir)},
           {"by_online_count", std::move(by_online)},
           {"by_cpu", std::move(by_cpu)},
           {"errors_by_cpu", std::move(errors)},
           {"readback_by_cpu", std::move(readback)},
           {"failed_by_cpu_direction", std::move(failed_by_dir)},
           {"timeline", timeline_.StateToJson()}};
  if (smt_)
    out["smt"] = smt_->StateToJson();
  return out;
}

bool RunStats::StateFromJson(const json& j, std::string* err) {
  std::string msg;
  auto fail = [&](const std::string& m) {
    if (err) {
      *err = "run stats: " + m;
    }
    return false;
  };
  if (!j.is_object()) {
    return fail("expected an object");
  }
  RunStats s;
  const json* ops_by_dir = nullptr;
  const json* by_dir = nullptr;
  const json* by_online = nullptr;
  const json* by_cpu = nullptr;
  const json* errors = nullptr;
  const json* readback = nullptr;
  if (!ReadU64Field(j, "", "ops", &s.ops_, &msg) ||
      !ReadU64Field(j, "", "failed_ops", &s.failed_ops_, &msg) ||
      !ReadU64Field(j, "", "readback_mismatches", &s.readback_mismatches_, &msg) ||
      !ReadDirObject(j, "ops_by_direction", &ops_by_dir, &msg) ||
      !ReadDirObject(j, "by_direction", &by_dir, &msg) ||
      !ReadDirObject(j, "by_online_count", &by_online, &msg) ||
      !ReadArray(j, "by_cpu", &by_cpu, &msg) || !ReadArray(j, "errors_by_cpu", &errors, &msg) ||
      !ReadArray(j, "readback_by_cpu", &readback, &msg)) {
    return fail(msg);
  }

  uint64_t ok_in_histograms = 0;
  for (int d = 0; d < kDirections; d++) {
    std::string dir = kDirNames[d];
    if (!ReadU64Field(*ops_by_dir, "ops_by_direction.", kDirNames[d], &s.ops_by_dir_[d], &msg) ||
        !ReadHistogram(*by_dir, "by_direction.", kDirNames[d], &s.by_dir_[d], &msg)) {
      return fail(msg);
    }
    if (s.by_dir_[d].count() > s.ops_by_dir_[d]) {
      return fail("by_direction." + dir + ": more samples than ops_by_direction." + dir);
    }
    ok_in_histograms += s.by_dir_[d].count();
    const json& levels = (*by_online)[dir];
    if (!levels.is_array()) {
      return fail("by_online_count." + dir + ": expected an array");
    }
    uint64_t level_sum = 0;
    for (size_t i = 0; i < levels.size(); i++) {
      std::string item = "by_online_count." + dir + "[" + std::to_string(i) + "]";
      std::string path = item + ".";
      int online = 0;
      Histogram h;
      if (!levels[i].is_object()) {
        return fail(item + ": expected an object");
      }
      if (!ReadInt(levels[i], path, "online_cpus", std::numeric_limits<int>::min(), &online,
                   &msg) ||
          !ReadHistogram(levels[i], path, "histogram", &h, &msg)) {
        return fail(msg);
      }
      if (s.by_online_[d].count(online)) {
        return fail(path + "online_cpus: duplicate " + std::to_string(online));
      }
      level_sum += h.count();
      s.by_online_[d].emplace(online, std::move(h));
    }
    if (level_sum != s.by_dir_[d].count()) {
      return fail("by_online_count." + dir + ": counts add up to " + std::to_string(level_sum) +
                  ", by_direction." + dir + " has " + std::to_string(s.by_dir_[d].count()));
    }
  }
  if (s.ops_by_dir_[0] + s.ops_by_dir_[1] != s.ops_) {
    return fail("ops_by_direction: offline + online != ops");
  }
  // Optional: checkpoints written before set-up writes were told apart.
  if ((j.contains("setup_ops") && !ReadU64Field(j, "", "setup_ops", &s.setup_ops_, &msg)) ||
      (j.contains("setup_failed_ops") &&
       !ReadU64Field(j, "", "setup_failed_ops", &s.setup_failed_ops_, &msg))) {
    return fail(msg);
  }
  if (s.setup_ops_ > s.ops_ || s.setup_failed_ops_ > s.setup_ops_ ||
      s.setup_failed_ops_ > s.failed_ops_) {
    return fail("setup_ops: more set-up writes than operations or failures");
  }
  // Optional: checkpoints written before the smt pattern's control method.
  if ((j.contains("smt_control_ops") &&
       !ReadU64Field(j, "", "smt_control_ops", &s.smt_control_ops_, &msg)) ||
      (j.contains("smt_control_failed_ops") &&
       !ReadU64Field(j, "", "smt_control_failed_ops", &s.smt_control_failed_ops_, &msg))) {
    return fail(msg);
  }
  if (s.smt_control_ops_ + s.setup_ops_ > s.ops_ ||
      s.smt_control_failed_ops_ > s.smt_control_ops_ ||
      s.smt_control_failed_ops_ + s.setup_failed_ops_ > s.failed_ops_) {
    return fail("smt_control_ops: more smt/control writes than operations or failures");
  }
  const uint64_t setup_ok = s.setup_ops_ - s.setup_failed_ops_;
  const uint64_t control_ok = s.smt_control_ops_ - s.smt_control_failed_ops_;
  if (s.failed_ops_ > s.ops_ ||
      ok_in_histograms + setup_ok + control_ok != s.ops_ - s.failed_ops_) {
    return fail("failed_ops: ops - failed_ops != samples in by_direction");
  }
  if (s.readback_mismatches_ > s.ops_) {
    return fail("readback_mismatches: more than ops");
  }

  uint64_t cpu_sum[kDirections] = {0, 0};
  for (size_t i = 0; i < by_cpu->size(); i++) {
    const json& e = (*by_cpu)[i];
    std::string item = "by_cpu[" + std::to_string(i) + "]";
    std::string path = item + ".";
    int cpu = 0;
    Histogram h;
    if (!e.is_object()) {
      return fail(item + ": expected an object");
    }
    if (!ReadInt(e, path, "cpu", 0, &cpu, &msg) || !ReadHistogram(e, path, "histogram", &h, &msg)) {
      return fail(msg);
    }
    if (cpu >= kCpuLimit) {
      return fail(path + "cpu: " + std::to_string(cpu) + " not below " + std::to_string(kCpuLimit));
    }
    auto dir_it = e.find("direction");
    if (dir_it == e.end() || !dir_it->is_string() ||
        (*dir_it != "offline" && *dir_it != "online")) {
      return fail(path + "direction: expected \"offline\" or \"online\"");
    }
    Direction d = *dir_it == "offline" ? Direction::kOffline : Direction::kOnline;
    Histogram& slot = s.cpu_hist(cpu, d);
    if (slot.count() != 0) {
      return fail(item + ": duplicate cpu " + std::to_string(cpu) + " " +
                  dir_it->get<std::string>());
    }
    cpu_sum[static_cast<int>(d)] += h.count();
    slot = std::move(h);
  }
  for (int d = 0; d < kDirections; d++) {
    // Not equal when some records had a CPU outside [0, kCpuLimit).
    if (cpu_sum[d] > s.by_dir_[d].count()) {
      return fail(std::string("by_cpu: more ") + kDirNames[d] + " samples than by_direction");
    }
  }

  uint64_t error_sum = 0;
  for (size_t i = 0; i < errors->size(); i++) {
    const json& e = (*errors)[i];
    std::string item = "errors_by_cpu[" + std::to_string(i) + "]";
    std::string path = item + ".";
    int cpu = 0;
    int errnum = 0;
    uint64_t count = 0;
    if (!e.is_object()) {
      return fail(item + ": expected an object");
    }
    if (!ReadInt(e, path, "cpu", std::numeric_limits<int>::min(), &cpu, &msg) ||
        !ReadInt(e, path, "errno", std::numeric_limits<int>::min(), &errnum, &msg) ||
        !ReadU64Field(e, path, "count", &count, &msg)) {
      return fail(msg);
    }
    if (errnum == 0 || count == 0) {
      return fail(item + ": errno and count must be non-zero");
    }
    if (!s.errors_by_cpu_.emplace(std::make_pair(cpu, errnum), count).second) {
      return fail(item + ": duplicate (cpu, errno)");
    }
    error_sum += count;
  }
  if (error_sum != s.failed_ops_) {
    return fail("errors_by_cpu: counts add up to " + std::to_string(error_sum) +
                ", failed_ops is " + std::to_string(s.failed_ops_));
  }

  uint64_t readback_sum = 0;
  for (size_t i = 0; i < readback->size(); i++) {
    const json& e = (*readback)[i];
    std::string item = "readback_by_cpu[" + std::to_string(i) + "]";
    std::string path = item + ".";
    int cpu = 0;
    uint64_t count = 0;
    if (!e.is_object()) {
      return fail(item + ": expected an object");
    }
    if (!ReadInt(e, path, "cpu", std::numeric_limits<int>::min(), &cpu, &msg) ||
        !ReadU64Field(e, path, "count", &count, &msg)) {
      return fail(msg);
    }
    if (count == 0) {
      return fail(path + "count: must be non-zero");
    }
    if (!s.readback_by_cpu_.emplace(cpu, count).second) {
      return fail(path + "cpu: duplicate " + std::to_string(cpu));
    }
    readback_sum += count;
  }
  if (readback_sum != s.readback_mismatches_) {
    return fail("readback_by_cpu: counts add up to " + std::to_string(readback_sum) +
                ", readback_mismatches is " + std::to_string(s.readback_mismatches_));
  }

  // Optional: checkpoints written before failures were split by direction.
  if (auto fd = j.find("failed_by_cpu_direction"); fd != j.end()) {
    if (!fd->is_array()) {
      return fail("failed_by_cpu_direction: expected an array");
    }
    uint64_t sum = 0;
    for (size_t i = 0; i < fd->size(); i++) {
      const json& e = (*fd)[i];
      std::string path = "failed_by_cpu_direction[" + std::to_string(i) + "].";
      int cpu = 0;
      uint64_t count = 0;
      if (!e.is_object() || !ReadInt(e, path, "cpu", std::numeric_limits<int>::min(), &cpu, &msg) ||
          !ReadU64Field(e, path, "count", &count, &msg)) {
        return fail(e.is_object() ? msg : path + ": expected an object");
      }
      auto dir = e.find("direction");
      if (dir == e.end() || (*dir != "offline" && *dir != "online") || count == 0 ||
          !s.failed_by_cpu_dir_.emplace(std::make_pair(cpu, *dir == "offline" ? 0 : 1), count)
               .second) {
        return fail(path + "direction: expected \"offline\" or \"online\", once, count > 0");
      }
      sum += count;
    }
    if (sum != s.failed_ops_) {
      return fail("failed_by_cpu_direction: counts add up to " + std::to_string(sum) +
                  ", failed_ops is " + std::to_string(s.failed_ops_));
    }
  }

  // Optional: checkpoints written before the timeline existed have none.
  if (j.contains("timeline") && !s.timeline_.StateFromJson(j["timeline"], &msg))
    return fail(msg);
  // The smt pattern's switch table, kept by its owner (set_smt). Optional:
  // checkpoints written before it was checkpointed have none.
  if (smt_ && j.contains("smt") && !smt_->StateFromJson(j["smt"], &msg))
    return fail(msg);

  s.smt_ = smt_;
  *this = std::move(s);
  return true;
}

}  // namespace cpuhp
