// SPDX-License-Identifier: GPL-2.0
#include "machine/hotplug_states.h"

#include <charconv>

#include "machine/sysfs_file.h"

namespace cpuhp {

const std::string& HotplugStates::Name(int number) const {
  static const std::string kNone;
  auto it = by_number.find(number);
  return it == by_number.end() ? kNone : it->second;
}

int HotplugStates::Number(std::string_view name) const {
  for (const auto& [n, s] : by_number)
    if (s == name)
      return n;
  return -1;
}

bool ParseHotplugStates(std::string_view text, HotplugStates* out, int* skipped) {
  HotplugStates parsed;
  int bad = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    size_t b = line.find_first_not_of(' ');
    if (b == std::string_view::npos)
      continue;  // blank line
    line.remove_prefix(b);
    int number = -1;
    auto [p, ec] = std::from_chars(line.data(), line.data() + line.size(), number);
    std::string_view rest(p, static_cast<size_t>(line.data() + line.size() - p));
    if (ec != std::errc() || number < 0 || rest.size() < 3 || rest.substr(0, 2) != ": ") {
      ++bad;
      continue;
    }
    parsed.by_number[number] = std::string(rest.substr(2));
  }
  if (skipped)
    *skipped = bad;
  if (parsed.by_number.empty())
    return false;
  *out = std::move(parsed);
  return true;
}

bool ReadHotplugStates(const std::string& sysfs_root, HotplugStates* out, std::string* err) {
  std::string text;
  int e = 0;
  if (!SysfsRoot(sysfs_root).Read("hotplug/states", 1 << 20, &text, err, &e))
    return false;
  if (!ParseHotplugStates(text, out)) {
    *err = sysfs_root + "/hotplug/states: no \"<number>: <name>\" line in it";
    return false;
  }
  return true;
}

}  // namespace cpuhp
