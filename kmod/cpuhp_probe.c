// SPDX-License-Identifier: GPL-2.0
/*
 * cpuhp_probe: kretprobes that time the CPU hotplug path and
 * get_nohz_timer_target, read through /dev/cpuhp_probe.
 *
 * Hotplug-path probes write one fixed-size record per hit into the
 * executing CPU's ring (irqsave raw spinlock, taken only by that CPU's
 * handlers and by the reader). get_nohz_timer_target is hot: it only bumps
 * per-CPU counters with this_cpu ops.
 *
 * Symbols: the loader (kmod/cpuhp-probe-load) reads the copies of each
 * probed function from /proc/kallsyms (NAME, NAME.constprop.N, NAME.isra.N,
 * clang's NAME.llvm.HASH) and passes them as symbols=; the functions come
 * from this module's probe_functions modinfo field. Without symbols= the
 * module guesses: the plain name and the names GCC gives to specialised
 * copies, register_kretprobe() failing with -ENOENT for a name not in
 * kallsyms, plus any variants= names. Every copy that exists is probed (a
 * hot copy beside a cold one must not go unprobed) and their hits are
 * summed. A probe that places nowhere is reported as unavailable with the
 * reason; the module still loads.
 *
 * The interface is kmod/uapi/cpuhp_probe.h, shared with user space.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/kprobes.h>
#include <linux/log2.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/ptrace.h>
#include <linux/seqlock.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/smp.h>
#include <linux/uaccess.h>

#include "uapi/cpuhp_probe.h"

/*
 * One layout on every architecture, 64-bit and 32-bit: fixed-size fields,
 * every __u64 at a multiple of 8 (the compile matrix builds this for amd64,
 * arm64, ppc64el, armhf and riscv64; the daemon asserts the same sizes).
 */
static_assert(sizeof(struct cpuhp_probe_record) == 56);
static_assert(sizeof(struct cpuhp_probe_version) == 24);
static_assert(sizeof(struct cpuhp_probe_info) == 264);
static_assert(offsetof(struct cpuhp_probe_info, hits) == 240);
static_assert(sizeof(struct cpuhp_probe_hist) == 352);
static_assert(offsetof(struct cpuhp_probe_hist, count) == 8);
static_assert(sizeof(struct cpuhp_probe_targets) == 16);
static_assert(sizeof(struct cpuhp_probe_calib_direct) == 32);

static char *probes = "all";
module_param(probes, charp, 0444);
MODULE_PARM_DESC(probes,
		 "Comma-separated probes to place (function names, e.g. takedown_cpu,get_nohz_timer_target) or \"all\"");

static char *symbols = "";
module_param(symbols, charp, 0444);
MODULE_PARM_DESC(symbols,
		 "Comma-separated kallsyms names to probe, exactly (NAME or NAME.SUFFIX of a probe), from kmod/cpuhp-probe-load; a probe none names is not placed. Default: guess the names");

static char *variants = "";
module_param(variants, charp, 0444);
MODULE_PARM_DESC(variants,
		 "Comma-separated extra symbols to probe beside the built-in candidates, e.g. _cpu_up.llvm.123 (probe: the name before the first '.')");

static unsigned int ring_records = 1024;
module_param(ring_records, uint, 0444);
MODULE_PARM_DESC(ring_records, "Records per CPU ring (16..65536, rounded up to a power of two)");

static unsigned int targets_pcpu_max = 256;
module_param(targets_pcpu_max, uint, 0444);
MODULE_PARM_DESC(targets_pcpu_max,
		 "Target CPUs counted in per-CPU counters (1..4096); higher CPU ids share one atomic counter each");

/* Most symbols one probe places: GCC makes at most a few copies. */
#define CP_MAX_VARIANTS 4

struct cp_probe;

struct cp_variant {
	struct kretprobe rp;
	struct cp_probe *probe;
	bool arg_unsure;	/* a renamed copy: its first argument may be another */
	char symbol[CPUHP_PROBE_NAME_LEN];
};

struct cp_nohz_stats {
	seqcount_t seq;		/* a reader sees count and buckets of one moment */
	u64 count;
	u64 sum_ns;
	u64 max_ns;
	u64 buckets[CPUHP_PROBE_HIST_BUCKETS];
};

struct cp_probe {
	const char *name;
	bool has_cpu_arg;	/* first argument is the target CPU */
	bool hist;		/* histogram probe: no per-hit records */
	bool selected;
	bool placed;		/* at least one variant registered */
	int error;
	int nr_variants;
	char symbol[CPUHP_PROBE_NAME_LEN];	/* placed variants, ','-separated */
	char reason[CPUHP_PROBE_REASON_LEN];
	atomic64_t hits;
	atomic64_t dropped;
	u64 nmissed_base;
	struct cp_nohz_stats __percpu *stats;	/* hist probes */
	struct cp_variant var[CP_MAX_VARIANTS];
};

static struct cp_probe cp_probes[CPUHP_PROBE_NR] = {
	[CPUHP_PROBE_ARCH_CPU_UP] = { .name = "__cpu_up", .has_cpu_arg = true },
	[CPUHP_PROBE_NATIVE_CPU_UP] = { .name = "native_cpu_up", .has_cpu_arg = true },
	[CPUHP_PROBE_KICK_AP_ALIVE] = { .name = "cpuhp_kick_ap_alive", .has_cpu_arg = true },
	[CPUHP_PROBE_BRINGUP_AP] = { .name = "cpuhp_bringup_ap", .has_cpu_arg = true },
	[CPUHP_PROBE_BRINGUP_CPU] = { .name = "bringup_cpu", .has_cpu_arg = true },
	[CPUHP_PROBE_TAKEDOWN_CPU] = { .name = "takedown_cpu", .has_cpu_arg = true },
	[CPUHP_PROBE_TAKE_CPU_DOWN] = { .name = "take_cpu_down" },
	[CPUHP_PROBE_CPU_UP_GENERIC] = { .name = "_cpu_up", .has_cpu_arg = true },
	[CPUHP_PROBE_CPU_DOWN_GENERIC] = { .name = "_cpu_down", .has_cpu_arg = true },
	[CPUHP_PROBE_NOHZ_TIMER_TARGET] = { .name = "get_nohz_timer_target", .hist = true },
};
/* The same names in table order, for the loader (modinfo -F probe_functions). */
MODULE_INFO(probe_functions,
	    "__cpu_up,native_cpu_up,cpuhp_kick_ap_alive,cpuhp_bringup_ap,bringup_cpu,takedown_cpu,take_cpu_down,_cpu_up,_cpu_down,get_nohz_timer_target");

