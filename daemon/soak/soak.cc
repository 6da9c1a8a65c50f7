// SPDX-License-Identifier: GPL-2.0
#include "soak/soak.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "faults/faults.h"
#include "report/report.h"
#include "util/file_util.h"
#include "util/json_file.h"

namespace cpuhp {
namespace {

constexpr uint64_t kStatusPeriodNs = 5000000000ull;

// "20261130T055102Z": a file-name-safe UTC stamp.
std::string FileStamp() {
  std::string s = FormatUtc(RealtimeNs());
  std::string out;
  for (char c : s)
    if (c != '-' && c != ':' && c != '.')
      out += c;
  return out;
}

// The keys where two identities differ: "iterations (here 1000, checkpoint 5000)".
std::string IdentityDiff(const nlohmann::json& here, const nlohmann::json& there) {
  std::string out;
  auto add = [&](const std::string& key, const nlohmann::json& a, const nlohmann::json& b) {
    out += (out.empty() ? "" : ", ") + key + " (here " + DumpJson(a) + ", checkpoint " +
           DumpJson(b) + ")";
  };
  for (auto it = here.begin(); it != here.end(); ++it) {
    auto t = there.find(it.key());
    if (t == there.end())
      add(it.key(), it.value(), nullptr);
    else if (*t != it.value())
      add(it.key(), it.value(), *t);
  }
  for (auto it = there.begin(); it != there.end(); ++it)
    if (!here.contains(it.key()))
      add(it.key(), nullptr, it.value());
  return out;
}

std::string Ms(uint64_t ns) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ns) / 1e6);
  return buf;
}

}  // namespace

SoakSignals& GlobalSoakSignals() {
  static SoakSignals s;
  return s;
}

std::string InterimReportPath(const std::string& report) {
  const size_t slash = report.rfind('/');
  const size_t dot = report.rfind('.');
  if (dot != std::string::npos && dot > (slash == std::string::npos ? 0 : slash + 1))
    return report.substr(0, dot) + ".interim" + report.substr(dot);
  return report + ".interim.json";
}

SoakSession::SoakSession(const Config& cfg, StateDir* state_dir, SimCpuControl* sim)
    : cfg_(cfg), state_dir_(state_dir), sim_(sim) {
  if (state_dir_)
    path_ = state_dir_->dir() + "/checkpoint.json";
}

SoakSession::~SoakSession() = default;

void SoakSession::Refuse(const std::string& why) {
  std::string err;
  std::string aside = MoveAside(path_, FileStamp(), &err);
  refused_.push_back(
      {{"reason", why}, {"moved_to", aside.empty() ? nlohmann::json() : nlohmann::json(aside)}});
  if (aside.empty())
    spdlog::error("checkpoint refused: {}; and {}", why, err);
  else
    spdlog::error("checkpoint refused: {}; moved aside to {}; starting a fresh run", why, aside);
}

