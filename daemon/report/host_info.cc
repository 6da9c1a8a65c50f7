// SPDX-License-Identifier: GPL-2.0
// CollectHostInfo: the facts a reader needs to compare two reports (kernel,
// command line, CPU model, CPU counts). Every source may be missing (a
// container without /proc, an architecture without "model name"): a missing
// fact is "unknown" or null, never an error, because the measurements are
// still worth having.
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "report/report.h"
#include "util/cpu_list.h"

namespace cpuhp {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

// The value of the first "key<tabs> : value" line in /proc/cpuinfo text whose
// key is exactly `key`; empty when there is none.
std::string CpuinfoField(std::string_view cpuinfo, std::string_view key) {
  size_t pos = 0;
  while (pos < cpuinfo.size()) {
    size_t eol = cpuinfo.find('\n', pos);
    if (eol == std::string_view::npos)
      eol = cpuinfo.size();
    std::string_view line = cpuinfo.substr(pos, eol - pos);
    pos = eol + 1;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || Trim(line.substr(0, colon)) != key)
      continue;
    return std::string(Trim(line.substr(colon + 1)));
  }
  return "";
}

}  // namespace

namespace internal {

// The CPU model as each architecture spells it: "model name" on x86 (and
// 32-bit arm), "cpu" on POWER ("POWER9 (raw), altivec supported"),
// "Hardware" on older arm kernels, and only the implementer and part numbers
// on arm64. Declared in report_test.cc, which feeds it each format.
std::string CpuModelFromCpuinfo(std::string_view cpuinfo) {
  for (const char* key : {"model name", "cpu", "Hardware"}) {
    std::string v = CpuinfoField(cpuinfo, key);
    if (!v.empty())
      return v;
  }
  std::string implementer = CpuinfoField(cpuinfo, "CPU implementer");
  std::string part = CpuinfoField(cpuinfo, "CPU part");
  if (!implementer.empty() && !part.empty())
    return "CPU implementer " + implementer + " part " + part;
  return "unknown";
}

}  // namespace internal

namespace {

// Whole file; false when it cannot be opened. /proc files report size 0, so
// read to the end rather than by stat size.
bool ReadWholeFile(const char* path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad())
    return false;
  *out = ss.str();
  return true;
}

// The trimmed content of a one-line file, or null when it is unreadable.
nlohmann::json ReadLineOrNull(const char* path) {
  std::string s;
  if (!ReadWholeFile(path, &s))
    return nullptr;
  return std::string(Trim(s));
}

nlohmann::json ListOrNull(bool has_file, const std::vector<int>& cpus) {
  return has_file ? nlohmann::json(FormatCpuList(cpus)) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json CollectHostInfo(const Topology& topo) {
  nlohmann::json host;
  struct utsname u;
  if (uname(&u) == 0) {
    host["kernel_release"] = u.release;
    host["kernel_version"] = u.version;
    host["arch"] = u.machine;
    host["hostname"] = u.nodename;
  } else {
    for (const char* k : {"kernel_release", "kernel_version", "arch", "hostname"})
      host[k] = "unknown";
  }
  host["kernel_cmdline"] = ReadLineOrNull("/proc/cmdline");
  std::string cpuinfo;
  host["cpu_model"] = ReadWholeFile("/proc/cpuinfo", &cpuinfo)
                          ? internal::CpuModelFromCpuinfo(cpuinfo)
                          : std::string("unknown");
  host["boot_id"] = ReadLineOrNull("/proc/sys/kernel/random/boot_id");
  host["cpus"] = {
      {"present", topo.present.size()},
      {"possible", topo.possible.size()},
      {"online_at_start", topo.online.size()},
      {"hotpluggable", topo.hotpluggable.size()},
      {"present_list", FormatCpuList(topo.present)},
      {"isolated", ListOrNull(topo.has_isolated_file, topo.isolated)},
      {"nohz_full", ListOrNull(topo.has_nohz_full_file, topo.nohz_full)},
  };
  return host;
}

}  // namespace cpuhp
