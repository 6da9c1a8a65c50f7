// SPDX-License-Identifier: GPL-2.0
#include "sources/btf_funcs.h"

#include <linux/btf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#ifdef CPUHP_HAVE_BPF
#include <bpf/btf.h>
#endif

namespace cpuhp {
namespace {

// A raw BTF blob written by hand, every kind with its trailer.
class BtfBlob {
 public:
  BtfBlob() : strs_(1, '\0') {}
  uint32_t Str(const std::string& s) {
    const uint32_t off = static_cast<uint32_t>(strs_.size());
    strs_.insert(strs_.end(), s.begin(), s.end());
    strs_.push_back('\0');
    return off;
  }
  // A type of `kind` named `name` ("" anonymous) with `vlen` entries and
  // `trailer` bytes after it (what the kind's layout says; zeros).
  void Type(const std::string& name, unsigned kind, unsigned vlen, size_t trailer) {
    struct btf_type t {};
    t.name_off = name.empty() ? 0 : Str(name);
    t.info = (kind << 24) | vlen;
    t.size = 4;
    Put(&t, sizeof(t));
    types_.resize(types_.size() + trailer, '\0');
  }
  void Put(const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    types_.insert(types_.end(), c, c + n);
  }
  std::string Build(uint16_t magic = 0xeB9F) const {
    struct btf_header h {};
    h.magic = magic;
    h.version = BTF_VERSION;
    h.hdr_len = sizeof(h);
    h.type_off = 0;
    h.type_len = static_cast<uint32_t>(types_.size());
    h.str_off = h.type_len;
    h.str_len = static_cast<uint32_t>(strs_.size());
    std::string out(reinterpret_cast<const char*>(&h), sizeof(h));
    out.append(types_.begin(), types_.end());
    out.append(strs_.begin(), strs_.end());
    return out;
  }

