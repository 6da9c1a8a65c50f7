// SPDX-License-Identifier: GPL-2.0
#include "run/schedule.h"

#include <algorithm>
#include <array>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "util/cpu_list.h"
#include "util/rng.h"

namespace cpuhp {
namespace {

bool CanOffline(const ScheduleParams& p, const OnlineState& s, int cpu) {
  return s.IsOnline(cpu) && s.count - 1 >= std::max(1, p.min_online);
}

Operation Toggle(const OnlineState& s, int cpu) {
  return {cpu, s.IsOnline(cpu) ? Direction::kOffline : Direction::kOnline};
}

Direction DirFrom(const nlohmann::json& j) {
  const int d = j.get<int>();
  if (d != 0 && d != 1)
    throw std::out_of_range("direction " + std::to_string(d));
  return static_cast<Direction>(d);
}

// Runs `apply` (which reads fields with .at() and returns whether they are in
// range) and turns every exception into a one-line error.
template <typename F>
bool Restore(const nlohmann::json& j, const char* pattern, std::string* err, F apply) {
  try {
    if (!j.is_object() || j.value("pattern", "") != pattern) {
      *err = std::string("schedule state is not for pattern ") + pattern;
      return false;
    }
    if (!apply()) {
      *err = std::string(pattern) + " schedule state out of range";
      return false;
    }
    return true;
  } catch (const std::exception& e) {
    *err = std::string(pattern) + " schedule state: " + e.what();
    return false;
  }
}

// Each selected CPU in turn: toggle it, then toggle it back, so every CPU
// ends its turn as it started.
class RoundRobin : public Schedule {
 public:
  explicit RoundRobin(const ScheduleParams& p) : p_(p) {}

  std::optional<Operation> Next(const OnlineState& s) override {
    if (pending_back_) {
      pending_back_ = false;
      // Only if the first toggle took: otherwise the CPU is already back.
      if (s.IsOnline(back_.cpu) != (back_.dir == Direction::kOnline) &&
          (back_.dir == Direction::kOnline || CanOffline(p_, s, back_.cpu)))
        return back_;
    }
    for (size_t tried = 0; tried < p_.cpus.size(); ++tried) {
      int cpu = p_.cpus[cursor_];
      cursor_ = (cursor_ + 1) % p_.cpus.size();
      if (s.IsOnline(cpu) && !CanOffline(p_, s, cpu))
        continue;
      Operation op = Toggle(s, cpu);
      back_ = {cpu, op.dir == Direction::kOffline ? Direction::kOnline : Direction::kOffline};
      pending_back_ = true;
      return op;
    }
    error_ = "roundrobin: no selected CPU can change state without going below min_online " +
             std::to_string(p_.min_online);
    return std::nullopt;
  }

  nlohmann::json SaveState() const override {
    return {{"pattern", "roundrobin"},
            {"cursor", cursor_},
            {"pending_back", pending_back_},
            {"back_cpu", back_.cpu},
            {"back_dir", static_cast<int>(back_.dir)}};
  }
  bool RestoreState(const nlohmann::json& j, std::string* err) override {
    return Restore(j, "roundrobin", err, [&] {
      cursor_ = j.at("cursor").get<size_t>();
      pending_back_ = j.at("pending_back").get<bool>();
      back_ = {j.at("back_cpu").get<int>(), DirFrom(j.at("back_dir"))};
      // The CPU to toggle back indexes the online state: one of ours.
      return cursor_ < p_.cpus.size() &&
             (!pending_back_ ||
              std::find(p_.cpus.begin(), p_.cpus.end(), back_.cpu) != p_.cpus.end());
    });
  }

 private:
  ScheduleParams p_;
  size_t cursor_ = 0;
  bool pending_back_ = false;
  Operation back_;
};

// Offline every selected CPU (ascending, within min_online), then online them
// one by one: seed 002's loop, and seed 000's "Enabling non-boot CPUs".
class AllCpus : public Schedule {
 public:
  explicit AllCpus(const ScheduleParams& p) : p_(p) {}

