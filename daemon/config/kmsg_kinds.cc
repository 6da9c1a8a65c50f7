// SPDX-License-Identifier: GPL-2.0
#include "config/kmsg_kinds.h"

namespace cpuhp {
namespace {

constexpr const char* kKindNames[kKmsgKinds] = {
    "soft_lockup", "hard_lockup", "rcu_stall", "hung_task", "failed_online",
    "didnt_die",   "oops",        "bug",       "warning",
};

}  // namespace

const char* KmsgKindName(int kind) {
  return kind >= 0 && kind < kKmsgKinds ? kKindNames[kind] : "unknown";
}

int KmsgKindFromName(std::string_view name) {
  for (int k = 0; k < kKmsgKinds; ++k)
    if (name == kKindNames[k])
      return k;
  return -1;
}

}  // namespace cpuhp
