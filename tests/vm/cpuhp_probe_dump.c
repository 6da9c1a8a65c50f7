// SPDX-License-Identifier: GPL-2.0
/*
 * A small static reader of /dev/cpuhp_probe for guests of any arch: checks
 * the ioctl error contract, then dumps the API version, the probe table,
 * every buffered record, the get_nohz_timer_target histogram and target
 * counts as one JSON object on stdout. Built from the same UAPI header as
 * the module and the daemon.
 *
 *   cpuhp_probe_dump check   ioctl/read error codes; exit 0 if all as specified
 *   cpuhp_probe_dump reset   empty the rings and zero the counters
 *   cpuhp_probe_dump dump    JSON to stdout
 *   cpuhp_probe_dump nohz    get_nohz_timer_target hit count since reset
 *   cpuhp_probe_dump sleeploop N   N relative 1 ns nanosleeps (each starts a
 *                            non-pinned hrtimer: a get_nohz_timer_target
 *                            call); prints the elapsed ns. No device needed.
 *   cpuhp_probe_dump sleeploopcpu N   the same; prints N, the elapsed ns and
 *                            the thread's CPU ns (less host-load noise).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "../../kmod/uapi/cpuhp_probe.h"

static int open_dev(void)
{
	struct cpuhp_probe_version v;
	int fd = open(CPUHP_PROBE_DEVICE, O_RDONLY | O_NONBLOCK);

	if (fd < 0) {
		fprintf(stderr, "%s: %s\n", CPUHP_PROBE_DEVICE, strerror(errno));
		exit(2);
	}
	if (ioctl(fd, CPUHP_PROBE_IOC_VERSION, &v) != 0) {
		fprintf(stderr, "%s: VERSION ioctl: %s\n", CPUHP_PROBE_DEVICE, strerror(errno));
		exit(2);
	}
	if (v.api_version != CPUHP_PROBE_API_VERSION ||
	    v.record_size != sizeof(struct cpuhp_probe_record)) {
		fprintf(stderr, "%s: module API %u (record %u B), reader API %d (record %zu B)\n",
			CPUHP_PROBE_DEVICE, v.api_version, v.record_size,
			CPUHP_PROBE_API_VERSION, sizeof(struct cpuhp_probe_record));
		exit(2);
	}
	return fd;
}

static int expect(const char *what, int rc, int want_errno)
{
	int ok = rc == -1 && errno == want_errno;

	printf("%s %s: rc=%d errno=%d want %d\n", ok ? "ok" : "FAIL", what, rc,
	       rc == -1 ? errno : 0, want_errno);
	return ok ? 0 : 1;
}

static int check(int fd)
{
	struct cpuhp_probe_info info;
	struct cpuhp_probe_hist h;
	char small[8];
	int bad = 0, fd2;

	bad |= expect("unknown ioctl nr", ioctl(fd, _IO(CPUHP_PROBE_IOC_MAGIC, 99)), ENOTTY);
	bad |= expect("foreign ioctl type", ioctl(fd, _IO('T', 1)), ENOTTY);
	bad |= expect("VERSION to bad pointer", ioctl(fd, CPUHP_PROBE_IOC_VERSION, (void *)8), EFAULT);
	bad |= expect("PROBE_INFO bad size (known number, not our command)",
		      ioctl(fd, _IOWR(CPUHP_PROBE_IOC_MAGIC, 2, uint32_t), &info), ENOTTY);
	memset(&info, 0, sizeof(info));
	info.id = CPUHP_PROBE_NR;
	bad |= expect("PROBE_INFO id out of range", ioctl(fd, CPUHP_PROBE_IOC_PROBE_INFO, &info), EINVAL);
	memset(&h, 0, sizeof(h));
	h.cpu = 1u << 30;
	bad |= expect("HIST cpu out of range", ioctl(fd, CPUHP_PROBE_IOC_HIST, &h), EINVAL);
	bad |= expect("read smaller than a record", (int)read(fd, small, sizeof(small)), EINVAL);
	fd2 = open(CPUHP_PROBE_DEVICE, O_RDONLY);
	bad |= expect("second open", fd2, EBUSY);
	if (fd2 >= 0)
		close(fd2);
	return bad;
}

static void dump(int fd)
{
	struct cpuhp_probe_version v;
	struct cpuhp_probe_record recs[64];
	struct cpuhp_probe_hist h;
	struct cpuhp_probe_targets t;
	uint64_t *counts;
	unsigned int i, j;
	int first = 1;
	ssize_t n;

	ioctl(fd, CPUHP_PROBE_IOC_VERSION, &v);
	printf("{\"api_version\":%u,\"record_size\":%u,\"nr_cpu_ids\":%u,\"ring_records\":%u,",
	       v.api_version, v.record_size, v.nr_cpu_ids, v.ring_records);
	printf("\"probes\":[");
	for (i = 0; i < v.nr_probes; i++) {
		struct cpuhp_probe_info info = { .id = i };

		if (ioctl(fd, CPUHP_PROBE_IOC_PROBE_INFO, &info) != 0) {
			perror("PROBE_INFO");
			exit(2);
		}
		printf("%s{\"id\":%u,\"name\":\"%s\",\"symbol\":\"%s\",\"selected\":%u,\"placed\":%u,"
		       "\"error\":%d,\"reason\":\"%s\",\"hits\":%llu,\"nmissed\":%llu,\"dropped\":%llu}",
		       i ? "," : "", info.id, info.name, info.symbol, info.selected, info.placed,
		       info.error, info.reason, (unsigned long long)info.hits,
		       (unsigned long long)info.nmissed, (unsigned long long)info.dropped);
	}
	printf("],\"records\":[");
	while ((n = read(fd, recs, sizeof(recs))) > 0) {
		for (j = 0; j < n / sizeof(recs[0]); j++) {
			struct cpuhp_probe_record *r = &recs[j];

			printf("%s{\"seq\":%llu,\"probe_id\":%u,\"start_ns\":%llu,\"duration_ns\":%llu,"
			       "\"retval\":%lld,\"target_cpu\":%d,\"exec_cpu\":%u,\"online\":%u,\"flags\":%u}",
			       first ? "" : ",", (unsigned long long)r->seq, r->probe_id,
			       (unsigned long long)r->start_ns, (unsigned long long)r->duration_ns,
			       (long long)r->retval, r->target_cpu, r->exec_cpu, r->online_at_entry,
			       r->flags);
			first = 0;
		}
	}
	memset(&h, 0, sizeof(h));
	h.cpu = CPUHP_PROBE_ALL_CPUS;
	ioctl(fd, CPUHP_PROBE_IOC_HIST, &h);
	printf("],\"nohz\":{\"count\":%llu,\"sum_ns\":%llu,\"max_ns\":%llu,\"buckets\":[",
	       (unsigned long long)h.count, (unsigned long long)h.sum_ns,
	       (unsigned long long)h.max_ns);
	for (i = 0; i < CPUHP_PROBE_HIST_BUCKETS; i++)
		printf("%s%llu", i ? "," : "", (unsigned long long)h.buckets[i]);
	counts = calloc(v.nr_cpu_ids, sizeof(*counts));
	t.counts_ptr = (uintptr_t)counts;
	t.nr = v.nr_cpu_ids;
	ioctl(fd, CPUHP_PROBE_IOC_TARGETS, &t);
	printf("],\"targets\":[");
	for (i = 0; i < v.nr_cpu_ids; i++)
		printf("%s%llu", i ? "," : "", (unsigned long long)counts[i]);
	printf("]}}\n");
	free(counts);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static int sleeploop(long n, int with_cpu)
{
	struct timespec one = { .tv_sec = 0, .tv_nsec = 1 };
	uint64_t c0 = thread_cpu_ns();
	uint64_t t0 = now_ns();
	long i;

	for (i = 0; i < n; i++)
		nanosleep(&one, NULL);
	if (with_cpu)
		printf("%ld %llu %llu\n", n, (unsigned long long)(now_ns() - t0),
		       (unsigned long long)(thread_cpu_ns() - c0));
	else
		printf("%ld %llu\n", n, (unsigned long long)(now_ns() - t0));
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "dump";
	struct cpuhp_probe_hist h;
	int fd, rc = 0;

	if (!strcmp(cmd, "sleeploop"))
		return sleeploop(argc > 2 ? atol(argv[2]) : 1000, 0);
	if (!strcmp(cmd, "sleeploopcpu"))
		return sleeploop(argc > 2 ? atol(argv[2]) : 1000, 1);
	fd = open_dev();

	if (!strcmp(cmd, "check"))
		rc = check(fd);
	else if (!strcmp(cmd, "reset"))
		rc = ioctl(fd, CPUHP_PROBE_IOC_RESET) ? 2 : 0;
	else if (!strcmp(cmd, "dump"))
		dump(fd);
	else if (!strcmp(cmd, "nohz")) {
		memset(&h, 0, sizeof(h));
		h.cpu = CPUHP_PROBE_ALL_CPUS;
		rc = ioctl(fd, CPUHP_PROBE_IOC_HIST, &h) ? 2 : 0;
		printf("%llu\n", (unsigned long long)h.count);
	}
	else {
		fprintf(stderr, "usage: cpuhp_probe_dump check|reset|dump|nohz|sleeploop[cpu] N\n");
		rc = 2;
	}
	close(fd);
	return rc;
}
