// SPDX-License-Identifier: GPL-2.0
#include "sources/trace_parser.h"

#include <charconv>

namespace cpuhp {
namespace {

std::string_view Trim(std::string_view s) {
  size_t b = s.find_first_not_of(' ');
  if (b == std::string_view::npos)
    return {};
  size_t e = s.find_last_not_of(' ');
  return s.substr(b, e - b + 1);
}

template <typename T>
bool ParseNum(std::string_view s, T* v) {
  if (s.empty())
    return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}

// The integer after "key:" (spaces allowed before it), e.g. "step: 144".
bool Field(std::string_view s, std::string_view key, int* v) {
  size_t k = s.find(key);
  if (k == std::string_view::npos)
    return false;
  std::string_view rest = s.substr(k + key.size());
  size_t b = rest.find_first_not_of(' ');
  if (b == std::string_view::npos)
    return false;
  rest.remove_prefix(b);
  size_t e = rest.find(' ');
  return ParseNum(rest.substr(0, e), v);
}

// "2497.383417" -> ns. Six fractional digits (what tracefs prints for
// nanosecond clocks); other widths are scaled.
bool ParseTimestamp(std::string_view s, uint64_t* ns) {
  size_t dot = s.find('.');
  uint64_t sec = 0, frac = 0;
  if (dot == std::string_view::npos || !ParseNum(s.substr(0, dot), &sec))
    return false;
  std::string_view f = s.substr(dot + 1);
  if (f.empty() || f.size() > 9 || !ParseNum(f, &frac))
    return false;
  for (size_t i = f.size(); i < 9; ++i)
    frac *= 10;
  *ns = sec * 1000000000ull + frac;
  return true;
}

bool ParseLost(std::string_view line, TraceEvent* ev) {
  // "CPU:1 [LOST 12 EVENTS]"
  line = Trim(line);
  if (line.substr(0, 4) != "CPU:")
    return false;
  size_t sp = line.find(' ');
  if (sp == std::string_view::npos || !ParseNum(line.substr(4, sp - 4), &ev->event_cpu))
    return false;
  std::string_view rest = line.substr(sp + 1);
  if (rest.substr(0, 6) != "[LOST " || rest.size() < 14 ||
      rest.substr(rest.size() - 8) != " EVENTS]")
    return false;
  if (!ParseNum(rest.substr(6, rest.size() - 14), &ev->lost))
    return false;
  ev->kind = TraceKind::kLost;
  return true;
}

}  // namespace

bool ParseTraceLine(std::string_view line, TraceEvent* ev) {
  if (!line.empty() && line.back() == '\r')
    line.remove_suffix(1);
  *ev = TraceEvent();
  if (ParseLost(line, ev))
    return true;
  static constexpr std::pair<std::string_view, TraceKind> kNames[] = {
      {": cpuhp_enter: ", TraceKind::kEnter},
      {": cpuhp_multi_enter: ", TraceKind::kMultiEnter},
      {": cpuhp_exit: ", TraceKind::kExit},
  };
  size_t at = std::string_view::npos;
  std::string_view name;
  for (const auto& [n, k] : kNames) {
    at = line.find(n);
    if (at != std::string_view::npos) {
      name = n;
      ev->kind = k;
      break;
    }
  }
  if (at == std::string_view::npos)
    return false;

  // Prefix, right to left: timestamp, flags (optional), [cpu], (tgid)
  // (optional), comm-pid.
  std::string_view prefix = Trim(line.substr(0, at));
  size_t sp = prefix.rfind(' ');
  if (sp == std::string_view::npos || !ParseTimestamp(prefix.substr(sp + 1), &ev->ts_ns))
    return false;
  prefix = prefix.substr(0, sp);
  size_t close = prefix.rfind(']');
  size_t open = close == std::string_view::npos ? close : prefix.rfind('[', close);
  if (open == std::string_view::npos ||
      !ParseNum(prefix.substr(open + 1, close - open - 1), &ev->event_cpu))
    return false;
  std::string_view task = Trim(prefix.substr(0, open));
  if (!task.empty() && task.back() == ')') {  // "(tgid)" column
    size_t lp = task.rfind('(');
    if (lp == std::string_view::npos)
      return false;
    task = Trim(task.substr(0, lp));
  }
  size_t dash = task.rfind('-');
  if (dash == std::string_view::npos || dash == 0 || !ParseNum(task.substr(dash + 1), &ev->pid))
    return false;
  ev->comm = std::string(task.substr(0, dash));

  std::string_view body = line.substr(at + name.size());
  if (!Field(body, "cpu:", &ev->cpu) || !Field(body, "step:", &ev->idx) || ev->cpu < 0)
    return false;
  if (ev->kind == TraceKind::kExit) {
    // "ret:" is last: a line cut inside it has no digits after it or a
    // partial number we cannot tell from a whole one, so it must end the line.
    if (!Field(body, "state:", &ev->target) || !Field(body, "ret:", &ev->ret))
      return false;
    return true;
  }
  if (!Field(body, "target:", &ev->target))
    return false;
  size_t lp = body.find('(');
  if (lp == std::string_view::npos || body.back() != ')' || body.size() - lp < 3)
    return false;  // truncated before the callback's name ends
  ev->fun = std::string(body.substr(lp + 1, body.size() - lp - 2));
  // A kernel symbol is printable ASCII without spaces; other bytes are a
  // garbled line (and would not be valid UTF-8 in the report).
  for (char c : ev->fun)
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) > 0x7e)
      return false;
  return true;
}

