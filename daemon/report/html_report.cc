// SPDX-License-Identifier: GPL-2.0
#include "report/html_report.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <map>
#include <tuple>

#include "report/html_sections.h"
#include "report/svg_chart.h"
#include "stats/histogram.h"
#include "util/report_json.h"

namespace cpuhp {
namespace {

using html::Count;
using html::CpuList;
using html::Disturbance;
using html::Esc;
using html::kColors;
using html::KernelStates;
using html::KmodPhases;
using html::MakeSeries;
using html::NotMeasured;
using html::TimelineSection;
using nlohmann::json;
using report_json::Fmt;
using report_json::Get;
using report_json::Ms;
using report_json::Num;
using report_json::OptNum;
using report_json::Path;
using report_json::SourceStatus;
using report_json::Str;
using report_json::U64;
using report_json::Us;

using report_json::kDirs;
constexpr int kHistogramBins = 80;

// A source's status as a phrase: "absent" is a source not in the report.
std::string StatusPhrase(const json& report, const char* source) {
  std::string status = SourceStatus(report, source);
  return std::string(source) + " " + (status == "absent" ? "not in this report" : status);
}

// ---- latency vs online CPUs ----

struct LevelSeries {
  std::string label;   // legend: "takedown_cpu (kmod)"
  std::string series;  // data-series stem: "offline takedown_cpu (kmod)"
  const json* levels;  // array of online_count_latency
};

// Adds p50 (solid, in the legend) and p99 (dashed) of one array of
// per-online-count summaries. Levels without samples are not drawn.
void AddLevelSeries(Chart* c, const LevelSeries& ls, const char* color) {
  ChartSeries p50 = MakeSeries(ls.series + " p50", color, true, true, false);
  ChartSeries p99 = MakeSeries(ls.series + " p99", color, true, true, true);
  p50.legend_label = ls.label;
  p99.legend = false;
  std::vector<std::tuple<double, double, double, uint64_t>> rows;  // x, p50, p99, n
  for (const json& l : *ls.levels) {
    if (U64(l, "count") == 0 || !OptNum(l, "online_cpus"))
      continue;
    rows.emplace_back(Num(l, "online_cpus"), Ms(Num(l, "p50_ns")), Ms(Num(l, "p99_ns")),
                      U64(l, "count"));
  }
  std::sort(rows.begin(), rows.end());
  for (auto [x, y50, y99, n] : rows) {
    p50.points.emplace_back(x, y50);
    p99.points.emplace_back(x, y99);
    p50.n.push_back(n);
    p99.n.push_back(n);
  }
  c->series.push_back(std::move(p50));
  c->series.push_back(std::move(p99));
}

// Per direction: the write(2) and every kernel phase that has per-online-
// count rows: the tracepoints' named phases and the kmod probes.
std::vector<LevelSeries> PhaseSeries(const json& report, const std::string& dir) {
  std::vector<LevelSeries> out;
  const json& tp = Path(report, {"timing_sources", "tracepoints"});
  if (Str(tp, "status") == "ok" && Get(tp, "phases").is_array())
    for (const json& ph : tp["phases"])
      if (Str(ph, "direction") == dir && Get(ph, "per_online_count").is_array() &&
          !ph["per_online_count"].empty())
        out.push_back({Str(ph, "name", "?") + " (tracepoints)",
                       dir + " " + Str(ph, "name", "?") + " (tracepoints)",
                       &ph["per_online_count"]});
  for (const char* source : {"kmod", "bpf"}) {
    const json& km = Path(report, {"timing_sources", source});
    const std::string tag = std::string(" (") + source + ")";
    if (Str(km, "status") == "ok")
      for (const auto& [name, ph] : Path(km, {"kernel_phases", dir.c_str()}).items())
        if (Get(ph, "by_online").is_array() && !ph["by_online"].empty())
          out.push_back({name + tag, dir + " " + name + tag, &ph["by_online"]});
  }
  return out;
}

constexpr const char* kBaselineColor = "#9c9c9c";

// The baseline's name wherever it is drawn: the file, its kernel and size.
std::string BaselineName(const ReportOptions& opts) {
  const json& b = *opts.baseline;
  return (opts.baseline_path.empty() ? "baseline" : opts.baseline_path) + " (" +
         Str(Get(b, "host"), "kernel_release", "?") +
         (report_json::IsSimulated(b) ? " SIMULATED" : "") + ", " +
         Count(U64(Get(b, "totals"), "ops"), "operation") + ")";
}

std::string LatencyVsOnline(const json& report, const char* dir, const ReportOptions& opts) {
  Chart c;
  c.title = std::string(dir) + " latency vs online CPUs (p50 solid, p99 dashed)";
  c.x_label = "online CPUs before the operation (count)";
  c.y_label = "latency (ms)";
  const json& levels = Path(report, {"per_online_count", dir});
  int color = std::string(dir) == "offline" ? 0 : 1;
  // The baseline's write(2) in grey beside this run's (`report --baseline`),
  // drawn first: where the two are equal this run's line stays on top.
  const json* base = opts.baseline ? &Path(*opts.baseline, {"per_online_count", dir}) : nullptr;
  if (base && base->is_array() && !base->empty())
    AddLevelSeries(
        &c, {"baseline " + std::string(dir) + " write(2)", "baseline " + std::string(dir), base},
        kBaselineColor);
  if (levels.is_array())
    AddLevelSeries(&c, {std::string(dir) + " write(2)", dir, &levels}, kColors[color]);
  std::vector<LevelSeries> phases = PhaseSeries(report, dir);
  for (size_t i = 0; i < phases.size(); i++)
    AddLevelSeries(&c, phases[i], kColors[(i + 2) % html::kColorCount]);
  // Phases of a few microseconds beside writes of milliseconds: a log axis
  // keeps both readable.
  double lo = INFINITY, hi = 0;
  for (const ChartSeries& s : c.series)
    for (auto [x, y] : s.points)
      if (y > 0) {
        lo = std::min(lo, y);
        hi = std::max(hi, y);
      }
  c.log_y = hi > 0 && hi / lo > 50;
  std::string out = RenderChart(c);
  out +=
      Fmt("<p class=\"meta\">Each point is one level: its marker grows with the operations "
          "at that level (n in its tooltip); hollow: fewer than %llu operations, where the "
          "p99 is only the largest of a few.</p>\n",
          static_cast<unsigned long long>(kFewOps));
  if (phases.empty())
    out += "<p class=\"na\">No kernel phases per online count for " + std::string(dir) +
           " (sources: " + Esc(StatusPhrase(report, "tracepoints")) + ", " +
           Esc(StatusPhrase(report, "kmod")) + ").</p>\n";
  return out;
}

std::string LevelTable(const json& report) {
  std::string out =
      "<table><tr><th>direction</th><th>what</th><th>online CPUs</th><th>ops</th>"
      "<th>p50 (ms)</th><th>p99 (ms)</th><th>max (ms)</th></tr>\n";
  auto rows = [&](const std::string& dir, const std::string& what, const json& levels) {
    for (const json& l : levels)
      if (U64(l, "count") > 0)
        out += Fmt("<tr><td>%s</td><td>%s</td><td>%" PRIu64 "</td><td>%" PRIu64
                   "</td><td>%.3f</td><td>%.3f</td><td>%.3f</td></tr>\n",
                   dir.c_str(), Esc(what).c_str(), U64(l, "online_cpus"), U64(l, "count"),
                   Ms(Num(l, "p50_ns")), Ms(Num(l, "p99_ns")), Ms(Num(l, "max_ns")));
  };
  for (const char* d : kDirs) {
    const json& levels = Path(report, {"per_online_count", d});
    if (levels.is_array())
      rows(d, "write(2)", levels);
    for (const LevelSeries& ls : PhaseSeries(report, d))
      rows(d, ls.label, *ls.levels);
  }
  return out + "</table>\n";
}

// ---- histograms ----

// A direction's histogram re-binned into equal-width bins over [min, p99.9]
// (a far outlier would squash everything else into one bar; it is counted in
// the last bin and named in the title).
std::string LatencyHistogram(const json& report, const char* dir) {
  const json& s = Path(report, {"directions", dir});
  Chart c;
  c.bars = true;
  c.x_label = std::string(dir) + " latency (ms)";
  c.y_label = "operations (count)";
  c.height = 280;
  Histogram h;
  std::string err;
  if (!Get(s, "histogram").is_object() || !h.FromJson(s["histogram"], &err) || h.count() == 0) {
    c.title = std::string(dir) + " latency histogram: no buckets in this report";
    return RenderChart(c);
  }
  double lo = static_cast<double>(h.min_ns());
  double hi = static_cast<double>(std::max(h.PercentileNs(99.9), h.min_ns() + 1));
  bool clipped = h.max_ns() > h.PercentileNs(99.9);
  double width = (hi - lo) / kHistogramBins;
  std::vector<double> bins(kHistogramBins, 0);
  const json hj = h.ToJson();
  for (const auto& b : hj["buckets"]) {
    int index = b[0].get<int>();
    double mid =
        static_cast<double>(Histogram::BucketLow(index) +
                            (Histogram::BucketHigh(index) - Histogram::BucketLow(index)) / 2);
    mid = std::clamp(mid, lo, hi);
    int bin = std::min(kHistogramBins - 1, static_cast<int>((mid - lo) / width));
    bins[static_cast<size_t>(bin)] += b[1].get<double>();
  }
  ChartSeries bars =
      MakeSeries(std::string(dir) + " histogram",
                 std::string(dir) == "offline" ? kColors[0] : kColors[1], false, true, false);
  for (int i = 0; i < kHistogramBins; i++)
    if (bins[static_cast<size_t>(i)] > 0)
      bars.points.emplace_back(Ms(lo + i * width), bins[static_cast<size_t>(i)]);
  c.bar_width = Ms(width);
  c.series.push_back(bars);
  c.title = Fmt(
      "%s latency histogram (%" PRIu64 " operations, %.3f ms bins%s)", dir, h.count(), Ms(width),
      clipped
          ? Fmt(", above p99.9 in the last bin, max %.3f ms", Ms(static_cast<double>(h.max_ns())))
                .c_str()
          : "");
  return RenderChart(c);
}

std::string SourcesTable(const json& report) {
  const json& ts = Get(report, "timing_sources");
  if (!ts.is_object() || ts.empty())
    return "<p class=\"na\">No timing sources in this report.</p>\n";
  std::string out = "<table><tr><th>source</th><th>status</th><th>detail</th></tr>\n";
  for (const auto& [name, s] : ts.items()) {
    std::string status = Str(s, "status", "?");
    out += "<tr><td>" + Esc(name) + "</td><td class=\"" + (status == "ok" ? "pass" : "na") + "\">" +
           Esc(status) + "</td><td style=\"text-align:left\">" +
           Esc(Str(s, "reason", Str(s, "measures"))) + "</td></tr>\n";
  }
  return out + "</table>\n";
}

const char* kStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.5em auto;max-width:960px;color:#222;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}
td:first-child,th:first-child{text-align:left}.pass{color:#2a7d2a}.fail{color:#c0392b;font-weight:bold}
.meta{color:#555;font-size:.9em}.na{color:#777;font-style:italic}svg.chart{max-width:100%;height:auto;display:block;margin:.5em 0}
svg .title{font-size:14px;font-weight:600}svg .tick{font-size:11px;fill:#444}svg .label{font-size:12px;fill:#222}
svg .legend{font-size:11px}svg .plot{fill:#fcfcfc;stroke:#bbb}svg .grid{stroke:#e6e6e6}svg .axis{stroke:#888}
svg .mark{stroke:#d62728;stroke-width:1.5;stroke-dasharray:3 2;opacity:.8}svg .markkey{fill:#d62728}
)";

}  // namespace

std::string FormatHtml(const json& report, const ReportOptions& opts) {
  const json& host = Get(report, "host");
  const json& run = Get(report, "run");
  const json& totals = Get(report, "totals");
  const bool sim = report_json::IsSimulated(report);
  // A sim run toggled no CPU of this kernel: the title does not name it.
  std::string title = sim ? "SIMULATED cpuhp-stress: sim backend on " + Str(host, "hostname", "?")
                          : "cpuhp-stress: " + Str(host, "kernel_release", "?") + " on " +
                                Str(host, "hostname", "?");
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>" +
      Esc(title) + "</title>\n<style>" + kStyle + "</style></head>\n<body>\n";
  out += "<h1>" + Esc(title) + "</h1>\n";
  // A sim run's operations took simulated time (the loop's wall time says
  // nothing about them), and its kernel line names the model, not the host.
  const std::string machine = sim ? "Kernel SIMULATED (the model ran on the host's " +
                                        Str(host, "kernel_release", "?") + ", " +
                                        Str(host, "cpu_model", "?") + ")"
                                  : Str(host, "cpu_model", "?");
  const std::string took =
      sim ? Fmt("%.3f s simulated (%.1f s of wall time)", Num(run, "simulated_elapsed_ns") / 1e9,
                Num(run, "elapsed_ns") / 1e9)
          : Fmt("%.1f s", Num(run, "elapsed_ns") / 1e9);
  out += Fmt("<p class=\"meta\">%s, CPUs %s (backend %s), pattern %s, %" PRIu64
             " operations (%" PRIu64 " failed) in %s, %s to %s, clock %s, report %s</p>\n",
             Esc(machine).c_str(), Esc(Str(Get(report, "cpus"), "selected", "?")).c_str(),
             Esc(Str(Get(report, "cpus"), "backend", "?")).c_str(),
             Esc(Str(Get(report, "config"), "pattern", "?")).c_str(), U64(totals, "ops"),
             U64(totals, "failed"), Esc(took).c_str(), Esc(Str(run, "started_at")).c_str(),
             Esc(Str(run, "ended_at")).c_str(), Esc(Str(run, "clock")).c_str(),
             Esc(opts.report_path).c_str());
  if (opts.baseline)
    out += "<p class=\"meta\">Compared with the baseline " + Esc(BaselineName(opts)) + ".</p>\n";

  out += "<h2>Checks</h2>\n<table><tr><th>check</th><th>result</th><th>detail</th></tr>\n";
  for (const ReportCheck& c : ReportChecks(report, opts)) {
    const char* cls = c.skipped ? "na" : !c.is_verdict ? "" : c.pass ? "pass" : "fail";
    const char* text = c.skipped       ? "skipped"
                       : !c.is_verdict ? "measured"
                       : c.pass        ? "pass"
                                       : "FAIL";
    out += "<tr><td>" + Esc(c.name) + "</td><td class=\"" + cls + "\">" + text +
           "</td><td style=\"text-align:left\">" + Esc(c.message) + "</td></tr>\n";
  }
  out += "</table>\n";
  out += "<h2>Timing sources</h2>\n" + SourcesTable(report);

  out += "<h2>Latency vs online CPUs</h2>\n";
  if (opts.baseline)
    out += "<p class=\"meta\">Baseline, drawn in grey: " + Esc(BaselineName(opts)) + ".</p>\n";
  for (const char* d : kDirs)
    out += LatencyVsOnline(report, d, opts);
  out += LevelTable(report);
  out += html::SmtSwitches(report);
  out += "<h2>Latency histograms</h2>\n";
  for (const char* d : kDirs)
    out += LatencyHistogram(report, d);
  out += "<h2>Kernel states</h2>\n" + KernelStates(report);
  out += "<h2>Kernel phases (cpuhp_probe module)</h2>\n" + KmodPhases(report);
  out += "<h2>Kernel phases (BPF kprobes)</h2>\n" + KmodPhases(report, "bpf");
  out += "<h2>Timeline and kernel log</h2>\n" + TimelineSection(report);
  out += "<h2>Disturbance</h2>\n" + Disturbance(report);
  out +=
      "<p class=\"meta\">Written by cpuhp-stress report --format html. Latencies are the "
      "duration of the write(2) to cpuN/online; percentiles carry at most 0.39 % histogram "
      "error.</p>\n</body></html>\n";
  return out;
}

}  // namespace cpuhp
