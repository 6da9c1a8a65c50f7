// SPDX-License-Identifier: GPL-2.0
#include "util/errno_name.h"

#include <string.h>

namespace cpuhp {

std::string ErrnoName(int err) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
  // strerrorname_np is thread-safe and returns NULL for unknown numbers.
  if (const char* name = strerrorname_np(err)) {
    return name;
  }
#endif
  return "E" + std::to_string(err);
}

std::string ErrnoNameOrOk(int err) {
  return err == 0 ? "ok" : ErrnoName(err);
}

}  // namespace cpuhp
