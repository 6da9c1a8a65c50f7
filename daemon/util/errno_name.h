// SPDX-License-Identifier: GPL-2.0
// Symbolic errno names for reports: what a user greps for is "EBUSY", not
// "Device or resource busy".
#pragma once

#include <string>

namespace cpuhp {

// "EBUSY" for 16; "E<number>" (e.g. "E4095") when the C library has no name.
std::string ErrnoName(int err);
// "ok" for 0 (a call that succeeded), else ErrnoName(err).
std::string ErrnoNameOrOk(int err);

}  // namespace cpuhp