/*
 * The calibration probe: the same kretprobe handlers as
 * get_nohz_timer_target on a function of near-zero cost, so what it
 * measures is the probe's own share of every get_nohz_timer_target figure.
 * Registered by name like the real probes: the same lookup places it (on
 * powerpc, at the local entry or ftrace site, never a function descriptor).
 */
static struct cp_probe cp_calib = { .name = "cp_calib_target", .hist = true };
static DEFINE_MUTEX(cp_calib_mutex);

/* Saved at entry in the kretprobe instance. */
struct cp_entry {
	struct cp_variant *var;
	u64 start_ns;
	s32 target_cpu;
	u32 exec_cpu;
	u32 online;
};

struct cp_ring {
	raw_spinlock_t lock;
	u32 head;		/* next slot to write, free-running */
	u32 tail;		/* next slot to read, free-running */
	struct cpuhp_probe_record *recs;
};

static DEFINE_PER_CPU(struct cp_ring, cp_rings);
/*
 * How often get_nohz_timer_target returned each CPU. Per-CPU counters for
 * targets below cp_targets_near (memory: CPUs x cp_targets_near), shared
 * atomics for the rest, so memory stays linear in the CPU count. A CPU's
 * counters change inside its get_nohz_timer_target stats' write section
 * and are read under it: a 32-bit kernel cannot load a u64 in one access.
 */
static u32 cp_targets_near;
static u64 __percpu *cp_targets;
static atomic64_t *cp_targets_far;
/*
 * The record sequence number, and what RESET zeroes with it: hits and
 * dropped of the hotplug-path probes and the rings. One lock (hotplug-path
 * hits are a few per operation) so that after RESET the records are
 * numbered from 0 and every gap is a drop counted since: a handler either
 * finished before RESET or numbers its record after it.
 */
static DEFINE_RAW_SPINLOCK(cp_seq_lock);
static u64 cp_seq;
static atomic_long_t cp_pending;	/* records in all rings, under the ring locks */
/*
 * Serialises the consumers (read() and RESET): only they advance a ring's
 * tail, so a reader can copy records out, copy them to user space, and
 * only then consume them. A fault loses nothing.
 */
static DEFINE_MUTEX(cp_read_mutex);

static atomic_t cp_open = ATOMIC_INIT(0);

/*
 * The first argument at a probed function's entry. The kernel's own
 * accessor where the architecture has one (x86, arm64, riscv, s390,
 * loongarch, powerpc in 6.12 not 6.1); by hand on older powerpc and arm.
 */
#if defined(CONFIG_HAVE_FUNCTION_ARG_ACCESS_API) || defined(CONFIG_PPC64) || defined(CONFIG_ARM)
#define CP_HAVE_ARG0 1
static unsigned long cp_arg0(struct pt_regs *regs)
{
#if defined(CONFIG_HAVE_FUNCTION_ARG_ACCESS_API)
	return regs_get_kernel_argument(regs, 0);
#elif defined(CONFIG_PPC64)
	return regs->gpr[3];
#else
	return regs->ARM_r0;
#endif
}
NOKPROBE_SYMBOL(cp_arg0);
#else
/* An architecture without a case: probes needing the CPU are not placed. */
#define CP_HAVE_ARG0 0
static unsigned long cp_arg0(struct pt_regs *regs)
{
	return (unsigned long)-1;
}
NOKPROBE_SYMBOL(cp_arg0);
#endif

/* Saved at entry by the histogram probes. */
struct cp_hist_entry {
	struct cp_probe *probe;
	u64 start_ns;
};

/*
 * The variant of an instance, for entry handlers only; NULL once its probe
 * is going. unregister_kretprobes() clears an instance's kretprobe
 * (rph->rp, kernels without rethook) before its grace period, so a return
 * handler the kernel has just called can read NULL here: an Oops in
 * cp_ret_handler on arm64 6.1 while rmmod raced a cpu_up. Entry handlers
 * save what the return handler needs in ri->data and decline (non-zero:
 * the instance is not armed) when the probe is going; the module's data
 * outlives every running handler (the grace period waits for them).
 */
static struct cp_variant *cp_var_of(struct kretprobe_instance *ri)
{
	struct kretprobe *rp = get_kretprobe(ri);

	return rp ? container_of(rp, struct cp_variant, rp) : NULL;
}
NOKPROBE_SYMBOL(cp_var_of);

/* Entry to return, 0 if the clock read on return is behind entry's. */
static u64 cp_elapsed(u64 start_ns, u64 end_ns)
{
	return end_ns > start_ns ? end_ns - start_ns : 0;
}
NOKPROBE_SYMBOL(cp_elapsed);

/*
 * Every handler saves IRQs before anything else: an interrupt that arms a
 * non-pinned hrtimer while a handler runs calls get_nohz_timer_target,
 * whose probe then finds a kprobe running on the CPU and counts a miss
 * (kmod/README.md, "nmissed"). What is left is the kprobe code around the
 * handlers, and other kprobe users'.
 */
static int cp_entry_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct cp_entry *e = (struct cp_entry *)ri->data;
	struct cp_variant *v;
	unsigned long flags;

	local_irq_save(flags);
	v = cp_var_of(ri);
	if (v) {
		e->var = v;
		e->exec_cpu = raw_smp_processor_id();
		e->target_cpu = v->probe->has_cpu_arg ? (s32)cp_arg0(regs) : (s32)e->exec_cpu;
		e->online = num_online_cpus();
		e->start_ns = ktime_get_mono_fast_ns();
	}
	local_irq_restore(flags);
	return v ? 0 : 1;
}
NOKPROBE_SYMBOL(cp_entry_handler);