bool SoakSession::Load(uint64_t* seed, std::string* err) {
  if (!state_dir_ || access(path_.c_str(), F_OK) != 0)
    return true;
  Checkpoint c;
  std::string why;
  if (cfg_.resume == "never") {
    Refuse(path_ + ": resume \"never\" (--fresh)");
  } else if (FaultsWanted(cfg_)) {
    // The injector's counts, failures and queue are not in the checkpoint:
    // a resumed fault run would report fewer injections and could exit 0
    // after a rollback that failed before the restart.
    Refuse(path_ + ": a fault-injection run is not resumed (its injections are not " +
           "checkpointed): started over");
  } else if (!ReadCheckpoint(path_, &c, &why)) {
    Refuse(why);
  } else if (const nlohmann::json here = RunIdentity(cfg_); c.identity != here) {
    Refuse(path_ + ": checkpoint of another run: " + IdentityDiff(here, c.identity));
  } else {
    resuming_ = true;
    ckpt_ = std::move(c);
    *seed = ckpt_.seed;
    nlohmann::json restart = {{"at", FormatUtc(RealtimeNs())},
                              {"previous_pid", ckpt_.pid},
                              {"checkpoint_written_at", ckpt_.written_at},
                              {"resumed_at_index", ckpt_.next_index}};
    if (!ckpt_.finished.is_null()) {
      restart["kind"] = "finished";
      restart["cause"] = "the run had ended (" + ckpt_.finished.value("stop_reason", "?") +
                         ") and was killed before its report was confirmed written: the report "
                         "is written from the checkpoint, no operation is redone";
    } else if (!ckpt_.stopped_by.empty()) {
      restart["kind"] = "stop";
      restart["cause"] = "stopped by " + ckpt_.stopped_by + " with a final checkpoint";
    } else if (ckpt_.boot_id != ReadBootId()) {
      restart["kind"] = "reboot";
      restart["cause"] = "the machine rebooted (boot id changed) since the last checkpoint";
    } else {
      restart["kind"] = "crash";
      restart["cause"] = "the previous process (pid " + std::to_string(ckpt_.pid) +
                         ") died without a final checkpoint: kill -9, crash, OOM kill or "
                         "service watchdog; operations after the checkpoint are redone";
    }
    spdlog::warn("resuming the run started at {} from {} (written {}): {} operations done; {}",
                 ckpt_.started_at, path_, ckpt_.written_at, ckpt_.next_index,
                 restart["cause"].get<std::string>());
    ckpt_.restarts.push_back(std::move(restart));
  }
  if (access(path_.c_str(), F_OK) == 0 && !resuming_) {
    *err = path_ + ": refused checkpoint could not be moved aside";
    return false;
  }
  return true;
}

bool SoakSession::Apply(Schedule* schedule, RunStats* stats, std::string* err) {
  if (!resuming_)
    return true;
  std::string why;
  bool ok = schedule->RestoreState(ckpt_.schedule, &why) && stats->StateFromJson(ckpt_.stats, &why);
  if (ok && (sim_ != nullptr) != !ckpt_.sim.is_null()) {
    why = "sim state present for the sysfs backend or missing for the sim backend";
    ok = false;
  }
  if (ok && sim_)
    ok = sim_->RestoreState(ckpt_.sim, &why);
  if (ok && stats->ops() != ckpt_.next_index) {
    why = "statistics hold " + std::to_string(stats->ops()) + " operations, next_index says " +
          std::to_string(ckpt_.next_index);
    ok = false;
  }
  if (!ok) {
    std::string aside = MoveAside(path_, FileStamp(), err);
    *err = path_ + ": corrupt checkpoint: " + why +
           (aside.empty() ? "" : "; moved aside to " + aside + "; run again to start fresh");
    return false;
  }
  // Free what the pieces now hold.
  ckpt_.stats = nullptr;
  ckpt_.schedule = nullptr;
  ckpt_.sim = nullptr;
  return true;
}

void SoakSession::Start(Runner* runner, const std::string& started_at, uint64_t seed) {
  if (resuming_) {
    runner->ResumeAt(ckpt_.next_index, ckpt_.elapsed_ns, ckpt_.first_errors,
                     ckpt_.first_errors_dropped);
    errors_logged_ = ckpt_.first_errors.size();
    ckpt_.first_errors.clear();
  } else {
    ckpt_.started_at = started_at;
  }
  ckpt_.identity = RunIdentity(cfg_);
  ckpt_.seed = seed;
  if (watchdog_) {
    watchdog_->set_on_stuck([this](const std::string& line) {
      std::lock_guard<std::mutex> l(status_mu_);
      notifier_.Status(last_status_ + "; " + line);
    });
    watchdog_->SetRecords(ckpt_.stuck, ckpt_.stuck_dropped);
  }
  const uint64_t now = MonotonicClock()->NowNs();
  // A resumed run checkpoints at its first tick: the restart is on disk at
  // once, so a crash loop counts every start, not only those that lived to a
  // periodic checkpoint.
  checkpoint_due_ = resuming_;
  next_checkpoint_ns_ = now + cfg_.checkpoint_interval_ns;
  next_interim_ns_ = now + cfg_.interim_interval_ns;
  notifier_.Ready();
}

