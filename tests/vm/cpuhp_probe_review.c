// SPDX-License-Identifier: GPL-2.0
/*
 * Guest-side checks of the module review (issue 13 part 3), one JSON object
 * or check line per command; tests/vm/check_vm_results.py asserts on them.
 *
 *   cpuhp_probe_review selfhits PAIRS  get_nohz_timer_target hits per second
 *                                      with the device closed, open and idle,
 *                                      and read in a loop, interleaved
 *   cpuhp_probe_review histcons READS  HIST snapshots under timer load:
 *                                      count == sum of buckets in every one
 *   cpuhp_probe_review calib [PAIRS]   CALIB and CALIB_DIRECT, interleaved
 *                                      PAIRS times: the calibration beside
 *                                      a direct measurement, mechanisms
 *   cpuhp_probe_review gaps            every buffered record: sequence gaps
 *                                      against the probes' dropped counts
 *   cpuhp_probe_review targets         TARGETS counts between two HIST counts
 *   cpuhp_probe_review enodev          HIST/TARGETS/CALIB fail with ENODEV
 *                                      (get_nohz_timer_target not placed)
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../kmod/uapi/cpuhp_probe.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int open_dev(void)
{
	int fd = open(CPUHP_PROBE_DEVICE, O_RDWR | O_NONBLOCK);

	if (fd < 0) {
		fprintf(stderr, "%s: %s\n", CPUHP_PROBE_DEVICE, strerror(errno));
		exit(2);
	}
	return fd;
}

static int hist(int fd, struct cpuhp_probe_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->cpu = CPUHP_PROBE_ALL_CPUS;
	return ioctl(fd, CPUHP_PROBE_IOC_HIST, h);
}

static uint64_t hist_count(int fd)
{
	struct cpuhp_probe_hist h;

	if (hist(fd, &h)) {
		perror("HIST");
		exit(2);
	}
	return h.count;
}

/* One second in one state; returns the hits the histogram gained. */
static uint64_t one_second(int state)
{
	struct cpuhp_probe_record rec;
	uint64_t c0, c1, end;
	int fd = open_dev();

	c0 = hist_count(fd);
	if (state == 0) {		/* closed */
		close(fd);
		sleep(1);
		fd = open_dev();
	} else if (state == 1) {	/* open, no reader */
		sleep(1);
	} else {			/* non-blocking reads, no sleep (no timer) */
		for (end = now_ns() + 1000000000ull; now_ns() < end;)
			(void)!read(fd, &rec, sizeof(rec));
	}
	c1 = hist_count(fd);
	close(fd);
	return c1 - c0;
}

static int selfhits(int pairs)
{
	static const char * const names[] = { "closed", "open", "read" };
	uint64_t v[3][64];
	int i, s, fd = open_dev();

	/* no buffered record: the reads find the rings empty */
	ioctl(fd, CPUHP_PROBE_IOC_RESET);
	close(fd);
	if (pairs > 64)
		pairs = 64;
	for (i = 0; i < pairs; i++)
		for (s = 0; s < 3; s++)
			v[s][i] = one_second(s);
	printf("{");
	for (s = 0; s < 3; s++) {
		printf("%s\"%s\":[", s ? "," : "", names[s]);
		for (i = 0; i < pairs; i++)
			printf("%s%llu", i ? "," : "", (unsigned long long)v[s][i]);
		printf("]");
	}
	printf("}\n");
	return 0;
}

