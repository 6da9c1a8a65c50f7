// SPDX-License-Identifier: GPL-2.0
#include "config/config_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "util/json_file.h"

namespace cpuhp {
namespace {

using nlohmann::json;

constexpr size_t kMaxRendered = 40;  // bytes of a value quoted in an error line

struct DurationUnit {
  const char* name;
  uint64_t ns;
};
// Largest first: the order a duration must be written in.
constexpr DurationUnit kDurationUnits[] = {
    {"d", 86400000000000ull}, {"h", 3600000000000ull}, {"m", 60000000000ull}, {"s", 1000000000ull},
    {"ms", 1000000ull},       {"us", 1000ull},         {"ns", 1ull},
};
constexpr const char* kUnitHint = "(use ns, us, ms, s, m, h or d)";

// ---- Error lines: one line, whatever the input held ----

// Cuts to kMaxRendered bytes on a UTF-8 character boundary.
std::string Truncate(std::string s) {
  if (s.size() <= kMaxRendered)
    return s;
  size_t cut = kMaxRendered - 3;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80)
    --cut;
  s.resize(cut);
  return s + "...";
}

std::string DumpString(const std::string& s) {
  return json(s).dump(-1, ' ', false, json::error_handler_t::replace);
}

// Compact JSON that stops growing past the limit, so a huge or deeply nested
// value costs little (the recursion depth is bounded by the limit too).
void RenderTo(const json& v, std::string* out) {
  if (out->size() > kMaxRendered)
    return;
  if (v.is_object() || v.is_array()) {
    *out += v.is_object() ? '{' : '[';
    bool first = true;
    for (auto it = v.begin(); it != v.end() && out->size() <= kMaxRendered; ++it) {
      if (!first)
        *out += ',';
      first = false;
      if (v.is_object())
        *out += DumpString(it.key()) + ":";
      RenderTo(it.value(), out);
    }
    *out += v.is_object() ? '}' : ']';
  } else if (v.is_number_float() && !std::isfinite(v.get<double>())) {
    // dump() would print "null"; only a document built in code gets here.
    double d = v.get<double>();
    *out += std::isnan(d) ? "nan" : d > 0 ? "inf" : "-inf";
  } else {
    *out += v.dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

std::string Quote(const std::string& s) {
  return Truncate(DumpString(s));
}

}  // namespace

std::string Render(const json& v) {
  std::string s;
  RenderTo(v, &s);
  return Truncate(s);
}

// A key as a JSON pointer token, control characters escaped, cut to the
// rendering limit.
std::string PathKey(const std::string& key) {
  return Truncate(JsonPointerToken(key.substr(0, kMaxRendered + 1)));
}

// ---- Durations ----

bool ParseDurationReason(std::string_view text, uint64_t* ns, std::string* reason) {
  if (text.empty()) {
    *reason = "expected a duration like \"30s\", \"2h30m\" or \"0\", not an empty string";
    return false;
  }
  if (text == "0") {
    *ns = 0;
    return true;
  }
  const char* const end = text.data() + text.size();
  const char* p = text.data();
  uint64_t total = 0;
  int last_unit = -1;
  while (p < end) {
    uint64_t n = 0;
    auto [num_end, ec] = std::from_chars(p, end, n);
    if (num_end == p) {
      *reason = *p == '-' ? "negative durations are not allowed"
                          : "expected a number before " + Quote(std::string(p, end));
      return false;
    }
    std::string number(p, num_end);
    p = num_end;
    if (p < end && *p == '.') {
      *reason = "fractions are not allowed (write 1h30m, 1500ms)";
      return false;
    }
    const char* unit_end = std::find_if(p, end, [](char c) { return c >= '0' && c <= '9'; });
    std::string unit(p, unit_end);
    p = unit_end;
    if (unit.empty()) {
      *reason = "missing unit after \"" + number + "\" " + kUnitHint;
      return false;
    }
    int u = 0;
    while (u < static_cast<int>(std::size(kDurationUnits)) && unit != kDurationUnits[u].name)
      ++u;
    if (u == static_cast<int>(std::size(kDurationUnits))) {
      *reason = "unknown unit " + Quote(unit) + " " + kUnitHint;
      return false;
    }
    if (u <= last_unit) {
      *reason = "units must come largest first, each at most once (e.g. 2h30m)";
      return false;
    }
    last_unit = u;
    uint64_t part = 0;
    if (ec != std::errc() || __builtin_mul_overflow(n, kDurationUnits[u].ns, &part) ||
        __builtin_add_overflow(total, part, &total)) {
      *reason = "too large (the maximum is " + FormatDuration(UINT64_MAX) + ")";
      return false;
    }
  }
  *ns = total;
  return true;
}

// ---- Typed getters: each checks the JSON type and range, or fails naming the key ----

bool AsU64(const json& j, uint64_t* out) {
  if (j.is_number_unsigned())
    *out = j.get<uint64_t>();
  else if (j.is_number_integer() && j.get<int64_t>() >= 0)
    *out = static_cast<uint64_t>(j.get<int64_t>());
  else
    return false;  // negative, boolean, float (1.0, 1e3, integers past 2^64-1), other types
  return true;
}

std::string IntegerRange(int64_t lo, uint64_t hi) {
  return "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
}

bool GetU64(const Value& v, uint64_t hi, uint64_t* out) {
  uint64_t u = 0;
  if (!AsU64(v.j, &u) || u > hi)
    return v.Got("expected " + IntegerRange(0, hi));
  *out = u;
  return true;
}

bool GetInt(const Value& v, int lo, int hi, int* out) {
  int64_t i = 0;
  if (v.j.is_number_unsigned())
    i = static_cast<int64_t>(std::min<uint64_t>(v.j.get<uint64_t>(), INT64_MAX));
  else if (v.j.is_number_integer())
    i = v.j.get<int64_t>();
  if (!v.j.is_number_integer() || i < lo || i > hi)
    return v.Got("expected " + IntegerRange(lo, static_cast<uint64_t>(hi)));
  *out = static_cast<int>(i);
  return true;
}

bool GetFraction(const Value& v, double* out) {
  // !(>= && <=) also catches NaN.
  if (!v.j.is_number() || !(v.j.get<double>() >= 0.0 && v.j.get<double>() <= 1.0))
    return v.Got("expected a number from 0 to 1");
  *out = v.j.get<double>();
  return true;
}

bool GetBool(const Value& v, bool* out) {
  if (!v.j.is_boolean())
    return v.Got("expected true or false");
  *out = v.j.get<bool>();
  return true;
}

bool GetDuration(const Value& v, uint64_t* out) {
  if (!v.j.is_string())
    return v.Got("expected a duration string like \"24h\", \"90m\", \"500ms\" or \"0\"");
  std::string reason;
  return ParseDurationReason(v.j.get_ref<const std::string&>(), out, &reason) || v.Got(reason);
}

bool GetPath(const Value& v, const char* what, PathRule rule, std::string* out) {
  const std::string expected = std::string("expected ") + what;
  if (!v.j.is_string())
    return v.Got(expected);
  const std::string& s = v.j.get_ref<const std::string&>();
  if ((rule != PathRule::kMayBeEmpty && s.empty()) || (rule == PathRule::kAbsolute && s[0] != '/'))
    return v.Got(expected);
  if (s.find('\0') != std::string::npos)  // open() would silently use a shorter path
    return v.Got("a path cannot contain a NUL character");
  if (!IsUtf8(s))  // it goes into reports and checkpoints: JSON is UTF-8
    return v.Got("a path must be valid UTF-8");
  *out = s;
  return true;
}

bool ApplyObject(const Value& v, std::span<const Field> fields, Config* c) {
  if (!v.j.is_object()) {
    if (v.path.empty())  // the whole document: its type says enough
      return v.Fail(std::string("expected a JSON object, got ") + v.j.type_name());
    return v.Got("expected a JSON object");
  }
  for (auto it = v.j.begin(); it != v.j.end(); ++it) {
    const Value child = v.At(PathKey(it.key()), it.value());
    auto f = std::find_if(fields.begin(), fields.end(),
                          [&](const Field& f) { return it.key() == f.key; });
    if (f == fields.end()) {
      std::string known;
      for (const Field& k : fields)
        known += std::string(known.empty() ? "" : ", ") + k.key;
      return child.Fail("unknown key (known keys: " + known + ")");
    }
    if (!f->set(child, c))
      return false;
  }
  return true;
}

bool ParseDuration(const std::string& text, uint64_t* ns, std::string* err) {
  std::string reason;
  if (ParseDurationReason(text, ns, &reason))
    return true;
  if (err)
    *err = "bad duration " + Quote(text) + ": " + reason;
  return false;
}

std::string FormatDuration(uint64_t ns) {
  if (ns == 0)
    return "0";
  std::string s;
  // From hours down: "24h" reads better than "1d" in a report.
  for (size_t i = 1; i < std::size(kDurationUnits); ++i) {
    const DurationUnit& u = kDurationUnits[i];
    if (ns >= u.ns) {
      s += std::to_string(ns / u.ns) + u.name;
      ns %= u.ns;
    }
  }
  return s;
}

}  // namespace cpuhp
