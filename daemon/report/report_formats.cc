// SPDX-License-Identifier: GPL-2.0
#include "report/report_formats.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <vector>

#include "config/config.h"
#include "report/compare_input.h"
#include "report/compare_render.h"
#include "report/html_report.h"
#include "report/report.h"
#include "util/exit_codes.h"
#include "util/json_file.h"
#include "util/report_json.h"

namespace cpuhp {
namespace {

using nlohmann::json;

using report_json::Fmt;
using report_json::Get;
using report_json::IsSimulated;
using report_json::MarkdownCell;
using report_json::Path;
using report_json::Str;
using report_json::TermSafe;
using report_json::U64;
using report_json::Wrap;
using report_json::XmlEscape;

using report_json::kDirs;

std::string NumText(double v) {
  return Fmt("%.6g", v);
}

}  // namespace

// The ceiling is a duration in the one syntax of every option ("20ms",
// "500us", "1s"): a bare number is refused, as --interval refuses it.
// A bare statistic ("p99=1ms") limits both directions, as compare's
// --threshold p99= does.
bool ParseLimit(const std::string& text, ReportOptions* opts, std::string* err) {
  size_t eq = text.find('=');
  std::string key = eq == std::string::npos ? "" : text.substr(0, eq);
  std::string value = eq == std::string::npos ? "" : text.substr(eq + 1);
  std::vector<std::string> keys;
  for (const char* d : kDirs)
    for (const char* s : {"p50", "p90", "p99", "p99_9", "max", "mean"})
      if (key == std::string(d) + "." + s || key == s)
        keys.push_back(std::string(d) + "." + s);
  if (keys.empty()) {
    *err = "--limit '" + text +
           "': expected [DIRECTION.]STAT=DURATION (offline|online . p50|p90|p99|p99_9|max|mean, "
           "e.g. offline.p99=20ms, or p99=20ms for both)";
    return false;
  }
  uint64_t ns = 0;
  std::string why;
  if (!ParseDuration(value, &ns, &why)) {
    *err = "--limit '" + text + "': " + why;
    return false;
  }
  for (const std::string& k : keys)
    opts->limits_ms[k] = static_cast<double>(ns) / 1e6;
  return true;
}

namespace {

// Text and Markdown are read in terminals and mail: 80 columns.
constexpr size_t kColumns = 80;

const char* TextResult(const ReportCheck& c) {
  return c.skipped ? "skip" : !c.is_verdict ? "-" : c.pass ? "pass" : "FAIL";
}

// A wrapped Markdown line must not start a block of its own (a list item,
// a heading, a quote, a table row): such a first character is escaped.
std::string MarkdownWrap(const std::string& text, const std::string& first,
                         const std::string& rest) {
  std::string wrapped = Wrap(text, kColumns - 1, first, rest);
  std::string out;
  for (size_t at = 0; at < wrapped.size();) {
    const size_t nl = wrapped.find('\n', at);
    std::string line = wrapped.substr(at, nl - at);
    if (at > 0) {
      const size_t word = rest.size();
      size_t digits = word;
      while (digits < line.size() && std::isdigit(static_cast<unsigned char>(line[digits])))
        digits++;
      if (word < line.size() && std::strchr("-+*#>|=", line[word]))
        line.insert(word, "\\");
      else if (digits > word && digits < line.size() &&
               (line[digits] == '.' || line[digits] == ')'))
        line.insert(digits, "\\");
    }
    out += line + "\n";
    at = nl + 1;
  }
  return out;
}

// Report-derived text in Markdown prose: made terminal-safe, | < > & as in a
// table cell, every inline marker (emphasis, links, images, code,
// strikethrough) backslash-escaped except an intraword underscore, and a backslash that would
// escape the next character doubled, so a crafted kernel release or CPU model renders as the
// literal text it is.
std::string MarkdownText(const std::string& s) {
  const std::string safe = TermSafe(s);
  std::string out;
  for (size_t i = 0; i < safe.size(); i++) {
    const char c = safe[i];
    const bool escapes =
        c == '\\' && i + 1 < safe.size() && std::ispunct(static_cast<unsigned char>(safe[i + 1]));
    auto alnum = [&](size_t at) {
      return at < safe.size() && std::isalnum(static_cast<unsigned char>(safe[at]));
    };
    // An underscore between letters or digits (CONFIG_STACKTRACE) emphasises
    // nothing and stays as written.
    const bool intraword = c == '_' && i > 0 && alnum(i - 1) && alnum(i + 1);
    if (escapes || (c != '\0' && !intraword && std::strchr("`*_[]~!", c)))
      out += '\\';
    out += c == '|' || c == '<' || c == '>' || c == '&' ? MarkdownCell(std::string(1, c))
                                                        : std::string(1, c);
  }
  return out;
}

// Report-derived text in a code span: the fence is one backtick longer than
// any run of backticks inside, so the text cannot close it early; code spans
// render their content literally (<script> included).
std::string MarkdownCode(const std::string& s) {
  const std::string safe = TermSafe(s);
  size_t longest = 0;
  size_t run = 0;
  for (char c : safe) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(longest + 1, '`');
  const bool pad = !safe.empty() && (safe.front() == '`' || safe.back() == '`');
  return fence + (pad ? " " + safe + " " : safe) + fence;
}

}  // namespace

std::string FormatText(const json& report, const ReportOptions& opts) {
  // The summary quotes kernel log lines too: every line made terminal-safe,
  // and a long one wrapped under its own indent.
  std::string out;
  std::string summary = HumanSummary(report);
  for (size_t at = 0; at < summary.size();) {
    size_t nl = summary.find('\n', at);
    if (nl == std::string::npos)
      nl = summary.size();
    const std::string line = TermSafe(summary.substr(at, nl - at));
    const std::string indent(std::min(line.find_first_not_of(' '), line.size()), ' ');
    out += line.size() <= kColumns
               ? line + "\n"
               : Wrap(line.substr(indent.size()), kColumns, indent, indent + "  ");
    at = nl + 1;
  }
  out += "\nchecks\n";
  // "  FAIL name   message", the message wrapped under itself.
  const std::string hang(36, ' ');
  for (const ReportCheck& c : ReportChecks(report, opts))
    out += Wrap(TermSafe(c.message), kColumns, Fmt("  %-4s %-28s ", TextResult(c), c.name.c_str()),
                hang);
  return out;
}

std::string FormatMarkdown(const json& report, const ReportOptions& opts) {
  const json& host = Get(report, "host");
  std::string out = "## cpuhp-stress report\n\n";
  const bool sim = IsSimulated(report);
  if (sim)
    out += MarkdownWrap(
               Fmt("**SIMULATED** run (sim backend): modeled latencies, %.3f s of simulated "
                   "time; the machine below only ran the model.",
                   static_cast<double>(U64(Get(report, "run"), "simulated_elapsed_ns")) / 1e9),
               "", "") +
           "\n";
  // A sim report's kernel line names the model; the host only ran it.
  const std::string release = MarkdownText(Str(host, "kernel_release", "?"));
  const std::string cpu_model = MarkdownText(Str(host, "cpu_model", "?"));
  out += MarkdownWrap(
      (sim ? "Kernel **SIMULATED** (the model ran on the host's " + release + ", " + cpu_model + ")"
           : "Kernel " + release + " on " + cpu_model) +
          ", CPUs " + MarkdownText(Str(Get(report, "cpus"), "selected", "?")) + ", " +
          std::to_string(U64(Get(report, "totals"), "ops")) + " operations, clock " +
          MarkdownText(Str(Get(report, "run"), "clock", "?")) + ".",
      "", "");
  for (const char* dir : kDirs) {
    out += std::string("\n### ") + dir + " latency (ms)\n\n";
    out += "| online CPUs | ops | p50 | p99 | max |\n|---:|---:|---:|---:|---:|\n";
    std::vector<const json*> rows;
    const json& levels = Get(Get(report, "per_online_count"), dir);
    if (levels.is_array())
      for (const json& l : levels)
        rows.push_back(&l);
    const json& all = Get(Get(report, "directions"), dir);
    auto row = [&](const std::string& label, const json& s) {
      out += "| " + label + " | " + std::to_string(U64(s, "count")) + " | " +
             Fmt("%.3f", static_cast<double>(U64(s, "p50_ns")) / 1e6) + " | " +
             Fmt("%.3f", static_cast<double>(U64(s, "p99_ns")) / 1e6) + " | " +
             Fmt("%.3f", static_cast<double>(U64(s, "max_ns")) / 1e6) + " |\n";
    };
    for (const json* l : rows)
      row(std::to_string(U64(*l, "online_cpus")), *l);
    row("**all**", all);
  }
  const json& smt = Get(report, "smt");
  if (Get(smt, "to").is_array()) {
    out += "\n### SMT switches (" + MarkdownText(Str(smt, "method", "?")) +
           " method, ms)\n\n| to mode | switches | p50 | p99 | max | CPUs each | failed writes "
           "|\n|---|---:|---:|---:|---:|---:|---:|\n";
    for (const json& m : smt["to"])
      out += "| " + MarkdownText(Str(m, "mode", "?")) + " | " + std::to_string(U64(m, "switches")) +
             " | " +
             Fmt("%.3f | %.3f | %.3f", static_cast<double>(U64(m, "p50_ns")) / 1e6,
                 static_cast<double>(U64(m, "p99_ns")) / 1e6,
                 static_cast<double>(U64(m, "max_ns")) / 1e6) +
             Fmt(" | %" PRIu64 "-%" PRIu64 " | %" PRIu64 " |\n", U64(m, "cpus_per_switch_min"),
                 U64(m, "cpus_per_switch_max"), U64(m, "failed_writes"));
    if (const uint64_t n = U64(smt, "incomplete"))
      out += Fmt("\n%" PRIu64 " switch cut short by a stop or a restart (not timed).\n", n);
  }
  // The checks as a list: a table row cannot wrap, a list item can.
  out += "\n### checks\n\n";
  for (const ReportCheck& c : ReportChecks(report, opts))
    out += MarkdownWrap(MarkdownText(c.message),
                        "- " +
                            std::string(c.skipped       ? "skipped"
                                        : !c.is_verdict ? "measured"
                                        : c.pass        ? "pass"
                                                        : "**FAIL**") +
                            " " + MarkdownCode(c.name) + ": ",
                        "  ");
  return out;
}

std::string FormatJunit(const json& report, const ReportOptions& opts) {
  std::vector<ReportCheck> checks = ReportChecks(report, opts);
  int failures = 0, skipped = 0;
  for (const ReportCheck& c : checks) {
    failures += c.is_verdict && !c.pass;
    skipped += c.skipped;
  }
  double seconds = static_cast<double>(U64(Get(report, "run"), "elapsed_ns")) / 1e9;
  std::string host = Str(Get(report, "host"), "hostname", "unknown");
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out +=
      Fmt("<testsuites name=\"cpuhp-stress\" tests=\"%zu\" failures=\"%d\" errors=\"0\" "
          "time=\"%.3f\">\n",
          checks.size(), failures, seconds);
  out +=
      Fmt("  <testsuite name=\"cpuhp-stress\" tests=\"%zu\" failures=\"%d\" errors=\"0\" "
          "skipped=\"%d\" time=\"%.3f\" timestamp=\"%s\" hostname=\"%s\">\n",
          checks.size(), failures, skipped, seconds,
          XmlEscape(Str(Get(report, "run"), "started_at")).c_str(), XmlEscape(host).c_str());
  out += "    <properties>\n";
  for (const auto& [k, v] : std::map<std::string, std::string>{
           {"kernel_release", Str(Get(report, "host"), "kernel_release")},
           {"cpus", Str(Get(report, "cpus"), "selected")},
           {"clock", Str(Get(report, "run"), "clock")},
           {"simulated", IsSimulated(report) ? "true" : "false"},
           {"report", opts.report_path}})
    out += "      <property name=\"" + k + "\" value=\"" + XmlEscape(v) + "\"/>\n";
  out += "    </properties>\n";
  for (const ReportCheck& c : checks) {
    out +=
        "    <testcase classname=\"cpuhp-stress\" name=\"" + XmlEscape(c.name) + "\" time=\"0\">\n";
    if (c.skipped)
      out += "      <skipped message=\"" + XmlEscape(c.message) + "\"/>\n";
    if (c.is_verdict && !c.pass)
      out += "      <failure message=\"" + XmlEscape(c.message) + "\" type=\"" +
             (c.name.rfind("compare_", 0) == 0 ? "regression" : "check") + "\">" +
             XmlEscape(c.message) + "</failure>\n";
    out += "      <system-out>" + XmlEscape(c.message) +
           (c.has_measurement ? " [" + NumText(c.value) + " " + c.unit + "]" : "") +
           "</system-out>\n";
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

json FormatKcidb(const json& report, const ReportOptions& opts) {
  std::string origin = opts.kcidb_origin;
  std::string release = Str(Get(report, "host"), "kernel_release", "unknown");
  // A sim run built and measured no kernel: its default build id says sim
  // before the host's release, so it never files under a real build.
  const bool sim = IsSimulated(report);
  std::string build_id = opts.kcidb_build_id.empty()
                             ? origin + ":" + (sim ? "sim." : "") + SafeName(release)
                             : opts.kcidb_build_id;
  std::string run_id = Str(Get(report, "run"), "started_at", "run");
  std::string boot = Str(Get(report, "host"), "boot_id");
  std::string run_key = SafeName(boot.empty() ? run_id : boot + "." + run_id);
  json tests = json::array();
  for (const ReportCheck& c : ReportChecks(report, opts)) {
    json t = {{"id", origin + ":" + run_key + "." + c.name},
              {"build_id", build_id},
              {"origin", origin},
              {"path", "cpuhp_stress." + SafeName(c.name)},
              {"status", c.skipped       ? "SKIP"
                         : !c.is_verdict ? "DONE"
                         : c.pass        ? "PASS"
                                         : "FAIL"},
              {"comment", c.message},
              {"environment",
               {{"comment", Str(Get(report, "host"), "hostname", "unknown")},
                {"misc",
                 {{"cpu_model", Str(Get(report, "host"), "cpu_model", "unknown")},
                  {"arch", Str(Get(report, "host"), "arch", "unknown")},
                  {"simulated", sim}}}}},
              {"misc",
               {{"cpus", Str(Get(report, "cpus"), "selected")},
                {"clock", Str(Get(report, "run"), "clock")},
                {"kernel_release", release},
                {"simulated", sim}}}};
    std::string start = Str(Get(report, "run"), "started_at");
    if (!start.empty())
      t["start_time"] = start;
    t["duration"] = static_cast<double>(U64(Get(report, "run"), "elapsed_ns")) / 1e9;
    if (c.has_measurement) {
      t["number"] = {{"value", c.value}};
      if (!c.unit.empty())
        t["number"]["unit"] = c.unit;
    }
    tests.push_back(std::move(t));
  }
  return {{"version", {{"major", 5}, {"minor", 0}}}, {"tests", std::move(tests)}};
}

std::string FormatLava(const json& report, const ReportOptions& opts) {
  std::string out;
  // A sim run's cases are named sim.<check>: a LAVA query or chart keyed by
  // case name never mixes modeled latencies with measured ones.
  const std::string prefix = IsSimulated(report) ? "sim." : "";
  for (const ReportCheck& c : ReportChecks(report, opts)) {
    // A test case carries no message: why it failed is echoed into the log
    // just before it, as one shell-quoted line.
    if (c.is_verdict && !c.pass && !c.skipped) {
      std::string quoted;
      for (char ch : TermSafe(c.name + ": " + c.message))
        quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
      out += "echo 'FAIL " + prefix + quoted + "'\n";
    }
    out += "lava-test-case " + prefix + SafeName(c.name) + " --result " +
           (c.skipped                 ? "skip"
            : !c.is_verdict || c.pass ? "pass"
                                      : "fail");
    if (c.has_measurement)
      out += " --measurement " + NumText(c.value) + " --units " + SafeName(c.unit);
    out += "\n";
  }
  return out;
}

int ReportCommand(const std::string& path, const std::string& format, const std::string& output,
                  ReportOptions opts, std::FILE* out) {
  json report;
  std::string err;
  if (!LoadReport(path, &report, &err)) {
    std::fprintf(stderr, "cpuhp-stress: report: %s\n", err.c_str());
    return kExitBadInput;
  }
  if (opts.baseline &&
      (!CheckConsistent(*opts.baseline, opts.baseline_path, &err) ||
       !CheckConsistent(report, path, &err) || !CheckComparable(*opts.baseline, report, &err))) {
    std::fprintf(stderr, "cpuhp-stress: report: --baseline %s: %s\n", opts.baseline_path.c_str(),
                 err.c_str());
    return kExitBadInput;
  }
  if (!output.empty() && output != "-" && !CheckOutputPath(output, &err)) {
    std::fprintf(stderr, "cpuhp-stress: report: -o %s\n", err.c_str());
    return kExitBadInput;
  }
  opts.report_path = path;
  if (opts.baseline)  // once: each format and the exit code below read the checks
    opts.comparison =
        std::make_shared<const Comparison>(Compare(*opts.baseline, report, opts.compare));
  std::string text;
  if (format == "text")
    text = FormatText(report, opts);
  else if (format == "markdown")
    text = FormatMarkdown(report, opts);
  else if (format == "junit")
    text = FormatJunit(report, opts);
  else if (format == "kcidb")
    text = DumpJson(FormatKcidb(report, opts), 2) + "\n";
  else if (format == "lava")
    text = FormatLava(report, opts);
  else if (format == "html")
    text = FormatHtml(report, opts);
  else {
    std::fprintf(stderr,
                 "cpuhp-stress: report: --format '%s': expected text, markdown, junit, kcidb, "
                 "lava or html\n",
                 format.c_str());
    return kExitBadInput;
  }
  if (output.empty() || output == "-") {
    std::fputs(text.c_str(), out);
  } else if (!WriteFileAtomic(output, text, &err)) {
    std::fprintf(stderr, "cpuhp-stress: report: %s\n", err.c_str());
    return kExitFailed;
  }
  bool failed = false;
  for (const ReportCheck& c : ReportChecks(report, opts))
    failed |= c.is_verdict && !c.pass;
  return failed ? kExitFailed : kExitOk;
}

}  // namespace cpuhp
