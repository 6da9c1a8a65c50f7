// SPDX-License-Identifier: GPL-2.0
// The kinds of kernel-log problem a run watches for. The config names them
// (/health/kmsg stop lists), the kernel-log health source classifies into
// them and the report keys its counts by them.
#pragma once

#include <string_view>

namespace cpuhp {

// The kinds, in the order a message is classified (the first match wins:
// "BUG: soft lockup" is a soft lockup, not a BUG).
enum KmsgKind : int {
  kKmsgSoftLockup,
  kKmsgHardLockup,
  kKmsgRcuStall,
  kKmsgHungTask,
  kKmsgFailedOnline,
  kKmsgDidntDie,
  kKmsgOops,
  kKmsgBug,
  kKmsgWarning,
  kKmsgKinds
};
// "soft_lockup", "hard_lockup", "rcu_stall", "hung_task", "failed_online",
// "didnt_die", "oops", "bug", "warning": config and report keys.
const char* KmsgKindName(int kind);
int KmsgKindFromName(std::string_view name);  // -1 if unknown

}  // namespace cpuhp
