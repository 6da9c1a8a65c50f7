// SPDX-License-Identifier: GPL-2.0
#include "report/merge.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <unordered_map>

#include "report/compare.h"
#include "report/compare_input.h"
#include "report/run_identity.h"
#include "stats/histogram.h"
#include "stats/run_stats.h"
#include "util/exit_codes.h"
#include "util/file_util.h"
#include "util/json_file.h"
#include "util/report_json.h"

namespace cpuhp {
namespace {

using nlohmann::json;
using report_json::Get;
using report_json::IsSummary;
using report_json::Num;
using report_json::Str;
using report_json::U64;

// Runner::kMaxFirstErrors: a pooled report keeps as many as one run does.
constexpr size_t kMaxFirstErrors = 100;

// The fields of a latency summary (SummarizeHistogram, probe_stats, a
// kernel state's), recomputed by PoolSummary; a row's other fields are its
// identity, labels or counters.
const std::set<std::string> kSummaryFields = {"count",     "min_ns",    "max_ns",  "mean_ns",
                                              "p50_ns",    "p90_ns",    "p99_ns",  "p99_9_ns",
                                              "stddev_ns", "histogram", "per_boot"};
const char* const kPercentiles[] = {"p50_ns", "p90_ns", "p99_ns", "p99_9_ns"};

// Integers summed over the boots wherever they are: counts of operations,
// failures, lost or dropped events, kernel log records, time spent (and
// every integer of a "counts" object: the kernel log's per kind). Every
// other value is the first boot's that has one.
const std::set<std::string> kSummedCounters = {
    // core sections
    "ops", "ok", "failed", "readback_mismatches", "setup_ops", "offline_ops", "online_ops",
    "offline_failed", "online_failed", "elapsed_ns", "simulated_elapsed_ns", "first_errors_dropped",
    "writes",
    // kernel states and phases
    "total_ns", "self_ns", "retval_nonzero", "longer_than_write",
    // tracepoints
    "parsed", "malformed_lines", "unmatched_enters", "unmatched_exits", "steps_outside_operations",
    "open_at_end", "dropped", "lost_markers", "overrun", "total", "ops_with_steps",
    "ops_without_steps", "write_total_ns", "drains", "inline_drains", "drainer_boosts",
    "drain_cpu_ns", "kallsyms_lookups", "unnamed_callbacks",
    // the module
    "read", "joined", "unjoined", "nesting_violations", "ops_dropped", "hits", "nmissed",
    // the bpf source (beside the module's)
    "unmatched", "records_dropped",
    // the smt pattern's switches
    "switches", "cpus_changed", "failed_writes", "incomplete", "with_injected_faults",
    // disturbance probes
    "samples", "missed_periods", "off_cpu_samples", "repins",
    // kernel log health
    "events", "records_read", "records_lost", "records_malformed", "drain_ns"};

// One input report and the boots it holds (a pooled input: several).
struct Input {
  const json* report = nullptr;
  uint64_t boots = 1;
};

// The same place in every input; nullptr where an input lacks it.
using Nodes = std::vector<const json*>;

const json* FirstPresent(const Nodes& nodes) {
  for (const json* n : nodes)
    if (n)
      return n;
  return nullptr;
}

uint64_t SumOf(const Nodes& nodes, const std::string& key) {
  uint64_t sum = 0;
  for (const json* n : nodes)
    if (n)
      sum += U64(*n, key.c_str());
  return sum;
}

uint64_t ExtremeOf(const Nodes& nodes, const std::string& key, bool max) {
  uint64_t out = max ? 0 : UINT64_MAX;
  for (const json* n : nodes)
    if (n && n->contains(key))
      out = max ? std::max(out, U64(*n, key.c_str())) : std::min(out, U64(*n, key.c_str()));
  return out == UINT64_MAX ? 0 : out;
}

// One boot's line in "per_boot".
json BootEntry(const json& s) {
  json e = {{"count", U64(s, "count")}, {"p50_ns", U64(s, "p50_ns")}};
  if (s.contains("p99_ns"))
    e["p99_ns"] = U64(s, "p99_ns");
  return e;
}

// One entry per boot, input order; a pooled input contributes its own.
json PerBoot(const Nodes& rows, const std::vector<Input>& inputs) {
  static const json kNull;
  json out = json::array();
  for (size_t i = 0; i < rows.size(); ++i) {
    const uint64_t boots = inputs[i].boots;
    const json& own = rows[i] ? Get(*rows[i], "per_boot") : kNull;
    if (rows[i] && boots == 1) {
      out.push_back(BootEntry(*rows[i]));
    } else if (rows[i] && own.is_array() && own.size() == boots) {
      for (const json& e : own)
        out.push_back(e);
    } else {  // absent in this input (or a pooled input without its boots)
      for (uint64_t b = 0; b < boots; ++b)
        out.push_back(json(nullptr));
    }
  }
  return out;
}

// Summaries without a histogram: count, min, max, mean and stddev pool
// exactly (Chan's combination of moments); a percentile does not, and is
// the median of the boots' values.
json PoolMoments(const Nodes& present) {
  const json& first = *present.front();
  uint64_t count = 0;
  uint64_t min_ns = UINT64_MAX;
  uint64_t max_ns = 0;
  double weighted = 0;
  for (const json* r : present) {
    const uint64_t n = U64(*r, "count");
    if (n == 0)
      continue;
    count += n;
    min_ns = std::min(min_ns, U64(*r, "min_ns"));
    max_ns = std::max(max_ns, U64(*r, "max_ns"));
    weighted += static_cast<double>(n) * Num(*r, "mean_ns");
  }
  const double mean = count ? weighted / static_cast<double>(count) : 0;
  double m2 = 0;
  for (const json* r : present) {
    const double n = static_cast<double>(U64(*r, "count"));
    const double sd = Num(*r, "stddev_ns");
    const double d = Num(*r, "mean_ns") - mean;
    m2 += n * (sd * sd + d * d);
  }
  json out = {{"count", count}};
  if (first.contains("min_ns"))
    out["min_ns"] = count ? min_ns : 0;
  if (first.contains("max_ns"))
    out["max_ns"] = max_ns;
  for (const char* p : kPercentiles) {
    if (!first.contains(p))
      continue;
    std::vector<uint64_t> v;
    for (const json* r : present)
      if (U64(*r, "count") > 0)
        v.push_back(U64(*r, p));
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    out[p] = n == 0 ? 0 : n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
  }
  if (first.contains("mean_ns"))
    out["mean_ns"] = mean;
  if (first.contains("stddev_ns"))
    out["stddev_ns"] = count ? std::sqrt(m2 / static_cast<double>(count)) : 0.0;
  return out;
}

json PoolSummary(const Nodes& rows, const std::vector<Input>& inputs) {
  Nodes present;
  for (const json* r : rows)
    if (r)
      present.push_back(r);
  // Histograms when every boot has one (compare's bootstrap needs them):
  // the pooled summary is that of the summed buckets, as the daemon writes it.
  Histogram pooled;
  bool histograms = true;
  for (const json* r : present) {
    Histogram h;
    auto it = r->find("histogram");
    if (it == r->end() || !h.FromJson(*it, nullptr) || h.count() != U64(*r, "count")) {
      histograms = false;
      break;
    }
    pooled.Merge(h);
  }
  json out;
  if (histograms) {
    out = SummarizeHistogram(pooled);
    out["histogram"] = pooled.ToJson();
  } else {
    out = PoolMoments(present);
  }
  for (const auto& [key, v] : present.front()->items()) {
    if (kSummaryFields.count(key))
      continue;
    out[key] = v.is_number_integer() && kSummedCounters.count(key) ? json(SumOf(present, key)) : v;
    // A per-item extreme (an SMT switch's fewest and most CPUs): over the boots.
    if (v.is_number_integer() && key.ends_with("_min"))
      out[key] = ExtremeOf(present, key, false);
    if (v.is_number_integer() && key.ends_with("_max"))
      out[key] = ExtremeOf(present, key, true);
  }
  out["per_boot"] = PerBoot(rows, inputs);
  return out;
}

// summed_children: every integer below is a counter ("counts").
json PoolNode(const Nodes& nodes, const std::vector<Input>& inputs, bool summed_children = false);

// Children of `nodes` under `key` (objects) with the first one's type.
Nodes Children(const Nodes& nodes, const std::string& key, json::value_t type, bool summary) {
  Nodes out(nodes.size(), nullptr);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!nodes[i])
      continue;
    auto it = nodes[i]->find(key);
    if (it != nodes[i]->end() && it->type() == type && IsSummary(*it) == summary)
      out[i] = &*it;
  }
  return out;
}