  std::optional<Operation> Next(const OnlineState& s) override {
    for (int phase_switches = 0; phase_switches < 3; ++phase_switches) {
      while (cursor_ < p_.cpus.size()) {
        int cpu = p_.cpus[cursor_++];
        if (offlining_ ? CanOffline(p_, s, cpu) : !s.IsOnline(cpu))
          return Operation{cpu, offlining_ ? Direction::kOffline : Direction::kOnline};
      }
      offlining_ = !offlining_;
      cursor_ = 0;
    }
    error_ = "all: no selected CPU can change state without going below min_online " +
             std::to_string(p_.min_online);
    return std::nullopt;
  }

  nlohmann::json SaveState() const override {
    return {{"pattern", "all"}, {"cursor", cursor_}, {"offlining", offlining_}};
  }
  bool RestoreState(const nlohmann::json& j, std::string* err) override {
    return Restore(j, "all", err, [&] {
      cursor_ = j.at("cursor").get<size_t>();
      offlining_ = j.at("offlining").get<bool>();
      return cursor_ <= p_.cpus.size();
    });
  }

 private:
  ScheduleParams p_;
  size_t cursor_ = 0;
  bool offlining_ = true;
};

// A seeded random walk: each step picks uniformly among the moves allowed now
// (offline an online selected CPU within min_online, or online an offline one).
class RandomWalk : public Schedule {
 public:
  explicit RandomWalk(const ScheduleParams& p) : p_(p), rng_(p.seed) {}

  std::optional<Operation> Next(const OnlineState& s) override {
    moves_.clear();
    for (int cpu : p_.cpus)
      if (!s.IsOnline(cpu) || CanOffline(p_, s, cpu))
        moves_.push_back(cpu);
    if (moves_.empty()) {
      error_ = "random: no selected CPU can change state without going below min_online " +
               std::to_string(p_.min_online);
      return std::nullopt;
    }
    return Toggle(s, moves_[rng_.Below(moves_.size())]);
  }

  nlohmann::json SaveState() const override {
    return {{"pattern", "random"}, {"rng", rng_.state()}};
  }
  bool RestoreState(const nlohmann::json& j, std::string* err) override {
    return Restore(j, "random", err,
                   [&] { return rng_.set_state(j.at("rng").get<std::array<uint64_t, 4>>()); });
  }

 private:
  ScheduleParams p_;
  Rng rng_;
  std::vector<int> moves_;
};

// Seed 001: for each level (online CPUs before the victim's offline), low to
// high, bring exactly that many CPUs online, then time cycles_per_level
// offline+online cycles of the victim.
class Sweep : public Schedule {
 public:
  Sweep(const ScheduleParams& p, int victim, std::vector<int> levels, int fixed_online)
      : p_(p), victim_(victim), levels_(std::move(levels)), fixed_online_(fixed_online) {
    for (int cpu : p_.cpus)
      if (cpu != victim_)
        others_.push_back(cpu);
  }

  std::optional<Operation> Next(const OnlineState& s) override {
    while (level_ < levels_.size()) {
      if (std::optional<Operation> op = SetupStep(s)) {
        // The same step again means the last attempt did not take.
        const bool same = op->cpu == last_setup_.cpu && op->dir == last_setup_.dir;
        setup_attempts_ = same ? setup_attempts_ + 1 : 1;
        last_setup_ = *op;
        op->setup = true;
        if (setup_attempts_ > 3) {
          error_ = "sweep: cannot reach level " + std::to_string(levels_[level_]) + ": CPU " +
                   std::to_string(op->cpu) + " refuses to go " +
                   std::string(DirectionName(op->dir));
          return std::nullopt;
        }
        return op;
      }
      setup_attempts_ = 0;
      last_setup_ = Operation{};
      if (cycle_ops_ < 2ull * static_cast<uint64_t>(p_.sweep.cycles_per_level)) {
        ++cycle_ops_;
        return Toggle(s, victim_);
      }
      ++level_;
      cycle_ops_ = 0;
    }
    return std::nullopt;  // complete
  }