/*
 * Torture builds only (tests/vm/run_vm_test.sh, robust mode; never one that
 * ships): the per-hit return handler lingers before it touches its
 * instance, so the insmod/rmmod cycles find one running while
 * unregister_kretprobes() clears the instance's kretprobe (cp_var_of()).
 */
#ifdef CPUHP_PROBE_TORTURE_RET_MS
#define CP_TORTURE_RET_MS CPUHP_PROBE_TORTURE_RET_MS
#else
#define CP_TORTURE_RET_MS 0
#endif

static int cp_ret_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct cp_entry *e = (struct cp_entry *)ri->data;
	struct cpuhp_probe_record *r;
	struct cp_ring *ring;
	struct cp_variant *v;
	struct cp_probe *p;
	unsigned long flags;
	u64 seq, end_ns;

	if (CP_TORTURE_RET_MS)	/* before the instance is read */
		mdelay(CP_TORTURE_RET_MS);
	local_irq_save(flags);
	end_ns = ktime_get_mono_fast_ns();
	v = e->var;
	p = v->probe;
	raw_spin_lock(&cp_seq_lock);
	atomic64_inc(&p->hits);
	/* Taken before the full check: a dropped record leaves a gap. */
	seq = cp_seq++;
	ring = this_cpu_ptr(&cp_rings);
	raw_spin_lock(&ring->lock);
	if (ring->head - ring->tail >= ring_records) {
		raw_spin_unlock(&ring->lock);
		atomic64_inc(&p->dropped);
		raw_spin_unlock(&cp_seq_lock);
		local_irq_restore(flags);
		return 0;
	}
	r = &ring->recs[ring->head % ring_records];
	r->seq = seq;
	r->start_ns = e->start_ns;
	r->duration_ns = cp_elapsed(e->start_ns, end_ns);
	/* Every probed function returns int: the upper register half is undefined. */
	r->retval = (s64)(int)regs_return_value(regs);
	r->probe_id = p - cp_probes;
	r->target_cpu = e->target_cpu;
	r->exec_cpu = e->exec_cpu;
	r->online_at_entry = e->online;
	r->flags = v->arg_unsure ? CPUHP_PROBE_REC_ARG_UNSURE : 0;
	r->reserved = 0;
	ring->head++;
	atomic_long_inc(&cp_pending);
	raw_spin_unlock(&ring->lock);
	raw_spin_unlock(&cp_seq_lock);
	local_irq_restore(flags);
	return 0;
}
NOKPROBE_SYMBOL(cp_ret_handler);

static int cp_nohz_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct cp_hist_entry *e = (struct cp_hist_entry *)ri->data;
	struct cp_variant *v;
	unsigned long flags;

	local_irq_save(flags);
	v = cp_var_of(ri);
	if (v) {
		e->probe = v->probe;
		e->start_ns = ktime_get_mono_fast_ns();
	}
	local_irq_restore(flags);
	return v ? 0 : 1;
}
NOKPROBE_SYMBOL(cp_nohz_entry);

static void cp_count_target(unsigned long target)
{
	if (target < cp_targets_near)
		this_cpu_inc(cp_targets[target]);
	else if (target < nr_cpu_ids)
		atomic64_inc(&cp_targets_far[target - cp_targets_near]);
}
NOKPROBE_SYMBOL(cp_count_target);

static int cp_nohz_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct cp_hist_entry *e = (struct cp_hist_entry *)ri->data;
	struct cp_probe *p = e->probe;
	struct cp_nohz_stats *s;
	unsigned long flags;
	unsigned int b;
	u64 d;

	/* IRQs off: no nested update on this CPU while the count is odd. */
	local_irq_save(flags);
	d = cp_elapsed(e->start_ns, ktime_get_mono_fast_ns());
	b = d ? min_t(unsigned int, ilog2(d), CPUHP_PROBE_HIST_BUCKETS - 1) : 0;
	s = this_cpu_ptr(p->stats);
	raw_write_seqcount_begin(&s->seq);
	s->count++;
	s->sum_ns += d;
	s->buckets[b]++;
	if (d > s->max_ns)
		s->max_ns = d;
	/* An int function: the upper register half is undefined (cp_ret_handler). */
	if (p != &cp_calib)
		cp_count_target((unsigned int)(int)regs_return_value(regs));
	raw_write_seqcount_end(&s->seq);
	local_irq_restore(flags);
	return 0;
}
NOKPROBE_SYMBOL(cp_nohz_ret);

/* GCC's names for specialised copies; others come from variants=. */
static const char * const cp_suffixes[] = {
	"", ".constprop.0", ".constprop.1", ".constprop.2", ".constprop.3",
	".isra.0", ".isra.1", ".isra.2", ".isra.3",
	".isra.0.constprop.0", ".isra.0.constprop.1", ".isra.1.constprop.0", ".isra.1.constprop.1",
	".constprop.0.isra.0", ".constprop.0.isra.1", ".constprop.1.isra.0", ".constprop.1.isra.1",
};

/* Registers one variant of p; 0, -ENOENT (no such symbol) or another -errno. */
static int cp_place_one(struct cp_probe *p, const char *symbol)
{
	struct cp_variant *v = &p->var[p->nr_variants];
	int ret;

	if (p->nr_variants == CP_MAX_VARIANTS)
		return -ENOSPC;
	memset(v, 0, sizeof(*v));
	v->probe = p;
	strscpy(v->symbol, symbol, sizeof(v->symbol));
	v->rp.kp.symbol_name = v->symbol;
	if (p->hist) {
		v->rp.entry_handler = cp_nohz_entry;
		v->rp.handler = cp_nohz_ret;
		v->rp.data_size = sizeof(struct cp_hist_entry);
		v->rp.maxactive = max_t(int, 64, 4 * num_possible_cpus());
	} else {
		v->rp.entry_handler = cp_entry_handler;
		v->rp.handler = cp_ret_handler;
		v->rp.data_size = sizeof(struct cp_entry);
	}
	/*
	 * The calibration probe sits in this module's text and is armed only
	 * while CALIB runs. Left armed, a kernel whose entry probes are not
	 * ftrace-based (no FUNCTION_TRACER) optimises it into a jump; after
	 * rmmod that optimised probe outlives the module text
	 * (kill_optimized_kprobe() leaves it hashed, off every list) and the
	 * next insmod at the same address hits WARN_ON_ONCE in
	 * reuse_unused_kprobe() and fails with -EINVAL (seen on 7.2 built
	 * without FUNCTION_TRACER: kmod/README.md).
	 */
	if (p == &cp_calib)
		v->rp.kp.flags = KPROBE_FLAG_DISABLED;
	/* Before registering: a handler can run as soon as it returns. */
	v->arg_unsure = p->has_cpu_arg && strcmp(symbol, p->name);
	ret = register_kretprobe(&v->rp);
	if (ret)
		return ret;
	p->nr_variants++;
	p->placed = true;
	return 0;
}

