// SPDX-License-Identifier: GPL-2.0
// Reading a report (daemon/report/schema/report.schema.json) that may come from
// another version, be cut short (interim) or lack optional sections: small
// accessors that never throw, shared by compare, the report formats, the HTML
// page and the kmod summary. A missing or mistyped field reads as "absent"
// (null / nullopt / the fallback), never as an exception.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cpuhp::report_json {

// printf into a std::string of any length.
std::string Fmt(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// j[key] when j is an object holding key, else a null value.
const nlohmann::json& Get(const nlohmann::json& j, const char* key);
// Get along a path: Path(r, {"timing_sources", "kmod", "kernel_phases"}).
const nlohmann::json& Path(const nlohmann::json& j, std::initializer_list<const char*> keys);

// j[key] as a number, nullopt when absent or not a number.
std::optional<double> OptNum(const nlohmann::json& j, const char* key);
// j[key] as a number, `fallback` when absent or not a number.
double Num(const nlohmann::json& j, const char* key, double fallback = 0);
// j[key] as a count or nanoseconds: exact for any unsigned 64-bit value;
// 0 when absent, negative or not a number (fractions are truncated).
uint64_t U64(const nlohmann::json& j, const char* key);
// j[key] as a string, `fallback` when absent or not a string.
std::string Str(const nlohmann::json& j, const char* key, const std::string& fallback = "");

// A sim backend's report (run.clock "simulated"): modeled latencies, no CPU
// of the host's kernel measured; every rendering says so.
bool IsSimulated(const nlohmann::json& report);

// A latency summary (SummarizeHistogram, probe stats): count and p50_ns.
bool IsSummary(const nlohmann::json& j);

// timing_sources.<name> of a report: its status "ok", "unavailable" (with
// *reason), or "absent" when the report has no such section.
std::string SourceStatus(const nlohmann::json& report, const char* name,
                         std::string* reason = nullptr);

// The two directions of an operation, in the order every table lists them.
inline constexpr const char* kDirs[] = {"offline", "online"};

// Nanoseconds as milliseconds with three decimals: "1.234".
std::string MsText(double ns);
// Nanoseconds to milliseconds / microseconds.
inline double Ms(double ns) {
  return ns / 1e6;
}
inline double Us(double ns) {
  return ns / 1e3;
}

// Text for XML and HTML bodies and attribute values: & < > " ' escaped,
// control characters other than \n and \t (invalid in XML 1.0) and DEL
// (a parse error in HTML) as spaces.
std::string XmlEscape(const std::string& s);

// Kernel log text reaches the text and Markdown outputs: every control byte
// (ESC, DEL, ...; \n and \t too) as a visible \xNN, so nothing in a message
// acts on the terminal that shows it.
std::string TermSafe(const std::string& s);
// One Markdown table cell: TermSafe, then | (which would end the cell), and
// < > & (raw HTML to a renderer: "<TASK>") escaped.
std::string MarkdownCell(const std::string& s);
// `text` broken at spaces into lines of at most `width` bytes, each ending in
// \n: the first starts with `first`, the others with `rest` (a hanging
// indent); a word longer than a line is cut (not inside a UTF-8 character),
// runs of spaces become one, trailing spaces are dropped.
std::string Wrap(const std::string& text, size_t width, const std::string& first,
                 const std::string& rest);
inline std::string HtmlEscape(const std::string& s) {
  return XmlEscape(s);
}

// A sweep's levels as the report records them (cpus.schedule), each with the
// operations measured there: at level N the victim goes offline with N CPUs
// online and comes back with N-1 (per_online_count), 2 * cycles_per_level
// operations when the level ran fully.
struct SweepLevel {
  int64_t online = 0;
  uint64_t ops = 0;
  bool complete = false;  // in levels_complete: every cycle ran
};
struct SweepLevels {
  bool sweep = false;  // the report's schedule has levels (pattern sweep)
  uint64_t target_ops = 0;
  std::vector<SweepLevel> levels;  // in the sweep's order
  bool all_complete() const;
};
SweepLevels ReadSweepLevels(const nlohmann::json& report);
// The levels not measured fully: "level 2 short (44 of 200 operations);
// levels 4, 8 not measured"; "" when every level was.
std::string SweepShortfall(const SweepLevels& sweep);

}  // namespace cpuhp::report_json
