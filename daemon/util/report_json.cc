// SPDX-License-Identifier: GPL-2.0
#include "util/report_json.h"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdint>
#include <cstdio>

namespace cpuhp::report_json {

using nlohmann::json;

std::string Fmt(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  va_list again;
  va_copy(again, ap);
  char buf[256];
  int n = std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  std::string out;
  if (n < 0) {
    va_end(again);
    return out;
  }
  if (static_cast<size_t>(n) < sizeof(buf)) {
    va_end(again);
    return std::string(buf, static_cast<size_t>(n));
  }
  out.resize(static_cast<size_t>(n) + 1);
  std::vsnprintf(out.data(), out.size(), fmt, again);
  va_end(again);
  out.resize(static_cast<size_t>(n));
  return out;
}

const json& Get(const json& j, const char* key) {
  static const json kNull;
  if (!j.is_object())
    return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

const json& Path(const json& j, std::initializer_list<const char*> keys) {
  const json* at = &j;
  for (const char* k : keys)
    at = &Get(*at, k);
  return *at;
}

std::optional<double> OptNum(const json& j, const char* key) {
  const json& v = Get(j, key);
  if (!v.is_number())
    return std::nullopt;
  return v.get<double>();
}

double Num(const json& j, const char* key, double fallback) {
  return OptNum(j, key).value_or(fallback);
}

std::string MsText(double ns) {
  return Fmt("%.3f", ns / 1e6);
}

uint64_t U64(const json& j, const char* key) {
  const json& v = Get(j, key);
  if (v.is_number_unsigned())
    return v.get<uint64_t>();
  if (v.is_number_integer())
    return v.get<int64_t>() > 0 ? static_cast<uint64_t>(v.get<int64_t>()) : 0;
  if (v.is_number_float()) {
    double d = v.get<double>();
    // 2^64 and beyond (1e300 in a hand-edited report) reads as the largest
    // count, like report.cc's reader; negatives and NaN read 0.
    if (!(d > 0))
      return 0;
    return d < 18446744073709551616.0 ? static_cast<uint64_t>(d) : UINT64_MAX;
  }
  return 0;
}

std::string Str(const json& j, const char* key, const std::string& fallback) {
  const json& v = Get(j, key);
  return v.is_string() ? v.get<std::string>() : fallback;
}

bool IsSimulated(const nlohmann::json& report) {
  return Str(Get(report, "run"), "clock") == "simulated";
}

bool IsSummary(const json& j) {
  return j.is_object() && Get(j, "count").is_number() && Get(j, "p50_ns").is_number();
}

std::string SourceStatus(const json& report, const char* name, std::string* reason) {
  const json& s = Path(report, {"timing_sources", name});
  if (!s.is_object())
    return "absent";
  std::string status = Str(s, "status", "unknown");
  if (reason)
    *reason = Str(s, "reason");
  return status;
}

std::string XmlEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if ((static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
          out += ' ';
        else
          out += c;
    }
  }
  return out;
}

std::string TermSafe(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f)
      out += Fmt("\\x%02x", u);
    else
      out += c;
  }
  return out;
}

std::string MarkdownCell(const std::string& s) {
  std::string out;
  for (char c : TermSafe(s)) {
    switch (c) {
      case '|':
        out += "\\|";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Wrap(const std::string& text, size_t width, const std::string& first,
                 const std::string& rest) {
  std::string out;
  std::string line = first;
  size_t bare = first.size();  // the line holds no word yet
  auto flush = [&] {
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
    line = rest;
    bare = rest.size();
  };
  for (size_t at = 0; at < text.size();) {
    if (text[at] == ' ') {
      at++;
      continue;
    }
    size_t end = std::min(text.find(' ', at), text.size());
    std::string word = text.substr(at, end - at);
    at = end;
    while (!word.empty()) {
      const size_t sep = line.size() > bare ? 1 : 0;
      if (line.size() + sep + word.size() <= width) {
        line += (sep ? " " : "") + word;
        word.clear();
      } else if (sep || line.size() >= width) {
        flush();
        if (line.size() >= width)  // no room after the indent: none then
          line.clear(), bare = 0;
      } else {
        size_t cut = width - line.size();
        while (cut > 1 && (static_cast<unsigned char>(word[cut]) & 0xc0) == 0x80)
          cut--;
        line += word.substr(0, cut);
        word.erase(0, cut);
        flush();
      }
    }
  }
  if (line.size() > bare || out.empty())
    flush();
  return out;
}

bool SweepLevels::all_complete() const {
  for (const SweepLevel& l : levels)
    if (!l.complete)
      return false;
  return true;
}

SweepLevels ReadSweepLevels(const nlohmann::json& report) {
  SweepLevels out;
  const nlohmann::json& sched = Path(report, {"cpus", "schedule"});
  const nlohmann::json& levels = Get(sched, "levels");
  if (!levels.is_array())
    return out;
  out.sweep = true;
  out.target_ops = 2 * U64(sched, "cycles_per_level");
  std::vector<int64_t> complete;
  const nlohmann::json& done = Get(sched, "levels_complete");
  if (done.is_array())
    for (const nlohmann::json& l : done)
      if (l.is_number_integer())
        complete.push_back(l.get<int64_t>());
  // Operations per online count before the write, per direction.
  auto count_at = [&](const char* dir, int64_t online) {
    const nlohmann::json& rows = Path(report, {"per_online_count", dir});
    if (rows.is_array())
      for (const nlohmann::json& r : rows)
        if (Get(r, "online_cpus").is_number_integer() &&
            Get(r, "online_cpus").get<int64_t>() == online)
          return U64(r, "count");
    return uint64_t{0};
  };
  for (const nlohmann::json& l : levels) {
    if (!l.is_number_integer())
      continue;
    SweepLevel s;
    s.online = l.get<int64_t>();
    s.ops = count_at("offline", s.online) + count_at("online", s.online - 1);
    s.complete = std::find(complete.begin(), complete.end(), s.online) != complete.end();
    out.levels.push_back(s);
  }
  return out;
}

std::string SweepShortfall(const SweepLevels& sweep) {
  std::string short_levels, missing;
  size_t n_missing = 0;
  for (const SweepLevel& l : sweep.levels) {
    if (l.complete)
      continue;
    if (l.ops > 0) {
      short_levels += Fmt("%slevel %" PRId64 " short (%" PRIu64 " of %" PRIu64 " operations)",
                          short_levels.empty() ? "" : ", ", l.online, l.ops, sweep.target_ops);
    } else {
      missing += Fmt("%s%" PRId64, missing.empty() ? "" : ", ", l.online);
      n_missing++;
    }
  }
  if (!missing.empty())
    missing = (n_missing > 1 ? "levels " : "level ") + missing + " not measured";
  return short_levels + (!short_levels.empty() && !missing.empty() ? "; " : "") + missing;
}

}  // namespace cpuhp::report_json
