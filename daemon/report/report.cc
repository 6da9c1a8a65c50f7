// SPDX-License-Identifier: GPL-2.0
#include "report/report.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <system_error>

#include "sources/disturbance.h"
#include "sources/kmod_source.h"
#include "sources/kmsg_health.h"
#include "util/file_util.h"
#include "util/json_file.h"
#include "util/report_json.h"

#ifndef CPUHP_VERSION
#define CPUHP_VERSION "0.0.0"
#endif

namespace cpuhp {
namespace {

using nlohmann::json;
using report_json::Fmt;
using report_json::MsText;
using report_json::Str;
using report_json::U64;

const json& Section(const json& j, const char* key) {
  static const json kEmpty = json::object();
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : kEmpty;
}

// One table row: a space before every column so that a value wider than its
// column still stays apart from its neighbour.
std::string Row(const std::string& label, const std::string& ops, const std::string& mean,
                const std::string& stddev, const std::string& p50, const std::string& p99,
                const std::string& max) {
  return Fmt("  %13s %8s %8s %8s %8s %8s %8s\n", label.c_str(), ops.c_str(), mean.c_str(),
             stddev.c_str(), p50.c_str(), p99.c_str(), max.c_str());
}

// A statistic the report does not carry (an older report, a row without
// it) shows as "-", never as a measured 0.000.
std::string MsOrDash(const json& s, const char* key) {
  auto it = s.find(key);
  return it != s.end() && it->is_number() ? MsText(U64(s, key)) : "-";
}

std::string LatencyRow(const std::string& label, const json& s) {
  return Row(label, std::to_string(U64(s, "count")), MsOrDash(s, "mean_ns"),
             MsOrDash(s, "stddev_ns"), MsOrDash(s, "p50_ns"), MsOrDash(s, "p99_ns"),
             MsOrDash(s, "max_ns"));
}

std::string DirectionTable(const json& report, const char* dir) {
  const json& total = Section(Section(report, "directions"), dir);
  // The level is the online count before the write: a sweep level of 8
  // shows as 8 for offline and 7 for online (the victim is offline then).
  std::string out = std::string("\n") + dir + " latency (ms), by online CPUs before the write\n";
  if (U64(total, "count") == 0)
    return out + (Str(Get(report, "smt"), "method") == "control"
                      ? "  none: every write went to smt/control (the switches below)\n"
                      : "  no successful operations\n");
  out += Row("online before", "ops", "mean", "stddev", "p50", "p99", "max");
  std::vector<json> levels;
  auto it = Section(report, "per_online_count").find(dir);
  if (it != Section(report, "per_online_count").end() && it->is_array())
    levels.assign(it->begin(), it->end());
  std::stable_sort(levels.begin(), levels.end(), [](const json& a, const json& b) {
    return U64(a, "online_cpus") < U64(b, "online_cpus");
  });
  for (const json& level : levels)
    out += LatencyRow(std::to_string(U64(level, "online_cpus")), level);
  out += LatencyRow("all", total);
  return out;
}

// Per CPU: big.LITTLE boards differ per core. Errors per direction beside.
std::string PerCpuTable(const json& report) {
  auto it = report.find("per_cpu");
  if (it == report.end() || !it->is_array() || it->empty())
    return "";
  std::string out = "\nper CPU (ms)\n";
  out += Fmt("  %5s %8s %8s %8s %7s %8s %8s %8s %7s\n", "cpu", "off ops", "p50", "p99", "failed",
             "on ops", "p50", "p99", "failed");
  for (const json& c : *it) {
    if (!c.is_object())
      continue;
    const json& off = Section(c, "offline");
    const json& on = Section(c, "online");
    out +=
        Fmt("  %5" PRIu64 " %8" PRIu64 " %8s %8s %7" PRIu64 " %8" PRIu64 " %8s %8s %7" PRIu64 "\n",
            U64(c, "cpu"), U64(off, "count"), MsText(U64(off, "p50_ns")).c_str(),
            MsText(U64(off, "p99_ns")).c_str(), U64(c, "offline_failed"), U64(on, "count"),
            MsText(U64(on, "p50_ns")).c_str(), MsText(U64(on, "p99_ns")).c_str(),
            U64(c, "online_failed"));
  }
  return out;
}

// What the run is, in the words the seeds quote.
std::string HeaderLine(const json& report) {
  const json& host = Section(report, "host");
  const json& cpus = Section(report, "cpus");
  const json& config = Section(report, "config");
  const bool sim = Str(Section(report, "run"), "clock", "") == "simulated";
  std::string out;
  if (sim)
    out +=
        "SIMULATED run (sim backend): modeled latencies, simulated time; no real CPU "
        "was touched\n";
  auto seed = report.find("seed");
  // A sim report's kernel is the model: the host's is named only as the
  // machine that ran it.
  std::string kernel = Str(host, "kernel_release", "?");
  if (const std::string arch = Str(host, "arch", ""); !arch.empty())
    kernel += " " + arch;
  if (sim)
    kernel = "SIMULATED (the model ran on the host's " + kernel + ")";
  out += Fmt("kernel %s, CPUs %s, pattern %s, seed %s, backend %s\n", kernel.c_str(),
             Str(cpus, "selected", "?").c_str(), Str(config, "pattern", "?").c_str(),
             seed != report.end() && seed->is_number() ? seed->dump().c_str() : "?",
             Str(cpus, "backend", "?").c_str());
  return out;
}

// The smt pattern's switches, each one operation: by the mode switched to.
std::string SmtSummary(const json& report) {
  auto it = report.find("smt");
  if (it == report.end() || !it->is_object())
    return "";
  std::string out = Fmt("SMT switches (%s method):\n", Str(*it, "method", "?").c_str());
  const auto to = it->find("to");
  for (const json& m : to != it->end() && to->is_array() ? *to : json::array()) {
    out +=
        Fmt("  to %-4s %" PRIu64 " switches, p50 %s ms, p99 %s ms, max %s ms, %" PRIu64 "-%" PRIu64
            " CPUs each, %" PRIu64 " failed writes\n",
            Str(m, "mode", "?").c_str(), U64(m, "switches"), MsText(U64(m, "p50_ns")).c_str(),
            MsText(U64(m, "p99_ns")).c_str(), MsText(U64(m, "max_ns")).c_str(),
            U64(m, "cpus_per_switch_min"), U64(m, "cpus_per_switch_max"), U64(m, "failed_writes"));
    if (const uint64_t f = U64(m, "with_injected_faults"))
      out += Fmt("         %" PRIu64 " with an injected fault (its writes not in the time)\n", f);
  }
  if (uint64_t n = U64(*it, "incomplete"))
    out += Fmt("  %" PRIu64 " switch cut short by a stop or a restart (not timed)\n", n);
  return out;
}

// A timing source that could not run, and why (the JSON has the same).
std::string UnavailableSources(const json& report) {
  std::string out;
  for (const auto& [name, s] : Section(report, "timing_sources").items())
    if (s.is_object() && Str(s, "status", "") == "unavailable")
      out +=
          "timing source " + name + ": unavailable: " + Str(s, "reason", "no reason given") + "\n";
  return out;
}

// A sweep stopped before its last level: the levels it cut short or never
// measured (the sweep_complete check says the same).
std::string MissingLevels(const json& report) {
  const report_json::SweepLevels sweep = report_json::ReadSweepLevels(report);
  if (!sweep.sweep || sweep.all_complete())
    return "";
  return "sweep INCOMPLETE: " + report_json::SweepShortfall(sweep) +
         " (stop reason: " + Str(Section(report, "run"), "stop_reason", "still running") + ")\n";
}

std::string ErrorLines(const json& report) {
  std::string out;
  auto it = Section(report, "errors").find("by_errno");
  if (it != Section(report, "errors").end() && it->is_array() && !it->empty()) {
    out += "\nerrors\n";
    for (const json& e : *it)
      out += "  " + Str(e, "name", "?") + " (errno " + std::to_string(U64(e, "errno")) +
             "): " + std::to_string(U64(e, "count")) + " ops\n";
  }
  uint64_t mismatches = U64(Section(report, "totals"), "readback_mismatches");
  if (mismatches != 0)
    out += Fmt("\nreadback mismatches: %" PRIu64 " ops\n", mismatches);
  return out;
}

std::string RestoreLine(const json& report) {
  auto it = report.find("restore");
  if (it == report.end() || !it->is_object() || !it->contains("ok"))
    return "\nrestore: not run\n";
  const json& r = *it;
  bool ok = r["ok"].is_boolean() && r["ok"].get<bool>();
  std::string out = std::string("\nrestore: ") + (ok ? "ok" : "FAILED") + " (" +
                    std::to_string(U64(r, "writes")) + " writes, online CPUs " +
                    Str(r, "mask", "?") + ")\n";
  auto failures = r.find("failures");
  if (failures != r.end() && failures->is_array())
    for (const json& f : *failures)
      out += "  " + (f.is_string() ? f.get<std::string>() : DumpJson(f)) + "\n";
  return out;
}

}  // namespace

nlohmann::json OpRecordToJson(const OpRecord& rec) {
  json j = {
      {"i", rec.index},
      {"cpu", rec.cpu},
      {"dir", DirectionName(rec.dir)},
      {"start_ns", rec.start_ns},
      {"duration_ns", rec.duration_ns},
      {"errno", rec.err},
      {"online_before", rec.online_before},
      {"readback_ok", rec.readback_ok},
  };
  if (rec.err != 0)
    j["error"] = ErrnoName(rec.err);
  if (rec.setup)
    j["setup"] = true;
  if (rec.group)
    j["smt_switch"] = rec.group;
  if (rec.smt_control) {
    j["smt_control"] = true;
    j["cpus_changed"] = rec.cpus_changed;
  }
  return j;
}

nlohmann::json BuildReport(const ReportInputs& in) {
  json report = in.stats ? in.stats->ToJson() : RunStats().ToJson();
  auto object_or_empty = [](const json& j) { return j.is_null() ? json::object() : j; };

  report["schema_version"] = kReportSchemaVersion;
  report["tool"] = {{"name", "cpuhp-stress"}, {"version", CPUHP_VERSION}};
  report["interim"] = in.interim;
  report["host"] = object_or_empty(in.host);
  report["config"] = object_or_empty(in.config);
  report["seed"] = in.seed;
  report["cpus"] = object_or_empty(in.cpus);

  // The sim backend times operations with its own modeled clock; saying
  // CLOCK_MONOTONIC there would pass modeled numbers off as measured ones.
  bool simulated = in.config.is_object() && in.config.value("backend", "") == "sim";
  report["run"] = {
      {"started_at", in.started_at},
      {"ended_at", in.ended_at},
      {"elapsed_ns", in.elapsed_ns},
      // An interim report is written while the run goes on: no stop reason yet.
      {"stop_reason", in.stop_reason.empty() ? json(nullptr) : json(in.stop_reason)},
      {"stop_message", in.stop_message.empty() ? json(nullptr) : json(in.stop_message)},
      {"clock", simulated ? "simulated" : "CLOCK_MONOTONIC"},
      {"simulated_elapsed_ns", simulated ? json(in.simulated_elapsed_ns) : json(nullptr)},
      {"histogram",
       {{"sub_buckets_per_octave", Histogram::kSubBuckets},
        // Values are reported at their bucket's midpoint: off by at most
        // half a bucket, 1/(2*128) of the value.
        {"max_relative_error", 0.5 / Histogram::kSubBuckets}}},
  };

  json first_errors = json::array();
  for (const OpRecord& rec : in.first_errors)
    first_errors.push_back(OpRecordToJson(rec));
  report["first_errors"] = std::move(first_errors);
  report["first_errors_dropped"] = in.first_errors_dropped;
  report["timing_sources"] = object_or_empty(in.timing_sources);
  if (in.smt.is_object())
    report["smt"] = in.smt;
  // Null until the CPUs have been put back (interim reports).
  report["restore"] = in.restore.is_object() ? in.restore : json(nullptr);
  report["process"] = {
      {"max_rss_kib", in.max_rss_kib}, {"loop_cpu_ns", in.loop_cpu_ns}, {"loop_ops", in.loop_ops}};
  return report;
}

std::string HumanSummary(const nlohmann::json& report) {
  const json& totals = Section(report, "totals");
  const json& run = Section(report, "run");
  uint64_t ops = U64(totals, "ops");
  // A simulated run's operations take simulated time; the wall time of the
  // loop says nothing about them.
  const bool sim = Str(run, "clock", "") == "simulated";
  double elapsed_s =
      static_cast<double>(U64(run, sim ? "simulated_elapsed_ns" : "elapsed_ns")) / 1e9;
  std::string rate = elapsed_s > 0 ? Fmt("%.1f", static_cast<double>(ops) / elapsed_s) : "-";
  auto interim_it = report.find("interim");
  bool interim = interim_it != report.end() && interim_it->is_boolean() && interim_it->get<bool>();
  std::string out = HeaderLine(report);
  out += Fmt("%s%" PRIu64 " ops, %" PRIu64 " ok, %" PRIu64
             " failed in %.3f s%s (%s ops/s), stop reason: %s\n",
             interim ? "interim: " : "", ops, U64(totals, "ok"), U64(totals, "failed"), elapsed_s,
             sim ? " simulated" : "", rate.c_str(),
             Str(run, "stop_reason", interim ? "still running" : "none").c_str());
  if (std::string why = Str(run, "stop_message", ""); !why.empty())
    out += "  " + why + "\n";
  if (uint64_t setup = U64(totals, "setup_ops"))
    out += Fmt("  %" PRIu64 " of them set-up writes (not in the latency tables)\n", setup);
  out += MissingLevels(report);
  out += UnavailableSources(report);
  for (const char* dir : {"offline", "online"})
    out += DirectionTable(report, dir);
  out += PerCpuTable(report);
  out += SmtSummary(report);
  out += KmodSummary(report);
  out += KmodSummary(report, "bpf");
  out += DisturbanceSummary(report);
  out += KmsgHealthSummary(report);
  out += ErrorLines(report);
  out += RestoreLine(report);
  return out;
}

}  // namespace cpuhp
