// SPDX-License-Identifier: GPL-2.0
// `cpuhp-stress compare BASE.json CAND.json`: is the candidate faster, slower
// or the same, with evidence.
//
// Compared, per direction (offline, online):
//   directions            all operations            p50, p99 with CI; max
//   per_online_count      each online-CPU level     p50, p99 with CI; max
//   per_cpu               each CPU                  p50, p99, max (no buckets
//                                                   in per_cpu: ratio only)
//   errors, restore       checks: failed operations, readback mismatches,
//                         restore success
//   any other section     every latency summary ({count, p50_ns, ...}) found
//                         at the same path in both reports (kernel phases,
//                         kernel states, ...), with CI when it carries a
//                         "histogram"; everything else there is skipped.
//                         Array elements are matched by all their identity
//                         fields (a kernel state by direction, state,
//                         function and where); rows of timing_sources are
//                         grouped per source, and a source ok in one report
//                         only is named in a note.
// Several boots per side (A/B verification of a kernel patch): each side is
// pooled first (report/merge.h); its summaries then carry "per_boot". When a
// side holds two or more boots, a metric's improved or regressed verdict
// stands only if every boot agrees: every candidate boot's value below every
// baseline boot's (improved), or above (regressed). Otherwise it is no change
// and the metric says "boots disagree". One boot per side: no such rule.
// A metric regresses when the whole confidence interval of its ratio
// (candidate / baseline) lies above 1 + threshold, improves when it lies
// below 1 - threshold; otherwise no change. A metric without CI (no buckets)
// or with too few samples on one side for its quantile (fewer than 20 for
// p50, than 10 beyond the quantile for p99: 1000) gets no verdict ("n/a").
//
// Reading and checking the reports: report/compare_input.h; the text,
// Markdown and JSON renderings: report/compare_render.h; --threshold:
// report/compare_thresholds.h.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cpuhp {

struct CompareOptions {
  double threshold = 0.05;  // fraction
  // Per-metric thresholds (fractions), keyed by the metric's full name
  // ("offline.p99@online=8"), "<direction>.<stat>", "<stat>" or
  // "<direction>", first match wins in that order.
  std::map<std::string, double> overrides;
  double confidence = 0.95;
  int resamples = 2000;
  uint64_t seed = 1;
};

enum class Verdict { kNoChange, kImproved, kRegressed, kNotApplicable };
const char* VerdictName(Verdict v);

struct Metric {
  std::string name;  // "offline.p50", "offline.p50@online=8", "per_cpu.cpu1.offline.p50"
  std::string stat;  // "p50", "p99"
  double base_ns = 0;
  double cand_ns = 0;
  double ratio = 0;  // cand / base; 0 when base is 0
  bool has_ci = false;
  double ci_lo = 0;
  double ci_hi = 0;
  double threshold = 0;
  Verdict verdict = Verdict::kNotApplicable;
  // Each side's per-boot values of this statistic (from "per_boot", or the
  // report's own value for an unpooled one; boots without operations left
  // out). Filled only when a side holds two or more boots.
  std::vector<double> base_boots_ns;
  std::vector<double> cand_boots_ns;
  bool has_boots() const { return !base_boots_ns.empty() && !cand_boots_ns.empty(); }
  // The pooled interval's verdict before the across-boot rule; when the boot
  // ranges overlap in the direction of the change, verdict is kNoChange and
  // boots_disagree is set.
  Verdict pooled_verdict = Verdict::kNotApplicable;
  bool boots_disagree = false;
};

struct CompareRow {
  std::string group;  // "offline latency", "per_cpu offline", "kernel_phases"
  std::string label;  // "all", "8" (online CPUs), "cpu1", a path
  uint64_t base_count = 0;
  uint64_t cand_count = 0;
  Metric p50;
  Metric p99;
  uint64_t base_max_ns = 0;
  uint64_t cand_max_ns = 0;
  Verdict verdict() const;  // regressed if either metric is, else improved if either is
  bool boots_disagree() const { return p50.boots_disagree || p99.boots_disagree; }
};

struct CompareCheck {
  std::string name;  // "errors", "readback", "restore"
  std::string base;
  std::string cand;
  Verdict verdict = Verdict::kNoChange;
};

struct Comparison {
  // What a reader needs to know of each report: kernel, operations, and
  // whether its latencies were modeled.
  struct Side {
    std::string kernel_release;
    uint64_t ops = 0;
    bool simulated = false;
    uint64_t boots = 1;  // a pooled report's "pooled.boots"
  };
  std::string base_path;
  std::string cand_path;
  Side base;
  Side cand;
  CompareOptions options;
  std::vector<CompareRow> rows;
  std::vector<CompareCheck> checks;
  std::vector<std::string> notes;  // skipped sections, clock differences
  bool regressed() const;
  int regressions() const;
  int improvements() const;
  // Rows with a metric whose verdict the boots did not all bear out.
  int boots_disagree() const;
  // Whether any metric has per-boot values (a side with two or more boots).
  bool has_boots() const;
};

// The key compare (and merge) match an array element by: all its identity
// fields ("direction=offline,state=...,function=...,where=..."), else its
// index.
std::string ElementKey(const nlohmann::json& e, size_t index);

// Sections with a meaning compare knows (or that describe the run, not its
// latency: "config", "directions", "per_cpu", ...); every other top-level
// section is walked generically and a threshold may name its summaries.
bool IsCoreSection(const std::string& section);

Comparison Compare(const nlohmann::json& base, const nlohmann::json& cand,
                   const CompareOptions& opts);
// How many comparisons this process made (a whole report's comparison costs
// seconds: `report --baseline` makes one per command, whatever it renders).
uint64_t CompareCalls();

// Exit codes: 0 nothing regressed, 1 something did, 2 bad input.
// `output` ("" or "-": `out`) is written atomically, checked before the
// reports are read.
int CompareCommand(const std::string& base_path, const std::string& cand_path,
                   const CompareOptions& opts, const std::string& format, std::FILE* out,
                   const std::string& output = "");
// Several reports per side (boots of one kernel): each side is pooled as
// `merge` does (one report is read as it is) and the pools are compared.
int CompareCommand(const std::vector<std::string>& base_paths,
                   const std::vector<std::string>& cand_paths, const CompareOptions& opts,
                   const std::string& format, std::FILE* out, const std::string& output = "");

}  // namespace cpuhp
