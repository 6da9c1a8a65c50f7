// SPDX-License-Identifier: GPL-2.0
#include "report/compare.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include "report/merge.h"
#include "report/report.h"
#include "stats/histogram.h"
#include "stats/quantile_ci.h"
#include "util/exit_codes.h"
#include "util/file_util.h"
#include "util/json_file.h"
#include "util/report_json.h"

namespace cpuhp {
namespace {

using nlohmann::json;
using report_json::Fmt;
using report_json::Get;
using report_json::IsSummary;
using report_json::Str;
using report_json::U64;

constexpr const char* kDirs[] = {"offline", "online"};
constexpr size_t kMaxGenericRows = 2000;
constexpr int kMaxDepth = 8;

constexpr size_t kHistogramBuckets = Histogram::kOctaves * Histogram::kSubBuckets;

// Refuses a "buckets" array longer than a histogram has buckets. `path`
// holds the JSON pointer's segments down to `j`, joined only for the error.
bool CheckBuckets(const json& j, std::vector<std::string>* path, const std::string& source,
                  std::string* err) {
  auto fail = [&](size_t n) {
    std::string where;
    for (const std::string& seg : *path)
      where += "/" + seg;
    *err = Fmt("%s: %s/buckets: %zu buckets, more than the %zu a histogram has", source.c_str(),
               where.c_str(), n, kHistogramBuckets);
    return false;
  };
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      if (k == "buckets" && v.is_array() && v.size() > kHistogramBuckets)
        return fail(v.size());
      if (v.is_structured()) {
        path->push_back(k);
        if (!CheckBuckets(v, path, source, err))
          return false;
        path->pop_back();
      }
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      if (!j[i].is_structured())
        continue;
      path->push_back(std::to_string(i));
      if (!CheckBuckets(j[i], path, source, err))
        return false;
      path->pop_back();
    }
  }
  return true;
}

// Sections with a meaning compare knows (or that describe the run, not its
// latency); every other top-level section is walked generically.
const std::set<std::string> kCoreSections = {
    "schema_version", "tool",         "interim",
    "host",           "config",       "seed",
    "cpus",           "run",          "totals",
    "directions",     "per_cpu",      "per_online_count",
    "errors",         "first_errors", "first_errors_dropped",
    "restore",        "process",      "timeline",
    "soak",           "pooled"};

bool HistogramOf(const json& summary, Histogram* h) {
  auto it = summary.find("histogram");
  if (it == summary.end())
    return false;
  std::string err;
  return h->FromJson(*it, &err) && h->count() == U64(summary, "count");
}

double ThresholdFor(const CompareOptions& o, const std::string& name, const std::string& dir,
                    const std::string& stat) {
  for (const std::string& key : {name, dir + "." + stat, stat, dir}) {
    auto it = o.overrides.find(key);
    if (it != o.overrides.end())
      return it->second;
  }
  return o.threshold;
}

Metric MakeMetric(const std::string& name, const std::string& dir, const char* stat, double q,
                  const json& b, const json& c, bool have_hists, const Histogram& hb,
                  const Histogram& hc, const CompareOptions& o, uint64_t seed) {
  Metric m;
  // One spelling everywhere (--threshold, the JSON, the tables): the stat
  // goes before the level, "offline.p50@online=8".
  const size_t at = name.find('@');
  m.name = at == std::string::npos ? name + "." + stat
                                   : name.substr(0, at) + "." + stat + name.substr(at);
  m.stat = stat;
  std::string key = std::string(stat) + "_ns";
  m.base_ns = static_cast<double>(U64(b, key.c_str()));
  m.cand_ns = static_cast<double>(U64(c, key.c_str()));
  m.ratio = m.base_ns > 0 ? m.cand_ns / m.base_ns : 0;
  m.threshold = ThresholdFor(o, m.name, dir, stat);
  // A percentile bootstrap needs samples beyond the quantile: at least 20
  // for the median and 10 above it for a tail quantile (1000 for p99).
  // Fewer (such as the sweep's one-off set-up operations) get no verdict.
  const double min_n = std::max(20.0, 10.0 / (1.0 - q));
  if (have_hists && static_cast<double>(std::min(hb.count(), hc.count())) >= min_n) {
    RatioInterval ci = QuantileRatioInterval(hb, hc, q, o.confidence, o.resamples, seed);
    if (ci.ok) {
      m.has_ci = true;
      m.ci_lo = ci.lo;
      m.ci_hi = ci.hi;
      if (ci.lo > 1 + m.threshold)
        m.verdict = Verdict::kRegressed;
      else if (ci.hi < 1 - m.threshold)
        m.verdict = Verdict::kImproved;
      else
        m.verdict = Verdict::kNoChange;
    }
  }
  return m;
}

uint64_t Seed(const CompareOptions& o, const std::string& name) {
  return o.seed ^ std::hash<std::string>{}(name);
}

