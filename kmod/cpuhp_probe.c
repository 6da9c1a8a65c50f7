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
 * Symbols are resolved in the module: each probe tries its plain name, then
 * the names GCC gives to specialised copies (NAME.constprop.N, NAME.isra.N);
 * register_kretprobe() fails with -ENOENT for a name not in kallsyms, so
 * the first candidate that registers is the one placed. A probe that places
 * nowhere is reported as unavailable with the reason; the module still loads.
 *
 * The interface is kmod/uapi/cpuhp_probe.h, shared with user space.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/kprobes.h>
#include <linux/log2.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/poll.h>
#include <linux/ptrace.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/timer.h>
#include <linux/uaccess.h>
#include <linux/version.h>
#include <linux/wait.h>

#include "uapi/cpuhp_probe.h"

static char *probes = "all";
module_param(probes, charp, 0444);
MODULE_PARM_DESC(probes,
		 "Comma-separated probes to place (function names, e.g. takedown_cpu,get_nohz_timer_target) or \"all\"");

static unsigned int ring_records = 1024;
module_param(ring_records, uint, 0444);
MODULE_PARM_DESC(ring_records, "Records per CPU ring (16..65536, rounded up to a power of two)");

struct cp_probe {
	const char *name;
	bool has_cpu_arg;	/* first argument is the target CPU */
	bool hist;		/* histogram probe: no per-hit records */
	bool selected;
	bool placed;
	bool arg_unsure;	/* placed on a renamed copy */
	int error;
	char symbol[CPUHP_PROBE_NAME_LEN];
	char reason[CPUHP_PROBE_REASON_LEN];
	atomic64_t hits;
	atomic64_t dropped;
	u64 nmissed_base;
	struct kretprobe rp;
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

/* Saved at entry in the kretprobe instance. */
struct cp_entry {
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

struct cp_nohz_stats {
	u64 count;
	u64 sum_ns;
	u64 max_ns;
	u64 buckets[CPUHP_PROBE_HIST_BUCKETS];
};

static DEFINE_PER_CPU(struct cp_ring, cp_rings);
static DEFINE_PER_CPU(struct cp_nohz_stats, cp_nohz);
static u64 __percpu *cp_targets;	/* nr_cpu_ids counters per CPU */
static atomic64_t cp_seq;
static atomic_long_t cp_pending;	/* records in all rings, under the ring locks */
/*
 * Serialises the consumers (read() and RESET): only they advance a ring's
 * tail, so a reader can copy records out, copy them to user space, and
 * only then consume them. A fault loses nothing.
 */
static DEFINE_MUTEX(cp_read_mutex);

static DECLARE_WAIT_QUEUE_HEAD(cp_wq);
static struct timer_list cp_wake_timer;
static atomic_t cp_open = ATOMIC_INIT(0);
#define CP_WAKE_MS 10

static unsigned long cp_arg0(struct pt_regs *regs)
{
#if defined(CONFIG_X86_64)
	return regs->di;
#elif defined(CONFIG_ARM64)
	return regs->regs[0];
#elif defined(CONFIG_PPC64)
	return regs->gpr[3];
#elif defined(CONFIG_ARM)
	return regs->ARM_r0;
#else
#error "cpuhp_probe: no argument accessor for this architecture"
#endif
}
NOKPROBE_SYMBOL(cp_arg0);

static struct cp_probe *cp_of(struct kretprobe_instance *ri)
{
	return container_of(get_kretprobe(ri), struct cp_probe, rp);
}
NOKPROBE_SYMBOL(cp_of);

static int cp_entry_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct cp_probe *p = cp_of(ri);
	struct cp_entry *e = (struct cp_entry *)ri->data;

	e->exec_cpu = raw_smp_processor_id();
	e->target_cpu = p->has_cpu_arg ? (s32)cp_arg0(regs) : (s32)e->exec_cpu;
	e->online = num_online_cpus();
	e->start_ns = ktime_get_mono_fast_ns();
	return 0;
}
NOKPROBE_SYMBOL(cp_entry_handler);

static int cp_ret_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	u64 end_ns = ktime_get_mono_fast_ns();
	struct cp_probe *p = cp_of(ri);
	struct cp_entry *e = (struct cp_entry *)ri->data;
	struct cp_ring *ring;
	struct cpuhp_probe_record *r;
	unsigned long flags;

