// SPDX-License-Identifier: GPL-2.0
// Test helpers shared by the report tests: the reports of tests/fixtures/
// and the lookup of one check by name. A fixture missing or not JSON fails
// the test that reads it.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "report/report_checks.h"

namespace cpuhp {

// tests/fixtures/NAME parsed.
inline nlohmann::json LoadFixture(const std::string& name) {
  std::ifstream in(std::string(CPUHP_SOURCE_DIR) + "/tests/fixtures/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << name;
  return j;
}

// A real cpu1 run: tracepoints, disturbance probes, kernel log health with
// an injected WARNING line, kmod unavailable (no module on the host).
inline const nlohmann::json& Cpu1() {
  static const nlohmann::json r = LoadFixture("report-real-cpu1.json");
  return r;
}

// The check called `name`, nullptr when there is none.
inline const ReportCheck* FindCheck(const std::vector<ReportCheck>& checks,
                                    const std::string& name) {
  for (const ReportCheck& c : checks)
    if (c.name == name)
      return &c;
  return nullptr;
}

}  // namespace cpuhp