// One side's per-boot values of `key` ("p50_ns"): its "per_boot" entries
// with operations, or the summary's own value when it has none.
std::vector<double> BootValues(const json& summary, const char* key) {
  std::vector<double> out;
  const json& per_boot = Get(summary, "per_boot");
  if (!per_boot.is_array()) {
    if (U64(summary, "count") > 0)
      out.push_back(static_cast<double>(U64(summary, key)));
    return out;
  }
  for (const json& boot : per_boot)
    if (boot.is_object() && U64(boot, "count") > 0)
      out.push_back(static_cast<double>(U64(boot, key)));
  return out;
}

// The across-boot rule (compare.h): a change the pooled interval calls must
// show in every boot, the ranges of the two sides apart in its direction.
void ApplyBootRule(const json& b, const json& c, Metric* m) {
  const std::string key = m->stat + "_ns";
  std::vector<double> bv = BootValues(b, key.c_str());
  std::vector<double> cv = BootValues(c, key.c_str());
  m->pooled_verdict = m->verdict;
  if (bv.empty() || cv.empty() || (bv.size() < 2 && cv.size() < 2))
    return;
  const auto [blo, bhi] = std::minmax_element(bv.begin(), bv.end());
  const auto [clo, chi] = std::minmax_element(cv.begin(), cv.end());
  const bool disagree = (m->verdict == Verdict::kImproved && !(*chi < *blo)) ||
                        (m->verdict == Verdict::kRegressed && !(*clo > *bhi));
  if (disagree) {
    m->verdict = Verdict::kNoChange;
    m->boots_disagree = true;
  }
  m->base_boots_ns = std::move(bv);
  m->cand_boots_ns = std::move(cv);
}

CompareRow MakeRow(const std::string& group, const std::string& label, const std::string& name,
                   const std::string& dir, const json& b, const json& c, const CompareOptions& o) {
  CompareRow r;
  r.group = group;
  r.label = label;
  r.base_count = U64(b, "count");
  r.cand_count = U64(c, "count");
  r.base_max_ns = U64(b, "max_ns");
  r.cand_max_ns = U64(c, "max_ns");
  Histogram hb, hc;
  bool have = HistogramOf(b, &hb) && HistogramOf(c, &hc);
  r.p50 = MakeMetric(name, dir, "p50", 0.50, b, c, have, hb, hc, o, Seed(o, name + "p50"));
  r.p99 = MakeMetric(name, dir, "p99", 0.99, b, c, have, hb, hc, o, Seed(o, name + "p99"));
  ApplyBootRule(b, c, &r.p50);
  ApplyBootRule(b, c, &r.p99);
  return r;
}

}  // namespace

// Array elements are matched by every identity field they carry: a kernel
// state is one (direction, where, state, function), a named phase one
// (name, direction, where); the same state name of the other direction or
// another context is another element.
std::string ElementKey(const json& e, size_t index) {
  std::string key;
  if (e.is_object())
    for (const char* k : {"name", "phase", "direction", "state", "function", "where", "online_cpus",
                          "cpu", "id", "index", "i"}) {
      auto it = e.find(k);
      if (it == e.end() || !(it->is_string() || it->is_number() || it->is_null()))
        continue;
      key += (key.empty() ? "" : ",") + std::string(k) + "=" +
             (it->is_string() ? it->get<std::string>() : it->dump());
    }
  return key.empty() ? std::to_string(index) : key;
}

