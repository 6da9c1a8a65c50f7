// SPDX-License-Identifier: GPL-2.0
#include "util/json_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

namespace cpuhp {

std::string JsonPointerToken(const std::string& key) {
  std::string out;
  for (char c : key) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

using nlohmann::json;

constexpr int kMaxDepth = 64;  // ours need 4; bounds any recursion on the document

// "line L, column C" of a byte offset (both 1-based, columns in bytes).
std::string Where(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  size_t line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(offset - line_start + 1);
}

// The offset of the bracket that opens nesting level kMaxDepth + 1, or npos.
// Runs before the parser so no later step (dump, compare, destroy) ever sees a
// deep document.
size_t TooDeepAt(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth)
        return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::string_view::npos;
}

// nlohmann's message without its prefix and without the "last read" echo of
// the input (which may hold raw binary), in printable ASCII.
std::string ShortReason(const json::exception& ex) {
  std::string m = ex.what();
  size_t p = m.find("] ");
  if (p != std::string::npos)
    m.erase(0, p + 2);  // "[json.exception.parse_error.101] "
  p = m.find(" - ");
  if (p != std::string::npos)
    m.erase(0, p + 3);  // "parse error at line 1, column 2: syntax error while parsing value - "
  size_t last = m.find("; last read: ");
  if (last != std::string::npos) {
    size_t expected = m.rfind("; expected ");
    m.erase(last,
            expected != std::string::npos && expected > last ? expected - last : std::string::npos);
  }
  for (char& c : m)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e)
      c = '?';
  return m;
}

// Builds the document through the SAX interface rather than json::parse:
// json::parse throws "number overflow" (1e400) without a position; the SAX
// parse_error callback has one for every error.
class DomBuilder : public nlohmann::json_sax<json> {
 public:
  DomBuilder(json* root, size_t max_array_elements)
      : root_(root), max_array_elements_(max_array_elements) {}

  bool null() override { return Add(nullptr); }
  bool boolean(bool b) override { return Add(b); }
  bool number_integer(number_integer_t i) override { return Add(i); }
  bool number_unsigned(number_unsigned_t u) override { return Add(u); }
  bool number_float(number_float_t d, const string_t&) override { return Add(d); }
  bool string(string_t& s) override { return Add(std::move(s)); }
  bool binary(binary_t&) override { return false; }  // the JSON lexer never produces one
  bool start_object(std::size_t) override { return Open(json::object()); }
  bool key(string_t& k) override {
    // The last of two equal keys used to win silently: a config with
    // "iterations" twice is almost always a mistake, so is a report with two
    // "totals". Refused, naming the key's path.
    if (stack_.back()->contains(k)) {
      duplicate_key = Pointer() + "/" + JsonPointerToken(k);
      return false;
    }
    keys_.back() = k;
    return (slot_ = &(*stack_.back())[k]) != nullptr;
  }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override { return Open(json::array()); }
  bool end_array() override { return Close(); }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const json::exception& ex) override {
    // parse_error::byte is the 1-based index of the offending byte. The other
    // error (406, number overflow) gives the offset just past the number:
    // point at its first byte instead.
    const auto* pe = dynamic_cast<const json::parse_error*>(&ex);
    if (pe)
      error_offset = pe->byte > 0 ? pe->byte - 1 : 0;
    else
      error_offset = position >= last_token.size() ? position - last_token.size() : 0;
    error_reason = ShortReason(ex);
    return false;
  }

  size_t error_offset = 0;
  std::string error_reason;
  std::string duplicate_key;  // its JSON pointer, when that stopped the parse
  bool array_too_long = false;
  std::string long_array;  // its JSON pointer ("" for the top level)

 private:
  json* Place(json v) {
    if (stack_.empty()) {
      *root_ = std::move(v);
      return root_;
    }
    if (stack_.back()->is_array()) {
      if (stack_.back()->size() >= max_array_elements_) {
        array_too_long = true;
        long_array = Pointer();
        return nullptr;
      }
      stack_.back()->push_back(std::move(v));
      return &stack_.back()->back();
    }
    *slot_ = std::move(v);
    return slot_;
  }
  bool Add(json v) { return Place(std::move(v)) != nullptr; }
  bool Open(json v) {
    json* placed = Place(std::move(v));
    if (!placed)
      return false;
    stack_.push_back(placed);
    keys_.emplace_back();
    return true;
  }
  bool Close() {
    stack_.pop_back();
    keys_.pop_back();
    return true;
  }
  // The JSON pointer of the innermost open container.
  std::string Pointer() const {
    std::string p;
    for (size_t i = 0; i + 1 < stack_.size(); ++i)
      p += "/" + (stack_[i]->is_array() ? std::to_string(stack_[i]->size() - 1)
                                        : JsonPointerToken(keys_[i]));
    return p;
  }

  json* root_;
  size_t max_array_elements_;
  std::vector<json*> stack_;       // open containers; only the top one grows
  json* slot_ = nullptr;           // the value of the last key read
  std::vector<std::string> keys_;  // per open container: its last key read
};

}  // namespace

