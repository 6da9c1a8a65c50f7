// SPDX-License-Identifier: GPL-2.0
// CpuControl over a sysfs tree. The online files stay open for the whole run:
// the timed write is one pwrite(2), nothing else.
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string_view>
#include <unordered_map>

#include "machine/cpu_control.h"
#include "util/cpu_list.h"
#include "util/json_file.h"

namespace cpuhp {
namespace {

constexpr size_t kMaxListBytes = 1 << 20;  // a CPU list of a few thousand CPUs is ~30 KiB

class MonotonicClockImpl : public Clock {
 public:
  uint64_t NowNs() override {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
  }
};

class SysfsCpuControl : public CpuControl {
 public:
  explicit SysfsCpuControl(std::string root) : root_(std::move(root)) {}
  ~SysfsCpuControl() override {
    for (auto& [cpu, fd] : fds_)
      if (fd >= 0)
        close(fd);
  }

  std::string Describe() const override { return root_; }

  bool ReadList(const std::string& name, std::vector<int>* cpus, std::string* err,
                int* err_no) override {
    std::string path = root_ + "/" + name;
    std::string text;
    if (!ReadSmallFile(path, kMaxListBytes, &text, err, err_no))
      return false;
    // A NO_HZ_FULL kernel booted without nohz_full= prints its unset mask
    // as "(null)" (Debian 12's 6.1, seen in tests/vm): no CPU. %*pbl pads
    // it to nr_cpu_ids columns: 122 spaces before it with 128 CPUs.
    std::string_view bare(text);
    while (!bare.empty() && bare.front() == ' ')
      bare.remove_prefix(1);
    if (bare == "(null)\n" || bare == "(null)") {
      cpus->clear();
      return true;
    }
    std::string perr;
    if (!ParseCpuList(text, cpus, &perr)) {
      if (err_no)
        *err_no = EINVAL;
      *err = path + ": " + perr;
      return false;
    }
    return true;
  }

  bool HasOnlineFile(int cpu) override { return access(OnlinePath(cpu).c_str(), F_OK) == 0; }

  int ReadOnline(int cpu, std::string* err) override {
    int fd = Fd(cpu, err);
    if (fd < 0)
      return -1;
    char buf[8];
    ssize_t n;
    do {
      n = pread(fd, buf, sizeof(buf), 0);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) {
      *err = OnlinePath(cpu) + ": read: " + (n < 0 ? strerror(errno) : "empty");
      return -1;
    }
    if (buf[0] == '0' || buf[0] == '1')
      return buf[0] - '0';
    *err = OnlinePath(cpu) + ": unexpected content";
    return -1;
  }

  int WriteOnline(int cpu, bool online) override {
    std::string err;
    int fd = Fd(cpu, &err);
    if (fd < 0)
      return open_errno_;
    ssize_t n = pwrite(fd, online ? "1" : "0", 1, 0);
    if (n < 0)
      return errno;
    return n == 1 ? 0 : EIO;
  }

  // hotplug/fail is written rarely: open, write, close; the errno of the
  // write is the kernel's verdict (EINVAL: that state cannot fail now).
  int WriteFail(int cpu, int state) override {
    const std::string path = HotplugPath(cpu, "fail");
    // O_TRUNC as a shell's "echo -1 > fail": sysfs ignores it, a fake tree's
    // regular file needs it.
    int fd = open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0)
      return errno;
    const std::string text = std::to_string(state);
    ssize_t n;
    do {
      n = write(fd, text.data(), text.size());
    } while (n < 0 && errno == EINTR);
    int e = n < 0 ? errno : n == static_cast<ssize_t>(text.size()) ? 0 : EIO;
    close(fd);
    return e;
  }

  int ReadFail(int cpu, int* state) override { return ReadInt(HotplugPath(cpu, "fail"), state); }
  int ReadHotplugState(int cpu, int* state) override {
    return ReadInt(HotplugPath(cpu, "state"), state);
  }
  int ReadHotplugStates(std::string* text) override {
    std::string err;
    int e = 0;
    return ReadSmallFile(root_ + "/hotplug/states", kMaxListBytes, text, &err, &e) ? 0 : e;
  }

 private:
  std::string HotplugPath(int cpu, const char* file) const {
    return root_ + "/cpu" + std::to_string(cpu) + "/hotplug/" + file;
  }

  // A decimal integer file ("-1\n", "236\n"); EINVAL when it holds anything else.
  static int ReadInt(const std::string& path, int* out) {
    std::string text, err;
    int e = 0;
    if (!ReadSmallFile(path, kMaxListBytes, &text, &err, &e))
      return e;
    char* end = nullptr;
    errno = 0;
    long v = strtol(text.c_str(), &end, 10);
    if (end == text.c_str() || errno != 0 || v < -1 || v > 1000000 ||
        (*end != '\0' && *end != '\n'))
      return EINVAL;
    *out = static_cast<int>(v);
    return 0;
  }

  std::string OnlinePath(int cpu) const { return root_ + "/cpu" + std::to_string(cpu) + "/online"; }

  int Fd(int cpu, std::string* err) {
    auto it = fds_.find(cpu);
    if (it != fds_.end())
      return it->second;
    int fd = open(OnlinePath(cpu).c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      open_errno_ = errno;
      *err = OnlinePath(cpu) + ": open: " + strerror(errno);
      return -1;  // not cached: a later call retries
    }
    fds_[cpu] = fd;
    return fd;
  }

  std::string root_;
  std::unordered_map<int, int> fds_;
  int open_errno_ = 0;
};

}  // namespace

Clock* MonotonicClock() {
  static MonotonicClockImpl clock;
  return &clock;
}

std::unique_ptr<CpuControl> NewSysfsCpuControl(const std::string& root) {
  return std::make_unique<SysfsCpuControl>(root);
}

}  // namespace cpuhp
