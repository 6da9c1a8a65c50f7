// SPDX-License-Identifier: GPL-2.0
// The kernel's hotplug state table, /sys/devices/system/cpu/hotplug/states:
// one "%3d: %s" line per state with a name. Numbers differ between kernels
// and configs, so states are always resolved by name through this table.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace cpuhp {

struct HotplugStates {
  std::map<int, std::string> by_number;

  // "" when the number has no named state (unnamed or dynamic slots).
  const std::string& Name(int number) const;
  // -1 when no state has this name.
  int Number(std::string_view name) const;
};

// Parses the file's text. Lines that are not "<number>: <name>" are skipped
// and counted in *skipped (if not null); returns false only if no line parsed.
bool ParseHotplugStates(std::string_view text, HotplugStates* out, int* skipped = nullptr);

// Reads <sysfs_root>/hotplug/states. False with a one-line *err naming the file.
bool ReadHotplugStates(const std::string& sysfs_root, HotplugStates* out, std::string* err);

}  // namespace cpuhp
