// SPDX-License-Identifier: GPL-2.0
// The HTML page's kernel-side sections (html_sections.h): top kernel states,
// the kmod and bpf phases, the timeline with its kernel-log marks, the
// disturbance bars; and the helpers the page (html_report.cc) shares.
#include "report/html_sections.h"

#include <algorithm>
#include <cinttypes>
#include <utility>
#include <vector>

#include "util/report_json.h"

namespace cpuhp::html {

using nlohmann::json;
using report_json::Fmt;
using report_json::Get;
using report_json::HtmlEscape;
using report_json::Ms;
using report_json::Num;
using report_json::OptNum;
using report_json::Path;
using report_json::SourceStatus;
using report_json::Str;
using report_json::U64;
using report_json::Us;

using report_json::kDirs;
const char* const kColors[kColorCount] = {"#e15759", "#4e79a7", "#f28e2b", "#59a14f",
                                          "#b07aa1", "#76b7b2", "#edc948", "#9c755f"};

namespace {
constexpr size_t kTopStates = 15;
}  // namespace

std::string Esc(const std::string& s) {
  return HtmlEscape(s);
}

std::string Count(uint64_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string CpuList(const std::string& list) {
  const bool one = !list.empty() && list.find_first_not_of("0123456789") == std::string::npos;
  return (one ? "CPU " : "CPUs ") + list;
}

ChartSeries MakeSeries(const std::string& name, const std::string& color, bool line, bool markers,
                       bool dashed) {
  ChartSeries s;
  s.name = name;
  s.color = color;
  s.line = line;
  s.markers = markers;
  s.dashed = dashed;
  return s;
}

std::string NotMeasured(const json& report, const char* source, const std::string& what,
                        const std::string& how_to_enable) {
  std::string reason;
  std::string status = SourceStatus(report, source, &reason);
  // A sim run has no kernel: no key would turn a kernel source on there.
  if (status == "absent" && Str(Get(report, "run"), "clock") == "simulated")
    return "<p class=\"na\">" + Esc(what) +
           ": not in this report (a sim backend run: no kernel to measure).</p>\n";
  if (status == "absent")
    return "<p class=\"na\">" + Esc(what) + ": not in this report" +
           (how_to_enable.empty() ? "" : " (" + Esc(how_to_enable) + ")") + ".</p>\n";
  return "<p class=\"na\">" + Esc(what) + ": " + Esc(status) +
         (reason.empty() ? "" : ": " + Esc(reason)) + ".</p>\n";
}

// ---- kernel states (tracepoints) ----

namespace {

std::string StateLabel(const json& s) {
  const json& state = Get(s, "state");
  return Str(s, "direction", "?") + " " +
         (state.is_string() ? state.get<std::string>() : "hand-off") + " " +
         Str(s, "function", "?") + " [" + Str(s, "where", "?") + "]";
}

}  // namespace

std::string KernelStates(const json& report) {
  const json& tp = Path(report, {"timing_sources", "tracepoints"});
  if (Str(tp, "status") != "ok")
    return NotMeasured(report, "tracepoints", "Kernel states (tracepoints source)",
                       "on by default with the sysfs backend; --tracepoints");
  std::vector<const json*> states;
  if (Get(tp, "kernel_states").is_array())
    for (const json& s : tp["kernel_states"])
      if (U64(s, "count") > 0 && OptNum(s, "self_ns"))
        states.push_back(&s);
  if (states.empty())
    return Fmt(
        "<p class=\"na\">Kernel states: the tracepoints source saw no hotplug step inside "
        "an operation (%" PRIu64 " operations without steps).</p>\n",
        U64(tp, "ops_without_steps"));
  std::stable_sort(states.begin(), states.end(), [](const json* a, const json* b) {
    return U64(*a, "self_ns") > U64(*b, "self_ns");
  });
  if (states.size() > kTopStates)
    states.resize(kTopStates);
  std::vector<BarItem> bars;
  std::string table =
      "<table><tr><th>direction state function [where]</th><th>calls</th><th>p50 (ms)</th>"
      "<th>p99 (ms)</th><th>max (ms)</th><th>total (ms)</th><th>self (ms)</th>"
      "<th>share of write time</th></tr>\n";
  for (const json* s : states) {
    std::string label = StateLabel(*s);
    bars.push_back({label, Ms(Num(*s, "self_ns")), "", "",
                    Str(*s, "direction") == "offline" ? kColors[0] : kColors[1]});
    table += Fmt("<tr><td>%s</td><td>%" PRIu64
                 "</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.1f "
                 "%%</td></tr>\n",
                 Esc(label).c_str(), U64(*s, "count"), Ms(Num(*s, "p50_ns")), Ms(Num(*s, "p99_ns")),
                 Ms(Num(*s, "max_ns")), Ms(Num(*s, "total_ns")), Ms(Num(*s, "self_ns")),
                 Num(*s, "share") * 100);
  }
  std::string out = RenderBars(
      Fmt("Top %zu kernel states by self time over the run (nested steps excluded)", states.size()),
      "ms", bars, "kernel_states", {{kColors[0], "offline"}, {kColors[1], "online"}});
  out += table + "</table>\n";
  // What the states add up to, per operation.
  const json& per_op = Get(tp, "per_operation");
  out +=
      "<table><tr><th>direction</th><th>per operation</th><th>ops</th><th>p50 (ms)</th>"
      "<th>p99 (ms)</th><th>max (ms)</th></tr>\n";
  for (const char* d : kDirs)
    for (const char* k : {"state_sum", "unaccounted"}) {
      const json& s = Path(per_op, {d, k});
      if (U64(s, "count") > 0)
        out += Fmt("<tr><td>%s</td><td>%s</td><td>%" PRIu64
                   "</td><td>%.3f</td><td>%.3f</td><td>%.3f</td></tr>\n",
                   d, k, U64(s, "count"), Ms(Num(s, "p50_ns")), Ms(Num(s, "p99_ns")),
                   Ms(Num(s, "max_ns")));
    }
  out += "</table>\n";
  uint64_t lost = U64(Get(tp, "lost_events"), "total");
  if (lost > 0)
    out += Fmt("<p class=\"fail\">The trace lost %" PRIu64
               " events: the per-state counts are incomplete.</p>\n",
               lost);
  return out;
}

// ---- kmod phases ----

std::string KmodPhases(const json& report, const char* source) {
  const bool bpf = std::string(source) == "bpf";
  const json& km = Path(report, {"timing_sources", source});
  if (Str(km, "status") != "ok")
    return NotMeasured(report, source,
                       bpf ? "Kernel phases from BPF kprobes (bpf source)"
                           : "Kernel phases from the cpuhp_probe module (kmod source)",
                       bpf ? "/kernel_phases/source" : "/kmod/enabled");
  const json& rec = Get(km, "records");
  std::string out = Fmt(
      "<p class=\"meta\">%s, %" PRIu64 " records read, %" PRIu64 " joined to operations, %" PRIu64
      " unjoined, %" PRIu64 " ended after their write returned.</p>\n",
      bpf ? Esc(Str(km, "program")).c_str()
          : Fmt("cpuhp_probe API %" PRIu64, U64(km, "api_version")).c_str(),
      U64(rec, "read"), U64(rec, "joined"), U64(rec, "unjoined"), U64(rec, "nesting_violations"));
  out +=
      "<table><tr><th>direction</th><th>phase</th><th>hits</th><th>p50 (ms)</th><th>p99 "
      "(ms)</th><th>max (ms)</th><th>non-zero return</th></tr>\n";
  for (const char* d : kDirs) {
    const json& w = Path(report, {"directions", d});
    if (U64(w, "count") > 0)
      out +=
          Fmt("<tr><td>%s</td><td>write(2)</td><td>%" PRIu64
              "</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td></td></tr>\n",
              d, U64(w, "count"), Ms(Num(w, "p50_ns")), Ms(Num(w, "p99_ns")), Ms(Num(w, "max_ns")));
    for (const auto& [name, ph] : Path(km, {"kernel_phases", d}).items()) {
      const json& a = Get(ph, "all");
      out += Fmt("<tr><td>%s</td><td>%s</td><td>%" PRIu64
                 "</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%" PRIu64 "</td></tr>\n",
                 d, Esc(name).c_str(), U64(a, "count"), Ms(Num(a, "p50_ns")), Ms(Num(a, "p99_ns")),
                 Ms(Num(a, "max_ns")), U64(ph, "retval_nonzero"));
    }
  }
  out += "</table>\n";
  if (bpf && Str(Get(km, "program_cost"), "status") == "ok") {
    std::string cost;
    for (const auto& [name, c] : Get(Get(km, "program_cost"), "programs").items())
      cost += Fmt("%s%s %.0f ns", cost.empty() ? "" : ", ", Esc(name).c_str(), Num(c, "mean_ns"));
    out +=
        "<p class=\"meta\">The BPF programs' own time per hit (the kernel's bpf_stats; the "
        "kprobe's own entry cost not in it): " +
        cost + ".</p>\n";
  }
  const json& nohz = Get(km, "get_nohz_timer_target");
  if (nohz.contains("status") && nohz["status"] == "unavailable")
    out += "<p class=\"meta\">get_nohz_timer_target: unavailable (" +
           Esc(nohz.value("reason", std::string())) + ").</p>\n";
  else if (U64(nohz, "count") > 0 && bpf)
    out +=
        Fmt("<p class=\"meta\">get_nohz_timer_target: %" PRIu64 " calls, mean %.0f ns, max %" PRIu64
            " ns (function + the BPF kprobe pair, whose own share is not measured here).</p>\n",
            U64(nohz, "count"), Num(nohz, "mean_ns"), U64(nohz, "max_ns"));
  else if (U64(nohz, "count") > 0)
    out +=
        Fmt("<p class=\"meta\">get_nohz_timer_target: %" PRIu64 " calls, mean %.0f ns, max %" PRIu64
            " ns (function + kretprobe; the kretprobe alone: mean %.0f ns).</p>\n",
            U64(nohz, "count"), Num(nohz, "mean_ns"), U64(nohz, "max_ns"),
            Num(Get(nohz, "probe_self_cost"), "mean_ns"));
  return out;
}

// ---- timeline and kernel log events ----

namespace {

struct KmsgEvent {
  std::string kind;
  const json* line;
};

std::vector<KmsgEvent> KmsgEvents(const json& health) {
  std::vector<KmsgEvent> out;
  for (const auto& [kind, lines] : Get(health, "first_lines").items())
    if (lines.is_array())
      for (const json& l : lines)
        if (l.is_object())
          out.push_back({kind, &l});
  std::stable_sort(out.begin(), out.end(), [](const KmsgEvent& a, const KmsgEvent& b) {
    return U64(*a.line, "seq") < U64(*b.line, "seq");
  });
  return out;
}

std::string EventWhere(const json& l) {
  const json& op = Get(l, "op_index");
  std::string when = Str(l, "when", "?");
  if (!op.is_number())
    return "before the first operation";
  return (when == "during_op" ? "during operation " : "after operation ") +
         std::to_string(U64(l, "op_index"));
}

}  // namespace

std::string TimelineSection(const json& report) {
  const json& tl = Get(report, "timeline");
  const json& points = Get(tl, "points");
  const json& columns = Get(tl, "columns");
  Chart c;
  c.x_label = "operation index (count)";
  c.y_label = "latency (ms)";
  auto col = [&](const std::string& name) -> int {
    if (!columns.is_array())
      return -1;
    for (size_t i = 0; i < columns.size(); i++)
      if (columns[i] == name)
        return static_cast<int>(i);
    return -1;
  };
  int first_op = col("first_op");
  if (!points.is_array() || points.empty() || first_op < 0) {
    c.title = "Latency over the run: no timeline in this report";
    return RenderChart(c);
  }
  bool max_and_mean = false;
  for (int d = 0; d < 2; d++) {
    std::string dir = kDirs[d];
    int n = col(dir + "_n"), mean_col = col(dir + "_mean_ns"), max_col = col(dir + "_max_ns");
    if (n < 0 || mean_col < 0 || max_col < 0)
      continue;
    ChartSeries mx = MakeSeries(dir + " max", kColors[d], true, false, false);
    ChartSeries mean = MakeSeries(dir + " mean", d == 0 ? "#ff9d9a" : "#a0cbe8", true, false, true);
    bool several = false;  // some point holds more than one operation of this direction
    for (const json& p : points) {
      int need = std::max({first_op, n, mean_col, max_col});
      if (!p.is_array() || static_cast<int>(p.size()) <= need || !p[n].is_number() ||
          p[n].get<double>() <= 0)
        continue;
      double x = p[first_op].get<double>();
      several = several || p[n].get<double>() > 1;
      mx.points.emplace_back(x, Ms(p[max_col].get<double>()));
      mean.points.emplace_back(x, Ms(p[mean_col].get<double>()));
    }
    if (!several) {  // max and mean of one operation are the same line: draw it once
      mx.name = dir;
      c.series.push_back(mx);
      continue;
    }
    max_and_mean = true;
    c.series.push_back(mx);
    c.series.push_back(mean);
  }
  c.title = Fmt("Latency over the run (%zu points of %s: %s)", points.size(),
                Count(U64(tl, "ops_per_point"), "operation").c_str(),
                max_and_mean ? "max and mean" : "each operation");
  const json& health = Path(report, {"timing_sources", "kmsg_health"});
  std::string after;
  if (Str(health, "status") == "ok") {
    std::vector<KmsgEvent> events = KmsgEvents(health);
    for (const KmsgEvent& e : events) {
      const json& l = *e.line;
      c.marks.push_back({Get(l, "op_index").is_number() ? Num(l, "op_index") : 0,
                         e.kind + " " + EventWhere(l) + ": " + Str(l, "message"), e.kind});
    }
    uint64_t counted = U64(health, "events");
    after += Fmt("<p class=\"%s\">Kernel log: %s in %s read", counted ? "fail" : "meta",
                 Count(counted, "problem line").c_str(),
                 Count(U64(health, "records_read"), "record").c_str());
    std::string added = Str(Get(health, "taint"), "added_flags");
    if (!added.empty())
      after += ", taint flags set during the run: " + Esc(added);
    if (U64(health, "records_lost"))
      after += ", " + Count(U64(health, "records_lost"), "gap") + " of records lost";
    after += ".";
    if (counted > events.size())
      after +=
          Fmt(" The report keeps the first lines of each kind: %zu shown, %" PRIu64 " not kept.",
              events.size(), counted - events.size());
    after += "</p>\n";
    if (!events.empty()) {
      after +=
          "<table><tr><th>kind</th><th>where</th><th>kmsg seq</th><th>time since boot "
          "(s)</th><th>message</th></tr>\n";
      for (const KmsgEvent& e : events)
        after += Fmt("<tr><td>%s</td><td>%s</td><td>%" PRIu64
                     "</td><td>%.6f</td><td style=\"text-align:left\">%s</td></tr>\n",
                     Esc(e.kind).c_str(), Esc(EventWhere(*e.line)).c_str(), U64(*e.line, "seq"),
                     Num(*e.line, "timestamp_us") / 1e6, Esc(Str(*e.line, "message")).c_str());
      after += "</table>\n";
    }
  } else {
    after = NotMeasured(report, "kmsg_health", "Kernel log health", "/health/enabled");
  }
  return RenderChart(c) + after;
}

// ---- disturbance ----

constexpr const char* kBuckets[] = {"baseline", "offline", "online"};
namespace {

std::string BucketLabel(const std::string& b) {
  return b == "baseline" ? "baseline" : "during " + b;
}

}  // namespace

std::string SmtSwitches(const json& report) {
  const json& smt = Get(report, "smt");
  if (!Get(smt, "to").is_array())
    return "";
  std::string out =
      "<h2>SMT switches (" + Esc(Str(smt, "method", "?")) +
      " method)</h2>\n<table><tr><th>to mode</th><th>switches</th><th>p50 (ms)</th><th>p99 "
      "(ms)</th><th>max (ms)</th><th>CPUs each</th><th>failed writes</th></tr>\n";
  for (const json& m : smt["to"])
    out += Fmt(
        "<tr><td>%s</td><td>%" PRIu64 "</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%" PRIu64
        "-%" PRIu64 "</td><td>%" PRIu64 "</td></tr>\n",
        Esc(Str(m, "mode", "?")).c_str(), U64(m, "switches"),
        static_cast<double>(U64(m, "p50_ns")) / 1e6, static_cast<double>(U64(m, "p99_ns")) / 1e6,
        static_cast<double>(U64(m, "max_ns")) / 1e6, U64(m, "cpus_per_switch_min"),
        U64(m, "cpus_per_switch_max"), U64(m, "failed_writes"));
  out += "</table>\n";
  if (const uint64_t n = U64(smt, "incomplete"))
    out += Fmt("<p class=\"meta\">%" PRIu64
               " switch cut short by a stop or a restart (not timed).</p>\n",
               n);
  return out;
}

std::string Disturbance(const json& report) {
  const json& d = Path(report, {"timing_sources", "disturbance"});
  if (Str(d, "status") != "ok")
    return NotMeasured(report, "disturbance", "Disturbance probes", "--disturbance");
  const json& total = Get(d, "total");
  const std::string toggled = CpuList(Str(d, "toggled_cpus", "?"));
  std::string out =
      Fmt("<p class=\"meta\">Wakeup latency (actual - intended wakeup of a periodic absolute "
          "clock_nanosleep, %s) of probes on %s while %s %s toggled: %s, period %.0f "
          "us, %" PRIu64 " wakeups, %.1f s of baseline before the first operation.</p>\n",
          Esc(Str(d, "clock", "?")).c_str(), Esc(CpuList(Str(d, "probe_cpus", "?"))).c_str(),
          Esc(toggled).c_str(), toggled.rfind("CPU ", 0) == 0 ? "was" : "were",
          Esc(Str(d, "policy", "?")).c_str(), Us(Num(d, "period_ns")), U64(d, "samples"),
          Num(d, "baseline_phase_ns") / 1e9);
  // Bars grouped by statistic, one per bucket with samples: the buckets
  // without any sample have no bar (their latency was not measured).
  std::vector<BarItem> bars;
  for (auto [stat, key] :
       {std::pair{"p50", "p50_ns"}, {"p99", "p99_ns"}, {"p99.9", "p99_9_ns"}, {"max", "max_ns"}})
    for (int b = 0; b < 3; b++) {
      const json& s = Get(total, kBuckets[b]);
      if (U64(s, "count") == 0 || !OptNum(s, key))
        continue;
      BarItem item{std::string(stat) + " " + BucketLabel(kBuckets[b]), Us(Num(s, key)),
                   std::string("disturbance ") + stat, BucketLabel(kBuckets[b]),
                   b == 0 ? "#9c9c9c" : kColors[b - 1]};
      bars.push_back(item);
    }
  if (bars.empty())
    out += "<p class=\"na\">Disturbance probes: no wakeup recorded.</p>\n";
  else
    out += RenderBars(
        "Wakeup latency of the CPUs that stay online: baseline vs during operations", "us", bars,
        "disturbance",
        {{"#9c9c9c", "baseline"}, {kColors[0], "during offline"}, {kColors[1], "during online"}});
  out +=
      "<table><tr><th>probe</th><th>when</th><th>wakeups</th><th>p50 (us)</th><th>p99 "
      "(us)</th><th>p99.9 (us)</th><th>max (us)</th><th>p99 / baseline p99</th></tr>\n";
  auto rows = [&](const std::string& probe, const json& buckets) {
    double base_p99 = Num(Get(buckets, "baseline"), "p99_ns");
    bool have_base = U64(Get(buckets, "baseline"), "count") > 0 && base_p99 > 0;
    for (const char* b : kBuckets) {
      const json& s = Get(buckets, b);
      if (U64(s, "count") == 0) {
        out += "<tr><td>" + Esc(probe) + "</td><td>" + BucketLabel(b) +
               "</td><td>0</td><td colspan=\"5\" class=\"na\">no samples</td></tr>\n";
        continue;
      }
      std::string ratio =
          std::string(b) != "baseline" && have_base ? Fmt("%.2f", Num(s, "p99_ns") / base_p99) : "";
      out += Fmt("<tr><td>%s</td><td>%s</td><td>%" PRIu64
                 "</td><td>%.1f</td><td>%.1f</td><td>%.1f</td><td>%.1f</td><td>%s</td></tr>\n",
                 Esc(probe).c_str(), BucketLabel(b).c_str(), U64(s, "count"), Us(Num(s, "p50_ns")),
                 Us(Num(s, "p99_ns")), Us(Num(s, "p99_9_ns")), Us(Num(s, "max_ns")), ratio.c_str());
    }
  };
  rows("all probes", total);
  std::string per_probe;
  if (Get(d, "per_cpu").is_array())
    for (const json& p : d["per_cpu"]) {
      rows("cpu" + std::to_string(U64(p, "cpu")), p);
      per_probe +=
          Fmt("cpu%" PRIu64 ": %" PRIu64 " missed periods, %" PRIu64
              " wakeups off its CPU, %" PRIu64 " re-pins. ",
              U64(p, "cpu"), U64(p, "missed_periods"), U64(p, "off_cpu_samples"), U64(p, "repins"));
    }
  out += "</table>\n";
  if (!per_probe.empty())
    out += "<p class=\"meta\">" + Esc(per_probe) + "</p>\n";
  return out;
}

}  // namespace cpuhp::html
