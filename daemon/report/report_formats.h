// SPDX-License-Identifier: GPL-2.0
// `cpuhp-stress report R.json --format F`: one report's checks
// (report/report_checks.h) and measurements, in the formats CI systems and
// labs read: every format renders the same list of checks.
#pragma once

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "report/report_checks.h"

namespace cpuhp {

std::string FormatText(const nlohmann::json& report, const ReportOptions& opts);
std::string FormatMarkdown(const nlohmann::json& report, const ReportOptions& opts);
std::string FormatJunit(const nlohmann::json& report, const ReportOptions& opts);
nlohmann::json FormatKcidb(const nlohmann::json& report, const ReportOptions& opts);
std::string FormatLava(const nlohmann::json& report, const ReportOptions& opts);

// "offline.p99=20ms" into opts->limits_ms; "p99=20ms" limits both directions.
bool ParseLimit(const std::string& text, ReportOptions* opts, std::string* err);

// Exit codes: 0 every check passed, 1 one failed, 2 bad input.
int ReportCommand(const std::string& path, const std::string& format, const std::string& output,
                  ReportOptions opts, std::FILE* out);

}  // namespace cpuhp
