// SPDX-License-Identifier: GPL-2.0
// The report's "faults" section and its lines in the human summary.
#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "faults/faults.h"
#include "util/errno_name.h"

namespace cpuhp {

nlohmann::json FaultInjector::ReportJson() const {
  using nlohmann::json;
  json j = {{"status", available_ ? "ok" : "unavailable"},
            {"mode", opts_.sweep ? "sweep" : "rate"},
            {"rate", opts_.rate},
            {"directions", json::array()},
            {"states_requested", opts_.states.empty() ? json("all") : json(opts_.states)}};
  if (opts_.offline)
    j["directions"].push_back("offline");
  if (opts_.online)
    j["directions"].push_back("online");
  if (opts_.sweep)
    j["repeats"] = opts_.repeats;
  j["allow_unsafe"] = opts_.allow_unsafe;
  if (!available_) {
    j["reason"] = unavailable_;
    return j;
  }
  std::set<int> named;
  json learned = json::array();
  for (const auto& [key, l] : learned_) {
    if (!l.probed)
      continue;
    json refused = json::object();
    for (const auto& [n, e] : l.refused) {
      refused[ErrnoNameOrOk(e)].push_back(n);
      named.insert(n);
    }
    json not_reached = json::array();
    for (int n : l.armable) {
      named.insert(n);
      if (std::find(l.candidates.begin(), l.candidates.end(), n) == l.candidates.end() &&
          std::find(l.unsafe.begin(), l.unsafe.end(), n) == l.unsafe.end())
        not_reached.push_back(n);
    }
    learned.push_back({{"cpu", key.first},
                       {"direction", DirectionName(key.second)},
                       {"armable", l.armable},
                       {"refused", std::move(refused)},
                       {"not_reached", std::move(not_reached)},
                       {"skipped_unsafe", l.unsafe}});
  }
  FaultCounts total;
  auto add = [](FaultCounts* t, const FaultCounts& c) {
    t->injected += c.injected;
    t->rolled_back += c.rolled_back;
    t->not_rolled_back += c.not_rolled_back;
    t->not_reached += c.not_reached;
    t->unverified += c.unverified;
  };
  json states = json::array();
  for (auto [key, c] : counts_) {
    for (const auto& [cpu, p] : pending_)
      if (p.state == key.first && p.dir == key.second)
        ++c.unverified;  // the run ended before the operation that proves it
    json errnos = json::object();
    for (const auto& [e, n] : c.errnos)
      errnos[ErrnoNameOrOk(e)] = n;
    states.push_back({{"state", key.first},
                      {"name", table_.Name(key.first)},
                      {"direction", DirectionName(key.second)},
                      {"injected", c.injected},
                      {"rolled_back", c.rolled_back},
                      {"not_rolled_back", c.not_rolled_back},
                      {"not_reached", c.not_reached},
                      {"unverified", c.unverified},
                      {"errnos", std::move(errnos)}});
    named.insert(key.first);
    add(&total, c);
  }
  json failures = json::array();
  for (const Failure& f : failures_) {
    failures.push_back({{"index", f.index},
                        {"cpu", f.cpu},
                        {"state", f.state},
                        {"name", table_.Name(f.state)},
                        {"direction", DirectionName(f.dir)},
                        {"errno", ErrnoNameOrOk(f.err)},
                        {"next_errno", ErrnoNameOrOk(f.next_err)},
                        {"online_before", f.online_before},
                        {"online_after", f.online_after},
                        {"hotplug_state_before", f.hp_before},
                        {"hotplug_state_after", f.hp_after},
                        {"why", f.why},
                        {"kernel_log", f.kernel_log}});
    named.insert(f.state);
  }
  json names = json::object();
  for (int n : named)
    names[std::to_string(n)] = table_.Name(n);
  j["kernel_log"] = kmsg_status_;
  j["cleared_at_start"] = cleared_at_start_;
  j["learned"] = std::move(learned);
  j["state_names"] = std::move(names);
  j["states"] = std::move(states);
  j["totals"] = {{"injected", total.injected},
                 {"rolled_back", total.rolled_back},
                 {"not_rolled_back", total.not_rolled_back},
                 {"not_reached", total.not_reached},
                 {"unverified", total.unverified},
                 {"arm_refused", arm_refused_},
                 {"probes", probes_}};
  j["failures"] = std::move(failures);
  j["failures_dropped"] = failures_dropped_;
  return j;
}

std::string FaultsSummary(const nlohmann::json& report) {
  if (!report.contains("faults"))
    return "";
  const nlohmann::json& f = report["faults"];
  if (f.value("status", "") != "ok")
    return "fault injection: unavailable: " + f.value("reason", std::string("?")) + "\n";
  const nlohmann::json& t = f["totals"];
  std::string s = "fault injection (" + f.value("mode", std::string()) +
                  "): " + std::to_string(t.value("injected", 0)) + " injected, " +
                  std::to_string(t.value("rolled_back", 0)) + " rolled back (verified), " +
                  std::to_string(t.value("not_rolled_back", 0)) + " NOT rolled back, " +
                  std::to_string(t.value("not_reached", 0)) +
                  " not reached (no callback in that direction)\n";
  std::set<int> unsafe;
  for (const nlohmann::json& l : f["learned"])
    for (const nlohmann::json& n : l.value("skipped_unsafe", nlohmann::json::array()))
      unsafe.insert(n.get<int>());
  if (!unsafe.empty()) {
    s += "  skipped as unsafe going online (the CPU is already kicked; faults.allow_unsafe "
         "includes them):";
    for (int n : unsafe)
      s += " " + std::to_string(n) + " (" +
           f["state_names"].value(std::to_string(n), std::string("?")) + ")";
    s += "\n";
  }
  for (const nlohmann::json& x : f["failures"])
    s += "  NOT rolled back: cpu" + std::to_string(x.value("cpu", -1)) + " " +
         x.value("direction", std::string()) + " state " + std::to_string(x.value("state", -1)) +
         " (" + x.value("name", std::string()) + ") before op " +
         std::to_string(x.value("index", 0)) + ": " + x.value("why", std::string()) + "\n";
  return s;
}

}  // namespace cpuhp
