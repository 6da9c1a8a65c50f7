// SPDX-License-Identifier: GPL-2.0
// The tracefs instance's life, and the file helpers the tracepoints source
// (tracefs_source.h) reads and writes tracefs with.
//
// Instance: instances/cpuhp-stress-kept, made once and kept between runs.
// A new instance starts on the "local" clock, and switching it to "mono"
// resets its buffers behind an RCU grace period (~35 ms on a 2-CPU VM), as
// does removing it (~30 ms): most of what a short run paid on top of its
// writes (issue 17: startup under 100 ms). A run takes the kept instance
// under flock(2) on its directory, stops and empties it, reads its lost-event
// counters as the baseline, and at the end stops it and disables the events
// again, so between runs it records nothing. trace_pipe_raw is consuming, so
// two runs must never share one: a run that finds it locked (a second run
// beside a test, another state directory) uses instances/cpuhp-stress-<pid>
// and removes it at the end, as every run did before. A killed run leaves
// its pid instance: the next run and `cpuhp-stress restore` remove instances
// whose pid is gone; `restore` also removes the kept instance when no run
// holds it, so a machine put back has no instance of ours.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace cpuhp {

// The kept instance's name under <tracefs>/instances.
extern const char* const kKeptInstance;
// A run's own instance: this prefix and its pid.
inline constexpr const char* kInstancePrefix = "cpuhp-stress-";
inline constexpr const char* kDefaultTracefs = "/sys/kernel/tracing";
inline constexpr const char* kCpuhpEvents[] = {"cpuhp_enter", "cpuhp_multi_enter", "cpuhp_exit"};

// tracefs's mount point from a mounts file ("" when not mounted).
std::string FindTracefs(const std::string& mounts_path = "/proc/mounts");

// Removes <tracefs>/instances/cpuhp-stress-<pid> left by runs that are gone
// (no such pid, or a pid now running something else). Returns their names;
// failures go to *errs.
std::vector<std::string> RemoveStaleTraceInstances(const std::string& tracefs_root,
                                                   std::vector<std::string>* errs);

// Removes the kept instance when no run holds it (flock). Returns whether it
// was removed; a failure goes to *err.
bool RemoveKeptTraceInstance(const std::string& tracefs_root, std::string* err);

// For `cpuhp-stress restore`: removes stale instances and the kept one (when
// no run holds it) under a mounted tracefs (never mounts it) and says so on
// `out`.
void RestoreTraceInstances(std::FILE* out);

// The whole of `value` written to an existing file (no O_CREAT); the error
// names the file and the cause.
bool WriteFile(const std::string& path, const std::string& value, std::string* err);
bool ReadText(const std::string& path, std::string* out);
bool IsDir(const std::string& path);
// /proc/<pid>/comm without its newline; "" when the task is gone.
std::string Comm(const std::string& pid);
// The N of each per_cpu/cpuN of an instance, ascending: every possible CPU
// has a buffer there, online or not. Empty when the directory cannot be read.
std::vector<int> InstanceCpus(const std::string& instance);
// per_cpu/cpuN/stats of an instance: cpu -> (overrun, dropped events).
std::map<int, std::pair<uint64_t, uint64_t>> ReadCpuStats(const std::string& instance);

}  // namespace cpuhp