json PoolObject(const Nodes& nodes, const std::vector<Input>& inputs, bool summed_children) {
  std::set<std::string> keys;
  for (const json* n : nodes)
    if (n)
      for (const auto& [k, v] : n->items())
        keys.insert(k);
  json out = json::object();
  for (const std::string& k : keys) {
    // The first boot's value that is not null (a kernel log's first event
    // may be in the second boot).
    const json* first = nullptr;
    for (const json* n : nodes)
      if (n && n->contains(k) && (!first || first->is_null()))
        first = &n->at(k);
    Nodes children = Children(nodes, k, first->type(), IsSummary(*first));
    const bool counter =
        kSummedCounters.count(k) || summed_children ||
        (k == "count" && Get(*FirstPresent(nodes), "errno").is_number());  // an errno's count
    if (first->is_structured())
      out[k] = PoolNode(children, inputs, k == "counts");
    else if (first->is_number_integer() && counter)
      out[k] = SumOf(nodes, k);
    else if (first->is_boolean() && k == "stopped_run")  // kernel log health stopped a boot
      out[k] = std::any_of(nodes.begin(), nodes.end(), [&](const json* n) {
        return n && Get(*n, "stopped_run").is_boolean() && Get(*n, "stopped_run").get<bool>();
      });
    else
      out[k] = *first;
  }
  return out;
}