  // Levels whose cycles all ran, and those a stop (iterations, duration,
  // signal, error) left unmeasured or cut short.
  nlohmann::json Describe() const override {
    // A level whose last cycle just ran is complete before Next moves on.
    const bool last_cycle_done =
        level_ < levels_.size() &&
        cycle_ops_ >= 2ull * static_cast<uint64_t>(p_.sweep.cycles_per_level);
    const auto done =
        static_cast<std::ptrdiff_t>(std::min(level_ + last_cycle_done, levels_.size()));
    return {{"victim", victim_},
            {"levels", levels_},
            {"cycles_per_level", p_.sweep.cycles_per_level},
            {"levels_complete", std::vector<int>(levels_.begin(), levels_.begin() + done)},
            {"levels_missing", std::vector<int>(levels_.begin() + done, levels_.end())}};
  }

  std::optional<ScheduleProgress> Progress() const override {
    const uint64_t per_level = 2ull * static_cast<uint64_t>(p_.sweep.cycles_per_level);
    ScheduleProgress p;
    p.total = per_level * levels_.size();
    p.done = std::min(p.total, per_level * level_ + cycle_ops_);
    const size_t shown = std::min(level_ + 1, levels_.size());
    p.label = "level " + std::to_string(shown) + "/" + std::to_string(levels_.size()) + " (" +
              std::to_string(levels_[shown - 1]) + " online)";
    return p;
  }

  nlohmann::json SaveState() const override {
    return {{"pattern", "sweep"},
            {"level", level_},
            {"cycle_ops", cycle_ops_},
            {"setup_attempts", setup_attempts_},
            {"last_setup_cpu", last_setup_.cpu},
            {"last_setup_dir", static_cast<int>(last_setup_.dir)}};
  }
  bool RestoreState(const nlohmann::json& j, std::string* err) override {
    return Restore(j, "sweep", err, [&] {
      level_ = j.at("level").get<size_t>();
      cycle_ops_ = j.at("cycle_ops").get<uint64_t>();
      setup_attempts_ = j.at("setup_attempts").get<int>();
      last_setup_ = {j.at("last_setup_cpu").get<int>(), DirFrom(j.at("last_setup_dir"))};
      const bool known_cpu =
          last_setup_.cpu == Operation{}.cpu ||
          std::find(p_.cpus.begin(), p_.cpus.end(), last_setup_.cpu) != p_.cpus.end();
      return level_ <= levels_.size() && setup_attempts_ >= 0 && setup_attempts_ <= 3 &&
             cycle_ops_ <= 2ull * static_cast<uint64_t>(p_.sweep.cycles_per_level) && known_cpu;
    });
  }

 private:
  // The operation that moves the other CPUs toward the current level, with
  // the victim online; nullopt when there. Mid-cycle (victim offline) the
  // state is as the cycle left it.
  std::optional<Operation> SetupStep(const OnlineState& s) {
    if (cycle_ops_ % 2 == 1)
      return std::nullopt;
    if (!s.IsOnline(victim_))
      return Operation{victim_, Direction::kOnline};
    // The first `want` of the other CPUs online, the rest offline. Offline
    // surplus from the top first, then online from the bottom.
    size_t want = static_cast<size_t>(levels_[level_] - 1 - fixed_online_);
    for (size_t i = others_.size(); i-- > want;)
      if (s.IsOnline(others_[i]))
        return Operation{others_[i], Direction::kOffline};
    for (size_t i = 0; i < want; ++i)
      if (!s.IsOnline(others_[i]))
        return Operation{others_[i], Direction::kOnline};
    return std::nullopt;
  }

