/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * cpuhp_probe: the one interface between the kernel module and user space
 * (the cpuhp-stress daemon and tests/vm/cpuhp_probe_dump.c). Both sides
 * include this file. Any change to a struct, an ioctl or a probe id bumps
 * CPUHP_PROBE_API_VERSION; user space refuses to run against another version.
 *
 * Times are nanoseconds on the CLOCK_MONOTONIC timeline
 * (ktime_get_mono_fast_ns() in the kernel, clock_gettime(CLOCK_MONOTONIC) in
 * user space).
 */
#ifndef _UAPI_CPUHP_PROBE_H
#define _UAPI_CPUHP_PROBE_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define CPUHP_PROBE_API_VERSION 2
#define CPUHP_PROBE_DEVICE "/dev/cpuhp_probe"

/* Probe ids: the index into the probe table. Names are the kernel functions. */
enum cpuhp_probe_id {
	CPUHP_PROBE_ARCH_CPU_UP = 0,	/* __cpu_up (arm64, powerpc, arm) */
	CPUHP_PROBE_NATIVE_CPU_UP,	/* native_cpu_up (x86 up to 6.4) */
	CPUHP_PROBE_KICK_AP_ALIVE,	/* cpuhp_kick_ap_alive (x86 6.5+) */
	CPUHP_PROBE_BRINGUP_AP,		/* cpuhp_bringup_ap (x86 6.5+) */
	CPUHP_PROBE_BRINGUP_CPU,	/* bringup_cpu (without split startup) */
	CPUHP_PROBE_TAKEDOWN_CPU,	/* takedown_cpu: control CPU */
	CPUHP_PROBE_TAKE_CPU_DOWN,	/* take_cpu_down: dying CPU, IRQs off */
	CPUHP_PROBE_CPU_UP_GENERIC,	/* _cpu_up */
	CPUHP_PROBE_CPU_DOWN_GENERIC,	/* _cpu_down */
	CPUHP_PROBE_NOHZ_TIMER_TARGET,	/* get_nohz_timer_target: histograms */
	CPUHP_PROBE_NR
};

#define CPUHP_PROBE_NAME_LEN 64
#define CPUHP_PROBE_REASON_LEN 96
#define CPUHP_PROBE_HIST_BUCKETS 40

/*
 * One hit of a hotplug-path probe, 56 bytes. read() returns whole records
 * only and never sleeps (EAGAIN when none is buffered). target_cpu is the
 * function's CPU argument; a probe without one (take_cpu_down) stores the
 * executing CPU, which for take_cpu_down is the dying CPU: target_cpu is
 * always the CPU the operation acts on.
 */
struct cpuhp_probe_record {
	__u64 seq;		/* global sequence number, from 0 at load and at RESET */
	__u64 start_ns;		/* entry, CLOCK_MONOTONIC */
	__u64 duration_ns;	/* entry to return */
	__s64 retval;		/* the function's return value */
	__u32 probe_id;		/* enum cpuhp_probe_id */
	__s32 target_cpu;
	__u32 exec_cpu;		/* CPU that ran the entry handler */
	__u32 online_at_entry;	/* num_online_cpus() at entry */
	__u32 flags;		/* CPUHP_PROBE_REC_* */
	__u32 reserved;
};

/* The target CPU comes from a renamed (.constprop/.isra) symbol: may be wrong */
#define CPUHP_PROBE_REC_ARG_UNSURE 0x1

struct cpuhp_probe_version {
	__u32 api_version;	/* CPUHP_PROBE_API_VERSION of the module */
	__u32 record_size;	/* sizeof(struct cpuhp_probe_record) */
	__u32 nr_probes;	/* CPUHP_PROBE_NR */
	__u32 nr_cpu_ids;	/* size of the per-CPU tables */
	__u32 ring_records;	/* records per CPU ring */
	__u32 reserved;
};

/* In: id. Out: the rest. */
struct cpuhp_probe_info {
	__u32 id;
	__u32 placed;		/* 1: kretprobe registered */
	__u32 selected;		/* 1: asked for by the probes= parameter */
	__s32 error;		/* -errno of the last registration attempt */
	char name[CPUHP_PROBE_NAME_LEN];	/* canonical function name */
	/* symbols placed, ','-separated (e.g. "_cpu_up,_cpu_up.constprop.0"), "+" at the end if cut */
	char symbol[CPUHP_PROBE_NAME_LEN];
	char reason[CPUHP_PROBE_REASON_LEN];	/* why not placed; "" if placed */
	__u64 hits;		/* return handler runs, all symbols */
	__u64 nmissed;		/* kretprobe nmissed + kprobe nmissed */
	__u64 dropped;		/* records lost to a full ring */
};

