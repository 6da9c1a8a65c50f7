/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the bpf timing source's programs (cpuhp_phases.bpf.c) and the daemon
 * (sources/bpf_source.h) share beyond kmod/uapi/cpuhp_probe.h, whose record
 * layout, probe ids and histogram buckets both use as they are.
 */
#ifndef CPUHP_PHASES_ABI_H
#define CPUHP_PHASES_ABI_H

#include <linux/types.h>

#include "../../../kmod/uapi/cpuhp_probe.h"

/*
 * The attach cookie of a hotplug-path kprobe/kretprobe pair: the probe id
 * (enum cpuhp_probe_id), and whether the first argument is the target CPU
 * and, for a renamed copy (NAME.constprop.N), whether that is unsure.
 */
#define CPUHP_BPF_COOKIE_ID_MASK 0xffu
#define CPUHP_BPF_COOKIE_CPU_ARG 0x100u
#define CPUHP_BPF_COOKIE_ARG_UNSURE 0x200u

/* Nested get_nohz_timer_target calls one CPU can hold (an interrupt inside). */
#define CPUHP_BPF_NOHZ_DEPTH 4

/* Per probe id and CPU (a per-CPU array): summed by the daemon. */
struct cpuhp_bpf_counters {
	__u64 hits;		/* return programs that ran with an entry */
	__u64 dropped;		/* records lost to a full ring buffer */
	__u64 unmatched;	/* returns without an entry (missed entry) */
};

/* get_nohz_timer_target per CPU: the module's cpuhp_probe_hist fields. */
struct cpuhp_bpf_nohz {
	__u64 count;
	__u64 sum_ns;
	__u64 max_ns;
	__u64 buckets[CPUHP_PROBE_HIST_BUCKETS];
};

#endif
