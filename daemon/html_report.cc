// SPDX-License-Identifier: GPL-2.0
#include "html_report.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <map>

#include "histogram.h"
#include "svg_chart.h"

namespace cpuhp {
namespace {

using nlohmann::json;

constexpr const char* kDirs[] = {"offline", "online"};
const char* const kColors[] = {"#e15759", "#4e79a7", "#f28e2b", "#59a14f",
                               "#b07aa1", "#76b7b2", "#edc948", "#9c755f"};
constexpr size_t kMaxExtraSeries = 8;
constexpr size_t kMaxMarks = 200;
constexpr int kHistogramBins = 80;

std::string Fmt(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Fmt(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char buf[1024];
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return buf;
}

const json& Get(const json& j, const char* key) {
  static const json kNull;
  if (!j.is_object())
    return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

double Num(const json& j, const char* key) {
  const json& v = Get(j, key);
  return v.is_number() ? v.get<double>() : 0;
}

std::string Str(const json& j, const char* key, const char* fallback = "") {
  const json& v = Get(j, key);
  return v.is_string() ? v.get<std::string>() : fallback;
}

bool IsSummary(const json& j) {
  return j.is_object() && Get(j, "count").is_number() && Get(j, "p50_ns").is_number();
}

double Ms(double ns) {
  return ns / 1e6;
}

// Latency vs online CPUs: p50 and p99 per direction, plus every array of
// per-online-count summaries in other sections (kernel phases).
void FindPhaseSeries(const json& j, const std::string& path, int depth,
                     std::vector<std::pair<std::string, const json*>>* out) {
  if (depth > 6 || out->size() >= kMaxExtraSeries)
    return;
  if (j.is_array() && !j.empty() && std::all_of(j.begin(), j.end(), [](const json& e) {
        return IsSummary(e) && Get(e, "online_cpus").is_number();
      })) {
    out->emplace_back(path, &j);
    return;
  }
  if (j.is_object())
    for (const auto& [k, v] : j.items())
      FindPhaseSeries(v, path.empty() ? k : path + "." + k, depth + 1, out);
}

std::string LatencyVsOnline(const json& report) {
  Chart c;
  c.title = "Latency vs online CPUs (p50 solid, p99 dashed)";
  c.x_label = "online CPUs before the operation (count)";
  c.y_label = "latency (ms)";
  int color = 0;
  auto add = [&](const std::string& name, const json& levels) {
    ChartSeries p50{name + " p50", kColors[color % 8], {}, true, true, false};
    ChartSeries p99{name + " p99", kColors[color % 8], {}, true, true, true};
    color++;
    for (const json& l : levels) {
      if (Num(l, "count") <= 0)
        continue;
      p50.points.emplace_back(Num(l, "online_cpus"), Ms(Num(l, "p50_ns")));
      p99.points.emplace_back(Num(l, "online_cpus"), Ms(Num(l, "p99_ns")));
    }
    std::sort(p50.points.begin(), p50.points.end());
    std::sort(p99.points.begin(), p99.points.end());
    c.series.push_back(p50);
    c.series.push_back(p99);
  };
  for (const char* d : kDirs) {
    const json& levels = Get(Get(report, "per_online_count"), d);
    if (levels.is_array())
      add(d, levels);
  }
  std::vector<std::pair<std::string, const json*>> extra;
  for (const auto& [k, v] : report.items())
    if (k != "per_online_count" && k != "per_cpu" && k != "directions" && k != "config")
      FindPhaseSeries(v, k, 0, &extra);
  for (const auto& [name, levels] : extra)
    add(name, *levels);
  return RenderChart(c);
}

// A direction's histogram re-binned into equal-width bins over [min, p99.9]
// (a far outlier would squash everything else into one bar; it is counted in
// the last bin and named in the title).
std::string LatencyHistogram(const json& report, const char* dir) {
  const json& s = Get(Get(report, "directions"), dir);
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
  ChartSeries bars{std::string(dir) + " histogram",
                   std::string(dir) == "offline" ? kColors[0] : kColors[1],
                   {},
                   false};
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

// Kernel states by total time, whatever the section's exact shape: entries
// named by name/state with a total time (total_ns, time_ns, sum_ns) or a
// summary (count * mean_ns).
void FindStateTimes(const json& j, const std::string& name, int depth, std::vector<BarItem>* out) {
  if (depth > 5 || out->size() > 500)
    return;
  if (j.is_object()) {
    for (const char* k : {"total_ns", "time_ns", "sum_ns", "total_time_ns"})
      if (Get(j, k).is_number()) {
        out->push_back({name, Ms(Num(j, k))});
        return;
      }
    if (IsSummary(j)) {
      out->push_back({name, Ms(Num(j, "count") * Num(j, "mean_ns"))});
      return;
    }
    for (const auto& [k, v] : j.items())
      FindStateTimes(v, name.empty() ? k : name + "." + k, depth + 1, out);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); i++) {
      std::string label = Str(j[i], "name", Str(j[i], "state", "").c_str());
      if (label.empty())
        label = std::to_string(i);
      FindStateTimes(j[i], name.empty() ? label : name + "." + label, depth + 1, out);
    }
  }
}

std::string KernelStates(const json& report) {
  const json* section = nullptr;
  if (report.contains("kernel_states"))
    section = &report["kernel_states"];
  for (const auto& [k, v] : Get(report, "timing_sources").items())
    if (!section && v.is_object() && v.contains("kernel_states"))
      section = &v["kernel_states"];
  if (!section)
    return "";
  std::vector<BarItem> items;
  FindStateTimes(*section, "", 0, &items);
  if (items.empty())
    return "<p>kernel_states: present, but no state with a total time was found.</p>\n";
  std::stable_sort(items.begin(), items.end(),
                   [](const BarItem& a, const BarItem& b) { return a.value > b.value; });
  if (items.size() > 15)
    items.resize(15);
  return RenderBars("Top kernel states by total time", "ms", items, "kernel_states");
}

// Kernel-log events with a time on the run's clock or an operation index.
struct Event {
  double op = 0;
  std::string text;
};

double OpAtTime(const json& points, double t_ns) {
  double op = 0;
  for (const json& p : points) {
    if (!p.is_array() || p.size() < 3)
      continue;
    if (p[1].get<double>() > t_ns)
      break;
    op = p[0].get<double>();
  }
  return op;
}

void FindEvents(const json& j, const json& points, int depth, std::vector<Event>* out) {
  if (depth > 5 || out->size() >= kMaxMarks)
    return;
  if (j.is_array()) {
    for (const json& e : j) {
      if (out->size() >= kMaxMarks)
        return;
      if (!e.is_object()) {
        continue;
      }
      std::string text;
      for (const char* k : {"message", "msg", "text", "line"})
        if (text.empty())
          text = Str(e, k);
      if (text.empty()) {
        FindEvents(e, points, depth + 1, out);
        continue;
      }
      bool placed = false;
      for (const char* k : {"op_index", "op", "i"})
        if (!placed && Get(e, k).is_number()) {
          out->push_back({Num(e, k), text});
          placed = true;
        }
      for (const char* k : {"t_ns", "monotonic_ns", "timestamp_ns", "ts_ns", "time_ns"})
        if (!placed && Get(e, k).is_number()) {
          out->push_back({OpAtTime(points, Num(e, k)), text});
          placed = true;
        }
      for (const char* k : {"ts_us", "monotonic_us", "timestamp_us", "time_us"})
        if (!placed && Get(e, k).is_number()) {
          out->push_back({OpAtTime(points, Num(e, k) * 1000), text});
          placed = true;
        }
    }
  } else if (j.is_object()) {
    for (const auto& [k, v] : j.items())
      FindEvents(v, points, depth + 1, out);
  }
}

std::string Timeline(const json& report) {
  const json& tl = Get(report, "timeline");
  const json& points = Get(tl, "points");
  Chart c;
  c.x_label = "operation index (count)";
  c.y_label = "latency (ms)";
  if (!points.is_array() || points.empty()) {
    c.title = "Latency over the run: no timeline in this report";
    return RenderChart(c);
  }
  c.title = Fmt("Latency over the run (%zu points of %" PRIu64 " operations: max and mean)",
                points.size(), static_cast<uint64_t>(Num(tl, "ops_per_point")));
  // Columns: first_op start_ns ops failed, then per direction n min mean max.
  for (int d = 0; d < 2; d++) {
    ChartSeries mx{std::string(kDirs[d]) + " max", kColors[d], {}, true, false, false};
    ChartSeries mean{
        std::string(kDirs[d]) + " mean", d == 0 ? "#ff9d9a" : "#a0cbe8", {}, true, false, true};
    for (const json& p : points) {
      if (!p.is_array() || p.size() < 12)
        continue;
      size_t base = 4 + static_cast<size_t>(d) * 4;
      if (p[base].get<double>() <= 0)
        continue;
      mx.points.emplace_back(p[0].get<double>(), Ms(p[base + 3].get<double>()));
      mean.points.emplace_back(p[0].get<double>(), Ms(p[base + 2].get<double>()));
    }
    c.series.push_back(mx);
    c.series.push_back(mean);
  }
  std::vector<Event> events;
  for (const char* key : {"health", "kmsg", "kernel_log"})
    if (report.contains(key))
      FindEvents(report[key], points, 0, &events);
  for (const Event& e : events)
    c.marks.push_back({e.op, e.text});
  return RenderChart(c);
}

void FindSummaries(const json& j, const std::string& path, int depth,
                   std::vector<std::pair<std::string, const json*>>* out) {
  if (depth > 6 || out->size() > 100)
    return;
  if (IsSummary(j)) {
    out->emplace_back(path, &j);
    return;
  }
  if (j.is_object())
    for (const auto& [k, v] : j.items())
      FindSummaries(v, path.empty() ? k : path + "." + k, depth + 1, out);
  else if (j.is_array())
    for (size_t i = 0; i < j.size(); i++)
      FindSummaries(j[i], path + "[" + Str(j[i], "name", std::to_string(i).c_str()) + "]",
                    depth + 1, out);
}

void FindScalars(const json& j, const std::string& path, int depth,
                 std::vector<std::pair<std::string, std::string>>* out) {
  if (depth > 4 || out->size() > 60)
    return;
  if (j.is_number() || j.is_string() || j.is_boolean()) {
    out->emplace_back(path, j.is_string() ? j.get<std::string>() : j.dump());
  } else if (j.is_object() && !IsSummary(j)) {
    for (const auto& [k, v] : j.items())
      FindScalars(v, path.empty() ? k : path + "." + k, depth + 1, out);
  }
}

std::string Disturbance(const json& report) {
  if (!report.contains("disturbance"))
    return "";
  const json& d = report["disturbance"];
  std::string out = "<h2>Disturbance</h2>\n";
  std::vector<std::pair<std::string, const json*>> sums;
  FindSummaries(d, "", 0, &sums);
  if (!sums.empty()) {
    std::vector<BarItem> bars;
    out +=
        "<table><tr><th>measure</th><th>count</th><th>p50 (ms)</th><th>p99 (ms)</th>"
        "<th>max (ms)</th></tr>\n";
    for (const auto& [name, s] : sums) {
      out += Fmt("<tr><td>%s</td><td>%.0f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td></tr>\n",
                 HtmlEscape(name).c_str(), Num(*s, "count"), Ms(Num(*s, "p50_ns")),
                 Ms(Num(*s, "p99_ns")), Ms(Num(*s, "max_ns")));
      bars.push_back({name, Ms(Num(*s, "p99_ns"))});
    }
    out += "</table>\n" + RenderBars("Disturbance p99", "ms", bars, "disturbance");
  }
  std::vector<std::pair<std::string, std::string>> scalars;
  FindScalars(d, "", 0, &scalars);
  if (!scalars.empty()) {
    out += "<table><tr><th>field</th><th>value</th></tr>\n";
    for (const auto& [k, v] : scalars)
      out += "<tr><td>" + HtmlEscape(k) + "</td><td>" + HtmlEscape(v) + "</td></tr>\n";
    out += "</table>\n";
  }
  return out;
}

const char* kStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.5em auto;max-width:960px;color:#222;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}
td:first-child,th:first-child{text-align:left}.pass{color:#2a7d2a}.fail{color:#c0392b;font-weight:bold}
.meta{color:#555;font-size:.9em}svg.chart{max-width:100%;height:auto;display:block;margin:.5em 0}
svg .title{font-size:14px;font-weight:600}svg .tick{font-size:11px;fill:#444}svg .label{font-size:12px;fill:#222}
svg .legend{font-size:11px}svg .plot{fill:#fcfcfc;stroke:#bbb}svg .grid{stroke:#e6e6e6}svg .axis{stroke:#888}
svg .mark{stroke:#d62728;stroke-width:1;stroke-dasharray:3 2;opacity:.7}svg .markkey{fill:#d62728}
)";

}  // namespace

std::string FormatHtml(const json& report, const ReportOptions& opts) {
  const json& host = Get(report, "host");
  const json& run = Get(report, "run");
  const json& totals = Get(report, "totals");
  std::string title =
      "cpuhp-stress: " + Str(host, "kernel_release", "?") + " on " + Str(host, "hostname", "?");
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>" +
      HtmlEscape(title) + "</title>\n<style>" + kStyle + "</style></head>\n<body>\n";
  out += "<h1>" + HtmlEscape(title) + "</h1>\n";
  out +=
      Fmt("<p class=\"meta\">%s, CPUs %s (backend %s), pattern %s, %.0f operations (%.0f "
          "failed) in %.1f s, %s to %s, clock %s, report %s</p>\n",
          HtmlEscape(Str(host, "cpu_model", "?")).c_str(),
          HtmlEscape(Str(Get(report, "cpus"), "selected", "?")).c_str(),
          HtmlEscape(Str(Get(report, "cpus"), "backend", "?")).c_str(),
          HtmlEscape(Str(Get(report, "config"), "pattern", "?")).c_str(), Num(totals, "ops"),
          Num(totals, "failed"), Num(run, "elapsed_ns") / 1e9,
          HtmlEscape(Str(run, "started_at")).c_str(), HtmlEscape(Str(run, "ended_at")).c_str(),
          HtmlEscape(Str(run, "clock")).c_str(), HtmlEscape(opts.report_path).c_str());

  out += "<h2>Checks</h2>\n<table><tr><th>check</th><th>result</th><th>detail</th></tr>\n";
  for (const ReportCheck& c : ReportChecks(report, opts))
    out += "<tr><td>" + HtmlEscape(c.name) + "</td><td class=\"" +
           (!c.is_verdict ? ""
            : c.pass      ? "pass"
                          : "fail") +
           "\">" +
           (!c.is_verdict ? "measured"
            : c.pass      ? "pass"
                          : "FAIL") +
           "</td><td>" + HtmlEscape(c.message) + "</td></tr>\n";
  out += "</table>\n";

  out += "<h2>Latency vs online CPUs</h2>\n" + LatencyVsOnline(report);
  out +=
      "<table><tr><th>direction</th><th>online CPUs</th><th>ops</th><th>p50 (ms)</th>"
      "<th>p99 (ms)</th><th>max (ms)</th></tr>\n";
  for (const char* d : kDirs) {
    const json& levels = Get(Get(report, "per_online_count"), d);
    if (levels.is_array())
      for (const json& l : levels)
        out +=
            Fmt("<tr><td>%s</td><td>%.0f</td><td>%.0f</td><td>%.3f</td><td>%.3f</td>"
                "<td>%.3f</td></tr>\n",
                d, Num(l, "online_cpus"), Num(l, "count"), Ms(Num(l, "p50_ns")),
                Ms(Num(l, "p99_ns")), Ms(Num(l, "max_ns")));
  }
  out += "</table>\n";
  out += "<h2>Latency histograms</h2>\n";
  for (const char* d : kDirs)
    out += LatencyHistogram(report, d);
  std::string states = KernelStates(report);
  if (!states.empty())
    out += "<h2>Kernel states</h2>\n" + states;
  out += "<h2>Timeline</h2>\n" + Timeline(report);
  out += Disturbance(report);
  out +=
      "<p class=\"meta\">Written by cpuhp-stress report --format html. Latencies are the "
      "duration of the write(2) to cpuN/online; percentiles carry at most 0.39 % histogram "
      "error.</p>\n</body></html>\n";
  return out;
}

}  // namespace cpuhp