/* Appends a placed symbol to p->symbol; "+" marks a list cut short. */
static void cp_note_symbol(struct cp_probe *p, const char *symbol)
{
	size_t len = strlen(p->symbol);
	size_t need = strlen(symbol) + (len ? 1 : 0);

	if (len + need + 2 > sizeof(p->symbol)) {
		if (len && len + 1 < sizeof(p->symbol) && p->symbol[len - 1] != '+')
			strcat(p->symbol, "+");
		return;
	}
	if (len)
		strcat(p->symbol, ",");
	strcat(p->symbol, symbol);
}

/* The symbols of a list (symbols=, variants=) that belong to p: NAME[.*]. */
static int cp_place_list(struct cp_probe *p, const char *list, int *first_other)
{
	char *buf, *s, *tok;
	int ret;

	if (!*list)
		return 0;
	buf = kstrdup(list, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	s = buf;
	while ((tok = strsep(&s, ",")) != NULL) {
		size_t n = strcspn(tok, ".");

		if (n != strlen(p->name) || strncmp(tok, p->name, n))
			continue;
		ret = cp_place_one(p, tok);
		if (!ret)
			cp_note_symbol(p, tok);
		else if (!*first_other)
			*first_other = ret;
	}
	kfree(buf);
	return 0;
}

static void cp_place(struct cp_probe *p)
{
	char sym[CPUHP_PROBE_NAME_LEN];
	int i, ret, first_other = 0;

	p->symbol[0] = '\0';
	p->reason[0] = '\0';
	p->error = 0;
	if (p->has_cpu_arg && !CP_HAVE_ARG0) {
		p->error = -EOPNOTSUPP;
		snprintf(p->symbol, sizeof(p->symbol), "%s", p->name);
		snprintf(p->reason, sizeof(p->reason),
			 "needs the CPU argument: no register accessor for this architecture");
		return;
	}
	for (i = 0; !*symbols && i < ARRAY_SIZE(cp_suffixes); i++) {
		snprintf(sym, sizeof(sym), "%s%s", p->name, cp_suffixes[i]);
		ret = cp_place_one(p, sym);
		if (!ret)
			cp_note_symbol(p, sym);
		/* Keep the most telling error: a name that exists but refused. */
		else if (ret != -ENOENT && !first_other)
			first_other = ret;
	}
	ret = cp_place_list(p, *symbols ? symbols : variants, &first_other);
	if (ret && !first_other)
		first_other = ret;
	if (p->placed)
		return;
	p->error = first_other ? first_other : -ENOENT;
	if (first_other)
		snprintf(p->reason, sizeof(p->reason),
			 "register_kretprobe(%s*) failed: %d", p->name, first_other);
	else if (*symbols)
		snprintf(p->reason, sizeof(p->reason),
			 "no symbol %s* in kallsyms (symbols= names none)", p->name);
	else
		snprintf(p->reason, sizeof(p->reason),
			 "no symbol %s (nor .constprop.N/.isra.N) in kallsyms", p->name);
	snprintf(p->symbol, sizeof(p->symbol), "%s", p->name);
}

/* Every entry of symbols= (NAME[.SUFFIX]) or variants= (NAME.SUFFIX) names a probe. */
static int cp_check_list(const char *param, const char *list, bool plain_ok)
{
	char *buf, *s, *tok;
	int i, ret = 0;

	buf = kstrdup(list, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	s = buf;
	while ((tok = strsep(&s, ",")) != NULL) {
		size_t n = strcspn(tok, ".");

		if (!*tok)
			continue;
		for (i = 0; i < CPUHP_PROBE_NR; i++)
			if (n == strlen(cp_probes[i].name) && !strncmp(tok, cp_probes[i].name, n))
				break;
		if (i == CPUHP_PROBE_NR || (!tok[n] && !plain_ok) ||
		    strlen(tok) >= CPUHP_PROBE_NAME_LEN) {
			pr_err("%s=: \"%s\" is not %s of a probe\n", param, tok,
			       plain_ok ? "NAME or NAME.SUFFIX" : "NAME.SUFFIX");
			ret = -EINVAL;
			break;
		}
	}
	kfree(buf);
	return ret;
}

static int cp_select(void)
{
	char *buf, *s, *tok;
	int i, ret = 0;

	if (!strcmp(probes, "all")) {
		for (i = 0; i < CPUHP_PROBE_NR; i++)
			cp_probes[i].selected = true;
		return 0;
	}
	buf = kstrdup(probes, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	s = buf;
	while ((tok = strsep(&s, ",")) != NULL) {
		tok = strim(tok);
		if (!*tok)
			continue;
		for (i = 0; i < CPUHP_PROBE_NR; i++)
			if (!strcmp(tok, cp_probes[i].name))
				break;
		if (i == CPUHP_PROBE_NR) {
			pr_err("probes=: unknown probe \"%s\"\n", tok);
			ret = -EINVAL;
			break;
		}
		cp_probes[i].selected = true;
	}
	kfree(buf);
	return ret;
}

static u64 cp_nmissed(struct cp_probe *p)
{
	u64 n = 0;
	int i;

	for (i = 0; i < p->nr_variants; i++)
		n += (u64)(unsigned int)p->var[i].rp.nmissed + p->var[i].rp.kp.nmissed;
	return n;
}

/*
 * Inside the write section: a concurrent HIST sees the figures before or
 * after, never count from one and buckets from the other. The caller keeps
 * the CPU's handlers out (IRQs off on that CPU, or the CPU offline).
 * TARGETS: the CPU's target counters, if given, zeroed in the same section.
 */
static void cp_zero_stats(struct cp_nohz_stats *s, u64 *targets)
{
	raw_write_seqcount_begin(&s->seq);
	s->count = 0;
	s->sum_ns = 0;
	s->max_ns = 0;
	memset(s->buckets, 0, sizeof(s->buckets));
	if (targets)
		memset(targets, 0, cp_targets_near * sizeof(u64));
	raw_write_seqcount_end(&s->seq);
}

/* Runs on each online CPU with IRQs off: no handler of that CPU in flight. */
static void cp_zero_cpu(void *unused)
{
	int cpu = smp_processor_id();

	cp_zero_stats(per_cpu_ptr(cp_probes[CPUHP_PROBE_NOHZ_TIMER_TARGET].stats, cpu),
		      per_cpu_ptr(cp_targets, cpu));
}

static void cp_reset(void)
{
	unsigned long flags;
	int cpu, i;

	lockdep_assert_held(&cp_read_mutex);
	raw_spin_lock_irqsave(&cp_seq_lock, flags);
	for_each_possible_cpu(cpu) {
		struct cp_ring *ring = per_cpu_ptr(&cp_rings, cpu);

		raw_spin_lock(&ring->lock);
		atomic_long_sub(ring->head - ring->tail, &cp_pending);
		ring->tail = ring->head;
		raw_spin_unlock(&ring->lock);
	}
	cp_seq = 0;
	for (i = 0; i < CPUHP_PROBE_NR; i++) {
		atomic64_set(&cp_probes[i].hits, 0);
		atomic64_set(&cp_probes[i].dropped, 0);
		cp_probes[i].nmissed_base = cp_nmissed(&cp_probes[i]);
	}
	raw_spin_unlock_irqrestore(&cp_seq_lock, flags);
	cpus_read_lock();
	on_each_cpu(cp_zero_cpu, NULL, 1);
	for_each_possible_cpu(cpu) {
		if (cpu_online(cpu))
			continue;
		/* IRQs off: a HIST reader never waits on a preempted writer */
		local_irq_save(flags);
		cp_zero_stats(per_cpu_ptr(cp_probes[CPUHP_PROBE_NOHZ_TIMER_TARGET].stats, cpu),
			      per_cpu_ptr(cp_targets, cpu));
		local_irq_restore(flags);
	}
	cpus_read_unlock();
	for (i = 0; cp_targets_far && i < nr_cpu_ids - cp_targets_near; i++)
		atomic64_set(&cp_targets_far[i], 0);
}

/* A consistent copy of one CPU's statistics. */
static void cp_stats_read(const struct cp_nohz_stats *s, struct cp_nohz_stats *out)
{
	unsigned int seq;

	do {
		seq = raw_read_seqcount_begin(&s->seq);
		out->count = s->count;
		out->sum_ns = s->sum_ns;
		out->max_ns = s->max_ns;
		memcpy(out->buckets, s->buckets, sizeof(out->buckets));
	} while (read_seqcount_retry(&s->seq, seq));
}

static void cp_hist_add(struct cpuhp_probe_hist *h, const struct cp_nohz_stats *s)
{
	struct cp_nohz_stats c;
	int i;

	cp_stats_read(s, &c);
	h->count += c.count;
	h->sum_ns += c.sum_ns;
	h->max_ns = max_t(u64, h->max_ns, c.max_ns);
	for (i = 0; i < CPUHP_PROBE_HIST_BUCKETS; i++)
		h->buckets[i] += c.buckets[i];
}

static u64 cp_nohz_hits(struct cp_probe *p)
{
	struct cpuhp_probe_hist h = {};
	int cpu;

	for_each_possible_cpu(cpu)
		cp_hist_add(&h, per_cpu_ptr(p->stats, cpu));
	return h.count;
}

static int cp_dev_open(struct inode *inode, struct file *file)
{
	if (atomic_cmpxchg(&cp_open, 0, 1) != 0)
		return -EBUSY;
	return nonseekable_open(inode, file);
}

static int cp_dev_release(struct inode *inode, struct file *file)
{
	atomic_set_release(&cp_open, 0);
	return 0;
}

/*
 * Copies up to max records of one CPU's ring into buf without consuming
 * them; returns how many. Caller holds cp_read_mutex.
 */
static size_t cp_peek(struct cp_ring *ring, struct cpuhp_probe_record *buf, size_t max)
{
	unsigned long flags;
	size_t n = 0;
	u32 tail;

	raw_spin_lock_irqsave(&ring->lock, flags);
	for (tail = ring->tail; n < max && tail != ring->head; tail++)
		buf[n++] = ring->recs[tail % ring_records];
	raw_spin_unlock_irqrestore(&ring->lock, flags);
	return n;
}

/* Consumes n records that cp_peek() returned. Caller holds cp_read_mutex. */
static void cp_consume(struct cp_ring *ring, size_t n)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&ring->lock, flags);
	ring->tail += n;
	atomic_long_sub(n, &cp_pending);
	raw_spin_unlock_irqrestore(&ring->lock, flags);
}

#define CP_READ_CHUNK 64
/* The readers' bounce buffer, used under cp_read_mutex only. */
static struct cpuhp_probe_record cp_read_buf[CP_READ_CHUNK];

/*
 * Moves up to want records to user space; returns how many, or -EFAULT
 * when the first copy faults. Records are consumed only once copied, so a
 * fault loses none of them. Caller holds cp_read_mutex.
 */
static ssize_t cp_read_records(char __user *ubuf, size_t want)
{
	const size_t sz = sizeof(struct cpuhp_probe_record);
	size_t done = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		struct cp_ring *ring = per_cpu_ptr(&cp_rings, cpu);

		while (done < want) {
			size_t n = cp_peek(ring, cp_read_buf,
					   min_t(size_t, want - done, CP_READ_CHUNK));

			if (!n)
				break;
			if (copy_to_user(ubuf + done * sz, cp_read_buf, n * sz))
				return done ? (ssize_t)done : -EFAULT;
			cp_consume(ring, n);
			done += n;
		}
		if (done == want)
			break;
	}
	return done;
}