// Rows matched by compare's identity key; order: the first input's rows,
// then rows only later inputs have. An array of plain values is the first's.
json PoolArray(const Nodes& nodes, const std::vector<Input>& inputs) {
  const json* first = FirstPresent(nodes);
  if (std::none_of(first->begin(), first->end(), [](const json& e) { return e.is_structured(); }))
    return *first;
  // Hashed: a row is looked up once per input, so an array of n rows costs
  // O(n) whatever n is (a linear search per row made 100k rows take 20 s).
  std::vector<Nodes> rows;  // per key, first-seen order: the row of each input
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!nodes[i])
      continue;
    index.reserve(index.size() + nodes[i]->size());
    for (size_t j = 0; j < nodes[i]->size(); ++j) {
      const json& e = (*nodes[i])[j];
      if (!e.is_structured())
        continue;
      auto [it, added] = index.emplace(ElementKey(e, j), rows.size());
      if (added)
        rows.emplace_back(nodes.size(), nullptr);
      const json*& slot = rows[it->second][i];
      if (!slot)  // a key twice in one input: its first row
        slot = &e;
    }
  }
  json out = json::array();
  for (Nodes& row : rows) {
    const json* model = FirstPresent(row);
    for (const json*& r : row)
      if (r && (r->type() != model->type() || IsSummary(*r) != IsSummary(*model)))
        r = nullptr;
    out.push_back(PoolNode(row, inputs));
  }
  return out;
}

json PoolNode(const Nodes& nodes, const std::vector<Input>& inputs, bool summed_children) {
  const json* first = FirstPresent(nodes);
  if (IsSummary(*first))
    return PoolSummary(nodes, inputs);
  if (first->is_object())
    return PoolObject(nodes, inputs, summed_children);
  if (first->is_array())
    return PoolArray(nodes, inputs);
  return *first;
}

void SortBy(json* rows, const char* key) {
  if (rows->is_array())
    std::stable_sort(rows->begin(), rows->end(),
                     [key](const json& a, const json& b) { return U64(a, key) < U64(b, key); });
}

}  // namespace

bool CheckMergeable(const json& first, const std::string& first_path, const json& other,
                    const std::string& other_path, std::string* err) {
  const json& fv = Get(first, "schema_version");
  const json& ov = Get(other, "schema_version");
  if (fv != ov) {
    *err = "different schema_version: " + first_path + " has " + DumpJson(fv) + ", " + other_path +
           " " + DumpJson(ov);
    return false;
  }
  if (!CheckComparableNamed(first, other, first_path, other_path, err))
    return false;
  const std::string fk = Str(Get(first, "host"), "kernel_release", "?");
  const std::string ok = Str(Get(other, "host"), "kernel_release", "?");
  if (fk != ok) {
    *err = "different kernel_release: " + first_path + " ran " + fk + ", " + other_path + " " + ok +
           " (merge pools boots of one kernel; compare the two kernels instead)";
    return false;
  }
  return true;
}

