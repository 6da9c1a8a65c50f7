// SPDX-License-Identifier: GPL-2.0
// CPU lists in the kernel's syntax ("0-3,8,10-11"), as sysfs prints them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cpuhp {

// Parses a kernel CPU list into sorted, unique CPU numbers. An empty string
// (or a lone newline, as sysfs prints an empty mask) is an empty list.
// Returns false and sets *err on bad syntax ("3-1", "a", "1,,2", huge numbers).
bool ParseCpuList(std::string_view text, std::vector<int>* cpus, std::string* err);

// Formats sorted, unique CPU numbers in the kernel's syntax.
std::string FormatCpuList(const std::vector<int>& cpus);

}  // namespace cpuhp
