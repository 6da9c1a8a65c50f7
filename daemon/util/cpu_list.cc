// SPDX-License-Identifier: GPL-2.0
#include "util/cpu_list.h"

#include <algorithm>
#include <charconv>

namespace cpuhp {
namespace {

// Far above any real NR_CPUS (8192 today); keeps "0-999999999" from
// allocating gigabytes.
constexpr int kMaxCpuNumber = 65535;

bool ParseNumber(std::string_view s, int* out) {
  if (s.empty() || s.size() > 6)
    return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size() && *out >= 0 && *out <= kMaxCpuNumber;
}

}  // namespace

bool ParseCpuList(std::string_view text, std::vector<int>* cpus, std::string* err) {
  cpus->clear();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.remove_suffix(1);
  if (text.empty())
    return true;
  // Ranges first, merged, then expanded: the result never exceeds
  // kMaxCpuNumber + 1 CPUs whatever the input repeats ("0-65535," x 200 once
  // expanded to 13 million entries before duplicates went).
  std::vector<std::pair<int, int>> ranges;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string_view item =
        text.substr(pos, comma == std::string_view::npos ? text.npos : comma - pos);
    size_t dash = item.find('-');
    int lo = 0;
    int hi = 0;
    bool ok = dash == std::string_view::npos ? ParseNumber(item, &lo) && (hi = lo, true)
                                             : ParseNumber(item.substr(0, dash), &lo) &&
                                                   ParseNumber(item.substr(dash + 1), &hi);
    if (!ok || lo > hi) {
      // Quoted short: the list may be a megabyte.
      auto shown = [](std::string_view v) {
        return v.size() <= 64 ? std::string(v) : std::string(v.substr(0, 61)) + "...";
      };
      *err = "bad CPU list \"" + shown(text) + "\" at \"" + shown(item) +
             "\" (expected e.g. 1-7,9; CPUs 0.." + std::to_string(kMaxCpuNumber) + ")";
      return false;
    }
    ranges.emplace_back(lo, hi);
    if (comma == std::string_view::npos)
      break;
    pos = comma + 1;
  }
  std::sort(ranges.begin(), ranges.end());
  std::vector<int> out;
  int next = 0;  // the lowest CPU not yet in out
  for (const auto& [lo, hi] : ranges) {
    for (int c = std::max(lo, next); c <= hi; ++c)
      out.push_back(c);
    next = std::max(next, hi + 1);
  }
  *cpus = std::move(out);
  return true;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::string s;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1)
      ++j;
    if (!s.empty())
      s += ',';
    s += std::to_string(cpus[i]);
    if (j > i)
      s += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return s;
}

}  // namespace cpuhp
