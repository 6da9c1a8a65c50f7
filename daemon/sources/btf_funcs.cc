// SPDX-License-Identifier: GPL-2.0
#include "sources/btf_funcs.h"

#include <fcntl.h>
#include <linux/btf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

namespace cpuhp {

namespace {

constexpr uint16_t kBtfMagic = 0xeB9F;

// The bytes that follow a btf_type of `kind` with `vlen` entries
// (include/uapi/linux/btf.h); -1 for a kind this walk does not know.
int64_t BtfTrailer(unsigned kind, unsigned vlen) {
  switch (kind) {
    case BTF_KIND_INT:
      return 4;
    case BTF_KIND_PTR:
    case BTF_KIND_FWD:
    case BTF_KIND_TYPEDEF:
    case BTF_KIND_VOLATILE:
    case BTF_KIND_CONST:
    case BTF_KIND_RESTRICT:
    case BTF_KIND_FUNC:
    case BTF_KIND_FLOAT:
    case BTF_KIND_TYPE_TAG:
      return 0;
    case BTF_KIND_ARRAY:
      return sizeof(struct btf_array);
    case BTF_KIND_STRUCT:
    case BTF_KIND_UNION:
      return int64_t{vlen} * int64_t{sizeof(struct btf_member)};
    case BTF_KIND_ENUM:
      return int64_t{vlen} * int64_t{sizeof(struct btf_enum)};
    case BTF_KIND_FUNC_PROTO:
      return int64_t{vlen} * int64_t{sizeof(struct btf_param)};
    case BTF_KIND_VAR:
      return sizeof(struct btf_var);
    case BTF_KIND_DATASEC:
      return int64_t{vlen} * int64_t{sizeof(struct btf_var_secinfo)};
    case BTF_KIND_DECL_TAG:
      return sizeof(struct btf_decl_tag);
    case BTF_KIND_ENUM64:
      return int64_t{vlen} * int64_t{sizeof(struct btf_enum64)};
    default:
      return -1;
  }
}

// The blob, or a file read through one reused window: the walk reads each
// section front to back, so a window never holds more than it needs.
class BtfBytes {
 public:
  explicit BtfBytes(std::string_view blob) : whole_(blob), size_(blob.size()) {}
  BtfBytes(int fd, uint64_t size, size_t window) : fd_(fd), size_(size), buf_(window) {}

  uint64_t size() const { return size_; }
  const std::string& error() const { return error_; }

  // The bytes at [off, off + len), or nullptr with error() set. After a
  // call, avail(off) of the same off says how many bytes follow it in hand.
  const char* At(uint64_t off, size_t len) {
    if (off + len > size_) {
      error_ = "ends before byte " + std::to_string(off + len);
      return nullptr;
    }
    if (fd_ < 0)
      return whole_.data() + off;
    if (off < start_ || off + len > start_ + filled_) {
      if (len > buf_.size()) {
        error_ = "a record of " + std::to_string(len) + " bytes is longer than the window";
        return nullptr;
      }
      const size_t want = static_cast<size_t>(std::min<uint64_t>(buf_.size(), size_ - off));
      size_t got = 0;
      while (got < want) {
        ssize_t n = pread(fd_, buf_.data() + got, want - got, static_cast<off_t>(off + got));
        if (n < 0 && errno == EINTR)
          continue;
        if (n <= 0) {
          error_ =
              n < 0 ? std::string("cannot read: ") + std::strerror(errno)
                    : "ends at byte " + std::to_string(off + got) + " of " + std::to_string(size_);
          return nullptr;
        }
        got += static_cast<size_t>(n);
      }
      start_ = off;
      filled_ = got;
    }
    return buf_.data() + (off - start_);
  }
  uint64_t avail(uint64_t off) const { return fd_ < 0 ? size_ - off : start_ + filled_ - off; }
  bool window_starts_at(uint64_t off) const { return fd_ < 0 || start_ == off; }

