// SPDX-License-Identifier: GPL-2.0
// compare's --threshold: parsed into CompareOptions, and every per-metric
// override checked to name a metric of the comparison.
#pragma once

#include <string>

#include "report/compare.h"

namespace cpuhp {

// "5%", "5", "0.5%" -> 0.05, 0.05, 0.005; "p99=20%" is an override, keyed
// by a metric name (Metric::name, "offline.p50@online=8", or p50, p99,
// offline, online, offline.p99); an unknown name is refused.
bool ParseThreshold(const std::string& text, CompareOptions* opts, std::string* err);

// Every --threshold override named a metric of this comparison; otherwise
// *err names the first that did not (a typo would silently do nothing).
bool CheckThresholdsUsed(const Comparison& c, std::string* err);

}  // namespace cpuhp