  ScheduleParams p_;
  int victim_;
  std::vector<int> levels_;
  int fixed_online_;
  std::vector<int> others_;
  size_t level_ = 0;
  uint64_t cycle_ops_ = 0;
  int setup_attempts_ = 0;
  Operation last_setup_;
};

// The smt pattern, method "threads": each switch takes the sibling threads
// its mode excludes offline, or brings the ones it allows online, one write
// each, core by core and thread by thread (the order of ppc64_cpu --smt); a
// core's first thread is never written, and a core whose first thread is
// offline gets none of its siblings back (as cpuhp_smt_enable()). Switches
// go to smt.modes[0], then [1], and so on; the pattern ends after
// smt.switches of them (0: never); a switch that finds the machine already
// where its mode puts it has no write and does not count (a resume finds
// the start mask restored). A write that did not take leaves that CPU out
// for the rest of its switch: the switch still ends. Method "control": one
// smt/control write per switch (NextControl).
class SmtSwitch : public Schedule {
 public:
  explicit SmtSwitch(const ScheduleParams& p) : p_(p) {}

  std::optional<Operation> Next(const OnlineState& s) override {
    if (!error_.empty())
      return std::nullopt;  // Settle found the kernel refusing the mode
    return p_.smt.method == "control" ? NextControl(s) : NextThreads(s);
  }

  // The last write is judged on the machine it left, and a switch with no
  // write left is over: a checkpoint then resumes at the next switch, and
  // the switch table closes this one (next_group).
  void Settle(const OnlineState& s) override {
    if (p_.smt.method == "control") {
      JudgeControl(s);
      return;
    }
    JudgeThreads(s);
    if (wrote_ && !done() && !Step(s))
      Advance();
  }
  uint64_t next_group() const override { return switch_; }

  nlohmann::json Describe() const override {
    nlohmann::json cores = nlohmann::json::array();
    for (const std::vector<int>& core : p_.smt_cores)
      cores.push_back(FormatCpuList(core));
    return {{"method", p_.smt.method},     {"modes", p_.smt.modes},
            {"threads", p_.smt_threads},   {"cores", std::move(cores)},
            {"switches", p_.smt.switches}, {"switches_done", counted() - 1}};
  }

  std::optional<ScheduleProgress> Progress() const override {
    if (!p_.smt.switches)
      return std::nullopt;
    ScheduleProgress pr;
    pr.total = p_.smt.switches;
    pr.done = std::min(pr.total, counted() - 1);
    pr.label = "switch " + std::to_string(std::min(counted(), pr.total)) + "/" +
               std::to_string(pr.total) + " (to " + p_.smt.modes[(switch_ - 1) % 2] + ")";
    return pr;
  }

  // A pattern that ended by itself finished its last switch.
  bool done() const { return p_.smt.switches && counted() > p_.smt.switches; }

  nlohmann::json SaveState() const override {
    return {{"pattern", "smt"},
            {"switch", switch_},
            {"skipped", skipped_},
            {"wrote", wrote_},
            {"given_up", given_up_},
            {"last_cpu", last_.cpu},
            {"last_dir", static_cast<int>(last_.dir)},
            {"control_written", last_.smt_mode != nullptr},
            {"expect", expect_},
            {"failed_in_a_row", failed_in_a_row_}};
  }
  bool RestoreState(const nlohmann::json& j, std::string* err) override {
    return Restore(j, "smt", err, [&] {
      switch_ = j.at("switch").get<uint64_t>();
      // Before Settle, a checkpoint was always taken inside a switch.
      skipped_ = j.value("skipped", uint64_t{0});
      wrote_ = j.value("wrote", true);
      given_up_ = j.at("given_up").get<std::vector<int>>();
      last_ = {j.at("last_cpu").get<int>(), DirFrom(j.at("last_dir"))};
      // A checkpoint of the threads method before "control" existed has none
      // of the three.
      expect_ = j.value("expect", std::vector<uint8_t>{});
      failed_in_a_row_ = j.value("failed_in_a_row", 0);
      if (j.value("control_written", false)) {
        last_.smt_mode = &p_.smt.modes[(switch_ - 1) % 2];
        last_.expect_online = &expect_;
      }
      const auto known = [&](int cpu) {
        return std::binary_search(p_.cpus.begin(), p_.cpus.end(), cpu);
      };
      return switch_ >= 1 && skipped_ < switch_ &&
             std::all_of(given_up_.begin(), given_up_.end(), known) &&
             (last_.cpu == Operation{}.cpu || known(last_.cpu));
    });
  }

