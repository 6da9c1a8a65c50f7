// SPDX-License-Identifier: GPL-2.0
#include "sources/trace_join.h"

#include <algorithm>
#include <cstdint>
#include <span>

#include "util/prefault.h"

namespace cpuhp {

namespace {

constexpr size_t kMaxLine = 4096;
constexpr size_t kMalformedExamples = 5;

}  // namespace

void TraceJoiner::Line(std::string_view line) {
  if (line.empty() || line.front() == '#')
    return;
  TraceEvent ev;
  if (!ParseTraceLine(line, &ev)) {
    ++malformed_;
    if (malformed_examples_.size() < kMalformedExamples) {
      std::string ex(line.substr(0, 160));
      for (char& c : ex)
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e)
          c = '?';
      malformed_examples_.push_back(std::move(ex));
    }
    return;
  }
  if (ev.kind == TraceKind::kLost) {
    lost_markers_ += ev.lost;
    return;
  }
  ++events_;
  matcher_.Feed(ev, &pending_);
}

void TraceJoiner::FeedEvent(const TraceEvent& ev) {
  ++events_;
  matcher_.Feed(ev, &pending_);
}

void TraceJoiner::FeedRaw(const RawCpuhpEvent& e, std::string_view comm, std::string_view fun) {
  ++events_;
  matcher_.Feed(e.kind, e.pid, e.cpu, e.idx, e.ret, e.ts_ns, comm, fun, &pending_);
}

void TraceJoiner::FeedText(std::string_view text) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    if (nl == std::string_view::npos) {
      partial_.append(text);
      if (partial_.size() > kMaxLine) {  // no newline in sight: garbage
        Line(partial_);
        partial_.clear();
      }
      return;
    }
    if (partial_.empty()) {
      Line(text.substr(0, nl));
    } else {
      partial_.append(text.substr(0, nl));
      Line(partial_);
      partial_.clear();
    }
    text.remove_prefix(nl + 1);
  }
}

void TraceJoiner::EndOperation(const OpRecord& rec) {
  EndOperations({rec});
}

// One pass over the pending steps for the whole batch: a step belongs to the
// first operation (in write order) whose write ended at or after the step
// began, when the step is of that operation's CPU (any CPU for an
// smt/control write) and began inside its
// window; a step that began after the last write stays pending; any other is
// outside every operation. The same assignment as ending the operations one
// by one, which walked every pending step once per operation: a drain of N
// operations with ~45 steps each moved O(N^2) steps, 15 % of a CPU at 650
// writes/s (issue 17).
void TraceJoiner::EndOperations(const std::vector<OpRecord>& batch) {
  if (batch.empty())
    return;
  // Write ends in batch order, made non-decreasing (writes are sequential:
  // this only guards the search against a clock that stepped back).
  std::vector<uint64_t> ends(batch.size());
  uint64_t end_max = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    end_max = std::max(end_max, batch[i].start_ns + batch[i].duration_ns);
    ends[i] = end_max;
  }
  // Each step's operation (batch.size(): later; kOutside: none), then the
  // steps grouped by operation in one stable counting pass, into vectors
  // kept from batch to batch (no vector per operation: issue 31).
  constexpr size_t kOutside = SIZE_MAX;
  owner_.resize(pending_.size());
  first_.assign(batch.size() + 3, 0);
  size_t outside = 0;
  for (size_t i = 0; i < pending_.size(); ++i) {
    const TraceStep& s = pending_[i];
    size_t k =
        static_cast<size_t>(std::lower_bound(ends.begin(), ends.end(), s.begin_ns) - ends.begin());
    if (k < batch.size()) {
      const OpRecord& rec = batch[k];
      const uint64_t w0 = rec.start_ns - rec.start_ns % resolution_ns_;
      // An smt/control write's steps are those of every CPU it moved.
      if ((s.cpu != rec.cpu && !rec.smt_control) || s.begin_ns < w0 ||
          s.begin_ns > rec.start_ns + rec.duration_ns)
        k = kOutside;
    }
    owner_[i] = k;
    if (k == kOutside)
      ++outside;
    else
      ++first_[k + 2];
  }
  outside_ops_ += outside;
  for (size_t k = 2; k < first_.size(); ++k)
    first_[k] += first_[k - 1];
  // Steps end write after write, so in a run they come grouped already:
  // each operation's are pending_[first_[k + 1], first_[k + 2]), the later
  // ones the rest, and nothing is moved but those.
  if (outside == 0 && std::is_sorted(owner_.begin(), owner_.end())) {
    for (size_t i = 0; i < batch.size(); ++i)
      stats_.AddOperation(batch[i], std::span<const TraceStep>(pending_.data() + first_[i + 1],
                                                               first_[i + 2] - first_[i + 1]));
    pending_.erase(pending_.begin(),
                   pending_.begin() + static_cast<ptrdiff_t>(first_[batch.size() + 1]));
    return;
  }
  // first_[k + 1]: where operation k's steps start (k == batch.size(): the later ones).
  grouped_.resize(first_.back());
  for (size_t i = 0; i < pending_.size(); ++i)
    if (owner_[i] != kOutside)
      grouped_[first_[owner_[i] + 1]++] = pending_[i];
  // first_[k + 1] now ends operation k's steps, and first_[k] begins them.
  pending_.assign(grouped_.begin() + static_cast<ptrdiff_t>(first_[batch.size()]), grouped_.end());
  for (size_t i = 0; i < batch.size(); ++i)
    stats_.AddOperation(batch[i], std::span<const TraceStep>(grouped_.data() + first_[i],
                                                             first_[i + 1] - first_[i]));
}

void TraceJoiner::Reserve(size_t steps) {
  Prefault(&pending_, steps);
  Prefault(&grouped_, steps);
  Prefault(&owner_, steps);
}

void TraceJoiner::Finish() {
  if (!partial_.empty()) {
    Line(partial_);
    partial_.clear();
  }
  outside_ops_ += pending_.size();
  pending_.clear();
}

nlohmann::json TraceJoiner::EventsJson() const {
  return {{"parsed", events_},
          {"malformed_lines", malformed_},
          {"malformed_examples", malformed_examples_},
          {"unmatched_enters", matcher_.unmatched_enters()},
          {"unmatched_exits", matcher_.unmatched_exits()},
          {"open_at_end", matcher_.open()},
          {"steps_outside_operations", outside_ops_}};
}

}  // namespace cpuhp
