// SPDX-License-Identifier: GPL-2.0
#include "run/in_flight.h"

#include <iterator>

namespace cpuhp {
namespace {

// Per SysfsCall, in enum order: its report name, and what follows "cpuN" in
// a STUCK line ("" for the calls that name no CPU, written out below).
struct CallText {
  const char* name;
  const char* after_cpu;
};
constexpr CallText kCalls[] = {
    {"none", ""},
    {"online_write", ""},  // "cpuN online" / "cpuN offline"
    {"online_read", "/online read"},
    {"list_read", ""},  // "the online list read"
    {"online_stat", "/online lookup"},
    {"fail_write", "/hotplug/fail write"},
    {"fail_read", "/hotplug/fail read"},
    {"state_read", "/hotplug/state read"},
    {"states_read", ""},  // "hotplug/states read"
    {"smt_read", ""},     // "smt/ read"
    {"smt_write", ""},    // "smt/control write"
    {"siblings_read", "/topology/thread_siblings_list read"},
};
static_assert(std::size(kCalls) == static_cast<size_t>(SysfsCall::kSiblingsRead) + 1);

}  // namespace

const char* SysfsCallName(SysfsCall c) {
  const auto i = static_cast<size_t>(c);
  return i < std::size(kCalls) ? kCalls[i].name : "unknown";
}

std::string DescribeCall(SysfsCall call, int cpu, bool online, const char* list) {
  const std::string c = "cpu" + std::to_string(cpu);
  switch (call) {
    case SysfsCall::kNone:
      return "a sysfs call";
    case SysfsCall::kOnlineWrite:
      return c + (online ? " online" : " offline");
    case SysfsCall::kListRead:
      return std::string("the ") + (list ? list : "CPU") + " list read";
    case SysfsCall::kStatesRead:
      return "hotplug/states read";
    case SysfsCall::kSmtRead:
      return "smt/ read";
    case SysfsCall::kSmtWrite:
      return "smt/control write";
    default:
      return c + kCalls[static_cast<size_t>(call)].after_cpu;
  }
}

}  // namespace cpuhp
