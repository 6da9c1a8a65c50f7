// SPDX-License-Identifier: GPL-2.0
// For tests: a call that must not block on a FIFO. Where it does (as before
// issue 29 item 7), the test fails instead of hanging: the FIFO's other end is
// opened until the call returns.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>
#include <utility>

namespace cpuhp {

// Runs `call` on a thread. True if it returned within `limit`; false if it
// was still blocked (on `fifo`, presumably), after letting it go: a reader
// end is held (a blocked writer's write lands in the pipe) while writer ends
// come and go (a blocked reader reads end of file).
template <typename Call>
bool ReturnsWithin(const std::string& fifo, Call call,
                   std::chrono::milliseconds limit = std::chrono::milliseconds(3000)) {
  auto done = std::async(std::launch::async, std::move(call));
  if (done.wait_for(limit) == std::future_status::ready) {
    done.get();
    return true;
  }
  const int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  while (done.wait_for(std::chrono::milliseconds(10)) != std::future_status::ready) {
    const int writer = open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (writer >= 0)
      close(writer);
  }
  if (reader >= 0)
    close(reader);
  done.get();
  return false;
}

}  // namespace cpuhp
