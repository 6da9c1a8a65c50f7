// SPDX-License-Identifier: GPL-2.0
// Long runs as a service: checkpoint and resume, interim reports, service
// status and watchdog pings, the stuck-operation watchdog. RunCommand owns a
// SoakSession and calls it at four points: Load (before the schedule's seed
// is used), Apply (pieces built, before the runner), Tick (from the runner's
// tick, between operations) and Finish (after the run).
//
// Resume: with resume "auto" (the default) a checkpoint in the state
// directory whose RunIdentity equals this run's is resumed; one for another
// config, a corrupt one or one of another version is refused, moved aside to
// checkpoint.json.rejected-<time>, and the run starts fresh. "never"
// (--fresh) moves any checkpoint aside. The operations done after the last
// checkpoint and before a crash are redone from the checkpoint's state, so
// the statistics count each operation index exactly once.
#pragma once

#include <csignal>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "machine/restore.h"
#include "machine/sim_cpu_control.h"
#include "run/oplog.h"
#include "run/runner.h"
#include "run/schedule.h"
#include "run/stuck_watchdog.h"
#include "soak/checkpoint.h"
#include "stats/run_stats.h"
#include "util/systemd_glue.h"

namespace cpuhp {

// Set by main's signal handlers: SIGUSR1 asks for an interim report now,
// SIGHUP for reopening the operation log.
struct SoakSignals {
  volatile sig_atomic_t interim = 0;
  volatile sig_atomic_t reopen = 0;
};
SoakSignals& GlobalSoakSignals();

// "<dir>/<stem>.interim.json" for "<dir>/<stem>.json" (or "<report>.interim.json").
std::string InterimReportPath(const std::string& report);

class SoakSession {
 public:
  // `cfg` as given (seed unresolved: a random seed is not part of the run's
  // identity). `state_dir` null: no checkpoints (sim without --state-dir).
  SoakSession(const Config& cfg, StateDir* state_dir, SimCpuControl* sim);
  ~SoakSession();

  // Reads the checkpoint, if any, and decides. On resume *seed becomes the
  // checkpoint's. false only when a refused checkpoint cannot be moved aside.
  bool Load(uint64_t* seed, std::string* err);
  bool resuming() const { return resuming_; }
  OpLog::Position oplog_position() const {
    return {ckpt_.oplog_bytes, ckpt_.oplog_dev, ckpt_.oplog_ino};
  }
  const std::string& started_at() const { return ckpt_.started_at; }

  // Restores schedule, statistics and the simulated machine. A checkpoint
  // with the right identity that a piece refuses is corrupt: moved aside,
  // false with *err.
  bool Apply(Schedule* schedule, RunStats* stats, std::string* err);
  // How the stuck-write watchdog reads a CPU's hotplug state (before Start).
  // The run's stuck-call watchdog (it watches from before the session to
  // after the mask is put back): Start gives it this session's STATUS line
  // and the checkpoint's records; checkpoints and the report carry its.
  void set_watchdog(StuckWatchdog* w) { watchdog_ = w; }
  // Restores the runner's position, starts the watchdog, says READY=1.
  void Start(Runner* runner, const std::string& started_at, uint64_t seed);

  // From the runner's tick. `report` builds an interim report.
  void Tick(Runner* runner, RunStats& stats, Schedule* schedule, OpLog* oplog,
            const std::function<nlohmann::json()>& report);
  // After the run: a final checkpoint, kept. Stopped by a signal, a restart
  // resumes the run; ended by itself, it is marked finished, and a restart
  // before Complete() writes the report from it without any operation.
  void Finish(const RunOutcome& outcome, Runner* runner, RunStats& stats, Schedule* schedule,
              OpLog* oplog);
  // The resumed checkpoint's run had already ended (Finish marked it): run
  // no operation, report this outcome.
  bool finished() const { return !ckpt_.finished.is_null(); }
  RunOutcome finished_outcome() const;
  // The report and the operation log are written and the CPUs are back: the
  // checkpoint goes, the run is complete.
  void Complete();

  // The report's "soak" section.
  nlohmann::json ReportJson() const;

  std::string StatusLine(const Runner& runner, const RunStats& stats) const;

 private:
  bool WriteNow(Runner* runner, RunStats& stats, Schedule* schedule, OpLog* oplog,
                const std::string& stopped_by);
  void Refuse(const std::string& why);

  Config cfg_;
  StateDir* state_dir_;
  SimCpuControl* sim_;
  std::string path_;
  Checkpoint ckpt_;
  bool resuming_ = false;
  nlohmann::json refused_ = nlohmann::json::array();
  uint64_t checkpoints_written_ = 0;
  std::string last_written_at_;
  uint64_t next_checkpoint_ns_ = 0;
  bool checkpoint_due_ = false;  // at the next tick: after a resume, after a log reopen
  uint64_t next_interim_ns_ = 0;
  uint64_t next_status_ns_ = 0;
  uint64_t interim_written_ = 0;
  size_t errors_logged_ = 0;
  Notifier notifier_;
  std::mutex status_mu_;  // the last progress STATUS, for the watchdog thread
  std::string last_status_;
  StuckWatchdog* watchdog_ = nullptr;
};

}  // namespace cpuhp