bool ReadSmallFd(int fd, const std::string& path, size_t max_bytes, std::string* text,
                 std::string* err, int* err_no) {
  auto fail = [&](int e, std::string why) {
    if (err_no)
      *err_no = e;
    *err = path + ": " + why;
    return false;
  };
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      const int e = errno;
      return fail(e, std::string("cannot read: ") + std::strerror(e));
    }
    if (n == 0)
      return true;
    text->append(buf, static_cast<size_t>(n));
    // Read-and-count, not fstat: pipes and /dev/zero have no useful size.
    if (text->size() > max_bytes)
      return fail(EFBIG, "too large (more than " +
                             (max_bytes % (1 << 20) == 0 ? std::to_string(max_bytes >> 20) + " MiB"
                                                         : std::to_string(max_bytes) + " bytes") +
                             ")");
  }
}

bool ReadSmallFile(const std::string& path, size_t max_bytes, std::string* text, std::string* err,
                   int* err_no, FileKind kind) {
  auto fail = [&](int e, std::string why) {
    if (err_no)
      *err_no = e;
    *err = path + ": " + why;
    return false;
  };
  // O_NONBLOCK: opening a FIFO nobody writes would block forever.
  int fd =
      open(path.c_str(), O_RDONLY | O_CLOEXEC | (kind == FileKind::kRegularOnly ? O_NONBLOCK : 0));
  if (fd < 0) {
    const int e = errno;
    return fail(e, std::string("cannot read: ") + std::strerror(e));
  }
  if (kind == FileKind::kRegularOnly) {
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      close(fd);
      return fail(EINVAL, "not a regular file");
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  }
  const bool ok = ReadSmallFd(fd, path, max_bytes, text, err, err_no);
  close(fd);
  return ok;
}

bool ParseJsonText(const std::string& text, const std::string& path, json* doc, std::string* err,
                   size_t max_array_elements) {
  if (size_t deep = TooDeepAt(text); deep != std::string_view::npos) {
    *err = path + ": invalid JSON at " + Where(text, deep) + ": nested deeper than " +
           std::to_string(kMaxDepth) + " levels";
    return false;
  }
  DomBuilder builder(doc, max_array_elements);
  if (!json::sax_parse(text, &builder, json::input_format_t::json, /*strict=*/true,
                       /*ignore_comments=*/false)) {
    if (!builder.duplicate_key.empty())
      *err = path + ": " + builder.duplicate_key + ": duplicate key (each key once)";
    else if (builder.array_too_long)
      *err = path + ": " + (builder.long_array.empty() ? "/" : builder.long_array) +
             ": more than " + std::to_string(max_array_elements) + " elements in one array";
    else
      *err = path + ": invalid JSON at " + Where(text, builder.error_offset) + ": " +
             builder.error_reason;
    return false;
  }
  return true;
}

std::string DumpJson(const json& j, int indent) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

bool IsUtf8(const std::string& s) {
  try {
    (void)json(s).dump();
    return true;
  } catch (const json::type_error&) {
    return false;
  }
}

bool LoadJsonFile(const std::string& path, size_t max_bytes, json* doc, std::string* err) {
  std::string text;
  return ReadSmallFile(path, max_bytes, &text, err) && ParseJsonText(text, path, doc, err);
}

bool ReadU64Field(const nlohmann::json& obj, const std::string& path, const char* key,
                  uint64_t* out, std::string* msg) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    *msg = path + key + ": missing";
    return false;
  }
  if (it->is_number_unsigned()) {
    *out = it->get<uint64_t>();
    return true;
  }
  if (it->is_number_integer() && it->get<int64_t>() >= 0) {
    *out = static_cast<uint64_t>(it->get<int64_t>());
    return true;
  }
  *msg = path + key + ": expected a non-negative integer";
  return false;
}

}  // namespace cpuhp
