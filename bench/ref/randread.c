/*
 * Reference loop for iolab's bench: the physical limit of a random pread
 * workload, timed the same way iolab times it (CLOCK_MONOTONIC around every
 * pread, recorded into a log-linear histogram).
 *
 * usage: randread PATH SIZE BS_MIN BS_MAX LOOPS NREADS PREFETCH COLD [DEAL]
 *   SIZE bytes of the file used; I/O sizes uniform in [BS_MIN, BS_MAX]
 *   (aligned down to BS_MIN when it is a power of two, like fio), offsets
 *   aligned to BS_MIN. Stops after LOOPS*SIZE bytes, or NREADS reads if > 0.
 *   PREFETCH > 0: posix_fadvise(WILLNEED) for the read PREFETCH reads ahead
 *   (primed with the first PREFETCH), as iolab's prefetch=N.
 *   COLD=1: evict the file's pages first (not timed).
 *   DEAL=1: offsets without repeats within a loop, as fio's random map and
 *   iolab do (a Fisher-Yates shuffle dealt lazily; a loop ends after SIZE
 *   bytes). DEAL=0 (default): rnd() % slots, with repeats, as seed 000's
 *   random-read does; a re-read block is often still in the CPU caches.
 * environment (issue 20: the same work as iolab, and no replayed sequence):
 *   RANDREAD_SEED=N     seed the offsets with N (a fresh sequence per run)
 *   RANDREAD_OFFSETS=F  read the offsets and lengths of fio iolog F's `read`
 *                       lines (iolab's --write_iolog), in order, instead
 *   RANDREAD_BUF_OFFSET=N  the buffer starts N bytes past a page boundary
 *                       (default 0): 1568 (0x620) is where fio's malloc and
 *                       iolab put buffers under 456 KiB, and the kernel's
 *                       copy into a buffer depends on its place
 * prints: ios=N bytes=B runtime_ns=T iops=X fadvise=M p50_ns=P
 *   (M: the WILLNEED calls made; P: the median pread latency it timed)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t rng_state = 0x853c49e6748fea9bULL;
static inline uint64_t rnd(void) {
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static inline uint64_t now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* log-linear histogram: 2048 sub-buckets per power of two, like HDR sigfig 3 */
static uint64_t hist[64 * 2048];
static inline void record(uint64_t v) {
	unsigned mag = v < 2048 ? 0 : 63 - __builtin_clzll(v) - 10;
	hist[mag * 2048 + ((v >> mag) & 2047)]++;
}

/* the p-th percentile (0..100) of the histogram: a bucket's lowest value */
static uint64_t percentile(double p, uint64_t n) {
	uint64_t want = (uint64_t)(p / 100.0 * n + 0.5), seen = 0;
	if (want < 1) want = 1;
	for (unsigned i = 0; i < 64 * 2048; i++) {
		seen += hist[i];
		if (seen >= want) {
			unsigned mag = i / 2048;
			return (uint64_t)(i % 2048) << mag;
		}
	}
	return 0;
}

struct io { uint64_t off; uint32_t len; };

static uint64_t size, bs_min, bs_max;
static uint32_t *table;          /* DEAL=1: the shuffle table */
static uint64_t deal_pos, loop_bytes;
static struct io *given;          /* RANDREAD_OFFSETS: the offsets to read */
static uint64_t ngiven, given_pos;
static inline struct io next_io(void) {
	struct io io;
	if (given) {
		io = given[given_pos++ % ngiven];
		loop_bytes += io.len;
		return io;
	}
	uint64_t len = bs_min == bs_max ? bs_min : bs_min + rnd() % (bs_max - bs_min + 1);
	if (bs_min != bs_max && (bs_min & (bs_min - 1)) == 0)
		len &= ~(bs_min - 1);
	uint64_t slots = size / bs_min;
	if (table) {
		if (deal_pos >= slots || loop_bytes >= size)
			deal_pos = loop_bytes = 0; /* next loop: keep shuffling */
		uint64_t j = deal_pos + rnd() % (slots - deal_pos);
		uint32_t t = table[j];
		table[j] = table[deal_pos];
		table[deal_pos++] = t;
		io.off = (uint64_t)t * bs_min;
	} else {
		io.off = (rnd() % slots) * bs_min;
	}
	if (io.off + len > size)
		len = size - io.off;
	io.len = (uint32_t)len;
	loop_bytes += len;
	return io;
}

