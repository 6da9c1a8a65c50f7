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
  std::vector<int> out;
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
      *err = "bad CPU list \"" + std::string(text) + "\" at \"" + std::string(item) +
             "\" (expected e.g. 1-7,9; CPUs 0.." + std::to_string(kMaxCpuNumber) + ")";
      return false;
    }
    for (int c = lo; c <= hi; ++c)
      out.push_back(c);
    if (comma == std::string_view::npos)
      break;
    pos = comma + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
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
