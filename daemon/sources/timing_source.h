// SPDX-License-Identifier: GPL-2.0
// The seam through which timing joins each operation record. The user-space
// write timing (the runner's clock around write(2)) is always there; kernel
// sources (cpuhp tracepoints, the cpuhp_probe module) implement this interface
// and attach their own sections to the report.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "stats/op_record.h"

namespace cpuhp {

class TimingSource {
 public:
  virtual ~TimingSource() = default;

  // Short stable name, the report key ("tracepoints", "kmod").
  virtual std::string name() const = 0;

  // Called once before the first operation. A source that cannot work here
  // returns false with the reason; the run goes on without it and the report
  // says "unavailable" with that reason.
  virtual bool Start(std::string* why_unavailable) = 0;

  // Around each operation, innermost last: OpBegin right before the timed
  // write, OpEnd right after it with the finished record (it may add
  // kernel-side data keyed by rec.index).
  virtual void OpBegin(const Operation& op, uint64_t index) = 0;
  virtual void OpEnd(const OpRecord& rec) = 0;

  // Checked by the runner after each operation (after OpEnd): a source that
  // saw something the run must not go on after (a kernel WARNING with
  // "on_kernel_warning": "stop") returns true with a one-line reason, and the
  // run stops with stop_reason "error" and "<name>: <reason>" as its message.
  virtual bool WantsStop(std::string* /*why*/) { return false; }

  // After the last operation: drain whatever is still buffered.
  virtual void Stop() = 0;

  // This source's section of the report.
  virtual nlohmann::json ReportJson() const = 0;
};

}  // namespace cpuhp