static uint64_t nadv; /* posix_fadvise(WILLNEED) calls made */

int main(int argc, char **argv) {
	if (argc != 9 && argc != 10) {
		fprintf(stderr, "usage: %s PATH SIZE BS_MIN BS_MAX LOOPS NREADS PREFETCH COLD [DEAL]\n", argv[0]);
		return 2;
	}
	size = strtoull(argv[2], 0, 10);
	bs_min = strtoull(argv[3], 0, 10);
	bs_max = strtoull(argv[4], 0, 10);
	uint64_t loops = strtoull(argv[5], 0, 10);
	uint64_t nreads = strtoull(argv[6], 0, 10);
	int prefetch = atoi(argv[7]);
	int cold = atoi(argv[8]);
	if (argc == 10 && atoi(argv[9])) {
		uint64_t slots = size / bs_min;
		table = malloc(slots * sizeof *table);
		if (!table) return 1;
		for (uint64_t i = 0; i < slots; i++) table[i] = (uint32_t)i;
	}
	const char *seed = getenv("RANDREAD_SEED");
	if (seed && strtoull(seed, 0, 10))
		rng_state = strtoull(seed, 0, 10) * 0x9E3779B97F4A7C15ULL | 1;
	const char *offsets = getenv("RANDREAD_OFFSETS");
	if (offsets) {
		FILE *f = fopen(offsets, "r");
		if (!f) { perror(offsets); return 1; }
		char line[4096], what[16];
		unsigned long long off, len;
		uint64_t cap = 1024;
		given = malloc(cap * sizeof *given);
		while (fgets(line, sizeof line, f)) {
			/* "TIME FILE read OFFSET LENGTH" (v3) or "FILE read OFFSET LENGTH" (v2) */
			char *sp = strstr(line, " read ");
			if (!sp || sscanf(sp, " %15s %llu %llu", what, &off, &len) != 3) continue;
			if (ngiven == cap) given = realloc(given, (cap *= 2) * sizeof *given);
			given[ngiven].off = off;
			given[ngiven++].len = (uint32_t)len;
		}
		fclose(f);
		if (!ngiven) { fprintf(stderr, "%s: no read lines\n", offsets); return 1; }
		if (!nreads) nreads = ngiven;
	}
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0) { perror("open"); return 1; }
	if (cold) {
		fdatasync(fd);
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM); /* fio's and iolab's default hint */
	char *buf;
	const char *boff = getenv("RANDREAD_BUF_OFFSET");
	size_t skip = boff ? strtoull(boff, 0, 10) : 0;
	if (posix_memalign((void **)&buf, 4096, bs_max + skip)) return 1;
	buf += skip;
	struct io *q = calloc(prefetch + 1, sizeof *q);
	uint64_t target = loops * size, bytes = 0, ios = 0;

	uint64_t t_start = now_ns();
	int head = 0, n = prefetch + 1;
	for (int i = 0; i < prefetch; i++) {
		q[i] = next_io();
		posix_fadvise(fd, q[i].off, q[i].len, POSIX_FADV_WILLNEED), nadv++;
	}
	int tail = prefetch;
	for (;;) {
		if (nreads ? ios >= nreads : bytes >= target) break;
		q[tail] = next_io();
		if (prefetch)
			posix_fadvise(fd, q[tail].off, q[tail].len, POSIX_FADV_WILLNEED), nadv++;
		tail = (tail + 1) % n;
		struct io io = q[head];
		head = (head + 1) % n;
		if (!nreads && bytes + io.len > target) io.len = target - bytes;
		uint64_t t0 = now_ns();
		ssize_t r = pread(fd, buf, io.len, io.off);
		uint64_t t1 = now_ns();
		if (r != (ssize_t)io.len) { perror("pread"); return 1; }
		record(t1 - t0);
		bytes += io.len;
		ios++;
	}
	uint64_t t = now_ns() - t_start;
	printf("ios=%llu bytes=%llu runtime_ns=%llu iops=%.1f fadvise=%llu p50_ns=%llu\n",
	       (unsigned long long)ios, (unsigned long long)bytes, (unsigned long long)t,
	       ios * 1e9 / t, (unsigned long long)nadv, (unsigned long long)percentile(50, ios));
	return 0;
}