/*
 * Never sleeps, whatever the file's flags: handlers run where waking a
 * task is not safe (IRQs off, stop_machine), and the daemon reads at the
 * points it joins records to writes. Nothing buffered: -EAGAIN.
 */
static ssize_t cp_dev_read(struct file *file, char __user *ubuf, size_t count,
			   loff_t *ppos)
{
	const size_t sz = sizeof(struct cpuhp_probe_record);
	size_t want = count / sz;
	ssize_t ret;

	if (want == 0)
		return -EINVAL;
	if (mutex_lock_interruptible(&cp_read_mutex))
		return -ERESTARTSYS;
	ret = cp_read_records(ubuf, want);
	mutex_unlock(&cp_read_mutex);
	if (ret > 0)
		return ret * sz;
	return ret ? ret : -EAGAIN;
}

static long cp_ioc_probe_info(void __user *arg)
{
	struct cpuhp_probe_info info;
	struct cp_probe *p;

	if (copy_from_user(&info, arg, sizeof(info)))
		return -EFAULT;
	if (info.id >= CPUHP_PROBE_NR)
		return -EINVAL;
	p = &cp_probes[info.id];
	memset(&info, 0, sizeof(info));
	info.id = p - cp_probes;
	info.placed = p->placed;
	info.selected = p->selected;
	info.error = p->error;
	strscpy(info.name, p->name, sizeof(info.name));
	strscpy(info.symbol, p->symbol, sizeof(info.symbol));
	strscpy(info.reason, p->reason, sizeof(info.reason));
	info.hits = p->hist ? cp_nohz_hits(p) : atomic64_read(&p->hits);
	info.nmissed = cp_nmissed(p) - p->nmissed_base;
	info.dropped = atomic64_read(&p->dropped);
	return copy_to_user(arg, &info, sizeof(info)) ? -EFAULT : 0;
}

