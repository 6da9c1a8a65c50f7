// SPDX-License-Identifier: GPL-2.0
#include "report/compare_render.h"

#include <algorithm>
#include <cinttypes>
#include <tuple>

#include "util/report_json.h"

namespace cpuhp {
namespace {

using nlohmann::json;
using report_json::Fmt;
using report_json::MsText;

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
        out += Fmt("  %-13s %9s %9s  %-25s %s\n", label.c_str(), MsText(m.base_ns).c_str(),
                   MsText(m.cand_ns).c_str(), ratio.c_str(), MetricVerdict(m).c_str());
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
               std::to_string(r.cand_count) + " | " + MsText(m.base_ns) + " | " +
               MsText(m.cand_ns) + " | " + RatioText(m) + (m.has_ci ? " " + CiText(m) : "") +
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
  // One field a consumer tests before it trusts any number above: modeled
  // latencies (the sim backend) on either side, and which.
  json simulated_sides = json::array();
  if (c.base.simulated)
    simulated_sides.push_back("baseline");
  if (c.cand.simulated)
    simulated_sides.push_back("candidate");
  out["simulated"] = !simulated_sides.empty();
  out["simulated_sides"] = std::move(simulated_sides);
  if (boots) {
    out["baseline_boots"] = c.base.boots;
    out["candidate_boots"] = c.cand.boots;
    out["boots_disagree_rows"] = c.boots_disagree();
  }
  return out;
}

}  // namespace cpuhp