namespace {

// Rows of a timing source are grouped per source ("timing_sources.kmod").
std::string GroupOf(const std::string& path) {
  size_t dot = path.find('.');
  std::string first = path.substr(0, dot);
  if (first != "timing_sources" || dot == std::string::npos)
    return first;
  size_t end = path.find_first_of(".[", dot + 1);
  return path.substr(0, end);
}

void Walk(const json& b, const json& c, const std::string& path, int depth, const CompareOptions& o,
          Comparison* out, size_t* generic) {
  if (depth > kMaxDepth || *generic >= kMaxGenericRows || b.type() != c.type())
    return;
  if (IsSummary(b) && IsSummary(c)) {
    std::string group = GroupOf(path);
    std::string dir = path.find("offline") != std::string::npos  ? "offline"
                      : path.find("online") != std::string::npos ? "online"
                                                                 : "";
    out->rows.push_back(MakeRow(group, path, path, dir, b, c, o));
    ++*generic;
    return;
  }
  if (b.is_object()) {
    for (const auto& [k, v] : b.items()) {
      auto it = c.find(k);
      if (it != c.end())
        Walk(v, *it, path + "." + k, depth + 1, o, out, generic);
    }
  } else if (b.is_array()) {
    std::map<std::string, const json*> cand;
    for (size_t i = 0; i < c.size(); i++)
      cand.emplace(ElementKey(c[i], i), &c[i]);
    for (size_t i = 0; i < b.size(); i++) {
      std::string key = ElementKey(b[i], i);
      auto it = cand.find(key);
      if (it != cand.end())
        Walk(b[i], *it->second, path + "[" + key + "]", depth + 1, o, out, generic);
    }
  }
}

std::map<int64_t, const json*> Levels(const json& report, const char* dir) {
  std::map<int64_t, const json*> out;
  const json& levels = Get(Get(report, "per_online_count"), dir);
  if (levels.is_array())
    for (const json& l : levels)
      if (IsSummary(l))
        out[static_cast<int64_t>(U64(l, "online_cpus"))] = &l;
  return out;
}

std::string Rate(uint64_t n, uint64_t ops) {
  return Fmt("%" PRIu64 " of %" PRIu64 " ops", n, ops);
}

// A count of bad events: more in the candidate (relative to its ops) regresses.
CompareCheck CountCheck(const char* name, uint64_t bn, uint64_t bops, uint64_t cn, uint64_t cops,
                        double threshold) {
  CompareCheck k;
  k.name = name;
  k.base = Rate(bn, bops);
  k.cand = Rate(cn, cops);
  double br = bops ? static_cast<double>(bn) / static_cast<double>(bops) : 0;
  double cr = cops ? static_cast<double>(cn) / static_cast<double>(cops) : 0;
  if (cn > 0 && (bn == 0 || cr > br * (1 + threshold)))
    k.verdict = Verdict::kRegressed;
  else if (bn > 0 && (cn == 0 || cr < br * (1 - threshold)))
    k.verdict = Verdict::kImproved;
  return k;
}

std::string RestoreState(const json& r) {
  const json& restore = Get(r, "restore");
  if (!restore.is_object() || !restore.contains("ok") || !restore["ok"].is_boolean())
    return "not run";
  return restore["ok"].get<bool>() ? "ok" : "FAILED";
}

std::string Ms(double ns) {
  return Fmt("%.3f", ns / 1e6);
}

std::string RatioText(const Metric& m) {
  return m.base_ns > 0 ? Fmt("%.3f", m.ratio) : "-";
}

std::string CiText(const Metric& m) {
  return m.has_ci ? Fmt("[%.3f, %.3f]", m.ci_lo, m.ci_hi) : "-";
}

std::string Pct(double f) {
  return Fmt("%g%%", f * 100);
}

std::vector<std::string> Groups(const Comparison& c) {
  std::vector<std::string> groups;
  for (const CompareRow& r : c.rows)
    if (std::find(groups.begin(), groups.end(), r.group) == groups.end())
      groups.push_back(r.group);
  return groups;
}

std::string FirstColumn(const std::string& group) {
  if (group.find("latency") != std::string::npos)
    return "online CPUs";
  if (group.rfind("per_cpu", 0) == 0)
    return "CPU";
  return "section";
}

}  // namespace

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kNoChange:
      return "no change";
    case Verdict::kImproved:
      return "improved";
    case Verdict::kRegressed:
      return "REGRESSED";
    case Verdict::kNotApplicable:
      break;
  }
  return "n/a";
}

Verdict CompareRow::verdict() const {
  if (p50.verdict == Verdict::kRegressed || p99.verdict == Verdict::kRegressed)
    return Verdict::kRegressed;
  if (p50.verdict == Verdict::kImproved || p99.verdict == Verdict::kImproved)
    return Verdict::kImproved;
  if (p50.verdict == Verdict::kNoChange || p99.verdict == Verdict::kNoChange)
    return Verdict::kNoChange;
  return Verdict::kNotApplicable;
}

int Comparison::regressions() const {
  int n = 0;
  for (const CompareRow& r : rows)
    n += (r.p50.verdict == Verdict::kRegressed) + (r.p99.verdict == Verdict::kRegressed);
  for (const CompareCheck& k : checks)
    n += k.verdict == Verdict::kRegressed;
  return n;
}

int Comparison::improvements() const {
  int n = 0;
  for (const CompareRow& r : rows)
    n += (r.p50.verdict == Verdict::kImproved) + (r.p99.verdict == Verdict::kImproved);
  for (const CompareCheck& k : checks)
    n += k.verdict == Verdict::kImproved;
  return n;
}

bool Comparison::regressed() const {
  return regressions() > 0;
}

int Comparison::boots_disagree() const {
  int n = 0;
  for (const CompareRow& r : rows)
    n += r.boots_disagree();
  return n;
}

bool Comparison::has_boots() const {
  for (const CompareRow& r : rows)
    if (r.p50.has_boots() || r.p99.has_boots())
      return true;
  return false;
}

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
  std::vector<std::string> path;
  if (!CheckBuckets(j, &path, source, err))
    return false;
  size_t level_buckets = 0;
  for (const char* dir : kDirs) {
    const json& rows = Get(j["per_online_count"], dir);
    if (!rows.is_array())
      continue;
    if (rows.size() > limits.level_rows) {
      *err =
          Fmt("%s: /per_online_count/%s: %zu rows, more than the %zu online CPU counts a "
              "machine can have",
              source.c_str(), dir, rows.size(), limits.level_rows);
      return false;
    }
    for (const json& row : rows)
      if (const json& b = Get(Get(row, "histogram"), "buckets"); b.is_array())
        level_buckets += b.size();
  }
  if (level_buckets > limits.level_buckets) {
    *err =
        Fmt("%s: /per_online_count: %zu histogram buckets in its rows, more than %zu (each row "
            "is bootstrapped over its buckets)",
            source.c_str(), level_buckets, limits.level_buckets);
    return false;
  }
  *out = std::move(j);
  return true;
}

