// SPDX-License-Identifier: GPL-2.0
// What compare (and merge) read before comparing: a report loaded within
// bounded sizes, two reports checked to measure the same thing, and a
// report's summaries checked against the histograms beside them.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "report/report_limits.h"

namespace cpuhp {

// Reads and sanity-checks one report within ReportLimits (report_limits.h;
// JSON read as json_file.h does: bounded nesting, line and column in
// errors). On failure *err is one line naming the file and the problem (the
// limit crossed, with its JSON pointer). Every "buckets" array is also at
// most a histogram's buckets.
bool LoadReport(const std::string& path, nlohmann::json* out, std::string* err);
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
