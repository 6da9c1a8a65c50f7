// SPDX-License-Identifier: GPL-2.0
#include "report/compare_thresholds.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace cpuhp {
namespace {

bool IsStat(const std::string& s) {
  return s == "p50" || s == "p99";
}
bool IsDir(const std::string& s) {
  return s == "offline" || s == "online";
}
bool AllDigits(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

// The metric names a threshold may be given for: p50, offline,
// offline.p99, offline.p50@online=8, per_cpu.cpu1.offline.p50, or the
// path of a summary in another section ending in .p50 or .p99
// (timing_sources.kmod.phases[...].p99).
bool IsMetricName(const std::string& key) {
  std::vector<std::string> parts;
  for (size_t from = 0;;) {
    const size_t dot = key.find('.', from);
    parts.push_back(key.substr(from, dot - from));
    if (dot == std::string::npos)
      break;
    from = dot + 1;
  }
  if (parts.size() == 1)
    return IsStat(key) || IsDir(key);
  if (IsDir(parts[0])) {
    if (parts.size() != 2)
      return false;
    const size_t at = parts[1].find('@');
    if (at == std::string::npos)
      return IsStat(parts[1]);
    return IsStat(parts[1].substr(0, at)) && parts[1].compare(at, 8, "@online=") == 0 &&
           AllDigits(parts[1].substr(at + 8));
  }
  if (parts[0] == "per_cpu")
    return parts.size() == 4 && parts[1].rfind("cpu", 0) == 0 && AllDigits(parts[1].substr(3)) &&
           IsDir(parts[2]) && IsStat(parts[3]);
  return !parts[0].empty() && !IsCoreSection(parts[0]) && IsStat(parts.back());
}

}  // namespace

bool ParseThreshold(const std::string& text, CompareOptions* opts, std::string* err) {
  // The value follows the last '=': a level's name has one of its own
  // ("offline.p50@online=2=50%").
  std::string key, value = text;
  size_t eq = text.rfind('=');
  if (eq != std::string::npos) {
    key = text.substr(0, eq);
    value = text.substr(eq + 1);
  }
  // A bare number is refused: "0.05" meant as 5 % would be read as 0.05 %.
  if (value.empty() || value.back() != '%') {
    *err = "--threshold '" + text + "': a percentage needs its % sign (5%, METRIC=20%)";
    return false;
  }
  value.pop_back();
  char* end = nullptr;
  double pct = value.empty() ? NAN : std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || !std::isfinite(pct) || pct < 0 || pct >= 100 ||
      (eq != std::string::npos && key.empty())) {
    *err = "--threshold '" + text + "': expected a percentage like 5% or METRIC=20% (0 to 100)";
    return false;
  }
  if (!key.empty() && !IsMetricName(key)) {
    *err = "--threshold '" + text + "': unknown metric '" + key +
           "' (p50, p99, offline, online, offline.p99, offline.p50@online=8, "
           "per_cpu.cpu1.offline.p50, or a summary path ending in .p50 or .p99)";
    return false;
  }
  if (key.empty())
    opts->threshold = pct / 100;
  else
    opts->overrides[key] = pct / 100;
  return true;
}

bool CheckThresholdsUsed(const Comparison& c, std::string* err) {
  for (const auto& [key, v] : c.options.overrides) {
    bool used = false;
    for (const CompareRow& r : c.rows)
      for (const Metric* m : {&r.p50, &r.p99}) {
        const std::string dir = m->name.find("offline") != std::string::npos  ? "offline"
                                : m->name.find("online") != std::string::npos ? "online"
                                                                              : "";
        used |= key == m->name || key == dir + "." + m->stat || key == m->stat || key == dir;
      }
    if (!used) {
      *err = "--threshold '" + key +
             "': no metric of that name in these reports (see the "
             "names in --format json)";
      return false;
    }
  }
  return true;
}

}  // namespace cpuhp