bool LoadReport(const std::string& path, json* out, std::string* err) {
  std::string text;
  return ReadSmallFile(path, kMaxReportBytes, &text, err, nullptr, FileKind::kRegularOnly) &&
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

Comparison::Side SideOf(const json& r) {
  Comparison::Side s;
  s.kernel_release = Str(Get(r, "host"), "kernel_release");
  s.ops = U64(Get(r, "totals"), "ops");
  s.simulated = Str(Get(r, "run"), "clock") == "simulated";
  s.boots = std::max<uint64_t>(1, U64(Get(r, "pooled"), "boots"));
  return s;
}

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

namespace {
std::atomic<uint64_t> g_compare_calls{0};
}  // namespace

uint64_t CompareCalls() {
  return g_compare_calls.load();
}

Comparison Compare(const json& base, const json& cand, const CompareOptions& opts) {
  ++g_compare_calls;
  Comparison out;
  out.options = opts;
  out.base = SideOf(base);
  out.cand = SideOf(cand);
  for (const char* dir : kDirs) {
    std::string group = std::string(dir) + " latency";
    auto bl = Levels(base, dir);
    auto cl = Levels(cand, dir);
    for (const auto& [online, b] : bl) {
      auto it = cl.find(online);
      if (it == cl.end()) {
        out.notes.push_back(
            Fmt("%s at %" PRId64 " online CPUs: only in the baseline", dir, online));
        continue;
      }
      out.rows.push_back(MakeRow(group, std::to_string(online),
                                 std::string(dir) + "@online=" + std::to_string(online), dir, *b,
                                 *it->second, opts));
    }
    for (const auto& [online, c] : cl)
      if (!bl.count(online))
        out.notes.push_back(
            Fmt("%s at %" PRId64 " online CPUs: only in the candidate", dir, online));
    const json& b = Get(Get(base, "directions"), dir);
    const json& c = Get(Get(cand, "directions"), dir);
    if (IsSummary(b) && IsSummary(c))
      out.rows.push_back(MakeRow(group, "all", dir, dir, b, c, opts));
  }
  // Per CPU: summaries only (no buckets), ratios without verdicts.
  for (const char* dir : kDirs) {
    std::map<int64_t, const json*> bc, cc;
    for (const json* r : {&base, &cand}) {
      const json& cpus = Get(*r, "per_cpu");
      if (cpus.is_array())
        for (const json& e : cpus)
          if (IsSummary(Get(e, dir)))
            (r == &base ? bc : cc)[static_cast<int64_t>(U64(e, "cpu"))] = &Get(e, dir);
    }
    for (const auto& [cpu, b] : bc) {
      auto it = cc.find(cpu);
      if (it != cc.end() && (U64(*b, "count") || U64(*it->second, "count")))
        out.rows.push_back(MakeRow(std::string("per_cpu ") + dir, "cpu" + std::to_string(cpu),
                                   "per_cpu.cpu" + std::to_string(cpu) + "." + dir, dir, *b,
                                   *it->second, opts));
    }
  }
  const json& bt = Get(base, "totals");
  const json& ct = Get(cand, "totals");
  out.checks.push_back(CountCheck("failed_operations", U64(bt, "failed"), U64(bt, "ops"),
                                  U64(ct, "failed"), U64(ct, "ops"), opts.threshold));
  out.checks.push_back(CountCheck("readback_mismatches", U64(bt, "readback_mismatches"),
                                  U64(bt, "ops"), U64(ct, "readback_mismatches"), U64(ct, "ops"),
                                  opts.threshold));
  CompareCheck restore;
  restore.name = "restore";
  restore.base = RestoreState(base);
  restore.cand = RestoreState(cand);
  if (restore.cand == "FAILED" && restore.base != "FAILED")
    restore.verdict = Verdict::kRegressed;
  else if (restore.base == "FAILED" && restore.cand == "ok")
    restore.verdict = Verdict::kImproved;
  out.checks.push_back(restore);

  // Optional sections (kernel phases and states, disturbance, ...) and the
  // timing sources' sections: every latency summary at the same path.
  size_t generic = 0;
  for (const auto& [key, b] : base.items()) {
    if (kCoreSections.count(key))
      continue;
    auto it = cand.find(key);
    if (it == cand.end()) {
      out.notes.push_back("section " + key + ": only in the baseline, skipped");
      continue;
    }
    size_t before = out.rows.size();
    Walk(b, *it, key, 0, opts, &out, &generic);
    if (out.rows.size() == before)
      out.notes.push_back("section " + key + ": no latency summaries in both reports, skipped");
  }
  for (const auto& [key, c] : cand.items())
    if (!kCoreSections.count(key) && !base.contains(key))
      out.notes.push_back("section " + key + ": only in the candidate, skipped");
  // A timing source that measured in one report only is not compared: say so.
  std::set<std::string> sources;
  for (const json* r : {&base, &cand})
    for (const auto& [name, v] : Get(*r, "timing_sources").items())
      sources.insert(name);
  for (const std::string& name : sources) {
    std::string bwhy, cwhy;
    std::string bs = report_json::SourceStatus(base, name.c_str(), &bwhy);
    std::string cs = report_json::SourceStatus(cand, name.c_str(), &cwhy);
    if (bs != cs)
      out.notes.push_back("timing source " + name + ": " + bs + " in the baseline" +
                          (bwhy.empty() ? "" : " (" + bwhy + ")") + ", " + cs +
                          " in the candidate" + (cwhy.empty() ? "" : " (" + cwhy + ")") +
                          ": not compared");
  }
  if (generic >= kMaxGenericRows)
    out.notes.push_back(Fmt("stopped after %zu summaries in other sections", kMaxGenericRows));
  // p99 "n/a" is not a verdict withheld silently: say why (MakeMetric's
  // minimum of 10 samples above the quantile).
  size_t p99_short = 0;
  for (const CompareRow& r : out.rows)
    p99_short += !r.p99.has_ci && std::min(r.base_count, r.cand_count) < 1000 &&
                 std::min(r.base_count, r.cand_count) > 0;
  if (p99_short)
    out.notes.push_back(
        Fmt("p99: no interval or verdict in %zu rows with fewer than 1000 "
            "operations a side (a bootstrap of the 99th percentile needs 10 "
            "samples above it)",
            p99_short));
  if (const int n = out.boots_disagree(); n > 0)
    out.notes.push_back(
        Fmt("boots disagree in %d rows: the pooled interval called a change that not every "
            "boot shows (the per-boot ranges overlap), so the verdict there is no change",
            n));
  std::string bclock = Str(Get(base, "run"), "clock");
  std::string cclock = Str(Get(cand, "run"), "clock");
  if (bclock != cclock)
    out.notes.push_back("clocks differ: baseline " + bclock + ", candidate " + cclock);
  return out;
}

namespace {

// One side of the comparison as a reader of the list wants it: which kernel,
// how many operations, which file.
std::string SideLine(const char* role, const std::string& path, const Comparison::Side& side) {
  return Fmt("%-9s %s, %" PRIu64 " ops%s%s%s", role,
             side.kernel_release.empty() ? "kernel ?" : side.kernel_release.c_str(), side.ops,
             side.boots > 1 ? Fmt(" in %" PRIu64 " boots", side.boots).c_str() : "",
             side.simulated ? ", SIMULATED" : "", path.empty() ? "" : (" (" + path + ")").c_str());
}

// "1.234..1.456" ms: the spread of one side's boots.
std::string BootRange(const std::vector<double>& v) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return Fmt("%.3f..%.3f", *lo / 1e6, *hi / 1e6);
}

// The per-boot spread under a metric's line.
std::string BootsText(const Metric& m) {
  return "    " + MetricBootsSummary(m);
}

// Why a cell has no interval (a footnote), or "" when it has one.
std::string NoIntervalReason(const CompareRow& r, const Metric& m) {
  if (m.has_ci)
    return "";
  if (m.base_ns <= 0)
    return "no baseline value";
  const double q = m.stat == "p99" ? 0.99 : 0.50;
  const uint64_t min_n = static_cast<uint64_t>(std::max(20.0, 10.0 / (1.0 - q)) + 0.5);
  if (std::min(r.base_count, r.cand_count) < min_n)
    return Fmt("%s needs %" PRIu64 " operations per side for an interval; this row has %" PRIu64
               " and %" PRIu64,
               m.stat.c_str(), min_n, r.base_count, r.cand_count);
  return "the reports carry no histogram for this row (per-CPU rows have none)";
}

struct Footnotes {
  std::vector<std::string> texts;
  // The marker of `why` ("[1]"), numbering new reasons in order.
  std::string Mark(const std::string& why) {
    if (why.empty())
      return "";
    auto it = std::find(texts.begin(), texts.end(), why);
    size_t n = static_cast<size_t>(it - texts.begin()) + 1;
    if (it == texts.end())
      texts.push_back(why);
    return Fmt("[%zu]", n);
  }
};

std::string MetricVerdict(const Metric& m) {
  return m.verdict == Verdict::kNotApplicable ? "n/a" : VerdictName(m.verdict);
}

// Wraps `text` at 78 columns, its leading spaces kept, continuation lines
// indented by `indent`.
std::string Wrap(const std::string& text, size_t indent) {
  if (text.size() <= 78)
    return text + "\n";  // as formatted, columns kept
  std::string out;
  size_t from = std::min(text.find_first_not_of(' '), text.size());
  std::string line = text.substr(0, from);
  while (from < text.size()) {
    size_t sp = text.find(' ', from);
    std::string word = text.substr(from, sp == std::string::npos ? std::string::npos : sp - from);
    from = sp == std::string::npos ? text.size() : sp + 1;
    if (!line.empty() && line.size() + 1 + word.size() > 78) {
      out += line + "\n";
      line = std::string(indent, ' ');
    }
    line += (line.empty() || line.back() == ' ' ? "" : " ") + word;
  }
  return out + line + "\n";
}

}  // namespace

