// SPDX-License-Identifier: GPL-2.0
// The smt pattern's own table: each SMT switch timed as one operation, from
// the start of its first write to the end of its last (the time `ppc64_cpu
// --smt=N` takes), by the mode it switches to, with the CPUs it changed;
// fault injection's writes between two of its own are left out of it.
// Fed the run's operation records in order (OpRecord::group says the
// switch); a switch is complete when the next one starts, when the
// schedule says it is over (CloseBefore), or when the pattern ended by
// itself after it.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "stats/histogram.h"
#include "stats/op_record.h"

namespace cpuhp {

class SmtSwitchStats {
 public:
  // modes: smt.modes (odd switches go to modes[0], even ones to modes[1]).
  SmtSwitchStats(std::array<std::string, 2> modes, std::string method);

  void Add(const OpRecord& rec);
  // The run ended: `last_complete` when the pattern finished the switch in
  // progress (it ended by itself), else that switch was cut short and is
  // counted as incomplete, not timed.
  void Finish(bool last_complete);
  // The schedule is past the switch in progress if it is below `group`: it
  // is complete (before a checkpoint; Schedule::next_group).
  void CloseBefore(uint64_t group) {
    if (group_ && group_ < group)
      Close();
  }

  uint64_t switches(int to) const { return by_mode_[static_cast<size_t>(to)].switches.count(); }

  // "smt" section of the report (schema: smt): method, modes, per target
  // mode: switches, p50/p99/max/min of the switch time, CPUs changed per
  // switch (min, max, total), failed writes; incomplete switches.
  nlohmann::json ToJson() const;

  // Checkpoint: the table and the switch in progress. StateFromJson refuses
  // a document of other modes or method and leaves *this unchanged then; a
  // switch in progress at the checkpoint counts as incomplete after it (a
  // resume comes after a gap its time must not include).
  nlohmann::json StateToJson() const;
  bool StateFromJson(const nlohmann::json& j, std::string* err);

 private:
  struct PerMode {
    Histogram switches;  // ns from the first write's start to the last one's end
    uint64_t cpus_changed = 0;
    int cpus_min = -1, cpus_max = 0;
    uint64_t failed_writes = 0;
    uint64_t with_faults = 0;  // switches with an injected write (faults.rate)
  };
  void Close();

  std::array<std::string, 2> modes_;
  std::string method_;
  std::array<PerMode, 2> by_mode_;
  uint64_t incomplete_ = 0;
  // The switch in progress.
  uint64_t group_ = 0;
  // The switch a resume found in progress: its remaining writes are not timed.
  uint64_t cut_group_ = 0;
  uint64_t start_ns_ = 0, end_ns_ = 0;
  int changed_ = 0;
  uint64_t failed_ = 0;
  // Fault injection inside the switch: the time of the injected writes
  // between its own (left out of its time), and whether there was one.
  uint64_t hook_ns_ = 0;
  bool faulted_ = false;
};

}  // namespace cpuhp
