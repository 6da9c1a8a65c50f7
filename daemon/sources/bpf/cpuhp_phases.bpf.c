// SPDX-License-Identifier: GPL-2.0
/*
 * The bpf timing source (daemon/sources/bpf_source.h): the cpuhp_probe
 * module's probes as BPF programs, fentry/fexit where the kernel attaches
 * them, kprobe/kretprobe otherwise, for kernels that refuse the module
 * (lockdown under Secure Boot) or have no headers to build it.
 *
 * Hotplug-path functions: the entry program saves the start time, the
 * executing CPU and the target CPU (the first argument, when the cookie
 * says so) per task and probe; the return program writes one
 * struct cpuhp_probe_record into the ring buffer, numbered like the
 * module's (a full ring leaves a gap in seq and counts a drop).
 * get_nohz_timer_target is hot: per-CPU histogram and target counters only.
 *
 * No kernel headers needed: timestamps, the task, the first argument and
 * the return value (PT_REGS_* for kprobes, one object per architecture;
 * bpf_get_func_arg/ret for fentry/fexit, whose targets the kernel's BTF
 * describes at load time).
 * Times are bpf_ktime_get_ns(): CLOCK_MONOTONIC, as the module's.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "cpuhp_phases_abi.h"

char LICENSE[] SEC("license") = "GPL";

struct cp_key {
	__u64 pid_tgid;
	__u32 probe;
	__u32 pad;
};

struct cp_start {
	__u64 start_ns;
	__s32 target_cpu;
	__u32 exec_cpu;
	__u32 flags;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct cp_key);
	__type(value, struct cp_start);
} cp_starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} cp_records SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CPUHP_PROBE_NR);
	__type(key, __u32);
	__type(value, struct cpuhp_bpf_counters);
} cp_counters SEC(".maps");

struct cp_nohz_stack {
	__u32 depth;
	__u32 pad;
	__u64 start_ns[CPUHP_BPF_NOHZ_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cp_nohz_stack);
} cp_nohz_starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpuhp_bpf_nohz);
} cp_nohz SEC(".maps");

/* get_nohz_timer_target's returns per target CPU; sized to nr_cpu_ids. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} cp_targets SEC(".maps");

__u64 cp_seq;

static __always_inline struct cpuhp_bpf_counters *cp_counters_of(__u32 probe)
{
	return bpf_map_lookup_elem(&cp_counters, &probe);
}

/*
 * Entry of a hotplug-path function: the start time per task and probe. The
 * clock is read last: the map insert stays out of the duration.
 */
static __always_inline int cp_begin(__u32 probe, __s32 target_cpu, __u32 exec_cpu,
				    __u32 flags)
{
	struct cp_key k = {
		.pid_tgid = bpf_get_current_pid_tgid(),
		.probe = probe,
	};
	struct cp_start s = {
		.target_cpu = target_cpu,
		.exec_cpu = exec_cpu,
		.flags = flags,
	};
	struct cp_start *saved;

	if (bpf_map_update_elem(&cp_starts, &k, &s, BPF_ANY))
		return 0;
	saved = bpf_map_lookup_elem(&cp_starts, &k);
	if (saved)
		saved->start_ns = bpf_ktime_get_ns();
	return 0;
}

/* Return of a hotplug-path function: one record into the ring buffer. */
static __always_inline int cp_finish(__u64 now, __u32 probe, int retval)
{
	struct cp_key k = {
		.pid_tgid = bpf_get_current_pid_tgid(),
		.probe = probe,
	};
	struct cpuhp_bpf_counters *c = cp_counters_of(probe);
	struct cpuhp_probe_record *r;
	struct cp_start *s;
	__u64 seq;

	if (!c)
		return 0;
	s = bpf_map_lookup_elem(&cp_starts, &k);
	if (!s || !s->start_ns) {
		c->unmatched++;
		if (s)
			bpf_map_delete_elem(&cp_starts, &k);
		return 0;
	}
	c->hits++;
	/* Taken before the reserve: a dropped record leaves a gap. */
	seq = __sync_fetch_and_add(&cp_seq, 1);
	r = bpf_ringbuf_reserve(&cp_records, sizeof(*r), 0);
	if (!r) {
		c->dropped++;
		bpf_map_delete_elem(&cp_starts, &k);
		return 0;
	}
	r->seq = seq;
	r->start_ns = s->start_ns;
	r->duration_ns = now - s->start_ns;
	r->retval = retval;
	r->probe_id = probe;
	r->target_cpu = s->target_cpu;
	r->exec_cpu = s->exec_cpu;
	r->online_at_entry = 0;
	r->flags = s->flags;
	r->reserved = 0;
	/*
	 * No wakeup: the daemon polls. A wakeup is an irq_work queued on this
	 * CPU, and take_cpu_down returns on the dying CPU: the work never runs,
	 * and freeing the ring later spins in irq_work_sync() for ever (seen
	 * on 6.12: soft lockup in ringbuf_map_free after the daemon exited).
	 */
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	bpf_map_delete_elem(&cp_starts, &k);
	return 0;
}

SEC("kprobe")
int cp_entry(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 cpu = bpf_get_smp_processor_id();

	return cp_begin(cookie & CPUHP_BPF_COOKIE_ID_MASK,
			(cookie & CPUHP_BPF_COOKIE_CPU_ARG) ?
			(__s32)PT_REGS_PARM1(ctx) : (__s32)cpu, cpu,
			(cookie & CPUHP_BPF_COOKIE_ARG_UNSURE) ?
			CPUHP_PROBE_REC_ARG_UNSURE : 0);
}