std::string MetricBootsSummary(const Metric& m) {
  if (!m.has_boots())
    return "";
  std::string text = "boots (ms): baseline " + BootRange(m.base_boots_ns) + ", candidate " +
                     BootRange(m.cand_boots_ns) +
                     Fmt(" (%zu + %zu)", m.base_boots_ns.size(), m.cand_boots_ns.size());
  if (m.boots_disagree)
    text += std::string("; boots disagree, pooled ") + VerdictName(m.pooled_verdict);
  return text;
}

// Seed 001's table per group and statistic, within 80 columns:
//   online CPUs   baseline  candidate  ratio [95% CI]        verdict
std::string CompareText(const Comparison& c) {
  std::string out = "cpuhp-stress compare\n";
  out += Wrap(SideLine("baseline", c.base_path, c.base), 10);
  out += Wrap(SideLine("candidate", c.cand_path, c.cand), 10);
  out += Wrap(Fmt("threshold %s; ratio = candidate/baseline, %g %% interval by bootstrap from "
                  "the histograms",
                  Pct(c.options.threshold).c_str(), c.options.confidence * 100),
              0);
  for (const auto& [k, v] : c.options.overrides)
    out += "  threshold for " + k + ": " + Pct(v) + "\n";
  Footnotes notes;
  for (const std::string& g : Groups(c)) {
    for (const char* stat : {"p50", "p99"}) {
      out += "\n" + g + ", " + stat + " (ms)\n";
      out += Fmt("  %-13s %9s %9s  %-25s %s\n", FirstColumn(g).c_str(), "baseline", "candidate",
                 "ratio [95% CI]", "verdict");
      for (const CompareRow& r : c.rows) {
        if (r.group != g)
          continue;
        const Metric& m = std::string(stat) == "p50" ? r.p50 : r.p99;
        std::string ratio =
            RatioText(m) + (m.has_ci ? " " + CiText(m) : "") + notes.Mark(NoIntervalReason(r, m));
        std::string label =
            r.label.size() > 13 ? "..." + r.label.substr(r.label.size() - 10) : r.label;
        out += Fmt("  %-13s %9s %9s  %-25s %s\n", label.c_str(), Ms(m.base_ns).c_str(),
                   Ms(m.cand_ns).c_str(), ratio.c_str(), MetricVerdict(m).c_str());
        if (m.has_boots())
          out += Wrap(BootsText(m), 6);
      }
    }
  }
  for (size_t i = 0; i < notes.texts.size(); ++i)
    out += Wrap(Fmt("[%zu] no interval: %s", i + 1, notes.texts[i].c_str()), 4);
  out += "\nchecks\n";
  for (const CompareCheck& k : c.checks)
    out += Fmt("  %-20s %-17s -> %-17s %s\n", k.name.c_str(), k.base.c_str(), k.cand.c_str(),
               VerdictName(k.verdict));
  for (const std::string& n : c.notes)
    out += Wrap("note: " + n, 6);
  out += Fmt("\nverdict: %s (%d regressed, %d improved",
             c.regressed() ? "REGRESSED" : "nothing regressed", c.regressions(), c.improvements());
  out += c.has_boots() ? Fmt(", boots disagree in %d rows)\n", c.boots_disagree()) : ")\n";
  return out;
}