	atomic64_inc(&p->hits);
	ring = this_cpu_ptr(&cp_rings);
	raw_spin_lock_irqsave(&ring->lock, flags);
	if (ring->head - ring->tail >= ring_records) {
		raw_spin_unlock_irqrestore(&ring->lock, flags);
		atomic64_inc(&p->dropped);
		return 0;
	}
	r = &ring->recs[ring->head % ring_records];
	r->seq = atomic64_inc_return(&cp_seq) - 1;
	r->start_ns = e->start_ns;
	r->duration_ns = end_ns - e->start_ns;
	/* Every probed function returns int: the upper register half is undefined. */
	r->retval = (s64)(int)regs_return_value(regs);
	r->probe_id = p - cp_probes;
	r->target_cpu = e->target_cpu;
	r->exec_cpu = e->exec_cpu;
	r->online_at_entry = e->online;
	r->flags = p->arg_unsure ? CPUHP_PROBE_REC_ARG_UNSURE : 0;
	r->reserved = 0;
	ring->head++;
	atomic_long_inc(&cp_pending);
	raw_spin_unlock_irqrestore(&ring->lock, flags);
	return 0;
}
NOKPROBE_SYMBOL(cp_ret_handler);

static int cp_nohz_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	*(u64 *)ri->data = ktime_get_mono_fast_ns();
	return 0;
}
NOKPROBE_SYMBOL(cp_nohz_entry);

static int cp_nohz_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	u64 d = ktime_get_mono_fast_ns() - *(u64 *)ri->data;
	unsigned long target = regs_return_value(regs);
	unsigned int b = d ? min_t(unsigned int, ilog2(d), CPUHP_PROBE_HIST_BUCKETS - 1) : 0;

	this_cpu_inc(cp_nohz.count);
	this_cpu_add(cp_nohz.sum_ns, d);
	this_cpu_inc(cp_nohz.buckets[b]);
	if (d > __this_cpu_read(cp_nohz.max_ns))
		__this_cpu_write(cp_nohz.max_ns, d);
	if (target < nr_cpu_ids)
		this_cpu_inc(cp_targets[target]);
	return 0;
}
NOKPROBE_SYMBOL(cp_nohz_ret);

static const char * const cp_suffixes[] = {
	"", ".constprop.0", ".constprop.1", ".constprop.2", ".constprop.3",
	".isra.0", ".isra.1", ".isra.2", ".isra.3",
};

static void cp_place(struct cp_probe *p)
{
	int i, ret = -ENOENT, first_other = 0;

	for (i = 0; i < ARRAY_SIZE(cp_suffixes); i++) {
		snprintf(p->symbol, sizeof(p->symbol), "%s%s", p->name, cp_suffixes[i]);
		memset(&p->rp, 0, sizeof(p->rp));
		p->rp.kp.symbol_name = p->symbol;
		if (p->hist) {
			p->rp.entry_handler = cp_nohz_entry;
			p->rp.handler = cp_nohz_ret;
			p->rp.data_size = sizeof(u64);
			p->rp.maxactive = max_t(int, 64, 4 * num_possible_cpus());
		} else {
			p->rp.entry_handler = cp_entry_handler;
			p->rp.handler = cp_ret_handler;
			p->rp.data_size = sizeof(struct cp_entry);
		}
		ret = register_kretprobe(&p->rp);
		if (!ret) {
			p->placed = true;
			p->arg_unsure = i > 0 && p->has_cpu_arg;
			p->error = 0;
			p->reason[0] = '\0';
			return;
		}
		/* Keep the most telling error: a name that exists but refused. */
		if (ret != -ENOENT && !first_other)
			first_other = ret;
	}
	p->error = first_other ? first_other : ret;
	if (first_other)
		snprintf(p->reason, sizeof(p->reason),
			 "register_kretprobe(%s*) failed: %d", p->name, first_other);
	else
		snprintf(p->reason, sizeof(p->reason),
			 "no symbol %s (nor .constprop.N/.isra.N) in kallsyms", p->name);
	snprintf(p->symbol, sizeof(p->symbol), "%s", p->name);
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
	if (!p->placed)
		return 0;
	return (u64)p->rp.nmissed + p->rp.kp.nmissed;
}

static void cp_reset(void)
{
	unsigned long flags;
	int cpu, i;

	lockdep_assert_held(&cp_read_mutex);
	for_each_possible_cpu(cpu) {
		struct cp_ring *ring = per_cpu_ptr(&cp_rings, cpu);

		raw_spin_lock_irqsave(&ring->lock, flags);
		atomic_long_sub(ring->head - ring->tail, &cp_pending);
		ring->tail = ring->head;
		raw_spin_unlock_irqrestore(&ring->lock, flags);
		/* Racy against a hit in flight on that CPU: off by one at most. */
		memset(per_cpu_ptr(&cp_nohz, cpu), 0, sizeof(struct cp_nohz_stats));
		memset(per_cpu_ptr(cp_targets, cpu), 0, nr_cpu_ids * sizeof(u64));
	}
	for (i = 0; i < CPUHP_PROBE_NR; i++) {
		atomic64_set(&cp_probes[i].hits, 0);
		atomic64_set(&cp_probes[i].dropped, 0);
		cp_probes[i].nmissed_base = cp_nmissed(&cp_probes[i]);
	}
}

