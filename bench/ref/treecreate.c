/* The C reference for `iolab tree create`: the same syscalls in the same
 * order (mkdir level by level, then per directory: open O_CREAT|O_EXCL,
 * write in bs pieces, close), one thread, timed from the first mkdir to the
 * last close like iolab's phases, nothing else.
 *
 * usage: treecreate TOP DIRS LEVELS FILES SIZE BS
 * prints: seconds dirs files
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: %s TOP DIRS LEVELS FILES SIZE BS\n", argv[0]);
        return 2;
    }
    const char *top = argv[1];
    long d = atol(argv[2]), l = atol(argv[3]), f = atol(argv[4]);
    long size = atol(argv[5]), bs = atol(argv[6]);
    char *buf = malloc(bs);
    for (long i = 0; i < bs; i++) buf[i] = (char)(i % 251 + 1);
    /* All directories, level by level (level 0 is TOP). */
    long total = 0, width = 1;
    for (long i = 0; i <= l; i++) { total += width; width *= d; }
    char **paths = malloc(sizeof(char *) * total);
    paths[0] = strdup(top);
    long start = 0, end = 1, n = 1;
    if (mkdir(top, 0755) != 0) { perror(top); return 1; }
    double t0 = now();
    for (long lev = 1; lev <= l; lev++) {
        for (long p = start; p < end; p++) {
            for (long k = 0; k < d; k++) {
                char *s;
                if (asprintf(&s, "%s/d%ld", paths[p], k) < 0) return 1;
                if (mkdir(s, 0777) != 0) { perror(s); return 1; }
                paths[n++] = s;
            }
        }
        start = end;
        end = n;
    }
    long files = 0;
    char path[4096];
    for (long p = 0; p < n; p++) {
        for (long k = 0; k < f; k++) {
            snprintf(path, sizeof path, "%s/f%ld", paths[p], k);
            int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
            if (fd < 0) { perror(path); return 1; }
            for (long left = size; left > 0;) {
                long m = left < bs ? left : bs;
                if (write(fd, buf, m) != m) { perror(path); return 1; }
                left -= m;
            }
            close(fd);
            files++;
        }
    }
    printf("%.6f %ld %ld\n", now() - t0, n, files);
    return 0;
}
