// SPDX-License-Identifier: GPL-2.0
// cpuhp-stress: drive CPU hotplug, time every operation, report in JSON.
#include <signal.h>
#include <unistd.h>

#include <memory>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "cli/cli_main.h"
#include "run/progress.h"
#include "soak/soak.h"
#include "util/systemd_glue.h"

namespace {

volatile sig_atomic_t g_stop = 0;

void OnSignal(int sig) {
  g_stop = sig;
}

// SIGUSR1: an interim report now; SIGHUP: reopen the operation log.
void OnSoakSignal(int sig) {
  if (sig == SIGUSR1)
    cpuhp::GlobalSoakSignals().interim = 1;
  else
    cpuhp::GlobalSoakSignals().reopen = 1;
}

void InstallSignalHandlers() {
  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGQUIT})
    sigaction(sig, &sa, nullptr);
  sa.sa_handler = OnSoakSignal;
  for (int sig : {SIGUSR1, SIGHUP})
    sigaction(sig, &sa, nullptr);
}

// list, merge, compare and report put nothing back: a stop signal ends
// them as it ends any tool (one that came during start-up, now).
void DefaultStopSignals() {
  struct sigaction sa = {};
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGQUIT})
    sigaction(sig, &sa, nullptr);
  if (g_stop)
    raise(g_stop);
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything else: a SIGHUP or SIGUSR1 at start-up (logrotate's
  // postrotate, a monitor) is a request, not a kill, and a stop signal is
  // seen by the run; a closed stdout or stderr is an EPIPE on that write,
  // never a run killed with a CPU offline.
  signal(SIGPIPE, SIG_IGN);
  InstallSignalHandlers();
  // Thread-safe (the watchdog thread logs too); each message first clears
  // the progress line, if one is drawn.
  auto logger = std::make_shared<spdlog::logger>(
      "cpuhp-stress",
      cpuhp::NewProgressAwareSink(std::make_shared<spdlog::sinks::stderr_color_sink_mt>()));
  logger->set_pattern("%n: %^%l%$: %v");
  spdlog::set_default_logger(logger);
  // Under systemd: the journal, with CPU, OP, ERRNO, ITERATION fields.
  if (cpuhp::UnderSystemd())
    spdlog::set_default_logger(cpuhp::NewJournalLogger("cpuhp-stress"));

  return cpuhp::CliMain(argc, argv, &g_stop, DefaultStopSignals);
}
