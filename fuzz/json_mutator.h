// SPDX-License-Identifier: GPL-2.0
// A structure-aware libFuzzer mutator for JSON inputs (reports, configs):
// byte mutations rarely keep JSON valid, so most inputs never get past the
// parser. When the input parses, this one changes the document instead:
// replaces a value with one of another type or an extreme number, removes a
// key or an element, duplicates an element; then writes it back. Otherwise
// (and now and then anyway) it leaves the bytes to libFuzzer's mutators.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

// Weak: the replay build (replay_main.cc) has no libFuzzer and never mutates.
extern "C" __attribute__((weak)) size_t LLVMFuzzerMutate(uint8_t* data, size_t size,
                                                         size_t max_size);

namespace cpuhp_fuzz {

inline void CollectNodes(nlohmann::json* j, std::vector<nlohmann::json*>* out) {
  out->push_back(j);
  if (j->is_structured())
    for (auto& v : *j)
      CollectNodes(&v, out);
}

inline nlohmann::json OddValue(std::mt19937_64& rng) {
  using nlohmann::json;
  switch (rng() % 16) {
    case 0:
      return nullptr;
    case 1:
      return rng() % 2 == 0;
    case 2:
      return -1;
    case 3:
      return 0;
    case 4:
      return std::numeric_limits<uint64_t>::max();
    case 5:
      return std::numeric_limits<int64_t>::min();
    case 6:
      return 1e300;
    case 7:
      return -1.5;
    case 8:
      return 0.5;
    case 9:
      return "";
    case 10:
      return "ok";
    case 11:
      return json::array();
    case 12:
      return json::array({1, "a", nullptr});
    case 13:
      return json::object();
    case 14:
      return 1ull << (rng() % 64);
    default:
      return rng() % 100;
  }
}

// Deeper than the readers accept is left to the byte mutators (and keeps
// the recursion here bounded).
inline bool ShallowEnough(const uint8_t* data, size_t size) {
  int depth = 0;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '[' || data[i] == '{') {
      if (++depth > 64)
        return false;
    } else if (data[i] == ']' || data[i] == '}') {
      --depth;
    }
  }
  return true;
}

inline size_t MutateJson(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  using nlohmann::json;
  std::mt19937_64 rng(seed);
  if (rng() % 8 == 0 || !ShallowEnough(data, size))
    return LLVMFuzzerMutate(data, size, max_size);
  json doc = json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded())
    return LLVMFuzzerMutate(data, size, max_size);
  const int edits = 1 + static_cast<int>(rng() % 3);
  for (int e = 0; e < edits; ++e) {
    std::vector<json*> nodes;
    CollectNodes(&doc, &nodes);
    json* t = nodes[rng() % nodes.size()];
    switch (rng() % 4) {
      case 0:
        *t = OddValue(rng);
        break;
      case 1:  // remove a key or an element
        if (t->is_object() && !t->empty()) {
          auto it = t->begin();
          std::advance(it, static_cast<long>(rng() % t->size()));
          t->erase(it.key());
        } else if (t->is_array() && !t->empty()) {
          t->erase(rng() % t->size());
        }
        break;
      case 2:  // duplicate an element or a member (under a new key)
        if (t->is_array() && !t->empty()) {
          json copy = (*t)[rng() % t->size()];
          t->push_back(std::move(copy));
        } else if (t->is_object() && !t->empty()) {
          auto it = t->begin();
          std::advance(it, static_cast<long>(rng() % t->size()));
          json copy = it.value();
          (*t)[it.key() + "_"] = std::move(copy);
        }
        break;
      default:  // nudge a number
        if (t->is_number())
          *t = rng() % 2 ? json(-t->get<double>()) : json(t->get<double>() * 1e10);
        else
          *t = OddValue(rng);
        break;
    }
  }
  const std::string out = doc.dump();
  if (out.size() > max_size)
    return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

}  // namespace cpuhp_fuzz
