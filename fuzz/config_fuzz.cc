// SPDX-License-Identifier: GPL-2.0
// libFuzzer target: any bytes given as a config file. The parser must never
// crash, hang or throw; it accepts or gives one error line; and whatever it
// accepts must survive ConfigToJson -> ApplyConfigJson unchanged.
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "util/json_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  nlohmann::json doc;
  std::string err;
  cpuhp::Config cfg;
  if (!cpuhp::ParseJsonText(text, "fuzz.json", &doc, &err) ||
      !cpuhp::ApplyConfigJson(doc, "fuzz.json", &cfg, &err)) {
    if (err.empty() || err.find('\n') != std::string::npos)
      abort();  // an error is exactly one non-empty line
    return 0;
  }
  const nlohmann::json once = cpuhp::ConfigToJson(cfg);
  cpuhp::Config again;
  if (!cpuhp::ApplyConfigJson(once, "round trip", &again, &err) ||
      cpuhp::ConfigToJson(again) != once)
    abort();
  return 0;
}