std::string SoakSession::StatusLine(const Runner& runner, const RunStats& stats) const {
  const uint64_t ops = stats.ops();
  // The clock --duration counts: a sim run's simulated time, said so.
  const uint64_t elapsed = runner.duration_elapsed_ns();
  const char* sim = runner.duration_is_simulated() ? " simulated" : "";
  std::string s = "ops " + std::to_string(ops);
  if (const uint64_t limit = IterationLimit(cfg_))
    s += "/" + std::to_string(limit);
  if (cfg_.duration_ns)
    s += ", " + std::to_string(elapsed / 1000000000ull) + "/" +
         std::to_string(cfg_.duration_ns / 1000000000ull) + " s" + sim;
  if (elapsed > 0) {
    char rate[48];
    snprintf(rate, sizeof rate, ", %.0f ops/s%s",
             static_cast<double>(ops) / (static_cast<double>(elapsed) / 1e9), sim);
    s += rate;
  }
  s += ", p99 offline " + Ms(stats.by_direction(Direction::kOffline).PercentileNs(99)) +
       " ms, online " + Ms(stats.by_direction(Direction::kOnline).PercentileNs(99)) + " ms";
  s += ", errors " + std::to_string(stats.failed_ops() + stats.readback_mismatches());
  if (!ckpt_.restarts.empty())
    s += ", restarts " + std::to_string(ckpt_.restarts.size());
  return s;
}

bool SoakSession::WriteNow(Runner* runner, RunStats& stats, Schedule* schedule, OpLog* oplog,
                           const std::string& stopped_by) {
  if (!state_dir_)
    return true;
  std::string err;
  // The schedule takes in the last write on this machine, not on the one a
  // resume restores, and the switch table closes the switches it finished.
  schedule->Settle(runner->state());
  stats.CloseGroupsBefore(schedule->next_group());
  Checkpoint c;
  c.identity = ckpt_.identity;
  c.seed = ckpt_.seed;
  c.started_at = ckpt_.started_at;
  c.written_at = FormatUtc(RealtimeNs());
  c.boot_id = ReadBootId();
  c.pid = getpid();
  c.stopped_by = stopped_by;
  c.finished = ckpt_.finished;
  c.next_index = runner->next_index();
  c.elapsed_ns = runner->elapsed_ns();
  c.stats = stats.StateToJson();
  c.schedule = schedule->SaveState();
  c.sim = sim_ ? sim_->SaveState() : nlohmann::json();
  c.first_errors = runner->first_errors();
  c.first_errors_dropped = runner->first_errors_dropped();
  if (oplog && oplog->is_open()) {
    if (!oplog->Sync(&err))
      spdlog::error("{}", err);
    const OpLog::Position at = oplog->position();
    c.oplog_bytes = at.bytes;
    c.oplog_dev = at.dev;
    c.oplog_ino = at.ino;
  }
  c.restarts = ckpt_.restarts;
  c.stuck = watchdog_ ? watchdog_->Records() : nlohmann::json::array();
  c.stuck_dropped = watchdog_ ? watchdog_->dropped() : 0;
  if (!WriteCheckpoint(path_, c, &err)) {
    spdlog::error("checkpoint not written: {}", err);
    return false;
  }
  ++checkpoints_written_;
  last_written_at_ = c.written_at;
  return true;
}

