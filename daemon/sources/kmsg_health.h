// SPDX-License-Identifier: GPL-2.0
// Kernel log health: reads /dev/kmsg from the start of the run (records
// logged before it are skipped), counts the lines that say the kernel is in
// trouble (WARNING, BUG, Oops, RCU stall, lockups, hung tasks, CPUs that fail
// to come online or to die), keeps the first few of each with their kmsg
// timestamp and the operation they appeared in, and compares the taint mask
// at start and end. A timing source so it sees every operation begin and
// end; with "stop" for a kind it stops the run through WantsStop.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/kmsg_kinds.h"
#include "sources/timing_source.h"

namespace cpuhp {

// The kind of one kernel log message (the text after ';'), or -1.
int ClassifyKmsgMessage(std::string_view message);

// One /dev/kmsg record: "<prefix>,<seq>,<ts_us>,<flags>[,...];<message>\n"
// then optional continuation lines " KEY=value\n" (Documentation/ABI/
// testing/dev-kmsg). prefix = facility * 8 + level.
struct KmsgRecord {
  int level = 0;     // 0 emerg .. 7 debug
  int facility = 0;  // 0 kern, 1 user (what a write to /dev/kmsg gets by default), ...
  uint64_t seq = 0;
  uint64_t ts_us = 0;             // local_clock() at logging, microseconds since boot
  std::string message;            // unescaped as the kernel gives it (\xNN for non-printables)
  std::vector<std::string> dict;  // continuation lines without their leading space
};
// Returns false with *err on a malformed record.
bool ParseKmsgRecord(std::string_view raw, KmsgRecord* rec, std::string* err);

// The taint flag letters set in a /proc/sys/kernel/tainted mask, in bit
// order ("GW" style without the G/P pairs: only set flags, e.g. "WL").
std::string TaintLetters(uint64_t mask);

// Where records come from: /dev/kmsg, or a fake in the tests.
class KmsgReader {
 public:
  virtual ~KmsgReader() = default;
  // Opens and positions after the last record logged so far.
  virtual bool Open(std::string* why) = 0;
  // One record, like read(2) on /dev/kmsg: > 0 bytes; or -1 with *err_no:
  // EAGAIN nothing new, EPIPE records were overwritten before we read them
  // (the next Read goes on with the oldest one left), anything else fatal.
  virtual long Read(char* buf, size_t len, int* err_no) = 0;
};
std::unique_ptr<KmsgReader> NewDevKmsgReader(const std::string& path);

struct KmsgHealthOptions {
  std::array<bool, kKmsgKinds> stop{};  // per kind: stop the run when seen
  std::string tainted_path = "/proc/sys/kernel/tainted";
  size_t keep_per_kind = 5;  // first lines kept per kind
};

class KmsgHealth : public TimingSource {
 public:
  KmsgHealth(std::unique_ptr<KmsgReader> reader, KmsgHealthOptions opts);

  std::string name() const override { return "kmsg_health"; }
  bool Start(std::string* why_unavailable) override;
  void OpBegin(const Operation& op, uint64_t index) override;
  void OpEnd(const OpRecord& rec) override;
  bool WantsStop(std::string* why) override;
  void Stop() override;
  nlohmann::json ReportJson() const override;

  // Reads every record available now. Public for tests.
  // Reads every record the log has (the writer's thread, around each write).
  void Drain();
  void DrainRecords();
  uint64_t count(int kind) const { return counts_[static_cast<size_t>(kind)]; }

 private:
  struct Kept {
    std::string message;
    uint64_t seq = 0;
    uint64_t ts_us = 0;
    int level = 0;
    int facility = 0;
    std::optional<uint64_t> op_index;
    const char* when = "";  // during_op | after_op | before_first_op
  };
  void Handle(const KmsgRecord& rec);
  bool ReadTaint(uint64_t* mask, std::string* err) const;

  std::unique_ptr<KmsgReader> reader_;
  KmsgHealthOptions opts_;
  bool reading_ = false;
  std::string read_error_;  // a fatal read error stops reading; reported
  // Where the run is: records read in OpEnd(N) were logged while operation
  // N ran (or between N-1's end and N's begin: they are drained at
  // OpBegin first, so not); records read in OpBegin(N+1) after it.
  std::optional<uint64_t> op_index_;
  bool in_op_ = false;
  std::array<uint64_t, kKmsgKinds> counts_{};
  std::array<std::vector<Kept>, kKmsgKinds> kept_;
  std::optional<Kept> first_;
  int first_kind_ = -1;
  uint64_t records_ = 0;
  std::optional<uint64_t> first_seq_, last_seq_;  // of the records read
  uint64_t lost_ = 0;                             // EPIPE: overwritten before we read them
  uint64_t malformed_ = 0;
  uint64_t drain_ns_ = 0;  // time in Drain: the writer's, in the operation loop
  std::string stop_why_;   // non-empty: a "stop" kind was seen
  std::optional<uint64_t> taint_start_, taint_end_;
  std::string taint_error_;
  std::vector<char> buf_;
};

// "kernel log: 0 warnings ..." lines for the human summary, from the
// report's timing_sources.kmsg_health section ("" when absent).
std::string KmsgHealthSummary(const nlohmann::json& report);

}  // namespace cpuhp
