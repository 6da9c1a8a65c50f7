// SPDX-License-Identifier: GPL-2.0
// Running as a systemd service: structured journal logging (an spdlog sink
// with the fields CPU, OP, ERRNO, ITERATION) and sd_notify (READY=1,
// STATUS=, WATCHDOG=1). Outside systemd the sink is not installed and every
// notification is a no-op.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <spdlog/logger.h>

namespace cpuhp {

// $JOURNAL_STREAM or $INVOCATION_ID is set (systemd sets both for services).
bool UnderSystemd();

// Journal fields of the next log lines from this thread. -1 / null: absent.
struct LogFields {
  int cpu = -1;
  const char* op = nullptr;  // "offline" | "online"
  int err = -1;
  int64_t iteration = -1;
};

// Sets this thread's fields for its lifetime.
class ScopedLogFields {
 public:
  explicit ScopedLogFields(const LogFields& f);
  ~ScopedLogFields();
  ScopedLogFields(const ScopedLogFields&) = delete;
  ScopedLogFields& operator=(const ScopedLogFields&) = delete;

 private:
  LogFields saved_;
};
const LogFields& CurrentLogFields();

// The logger outside systemd: stderr, colour on a terminal, "name: level: msg".
// Thread-safe: the stuck-operation watchdog and the disturbance probes log
// while the main thread does.
std::shared_ptr<spdlog::logger> NewStderrLogger(const std::string& name);

// A logger writing to the journal with sd_journal_send: MESSAGE, PRIORITY,
// SYSLOG_IDENTIFIER and the current LogFields.
std::shared_ptr<spdlog::logger> NewJournalLogger(const std::string& name);
// The fields a journal line carries for the current thread (for tests):
// "CPU=1", "OP=offline", ...
std::vector<std::string> JournalFieldsForTest(const LogFields& f);

class Notifier {
 public:
  Notifier();
  void Ready() const;
  void Status(const std::string& text) const;
  // WATCHDOG=1 at most every watchdog_usec / 2; no-op without WATCHDOG_USEC.
  void WatchdogPing(uint64_t now_ns);
  void Stopping() const;
  uint64_t watchdog_usec() const { return watchdog_usec_; }

 private:
  uint64_t watchdog_usec_ = 0;
  uint64_t next_ping_ns_ = 0;
};

}  // namespace cpuhp