 private:
  std::string_view whole_;
  int fd_ = -1;
  uint64_t size_ = 0;
  std::vector<char> buf_;
  uint64_t start_ = 0;
  size_t filled_ = 0;
  std::string error_;
};

bool Walk(BtfBytes* b, const std::vector<std::string>& names, std::vector<uint32_t>* ids,
          std::string* err) {
  ids->assign(names.size(), 0);
  struct btf_header h;
  const char* p = b->At(0, sizeof(h));
  if (!p) {
    *err = "not BTF: shorter than its header";
    return false;
  }
  std::memcpy(&h, p, sizeof(h));
  if (h.magic != kBtfMagic) {
    *err = h.magic == 0x9FEB ? "BTF of the other byte order" : "not BTF (magic)";
    return false;
  }
  if (h.version != BTF_VERSION || h.hdr_len < sizeof(h)) {
    *err = "BTF version " + std::to_string(h.version) + ", header of " + std::to_string(h.hdr_len) +
           " bytes: not one this walk knows";
    return false;
  }
  const uint64_t types = uint64_t{h.hdr_len} + h.type_off, types_end = types + h.type_len;
  const uint64_t strs = uint64_t{h.hdr_len} + h.str_off, strs_end = strs + h.str_len;
  if (types_end > b->size() || strs_end > b->size()) {
    *err = "BTF sections beyond its " + std::to_string(b->size()) + " bytes";
    return false;
  }

  // The string section first: the offsets of the strings equal to a name
  // (BTF's strings are deduplicated, but nothing here relies on it).
  size_t longest = 0;
  for (const std::string& n : names)
    longest = std::max(longest, n.size());
  std::vector<std::pair<uint32_t, size_t>> hits;  // name_off, index in names
  for (uint64_t o = strs; o < strs_end;) {
    const char* s = b->At(o, 1);
    if (!s) {
      *err = "BTF string section: " + b->error();
      return false;
    }
    const uint64_t in_hand = std::min(b->avail(o), strs_end - o);
    const char* nul = static_cast<const char*>(std::memchr(s, 0, in_hand));
    if (!nul) {
      if (in_hand == strs_end - o)
        break;  // an unterminated last string: no name ends there
      if (b->window_starts_at(o)) {
        *err = "BTF string at " + std::to_string(o - strs) + " longer than the read window";
        return false;
      }
      if (!b->At(o, static_cast<size_t>(std::min<uint64_t>(strs_end - o, in_hand + 1)))) {
        *err = "BTF string section: " + b->error();
        return false;
      }
      continue;  // the window now starts at this string
    }
    const size_t len = static_cast<size_t>(nul - s);
    if (len && len <= longest) {
      const std::string_view str(s, len);
      for (size_t i = 0; i < names.size(); ++i)
        if (str == names[i])
          hits.emplace_back(static_cast<uint32_t>(o - strs), i);
    }
    o += len + 1;
  }

  // Then every type, FUNCs checked by their name's offset; ids count from 1
  // (0 is void).
  uint32_t id = 0;
  for (uint64_t o = types; o < types_end;) {
    ++id;
    struct btf_type t;
    const char* tp = types_end - o >= sizeof(t) ? b->At(o, sizeof(t)) : nullptr;
    if (!tp) {
      *err = "BTF type section: truncated type at " + std::to_string(o - types);
      return false;
    }
    std::memcpy(&t, tp, sizeof(t));
    const unsigned kind = BTF_INFO_KIND(t.info);
    const int64_t trailer = BtfTrailer(kind, BTF_INFO_VLEN(t.info));
    if (trailer < 0) {
      *err = "BTF kind " + std::to_string(kind) + " at " + std::to_string(o - types) +
             ": not one this walk knows";
      return false;
    }
    if (kind == BTF_KIND_FUNC)
      for (const auto& [off, i] : hits)
        if (off == t.name_off && !(*ids)[i])
          (*ids)[i] = id;
    o += sizeof(t) + static_cast<uint64_t>(trailer);
  }
  return true;
}

}  // namespace

bool BtfHasFuncs(std::string_view btf, const std::vector<std::string>& names,
                 std::vector<uint32_t>* ids, std::string* err) {
  BtfBytes b(btf);
  return Walk(&b, names, ids, err);
}

bool BtfFileHasFuncs(const std::string& path, const std::vector<std::string>& names,
                     std::vector<uint32_t>* ids, std::string* err, size_t window) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    *err = path + ": cannot open: " + std::strerror(errno);
    if (fd >= 0)
      close(fd);
    return false;
  }
  BtfBytes b(fd, static_cast<uint64_t>(st.st_size),
             std::max<size_t>(window, sizeof(struct btf_header)));
  const bool ok = Walk(&b, names, ids, err);
  close(fd);
  if (!ok)
    *err = path + ": " + *err;
  return ok;
}

}  // namespace cpuhp
