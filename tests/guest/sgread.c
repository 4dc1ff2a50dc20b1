// SPDX-License-Identifier: GPL-2.0
/*
 * sgread: one O_DIRECT read into a buffer whose pages are never physically
 * adjacent, so that the block layer cannot merge them: the request has one
 * segment per page (tests/board/c-rfc-emmc: a read that a driver with a
 * bounce buffer must bounce).
 *
 *   sgread DEV OFFSET LEN   read LEN bytes (a multiple of the page size) at
 *                           byte OFFSET of DEV and write them to stdout;
 *                           "segments N" on stderr (N physically contiguous
 *                           runs of pages in the buffer, checked in
 *                           /proc/self/pagemap: root)
 *
 * Exits 1 when the read fails or returns less (the error on stderr), 2 on
 * a usage or setup error.  Static, for the guest (scripts/build-guest.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define TRIES 64

/* the page frame number of each page of [p, p + n pages), 0 if not present */
static int pfns(int pm, const char *p, size_t n, long psz, uint64_t *out)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t e;
		off_t off = (off_t)((uintptr_t)(p + i * psz) / psz) * 8;

		if (pread(pm, &e, 8, off) != 8)
			return -1;
		out[i] = (e >> 63) ? (e & ((1ULL << 55) - 1)) : 0;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long psz = sysconf(_SC_PAGESIZE);
	unsigned long long off;
	size_t len, n, runs = 0;
	uint64_t *pfn;
	char *buf = NULL;
	int fd, pm;
	ssize_t r;

	if (argc != 4) {
		fprintf(stderr, "usage: sgread DEV OFFSET LEN\n");
		return 2;
	}
	off = strtoull(argv[2], NULL, 0);
	len = strtoul(argv[3], NULL, 0);
	if (!len || len % psz) {
		fprintf(stderr, "sgread: LEN must be a multiple of %ld\n", psz);
		return 2;
	}
	n = len / psz;
	pfn = calloc(n, sizeof(*pfn));
	pm = open("/proc/self/pagemap", O_RDONLY);
	if (!pfn || pm < 0) {
		perror("sgread: /proc/self/pagemap");
		return 2;
	}
	/*
	 * Pages touched from the last to the first: the page allocator hands
	 * out runs in physical order, so neighbours end up in reverse.  A
	 * buffer that still has two adjacent pages is kept (so that its pages
	 * are not handed out again) and another one tried.
	 */
	for (int t = 0; t < TRIES && !buf; t++) {
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		size_t i;

		if (p == MAP_FAILED) {
			perror("sgread: mmap");
			return 2;
		}
		for (i = n; i-- > 0;)
			memset(p + i * psz, 0xa5, psz);
		if (mlock(p, len) || pfns(pm, p, n, psz, pfn)) {
			perror("sgread: mlock or pagemap");
			return 2;
		}
		for (i = 0; i < n; i++) {
			if (!pfn[i] || (i && pfn[i] == pfn[i - 1] + 1))
				break;
		}
		if (i == n)
			buf = p;
	}
	if (!buf) {
		fprintf(stderr, "sgread: no buffer without adjacent pages in %d tries\n", TRIES);
		return 2;
	}
	for (size_t i = 0; i < n; i++)
		runs += !i || pfn[i] != pfn[i - 1] + 1;
	fprintf(stderr, "segments %zu\n", runs);

	fd = open(argv[1], O_RDONLY | O_DIRECT);
	if (fd < 0) {
		perror(argv[1]);
		return 2;
	}
	r = pread(fd, buf, len, (off_t)off);
	if (r < 0) {
		fprintf(stderr, "sgread: read: %s\n", strerror(errno));
		return 1;
	}
	if ((size_t)r != len) {
		fprintf(stderr, "sgread: short read: %zd of %zu bytes\n", r, len);
		return 1;
	}
	if (fwrite(buf, 1, len, stdout) != len) {
		perror("sgread: stdout");
		return 2;
	}
	return 0;
}