bool MergeReports(const std::vector<std::string>& paths, const std::vector<json>& reports,
                  json* out, std::string* err) {
  if (reports.empty() || paths.size() != reports.size()) {
    *err = "no reports to merge";
    return false;
  }
  for (size_t i = 1; i < reports.size(); ++i)
    if (!CheckMergeable(reports[0], paths[0], reports[i], paths[i], err))
      return false;
  if (!CheckDistinctRuns(paths, reports, err))
    return false;
  std::vector<Input> inputs;
  Nodes nodes;
  json sources = json::array();
  json runs = json::array();
  for (size_t i = 0; i < reports.size(); ++i) {
    const json& pooled = Get(reports[i], "pooled");
    const json& names = Get(pooled, "reports");
    Input in;
    in.report = &reports[i];
    in.boots = std::max<uint64_t>(1, U64(pooled, "boots"));
    if (names.is_array() && names.size() == in.boots)
      for (const json& n : names)
        sources.push_back(n);
    else
      for (uint64_t b = 0; b < in.boots; ++b)
        sources.push_back(paths[i]);
    for (const std::optional<RunId>& id : RunsOf(reports[i]))
      runs.push_back(id ? RunIdToJson(*id) : json(nullptr));
    inputs.push_back(in);
    nodes.push_back(&reports[i]);
  }
  json r = PoolNode(nodes, inputs);

  // What the generic walk cannot know: times, the restore, first errors.
  if (r.contains("run") && r["run"].is_object()) {
    for (const char* key : {"started_at", "ended_at"}) {
      const bool earliest = std::string(key) == "started_at";
      std::string pick;
      for (const json& in : reports) {
        const std::string t = Str(Get(in, "run"), key);
        if (!t.empty() && (pick.empty() || (earliest ? t < pick : t > pick)))
          pick = t;
      }
      if (!pick.empty())
        r["run"][key] = pick;
    }
  }
  if (r.contains("restore") && r["restore"].is_object()) {
    bool ok = true;
    json failures = json::array();
    for (const json& in : reports) {
      const json& restore = Get(in, "restore");
      ok &= Get(restore, "ok").is_boolean() && Get(restore, "ok").get<bool>();
      if (Get(restore, "failures").is_array())
        for (const json& f : restore["failures"])
          failures.push_back(f);
    }
    r["restore"]["ok"] = ok;
    r["restore"]["failures"] = std::move(failures);
  }
  json first_errors = json::array();
  uint64_t dropped = 0;
  uint64_t max_rss_kib = 0, loop_cpu_ns = 0, loop_ops = 0;
  for (const json& in : reports) {
    dropped += U64(in, "first_errors_dropped");
    if (Get(in, "first_errors").is_array())
      for (const json& e : in["first_errors"]) {
        if (first_errors.size() < kMaxFirstErrors)
          first_errors.push_back(e);
        else
          ++dropped;
      }
    max_rss_kib = std::max(max_rss_kib, U64(Get(in, "process"), "max_rss_kib"));
    loop_cpu_ns += U64(Get(in, "process"), "loop_cpu_ns");
    loop_ops += U64(Get(in, "process"), "loop_ops");
  }
  r["first_errors"] = std::move(first_errors);
  r["first_errors_dropped"] = dropped;
  if (r.contains("process") && r["process"].contains("max_rss_kib"))
    r["process"]["max_rss_kib"] = max_rss_kib;
  if (r.contains("process") && r["process"].contains("loop_cpu_ns")) {
    r["process"]["loop_cpu_ns"] = loop_cpu_ns;
    r["process"]["loop_ops"] = loop_ops;
  }
  for (const char* dir : {"offline", "online"})
    if (r.contains("per_online_count") && r["per_online_count"].contains(dir))
      SortBy(&r["per_online_count"][dir], "online_cpus");
  if (r.contains("per_cpu"))
    SortBy(&r["per_cpu"], "cpu");
  // One boot's time series and restarts say nothing about the pool.
  r.erase("timeline");
  r.erase("soak");
  const uint64_t boots = sources.size();
  r["pooled"] = {{"reports", std::move(sources)}, {"boots", boots}, {"runs", std::move(runs)}};
  *out = std::move(r);
  return true;
}

bool LoadAndPool(const std::vector<std::string>& paths, json* out, std::string* err) {
  std::vector<json> reports(paths.size());
  for (size_t i = 0; i < paths.size(); ++i)
    if (!LoadReport(paths[i], &reports[i], err) || !CheckConsistent(reports[i], paths[i], err))
      return false;
  if (reports.size() == 1) {
    *out = std::move(reports[0]);
    return true;
  }
  return MergeReports(paths, reports, out, err);
}

int MergeCommand(const std::vector<std::string>& inputs, const std::string& output,
                 std::FILE* out) {
  std::string err;
  auto fail = [&](int code) {
    std::fprintf(stderr, "cpuhp-stress: merge: %s\n", err.c_str());
    return code;
  };
  if (output.empty()) {
    err = "-o OUT.json is required (- for stdout)";
    return fail(kExitBadInput);
  }
  if (output != "-" && !CheckOutputPath(output, &err)) {
    err = "-o " + err;
    return fail(kExitBadInput);
  }
  std::vector<json> reports(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!LoadReport(inputs[i], &reports[i], &err) || !CheckConsistent(reports[i], inputs[i], &err))
      return fail(kExitBadInput);
  json pooled;
  if (!MergeReports(inputs, reports, &pooled, &err))
    return fail(kExitBadInput);
  const std::string text = DumpJson(pooled, 2) + "\n";
  if (output == "-") {
    std::fputs(text.c_str(), out);
  } else if (!WriteFileAtomic(output, text, &err)) {
    return fail(kExitFailed);
  }
  return kExitOk;
}

}  // namespace cpuhp
