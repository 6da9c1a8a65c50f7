// SPDX-License-Identifier: GPL-2.0
// A config value under check (config_keys.cc): where it is, so that every
// problem is one line naming the key path ("t.json: /sweep/levels/1: ...");
// the typed getters that check a value's type and range; the walk over an
// object's keys; and the duration syntax ("2h30m") with its reasons.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "config/config.h"

namespace cpuhp {

// A value as an error line shows it: compact JSON, cut to a few dozen bytes.
std::string Render(const nlohmann::json& v);
// A key as a JSON pointer token, control characters escaped, cut to the
// rendering limit.
std::string PathKey(const std::string& key);

// A JSON value under check: where it is, for the one-line error.
struct Value {
  const std::string& source;
  std::string* err;
  const nlohmann::json& j;
  std::string path;

  Value At(const std::string& key, const nlohmann::json& child) const {
    return {source, err, child, path + "/" + key};
  }
  // "f.json: /sweep/victim: ..." for a file; an option ("--victim") stands
  // for its key: "--victim: ...".
  bool Fail(const std::string& problem) const {
    const bool option = source.rfind("--", 0) == 0 && !path.empty();
    *err = source + ": " + (option ? "" : (path.empty() ? "/" : path) + ": ") + problem;
    return false;
  }
  bool Got(const std::string& problem) const { return Fail(problem + ", got " + Render(j)); }
};

// Why `text` is not a duration (*reason, one line); the public form is
// ParseDuration (config.h).
bool ParseDurationReason(std::string_view text, uint64_t* ns, std::string* reason);

// ---- Typed getters: each checks the JSON type and range, or fails naming the key ----

bool AsU64(const nlohmann::json& j, uint64_t* out);
std::string IntegerRange(int64_t lo, uint64_t hi);
bool GetU64(const Value& v, uint64_t hi, uint64_t* out);
bool GetInt(const Value& v, int lo, int hi, int* out);
bool GetFraction(const Value& v, double* out);
bool GetBool(const Value& v, bool* out);

// Sets *index to the position of the string in `names`.
template <size_t N>
bool GetChoice(const Value& v, const char* const (&names)[N], size_t* index) {
  for (size_t i = 0; i < N && v.j.is_string(); ++i) {
    if (v.j.get_ref<const std::string&>() == names[i]) {
      *index = i;
      return true;
    }
  }
  std::string what = "expected one of";
  for (size_t i = 0; i < N; ++i)
    what += std::string(i ? ", \"" : " \"") + names[i] + "\"";
  return v.Got(what);
}

bool GetDuration(const Value& v, uint64_t* out);

enum class PathRule { kMayBeEmpty, kNonEmpty, kAbsolute };
bool GetPath(const Value& v, const char* what, PathRule rule, std::string* out);

// ---- Objects: one table per level, so the known keys live in one place ----

using Setter = bool (*)(const Value& v, Config* c);
struct Field {
  const char* key;
  Setter set;
};

// Applies each key of the object `v` through its field; an unknown key is
// refused naming the known ones.
bool ApplyObject(const Value& v, std::span<const Field> fields, Config* c);

}  // namespace cpuhp