static int histcons(long reads)
{
	struct timespec one = { .tv_sec = 0, .tv_nsec = 1 };
	struct cpuhp_probe_hist h;
	long i, bad = 0, grew = 0;
	uint64_t sum, last = 0;
	int fd = open_dev(), b;
	pid_t child = fork();

	if (child == 0) {
		for (;;)	/* one non-pinned hrtimer per sleep */
			nanosleep(&one, NULL);
	}
	for (i = 0; i < reads; i++) {
		if (hist(fd, &h)) {
			perror("HIST");
			bad = -1;
			break;
		}
		for (sum = 0, b = 0; b < CPUHP_PROBE_HIST_BUCKETS; b++)
			sum += h.buckets[b];
		bad += sum != h.count;
		grew += h.count > last;
		last = h.count;
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	printf("{\"reads\":%ld,\"inconsistent\":%ld,\"grew\":%ld}\n", reads, bad, grew);
	close(fd);
	return bad ? 1 : 0;
}

static const char *mech_name(uint32_t m)
{
	static const char * const names[] = { "none", "trap", "ftrace", "jump" };

	return m < 4 ? names[m] : "unknown";
}

static int calib(int pairs)
{
	struct cpuhp_probe_hist h = { .cpu = CPUHP_PROBE_ALL_CPUS };
	struct cpuhp_probe_calib_direct d;
	int fd = open_dev(), i;

	printf("{\"pairs\":[");
	for (i = 0; i < pairs; i++) {
		if (ioctl(fd, CPUHP_PROBE_IOC_CALIB, &h)) {
			perror("CALIB");
			return 1;
		}
		memset(&d, 0, sizeof(d));
		if (ioctl(fd, CPUHP_PROBE_IOC_CALIB_DIRECT, &d)) {
			perror("CALIB_DIRECT");
			return 1;
		}
		printf("%s{\"calib_count\":%llu,\"calib_sum_ns\":%llu,\"calib_max_ns\":%llu,"
		       "\"direct_calls\":%llu,\"bare_ns\":%llu,\"probed_ns\":%llu,"
		       "\"calib_mech\":\"%s\",\"nohz_mech\":\"%s\"}", i ? "," : "",
		       (unsigned long long)h.count, (unsigned long long)h.sum_ns,
		       (unsigned long long)h.max_ns, (unsigned long long)d.calls,
		       (unsigned long long)d.bare_ns, (unsigned long long)d.probed_ns,
		       mech_name(d.calib_mech), mech_name(d.nohz_mech));
	}
	/* the last CALIB's histogram */
	printf("],\"count\":%llu,\"sum_ns\":%llu,\"max_ns\":%llu}\n", (unsigned long long)h.count,
	       (unsigned long long)h.sum_ns, (unsigned long long)h.max_ns);
	close(fd);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int gaps(void)
{
	struct cpuhp_probe_record recs[64];
	struct cpuhp_probe_version v;
	uint64_t *seqs = NULL, dropped = 0, missing = 0;
	size_t n = 0, cap = 0, i;
	int fd = open_dev();
	unsigned int id;
	ssize_t got;

	ioctl(fd, CPUHP_PROBE_IOC_VERSION, &v);
	for (id = 0; id < v.nr_probes; id++) {
		struct cpuhp_probe_info info = { .id = id };

		if (ioctl(fd, CPUHP_PROBE_IOC_PROBE_INFO, &info) == 0)
			dropped += info.dropped;
	}
	while ((got = read(fd, recs, sizeof(recs))) > 0) {
		for (i = 0; i < (size_t)got / sizeof(recs[0]); i++) {
			if (n == cap) {
				cap = cap ? 2 * cap : 256;
				seqs = realloc(seqs, cap * sizeof(*seqs));
				if (!seqs)
					return 2;
			}
			seqs[n++] = recs[i].seq;
		}
	}
	qsort(seqs, n, sizeof(*seqs), cmp_u64);
	for (i = 0; i < n; i++)
		missing += seqs[i] - (i ? seqs[i - 1] + 1 : 0);
	printf("{\"records\":%zu,\"max_seq\":%llu,\"missing\":%llu,\"dropped\":%llu,\"ring_records\":%u}\n",
	       n, n ? (unsigned long long)seqs[n - 1] : 0ull, (unsigned long long)missing,
	       (unsigned long long)dropped, v.ring_records);
	free(seqs);
	close(fd);
	return 0;
}

static int targets(void)
{
	struct cpuhp_probe_targets t;
	struct cpuhp_probe_version v;
	uint64_t *counts, before, after, sum = 0;
	int fd = open_dev();
	unsigned int i;

	ioctl(fd, CPUHP_PROBE_IOC_VERSION, &v);
	counts = calloc(v.nr_cpu_ids, sizeof(*counts));
	t.counts_ptr = (uintptr_t)counts;
	t.nr = v.nr_cpu_ids;
	before = hist_count(fd);
	if (ioctl(fd, CPUHP_PROBE_IOC_TARGETS, &t)) {
		perror("TARGETS");
		return 1;
	}
	after = hist_count(fd);
	printf("{\"before\":%llu,\"after\":%llu,\"counts\":[", (unsigned long long)before,
	       (unsigned long long)after);
	for (i = 0; i < v.nr_cpu_ids; i++) {
		sum += counts[i];
		printf("%s%llu", i ? "," : "", (unsigned long long)counts[i]);
	}
	printf("],\"sum\":%llu}\n", (unsigned long long)sum);
	free(counts);
	close(fd);
	return 0;
}

static int expect_enodev(const char *what, int rc)
{
	int ok = rc == -1 && errno == ENODEV;

	printf("%s %s: rc=%d errno=%d want ENODEV\n", ok ? "ok" : "FAIL", what, rc,
	       rc == -1 ? errno : 0);
	return !ok;
}

static int enodev(void)
{
	struct cpuhp_probe_hist h = { .cpu = CPUHP_PROBE_ALL_CPUS };
	uint64_t counts[4];
	struct cpuhp_probe_targets t = { .counts_ptr = (uintptr_t)counts, .nr = 4 };
	int fd = open_dev(), bad = 0;

	bad |= expect_enodev("HIST", ioctl(fd, CPUHP_PROBE_IOC_HIST, &h));
	bad |= expect_enodev("TARGETS", ioctl(fd, CPUHP_PROBE_IOC_TARGETS, &t));
	bad |= expect_enodev("CALIB", ioctl(fd, CPUHP_PROBE_IOC_CALIB, &h));
	bad |= expect_enodev("CALIB_DIRECT", ioctl(fd, CPUHP_PROBE_IOC_CALIB_DIRECT,
						   &(struct cpuhp_probe_calib_direct){ 0 }));
	close(fd);
	return bad;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	long n = argc > 2 ? atol(argv[2]) : 0;

	if (!strcmp(cmd, "selfhits"))
		return selfhits(n > 0 ? (int)n : 5);
	if (!strcmp(cmd, "histcons"))
		return histcons(n > 0 ? n : 2000);
	if (!strcmp(cmd, "calib"))
		return calib(n > 0 ? n : 5);
	if (!strcmp(cmd, "gaps"))
		return gaps();
	if (!strcmp(cmd, "targets"))
		return targets();
	if (!strcmp(cmd, "enodev"))
		return enodev();
	fprintf(stderr, "usage: cpuhp_probe_review selfhits|histcons|calib|gaps|targets|enodev [N]\n");
	return 2;
}
