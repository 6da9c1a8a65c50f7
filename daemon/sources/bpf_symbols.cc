// SPDX-License-Identifier: GPL-2.0
#include "sources/bpf_symbols.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace cpuhp {
namespace {

bool IsTextType(std::string_view t) {
  return t.size() == 1 && (t[0] == 't' || t[0] == 'T');
}

// A copy of the whole function the compiler made, as the module and
// kmod/cpuhp-probe-load accept: ".constprop.N", ".isra.N", ".llvm.N",
// chained. Not ".cold" (a block split off the function and entered by a
// jump: a kretprobe there would take a saved register for the return
// address) nor ".part.N" (a part of the function, called from it).
bool IsCopySuffix(std::string_view s) {
  while (!s.empty()) {
    size_t i = 0;
    for (std::string_view kind : {".constprop.", ".isra.", ".llvm."})
      if (s.substr(0, kind.size()) == kind) {
        i = kind.size();
        break;
      }
    const size_t digits = s.find_first_not_of("0123456789", i);
    const size_t end = digits == std::string_view::npos ? s.size() : digits;
    if (i == 0 || end == i)
      return false;
    s.remove_prefix(end);
  }
  return true;
}

// BpfPickSymbols over whole lines of kallsyms text, added to *out.
void PickLines(std::string_view kallsyms, BpfSymbols* out) {
  size_t pos = 0;
  while (pos < kallsyms.size()) {
    size_t end = kallsyms.find('\n', pos);
    if (end == std::string_view::npos)
      end = kallsyms.size();
    std::string_view line = kallsyms.substr(pos, end - pos);
    pos = end + 1;
    // "ADDRESS TYPE NAME" for the core kernel; a module's symbols end in
    // "\t[module]" and are not ours.
    const size_t a = line.find(' ');
    if (a == std::string_view::npos)
      continue;
    const size_t b = line.find(' ', a + 1);
    if (b == std::string_view::npos || !IsTextType(line.substr(a + 1, b - a - 1)))
      continue;
    std::string_view name = line.substr(b + 1);
    if (name.find_first_of("\t ") != std::string_view::npos)
      continue;
    const size_t dot = std::min(name.find('.'), name.size());
    const std::string_view base = name.substr(0, dot);
    if (!IsCopySuffix(name.substr(dot)))
      continue;
    for (uint32_t id = 0; id < CPUHP_PROBE_NR; ++id) {
      if (base != KmodProbeName(id))
        continue;
      auto& list = (*out)[id];
      if (list.size() < kBpfMaxSymbolsPerProbe &&
          std::find(list.begin(), list.end(), name) == list.end())
        list.emplace_back(name);
      break;
    }
  }
}

}  // namespace

BpfSymbols BpfPickSymbols(std::string_view kallsyms) {
  BpfSymbols out;
  PickLines(kallsyms, &out);
  return out;
}

bool BpfPickSymbolsFromFile(const std::string& path, BpfSymbols* out, std::string* err,
                            size_t piece) {
  *out = BpfSymbols{};
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *err = path + ": cannot read: " + std::strerror(errno);
    return false;
  }
  // A piece holds many whole lines (a kallsyms line is under 600 bytes);
  // the partial line at its end moves to the front for the next read.
  constexpr uint64_t kMaxBytes = uint64_t{256} << 20;
  std::string buf(std::max<size_t>(piece, 1), '\0');
  size_t have = 0;
  uint64_t total = 0;
  for (;;) {
    const ssize_t n = read(fd, buf.data() + have, buf.size() - have);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 || total + static_cast<uint64_t>(n) > kMaxBytes) {
      *err = path + ": " +
             (n < 0 ? std::string("cannot read: ") + std::strerror(errno)
                    : "too large (more than 256 MiB)");
      close(fd);
      return false;
    }
    if (n == 0)
      break;
    have += static_cast<size_t>(n);
    total += static_cast<uint64_t>(n);
    const size_t last = std::string_view(buf.data(), have).rfind('\n');
    if (last == std::string_view::npos) {
      if (have < buf.size())
        continue;
      *err = path + ": a line longer than " + std::to_string(buf.size()) +
             " bytes (not kallsyms text)";
      close(fd);
      return false;
    }
    PickLines(std::string_view(buf.data(), last + 1), out);
    have -= last + 1;
    std::memmove(buf.data(), buf.data() + last + 1, have);
  }
  close(fd);
  PickLines(std::string_view(buf.data(), have), out);  // a last line without its newline
  return true;
}

}  // namespace cpuhp