std::string CompareMarkdown(const Comparison& c) {
  std::string out = "## cpuhp-stress compare\n\n";
  out += "| | kernel | operations | report |\n|---|---|---:|---|\n";
  for (const auto& [role, path, side] : {std::tuple{"baseline", &c.base_path, &c.base},
                                         std::tuple{"candidate", &c.cand_path, &c.cand}})
    out += std::string("| ") + role + " | " +
           (side->kernel_release.empty() ? "?" : "`" + side->kernel_release + "`") +
           (side->simulated ? " (SIMULATED)" : "") + " | " + std::to_string(side->ops) + " | `" +
           *path + "` |\n";
  out += "\nThreshold " + Pct(c.options.threshold) +
         Fmt("; ratio = candidate/baseline with its %g %% interval (bootstrap).\n",
             c.options.confidence * 100);
  const bool boots = c.has_boots();
  if (boots)
    out += "Boots: each side's per-boot values (min..max); a change must show in every boot.\n";
  Footnotes notes;
  for (const std::string& g : Groups(c)) {
    for (const char* stat : {"p50", "p99"}) {
      out += "\n### " + g + ", " + stat + " (ms)\n\n";
      out += "| " + FirstColumn(g) + " | ops | baseline | candidate | ratio [95 % CI] | " +
             (boots ? "boots (ms) | " : "") + "verdict |\n|---:|---:|---:|---:|:---|" +
             (boots ? ":---|" : "") + ":---|\n";
      for (const CompareRow& r : c.rows) {
        if (r.group != g)
          continue;
        const Metric& m = std::string(stat) == "p50" ? r.p50 : r.p99;
        std::string mark = notes.Mark(NoIntervalReason(r, m));
        out += "| " + r.label + " | " + std::to_string(r.base_count) + " / " +
               std::to_string(r.cand_count) + " | " + Ms(m.base_ns) + " | " + Ms(m.cand_ns) +
               " | " + RatioText(m) + (m.has_ci ? " " + CiText(m) : "") +
               (mark.empty() ? "" : " " + mark) + " | " +
               (!boots ? ""
                : m.has_boots()
                    ? BootRange(m.base_boots_ns) + " / " + BootRange(m.cand_boots_ns) + " | "
                    : "- | ") +
               MetricVerdict(m) + (m.boots_disagree ? " (boots disagree)" : "") + " |\n";
      }
    }
  }
  if (!notes.texts.empty())
    out += "\n";
  for (size_t i = 0; i < notes.texts.size(); ++i)
    out += Fmt("[%zu] no interval: %s.  \n", i + 1, notes.texts[i].c_str());
  out += "\n| check | baseline | candidate | verdict |\n|---|---|---|---|\n";
  for (const CompareCheck& k : c.checks)
    out +=
        "| " + k.name + " | " + k.base + " | " + k.cand + " | " + VerdictName(k.verdict) + " |\n";
  for (const std::string& n : c.notes)
    out += "\n_note: " + n + "_\n";
  out += Fmt("\n**verdict: %s** (%d regressed, %d improved",
             c.regressed() ? "REGRESSED" : "nothing regressed", c.regressions(), c.improvements());
  out += boots ? Fmt(", boots disagree in %d rows)\n", c.boots_disagree()) : ")\n";
  return out;
}

