// SPDX-License-Identifier: GPL-2.0
// Everything that touches /sys/devices/system/cpu goes through CpuControl
// (ninja's DiskInterface): SysfsCpuControl for a real or fake tree rooted at
// any path, SimCpuControl for an in-memory machine used by tests and benches.
#pragma once

#include <cerrno>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cpuhp {

// A monotonic clock in ns. The real one is CLOCK_MONOTONIC; the simulated
// backend brings its own so that simulated runs are exactly reproducible.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual uint64_t NowNs() = 0;
};

// The system clock, CLOCK_MONOTONIC.
Clock* MonotonicClock();

// CPU time used so far, in ns: of the calling thread (thread = true,
// CLOCK_THREAD_CPUTIME_ID) or of every thread of the process.
uint64_t CpuTimeNs(bool thread);

class CpuControl {
 public:
  virtual ~CpuControl() = default;

  // Where this control reads and writes, for messages and the report
  // ("/sys/devices/system/cpu", "sim:8").
  virtual std::string Describe() const = 0;

  // Reads a top-level CPU list file ("present", "possible", "online",
  // "isolated", "nohz_full"). A missing file is an error (ENOENT in *err_no).
  virtual bool ReadList(const std::string& name, std::vector<int>* cpus, std::string* err,
                        int* err_no = nullptr) = 0;

  // Whether cpuN/online exists (cpu0 usually has none: not hotpluggable).
  virtual bool HasOnlineFile(int cpu) = 0;

  // Reads cpuN/online: 1 online, 0 offline, -1 on error (with *err).
  virtual int ReadOnline(int cpu, std::string* err) = 0;

  // Writes "1" or "0" to cpuN/online. Returns 0 or the errno of the write.
  // This is the timed call: implementations do nothing else around it.
  virtual int WriteOnline(int cpu, bool online) = 0;

  // The clock the write is timed with.
  virtual Clock* clock() { return MonotonicClock(); }

  // Fault injection (daemon/faults.h): cpuN/hotplug/{fail,state} and
  // hotplug/states. Each returns 0 or an errno (ENOENT: the file is missing;
  // EINVAL from WriteFail: the kernel refuses to fail that state now). The
  // defaults say the backend has none of it.
  // Writes a state number to cpuN/hotplug/fail; -1 clears it.
  virtual int WriteFail(int /*cpu*/, int /*state*/) { return ENOENT; }
  // Reads cpuN/hotplug/fail (-1: nothing armed).
  virtual int ReadFail(int /*cpu*/, int* /*state*/) { return ENOENT; }
  // Reads cpuN/hotplug/state (the CPU's current hotplug state number).
  virtual int ReadHotplugState(int /*cpu*/, int* /*state*/) { return ENOENT; }
  // The text of hotplug/states ("%3d: %s" lines).
  virtual int ReadHotplugStates(std::string* /*text*/) { return ENOENT; }

  // SMT (Documentation/ABI/testing/sysfs-devices-system-cpu): smt/control
  // ("on", "off", "forceoff", "notsupported", "notimplemented", or a number
  // of threads per core on powerpc since 6.6) and smt/active, as text
  // without the newline; cpuN/topology/thread_siblings_list, the CPUs of
  // cpuN's core (gone while cpuN is offline). Each returns 0 or an errno
  // (ENOENT: absent) with *err naming the file.
  virtual int ReadSmtFile(const std::string& /*name*/, std::string* /*text*/, std::string* err) {
    *err = "no SMT control in this backend";
    return ENOENT;
  }
  virtual int ReadThreadSiblings(int /*cpu*/, std::vector<int>* /*cpus*/, std::string* err) {
    *err = "no CPU topology in this backend";
    return ENOENT;
  }
  // Writes `mode` to smt/control: the kernel takes every sibling thread the
  // mode excludes offline, or brings the ones it allows online, inside this
  // one write. Returns 0 or the errno of the write.
  virtual int WriteSmtControl(const std::string& /*mode*/) { return ENOENT; }
};

// The real sysfs (or a fake tree with the same layout under `root`).
std::unique_ptr<CpuControl> NewSysfsCpuControl(const std::string& root);

}  // namespace cpuhp
