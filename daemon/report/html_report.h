// SPDX-License-Identifier: GPL-2.0
// `cpuhp-stress report R.json --format html`: one self-contained page
// (inline SVG and CSS, no script, no network) from the report's real
// sections (daemon/report/schema/report.schema.json):
//   latency vs online CPUs   per direction: per_online_count (the write) and
//                            every kernel phase with per-online-count rows:
//                            timing_sources.tracepoints.phases[].per_online_count
//                            and timing_sources.kmod.kernel_phases.<dir>.<fn>.by_online
//   histograms               directions.<dir>.histogram
//   top kernel states        timing_sources.tracepoints.kernel_states by self_ns
//   timeline                 timeline.points (by column name), with the lines of
//                            timing_sources.kmsg_health.first_lines marked at
//                            their op_index
//   disturbance              timing_sources.disturbance.total: p50/p99/p99.9/max
//                            of baseline, during offline, during online (us)
// A section that is absent or whose source is unavailable is named with its
// reason and not drawn; a bucket or level without samples is not drawn.
// Every plotted point is an SVG element with data-series, data-x and data-y
// attributes (marks: data-series="event", data-x = operation index,
// data-kind), so tests can read the charts.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "report/report_formats.h"

namespace cpuhp {

std::string FormatHtml(const nlohmann::json& report, const ReportOptions& opts);

}  // namespace cpuhp
