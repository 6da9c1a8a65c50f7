// SPDX-License-Identifier: GPL-2.0
// The HTML page (html_report.h) in two files: html_report.cc draws the page,
// latency vs online CPUs, the histograms and the sources table;
// html_sections.cc the sections read from the kernel-side sources (top
// kernel states, the kmod and bpf phases, the timeline with its kernel-log
// marks, disturbance) and the helpers both use. Only those two files
// include this header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "report/svg_chart.h"

namespace cpuhp::html {

constexpr size_t kColorCount = 8;
extern const char* const kColors[kColorCount];

std::string Esc(const std::string& s);
// "1 problem line", "2 problem lines".
std::string Count(uint64_t n, const char* noun);
// "CPU 1", "CPUs 0-3": a CPU list with the noun it takes.
std::string CpuList(const std::string& list);
ChartSeries MakeSeries(const std::string& name, const std::string& color, bool line, bool markers,
                       bool dashed);
// "<p>Disturbance probes: unavailable: <reason></p>" and friends: a section
// that did not measure says so instead of drawing zeros.
std::string NotMeasured(const nlohmann::json& report, const char* source, const std::string& what,
                        const std::string& how_to_enable);

// Top kernel states by self time (timing_sources.tracepoints.kernel_states).
std::string KernelStates(const nlohmann::json& report);
// The kmod source's section, or the bpf source's (the same form: one joiner).
std::string KmodPhases(const nlohmann::json& report, const char* source = "kmod");
// The timeline's columns with the kernel log's lines marked at their operation.
std::string TimelineSection(const nlohmann::json& report);
// Disturbance p50/p99/p99.9/max per bucket, against the baseline.
std::string Disturbance(const nlohmann::json& report);
// The smt pattern's switch table ("" for any other pattern), with its heading.
std::string SmtSwitches(const nlohmann::json& report);

}  // namespace cpuhp::html
