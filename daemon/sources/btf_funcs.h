// SPDX-License-Identifier: GPL-2.0
// Which functions the kernel's BTF describes, found by walking the raw type
// section once (Documentation/bpf/btf.rst) instead of parsing it whole:
// the bpf source asks this of ~8 names before it loads its programs, and
// libbpf parses /sys/kernel/btf/vmlinux again at that load for fentry's
// attach ids. btf__parse of a 6.18 vmlinux BTF costs ~45 ms of start-up
// (strace, 3 runs); this walk, a few.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cpuhp {

// For each of `names`, the type id of the BTF_KIND_FUNC of that name in `btf`
// (a raw BTF blob in this machine's byte order), 0 when it has none:
// (*ids)[i] for names[i], btf__find_by_name_kind's answer (the first of
// several). The id is what a fentry program's load names as its
// attach_btf_id. False with *err when the blob is not
// BTF this walk knows (bad magic, another byte order, a kind newer than
// ENUM64, a section out of bounds): the caller then asks libbpf.
bool BtfHasFuncs(std::string_view btf, const std::vector<std::string>& names,
                 std::vector<uint32_t>* ids, std::string* err);

// The same for a file (/sys/kernel/btf/vmlinux, 5+ MB) read front to back
// through one window of `window` bytes, never held whole; *err names it.
bool BtfFileHasFuncs(const std::string& path, const std::vector<std::string>& names,
                     std::vector<uint32_t>* ids, std::string* err,
                     size_t window = size_t{64} << 10);

}  // namespace cpuhp
