// SPDX-License-Identifier: GPL-2.0
/*
 * fragmem: fragment the guest's free memory the way a board that has run for
 * weeks has it, for make bench's "fragmented memory" rows.
 *
 *   fragmem MiB         allocate MiB of anonymous memory, touch every page,
 *                       free every other page, mlock the rest, then detach:
 *                       prints the pid of the process that holds the memory
 *                       (kill it to give the memory back) and exits 0 once
 *                       the memory is in place
 *   fragmem -a LEAVE    the same with MiB = MemFree - LEAVE MiB (from
 *                       /proc/meminfo): all free memory but LEAVE MiB
 *   fragmem -w PID ...  the holder also leaves by itself once process PID
 *                       is gone (checked every second): a caller killed
 *                       before it could kill the holder does not leave
 *                       the memory held
 *
 * The pages of one mapping are handed out by the page allocator mostly in
 * physical order, so freeing every other virtual page leaves free memory as
 * single pages between pinned ones: no order-1 or larger block can form again
 * while the holder lives (the bench kernel has no compaction to move them).
 * Half of MiB stays in use, half is free again, as order-0 pages.
 *
 * Static, for the guest (scripts/build-guest.sh cross-builds it like fio).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <sys/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static long meminfo_kib(const char *key)
{
	char line[256];
	size_t n = strlen(key);
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':') {
			v = strtol(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

static void usage(void)
{
	fprintf(stderr, "usage: fragmem [-w PID] MiB | fragmem [-w PID] -a LEAVE_MiB\n");
	exit(2);
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE), mib, npages, i, kept = 0, freed = 0;
	int pfd[2];
	char *p, ok;
	pid_t pid, watch = 0;

	if (argc >= 3 && !strcmp(argv[1], "-w")) {
		watch = (pid_t)strtol(argv[2], NULL, 10);
		if (watch <= 0)
			usage();
		argc -= 2;
		argv += 2;
	}
	if (argc == 3 && !strcmp(argv[1], "-a")) {
		long leave = strtol(argv[2], NULL, 10), free_kib = meminfo_kib("MemFree");

		if (free_kib < 0)
			return fprintf(stderr, "fragmem: no MemFree in /proc/meminfo\n"), 1;
		mib = free_kib / 1024 - leave;
	} else if (argc == 2 && argv[1][0] != '-') {
		mib = strtol(argv[1], NULL, 10);
	} else {
		usage();
	}
	if (mib <= 0)
		return fprintf(stderr, "fragmem: nothing to allocate (%ld MiB)\n", mib), 1;
	npages = mib * (1024 * 1024 / page);

	if (pipe(pfd))
		return perror("fragmem: pipe"), 1;
	pid = fork();
	if (pid < 0)
		return perror("fragmem: fork"), 1;
	if (pid > 0) {
		/* the parent: wait until the child holds the memory */
		close(pfd[1]);
		if (read(pfd[0], &ok, 1) != 1 || ok != 'y') {
			fprintf(stderr, "fragmem: the holder failed\n");
			return 1;
		}
		printf("%d\n", (int)pid);
		return 0;
	}

	close(pfd[0]);
	setsid();
	p = mmap(NULL, npages * page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("fragmem: mmap");
		goto fail;
	}
	for (i = 0; i < npages; i++)
		p[i * page] = (char)i | 1;
	/* one VMA per kept page: fine below the default vm.max_map_count */
	for (i = 1; i < npages; i += 2) {
		if (munmap(p + i * page, page)) {
			perror("fragmem: munmap");
			goto fail;
		}
		freed++;
	}
	for (i = 0; i < npages; i += 2) {
		if (mlock(p + i * page, page)) {
			fprintf(stderr, "fragmem: mlock: %s\n", strerror(errno));
			goto fail;
		}
		kept++;
	}
	fprintf(stderr, "fragmem: %ld MiB touched, %ld KiB kept (mlocked), %ld KiB freed as single pages\n",
		mib, kept * page / 1024, freed * page / 1024);
	ok = 'y';
	if (write(pfd[1], &ok, 1) != 1)
		return 1;
	close(pfd[1]);
	close(0);
	close(1);
	close(2);
	for (;;) {
		if (!watch) {
			pause();
			continue;
		}
		sleep(1);
		if (kill(watch, 0) && errno == ESRCH)
			return 0;
	}
fail:
	ok = 'n';
	if (write(pfd[1], &ok, 1) != 1)
		return 1;
	return 1;
}
