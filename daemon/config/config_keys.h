// SPDX-License-Identifier: GPL-2.0
// Every config key: its name, its range and where it goes in Config, one
// table per object (the defaults are Config's own, config.h); and the names
// of the keys that take one of a list.
#pragma once

#include <span>

#include "config/config_value.h"

namespace cpuhp {

// Index = enum value.
inline constexpr const char* kPatternNames[] = {"roundrobin", "all",         "random",
                                                "sweep",      "fault_sweep", "smt"};
inline constexpr const char* kProgressNames[] = {"auto", "always", "never"};
inline constexpr const char* kOnWarningNames[] = {"continue", "stop"};

// The top level's keys; the objects among them (sweep, sim, ...) have their own.
std::span<const Field> TopLevelKeys();

}  // namespace cpuhp
