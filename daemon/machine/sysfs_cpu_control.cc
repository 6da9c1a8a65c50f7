// SPDX-License-Identifier: GPL-2.0
// CpuControl over a sysfs tree. The online files stay open for the whole run:
// the timed write is one pwrite(2), nothing else. Every file is opened
// through SysfsRoot (sysfs_file.h): no symlink followed, no FIFO opened.
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <spdlog/spdlog.h>

#include "machine/cpu_control.h"
#include "machine/sysfs_file.h"
#include "util/cpu_list.h"

namespace cpuhp {
namespace {

constexpr size_t kMaxListBytes = 1 << 20;  // a CPU list of a few thousand CPUs is ~30 KiB

uint64_t ClockNs(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

class MonotonicClockImpl : public Clock {
 public:
  uint64_t NowNs() override { return ClockNs(CLOCK_MONOTONIC); }
};

class SysfsCpuControl : public CpuControl {
 public:
  explicit SysfsCpuControl(std::string root) : root_(std::move(root)), files_(root_) {}
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
    int e = 0;
    if (!files_.Read(name, kMaxListBytes, &text, err, &e)) {
      if (err_no)
        *err_no = e;
      return false;
    }
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

  // Anything there counts: a FIFO or a symlink is refused when it is opened,
  // with its name, not taken for a CPU that cannot be hotplugged.
  bool HasOnlineFile(int cpu) override { return files_.Exists(OnlineRel(cpu)); }

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
    if (fd < 0) {
      Refused(open_errno_, err);
      return open_errno_;
    }
    ssize_t n = pwrite(fd, online ? "1" : "0", 1, 0);
    if (n < 0)
      return errno;
    return n == 1 ? 0 : EIO;
  }

  int WriteFail(int cpu, int state) override {
    return WriteText(HotplugRel(cpu, "fail"), std::to_string(state));
  }

  int ReadFail(int cpu, int* state) override { return ReadInt(HotplugRel(cpu, "fail"), state); }
  int ReadHotplugState(int cpu, int* state) override {
    return ReadInt(HotplugRel(cpu, "state"), state);
  }
  int ReadSmtFile(const std::string& name, std::string* text, std::string* err) override {
    int e = 0;
    if (!files_.Read("smt/" + name, kMaxListBytes, text, err, &e))
      return e;
    while (!text->empty() && (text->back() == '\n' || text->back() == ' '))
      text->pop_back();
    return 0;
  }

  int ReadThreadSiblings(int cpu, std::vector<int>* cpus, std::string* err) override {
    const std::string rel = "cpu" + std::to_string(cpu) + "/topology/thread_siblings_list";
    std::string text, perr;
    int e = 0;
    if (!files_.Read(rel, kMaxListBytes, &text, err, &e))
      return e;
    if (!ParseCpuList(text, cpus, &perr)) {
      *err = root_ + "/" + rel + ": " + perr;
      return EINVAL;
    }
    return 0;
  }

  // smt/control is written once per switch: open, write, close, as
  // ppc64_cpu and a shell do; the errno of the write is the kernel's.
  int WriteSmtControl(const std::string& mode) override { return WriteText("smt/control", mode); }

  int ReadHotplugStates(std::string* text) override {
    std::string err;
    int e = 0;
    if (files_.Read("hotplug/states", kMaxListBytes, text, &err, &e))
      return 0;
    Refused(e, err);
    return e;
  }

 private:
  static std::string HotplugRel(int cpu, const char* file) {
    return "cpu" + std::to_string(cpu) + "/hotplug/" + file;
  }

  // The fault-injection calls return only an errno: a file refused for what
  // it is gets its one line here, once, so that the error names it.
  void Refused(int e, const std::string& err) {
    if ((e == ELOOP || e == ENXIO || e == ENOTDIR || e == EXDEV) && logged_.insert(err).second)
      spdlog::error("{}", err);
  }

  // Files written rarely (hotplug/fail, smt/control): open, write, close;
  // the errno of the write is the kernel's verdict (EINVAL: that state
  // cannot fail now). O_TRUNC as a shell's "echo -1 > fail": sysfs ignores
  // it, a fake tree's regular file needs it.
  int WriteText(const std::string& rel, const std::string& text) {
    int fd = Open(rel, O_WRONLY | O_TRUNC);
    if (fd < 0)
      return -fd;
    ssize_t n;
    do {
      n = write(fd, text.data(), text.size());
    } while (n < 0 && errno == EINTR);
    int e = n < 0 ? errno : n == static_cast<ssize_t>(text.size()) ? 0 : EIO;
    close(fd);
    return e;
  }

  // The descriptor, or minus the errno.
  int Open(const std::string& rel, int flags) {
    std::string err;
    int e = 0;
    int fd = files_.Open(rel, flags, &err, &e);
    if (fd >= 0)
      return fd;
    Refused(e, err);
    return -e;
  }

  // A decimal integer file ("-1\n", "236\n"); EINVAL when it holds anything else.
  int ReadInt(const std::string& rel, int* out) {
    std::string text, err;
    int e = 0;
    if (!files_.Read(rel, kMaxListBytes, &text, &err, &e)) {
      Refused(e, err);
      return e;
    }
    char* end = nullptr;
    errno = 0;
    long v = strtol(text.c_str(), &end, 10);
    if (end == text.c_str() || errno != 0 || v < -1 || v > 1000000 ||
        (*end != '\0' && *end != '\n'))
      return EINVAL;
    *out = static_cast<int>(v);
    return 0;
  }

  static std::string OnlineRel(int cpu) { return "cpu" + std::to_string(cpu) + "/online"; }
  std::string OnlinePath(int cpu) const { return root_ + "/" + OnlineRel(cpu); }

  int Fd(int cpu, std::string* err) {
    auto it = fds_.find(cpu);
    if (it != fds_.end())
      return it->second;
    int fd = files_.Open(OnlineRel(cpu), O_RDWR, err, &open_errno_);
    if (fd < 0)
      return -1;  // not cached: a later call retries
    fds_[cpu] = fd;
    return fd;
  }

  std::string root_;
  SysfsRoot files_;
  std::unordered_map<int, int> fds_;
  std::unordered_set<std::string> logged_;
  int open_errno_ = 0;
};

}  // namespace

Clock* MonotonicClock() {
  static MonotonicClockImpl clock;
  return &clock;
}

uint64_t CpuTimeNs(bool thread) {
  return ClockNs(thread ? CLOCK_THREAD_CPUTIME_ID : CLOCK_PROCESS_CPUTIME_ID);
}

std::unique_ptr<CpuControl> NewSysfsCpuControl(const std::string& root) {
  return std::make_unique<SysfsCpuControl>(root);
}

}  // namespace cpuhp
