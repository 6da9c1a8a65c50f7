// SPDX-License-Identifier: GPL-2.0
// libFuzzer target: any bytes given as a report to `cpuhp-stress compare` and
// `cpuhp-stress report` (both read reports with LoadReport). The reader must
// never crash, hang or throw; it accepts or gives one error line naming the
// file. Whatever it accepts goes through everything those commands do with a
// report: compared with itself (which never regresses) and with a minimal
// report both ways, every compare output, every report format (with itself
// as --baseline and a --limit), all without throwing.
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "report/compare.h"
#include "report/compare_input.h"
#include "report/compare_render.h"
#include "report/html_report.h"
#include "json_mutator.h"
#include "report/report.h"
#include "report/report_formats.h"

namespace {

using nlohmann::json;

const char kSource[] = "fuzz-report.json";

// The smallest report LoadReport accepts: compared against the input, every
// section of the input is "only in the baseline/candidate".
json Minimal() {
  return {{"schema_version", cpuhp::kReportSchemaVersion},
          {"directions", json::object()},
          {"per_online_count", json::object()},
          {"totals", json::object()}};
}

void Outputs(const cpuhp::Comparison& c) {
  (void)cpuhp::CompareText(c);
  (void)cpuhp::CompareMarkdown(c);
  (void)cpuhp::CompareJson(c).dump(2);
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  return cpuhp_fuzz::MutateJson(data, size, max_size, seed);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  json report;
  std::string err;
  if (!cpuhp::ParseReport(text, kSource, &report, &err)) {
    // One non-empty line that names the file.
    if (err.rfind(std::string(kSource) + ": ", 0) != 0 || err.find('\n') != std::string::npos)
      abort();
    return 0;
  }
  cpuhp::CompareOptions copts;
  copts.resamples = 50;  // the bootstrap's cost, not its code, grows with this
  std::string cmp_err;
  (void)cpuhp::CheckComparable(report, report, &cmp_err);
  const cpuhp::Comparison self = cpuhp::Compare(report, report, copts);
  if (self.regressed())
    abort();  // a report cannot regress against itself
  Outputs(self);
  Outputs(cpuhp::Compare(report, Minimal(), copts));
  Outputs(cpuhp::Compare(Minimal(), report, copts));

  cpuhp::ReportOptions ropts;
  ropts.report_path = kSource;
  ropts.compare = copts;
  ropts.baseline = report;
  ropts.baseline_path = kSource;
  ropts.limits_ms["offline.p99"] = 1.0;
  ropts.limits_ms["online.max"] = 1.0;
  (void)cpuhp::ReportChecks(report, ropts);
  (void)cpuhp::FormatText(report, ropts);
  (void)cpuhp::FormatMarkdown(report, ropts);
  (void)cpuhp::FormatJunit(report, ropts);
  (void)cpuhp::FormatKcidb(report, ropts).dump(2);
  (void)cpuhp::FormatLava(report, ropts);
  (void)cpuhp::FormatHtml(report, ropts);
  return 0;
}
