// SPDX-License-Identifier: GPL-2.0
// Which kernel symbols the bpf source probes: the probed functions and the
// renamed copies the compiler made of them, picked from /proc/kallsyms.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "sources/kmod_source.h"

namespace cpuhp {

// Copies of a probed function the compiler may have made, by suffix
// (takedown_cpu, _cpu_up.constprop.0, ...): at most this many per probe.
inline constexpr size_t kBpfMaxSymbolsPerProbe = 8;

// The text symbols of /proc/kallsyms (core kernel, not modules) that are a
// probed function or a renamed copy of one (NAME.constprop.N, NAME.isra.N,
// NAME.llvm.HASH, ...), per probe id, in kallsyms order.
using BpfSymbols = std::array<std::vector<std::string>, CPUHP_PROBE_NR>;
BpfSymbols BpfPickSymbols(std::string_view kallsyms);
// The same picks from a file read in pieces of `piece` bytes
// (/proc/kallsyms: 5+ MB the kernel formats 4 KiB per read), never held
// whole. False with *err naming the file when it cannot be read or holds a
// line longer than a piece.
bool BpfPickSymbolsFromFile(const std::string& path, BpfSymbols* out, std::string* err,
                            size_t piece = size_t{64} << 10);

}  // namespace cpuhp
