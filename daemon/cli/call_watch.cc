// SPDX-License-Identifier: GPL-2.0
#include "cli/call_watch.h"

#include <unistd.h>

#include <cstdio>
#include <mutex>

#include <spdlog/spdlog.h>

#include "machine/hotplug_states.h"
#include "util/exit_codes.h"
#include "util/systemd_glue.h"

namespace cpuhp {

StuckWatchdog::StateReader StuckStateReader(CpuControl* backend) {
  struct Names {
    std::once_flag once;
    HotplugStates states;
  };
  auto names = std::make_shared<Names>();
  return [backend, names](int cpu, int* state, std::string* name) {
    std::call_once(names->once, [&] {
      std::string text;
      if (backend->ReadHotplugStates(&text) == 0)
        ParseHotplugStates(text, &names->states);
    });
    if (backend->ReadHotplugState(cpu, state) != 0)
      return false;
    *name = names->states.Name(*state);
    return true;
  };
}

std::unique_ptr<StuckWatchdog> StartCallWatchdog(InFlight* f, CpuControl* backend,
                                                 uint64_t timeout_ns, uint64_t give_up_ns,
                                                 const std::string& command,
                                                 std::function<std::string()> kept) {
  if (timeout_ns == 0)
    return nullptr;
  auto status = std::make_shared<Notifier>();
  auto w = std::make_unique<StuckWatchdog>(
      f, timeout_ns, [status](const std::string& line) { status->Status(line); });
  w->set_state_reader(StuckStateReader(backend));
  // Its own Notifier: the runner thread's rate-limits its pings apart.
  auto pinger = std::make_shared<Notifier>();
  w->set_keepalive([pinger] { pinger->WatchdogPing(MonotonicClock()->NowNs()); });
  w->set_give_up(give_up_ns, [status, command, kept](const std::string& line) {
    const std::string end = command + ": exiting with status " + std::to_string(kExitGaveUp) +
                            " without a report; " + kept();
    spdlog::error("{}", end);
    status->Status(line + "; " + end);
    spdlog::default_logger()->flush();
    std::fflush(nullptr);
    // The blocked thread cannot be unwound: end the process from here.
    _exit(kExitGaveUp);
  });
  w->Start();
  return w;
}

}  // namespace cpuhp
