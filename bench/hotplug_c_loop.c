// SPDX-License-Identifier: GPL-2.0
/*
 * The floor for bench (b): the least a program can do to hotplug a CPU N
 * times, one open file and pwrite(2) of "0" then "1". cpuhp-stress must reach
 * at least 0.98 x its operations per second.
 *
 *   hotplug_c_loop CPU OPS    (OPS writes; prints "ops=N seconds=S ops_per_s=R
 *                              cpu_seconds=C", C the process's CPU time over
 *                              the loop, the writes' kernel work included)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[64];
	struct timespec a, b, ca, cb;
	long cpu, ops, i;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: %s CPU OPS\n", argv[0]);
		return 2;
	}
	cpu = strtol(argv[1], NULL, 10);
	ops = strtol(argv[2], NULL, 10);
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%ld/online", cpu);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return 1;
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ca);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < ops; i++) {
		if (pwrite(fd, (i & 1) ? "1" : "0", 1, 0) != 1) {
			fprintf(stderr, "%s: write %ld: %s\n", path, i, strerror(errno));
			pwrite(fd, "1", 1, 0);
			return 1;
		}
	}
	if (ops & 1)
		pwrite(fd, "1", 1, 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cb);
	double s = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
	double c = (cb.tv_sec - ca.tv_sec) + (cb.tv_nsec - ca.tv_nsec) / 1e9;

	printf("ops=%ld seconds=%.6f ops_per_s=%.1f cpu_seconds=%.6f\n", ops, s, ops / s, c);
	return 0;
}
