// SPDX-License-Identifier: GPL-2.0
#include "sources/trace_convert.h"

#include <charconv>
#include <cstdio>
#include <fstream>
#include <map>
#include <system_error>
#include <tuple>
#include <unordered_set>

namespace cpuhp {

TraceEvent ToTraceEvent(const RawCpuhpEvent& e, std::string comm, std::string fun) {
  TraceEvent ev;
  ev.kind = e.kind;
  ev.pid = e.pid;
  ev.event_cpu = e.event_cpu;
  ev.ts_ns = e.ts_ns;
  ev.cpu = e.cpu;
  ev.idx = e.idx;
  ev.target = e.target;
  ev.ret = e.ret;
  ev.comm = std::move(comm);
  if (e.kind != TraceKind::kExit)
    ev.fun = std::move(fun);
  return ev;
}

std::unordered_map<uint64_t, std::string> CallbackNamesFromText(
    std::string_view text, const std::vector<RawCpuhpEvent>& events) {
  // Key: (event CPU, pid, hotplugged CPU, state, microsecond).
  std::map<std::tuple<int, int, int, int, uint64_t>, std::string> by_key;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    TraceEvent ev;
    if (line.empty() || line.front() == '#' || !ParseTraceLine(line, &ev) ||
        ev.kind == TraceKind::kExit || ev.kind == TraceKind::kLost)
      continue;
    by_key[{ev.event_cpu, ev.pid, ev.cpu, ev.idx, ev.ts_ns / 1000}] = ev.fun;
  }
  std::unordered_map<uint64_t, std::string> names;
  for (const RawCpuhpEvent& e : events) {
    if (e.kind == TraceKind::kExit || names.count(e.fun))
      continue;
    // The text prints the timestamp rounded to the microsecond (ns2usecs);
    // truncated is tried too.
    auto it = by_key.find({e.event_cpu, e.pid, e.cpu, e.idx, (e.ts_ns + 500) / 1000});
    if (it == by_key.end())
      it = by_key.find({e.event_cpu, e.pid, e.cpu, e.idx, e.ts_ns / 1000});
    if (it != by_key.end())
      names.emplace(e.fun, it->second);
  }
  return names;
}

bool NamesFromKallsyms(const std::vector<RawCpuhpEvent>& events,
                       std::unordered_map<uint64_t, std::string>* names) {
  std::unordered_map<uint64_t, std::string>& fun_names_ = *names;
  std::unordered_set<uint64_t> want;
  for (const RawCpuhpEvent& e : events)
    if (e.kind != TraceKind::kExit && !fun_names_.count(e.fun))
      want.insert(e.fun);
  if (want.empty())
    return false;
  std::ifstream f("/proc/kallsyms");
  std::string line;
  while (!want.empty() && std::getline(f, line)) {
    uint64_t addr = 0;
    auto [p, ec] = std::from_chars(line.data(), line.data() + line.size(), addr, 16);
    if (ec != std::errc() || !want.count(addr))
      continue;
    // "ffffffff81362e20 t cpuhp_kick_ap_work [module]"
    std::string_view rest(p, static_cast<size_t>(line.data() + line.size() - p));
    size_t b = rest.find_first_not_of(' ', rest.find(' ', 1));
    if (b == std::string_view::npos)
      continue;
    rest.remove_prefix(b);
    std::string name(rest.substr(0, rest.find_first_of(" \t")));
    fun_names_.emplace(addr, name);
    want.erase(addr);
  }
  for (uint64_t a : want) {
    char hex[24];
    std::snprintf(hex, sizeof(hex), "0x%llx", static_cast<unsigned long long>(a));
    fun_names_.emplace(a, hex);  // kallsyms hidden (kptr_restrict) or an unloaded module
  }
  return true;
}

}  // namespace cpuhp