  std::vector<char> strs_;
  std::vector<char> types_;
};

// Every kind the walk knows, FUNCs among them, and names that are not FUNCs.
BtfBlob EveryKind() {
  BtfBlob b;
  b.Type("int", BTF_KIND_INT, 0, 4);
  b.Type("", BTF_KIND_PTR, 0, 0);
  b.Type("", BTF_KIND_ARRAY, 0, sizeof(struct btf_array));
  b.Type("bringup_cpu", BTF_KIND_STRUCT, 3, 3 * sizeof(struct btf_member));  // a struct, not a FUNC
  b.Type("u", BTF_KIND_UNION, 2, 2 * sizeof(struct btf_member));
  b.Type("e", BTF_KIND_ENUM, 5, 5 * sizeof(struct btf_enum));
  b.Type("fw", BTF_KIND_FWD, 0, 0);
  b.Type("td", BTF_KIND_TYPEDEF, 0, 0);
  b.Type("", BTF_KIND_VOLATILE, 0, 0);
  b.Type("", BTF_KIND_CONST, 0, 0);
  b.Type("", BTF_KIND_RESTRICT, 0, 0);
  b.Type("", BTF_KIND_FUNC_PROTO, 2, 2 * sizeof(struct btf_param));
  b.Type("takedown_cpu", BTF_KIND_FUNC, 1, 0);
  b.Type("take_cpu_down", BTF_KIND_VAR, 0, sizeof(struct btf_var));  // a variable of a FUNC's name
  b.Type(".data", BTF_KIND_DATASEC, 4, 4 * sizeof(struct btf_var_secinfo));
  b.Type("double", BTF_KIND_FLOAT, 0, 0);
  b.Type("tag", BTF_KIND_DECL_TAG, 0, sizeof(struct btf_decl_tag));
  b.Type("tt", BTF_KIND_TYPE_TAG, 0, 0);
  b.Type("e64", BTF_KIND_ENUM64, 2, 2 * sizeof(struct btf_enum64));
  b.Type("_cpu_up", BTF_KIND_FUNC, 1, 0);
  b.Str("cpu_up");  // a string of a wanted name that no type uses
  return b;
}

const std::vector<std::string> kNames = {"takedown_cpu", "_cpu_up",       "cpu_up",
                                         "bringup_cpu",  "take_cpu_down", "absent"};
// Type ids count from 1 in EveryKind's order: takedown_cpu is the 13th type,
// _cpu_up the 20th.
const std::vector<uint32_t> kWant = {13, 20, 0, 0, 0, 0};

std::string TempFile(const std::string& bytes) {
  char path[] = "/tmp/cpuhp-btf-XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  close(fd);
  return path;
}

TEST(BtfFuncsTest, FuncsByNameAmongEveryKind) {
  const std::string blob = EveryKind().Build();
  std::vector<uint32_t> found;
  std::string err;
  ASSERT_TRUE(BtfHasFuncs(blob, kNames, &found, &err)) << err;
  EXPECT_EQ(found, kWant);
}

// The file is read through a window far smaller than it: strings and types
// cross every window boundary; each window size gives the same answer.
TEST(BtfFuncsTest, FileThroughSmallWindows) {
  BtfBlob b = EveryKind();
  for (int i = 0; i < 300; ++i) {
    const unsigned vlen = static_cast<unsigned>(i % 4);
    if (i % 2)
      b.Type("filler_function_" + std::to_string(i), BTF_KIND_FUNC, vlen, 0);
    else
      b.Type("filler_struct_" + std::to_string(i), BTF_KIND_STRUCT, vlen,
             vlen * sizeof(struct btf_member));
  }
  b.Type("bringup_cpu", BTF_KIND_FUNC, 1, 0);  // now a FUNC too, at the end
  b.Str(std::string(40, 'x'));                 // longer than some windows below
  const std::string path = TempFile(b.Build());
  std::vector<uint32_t> want = kWant;
  want[3] = 321;  // 20 + 300 fillers + 1: the FUNC, not the struct of the same name
  for (size_t window :
       {size_t{41}, size_t{50}, size_t{77}, size_t{100}, size_t{4096}, size_t{64} << 10}) {
    std::vector<uint32_t> found;
    std::string err;
    EXPECT_TRUE(BtfFileHasFuncs(path, kNames, &found, &err, window)) << window << ": " << err;
    EXPECT_EQ(found, want) << "window " << window;
  }
  // A string longer than the window cannot be told: an error, not a guess.
  std::vector<uint32_t> found;
  std::string err;
  EXPECT_FALSE(BtfFileHasFuncs(path, {"filler_function_1"}, &found, &err, 24));
  EXPECT_NE(err.find(path + ": BTF string at "), std::string::npos) << err;
  unlink(path.c_str());
  EXPECT_FALSE(BtfFileHasFuncs(path, kNames, &found, &err));
  EXPECT_EQ(err, path + ": cannot open: No such file or directory");
}

TEST(BtfFuncsTest, RefusesWhatItDoesNotKnow) {
  std::vector<uint32_t> found;
  std::string err;
  EXPECT_FALSE(BtfHasFuncs("", kNames, &found, &err));
  EXPECT_EQ(err, "not BTF: shorter than its header");
  EXPECT_FALSE(BtfHasFuncs(EveryKind().Build(0x9FEB), kNames, &found, &err));
  EXPECT_EQ(err, "BTF of the other byte order");
  EXPECT_FALSE(BtfHasFuncs(EveryKind().Build(0x1234), kNames, &found, &err));
  EXPECT_EQ(err, "not BTF (magic)");

  BtfBlob newer = EveryKind();
  newer.Type("x", BTF_KIND_ENUM64 + 1, 0, 0);
  EXPECT_FALSE(BtfHasFuncs(newer.Build(), kNames, &found, &err));
  EXPECT_NE(err.find("BTF kind 20 at "), std::string::npos) << err;

  // A trailer that runs past the type section: the walk does not end on
  // the section's end.
  BtfBlob cut = EveryKind();
  cut.types_.resize(cut.types_.size() - 5);
  EXPECT_FALSE(BtfHasFuncs(cut.Build(), kNames, &found, &err));
  EXPECT_NE(err.find("BTF type section: truncated type at "), std::string::npos) << err;

  std::string beyond = EveryKind().Build();
  beyond.resize(beyond.size() - 1);  // the string section now ends past the blob
  EXPECT_FALSE(BtfHasFuncs(beyond, kNames, &found, &err));
  EXPECT_EQ(err, "BTF sections beyond its " + std::to_string(beyond.size()) + " bytes");
}

#ifdef CPUHP_HAVE_BPF
// libbpf's answer is the reference: the hand-made blob, and this machine's
// own kernel BTF when it has one.
TEST(BtfFuncsTest, SameAnswerAsLibbpf) {
  std::vector<std::pair<std::string, std::string>> blobs = {{"hand-made", EveryKind().Build()}};
  std::ifstream vmlinux("/sys/kernel/btf/vmlinux", std::ios::binary);
  if (vmlinux)
    blobs.emplace_back("/sys/kernel/btf/vmlinux",
                       std::string(std::istreambuf_iterator<char>(vmlinux), {}));
  std::vector<std::string> names = kNames;
  for (const char* n : {"schedule", "vfs_read", "task_struct", "get_nohz_timer_target",
                        "bringup_cpu", "cpuhp_invoke_callback", "not_a_kernel_function"})
    names.push_back(n);
  for (const auto& [what, blob] : blobs) {
    btf* ref = btf__new(blob.data(), static_cast<uint32_t>(blob.size()));
    ASSERT_NE(ref, nullptr) << what;
    std::vector<uint32_t> found;
    std::string err;
    ASSERT_TRUE(BtfHasFuncs(blob, names, &found, &err)) << what << ": " << err;
    for (size_t i = 0; i < names.size(); ++i)
      EXPECT_EQ(static_cast<int>(found[i]),
                std::max(0, btf__find_by_name_kind(ref, names[i].c_str(), BTF_KIND_FUNC)))
          << what << ": " << names[i];
    btf__free(ref);
  }
}
#endif

}  // namespace
}  // namespace cpuhp
