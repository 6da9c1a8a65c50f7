// SPDX-License-Identifier: GPL-2.0
// Test helpers: a config document (JSON text) applied to a default Config as
// "t.json", expected to pass or to fail with one error line.
#pragma once

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "config/config.h"

namespace cpuhp {

inline bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.starts_with(prefix);
}

// Applies `text` (JSON) to a default config as "t.json"; returns the error.
inline std::string ApplyError(const std::string& text) {
  Config cfg;
  std::string err;
  EXPECT_FALSE(ApplyConfigJson(nlohmann::json::parse(text), "t.json", &cfg, &err)) << text;
  EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  return err;
}

inline Config ApplyOk(const std::string& text) {
  Config cfg;
  std::string err;
  EXPECT_TRUE(ApplyConfigJson(nlohmann::json::parse(text), "t.json", &cfg, &err))
      << text << ": " << err;
  return cfg;
}

}  // namespace cpuhp