json CompareJson(const Comparison& c) {
  auto metric = [](const Metric& m) {
    json j = {{"name", m.name},   {"base_ns", m.base_ns},     {"cand_ns", m.cand_ns},
              {"ratio", m.ratio}, {"threshold", m.threshold}, {"verdict", VerdictName(m.verdict)}};
    if (m.has_ci)
      j["ci"] = {m.ci_lo, m.ci_hi};
    if (m.has_boots()) {
      const auto [blo, bhi] = std::minmax_element(m.base_boots_ns.begin(), m.base_boots_ns.end());
      const auto [clo, chi] = std::minmax_element(m.cand_boots_ns.begin(), m.cand_boots_ns.end());
      j["boots"] = {{"base_ns", m.base_boots_ns},
                    {"cand_ns", m.cand_boots_ns},
                    {"base_range_ns", {*blo, *bhi}},
                    {"cand_range_ns", {*clo, *chi}},
                    {"pooled_verdict", VerdictName(m.pooled_verdict)}};
      j["boots_disagree"] = m.boots_disagree;
    }
    return j;
  };
  const bool boots = c.has_boots();
  json rows = json::array();
  for (const CompareRow& r : c.rows) {
    rows.push_back({{"group", r.group},
                    {"label", r.label},
                    {"base_count", r.base_count},
                    {"cand_count", r.cand_count},
                    {"base_max_ns", r.base_max_ns},
                    {"cand_max_ns", r.cand_max_ns},
                    {"p50", metric(r.p50)},
                    {"p99", metric(r.p99)}});
    if (boots)
      rows.back()["boots_disagree"] = r.boots_disagree();
  }
  json checks = json::array();
  for (const CompareCheck& k : c.checks)
    checks.push_back({{"name", k.name},
                      {"base", k.base},
                      {"cand", k.cand},
                      {"verdict", VerdictName(k.verdict)}});
  json out = {{"baseline", c.base_path},
              {"candidate", c.cand_path},
              {"threshold", c.options.threshold},
              {"confidence", c.options.confidence},
              {"rows", rows},
              {"checks", checks},
              {"notes", c.notes},
              {"regressions", c.regressions()},
              {"improvements", c.improvements()}};
  if (boots) {
    out["baseline_boots"] = c.base.boots;
    out["candidate_boots"] = c.cand.boots;
    out["boots_disagree_rows"] = c.boots_disagree();
  }
  return out;
}

