// SPDX-License-Identifier: GPL-2.0
#include "run/runner.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

namespace cpuhp {

uint64_t Runner::elapsed_ns() const {
  return elapsed_before_ns_ + (running_ ? MonotonicClock()->NowNs() : ended_ns_) - started_ns_;
}

uint64_t Runner::duration_elapsed_ns() const {
  return limits_.duration_clock ? limits_.duration_clock->NowNs() - limits_.duration_zero_ns
                                : elapsed_ns();
}

bool Runner::SourceWantsStop(RunOutcome* out) {
  std::string why;
  for (TimingSource* s : sources_) {
    if (s->WantsStop(&why)) {
      out->stop_reason = "error";
      out->message = s->name() + ": " + why;
      return true;
    }
  }
  return false;
}

bool Runner::CpuLost(const OpRecord& rec, RunOutcome* out) {
  if (!limits_.lost_cpu_after || rec.dir != Direction::kOnline || rec.smt_control)
    return false;
  uint32_t& n = failed_onlines_[static_cast<size_t>(rec.cpu)];
  n = state_.IsOnline(rec.cpu) ? 0 : n + 1;
  if (n < limits_.lost_cpu_after)
    return false;
  out->stop_reason = "error";
  out->message = "cpu" + std::to_string(rec.cpu) + " lost: " + std::to_string(n) +
                 " online writes in a row left it offline (last: " +
                 (rec.err ? std::string(strerror(rec.err)) : std::string("wrote 1, reads 0")) +
                 "); see the kernel log";
  return true;
}

void Runner::WriteOnline(const Operation& op, OpRecord* rec) {
  Clock* clock = ctl_->clock();
  const bool want_online = op.dir == Direction::kOnline;
  rec->start_ns = clock->NowNs();
  rec->err = ctl_->WriteOnline(op.cpu, want_online);
  rec->duration_ns = clock->NowNs() - rec->start_ns;

  // The file must read back the new value after a successful write and the
  // old one after a failed write; what it reads is the truth from here on.
  const bool was_online = state_.IsOnline(op.cpu);
  const bool expected = rec->err == 0 ? want_online : was_online;
  std::string err;
  const int now_online = ctl_->ReadOnline(op.cpu, &err);
  rec->readback_ok = now_online == static_cast<int>(expected);
  state_.Set(op.cpu, now_online >= 0 ? now_online == 1 : expected);
  rec->cpus_changed = state_.IsOnline(op.cpu) != was_online;
}

void Runner::WriteSmtControl(const Operation& op, OpRecord* rec) {
  Clock* clock = ctl_->clock();
  rec->start_ns = clock->NowNs();
  rec->err = ctl_->WriteSmtControl(*op.smt_mode);
  rec->duration_ns = clock->NowNs() - rec->start_ns;

  // The kernel moved any number of CPUs (some, on a failed write: it stops
  // at the first CPU that refuses): every online file is read again, and
  // the mask must be the one the mode implies after a successful write.
  rec->readback_ok = true;
  std::string err;
  if (online_files_.empty())  // the CPUs with an online file: asked once
    for (size_t cpu = 0; cpu < state_.online.size(); ++cpu)
      if (ctl_->HasOnlineFile(static_cast<int>(cpu)))
        online_files_.push_back(static_cast<int>(cpu));
  for (const int c : online_files_) {
    const bool was_online = state_.IsOnline(c);
    const int now_online = ctl_->ReadOnline(c, &err);
    if (now_online < 0) {
      rec->readback_ok = false;
      continue;
    }
    state_.Set(c, now_online == 1);
    rec->cpus_changed += state_.IsOnline(c) != was_online;
  }
  if (rec->err == 0 && op.expect_online && op.expect_online->size() == state_.online.size())
    rec->readback_ok = rec->readback_ok && *op.expect_online == state_.online;
}

RunOutcome Runner::Run(const volatile sig_atomic_t* stop, const std::function<void()>& tick) {
  RunOutcome out;
  Clock* wall = MonotonicClock();
  const uint64_t cpu_start_ns = CpuTimeNs(/*thread=*/false);
  const uint64_t started_ns = wall->NowNs();
  started_ns_ = started_ns;
  running_ = true;
  uint64_t next_tick_ns = started_ns;
  std::string err;

  failed_onlines_.assign(state_.online.size(), 0);
  const uint64_t first_index = index_;
  for (uint64_t index = first_index;; ++index) {
    index_ = index;
    if (*stop) {
      out.stop_reason = "signal";
      out.message = strsignal(*stop);
      break;
    }
    if (limits_.iterations && index >= limits_.iterations) {
      out.stop_reason = "iterations";
      break;
    }
    const uint64_t now_ns = wall->NowNs();
    const uint64_t used_ns = limits_.duration_clock
                                 ? limits_.duration_clock->NowNs() - limits_.duration_zero_ns
                                 : elapsed_before_ns_ + now_ns - started_ns;
    if (limits_.duration_ns && used_ns >= limits_.duration_ns) {
      out.stop_reason = "duration";
      break;
    }
    if (tick && now_ns >= next_tick_ns) {
      tick();
      next_tick_ns = now_ns + 100000000ull;
    }
    std::optional<Operation> op = schedule_->Next(state_);
    if (!op) {
      out.stop_reason = schedule_->error().empty() ? "schedule_complete" : "error";
      out.message = schedule_->error();
      break;
    }

    OpRecord rec;
    if (hook_) {
      const uint64_t injected = hook_->injected();
      // On the control's clock, as the switch's span (the sim's is modeled).
      const uint64_t hook_start = ctl_->clock()->NowNs();
      if (!hook_->BeforeOp(*op, index, &state_, &err)) {
        out.stop_reason = "error";
        out.message = err;
        break;
      }
      rec.hook_ns = after_hook_ns_ + (ctl_->clock()->NowNs() - hook_start);
      rec.fault_injected = hook_->injected() != injected;
    }

    rec.index = index;
    rec.cpu = op->cpu;
    rec.dir = op->dir;
    rec.setup = op->setup;
    rec.group = op->group;
    rec.smt_control = op->smt_mode != nullptr;
    rec.online_before = state_.count;
    for (TimingSource* s : sources_)
      s->OpBegin(*op, index);
    // The control is a WatchedCpuControl in a run: it publishes the write
    // and the readback for the stuck-call watchdog; this says which op.
    if (in_flight_)
      in_flight_->index.store(index, std::memory_order_relaxed);
    if (rec.smt_control)
      WriteSmtControl(*op, &rec);
    else
      WriteOnline(*op, &rec);

    for (auto it = sources_.rbegin(); it != sources_.rend(); ++it)
      (*it)->OpEnd(rec);
    // A stop signal that interrupted the write (a lease-blocked open, say)
    // is the stop, not a failed operation: the readback above says where the
    // CPU is, and the operation is not counted (a resumed run does it again).
    if (rec.err == EINTR && *stop) {
      out.stop_reason = "signal";
      out.message = strsignal(*stop);
      break;
    }
    stats_->Add(rec);
    ++out.ops;
    if (rec.err != 0 || !rec.readback_ok) {
      if (first_errors_.size() < kMaxFirstErrors)
        first_errors_.push_back(rec);
      else
        ++first_errors_dropped_;
    }
    if (oplog_ && oplog_->is_open() && !oplog_->Append(rec, &err)) {
      out.stop_reason = "fatal";
      out.message = err;
      break;
    }
    if (hook_) {
      const uint64_t hook_start = ctl_->clock()->NowNs();
      if (!hook_->AfterOp(rec, &err)) {
        out.stop_reason = "error";
        out.message = err;
        break;
      }
      after_hook_ns_ = ctl_->clock()->NowNs() - hook_start;
    }
    if (SourceWantsStop(&out) || CpuLost(rec, &out))
      break;
    if (limits_.stop_on_error && (rec.err != 0 || !rec.readback_ok)) {
      out.stop_reason = "error";
      out.message = rec.smt_control
                        ? "smt/control \"" + *op->smt_mode + "\"" +
                              (rec.err ? ": write failed: " + std::string(strerror(rec.err))
                                       : ": the online mask is not the one the mode implies")
                        : "cpu" + std::to_string(rec.cpu) + " " +
                              std::string(DirectionName(rec.dir)) +
                              (rec.err ? ": write failed: " + std::string(strerror(rec.err))
                                       : ": online file reads back the wrong value");
      break;
    }
    if (limits_.interval_ns) {
      timespec ts = {static_cast<time_t>(limits_.interval_ns / 1000000000ull),
                     static_cast<long>(limits_.interval_ns % 1000000000ull)};
      clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, nullptr);
    }
  }
  if (in_flight_)
    in_flight_->index.store(InFlight::kNoIndex, std::memory_order_relaxed);
  index_ = first_index + out.ops;
  ended_ns_ = wall->NowNs();
  loop_cpu_ns_ = CpuTimeNs(/*thread=*/false) - cpu_start_ns;
  loop_ops_ = out.ops;
  running_ = false;
  if (tick)
    tick();
  return out;
}

}  // namespace cpuhp