/* Both get_nohz_timer_target sections need it placed: no zeros for "absent". */
static bool cp_nohz_placed(void)
{
	return cp_probes[CPUHP_PROBE_NOHZ_TIMER_TARGET].placed;
}

static long cp_ioc_hist(void __user *arg)
{
	struct cp_probe *p = &cp_probes[CPUHP_PROBE_NOHZ_TIMER_TARGET];
	struct cpuhp_probe_hist h;
	u32 cpu;
	int c;

	if (copy_from_user(&h, arg, sizeof(h)))
		return -EFAULT;
	cpu = h.cpu;
	if (cpu != CPUHP_PROBE_ALL_CPUS && (cpu >= nr_cpu_ids || !cpu_possible(cpu)))
		return -EINVAL;
	if (!cp_nohz_placed())
		return -ENODEV;
	memset(&h, 0, sizeof(h));
	h.cpu = cpu;
	if (cpu == CPUHP_PROBE_ALL_CPUS) {
		for_each_possible_cpu(c)
			cp_hist_add(&h, per_cpu_ptr(p->stats, c));
	} else {
		cp_hist_add(&h, per_cpu_ptr(p->stats, cpu));
	}
	return copy_to_user(arg, &h, sizeof(h)) ? -EFAULT : 0;
}

/*
 * Adds CPU C's row of near-target counts to SUM through ROW, the row copied
 * in one pass of that CPU's nohz stats seqcount: one moment of the CPU's
 * counters (and both halves of each u64 on a 32-bit kernel).
 */
static void cp_targets_add_row(int c, u64 *sum, u64 *row)
{
	const struct cp_nohz_stats *s =
		per_cpu_ptr(cp_probes[CPUHP_PROBE_NOHZ_TIMER_TARGET].stats, c);
	unsigned int seq;
	u32 i;

	do {
		seq = raw_read_seqcount_begin(&s->seq);
		memcpy(row, per_cpu_ptr(cp_targets, c), cp_targets_near * sizeof(u64));
	} while (read_seqcount_retry(&s->seq, seq));
	for (i = 0; i < cp_targets_near; i++)
		sum[i] += row[i];
}

static long cp_ioc_targets(void __user *arg)
{
	struct cpuhp_probe_targets t;
	u64 __user *out;
	u64 *sum, v;
	long ret = 0;
	u32 i, n;
	int c;

	if (copy_from_user(&t, arg, sizeof(t)))
		return -EFAULT;
	if (t.nr > 65536)
		return -EINVAL;
	if (!cp_nohz_placed())
		return -ENODEV;
	/* the sums, then one CPU's row */
	sum = kvcalloc(2 * (size_t)cp_targets_near, sizeof(u64), GFP_KERNEL);
	if (!sum)
		return -ENOMEM;
	for_each_possible_cpu(c)
		cp_targets_add_row(c, sum, sum + cp_targets_near);
	out = u64_to_user_ptr(t.counts_ptr);
	n = min_t(u32, t.nr, nr_cpu_ids);
	for (i = 0; i < n; i++) {
		v = i < cp_targets_near ? sum[i] :
			(u64)atomic64_read(&cp_targets_far[i - cp_targets_near]);
		if (put_user(v, out + i)) {
			ret = -EFAULT;
			break;
		}
	}
	kvfree(sum);
	if (ret)
		return ret;
	t.nr_cpu_ids = nr_cpu_ids;
	return copy_to_user(arg, &t, sizeof(t)) ? -EFAULT : 0;
}

/*
 * Near-zero cost, never inlined nor cloned (callers must reach this very
 * function, where the calibration probe sits), not pure (the barrier).
 */
static noinline __noclone int cp_calib_target(int x)
{
	barrier();
	return x;
}
static int cp_calib_sink;

/* Calls the target n times, each with IRQs off as get_nohz_timer_target's callers. */
static void cp_calib_calls(int n)
{
	unsigned long flags;
	int i, sum = 0;

	for (i = 0; i < n; i++) {
		local_irq_save(flags);
		sum += cp_calib_target(i);
		local_irq_restore(flags);
	}
	WRITE_ONCE(cp_calib_sink, sum);
}

