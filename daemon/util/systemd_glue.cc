// SPDX-License-Identifier: GPL-2.0
#include "util/systemd_glue.h"

#include <stdlib.h>
#include <sys/uio.h>
#include <syslog.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>

#include <mutex>
#include <vector>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

namespace cpuhp {
namespace {

thread_local LogFields t_fields;

int Priority(spdlog::level::level_enum l) {
  switch (l) {
    case spdlog::level::critical:
      return LOG_CRIT;
    case spdlog::level::err:
      return LOG_ERR;
    case spdlog::level::warn:
      return LOG_WARNING;
    case spdlog::level::info:
      return LOG_INFO;
    default:
      return LOG_DEBUG;
  }
}

class JournalSink : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    std::vector<std::string> fields;
    fields.push_back("MESSAGE=" + std::string(msg.payload.data(), msg.payload.size()));
    fields.push_back("PRIORITY=" + std::to_string(Priority(msg.level)));
    fields.push_back("SYSLOG_IDENTIFIER=cpuhp-stress");
    for (std::string& f : JournalFieldsForTest(t_fields))
      fields.push_back(std::move(f));
    std::vector<iovec> iov;
    for (std::string& f : fields)
      iov.push_back({f.data(), f.size()});
    sd_journal_sendv(iov.data(), static_cast<int>(iov.size()));
  }
  void flush_() override {}
};

}  // namespace

bool UnderSystemd() {
  return getenv("JOURNAL_STREAM") != nullptr || getenv("INVOCATION_ID") != nullptr;
}

ScopedLogFields::ScopedLogFields(const LogFields& f) : saved_(t_fields) {
  t_fields = f;
}
ScopedLogFields::~ScopedLogFields() {
  t_fields = saved_;
}
const LogFields& CurrentLogFields() {
  return t_fields;
}

std::vector<std::string> JournalFieldsForTest(const LogFields& f) {
  std::vector<std::string> out;
  if (f.cpu >= 0)
    out.push_back("CPU=" + std::to_string(f.cpu));
  if (f.op)
    out.push_back(std::string("OP=") + f.op);
  if (f.err >= 0)
    out.push_back("ERRNO=" + std::to_string(f.err));
  if (f.iteration >= 0)
    out.push_back("ITERATION=" + std::to_string(f.iteration));
  return out;
}

std::shared_ptr<spdlog::logger> NewStderrLogger(const std::string& name) {
  auto logger = std::make_shared<spdlog::logger>(
      name, std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  logger->set_pattern("%n: %^%l%$: %v");
  return logger;
}

std::shared_ptr<spdlog::logger> NewJournalLogger(const std::string& name) {
  return std::make_shared<spdlog::logger>(name, std::make_shared<JournalSink>());
}

Notifier::Notifier() {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) > 0)
    watchdog_usec_ = usec;
}

void Notifier::Ready() const {
  sd_notify(0, "READY=1");
}

void Notifier::Status(const std::string& text) const {
  sd_notify(0, ("STATUS=" + text).c_str());
}

void Notifier::Stopping() const {
  sd_notify(0, "STOPPING=1");
}

void Notifier::WatchdogPing(uint64_t now_ns) {
  if (!watchdog_usec_ || now_ns < next_ping_ns_)
    return;
  sd_notify(0, "WATCHDOG=1");
  next_ping_ns_ = now_ns + watchdog_usec_ * 1000 / 2;
}

}  // namespace cpuhp
