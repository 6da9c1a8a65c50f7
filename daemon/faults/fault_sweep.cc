// SPDX-License-Identifier: GPL-2.0
// pattern "fault_sweep" (faults.h): one CPU at a time, toggled until the
// injector's queues for it are empty and it is back where it started.
#include <nlohmann/json.hpp>

#include "faults/faults.h"

namespace cpuhp {
namespace {

class FaultSweep : public Schedule {
 public:
  FaultSweep(const ScheduleParams& p, const OnlineState& start, FaultInjector* injector)
      : p_(p), injector_(injector) {
    for (int cpu : p_.cpus)
      start_online_.push_back(start.IsOnline(cpu));
  }

  std::optional<Operation> Next(const OnlineState& s) override {
    while (pos_ < p_.cpus.size()) {
      const int cpu = p_.cpus[pos_];
      const bool home = s.IsOnline(cpu) == start_online_[pos_];
      if (home && !injector_->SweepPending(cpu)) {
        ++pos_;
        ops_ = 0;
        continue;
      }
      if (++ops_ > injector_->SweepBudget()) {
        error_ = "fault_sweep: cpu" + std::to_string(cpu) + " made no progress in " +
                 std::to_string(ops_ - 1) + " operations (it does not change state)";
        return std::nullopt;
      }
      if (!s.IsOnline(cpu))
        return Operation{cpu, Direction::kOnline};
      if (s.count - 1 < p_.min_online) {
        error_ = "fault_sweep: cpu" + std::to_string(cpu) + " cannot go offline: min_online " +
                 std::to_string(p_.min_online) + " with " + std::to_string(s.count) + " online";
        return std::nullopt;
      }
      return Operation{cpu, Direction::kOffline};
    }
    return std::nullopt;
  }

  nlohmann::json Describe() const override {
    return {{"pattern", "fault_sweep"}, {"cpus_done", pos_}};
  }
  // A resumed sweep goes on with the CPU it was on; the injections of the
  // interrupted run are not in the checkpoint, so that CPU is swept again.
  nlohmann::json SaveState() const override { return {{"pattern", "fault_sweep"}, {"pos", pos_}}; }
  bool RestoreState(const nlohmann::json& j, std::string* err) override {
    if (!j.is_object() || j.value("pattern", "") != "fault_sweep" || !j.contains("pos") ||
        !j["pos"].is_number_unsigned() || j["pos"].get<size_t>() > p_.cpus.size()) {
      *err = "schedule state is not a fault_sweep position";
      return false;
    }
    pos_ = j["pos"].get<size_t>();
    ops_ = 0;
    return true;
  }

 private:
  ScheduleParams p_;
  FaultInjector* injector_;
  std::vector<bool> start_online_;
  size_t pos_ = 0;
  uint64_t ops_ = 0;
};

}  // namespace

std::unique_ptr<Schedule> NewFaultSweepSchedule(const ScheduleParams& p, const OnlineState& start,
                                                FaultInjector* injector) {
  return std::make_unique<FaultSweep>(p, start, injector);
}

}  // namespace cpuhp
