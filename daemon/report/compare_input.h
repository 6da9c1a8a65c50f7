// SPDX-License-Identifier: GPL-2.0
// What compare (and merge) read before comparing: a report loaded within
// bounded sizes, two reports checked to measure the same thing, and a
// report's summaries checked against the histograms beside them.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace cpuhp {

// Reads and sanity-checks one report (at most kMaxReportBytes; JSON read as
// json_file.h does: bounded nesting, line and column in errors). On failure
// *err is one line naming the file and the problem.
inline constexpr size_t kMaxReportBytes = size_t{256} << 20;
bool LoadReport(const std::string& path, nlohmann::json* out, std::string* err);
// Sizes no report of ours comes near, so a crafted one is refused in one
// line ("<file>: <JSON pointer>: ...") before it costs memory or minutes: a
// 10-million-element array became 10 million map keys; each level row is
// bootstrapped over all its buckets (a row of thousands costs a good part of
// a second). Every "buckets" array is also at most a histogram's buckets.
struct ReportLimits {
  // Any array; the longest we write: per_cpu (one per CPU id, at most
  // 65536), kernel log lines (4000), soak restarts.
  size_t array_elements = 100000;
  // per_online_count rows per direction: one per online count, 0..8192 on
  // the largest kernel configs (NR_CPUS 8192, the config's limit too).
  size_t level_rows = 8193;
  // Buckets of all level rows together: a real row has tens to a few
  // hundred (a 2000-operation sim run: 70), so this is thousands of rows.
  size_t level_buckets = 1000000;
};

// The same checks on a report's text; `source` names it in errors.
bool ParseReport(const std::string& text, const std::string& source, nlohmann::json* out,
                 std::string* err, const ReportLimits& limits = ReportLimits{});
// Both reports measure the same thing: same schema version, same CPU sets.
// Refuses two runs whose numbers mean different things: other CPU sets, other
// backends (sim against real), patterns or intervals, or an interim report
// against a final one. *err: one line naming both values.
bool CheckComparable(const nlohmann::json& base, const nlohmann::json& cand, std::string* err);
// The same, naming the two reports base_name and cand_name instead of
// "baseline" and "candidate" (merge names the two files).
bool CheckComparableNamed(const nlohmann::json& base, const nlohmann::json& cand,
                          const std::string& base_name, const std::string& cand_name,
                          std::string* err);

// Refuses a report whose latency summaries (count, min, p50, p99, max) are
// not those of the histogram beside them: compare shows the summaries and
// decides from the histograms, so they must agree. which: "baseline" or
// "candidate", named in *err with the section and field.
bool CheckConsistent(const nlohmann::json& report, const std::string& which, std::string* err);

}  // namespace cpuhp
