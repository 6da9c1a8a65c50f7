// SPDX-License-Identifier: GPL-2.0
// The sizes merge, compare and report accept (README.md "Limits of merge,
// compare and report"), in one place. Sizes no report of ours comes near,
// so that a crafted one is refused in one line ("<file>: <JSON pointer>:
// ...") before it costs memory or minutes; within them, reading, merging
// and comparing cost time and memory linear in the input (a parsed report
// takes 10 to 20 times its size in memory).
#pragma once

#include <cstddef>

namespace cpuhp {

struct ReportLimits {
  // One report file (read whole, then parsed).
  size_t report_bytes = size_t{256} << 20;
  // Any array; the longest we write: per_cpu (one per CPU id, at most
  // 65536), kernel log lines (4000), soak restarts. (A 10-million-element
  // array became 10 million map keys.)
  size_t array_elements = 100000;
  // per_online_count rows per direction: one per online count, 0..8192 on
  // the largest kernel configs (NR_CPUS 8192, the config's limit too).
  size_t level_rows = 8193;
  // Latency summaries anywhere in a report (directions, per_online_count,
  // per_cpu, timing sources...): per_cpu of 65536 CPUs has 131072.
  size_t summaries = 200000;
  // Histogram buckets of all the report's histograms together, wherever
  // they sit: compare bootstraps every summary over its buckets. A real
  // row has tens to a few hundred (a 2000-operation sim run: 70); a report
  // tens of thousands at most.
  size_t buckets = 1000000;
};

}  // namespace cpuhp