static u32 cp_mech(struct cp_probe *p)
{
	struct kprobe *kp = &p->var[0].rp.kp;

	if (!p->placed)
		return CPUHP_PROBE_MECH_NONE;
	if (kp->flags & KPROBE_FLAG_FTRACE)
		return CPUHP_PROBE_MECH_FTRACE;
	if (kp->flags & KPROBE_FLAG_OPTIMIZED)
		return CPUHP_PROBE_MECH_JUMP;
	return CPUHP_PROBE_MECH_TRAP;
}

static long cp_ioc_calib(void __user *arg)
{
	struct kretprobe *rp = &cp_calib.var[0].rp;
	struct cpuhp_probe_hist h;
	int c, ret;

	if (copy_from_user(&h, arg, sizeof(h)))
		return -EFAULT;
	if (!cp_calib.placed)
		return -ENODEV;
	if (mutex_lock_interruptible(&cp_calib_mutex))
		return -ERESTARTSYS;
	/* Only this module calls the target, under this mutex: no handler is in flight. */
	for_each_possible_cpu(c)
		cp_zero_stats(per_cpu_ptr(cp_calib.stats, c), NULL);
	/* Armed for the loop only (cp_place_one) */
	ret = enable_kretprobe(rp);
	if (ret) {
		mutex_unlock(&cp_calib_mutex);
		return ret;
	}
	cp_calib_calls(CPUHP_PROBE_CALIB_CALLS);
	disable_kretprobe(rp);
	memset(&h, 0, sizeof(h));
	h.cpu = CPUHP_PROBE_ALL_CPUS;
	for_each_possible_cpu(c)
		cp_hist_add(&h, per_cpu_ptr(cp_calib.stats, c));
	mutex_unlock(&cp_calib_mutex);
	return copy_to_user(arg, &h, sizeof(h)) ? -EFAULT : 0;
}

#define CP_CALIB_ROUND 100

static long cp_ioc_calib_direct(void __user *arg)
{
	struct kretprobe *rp = &cp_calib.var[0].rp;
	struct cpuhp_probe_calib_direct d = {};
	int r, ret = 0;
	u64 t;

	if (!cp_calib.placed)
		return -ENODEV;
	if (mutex_lock_interruptible(&cp_calib_mutex))
		return -ERESTARTSYS;
	for (r = 0; r < CPUHP_PROBE_CALIB_CALLS / CP_CALIB_ROUND; r++) {
		t = ktime_get_mono_fast_ns();
		cp_calib_calls(CP_CALIB_ROUND);
		d.bare_ns += ktime_get_mono_fast_ns() - t;
		ret = enable_kretprobe(rp);
		if (ret)
			break;
		d.calib_mech = cp_mech(&cp_calib);
		t = ktime_get_mono_fast_ns();
		cp_calib_calls(CP_CALIB_ROUND);
		d.probed_ns += ktime_get_mono_fast_ns() - t;
		disable_kretprobe(rp);
		d.calls += CP_CALIB_ROUND;
	}
	mutex_unlock(&cp_calib_mutex);
	if (ret)
		return ret;
	d.nohz_mech = cp_mech(&cp_probes[CPUHP_PROBE_NOHZ_TIMER_TARGET]);
	return copy_to_user(arg, &d, sizeof(d)) ? -EFAULT : 0;
}

static long cp_dev_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	struct cpuhp_probe_version v;
	unsigned int want;

	if (_IOC_TYPE(cmd) != CPUHP_PROBE_IOC_MAGIC)
		return -ENOTTY;
	switch (_IOC_NR(cmd)) {
	case _IOC_NR(CPUHP_PROBE_IOC_VERSION):
		want = CPUHP_PROBE_IOC_VERSION;
		break;
	case _IOC_NR(CPUHP_PROBE_IOC_PROBE_INFO):
		want = CPUHP_PROBE_IOC_PROBE_INFO;
		break;
	case _IOC_NR(CPUHP_PROBE_IOC_HIST):
		want = CPUHP_PROBE_IOC_HIST;
		break;
	case _IOC_NR(CPUHP_PROBE_IOC_TARGETS):
		want = CPUHP_PROBE_IOC_TARGETS;
		break;
	case _IOC_NR(CPUHP_PROBE_IOC_RESET):
		want = CPUHP_PROBE_IOC_RESET;
		break;
	case _IOC_NR(CPUHP_PROBE_IOC_CALIB):
		want = CPUHP_PROBE_IOC_CALIB;
		break;
	case _IOC_NR(CPUHP_PROBE_IOC_CALIB_DIRECT):
		want = CPUHP_PROBE_IOC_CALIB_DIRECT;
		break;
	default:
		return -ENOTTY;
	}
	/* A known number with another size or direction is not our command. */
	if (cmd != want)
		return -ENOTTY;

	switch (cmd) {
	case CPUHP_PROBE_IOC_VERSION:
		memset(&v, 0, sizeof(v));
		v.api_version = CPUHP_PROBE_API_VERSION;
		v.record_size = sizeof(struct cpuhp_probe_record);
		v.nr_probes = CPUHP_PROBE_NR;
		v.nr_cpu_ids = nr_cpu_ids;
		v.ring_records = ring_records;
		return copy_to_user(uarg, &v, sizeof(v)) ? -EFAULT : 0;
	case CPUHP_PROBE_IOC_PROBE_INFO:
		return cp_ioc_probe_info(uarg);
	case CPUHP_PROBE_IOC_HIST:
		return cp_ioc_hist(uarg);
	case CPUHP_PROBE_IOC_TARGETS:
		return cp_ioc_targets(uarg);
	case CPUHP_PROBE_IOC_CALIB:
		return cp_ioc_calib(uarg);
	case CPUHP_PROBE_IOC_CALIB_DIRECT:
		return cp_ioc_calib_direct(uarg);
	case CPUHP_PROBE_IOC_RESET:
		if (mutex_lock_interruptible(&cp_read_mutex))
			return -ERESTARTSYS;
		cp_reset();
		mutex_unlock(&cp_read_mutex);
		return 0;
	}
	return -ENOTTY;
}