 private:
  // The switch in progress, counting only the ones with a write.
  uint64_t counted() const { return switch_ - skipped_; }

  // A write that did not take leaves its CPU out for the rest of the switch.
  void JudgeThreads(const OnlineState& s) {
    if (last_.cpu >= 0 && s.IsOnline(last_.cpu) != (last_.dir == Direction::kOnline))
      given_up_.push_back(last_.cpu);
    last_ = Operation{};
  }

  void Advance() {
    skipped_ += !wrote_;
    wrote_ = false;
    ++switch_;
    given_up_.clear();
  }

  std::optional<Operation> NextThreads(const OnlineState& s) {
    JudgeThreads(s);
    // This switch's next write; none left: the next switch (one that finds
    // the machine already there, the first one may, has no write).
    for (int tries = 0; tries < 2; ++tries) {
      if (done())
        return std::nullopt;
      if (std::optional<Operation> op = Step(s)) {
        op->group = switch_;
        last_ = *op;
        wrote_ = true;
        return op;
      }
      Advance();
    }
    error_ = "smt: neither mode changes any CPU from here (every sibling refused its writes)";
    return std::nullopt;
  }

  // Method "control": one write of the switch's mode to smt/control per
  // switch; the kernel moves the threads inside it. A switch that finds the
  // machine already where its mode puts it has no write. Three failed
  // switches in a row stop the pattern: the kernel refuses the mode.
  void JudgeControl(const OnlineState& s) {
    if (!last_.smt_mode)
      return;
    failed_in_a_row_ = s.online == expect_ ? 0 : failed_in_a_row_ + 1;
    if (failed_in_a_row_ >= kMaxFailedSwitches)
      error_ = "smt: smt/control \"" + *last_.smt_mode + "\" left the online CPUs at " +
               FormatCpuList(OnlineCpus(s)) + " " + std::to_string(failed_in_a_row_) +
               " switches in a row, not where the mode puts them";
    ++switch_;
    last_ = Operation{};
  }

  std::optional<Operation> NextControl(const OnlineState& s) {
    JudgeControl(s);
    if (!error_.empty())
      return std::nullopt;
    for (int tries = 0; tries < 2; ++tries, ++switch_) {
      if (done())
        return std::nullopt;
      const size_t m = (switch_ - 1) % 2;
      expect_ = s.online;
      for (const std::vector<int>& core : p_.smt_cores)
        for (size_t t = 1; t < core.size(); ++t)
          expect_[static_cast<size_t>(core[t])] =
              s.IsOnline(core.front()) && static_cast<int>(t) < p_.smt_threads[m];
      if (expect_ == s.online) {
        ++skipped_;
        continue;
      }
      Operation op;
      op.cpu = -1;
      op.dir = p_.smt_threads[m] < p_.smt_threads[1 - m] ? Direction::kOffline : Direction::kOnline;
      op.group = switch_;
      op.smt_mode = &p_.smt.modes[m];
      op.expect_online = &expect_;
      last_ = op;
      return op;
    }
    error_ = "smt: neither mode changes any CPU from here";
    return std::nullopt;
  }

  static std::vector<int> OnlineCpus(const OnlineState& s) {
    std::vector<int> cpus;
    for (size_t i = 0; i < s.online.size(); ++i)
      if (s.online[i])
        cpus.push_back(static_cast<int>(i));
    return cpus;
  }

  static constexpr int kMaxFailedSwitches = 3;

  std::optional<Operation> Step(const OnlineState& s) const {
    const int threads = p_.smt_threads[(switch_ - 1) % 2];
    for (const std::vector<int>& core : p_.smt_cores) {
      const bool core_up = s.IsOnline(core.front());
      for (size_t t = 1; t < core.size(); ++t) {
        const int cpu = core[t];
        if (std::find(given_up_.begin(), given_up_.end(), cpu) != given_up_.end())
          continue;
        const bool want = core_up && static_cast<int>(t) < threads;
        if (s.IsOnline(cpu) == want || (!want && !CanOffline(p_, s, cpu)))
          continue;
        return Operation{cpu, want ? Direction::kOnline : Direction::kOffline};
      }
    }
    return std::nullopt;
  }