SEC("kretprobe")
int cp_return(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns();

	/* Every probed function returns int: the upper register half is undefined. */
	return cp_finish(now, bpf_get_attach_cookie(ctx) & CPUHP_BPF_COOKIE_ID_MASK,
			 (int)PT_REGS_RC(ctx));
}

static __always_inline int cp_nohz_begin(void)
{
	__u32 zero = 0;
	struct cp_nohz_stack *st = bpf_map_lookup_elem(&cp_nohz_starts, &zero);
	__u32 d;

	if (!st)
		return 0;
	d = st->depth;
	if (d < CPUHP_BPF_NOHZ_DEPTH)
		st->start_ns[d] = bpf_ktime_get_ns();
	st->depth = d + 1;
	return 0;
}

SEC("kprobe")
int cp_nohz_entry(struct pt_regs *ctx)
{
	return cp_nohz_begin();
}

static __always_inline __u32 cp_ilog2(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) {
		v >>= 32;
		r += 32;
	}
	if (v >> 16) {
		v >>= 16;
		r += 16;
	}
	if (v >> 8) {
		v >>= 8;
		r += 8;
	}
	if (v >> 4) {
		v >>= 4;
		r += 4;
	}
	if (v >> 2) {
		v >>= 2;
		r += 2;
	}
	if (v >> 1)
		r += 1;
	return r;
}

static __always_inline int cp_nohz_finish(__u64 now, int retval)
{
	__u32 zero = 0, b, d, target;
	struct cp_nohz_stack *st = bpf_map_lookup_elem(&cp_nohz_starts, &zero);
	struct cpuhp_bpf_nohz *h = bpf_map_lookup_elem(&cp_nohz, &zero);
	struct cpuhp_bpf_counters *c = cp_counters_of(CPUHP_PROBE_NOHZ_TIMER_TARGET);
	__u64 *count, dur;

	if (!st || !h || !c)
		return 0;
	if (st->depth == 0) {
		c->unmatched++;
		return 0;
	}
	d = --st->depth;
	if (d >= CPUHP_BPF_NOHZ_DEPTH) {
		c->unmatched++;
		return 0;
	}
	c->hits++;
	dur = now - st->start_ns[d];
	b = dur ? cp_ilog2(dur) : 0;
	if (b > CPUHP_PROBE_HIST_BUCKETS - 1)
		b = CPUHP_PROBE_HIST_BUCKETS - 1;
	h->count++;
	h->sum_ns += dur;
	h->buckets[b]++;
	if (dur > h->max_ns)
		h->max_ns = dur;
	target = (__u32)retval;
	count = bpf_map_lookup_elem(&cp_targets, &target);
	if (count)
		__sync_fetch_and_add(count, 1);
	return 0;
}

SEC("kretprobe")
int cp_nohz_return(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns();

	return cp_nohz_finish(now, (int)PT_REGS_RC(ctx));
}

/*
 * fentry/fexit: a BPF trampoline called from the function's ftrace site,
 * no trap, far cheaper per hit than a kprobe; needs BTF for the function
 * and an architecture with BPF trampolines and ftrace direct calls (x86-64;
 * arm64 since 6.4). A tracing program is bound to one function when it is
 * loaded, so each probe id has its own pair; the daemon sets the target
 * (the exact name, never a renamed copy, whose prototype BTF may not
 * describe) or turns the pair's loading off (sources/bpf_source.cc).
 */
static __always_inline int cp_has_cpu_arg(__u32 probe)
{
	return probe != CPUHP_PROBE_TAKE_CPU_DOWN && probe != CPUHP_PROBE_NOHZ_TIMER_TARGET;
}

static __always_inline int cp_fentry(__u64 *ctx, __u32 probe)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u64 arg = cpu;

	if (cp_has_cpu_arg(probe))
		bpf_get_func_arg(ctx, 0, &arg);
	return cp_begin(probe, (__s32)arg, cpu, 0);
}

static __always_inline int cp_fexit(__u64 *ctx, __u32 probe)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 ret = 0;

	bpf_get_func_ret(ctx, &ret);
	return cp_finish(now, probe, (int)ret);
}

/* Probe ids 0..8 are the hotplug path, 9 get_nohz_timer_target (uapi). */
#define CP_FENTRY(id)							\
	SEC("fentry")							\
	int cp_fentry_##id(__u64 *ctx)					\
	{								\
		return cp_fentry(ctx, id);				\
	}

#define CP_FEXIT(id)							\
	SEC("fexit")							\
	int cp_fexit_##id(__u64 *ctx)					\
	{								\
		return cp_fexit(ctx, id);				\
	}

CP_FENTRY(0) CP_FEXIT(0)
CP_FENTRY(1) CP_FEXIT(1)
CP_FENTRY(2) CP_FEXIT(2)
CP_FENTRY(3) CP_FEXIT(3)
CP_FENTRY(4) CP_FEXIT(4)
CP_FENTRY(5) CP_FEXIT(5)
CP_FENTRY(6) CP_FEXIT(6)
CP_FENTRY(7) CP_FEXIT(7)
CP_FENTRY(8) CP_FEXIT(8)

SEC("fentry")
int cp_nohz_fentry(__u64 *ctx)
{
	return cp_nohz_begin();
}

SEC("fexit")
int cp_nohz_fexit(__u64 *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 ret = 0;

	bpf_get_func_ret(ctx, &ret);
	return cp_nohz_finish(now, (int)ret);
}
