// SPDX-License-Identifier: GPL-2.0
// For tests: a temporary directory laid out like /sys/devices/system/cpu,
// removed when the object goes away.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "util/cpu_list.h"

namespace cpuhp {

class FakeSysfs {
 public:
  // CPUs 0..n-1 present and online; cpu0 without an online file, like x86.
  explicit FakeSysfs(int n, bool cpu0_hotpluggable = false) {
    char tmpl[] = "/tmp/cpuhp-fake-sysfs.XXXXXX";
    root_ = mkdtemp(tmpl);
    std::vector<int> all;
    for (int c = 0; c < n; ++c) {
      all.push_back(c);
      std::filesystem::create_directories(root_ + "/cpu" + std::to_string(c));
      if (c > 0 || cpu0_hotpluggable)
        Write("cpu" + std::to_string(c) + "/online", "1\n");
    }
    std::string list = FormatCpuList(all) + "\n";
    for (const char* f : {"present", "possible", "online"})
      Write(f, list);
    Write("offline", "\n");
    Write("isolated", "\n");
  }
  ~FakeSysfs() { std::filesystem::remove_all(root_); }

  const std::string& root() const { return root_; }
  void Write(const std::string& rel, const std::string& text) {
    std::ofstream(root_ + "/" + rel) << text;
  }
  // SMT: smt/control and smt/active, and cpuN/topology/thread_siblings_list.
  void Smt(const std::string& control, const std::string& active) {
    std::filesystem::create_directories(root_ + "/smt");
    Write("smt/control", control + "\n");
    Write("smt/active", active + "\n");
  }
  void Siblings(int cpu, const std::string& list) {
    const std::string dir = "cpu" + std::to_string(cpu) + "/topology";
    std::filesystem::create_directories(root_ + "/" + dir);
    Write(dir + "/thread_siblings_list", list + "\n");
  }
  std::string Read(const std::string& rel) const {
    std::ifstream f(root_ + "/" + rel);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }
  // Replaces `rel` with a FIFO (nobody at its other end) or a symlink to
  // `target`: what a hostile tree holds.
  std::string Fifo(const std::string& rel) {
    const std::string path = root_ + "/" + rel;
    std::filesystem::remove(path);
    if (mkfifo(path.c_str(), 0600) != 0)
      abort();
    return path;
  }
  void Symlink(const std::string& rel, const std::string& target) {
    std::filesystem::remove(root_ + "/" + rel);
    std::filesystem::create_symlink(target, root_ + "/" + rel);
  }
  // The first byte of cpuN/online.
  char Online(int cpu) const { return Read("cpu" + std::to_string(cpu) + "/online")[0]; }

 private:
  std::string root_;
};

}  // namespace cpuhp
