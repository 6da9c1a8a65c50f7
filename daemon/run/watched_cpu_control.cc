// SPDX-License-Identifier: GPL-2.0
#include "run/watched_cpu_control.h"

#include <sys/syscall.h>
#include <unistd.h>

#include "stats/op_record.h"

namespace cpuhp {

namespace {

int ThisTid() {
  thread_local const int tid = static_cast<int>(syscall(SYS_gettid));
  return tid;
}

// The list names the daemon reads, as static strings the watchdog thread can
// hold (the caller's std::string may be gone by the time it looks).
const char* ListName(const std::string& name) {
  for (const char* n : {"online", "present", "possible", "offline", "isolated", "nohz_full"})
    if (name == n)
      return n;
  return nullptr;
}

}  // namespace

class WatchedCpuControl::Scope {
 public:
  Scope(InFlight* f, SysfsCall call, int cpu, int dir = 0, const char* list = nullptr) : f_(f) {
    f_->tid.store(ThisTid(), std::memory_order_relaxed);
    f_->cpu.store(cpu, std::memory_order_relaxed);
    f_->dir.store(dir, std::memory_order_relaxed);
    f_->call.store(static_cast<int>(call), std::memory_order_relaxed);
    f_->list.store(list, std::memory_order_relaxed);
    f_->start_wall_ns.store(MonotonicClock()->NowNs(), std::memory_order_release);
  }
  ~Scope() { f_->start_wall_ns.store(0, std::memory_order_release); }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  InFlight* f_;
};

bool WatchedCpuControl::ReadList(const std::string& name, std::vector<int>* cpus, std::string* err,
                                 int* err_no) {
  Scope s(f_, SysfsCall::kListRead, -1, 0, ListName(name));
  return inner_->ReadList(name, cpus, err, err_no);
}

bool WatchedCpuControl::HasOnlineFile(int cpu) {
  Scope s(f_, SysfsCall::kHasOnline, cpu);
  return inner_->HasOnlineFile(cpu);
}

int WatchedCpuControl::ReadOnline(int cpu, std::string* err) {
  Scope s(f_, SysfsCall::kOnlineRead, cpu);
  return inner_->ReadOnline(cpu, err);
}

int WatchedCpuControl::WriteOnline(int cpu, bool online) {
  Scope s(f_, SysfsCall::kOnlineWrite, cpu,
          static_cast<int>(online ? Direction::kOnline : Direction::kOffline));
  return inner_->WriteOnline(cpu, online);
}

int WatchedCpuControl::WriteFail(int cpu, int state) {
  Scope s(f_, SysfsCall::kFailWrite, cpu);
  return inner_->WriteFail(cpu, state);
}

int WatchedCpuControl::ReadFail(int cpu, int* state) {
  Scope s(f_, SysfsCall::kFailRead, cpu);
  return inner_->ReadFail(cpu, state);
}

int WatchedCpuControl::ReadHotplugState(int cpu, int* state) {
  Scope s(f_, SysfsCall::kStateRead, cpu);
  return inner_->ReadHotplugState(cpu, state);
}

int WatchedCpuControl::ReadHotplugStates(std::string* text) {
  Scope s(f_, SysfsCall::kStatesRead, -1);
  return inner_->ReadHotplugStates(text);
}

int WatchedCpuControl::ReadSmtFile(const std::string& name, std::string* text, std::string* err) {
  Scope s(f_, SysfsCall::kSmtRead, -1);
  return inner_->ReadSmtFile(name, text, err);
}

int WatchedCpuControl::ReadThreadSiblings(int cpu, std::vector<int>* cpus, std::string* err) {
  Scope s(f_, SysfsCall::kSiblingsRead, cpu);
  return inner_->ReadThreadSiblings(cpu, cpus, err);
}

int WatchedCpuControl::WriteSmtControl(const std::string& mode) {
  Scope s(f_, SysfsCall::kSmtWrite, -1);
  return inner_->WriteSmtControl(mode);
}

}  // namespace cpuhp
