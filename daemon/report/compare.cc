// SPDX-License-Identifier: GPL-2.0
#include "report/compare.h"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <iterator>
#include <optional>
#include <set>

#include "report/compare_input.h"
#include "report/compare_render.h"
#include "report/compare_thresholds.h"
#include "report/merge.h"
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

using report_json::kDirs;
constexpr size_t kMaxGenericRows = 2000;
constexpr int kMaxDepth = 8;

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
                          "cpu", "id", "index", "i", "mode"}) {
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

std::string LevelList(const std::set<int64_t>& levels) {
  std::string out;
  for (int64_t l : levels)
    out += Fmt("%s%" PRId64, out.empty() ? "" : ", ", l);
  return out.empty() ? "none" : out;
}

// Two sweeps that did not both measure the same levels fully (one stopped
// early, or other levels): the levels both measured fully, and a note that
// says so. nullopt: not sweeps, or alike (every row compares like with like).
std::optional<std::set<int64_t>> SharedSweepLevels(const json& base, const json& cand,
                                                   std::vector<std::string>* notes) {
  const report_json::SweepLevels b = report_json::ReadSweepLevels(base);
  const report_json::SweepLevels c = report_json::ReadSweepLevels(cand);
  if (!b.sweep || !c.sweep)
    return std::nullopt;
  auto complete = [](const report_json::SweepLevels& s) {
    std::set<int64_t> out;
    for (const report_json::SweepLevel& l : s.levels)
      if (l.complete)
        out.insert(l.online);
    return out;
  };
  const std::set<int64_t> bc = complete(b), cc = complete(c);
  if (bc == cc && b.all_complete() && c.all_complete())
    return std::nullopt;
  std::set<int64_t> shared;
  std::set_intersection(bc.begin(), bc.end(), cc.begin(), cc.end(),
                        std::inserter(shared, shared.end()));
  auto side = [](const char* name, const report_json::SweepLevels& s,
                 const std::set<int64_t>& full) {
    const std::string gap = report_json::SweepShortfall(s);
    return (full.empty() ? Fmt("the %s measured no level fully", name)
                         : Fmt("the %s measured level%s %s fully", name,
                               full.size() == 1 ? "" : "s", LevelList(full).c_str())) +
           (gap.empty() ? "" : " (" + gap + ")");
  };
  notes->push_back("sweeps measured different levels: " + side("baseline", b, bc) + ", " +
                   side("candidate", c, cc) + "; compared only the levels both measured fully (" +
                   LevelList(shared) +
                   "), level by level: the all, per-CPU and other rows, which pool every "
                   "level, are left out");
  return shared;
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

}  // namespace

bool IsCoreSection(const std::string& section) {
  return kCoreSections.count(section) > 0;
}

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

namespace {

Comparison::Side SideOf(const json& r) {
  Comparison::Side s;
  s.kernel_release = Str(Get(r, "host"), "kernel_release");
  s.ops = U64(Get(r, "totals"), "ops");
  s.simulated = Str(Get(r, "run"), "clock") == "simulated";
  s.boots = std::max<uint64_t>(1, U64(Get(r, "pooled"), "boots"));
  return s;
}

}  // namespace

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
  // Sweeps that did not both measure the same levels fully: only the levels
  // both did are compared; every row that pools all levels is left out.
  const std::optional<std::set<int64_t>> shared = SharedSweepLevels(base, cand, &out.notes);
  auto kept = [&](const char* dir, int64_t online) {
    // At sweep level N the victim goes offline from N online, back from N-1.
    return !shared || shared->count(std::string(dir) == "online" ? online + 1 : online);
  };
  for (const char* dir : kDirs) {
    std::string group = std::string(dir) + " latency";
    auto bl = Levels(base, dir);
    auto cl = Levels(cand, dir);
    std::erase_if(bl, [&](const auto& l) { return !kept(dir, l.first); });
    std::erase_if(cl, [&](const auto& l) { return !kept(dir, l.first); });
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
    if (IsSummary(b) && IsSummary(c) && !shared)
      out.rows.push_back(MakeRow(group, "all", dir, dir, b, c, opts));
  }
  // Per CPU: summaries only (no buckets), ratios without verdicts.
  for (const char* dir : kDirs) {
    if (shared)
      break;
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
    if (kCoreSections.count(key) || shared)
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
    if (!kCoreSections.count(key) && !base.contains(key) && !shared)
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