static u64 cp_nohz_hits(void)
{
	u64 n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += READ_ONCE(per_cpu_ptr(&cp_nohz, cpu)->count);
	return n;
}

static void cp_wake_fn(struct timer_list *t)
{
	if (atomic_long_read(&cp_pending) > 0)
		wake_up_interruptible(&cp_wq);
	if (atomic_read(&cp_open))
		mod_timer(&cp_wake_timer, jiffies + msecs_to_jiffies(CP_WAKE_MS));
}

static int cp_dev_open(struct inode *inode, struct file *file)
{
	if (atomic_cmpxchg(&cp_open, 0, 1) != 0)
		return -EBUSY;
	mod_timer(&cp_wake_timer, jiffies + msecs_to_jiffies(CP_WAKE_MS));
	return nonseekable_open(inode, file);
}

static int cp_dev_release(struct inode *inode, struct file *file)
{
	/*
	 * Stop the timer while we still own the device: clearing cp_open
	 * first would let the next opener arm the timer, and this
	 * del_timer_sync() would then cancel the new opener's wakeups.
	 * The handler re-arms itself; the sync delete handles that.
	 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	timer_delete_sync(&cp_wake_timer);
#else
	del_timer_sync(&cp_wake_timer);
#endif
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

/*
 * Moves up to want records to user space; returns how many, or -EFAULT
 * when the first copy faults. Records are consumed only once copied, so a
 * fault loses none of them.
 */
static ssize_t cp_read_records(char __user *ubuf, size_t want,
			       struct cpuhp_probe_record *buf)
{
	const size_t sz = sizeof(struct cpuhp_probe_record);
	size_t done = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		struct cp_ring *ring = per_cpu_ptr(&cp_rings, cpu);

		while (done < want) {
			size_t n = cp_peek(ring, buf, min_t(size_t, want - done, CP_READ_CHUNK));

			if (!n)
				break;
			if (copy_to_user(ubuf + done * sz, buf, n * sz))
				return done ? (ssize_t)done : -EFAULT;
			cp_consume(ring, n);
			done += n;
		}
		if (done == want)
			break;
	}
	return done;
}

static ssize_t cp_dev_read(struct file *file, char __user *ubuf, size_t count,
			   loff_t *ppos)
{
	const size_t sz = sizeof(struct cpuhp_probe_record);
	struct cpuhp_probe_record *buf;
	size_t want = count / sz;
	ssize_t ret;

	if (want == 0)
		return -EINVAL;
	buf = kmalloc_array(CP_READ_CHUNK, sz, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	/*
	 * Another reader of the same file may take the records we were woken
	 * for: a blocking read then waits again rather than return -EAGAIN.
	 */
	for (;;) {
		if (!(file->f_flags & O_NONBLOCK)) {
			ret = wait_event_interruptible(cp_wq,
						       atomic_long_read(&cp_pending) > 0);
			if (ret)
				break;
		}
		ret = mutex_lock_interruptible(&cp_read_mutex);
		if (ret)
			break;
		ret = cp_read_records(ubuf, want, buf);
		mutex_unlock(&cp_read_mutex);
		if (ret) {
			if (ret > 0)
				ret *= sz;
			break;
		}
		if (file->f_flags & O_NONBLOCK) {
			ret = -EAGAIN;
			break;
		}
	}
	kfree(buf);
	return ret;
}

static __poll_t cp_dev_poll(struct file *file, poll_table *wait)
{
	poll_wait(file, &cp_wq, wait);
	return atomic_long_read(&cp_pending) > 0 ? EPOLLIN | EPOLLRDNORM : 0;
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
	info.hits = p->hist ? cp_nohz_hits() : atomic64_read(&p->hits);
	info.nmissed = cp_nmissed(p) - p->nmissed_base;
	info.dropped = atomic64_read(&p->dropped);
	return copy_to_user(arg, &info, sizeof(info)) ? -EFAULT : 0;
}

static void cp_hist_add(struct cpuhp_probe_hist *h, const struct cp_nohz_stats *s)
{
	int i;

	h->count += READ_ONCE(s->count);
	h->sum_ns += READ_ONCE(s->sum_ns);
	h->max_ns = max_t(u64, h->max_ns, READ_ONCE(s->max_ns));
	for (i = 0; i < CPUHP_PROBE_HIST_BUCKETS; i++)
		h->buckets[i] += READ_ONCE(s->buckets[i]);
}

static long cp_ioc_hist(void __user *arg)
{
	struct cpuhp_probe_hist h;
	u32 cpu;
	int c;

	if (copy_from_user(&h, arg, sizeof(h)))
		return -EFAULT;
	cpu = h.cpu;
	if (cpu != CPUHP_PROBE_ALL_CPUS && (cpu >= nr_cpu_ids || !cpu_possible(cpu)))
		return -EINVAL;
	memset(&h, 0, sizeof(h));
	h.cpu = cpu;
	if (cpu == CPUHP_PROBE_ALL_CPUS) {
		for_each_possible_cpu(c)
			cp_hist_add(&h, per_cpu_ptr(&cp_nohz, c));
	} else {
		cp_hist_add(&h, per_cpu_ptr(&cp_nohz, cpu));
	}
	return copy_to_user(arg, &h, sizeof(h)) ? -EFAULT : 0;
}

static long cp_ioc_targets(void __user *arg)
{
	struct cpuhp_probe_targets t;
	u64 __user *out;
	u32 i, n;
	int c;

	if (copy_from_user(&t, arg, sizeof(t)))
		return -EFAULT;
	if (t.nr > 65536)
		return -EINVAL;
	out = u64_to_user_ptr(t.counts_ptr);
	n = min_t(u32, t.nr, nr_cpu_ids);
	for (i = 0; i < n; i++) {
		u64 sum = 0;

		for_each_possible_cpu(c)
			sum += READ_ONCE(per_cpu_ptr(cp_targets, c)[i]);
		if (put_user(sum, out + i))
			return -EFAULT;
	}
	t.nr_cpu_ids = nr_cpu_ids;
	return copy_to_user(arg, &t, sizeof(t)) ? -EFAULT : 0;
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
	default:
		return -ENOTTY;
	}
	/* A known command with another size or direction: bad size. */
	if (cmd != want)
		return -EINVAL;

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
	.poll = cp_dev_poll,
	.unlocked_ioctl = cp_dev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice cp_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "cpuhp_probe",
	.fops = &cp_fops,
	.mode = 0600,
};