void SoakSession::Tick(Runner* runner, RunStats& stats, Schedule* schedule, OpLog* oplog,
                       const std::function<nlohmann::json()>& report) {
  const uint64_t now = MonotonicClock()->NowNs();
  notifier_.WatchdogPing(now);
  SoakSignals& sig = GlobalSoakSignals();
  std::string err;
  if (sig.reopen) {
    sig.reopen = 0;
    if (oplog && oplog->is_open()) {
      if (oplog->Reopen(&err)) {
        spdlog::info("SIGHUP: operation log {} reopened", cfg_.oplog);
        // The checkpoint names the new file at once: a restart before the
        // next periodic one must not look for the rotated file.
        checkpoint_due_ = true;
      } else
        spdlog::error("SIGHUP: {}", err);
    }
  }
  // The first failed operations, with their journal fields.
  const auto& errors = runner->first_errors();
  for (; errors_logged_ < errors.size(); ++errors_logged_) {
    const OpRecord& r = errors[errors_logged_];
    ScopedLogFields f({r.cpu, r.dir == Direction::kOnline ? "online" : "offline", r.err,
                       static_cast<int64_t>(r.index)});
    spdlog::warn("op {}: cpu{} {} {}", r.index, r.cpu, DirectionName(r.dir),
                 r.err ? "failed: " + std::string(strerror(r.err))
                       : std::string("reads back the wrong value"));
  }
  if (now >= next_status_ns_) {
    std::string line = StatusLine(*runner, stats);
    notifier_.Status(line);
    std::lock_guard<std::mutex> l(status_mu_);
    last_status_ = std::move(line);
    next_status_ns_ = now + kStatusPeriodNs;
  }
  if (state_dir_ &&
      (checkpoint_due_ || (cfg_.checkpoint_interval_ns && now >= next_checkpoint_ns_))) {
    checkpoint_due_ = false;
    WriteNow(runner, stats, schedule, oplog, "");
    next_checkpoint_ns_ = MonotonicClock()->NowNs() + cfg_.checkpoint_interval_ns;
  }
  const bool periodic = cfg_.interim_interval_ns && now >= next_interim_ns_;
  if (sig.interim || periodic) {
    sig.interim = 0;
    if (periodic)
      next_interim_ns_ = now + cfg_.interim_interval_ns;
    const std::string path = InterimReportPath(cfg_.report);
    if (WriteFileAtomic(path, DumpJson(report(), 2) + "\n", &err)) {
      ++interim_written_;
      spdlog::info("interim report: {}", path);
    } else {
      spdlog::error("interim report: {}", err);
    }
  }
}

void SoakSession::Finish(const RunOutcome& outcome, Runner* runner, RunStats& stats,
                         Schedule* schedule, OpLog* oplog) {
  notifier_.Stopping();
  if (!state_dir_)
    return;
  if (outcome.stop_reason == "signal") {
    if (WriteNow(runner, stats, schedule, oplog, outcome.message))
      spdlog::info(
          "checkpoint {} kept: starting the same run again resumes it ({} of the target "
          "done)",
          path_, runner->next_index());
    return;
  }
  ckpt_.finished = {{"stop_reason", outcome.stop_reason}, {"message", outcome.message}};
  WriteNow(runner, stats, schedule, oplog, "");
}

RunOutcome SoakSession::finished_outcome() const {
  RunOutcome o;
  o.stop_reason = ckpt_.finished.value("stop_reason", "");
  o.message = ckpt_.finished.value("message", "");
  return o;
}

void SoakSession::Complete() {
  if (state_dir_ && unlink(path_.c_str()) != 0 && errno != ENOENT)
    spdlog::error("{}: unlink: {}", path_, strerror(errno));
}

nlohmann::json SoakSession::ReportJson() const {
  return {{"checkpoint",
           {{"path", state_dir_ ? nlohmann::json(path_) : nlohmann::json()},
            {"interval_ns", cfg_.checkpoint_interval_ns},
            {"written", checkpoints_written_},
            {"last_written_at",
             last_written_at_.empty() ? nlohmann::json() : nlohmann::json(last_written_at_)},
            {"resumed", resuming_},
            {"refused", refused_}}},
          {"restarts", ckpt_.restarts},
          {"stuck_operations", watchdog_ ? watchdog_->Records() : ckpt_.stuck},
          {"stuck_operations_dropped", watchdog_ ? watchdog_->dropped() : ckpt_.stuck_dropped},
          {"stuck_timeout_ns", cfg_.stuck_timeout_ns},
          {"interim_reports_written", interim_written_}};
}

}  // namespace cpuhp
