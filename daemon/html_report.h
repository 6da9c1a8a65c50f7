// SPDX-License-Identifier: GPL-2.0
// `cpuhp-stress report R.json --format html`: one self-contained page
// (inline SVG and CSS, no script, no network) with latency vs online CPUs
// (p50/p99 per direction, and per kernel phase when a section carries
// per-online-count summaries), latency histograms per direction, top kernel
// states by time (when present), the downsampled timeline of operation
// latency with kernel-log events marked (when present), disturbance figures
// (when present) and the checks. Every plotted point is an SVG element with
// data-series, data-x and data-y attributes, so tests can read the charts.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "report_formats.h"

namespace cpuhp {

std::string FormatHtml(const nlohmann::json& report, const ReportOptions& opts);

}  // namespace cpuhp
