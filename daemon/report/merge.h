// SPDX-License-Identifier: GPL-2.0
// `cpuhp-stress merge -o OUT.json IN1.json IN2.json ...`: one pooled report
// from several boots of one kernel with one setup (A/B verification of a
// kernel patch boots each kernel several times).
//
// Refused (one line naming the two files and the value): what compare
// refuses (report/compare_input.h CheckComparable: CPU sets, backends,
// patterns, intervals, interim against final), another kernel release or
// schema version (the inputs are boots of one kernel), and one run given
// twice (report/run_identity.h: the same file twice, a copy, or a pooled
// report with one of its own inputs).
//
// Pooled:
//   latency summaries with a histogram  histograms summed bucket by bucket
//     (directions, per_online_count)    (Histogram::Merge), the summary
//                                       recomputed from the sum
//                                       (SummarizeHistogram): exact
//   latency summaries without one       count summed; min, max exact; mean
//     (per_cpu, kernel phases and       and stddev exact (pooled moments);
//     states, disturbance probes)       percentiles cannot be pooled from
//                                       summaries: the median of the boots'
//                                       values (a boot without operations
//                                       left out)
//   counters                            summed: totals, errors, per_cpu
//                                       failures, run.elapsed_ns, the
//                                       restore's writes, first_errors_dropped,
//                                       kernel states' failed, total_ns,
//                                       self_ns, and the timing sources'
//                                       counters (lost events, kernel log
//                                       counts, probe hits: kSummedCounters)
//   run.started_at, ended_at            earliest, latest
//   restore.ok                          every boot restored
//   first_errors                        concatenated (at most 100, the rest
//                                       counted in first_errors_dropped)
//   process.max_rss_kib                 the largest
//   process.loop_cpu_ns, loop_ops       summed
// Arrays of rows are matched by compare's identity key (ElementKey): a row
// missing in a boot is pooled over the boots that have it. Everything else
// (host, config, seed, other values of other sections such as a kernel
// state's share) is the first report's that is not null; timeline and soak
// (one boot's time series and restarts) are left out.
//
// The pooled report records its inputs: top-level "pooled": {"reports":
// [paths], "boots": N, "runs": [each boot's run (RunIdToJson) or null]},
// and beside every pooled latency summary "per_boot": [{"count", "p50_ns",
// "p99_ns"} or null, ...], one per boot in input order (a boot lacking that
// row: null). An input that is itself pooled contributes its boots, their
// runs and their per_boot entries.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cpuhp {

// Whether `other` may be pooled with `first` (see above); *err is one line
// naming both files and the differing value.
bool CheckMergeable(const nlohmann::json& first, const std::string& first_path,
                    const nlohmann::json& other, const std::string& other_path, std::string* err);

// Pools `reports` (read from `paths`, same order; at least one), checked with
// CheckMergeable. The result passes CheckConsistent.
bool MergeReports(const std::vector<std::string>& paths, const std::vector<nlohmann::json>& reports,
                  nlohmann::json* out, std::string* err);

// Reads each report (LoadReport, CheckConsistent) and pools them; a single
// path is read and returned as it is (compare's two-file form).
bool LoadAndPool(const std::vector<std::string>& paths, nlohmann::json* out, std::string* err);

// The command: `output` ("-": `out`) is checked before the reports are read
// and written atomically. Exit 0 written, 1 the write failed, 2 bad input.
int MergeCommand(const std::vector<std::string>& inputs, const std::string& output, std::FILE* out);

}  // namespace cpuhp