  ScheduleParams p_;
  uint64_t switch_ = 1;
  // Switches that had no write (not counted), and whether switch_ had one.
  uint64_t skipped_ = 0;
  bool wrote_ = false;
  std::vector<int> given_up_;
  Operation last_;
  // Method "control": the mask the switch in progress must leave, and its
  // failed switches in a row (the kernel refusing the mode).
  std::vector<uint8_t> expect_;
  int failed_in_a_row_ = 0;
};

int FixedOnline(const ScheduleParams& p, const OnlineState& s) {
  int n = s.count;
  for (int cpu : p.cpus)
    n -= s.IsOnline(cpu);
  return n;
}

}  // namespace

nlohmann::json Schedule::Describe() const {
  return nlohmann::json::object();
}

void SweepRange(const ScheduleParams& p, const OnlineState& s, int victim, int* lo, int* hi) {
  (void)victim;
  const int fixed = FixedOnline(p, s);
  *lo = std::max(fixed + 1, std::max(1, p.min_online) + 1);
  *hi = fixed + static_cast<int>(p.cpus.size());
}

std::unique_ptr<Schedule> NewSchedule(const ScheduleParams& p, const OnlineState& s,
                                      std::string* err) {
  if (p.cpus.empty()) {
    *err = "/cpus: no hotpluggable CPU selected";
    return nullptr;
  }
  switch (p.pattern) {
    case Pattern::kRoundRobin:
      return std::make_unique<RoundRobin>(p);
    case Pattern::kAll:
      return std::make_unique<AllCpus>(p);
    case Pattern::kRandom:
      return std::make_unique<RandomWalk>(p);
    case Pattern::kSweep:
      break;
    case Pattern::kFaultSweep:
      // Driven by the fault injector: NewFaultSweepSchedule (faults.h).
      *err = "/pattern: fault_sweep is built with the fault injector (NewFaultSweepSchedule)";
      return nullptr;
    case Pattern::kSmt:
      if (p.smt_cores.empty()) {
        *err = "/pattern: smt needs the machine's SMT topology (machine/smt.h, read at start)";
        return nullptr;
      }
      if (p.smt_threads[0] == p.smt_threads[1]) {
        *err = "/smt/modes: \"" + p.smt.modes[0] + "\" and \"" + p.smt.modes[1] +
               "\" leave the same " + std::to_string(p.smt_threads[0]) +
               " thread(s) per core online here: nothing to switch";
        return nullptr;
      }
      return std::make_unique<SmtSwitch>(p);
  }
  int victim = p.sweep.victim < 0 ? p.cpus.back() : p.sweep.victim;
  if (!std::binary_search(p.cpus.begin(), p.cpus.end(), victim)) {
    *err = "/sweep/victim: CPU " + std::to_string(victim) + " is not among the selected CPUs " +
           FormatCpuList(p.cpus);
    return nullptr;
  }
  int lo = 0;
  int hi = 0;
  SweepRange(p, s, victim, &lo, &hi);
  if (lo > hi) {
    *err = "/sweep: no level reachable: min_online " + std::to_string(p.min_online) +
           " leaves no room to offline the victim with " + std::to_string(hi) + " CPUs";
    return nullptr;
  }
  std::vector<int> levels = p.sweep.levels;
  if (levels.empty()) {
    levels.push_back(lo);
    for (int l = 2; l < hi; l *= 2)
      if (l > lo)
        levels.push_back(l);
    if (hi > lo)
      levels.push_back(hi);
  }
  for (int l : levels) {
    if (l < lo || l > hi) {
      *err = "/sweep/levels: level " + std::to_string(l) + " is not reachable: with CPUs " +
             FormatCpuList(p.cpus) + " selected and min_online " + std::to_string(p.min_online) +
             ", online counts " + std::to_string(lo) + " to " + std::to_string(hi) +
             " are reachable";
      return nullptr;
    }
  }
  return std::make_unique<Sweep>(p, victim, std::move(levels), FixedOnline(p, s));
}

}  // namespace cpuhp
