// SPDX-License-Identifier: GPL-2.0
#include "sources/kmsg_health.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <fstream>

#include "machine/cpu_control.h"

namespace cpuhp {
namespace {

using nlohmann::json;

// The messages, as the kernel prints them (6.1 .. 7.2, x86/arm64/powerpc):
//   watchdog: BUG: soft lockup - CPU#3 stuck for 23s! [kworker/3:1:90]
//   Watchdog detected hard LOCKUP on cpu 2
//   rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:
//   rcu: INFO: rcu_sched self-detected stall on CPU
//   INFO: task cpuhp/1:18 blocked for more than 120 seconds.
//   CPU1: failed to come online            (arm64; x86: "CPU1 failed to ...")
//   CPU1 failed to report alive state      (x86 from 6.5: the AP never answered)
//   CPU 1 didn't die...  /  CPU1 failed to report dead state
//   Oops: general protection fault ... / Internal error: Oops: ... (arm64)
//   kernel BUG at kernel/cpu.c:1234!  /  BUG: sleeping function called ...
//   WARNING: CPU: 1 PID: 18 at kernel/cpu.c:1234 cpuhp_invoke_callback+0x...
struct LogPattern {
  int kind;
  const char* needle;
  bool prefix;  // at the start of the message (after an optional "subsys: ")
};
constexpr LogPattern kPatterns[] = {
    {kKmsgSoftLockup, "soft lockup", false},
    {kKmsgHardLockup, "hard LOCKUP", false},
    {kKmsgRcuStall, "self-detected stall", false},
    {kKmsgRcuStall, "detected stalls on CPUs", false},
    {kKmsgRcuStall, "detected stall on CPU", false},
    {kKmsgHungTask, "blocked for more than", false},
    {kKmsgFailedOnline, "failed to come online", false},
    {kKmsgFailedOnline, "failed to report alive state", false},
    {kKmsgDidntDie, "didn't die", false},
    {kKmsgDidntDie, "failed to report dead state", false},
    {kKmsgOops, "Oops", false},
    {kKmsgOops, "general protection fault", false},
    {kKmsgBug, "BUG:", true},
    {kKmsgBug, "kernel BUG at ", true},
    {kKmsgWarning, "WARNING:", true},
};

bool StartsAfterSubsystem(std::string_view msg, std::string_view needle) {
  if (msg.starts_with(needle))
    return true;
  // "watchdog: BUG: ...", "rcu: INFO: ...": one "word: " prefix at most.
  size_t colon = msg.find(": ");
  if (colon == std::string_view::npos || colon > 32 || msg.substr(0, colon).find(' ') != msg.npos)
    return false;
  return msg.substr(colon + 2).starts_with(needle);
}

template <typename T>
bool ParseNumber(std::string_view s, T* out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

class DevKmsgReader : public KmsgReader {
 public:
  explicit DevKmsgReader(std::string path) : path_(std::move(path)) {}
  ~DevKmsgReader() override {
    if (fd_ >= 0)
      close(fd_);
  }
  bool Open(std::string* why) override {
    fd_ = open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) {
      *why = path_ + ": cannot open: " + strerror(errno);
      return false;
    }
    // SEEK_END on /dev/kmsg: the next read returns the first record logged
    // after this point, not the boot log.
    if (lseek(fd_, 0, SEEK_END) < 0) {
      *why = path_ + ": cannot seek to the end: " + strerror(errno);
      close(fd_);
      fd_ = -1;
      return false;
    }
    return true;
  }
  long Read(char* buf, size_t len, int* err_no) override {
    for (;;) {
      ssize_t n = read(fd_, buf, len);
      if (n >= 0)
        return n == 0 ? (*err_no = EAGAIN, -1) : static_cast<long>(n);
      if (errno == EINTR)
        continue;
      *err_no = errno;
      return -1;
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
};

// Kernel Documentation/admin-guide/tainted-kernels.rst, bit order.
constexpr char kTaintLetters[] = "PFSRMBUDAWCIOELKXTNJ";

json KeptJson(const std::string& msg, uint64_t seq, uint64_t ts_us, int level, int facility,
              const std::optional<uint64_t>& op_index, const char* when) {
  return {{"message", msg},        {"seq", seq},
          {"timestamp_us", ts_us}, {"level", level},
          {"facility", facility},  {"op_index", op_index ? json(*op_index) : json(nullptr)},
          {"when", when}};
}

}  // namespace

int ClassifyKmsgMessage(std::string_view message) {
  for (const LogPattern& p : kPatterns) {
    if (p.prefix ? StartsAfterSubsystem(message, p.needle)
                 : message.find(p.needle) != std::string_view::npos)
      return p.kind;
  }
  return -1;
}

bool ParseKmsgRecord(std::string_view raw, KmsgRecord* rec, std::string* err) {
  const size_t semi = raw.find(';');
  const size_t first_nl = raw.find('\n');
  if (semi == std::string_view::npos || (first_nl != raw.npos && first_nl < semi)) {
    *err = "no ';' before the message";
    return false;
  }
  std::string_view head = raw.substr(0, semi);
  std::string_view fields[4];
  for (int i = 0; i < 4; ++i) {
    size_t comma = head.find(',');
    if (comma == std::string_view::npos && i < 3) {
      *err = "expected 4 comma-separated fields before ';'";
      return false;
    }
    fields[i] = head.substr(0, comma);
    head = comma == std::string_view::npos ? std::string_view() : head.substr(comma + 1);
  }
  unsigned prefix = 0;
  KmsgRecord r;
  if (!ParseNumber(fields[0], &prefix) || !ParseNumber(fields[1], &r.seq) ||
      !ParseNumber(fields[2], &r.ts_us)) {
    *err = "prefix, sequence and timestamp must be decimal numbers";
    return false;
  }
  r.level = static_cast<int>(prefix & 7);
  r.facility = static_cast<int>(prefix >> 3);
  std::string_view rest = raw.substr(semi + 1);
  size_t nl = rest.find('\n');
  r.message = std::string(rest.substr(0, nl));
  rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
  while (!rest.empty()) {
    nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if (line.empty())
      continue;
    if (line[0] != ' ') {
      *err = "continuation line without its leading space";
      return false;
    }
    r.dict.emplace_back(line.substr(1));
  }
  *rec = std::move(r);
  return true;
}

std::string TaintLetters(uint64_t mask) {
  std::string s;
  for (size_t bit = 0; bit < 64; ++bit) {
    if (!(mask & (1ull << bit)))
      continue;
    if (bit < sizeof(kTaintLetters) - 1)
      s += kTaintLetters[bit];
    else
      s += "?";  // a flag newer than this table
  }
  return s;
}

std::unique_ptr<KmsgReader> NewDevKmsgReader(const std::string& path) {
  return std::make_unique<DevKmsgReader>(path);
}

KmsgHealth::KmsgHealth(std::unique_ptr<KmsgReader> reader, KmsgHealthOptions opts)
    : reader_(std::move(reader)), opts_(std::move(opts)), buf_(16384) {}

bool KmsgHealth::ReadTaint(uint64_t* mask, std::string* err) const {
  std::ifstream f(opts_.tainted_path);
  std::string text;
  if (!f || !(f >> text) || !ParseNumber(std::string_view(text), mask)) {
    *err = opts_.tainted_path + ": cannot read a taint mask";
    return false;
  }
  return true;
}

bool KmsgHealth::Start(std::string* why_unavailable) {
  if (!reader_->Open(why_unavailable))
    return false;
  reading_ = true;
  uint64_t mask = 0;
  if (ReadTaint(&mask, &taint_error_))
    taint_start_ = mask;
  return true;
}

void KmsgHealth::OpBegin(const Operation&, uint64_t index) {
  Drain();  // what the log got since the last operation ended belongs to it
  op_index_ = index;
  in_op_ = true;
}

void KmsgHealth::OpEnd(const OpRecord&) {
  Drain();
  in_op_ = false;
}

void KmsgHealth::Drain() {
  const uint64_t t0 = MonotonicClock()->NowNs();
  DrainRecords();
  drain_ns_ += MonotonicClock()->NowNs() - t0;
}

void KmsgHealth::DrainRecords() {
  while (reading_) {
    int err_no = 0;
    long n = reader_->Read(buf_.data(), buf_.size(), &err_no);
    if (n < 0) {
      if (err_no == EPIPE) {
        ++lost_;  // one EPIPE per gap; the kernel does not say how many
        continue;
      }
      if (err_no != EAGAIN) {
        read_error_ = std::string("read: ") + strerror(err_no);
        reading_ = false;
      }
      return;
    }
    KmsgRecord rec;
    std::string err;
    ++records_;
    if (!ParseKmsgRecord(std::string_view(buf_.data(), static_cast<size_t>(n)), &rec, &err)) {
      ++malformed_;
      continue;
    }
    if (!first_seq_)
      first_seq_ = rec.seq;
    last_seq_ = rec.seq;
    Handle(rec);
  }
}

void KmsgHealth::Handle(const KmsgRecord& rec) {
  const int kind = ClassifyKmsgMessage(rec.message);
  if (kind < 0)
    return;
  const size_t k = static_cast<size_t>(kind);
  ++counts_[k];
  constexpr size_t kMaxMessage = 512;
  Kept kept{rec.message.substr(0, kMaxMessage),
            rec.seq,
            rec.ts_us,
            rec.level,
            rec.facility,
            op_index_,
            !op_index_ ? "before_first_op"
            : in_op_   ? "during_op"
                       : "after_op"};
  if (!first_) {
    first_ = kept;
    first_kind_ = kind;
  }
  if (opts_.stop[k] && stop_why_.empty()) {
    stop_why_ = std::string(KmsgKindName(k)) + " in kernel log" +
                (op_index_ ? " at operation " + std::to_string(*op_index_) : std::string()) + ": " +
                kept.message;
  }
  if (kept_[k].size() < opts_.keep_per_kind)
    kept_[k].push_back(std::move(kept));
}

bool KmsgHealth::WantsStop(std::string* why) {
  if (stop_why_.empty())
    return false;
  *why = stop_why_;
  return true;
}

void KmsgHealth::Stop() {
  Drain();
  in_op_ = false;
  uint64_t mask = 0;
  std::string err;
  if (ReadTaint(&mask, &err))
    taint_end_ = mask;
  else if (taint_error_.empty())
    taint_error_ = err;
}

json KmsgHealth::ReportJson() const {
  json counts = json::object();
  json first_lines = json::object();
  uint64_t total = 0;
  for (int k = 0; k < kKmsgKinds; ++k) {
    const size_t i = static_cast<size_t>(k);
    counts[KmsgKindName(k)] = counts_[i];
    total += counts_[i];
    json lines = json::array();
    for (const Kept& e : kept_[i])
      lines.push_back(KeptJson(e.message, e.seq, e.ts_us, e.level, e.facility, e.op_index, e.when));
    first_lines[KmsgKindName(k)] = std::move(lines);
  }
  json first = nullptr;
  if (first_) {
    first = KeptJson(first_->message, first_->seq, first_->ts_us, first_->level, first_->facility,
                     first_->op_index, first_->when);
    first["kind"] = KmsgKindName(first_kind_);
  }
  json taint = {{"start", taint_start_ ? json(*taint_start_) : json(nullptr)},
                {"end", taint_end_ ? json(*taint_end_) : json(nullptr)}};
  if (taint_start_)
    taint["start_flags"] = TaintLetters(*taint_start_);
  if (taint_end_)
    taint["end_flags"] = TaintLetters(*taint_end_);
  if (taint_start_ && taint_end_)
    taint["added_flags"] = TaintLetters(*taint_end_ & ~*taint_start_);
  if (!taint_error_.empty())
    taint["error"] = taint_error_;
  json stop_on = json::array();
  for (int k = 0; k < kKmsgKinds; ++k)
    if (opts_.stop[static_cast<size_t>(k)])
      stop_on.push_back(KmsgKindName(k));
  json j = {
      {"records_read", records_},
      {"records_lost", lost_},
      {"records_malformed", malformed_},
      {"drain_ns", drain_ns_},
      {"first_seq", first_seq_ ? json(*first_seq_) : json(nullptr)},
      {"last_seq", last_seq_ ? json(*last_seq_) : json(nullptr)},
      {"events", total},
      {"counts", std::move(counts)},
      {"first_lines", std::move(first_lines)},
      {"first_event", std::move(first)},
      {"taint", std::move(taint)},
      {"stop_on", std::move(stop_on)},
      {"stopped_run", !stop_why_.empty()},
  };
  if (!read_error_.empty())
    j["read_error"] = read_error_;
  return j;
}

std::string KmsgHealthSummary(const json& report) {
  auto ts = report.find("timing_sources");
  if (ts == report.end() || !ts->is_object())
    return "";
  auto it = ts->find("kmsg_health");
  if (it == ts->end() || !it->is_object())
    return "";
  const json& h = *it;
  if (h.value("status", "") != "ok")
    return "kernel log: unavailable: " + h.value("reason", std::string("?")) + "\n";
  const uint64_t events = h.value("events", uint64_t{0});
  std::string out =
      "kernel log: " + std::to_string(events) + " problem line" + (events == 1 ? "" : "s");
  std::string kinds;
  if (h.contains("counts") && h["counts"].is_object()) {
    for (auto c = h["counts"].begin(); c != h["counts"].end(); ++c)
      if (c->is_number_unsigned() && c->get<uint64_t>() > 0)
        kinds += (kinds.empty() ? "" : ", ") + c.key() + " " + std::to_string(c->get<uint64_t>());
  }
  if (!kinds.empty())
    out += " (" + kinds + ")";
  out += ", " + std::to_string(h.value("records_read", uint64_t{0})) + " records read, " +
         std::to_string(h.value("records_lost", uint64_t{0})) + " overwritten";
  if (h.contains("taint") && h["taint"].is_object()) {
    const json& t = h["taint"];
    if (t.contains("added_flags") && t["added_flags"].is_string() &&
        !t["added_flags"].get<std::string>().empty())
      out += ", taint added: " + t["added_flags"].get<std::string>();
  }
  out += "\n";
  if (h.contains("first_event") && h["first_event"].is_object()) {
    const json& f = h["first_event"];
    std::string at =
        f["op_index"].is_number() ? "operation " + f["op_index"].dump() : "no operation";
    out += "  first: " + f.value("kind", std::string("?")) + " at " + at + " (" +
           f.value("when", std::string("?")) + "): " + f.value("message", std::string()) + "\n";
  }
  return out;
}

}  // namespace cpuhp
