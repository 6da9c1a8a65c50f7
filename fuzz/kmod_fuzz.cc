// SPDX-License-Identifier: GPL-2.0
// libFuzzer target: any bytes as what the cpuhp_probe module hands the daemon
// (kmod/uapi/cpuhp_probe.h), through the daemon's decoding of it: the
// version check, a probe-table row, the get_nohz_timer_target histogram and
// target counts, read() buffers of records joined to operations, and the
// report section and summary built from them.
//
// Input layout (missing bytes read as zero), all little-endian as the module
// writes them on this machine:
//   struct cpuhp_probe_version
//   struct cpuhp_probe_info          (the answer for probe id info.id % 16)
//   struct cpuhp_probe_hist
//   u32 ncounts, u32 counts_ok, u64 counts[min(ncounts, 4096)]
//   then until the end, per operation:
//     u64 start_ns, u64 duration_ns, s32 cpu, u32 dir (bit 0: online),
//     s32 online_before, u32 len; then len bytes (or what is left) as one
//     read() buffer of records.
//
// Checked: nothing crashes, hangs or throws (every JSON built is dumped as
// the report writer does); the version check accepts exactly this header's
// version, record size and probe count, with a one-line error otherwise; a
// buffer decodes iff it is whole records, each byte for byte; every record
// read is joined or counted unjoined.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sources/kmod_source.h"
#include "stats/op_record.h"

namespace {

using nlohmann::json;

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : p_(data), left_(size) {}
  // Copies sizeof(T) bytes (zero past the end) into *v.
  template <typename T>
  void Take(T* v) {
    std::memset(v, 0, sizeof(T));
    size_t n = std::min(sizeof(T), left_);
    std::memcpy(v, p_, n);
    Skip(n);
  }
  const uint8_t* Bytes(size_t* n) {
    *n = std::min(*n, left_);
    const uint8_t* b = p_;
    Skip(*n);
    return b;
  }
  bool empty() const { return left_ == 0; }

 private:
  void Skip(size_t n) {
    p_ += n;
    left_ -= n;
  }
  const uint8_t* p_;
  size_t left_;
};

void OneLine(const std::string& err) {
  if (err.empty() || err.find('\n') != std::string::npos)
    abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader in(data, size);
  std::string err;

  cpuhp_probe_version version;
  in.Take(&version);
  const bool ours = version.api_version == CPUHP_PROBE_API_VERSION &&
                    version.record_size == sizeof(cpuhp_probe_record) &&
                    version.nr_probes == CPUHP_PROBE_NR;
  if (cpuhp::KmodCheckVersion(version, &err) != ours)
    abort();
  if (!ours)
    OneLine(err);

  cpuhp_probe_info info;
  in.Take(&info);
  json probe = cpuhp::KmodProbeInfoJson(info.id % 16, info);
  (void)probe.dump();

  cpuhp_probe_hist hist;
  in.Take(&hist);
  uint32_t ncounts = 0, counts_ok = 0;
  in.Take(&ncounts);
  in.Take(&counts_ok);
  std::vector<uint64_t> counts(std::min<uint32_t>(ncounts, 4096));
  for (uint64_t& c : counts)
    in.Take(&c);
  json nohz = cpuhp::KmodNohzJson(hist, counts, counts_ok != 0);
  (void)nohz.dump();

  cpuhp::KmodJoiner joiner;
  uint64_t records = 0;
  for (uint64_t index = 0; !in.empty(); ++index) {
    cpuhp::OpRecord op;
    uint32_t dir = 0, len = 0;
    in.Take(&op.start_ns);
    in.Take(&op.duration_ns);
    in.Take(&op.cpu);
    in.Take(&dir);
    in.Take(&op.online_before);
    in.Take(&len);
    op.index = index;
    op.dir = (dir & 1) ? cpuhp::Direction::kOnline : cpuhp::Direction::kOffline;
    size_t n = len;
    const uint8_t* buf = in.Bytes(&n);
    std::vector<cpuhp_probe_record> recs;
    err.clear();
    const bool whole = n % sizeof(cpuhp_probe_record) == 0;
    if (cpuhp::KmodDecodeRecords(buf, n, &recs, &err) != whole)
      abort();
    if (!whole) {
      OneLine(err);
      continue;
    }
    if (recs.size() != n / sizeof(cpuhp_probe_record) ||
        (n && std::memcmp(recs.data(), buf, n) != 0))
      abort();
    // As KmodSource::OpEnd: in sequence order, then joined.
    std::sort(
        recs.begin(), recs.end(),
        [](const cpuhp_probe_record& a, const cpuhp_probe_record& b) { return a.seq < b.seq; });
    records += recs.size();
    joiner.Join(op, recs);
  }
  if (joiner.joined() + joiner.unjoined() != records ||
      joiner.nesting_violations() > joiner.joined())
    abort();

  json kmod = joiner.ToJson();
  kmod["probes"] = json::array({probe});
  kmod["get_nohz_timer_target"] = nohz;
  (void)kmod.dump(2);
  json report = {
      {"timing_sources", {{"kmod", kmod}}},
      {"directions",
       {{"offline", {{"count", 1}, {"p50_ns", 1000}, {"p99_ns", 2000}, {"max_ns", 3000}}},
        {"online", {{"count", 1}, {"p50_ns", 1000}, {"p99_ns", 2000}, {"max_ns", 3000}}}}}};
  (void)cpuhp::KmodSummary(report);
  return 0;
}