static void cp_free_rings(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		kvfree(per_cpu_ptr(&cp_rings, cpu)->recs);
		per_cpu_ptr(&cp_rings, cpu)->recs = NULL;
	}
	free_percpu(cp_targets);
	cp_targets = NULL;
}

/* One batch: a single RCU grace period instead of one per probe. */
static void cp_unplace_all(void)
{
	struct kretprobe *rps[CPUHP_PROBE_NR];
	int i, n = 0;

	for (i = CPUHP_PROBE_NR - 1; i >= 0; i--) {
		if (cp_probes[i].placed) {
			rps[n++] = &cp_probes[i].rp;
			cp_probes[i].placed = false;
		}
	}
	if (n)
		unregister_kretprobes(rps, n);
}

static int __init cp_init(void)
{
	int cpu, i, ret, placed = 0;

	if (ring_records < 16 || ring_records > 65536) {
		pr_err("ring_records=%u: expected 16..65536\n", ring_records);
		return -EINVAL;
	}
	/* A power of two keeps slot = counter % size continuous across u32 wrap. */
	ring_records = roundup_pow_of_two(ring_records);
	ret = cp_select();
	if (ret)
		return ret;

	cp_targets = __alloc_percpu(nr_cpu_ids * sizeof(u64), sizeof(u64));
	if (!cp_targets)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		struct cp_ring *ring = per_cpu_ptr(&cp_rings, cpu);

		raw_spin_lock_init(&ring->lock);
		ring->head = 0;
		ring->tail = 0;
		ring->recs = kvcalloc(ring_records, sizeof(*ring->recs), GFP_KERNEL);
		if (!ring->recs) {
			ret = -ENOMEM;
			goto err_free;
		}
	}
	timer_setup(&cp_wake_timer, cp_wake_fn, 0);

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

	ret = misc_register(&cp_misc);
	if (ret)
		goto err_unplace;
	pr_info("%d of %d probes placed, /dev/%s ready (API %d)\n", placed,
		CPUHP_PROBE_NR, cp_misc.name, CPUHP_PROBE_API_VERSION);
	return 0;

err_unplace:
	cp_unplace_all();
err_free:
	cp_free_rings();
	return ret;
}

static void __exit cp_exit(void)
{
	misc_deregister(&cp_misc);
	cp_unplace_all();
	cp_free_rings();
}

module_init(cp_init);
module_exit(cp_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("cpuhp-stress");
MODULE_DESCRIPTION("kretprobe timing of the CPU hotplug path and get_nohz_timer_target");
MODULE_VERSION("1");
