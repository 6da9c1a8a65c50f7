// SPDX-License-Identifier: GPL-2.0
#include "faults/faults.h"

#include <string.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "util/errno_name.h"

namespace cpuhp {
namespace {

constexpr size_t kMaxLogLines = 4000;  // kernel log lines kept for failures

std::string Cpu(int cpu) {
  return "cpu" + std::to_string(cpu);
}

void Erase(std::vector<int>* v, int x) {
  v->erase(std::remove(v->begin(), v->end(), x), v->end());
}

}  // namespace

bool FaultsWanted(const Config& cfg) {
  return cfg.faults.rate > 0 || cfg.pattern == Pattern::kFaultSweep;
}

FaultOptions FaultOptionsFrom(const Config& cfg, uint64_t seed) {
  FaultOptions o;
  o.sweep = cfg.pattern == Pattern::kFaultSweep;
  o.rate = cfg.faults.rate;
  o.offline = cfg.faults.direction != "online";
  o.online = cfg.faults.direction != "offline";
  o.states = cfg.faults.states;
  o.repeats = cfg.faults.repeats;
  o.seed = seed;
  o.stop_on_error = cfg.stop_on_error;
  o.allow_unsafe = cfg.faults.allow_unsafe;
  return o;
}

FaultInjector::FaultInjector(CpuControl* ctl, std::vector<int> cpus, FaultOptions opts)
    : ctl_(ctl), cpus_(std::move(cpus)), opts_(std::move(opts)), rng_(opts_.seed ^ 0xfa017ull) {}

FaultInjector::Start FaultInjector::Begin(const OnlineState& state, std::string* err) {
  std::string text;
  const std::string states_path = ctl_->Describe() + "/hotplug/states";
  if (int e = ctl_->ReadHotplugStates(&text); e != 0) {
    unavailable_ = states_path + ": cannot read: " + strerror(e);
    *err = unavailable_;
    return Start::kUnavailable;
  }
  if (!ParseHotplugStates(text, &table_)) {
    unavailable_ = states_path + ": no \"<number>: <name>\" line in it";
    *err = unavailable_;
    return Start::kUnavailable;
  }
  if (const int kick = table_.Number("cpu:kick_ap"); kick >= 0) {
    const int bringup = table_.Number("cpu:bringup");
    for (const auto& [n, name] : table_.by_number)
      if (n > kick && n <= bringup)
        unsafe_.push_back(n);
  }
  if (opts_.states.empty()) {
    for (const auto& [n, name] : table_.by_number)
      wanted_.push_back(n);
  } else {
    for (const std::string& name : opts_.states) {
      int n = table_.Number(name);
      if (n < 0) {
        *err = "/faults/states: no hotplug state named \"" + name + "\" in " + states_path;
        return Start::kBadInput;
      }
      if (opts_.online && !opts_.allow_unsafe &&
          std::find(unsafe_.begin(), unsafe_.end(), n) != unsafe_.end()) {
        *err = "/faults/states: \"" + name +
               "\" fails after cpu:kick_ap has started the CPU, and its rollback relies on the "
               "CPU being kicked again (this once left a CPU unable to come online until "
               "reboot): set /faults/allow_unsafe to true to inject it anyway";
        return Start::kBadInput;
      }
      wanted_.push_back(n);
    }
    std::sort(wanted_.begin(), wanted_.end());
    wanted_.erase(std::unique(wanted_.begin(), wanted_.end()), wanted_.end());
  }
  for (int cpu : cpus_) {
    int armed = -1;
    const std::string path = ctl_->Describe() + "/" + Cpu(cpu) + "/hotplug/fail";
    if (int e = ctl_->ReadFail(cpu, &armed); e != 0) {
      unavailable_ = path + ": cannot read: " + strerror(e);
      *err = unavailable_;
      return Start::kUnavailable;
    }
    if (armed != -1) {
      // Left by a run that died between arming and clearing (restore clears
      // it too), or by someone else: never run with it armed.
      cleared_at_start_.push_back(Cpu(cpu) + ": " + std::to_string(armed) + " (" +
                                  table_.Name(armed) + ")");
      int check = 0;
      if (int e = ctl_->WriteFail(cpu, -1);
          e != 0 || ctl_->ReadFail(cpu, &check) != 0 || check != -1) {
        *err = path + ": cannot clear state " + std::to_string(armed) +
               " left armed: " + ErrnoNameOrOk(e ? e : EIO);
        return Start::kFailed;
      }
    }
  }
  available_ = true;
  if (kmsg_) {
    std::string why;
    if (kmsg_->Open(&why)) {
      kmsg_status_ = "ok";
    } else {
      kmsg_status_ = why;
      kmsg_.reset();
    }
  }
  for (int cpu : cpus_) {
    const Direction d = state.IsOnline(cpu) ? Direction::kOffline : Direction::kOnline;
    if (Enabled(d) && !Probe(cpu, d, err))
      return Start::kFailed;
  }
  return Start::kOk;
}

bool FaultInjector::Probe(int cpu, Direction d, std::string* why) {
  Learned& l = learned(cpu, d);
  l.probed = true;
  for (int n : wanted_) {
    ++probes_;
    int e = ctl_->WriteFail(cpu, n);
    if (e != 0) {
      l.refused.emplace_back(n, e);
      continue;
    }
    l.armable.push_back(n);
    int check = 0;
    if (int ce = ctl_->WriteFail(cpu, -1);
        ce != 0 || ctl_->ReadFail(cpu, &check) != 0 || check != -1) {
      *why = ctl_->Describe() + "/" + Cpu(cpu) + "/hotplug/fail: cannot clear state " +
             std::to_string(n) + " after probing it: " + ErrnoNameOrOk(ce ? ce : EIO);
      return false;
    }
  }
  for (int n : l.armable) {
    if (d == Direction::kOnline && !opts_.allow_unsafe &&
        std::find(unsafe_.begin(), unsafe_.end(), n) != unsafe_.end())
      l.unsafe.push_back(n);
    else
      l.candidates.push_back(n);
  }
  if (opts_.sweep)
    for (int r = 0; r < opts_.repeats; ++r)
      l.queue.insert(l.queue.end(), l.candidates.begin(), l.candidates.end());
  return true;
}

bool FaultInjector::BeforeOp(const Operation& op, uint64_t index, OnlineState* state,
                             std::string* why) {
  if (!available_ || !Enabled(op.dir))
    return true;
  // Only a real move: the CPU is in the direction's starting state.
  if (state->IsOnline(op.cpu) != (op.dir == Direction::kOffline))
    return true;
  Learned& l = learned(op.cpu, op.dir);
  if (!l.probed && !Probe(op.cpu, op.dir, why))
    return false;
  int target = -1;
  if (opts_.sweep) {
    if (l.queue.empty())
      return true;
    target = l.queue.front();
    l.queue.pop_front();
  } else {
    const bool draw = rng_.Unit() < opts_.rate;
    if (!draw || l.candidates.empty())
      return true;
    target = l.candidates[rng_.Below(l.candidates.size())];
  }
  if (!Inject(op.cpu, op.dir, target, index, state, why))
    return false;
  if (!stop_why_.empty()) {
    *why = stop_why_;
    return false;
  }
  return true;
}

bool FaultInjector::Inject(int cpu, Direction d, int target, uint64_t index, OnlineState* s,
                           std::string* why) {
  const bool want_online = d == Direction::kOnline;
  Failure f;
  f.index = index;
  f.cpu = cpu;
  f.state = target;
  f.dir = d;
  std::string rerr;
  f.online_before = ctl_->ReadOnline(cpu, &rerr);
  if (ctl_->ReadHotplugState(cpu, &f.hp_before) != 0)
    f.hp_before = -1;
  DrainKmsg();
  const size_t mark = log_base_ + log_.size();

  if (ctl_->WriteFail(cpu, target) != 0) {
    // Armable when probed, refused now: not an injection. Never left armed.
    ++arm_refused_;
    ctl_->WriteFail(cpu, -1);
    return true;
  }
  FaultCounts& c = counts_[{target, d}];
  ++injected_;
  ++c.injected;
  f.err = ctl_->WriteOnline(cpu, want_online);
  int armed_after = -2;
  const int read_e = ctl_->ReadFail(cpu, &armed_after);
  // Always cleared, whatever the write did: an armed state that the next
  // operations would reach in a DEAD section makes the kernel WARN.
  int check = -2;
  const int clear_e = ctl_->WriteFail(cpu, -1);
  if (clear_e != 0 || ctl_->ReadFail(cpu, &check) != 0 || check != -1) {
    f.why = "hotplug/fail cannot be cleared: " + ErrnoNameOrOk(clear_e ? clear_e : EIO);
    *why = ctl_->Describe() + "/" + Cpu(cpu) + "/hotplug/fail: cannot clear state " +
           std::to_string(target) + ": " + ErrnoNameOrOk(clear_e ? clear_e : EIO);
    ++c.not_rolled_back;
    Fail(std::move(f));
    return false;
  }
  ++c.errnos[f.err];
  f.online_after = ctl_->ReadOnline(cpu, &rerr);
  if (ctl_->ReadHotplugState(cpu, &f.hp_after) != 0)
    f.hp_after = -1;
  DrainKmsg();
  const bool fired = read_e == 0 && armed_after == -1;
  const bool back = f.online_after == f.online_before && f.hp_after == f.hp_before &&
                    f.online_before >= 0 && f.hp_before >= 0;

  if (f.err == 0 && !fired) {
    // No callback of the state runs this way: learned, and the CPU goes back.
    ++c.not_reached;
    Learned& l = learned(cpu, d);
    Erase(&l.candidates, target);
    l.queue.erase(std::remove(l.queue.begin(), l.queue.end(), target), l.queue.end());
    const int undo = ctl_->WriteOnline(cpu, !want_online);
    const int now = ctl_->ReadOnline(cpu, &rerr);
    if (undo != 0 || now != static_cast<int>(!want_online)) {
      f.why =
          "fail not reached, and moving the CPU back failed: " + ErrnoNameOrOk(undo ? undo : EIO);
      f.kernel_log = LogAround(mark);
      if (now >= 0)
        s->Set(cpu, now == 1);
      Fail(std::move(f));
    }
    return true;
  }
  if (f.err != 0 && fired && back) {
    pending_[cpu] = Pending{target, d, index, mark};
    return true;
  }
  if (f.err == 0)
    f.why = "the armed state fired but the write reported success";
  else if (!fired)
    f.why = "the write failed (" + ErrnoNameOrOk(f.err) + ") without the armed state firing";
  else
    f.why = "not rolled back: online " + std::to_string(f.online_before) + " -> " +
            std::to_string(f.online_after) + ", hotplug/state " + std::to_string(f.hp_before) +
            " -> " + std::to_string(f.hp_after);
  f.kernel_log = LogAround(mark);
  ++c.not_rolled_back;
  if (f.online_after >= 0)
    s->Set(cpu, f.online_after == 1);
  Fail(std::move(f));
  return true;
}

bool FaultInjector::AfterOp(const OpRecord& rec, std::string* why) {
  auto it = pending_.find(rec.cpu);
  if (it == pending_.end())
    return true;
  Pending p = it->second;
  pending_.erase(it);
  FaultCounts& c = counts_[{p.state, p.dir}];
  if (rec.err == 0 && rec.readback_ok && rec.dir == p.dir) {
    ++c.rolled_back;
    return true;
  }
  ++c.not_rolled_back;
  DrainKmsg();
  Failure f;
  f.index = p.index;
  f.cpu = rec.cpu;
  f.state = p.state;
  f.dir = p.dir;
  f.err = EAGAIN;
  f.next_err = rec.err;
  f.why = "the next operation on " + Cpu(rec.cpu) + " (index " + std::to_string(rec.index) + ", " +
          std::string(DirectionName(rec.dir)) + ") " +
          (rec.err ? "failed: " + ErrnoNameOrOk(rec.err) : "read back the wrong value");
  f.kernel_log = LogAround(p.log_mark);
  Fail(std::move(f));
  if (!stop_why_.empty()) {
    *why = stop_why_;
    return false;
  }
  return true;
}

void FaultInjector::Fail(Failure f) {
  ++failed_;
  if (opts_.stop_on_error && stop_why_.empty())
    stop_why_ = "fault injection: " + Cpu(f.cpu) + " " + std::string(DirectionName(f.dir)) +
                " state " + std::to_string(f.state) + " (" + table_.Name(f.state) + "): " + f.why;
  if (failures_.size() < kMaxFailures)
    failures_.push_back(std::move(f));
  else
    ++failures_dropped_;
}

void FaultInjector::DrainKmsg() {
  if (!kmsg_)
    return;
  kbuf_.resize(16384);
  for (;;) {
    int e = 0;
    long n = kmsg_->Read(kbuf_.data(), kbuf_.size(), &e);
    if (n < 0) {
      if (e == EPIPE)
        continue;  // overwritten before we read them: go on with the oldest left
      break;       // EAGAIN: nothing new; anything else: stop for now
    }
    KmsgRecord rec;
    std::string perr;
    if (!ParseKmsgRecord(std::string_view(kbuf_.data(), static_cast<size_t>(n)), &rec, &perr))
      continue;
    char ts[32];
    snprintf(ts, sizeof(ts), "[%5" PRIu64 ".%06" PRIu64 "] ", rec.ts_us / 1000000,
             rec.ts_us % 1000000);
    log_.push_back(ts + rec.message);
    if (log_.size() > kMaxLogLines) {
      const size_t drop = log_.size() / 2;
      log_.erase(log_.begin(), log_.begin() + static_cast<long>(drop));
      log_base_ += drop;
    }
  }
}

std::vector<std::string> FaultInjector::LogAround(size_t mark) const {
  const size_t from = mark > kLogLinesBefore ? mark - kLogLinesBefore : 0;
  std::vector<std::string> out;
  for (size_t i = std::max(from, log_base_); i < log_base_ + log_.size(); ++i) {
    out.push_back(log_[i - log_base_]);
    if (out.size() >= 200)
      break;
  }
  return out;
}

bool FaultInjector::ClearAll(std::vector<std::string>* failures) {
  bool ok = true;
  for (int cpu : cpus_) {
    int check = -2;
    int e = ctl_->WriteFail(cpu, -1);
    if (e == 0)
      e = ctl_->ReadFail(cpu, &check);
    if (e != 0 || check != -1) {
      ok = false;
      failures->push_back(Cpu(cpu) + " hotplug/fail: " +
                          (e ? ErrnoNameOrOk(e) : "reads " + std::to_string(check) + " after -1"));
    }
  }
  return ok;
}

std::vector<std::string> ClearArmedFail(CpuControl* ctl, const std::vector<int>& cpus,
                                        std::vector<std::string>* cleared) {
  std::vector<std::string> failures;
  for (int cpu : cpus) {
    int armed = -1;
    int e = ctl->ReadFail(cpu, &armed);
    if (e == ENOENT)
      continue;  // no hotplug/fail here: nothing can be armed
    if (e == 0 && armed == -1)
      continue;
    int check = -2;
    int we = ctl->WriteFail(cpu, -1);
    if (we == 0 && ctl->ReadFail(cpu, &check) == 0 && check == -1) {
      if (e == 0)
        cleared->push_back(Cpu(cpu) + ": " + std::to_string(armed));
      continue;
    }
    failures.push_back(Cpu(cpu) + " hotplug/fail: " + ErrnoNameOrOk(we ? we : e ? e : EIO));
  }
  return failures;
}

bool FaultInjector::SweepPending(int cpu) const {
  for (Direction d : {Direction::kOffline, Direction::kOnline}) {
    if (!Enabled(d))
      continue;
    auto it = learned_.find({cpu, d});
    if (it == learned_.end() || !it->second.probed || !it->second.queue.empty())
      return true;
  }
  return false;
}

uint64_t FaultInjector::SweepBudget() const {
  // Each injection is one extra write before one scheduled operation; the
  // CPU needs at most two scheduled operations per injection plus a few to
  // reach and leave each direction's starting state.
  return 4 * (static_cast<uint64_t>(wanted_.size()) * static_cast<uint64_t>(opts_.repeats) + 4);
}

}  // namespace cpuhp
