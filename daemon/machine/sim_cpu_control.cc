// SPDX-License-Identifier: GPL-2.0
#include "machine/sim_cpu_control.h"

#include <errno.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "util/cpu_list.h"

namespace cpuhp {
namespace {

// The modeled hotplug state table: number, name, callbacks, section.
struct SimState {
  int number;
  const char* name;
  bool startup;   // has a startup callback (runs going online)
  bool teardown;  // has a teardown callback (runs going offline)
  bool atomic;    // STARTING/DYING section: never failable
};
constexpr int kSimBringupState = 83;        // CPUHP_BRINGUP_CPU
constexpr int kSimOnlineState = 236;        // CPUHP_ONLINE
constexpr int kSimStallOnlineState = 83;    // a stalled online waits in cpu:bringup
constexpr int kSimStallOfflineState = 148;  // a stalled offline in sched:waitempty
constexpr SimState kSimStates[] = {
    {0, "offline", false, false, false},
    {1, "threads:prepare", true, true, false},
    {10, "slub:dead", false, true, false},
    {35, "random:prepare", true, false, false},
    {36, "workqueue:prepare", true, true, false},
    {58, "timers:prepare", true, true, false},
    {62, "fork:vm_stack_cache", false, true, false},
    {82, "cpu:kick_ap", true, false, false},
    {83, "cpu:bringup", true, false, false},
    {84, "idle:dead", false, true, true},
    {85, "ap:offline", true, true, true},
    {87, "sched:starting", true, true, true},
    {88, "RCU/tree:dying", false, true, true},
    {140, "tick:dying", false, true, true},
    {143, "ap:online", false, false, true},
    {144, "cpu:teardown", false, true, false},
    {148, "sched:waitempty", false, true, false},
    {149, "smpboot/threads:online", true, true, false},
    {150, "irq/affinity:online", true, false, false},
    {188, "random:online", true, false, false},
    {193, "mm/vmstat:online", true, true, false},
    {235, "sched:active", true, true, false},
    {236, "online", false, false, false},
};

const SimState* FindSimState(int number) {
  for (const SimState& s : kSimStates)
    if (s.number == number)
      return &s;
  return nullptr;
}

}  // namespace

SimCpuControl::SimCpuControl(const SimConfig& cfg, uint64_t seed)
    : cfg_(cfg),
      rng_(seed ^ 0x53494dull),
      online_(static_cast<size_t>(cfg.cpus), 1),
      online_count_(cfg.cpus),
      fail_(static_cast<size_t>(cfg.cpus), -1),
      hp_state_(static_cast<size_t>(cfg.cpus)),
      broken_rollback_(cfg.broken_rollback_state),
      smt_control_(cfg.threads_per_core > 1 ? "on" : "notsupported"),
      smt_threads_(cfg.threads_per_core) {
  for (std::atomic<int>& hp : hp_state_)
    hp.store(kSimOnlineState, std::memory_order_relaxed);
}

std::string SimCpuControl::Describe() const {
  return "sim:" + std::to_string(cpus());
}

bool SimCpuControl::ReadList(const std::string& name, std::vector<int>* cpus_out, std::string* err,
                             int* err_no) {
  cpus_out->clear();
  if (name == "present" || name == "possible") {
    for (int c = 0; c < cpus(); ++c)
      cpus_out->push_back(c);
  } else if (name == "online" || name == "offline") {
    for (int c = 0; c < cpus(); ++c)
      if (online_[static_cast<size_t>(c)] == (name == "online"))
        cpus_out->push_back(c);
  } else if (name == "isolated") {
    // none
  } else if (name == "nohz_full") {
    *cpus_out = nohz_full_;
  } else {
    if (err_no)
      *err_no = ENOENT;
    *err = Describe() + "/" + name + ": cannot read: No such file or directory";
    return false;
  }
  return true;
}

int SimCpuControl::ReadOnline(int cpu, std::string* err) {
  if (!HasOnlineFile(cpu)) {
    *err = Describe() + "/cpu" + std::to_string(cpu) + "/online: open: No such file or directory";
    return -1;
  }
  return online_[static_cast<size_t>(cpu)];
}

void SimCpuControl::SetOnline(int cpu, bool online) {
  hp_state_[static_cast<size_t>(cpu)].store(online ? kSimOnlineState : 0,
                                            std::memory_order_relaxed);
  uint8_t& s = online_[static_cast<size_t>(cpu)];
  if (s != online) {
    online_count_ += online ? 1 : -1;
    s = online;
  }
}

int SimCpuControl::WriteOnline(int cpu, bool online) {
  ++writes_;
  if (!HasOnlineFile(cpu))
    return ENOENT;
  uint8_t& s = online_[static_cast<size_t>(cpu)];
  const uint64_t ns = ModelNs(online);
  if (s == online) {
    clock_.Advance(500);  // the kernel returns at once when nothing changes
    return 0;
  }
  // cpu_smt_allowed(): a thread smt/control excludes stays offline.
  if (online && ThreadOf(cpu) >= smt_threads_) {
    clock_.Advance(500);
    return EPERM;
  }
  clock_.Advance(ns);
  std::atomic<int>& hp = hp_state_[static_cast<size_t>(cpu)];
  if (cfg_.stall_every && writes_ % cfg_.stall_every == 0) {
    // A write stuck "in the kernel": really blocks, for the stuck-operation
    // watchdog to see, half-way through the state machine where real ones
    // hang: going offline waiting for tasks to leave (sched:waitempty),
    // going online waiting for the AP to report alive (cpu:bringup).
    const int before = hp.load(std::memory_order_relaxed);
    hp.store(online ? kSimStallOnlineState : kSimStallOfflineState, std::memory_order_relaxed);
    timespec ts = {static_cast<time_t>(cfg_.stall_ns / 1000000000ull),
                   static_cast<long>(cfg_.stall_ns % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR) {
    }
    clock_.Advance(cfg_.stall_ns);
    hp.store(before, std::memory_order_relaxed);
  }
  if (!online && online_count_ == 1)
    return EBUSY;
  int& fail = fail_[static_cast<size_t>(cpu)];
  if (const SimState* armed = fail >= 0 ? FindSimState(fail) : nullptr;
      armed && (online ? armed->startup : armed->teardown)) {
    fail = -1;  // one-shot
    ++fires_;
    if (armed->number == broken_rollback_)
      hp.store(armed->number, std::memory_order_relaxed);  // stuck half-way
    return EAGAIN;
  }
  for (auto it = faults_.begin(); it != faults_.end(); ++it) {
    if (it->cpu == -1 || it->cpu == cpu) {
      Fault f = *it;
      faults_.erase(it);
      return f.readback ? 0 : f.err;
    }
  }
  if (cfg_.error_rate > 0 && rng_.Unit() < cfg_.error_rate)
    return EBUSY;
  SetOnline(cpu, online);  // and its hotplug state
  return 0;
}

uint64_t SimCpuControl::ModelNs(bool online) {
  // Grows linearly with the online count, +- jitter.
  const uint64_t base = online ? cfg_.online_base_ns : cfg_.offline_base_ns;
  const uint64_t per_cpu = online ? cfg_.online_per_cpu_ns : cfg_.offline_per_cpu_ns;
  double ns = static_cast<double>(base + per_cpu * static_cast<uint64_t>(online_count_));
  ns *= 1.0 + cfg_.jitter * (2.0 * rng_.Unit() - 1.0);
  return static_cast<uint64_t>(std::max(1.0, ns));
}

int SimCpuControl::ReadSmtFile(const std::string& name, std::string* text, std::string* err) {
  if (name == "control") {
    *text = smt_control_;
    return 0;
  }
  if (name == "active") {
    bool active = false;
    for (int c = 0; c < cpus() && !active; ++c)
      active = ThreadOf(c) > 0 && online_[static_cast<size_t>(c)];
    *text = active ? "1" : "0";
    return 0;
  }
  *err = Describe() + "/smt/" + name + ": cannot read: No such file or directory";
  return ENOENT;
}

int SimCpuControl::ReadThreadSiblings(int cpu, std::vector<int>* cpus_out, std::string* err) {
  if (cpu < 0 || cpu >= cpus() || !online_[static_cast<size_t>(cpu)]) {
    *err = Describe() + "/cpu" + std::to_string(cpu) +
           "/topology/thread_siblings_list: cannot read: No such file or directory";
    return ENOENT;
  }
  cpus_out->clear();
  for (int c = cpu - ThreadOf(cpu); c < cpus() && c < cpu - ThreadOf(cpu) + cfg_.threads_per_core;
       ++c)
    cpus_out->push_back(c);
  return 0;
}

// kernel/cpu.c control_store(): "off" or fewer threads take every excluded
// thread down (cpuhp_smt_disable), "on" or more bring the allowed threads of
// cores whose first thread is online up (cpuhp_smt_enable), one CPU after
// another inside this write.
int SimCpuControl::WriteSmtControl(const std::string& mode) {
  ++writes_;
  const int t = cfg_.threads_per_core;
  if (t < 2)
    return ENODEV;  // CPU_SMT_NOT_SUPPORTED
  int threads = 0;
  if (mode == "on")
    threads = t;
  else if (mode == "off")
    threads = 1;
  else if (mode.size() == 1 && mode[0] >= '1' && mode[0] - '0' <= t)
    threads = mode[0] - '0';
  else
    return EINVAL;
  for (int c = 0; c < cpus(); ++c) {
    const bool want = ThreadOf(c) < threads;
    const bool core_up = online_[static_cast<size_t>(c - ThreadOf(c))] != 0;
    if (online_[static_cast<size_t>(c)] == want || (want && !core_up))
      continue;
    clock_.Advance(ModelNs(want));
    SetOnline(c, want);
  }
  smt_threads_ = threads;
  smt_control_ = mode == "off" ? "off" : threads == t ? "on" : std::to_string(threads);
  return 0;
}

int SimCpuControl::WriteFail(int cpu, int state) {
  if (cpu < 0 || cpu >= cpus())
    return ENOENT;
  if (state == -1) {
    fail_[static_cast<size_t>(cpu)] = -1;
    return 0;
  }
  const SimState* s = FindSimState(state);
  // fail_store: out of range, STARTING/DYING, PREPARE-section (DEAD
  // callbacks) while the CPU is up, or no callback at all.
  if (!s || s->atomic ||
      (state <= kSimBringupState &&
       hp_state_[static_cast<size_t>(cpu)].load(std::memory_order_relaxed) > kSimBringupState) ||
      (!s->startup && !s->teardown))
    return EINVAL;
  fail_[static_cast<size_t>(cpu)] = state;
  return 0;
}

int SimCpuControl::ReadFail(int cpu, int* state) {
  if (cpu < 0 || cpu >= cpus())
    return ENOENT;
  *state = fail_[static_cast<size_t>(cpu)];
  return 0;
}

int SimCpuControl::ReadHotplugState(int cpu, int* state) {
  if (cpu < 0 || cpu >= cpus())
    return ENOENT;
  *state = hp_state_[static_cast<size_t>(cpu)].load(std::memory_order_relaxed);
  return 0;
}

int SimCpuControl::ReadHotplugStates(std::string* text) {
  text->clear();
  char line[64];
  for (const SimState& s : kSimStates) {
    snprintf(line, sizeof(line), "%3d: %s\n", s.number, s.name);
    *text += line;
  }
  return 0;
}

}  // namespace cpuhp

namespace cpuhp {

nlohmann::json SimCpuControl::SaveState() const {
  return {{"cpus", cpus()},
          {"now_ns", clock_.now()},
          {"rng", rng_.state()},
          {"online", online_},
          {"writes", writes_},
          {"smt_control", smt_control_},
          {"smt_threads", smt_threads_}};
}

bool SimCpuControl::RestoreState(const nlohmann::json& j, std::string* err) {
  try {
    if (j.at("cpus").get<int>() != cpus()) {
      *err = "sim state is for " + std::to_string(j.at("cpus").get<int>()) + " CPUs, not " +
             std::to_string(cpus());
      return false;
    }
    std::vector<uint8_t> online = j.at("online").get<std::vector<uint8_t>>();
    if (online.size() != online_.size()) {
      *err = "sim state: online vector has the wrong size";
      return false;
    }
    clock_.Set(j.at("now_ns").get<uint64_t>());
    if (!rng_.set_state(j.at("rng").get<std::array<uint64_t, 4>>())) {
      *err = "sim state: rng is all zero";
      return false;
    }
    writes_ = j.at("writes").get<uint64_t>();
    // Checkpoints written before SMT was simulated have neither: all threads.
    smt_control_ = j.value("smt_control", smt_control_);
    smt_threads_ = j.value("smt_threads", smt_threads_);
    if (smt_threads_ < 1 || smt_threads_ > cfg_.threads_per_core) {
      *err = "sim state: smt_threads " + std::to_string(smt_threads_) + " outside 1.." +
             std::to_string(cfg_.threads_per_core);
      return false;
    }
    online_count_ = 0;
    for (size_t c = 0; c < online.size(); ++c) {
      online_[c] = online[c] != 0;
      hp_state_[c].store(online_[c] ? kSimOnlineState : 0, std::memory_order_relaxed);
      fail_[c] = -1;
      online_count_ += online_[c];
    }
    return true;
  } catch (const std::exception& e) {
    *err = std::string("sim state: ") + e.what();
    return false;
  }
}

}  // namespace cpuhp