static const struct file_operations cp_fops = {
	.owner = THIS_MODULE,
	.open = cp_dev_open,
	.release = cp_dev_release,
	.read = cp_dev_read,
	.unlocked_ioctl = cp_dev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice cp_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "cpuhp_probe",
	.fops = &cp_fops,
	.mode = 0600,
};

static void cp_free(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		kvfree(per_cpu_ptr(&cp_rings, cpu)->recs);
		per_cpu_ptr(&cp_rings, cpu)->recs = NULL;
	}
	free_percpu(cp_targets);
	cp_targets = NULL;
	kvfree(cp_targets_far);
	cp_targets_far = NULL;
	free_percpu(cp_probes[CPUHP_PROBE_NOHZ_TIMER_TARGET].stats);
	cp_probes[CPUHP_PROBE_NOHZ_TIMER_TARGET].stats = NULL;
	free_percpu(cp_calib.stats);
	cp_calib.stats = NULL;
}

/* One batch: a single RCU grace period instead of one per probe. */
static void cp_unplace_all(void)
{
	struct kretprobe *rps[(CPUHP_PROBE_NR + 1) * CP_MAX_VARIANTS];
	int i, j, n = 0;

	for (i = CPUHP_PROBE_NR; i >= 0; i--) {
		struct cp_probe *p = i == CPUHP_PROBE_NR ? &cp_calib : &cp_probes[i];

		for (j = 0; j < p->nr_variants; j++)
			rps[n++] = &p->var[j].rp;
		p->nr_variants = 0;
		p->placed = false;
	}
	if (n)
		unregister_kretprobes(rps, n);
}

static struct cp_nohz_stats __percpu *cp_alloc_stats(void)
{
	struct cp_nohz_stats __percpu *st = alloc_percpu(struct cp_nohz_stats);
	int cpu;

	if (!st)
		return NULL;
	for_each_possible_cpu(cpu)
		seqcount_init(&per_cpu_ptr(st, cpu)->seq);
	return st;
}

static int cp_alloc(void)
{
	int cpu;

	/* A bounded per-CPU table: nr_cpu_ids of them per CPU would be quadratic. */
	cp_targets_near = min_t(u32, nr_cpu_ids, targets_pcpu_max);
	cp_targets = __alloc_percpu(cp_targets_near * sizeof(u64), sizeof(u64));
	if (!cp_targets)
		return -ENOMEM;
	if (nr_cpu_ids > cp_targets_near) {
		cp_targets_far = kvcalloc(nr_cpu_ids - cp_targets_near, sizeof(*cp_targets_far),
					  GFP_KERNEL);
		if (!cp_targets_far)
			return -ENOMEM;
	}
	cp_probes[CPUHP_PROBE_NOHZ_TIMER_TARGET].stats = cp_alloc_stats();
	cp_calib.stats = cp_alloc_stats();
	if (!cp_probes[CPUHP_PROBE_NOHZ_TIMER_TARGET].stats || !cp_calib.stats)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		struct cp_ring *ring = per_cpu_ptr(&cp_rings, cpu);

		raw_spin_lock_init(&ring->lock);
		ring->head = 0;
		ring->tail = 0;
		/* On the CPU's own node: only that CPU's handlers write it. */
		ring->recs = kvzalloc_node(array_size(ring_records, sizeof(*ring->recs)),
					   GFP_KERNEL, cpu_to_node(cpu));
		if (!ring->recs)
			return -ENOMEM;
	}
	return 0;
}

static int __init cp_init(void)
{
	int i, ret, placed = 0;

	if (ring_records < 16 || ring_records > 65536) {
		pr_err("ring_records=%u: expected 16..65536\n", ring_records);
		return -EINVAL;
	}
	if (targets_pcpu_max < 1 || targets_pcpu_max > 4096) {
		pr_err("targets_pcpu_max=%u: expected 1..4096\n", targets_pcpu_max);
		return -EINVAL;
	}
	/* A power of two keeps slot = counter % size continuous across u32 wrap. */
	ring_records = roundup_pow_of_two(ring_records);
	ret = cp_select();
	if (!ret)
		ret = cp_check_list("symbols", symbols, true);
	if (!ret)
		ret = cp_check_list("variants", variants, false);
	if (ret)
		return ret;

	ret = cp_alloc();
	if (ret)
		goto err_free;

	for (i = 0; i < CPUHP_PROBE_NR; i++) {
		struct cp_probe *p = &cp_probes[i];

		atomic64_set(&p->hits, 0);
		atomic64_set(&p->dropped, 0);
		if (!p->selected) {
			p->error = 0;
			snprintf(p->symbol, sizeof(p->symbol), "%s", p->name);
			snprintf(p->reason, sizeof(p->reason), "not selected (probes=%s)", probes);
			continue;
		}
		cp_place(p);
		if (p->placed)
			placed++;
	}
	/* Calibration is only meaningful beside the histogram it calibrates. */
	if (cp_nohz_placed()) {
		ret = cp_place_one(&cp_calib, cp_calib.name);
		if (ret)
			pr_warn("calibration probe not placed (%d): CALIB returns -ENODEV\n", ret);
	}

	ret = misc_register(&cp_misc);
	if (ret)
		goto err_unplace;
	if (CP_TORTURE_RET_MS)
		pr_notice("torture build: return handlers linger %d ms\n", CP_TORTURE_RET_MS);
	pr_info("%d of %d probes placed, /dev/%s ready (API %d)\n", placed,
		CPUHP_PROBE_NR, cp_misc.name, CPUHP_PROBE_API_VERSION);
	return 0;

err_unplace:
	cp_unplace_all();
err_free:
	cp_free();
	return ret;
}

static void __exit cp_exit(void)
{
	misc_deregister(&cp_misc);
	cp_unplace_all();
	cp_free();
}

module_init(cp_init);
module_exit(cp_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("cpuhp-stress");
MODULE_DESCRIPTION("kretprobe timing of the CPU hotplug path and get_nohz_timer_target");
/* The DKMS package version (kmod/dkms.conf); the kmatrix cells check they agree. */
MODULE_VERSION("0.1.0");