namespace {

bool IsStat(const std::string& s) {
  return s == "p50" || s == "p99";
}
bool IsDir(const std::string& s) {
  return s == "offline" || s == "online";
}
bool AllDigits(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

// The metric names a threshold may be given for: p50, offline,
// offline.p99, offline.p50@online=8, per_cpu.cpu1.offline.p50, or the
// path of a summary in another section ending in .p50 or .p99
// (timing_sources.kmod.phases[...].p99).
bool IsMetricName(const std::string& key) {
  std::vector<std::string> parts;
  for (size_t from = 0;;) {
    const size_t dot = key.find('.', from);
    parts.push_back(key.substr(from, dot - from));
    if (dot == std::string::npos)
      break;
    from = dot + 1;
  }
  if (parts.size() == 1)
    return IsStat(key) || IsDir(key);
  if (IsDir(parts[0])) {
    if (parts.size() != 2)
      return false;
    const size_t at = parts[1].find('@');
    if (at == std::string::npos)
      return IsStat(parts[1]);
    return IsStat(parts[1].substr(0, at)) && parts[1].compare(at, 8, "@online=") == 0 &&
           AllDigits(parts[1].substr(at + 8));
  }
  if (parts[0] == "per_cpu")
    return parts.size() == 4 && parts[1].rfind("cpu", 0) == 0 && AllDigits(parts[1].substr(3)) &&
           IsDir(parts[2]) && IsStat(parts[3]);
  return !parts[0].empty() && !kCoreSections.count(parts[0]) && IsStat(parts.back());
}

}  // namespace

bool ParseThreshold(const std::string& text, CompareOptions* opts, std::string* err) {
  // The value follows the last '=': a level's name has one of its own
  // ("offline.p50@online=2=50%").
  std::string key, value = text;
  size_t eq = text.rfind('=');
  if (eq != std::string::npos) {
    key = text.substr(0, eq);
    value = text.substr(eq + 1);
  }
  if (!value.empty() && value.back() == '%')
    value.pop_back();
  char* end = nullptr;
  double pct = value.empty() ? NAN : std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || !std::isfinite(pct) || pct < 0 || pct >= 100 ||
      (eq != std::string::npos && key.empty())) {
    *err = "--threshold '" + text + "': expected a percentage like 5% or METRIC=20% (0 to 100)";
    return false;
  }
  if (!key.empty() && !IsMetricName(key)) {
    *err = "--threshold '" + text + "': unknown metric '" + key +
           "' (p50, p99, offline, online, offline.p99, offline.p50@online=8, "
           "per_cpu.cpu1.offline.p50, or a summary path ending in .p50 or .p99)";
    return false;
  }
  if (key.empty())
    opts->threshold = pct / 100;
  else
    opts->overrides[key] = pct / 100;
  return true;
}

bool CheckThresholdsUsed(const Comparison& c, std::string* err) {
  for (const auto& [key, v] : c.options.overrides) {
    bool used = false;
    for (const CompareRow& r : c.rows)
      for (const Metric* m : {&r.p50, &r.p99}) {
        const std::string dir = m->name.find("offline") != std::string::npos  ? "offline"
                                : m->name.find("online") != std::string::npos ? "online"
                                                                              : "";
        used |= key == m->name || key == dir + "." + m->stat || key == m->stat || key == dir;
      }
    if (!used) {
      *err = "--threshold '" + key +
             "': no metric of that name in these reports (see the "
             "names in --format json)";
      return false;
    }
  }
  return true;
}

int CompareCommand(const std::string& base_path, const std::string& cand_path,
                   const CompareOptions& opts, const std::string& format, std::FILE* out,
                   const std::string& output) {
  return CompareCommand(std::vector<std::string>{base_path}, std::vector<std::string>{cand_path},
                        opts, format, out, output);
}

int CompareCommand(const std::vector<std::string>& base_paths,
                   const std::vector<std::string>& cand_paths, const CompareOptions& opts,
                   const std::string& format, std::FILE* out, const std::string& output) {
  json base, cand;
  std::string err;
  if (!output.empty() && output != "-" && !CheckOutputPath(output, &err)) {
    std::fprintf(stderr, "cpuhp-stress: compare: -o %s\n", err.c_str());
    return kExitBadInput;
  }
  // One report per side is read as it is (LoadAndPool's single case), so the
  // two-file form behaves as it always did.
  if (!LoadAndPool(base_paths, &base, &err) || !LoadAndPool(cand_paths, &cand, &err) ||
      !CheckComparable(base, cand, &err)) {
    std::fprintf(stderr, "cpuhp-stress: compare: %s\n", err.c_str());
    return kExitBadInput;
  }
  auto joined = [](const std::vector<std::string>& paths) {
    std::string s;
    for (const std::string& p : paths)
      s += (s.empty() ? "" : ", ") + p;
    return s;
  };
  const std::string base_path = joined(base_paths);
  const std::string cand_path = joined(cand_paths);
  if (format != "text" && format != "markdown" && format != "json") {
    std::fprintf(stderr, "cpuhp-stress: compare: --format '%s': expected text, markdown or json\n",
                 format.c_str());
    return kExitBadInput;
  }
  Comparison c = Compare(base, cand, opts);
  c.base_path = base_path;
  c.cand_path = cand_path;
  if (!CheckThresholdsUsed(c, &err)) {
    std::fprintf(stderr, "cpuhp-stress: compare: %s\n", err.c_str());
    return kExitBadInput;
  }
  std::string text = format == "markdown" ? CompareMarkdown(c)
                     : format == "json"   ? DumpJson(CompareJson(c), 2) + "\n"
                                          : CompareText(c);
  if (output.empty() || output == "-") {
    std::fputs(text.c_str(), out);
  } else if (!WriteFileAtomic(output, text, &err)) {
    std::fprintf(stderr, "cpuhp-stress: compare: %s\n", err.c_str());
    return kExitFailed;
  }
  return c.regressed() ? kExitFailed : kExitOk;
}

}  // namespace cpuhp
