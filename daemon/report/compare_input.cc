// SPDX-License-Identifier: GPL-2.0
#include "report/compare_input.h"

#include <cinttypes>
#include <cmath>

#include "report/report.h"
#include "stats/histogram.h"
#include "util/json_file.h"
#include "util/report_json.h"

namespace cpuhp {
namespace {

using nlohmann::json;
using report_json::Fmt;
using report_json::Get;
using report_json::Str;
using report_json::U64;

using report_json::kDirs;

constexpr size_t kHistogramBuckets = Histogram::kOctaves * Histogram::kSubBuckets;

// Counts the summaries and histogram buckets of the whole report, wherever
// they sit, and refuses the first place that crosses a limit (or a
// "buckets" array longer than a histogram has buckets). `path` holds the
// JSON pointer's segments down to `j`, joined only for the error.
class SizeCheck {
 public:
  SizeCheck(const ReportLimits& limits, const std::string& source, std::string* err)
      : limits_(limits), source_(source), err_(err) {}

  bool Walk(const json& j) {
    if (j.is_object()) {
      if (report_json::IsSummary(j) && ++summaries_ > limits_.summaries)
        return Fail(
            Fmt("more than %zu latency summaries (the limit of a report)", limits_.summaries));
      for (const auto& [k, v] : j.items()) {
        path_.push_back(k);
        if (k == "buckets" && v.is_array() && !Buckets(v.size()))
          return false;
        if (v.is_structured() && !Walk(v))
          return false;
        path_.pop_back();
      }
    } else if (j.is_array()) {
      for (size_t i = 0; i < j.size(); ++i) {
        if (!j[i].is_structured())
          continue;
        path_.push_back(std::to_string(i));
        if (!Walk(j[i]))
          return false;
        path_.pop_back();
      }
    }
    return true;
  }

 private:
  bool Buckets(size_t n) {
    if (n > kHistogramBuckets)
      return Fail(Fmt("%zu buckets, more than the %zu a histogram has", n, kHistogramBuckets));
    buckets_ += n;
    if (buckets_ > limits_.buckets)
      return Fail(
          Fmt("more than %zu histogram buckets in the report's histograms together (the "
              "limit of a report; compare bootstraps each summary over its buckets)",
              limits_.buckets));
    return true;
  }
  bool Fail(const std::string& what) {
    std::string where;
    for (const std::string& seg : path_)
      where += "/" + JsonPointerToken(seg);
    *err_ = source_ + ": " + where + ": " + what;
    return false;
  }

