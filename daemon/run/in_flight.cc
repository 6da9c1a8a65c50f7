// SPDX-License-Identifier: GPL-2.0
#include "run/in_flight.h"

namespace cpuhp {

const char* SysfsCallName(SysfsCall c) {
  switch (c) {
    case SysfsCall::kNone:
      return "none";
    case SysfsCall::kOnlineWrite:
      return "online_write";
    case SysfsCall::kOnlineRead:
      return "online_read";
    case SysfsCall::kListRead:
      return "list_read";
    case SysfsCall::kHasOnline:
      return "online_stat";
    case SysfsCall::kFailWrite:
      return "fail_write";
    case SysfsCall::kFailRead:
      return "fail_read";
    case SysfsCall::kStateRead:
      return "state_read";
    case SysfsCall::kStatesRead:
      return "states_read";
  }
  return "unknown";
}

std::string DescribeCall(SysfsCall call, int cpu, bool online, const char* list) {
  const std::string c = "cpu" + std::to_string(cpu);
  switch (call) {
    case SysfsCall::kOnlineWrite:
      return c + (online ? " online" : " offline");
    case SysfsCall::kOnlineRead:
      return c + "/online read";
    case SysfsCall::kListRead:
      return std::string("the ") + (list ? list : "CPU") + " list read";
    case SysfsCall::kHasOnline:
      return c + "/online lookup";
    case SysfsCall::kFailWrite:
      return c + "/hotplug/fail write";
    case SysfsCall::kFailRead:
      return c + "/hotplug/fail read";
    case SysfsCall::kStateRead:
      return c + "/hotplug/state read";
    case SysfsCall::kStatesRead:
      return "hotplug/states read";
    case SysfsCall::kNone:
      break;
  }
  return "a sysfs call";
}

}  // namespace cpuhp