/*
 * get_nohz_timer_target duration histogram. In: cpu (the executing CPU, or
 * CPUHP_PROBE_ALL_CPUS for the sum). Bucket i counts durations d with
 * 2^i <= d < 2^(i+1) ns; bucket 0 also counts d = 0; the last bucket is open.
 */
#define CPUHP_PROBE_ALL_CPUS 0xffffffffu
struct cpuhp_probe_hist {
	__u32 cpu;
	__u32 reserved;
	__u64 count;
	__u64 sum_ns;
	__u64 max_ns;
	__u64 buckets[CPUHP_PROBE_HIST_BUCKETS];
};

/*
 * HIST and TARGETS fail with ENODEV when get_nohz_timer_target is not placed:
 * an absent probe is not a probe with zero hits.
 */

/*
 * How often get_nohz_timer_target returned each CPU, summed over executing
 * CPUs. In: counts_ptr (user array of __u64), nr (its length). Out: nr_cpu_ids,
 * counts[0 .. min(nr, nr_cpu_ids) - 1].
 */
struct cpuhp_probe_targets {
	__u64 counts_ptr;
	__u32 nr;
	__u32 nr_cpu_ids;
};

#define CPUHP_PROBE_IOC_MAGIC 0xc7
#define CPUHP_PROBE_IOC_VERSION _IOR(CPUHP_PROBE_IOC_MAGIC, 1, struct cpuhp_probe_version)
#define CPUHP_PROBE_IOC_PROBE_INFO _IOWR(CPUHP_PROBE_IOC_MAGIC, 2, struct cpuhp_probe_info)
#define CPUHP_PROBE_IOC_HIST _IOWR(CPUHP_PROBE_IOC_MAGIC, 3, struct cpuhp_probe_hist)
#define CPUHP_PROBE_IOC_TARGETS _IOWR(CPUHP_PROBE_IOC_MAGIC, 4, struct cpuhp_probe_targets)
/*
 * Empties the rings, zeroes hits, dropped, histograms and target counts, and
 * restarts the sequence numbers at 0: every record read afterwards was
 * written after the RESET, and its gaps are the drops counted since.
 */
#define CPUHP_PROBE_IOC_RESET _IO(CPUHP_PROBE_IOC_MAGIC, 5)
/*
 * The probe's own cost: every get_nohz_timer_target duration is the function
 * plus part of the kretprobe (entry timestamp to return timestamp). CALIB
 * calls a near-empty module function CPUHP_PROBE_CALIB_CALLS times under the
 * same handlers and returns their histogram (cpu: CPUHP_PROBE_ALL_CPUS).
 * ENODEV when get_nohz_timer_target or the calibration probe is not placed.
 */
#define CPUHP_PROBE_CALIB_CALLS 1000
#define CPUHP_PROBE_IOC_CALIB _IOR(CPUHP_PROBE_IOC_MAGIC, 6, struct cpuhp_probe_hist)

/* How a probe is attached: its kprobe's state while armed. */
#define CPUHP_PROBE_MECH_NONE 0		/* not placed */
#define CPUHP_PROBE_MECH_TRAP 1		/* a breakpoint instruction */
#define CPUHP_PROBE_MECH_FTRACE 2	/* the function's ftrace call site */
#define CPUHP_PROBE_MECH_JUMP 3		/* optimised into a jump */

/*
 * The calibration beside a direct measurement of the same probe: the
 * CALIB_CALLS calls of CALIB, timed from the caller in rounds of 100,
 * alternately with the calibration probe disarmed and armed (IRQs off
 * around each call, as get_nohz_timer_target is called). probed_ns -
 * bare_ns is everything the probe adds to those calls; CALIB's mean is the
 * share of it inside a measured duration. The mechanisms say whether the
 * calibration probe is attached as get_nohz_timer_target's is (where they
 * differ, CALIB calibrates another mechanism). ENODEV as CALIB.
 */
struct cpuhp_probe_calib_direct {
	__u64 calls;		/* calls per side */
	__u64 bare_ns;		/* their time, calibration probe disarmed */
	__u64 probed_ns;	/* their time, armed */
	__u32 calib_mech;	/* CPUHP_PROBE_MECH_* of the calibration probe, armed */
	__u32 nohz_mech;	/* of get_nohz_timer_target's (first symbol) */
};
#define CPUHP_PROBE_IOC_CALIB_DIRECT \
	_IOR(CPUHP_PROBE_IOC_MAGIC, 7, struct cpuhp_probe_calib_direct)

#endif /* _UAPI_CPUHP_PROBE_H */