const char* StepWhereName(StepWhere w) {
  switch (w) {
    case StepWhere::kControl:
      return "control";
    case StepWhere::kCpuhpThread:
      return "cpuhp_thread";
    case StepWhere::kTargetCpu:
      return "target_cpu";
  }
  return "control";
}

StepWhere ClassifyTask(std::string_view comm, int target_cpu) {
  char buf[16];
  const std::string_view n(buf, std::to_chars(buf, buf + sizeof(buf), target_cpu).ptr);
  auto is = [&](std::string_view prefix) {  // comm == prefix + n
    return comm.size() == prefix.size() + n.size() && comm.starts_with(prefix) && comm.ends_with(n);
  };
  if (is("cpuhp/"))
    return StepWhere::kCpuhpThread;
  if (is("migration/") || is("swapper/"))
    return StepWhere::kTargetCpu;
  return StepWhere::kControl;
}

void StepMatcher::Feed(const TraceEvent& ev, std::vector<TraceStep>* out) {
  Feed(ev.kind, ev.pid, ev.cpu, ev.idx, ev.ret, ev.ts_ns, ev.comm, ev.fun, out);
}

void StepMatcher::Feed(TraceKind kind, int pid, int cpu, int idx, int ret, uint64_t ts_ns,
                       std::string_view comm, std::string_view fun, std::vector<TraceStep>* out) {
  if (kind == TraceKind::kLost)
    return;
  std::vector<TraceStep>& stack = stacks_[pid];
  if (kind != TraceKind::kExit) {
    if (stack.size() >= kMaxDepth) {  // a task cannot nest this deep: stale
      unmatched_enters_ += stack.size();
      stack.clear();
    }
    TraceStep& step = stack.emplace_back();
    step.cpu = cpu;
    step.idx = idx;
    auto name = names_.find(fun);
    if (name == names_.end()) {
      const size_t id = names_.size() + 1;
      name = names_.emplace(fun, static_cast<uint16_t>(id <= UINT16_MAX ? id : 0)).first;
    }
    step.fun = name->first;
    step.fun_id = name->second;
    step.where = ClassifyTask(comm, cpu);
    step.multi = kind == TraceKind::kMultiEnter;
    step.begin_ns = ts_ns;
    return;
  }
  bool matched = false;
  for (size_t i = stack.size(); i-- > 0;) {
    if (stack[i].cpu != cpu || stack[i].idx != idx)
      continue;
    unmatched_enters_ += stack.size() - i - 1;
    TraceStep& step = out->emplace_back(std::move(stack[i]));
    stack.resize(i);
    step.ret = ret;
    step.end_ns = ts_ns < step.begin_ns ? step.begin_ns : ts_ns;
    matched = true;
    break;
  }
  if (!matched)
    ++unmatched_exits_;
  if (stack.empty() && stacks_.size() > kKeptStacks)
    stacks_.erase(pid);
}

size_t StepMatcher::open() const {
  size_t n = 0;
  for (const auto& [pid, s] : stacks_)
    n += s.size();
  return n;
}

}  // namespace cpuhp
