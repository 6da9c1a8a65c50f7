// SPDX-License-Identifier: GPL-2.0
// A comparison (report/compare.h) for a reader: text within 80 columns with
// a footnote for every cell without an interval, Markdown, and JSON.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "report/compare.h"

namespace cpuhp {

// The spread of each side's boots of one metric: "boots (ms): baseline
// 1.100..1.200, candidate 1.000..1.300 (3 + 3); boots disagree, pooled
// improved"; "" when a side has fewer than two boots.
std::string MetricBootsSummary(const Metric& m);

std::string CompareText(const Comparison& c);
std::string CompareMarkdown(const Comparison& c);
nlohmann::json CompareJson(const Comparison& c);

}  // namespace cpuhp
