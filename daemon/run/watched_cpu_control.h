// SPDX-License-Identifier: GPL-2.0
// A CpuControl that publishes each call it forwards in an InFlight (the
// stuck-call watchdog's view, run/stuck_watchdog.h): a run and `restore`
// reach sysfs only through it, so no read or write can block unseen. The
// cost inside the timed write is a clock read and a few atomic stores.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "machine/cpu_control.h"
#include "run/in_flight.h"

namespace cpuhp {

class WatchedCpuControl : public CpuControl {
 public:
  WatchedCpuControl(std::unique_ptr<CpuControl> inner, InFlight* in_flight)
      : inner_(std::move(inner)), f_(in_flight) {}

  // The backend itself: for the watchdog's own reads (they must not replace
  // the call they are about) and for the sim backend's extras.
  CpuControl* inner() const { return inner_.get(); }

  std::string Describe() const override { return inner_->Describe(); }
  bool ReadList(const std::string& name, std::vector<int>* cpus, std::string* err,
                int* err_no) override;
  bool HasOnlineFile(int cpu) override;
  int ReadOnline(int cpu, std::string* err) override;
  int WriteOnline(int cpu, bool online) override;
  Clock* clock() override { return inner_->clock(); }
  int WriteFail(int cpu, int state) override;
  int ReadFail(int cpu, int* state) override;
  int ReadHotplugState(int cpu, int* state) override;
  int ReadHotplugStates(std::string* text) override;
  int ReadSmtFile(const std::string& name, std::string* text, std::string* err) override;
  int ReadThreadSiblings(int cpu, std::vector<int>* cpus, std::string* err) override;
  int WriteSmtControl(const std::string& mode) override;

 private:
  class Scope;
  std::unique_ptr<CpuControl> inner_;
  InFlight* f_;
};

}  // namespace cpuhp