  const ReportLimits& limits_;
  const std::string& source_;
  std::string* err_;
  std::vector<std::string> path_;
  size_t summaries_ = 0;
  size_t buckets_ = 0;
};

}  // namespace

bool ParseReport(const std::string& text, const std::string& source, json* out, std::string* err,
                 const ReportLimits& limits) {
  json j;
  if (!ParseJsonText(text, source, &j, err, limits.array_elements))
    return false;
  if (!j.is_object() || !j.contains("schema_version")) {
    *err = source + ": not a cpuhp-stress report (no schema_version)";
    return false;
  }
  if (j["schema_version"] != kReportSchemaVersion) {
    *err = source + ": schema_version " + DumpJson(j["schema_version"]) +
           ", this cpuhp-stress reads " + std::to_string(kReportSchemaVersion);
    return false;
  }
  for (const char* key : {"directions", "per_online_count", "totals"}) {
    if (!Get(j, key).is_object()) {
      *err = source + ": " + key + ": missing or not an object";
      return false;
    }
  }
  for (const char* dir : kDirs) {
    const json& rows = Get(j["per_online_count"], dir);
    if (rows.is_array() && rows.size() > limits.level_rows) {
      *err =
          Fmt("%s: /per_online_count/%s: %zu rows, more than the %zu online CPU counts a "
              "machine can have",
              source.c_str(), dir, rows.size(), limits.level_rows);
      return false;
    }
  }
  if (!SizeCheck(limits, source, err).Walk(j))
    return false;
  *out = std::move(j);
  return true;
}

bool LoadReport(const std::string& path, json* out, std::string* err) {
  std::string text;
  return ReadSmallFile(path, ReportLimits{}.report_bytes, &text, err, nullptr,
                       FileKind::kRegularOnly) &&
         ParseReport(text, path, out, err);
}

bool CheckComparable(const json& base, const json& cand, std::string* err) {
  return CheckComparableNamed(base, cand, "baseline", "candidate", err);
}

bool CheckComparableNamed(const json& base, const json& cand, const std::string& base_name,
                          const std::string& cand_name, std::string* err) {
  const char* bn = base_name.c_str();
  const char* cn = cand_name.c_str();
  std::string bs = Str(Get(base, "cpus"), "selected");
  std::string cs = Str(Get(cand, "cpus"), "selected");
  if (bs != cs) {
    *err = "different CPU sets: " + base_name + " operated on CPUs " + (bs.empty() ? "?" : bs) +
           ", " + cand_name + " on " + (cs.empty() ? "?" : cs);
    return false;
  }
  for (const char* key : {"backend", "pattern", "interval"}) {
    const std::string b = Str(Get(base, "config"), key, "?");
    const std::string c = Str(Get(cand, "config"), key, "?");
    if (b != c) {
      *err = Fmt("different %s: %s ran %s, %s %s (their latencies are not comparable)", key, bn,
                 b.c_str(), cn, c.c_str());
      return false;
    }
  }
  const bool bi = Get(base, "interim").is_boolean() && Get(base, "interim").get<bool>();
  const bool ci = Get(cand, "interim").is_boolean() && Get(cand, "interim").get<bool>();
  if (bi != ci) {
    *err = "the " + (bi ? base_name : cand_name) +
           " is an interim report (the run was still going), the other a final one";
    return false;
  }
  std::string bp = Str(Get(Get(base, "host"), "cpus"), "present_list");
  std::string cp = Str(Get(Get(cand, "host"), "cpus"), "present_list");
  if (!bp.empty() && !cp.empty() && bp != cp) {
    *err = "different CPU sets: " + base_name + " machine has CPUs " + bp + " present, " +
           cand_name + " " + cp;
    return false;
  }
  return true;
}

namespace {

bool SummaryConsistent(const json& s, const std::string& where, std::string* err) {
  auto it = s.find("histogram");
  if (it == s.end() || U64(s, "count") == 0)
    return true;
  Histogram h;
  std::string herr;
  if (!h.FromJson(*it, &herr)) {
    *err = where + ".histogram: " + herr;
    return false;
  }
  const uint64_t count = U64(s, "count");
  if (h.count() != count) {
    *err = Fmt("%s: count %" PRIu64 " but its histogram holds %" PRIu64, where.c_str(), count,
               h.count());
    return false;
  }
  // The daemon writes each summary percentile from this very histogram; a
  // bucket's width (0.39 %) is the most two honest values can differ by.
  struct Field {
    const char* key;
    uint64_t want;
  };
  for (const Field& f : {Field{"min_ns", h.min_ns()}, Field{"p50_ns", h.PercentileNs(50)},
                         Field{"p99_ns", h.PercentileNs(99)}, Field{"max_ns", h.max_ns()}}) {
    const json& v = Get(s, f.key);
    if (!v.is_number())
      continue;
    const double got = v.get<double>();
    if (std::fabs(got - static_cast<double>(f.want)) > 0.01 * static_cast<double>(f.want) + 1) {
      *err = Fmt("%s: %s %.3f ms disagrees with its histogram (%.3f ms)", where.c_str(), f.key,
                 got / 1e6, static_cast<double>(f.want) / 1e6);
      return false;
    }
  }
  if (U64(s, "p50_ns") > U64(s, "p99_ns") || U64(s, "p99_ns") > U64(s, "max_ns")) {
    *err = Fmt("%s: p50 %.3f ms, p99 %.3f ms, max %.3f ms are not in order", where.c_str(),
               static_cast<double>(U64(s, "p50_ns")) / 1e6,
               static_cast<double>(U64(s, "p99_ns")) / 1e6,
               static_cast<double>(U64(s, "max_ns")) / 1e6);
    return false;
  }
  return true;
}

}  // namespace

bool CheckConsistent(const json& report, const std::string& which, std::string* err) {
  for (const char* dir : kDirs) {
    if (!SummaryConsistent(Get(Get(report, "directions"), dir), which + " directions." + dir, err))
      return false;
    const json& levels = Get(Get(report, "per_online_count"), dir);
    if (!levels.is_array())
      continue;
    for (const json& l : levels)
      if (l.is_object() && !SummaryConsistent(l,
                                              which + " per_online_count." + dir + "[online_cpus=" +
                                                  std::to_string(U64(l, "online_cpus")) + "]",
                                              err))
        return false;
  }
  return true;
}
}  // namespace cpuhp
