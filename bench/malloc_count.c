/* Counts the heap allocations of a process (malloc, posix_memalign, aligned_alloc), for
 * bench/allocations_per_run.py, which loads it with LD_PRELOAD into `onnxlens-cli bench` and
 * takes the difference between two run counts: the allocations of one run. Each allocation is
 * also counted by the code that asked for it (the first caller outside libstdc++, or with
 * MALLOC_COUNT_CALLER=N the Nth caller above that one), printed with MALLOC_COUNT_SITES=FILE.
 * Never part of the application. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SITES 65536
static void* site_keys[SITES];
static atomic_long site_counts[SITES];
static atomic_long allocations;
static __thread int inside;
static int record_sites = -1;
static int caller_depth = -1;

extern void* __libc_malloc(size_t);
extern void* __libc_memalign(size_t, size_t);

static void count_site(void* ra) {
    unsigned long h = ((unsigned long)ra >> 3) % SITES;
    for (unsigned long i = 0; i < SITES; ++i) {
        unsigned long j = (h + i) % SITES;
        void* key = site_keys[j];
        if (key == ra) {
            atomic_fetch_add(&site_counts[j], 1);
            return;
        }
        if (!key && __sync_bool_compare_and_swap(&site_keys[j], NULL, ra)) {
            atomic_fetch_add(&site_counts[j], 1);
            return;
        }
        if (site_keys[j] == ra) {
            atomic_fetch_add(&site_counts[j], 1);
            return;
        }
    }
}

static void count(void) {
    atomic_fetch_add(&allocations, 1);
    if (record_sites < 0) record_sites = getenv("MALLOC_COUNT_SITES") != NULL;
    if (!record_sites || inside) return;
    inside = 1;
    if (caller_depth < 0) {
        const char* depth = getenv("MALLOC_COUNT_CALLER");
        caller_depth = depth ? atoi(depth) : 0;
        if (caller_depth < 0 || caller_depth > 16) caller_depth = 0;
    }
    void* frames[32];
    int n = backtrace(frames, 32);
    int k = 2; /* 0: count, 1: malloc */
    Dl_info info;
    while (k + 1 < n && dladdr(frames[k], &info) && info.dli_fname &&
           strstr(info.dli_fname, "libstdc++"))
        ++k;
    k += caller_depth;
    if (k < n) count_site(frames[k]);
    inside = 0;
}

void* malloc(size_t size) {
    count();
    return __libc_malloc(size);
}

int posix_memalign(void** p, size_t alignment, size_t size) {
    count();
    *p = __libc_memalign(alignment, size);
    return *p ? 0 : 12;
}

void* aligned_alloc(size_t alignment, size_t size) {
    count();
    return __libc_memalign(alignment, size);
}

__attribute__((destructor)) static void report(void) {
    char line[64];
    int length = snprintf(line, sizeof line, "MALLOC_COUNT %ld\n", atomic_load(&allocations));
    if (write(2, line, (size_t)length) < 0) return;
    const char* file = getenv("MALLOC_COUNT_SITES");
    if (!file) return;
    FILE* out = fopen(file, "w");
    if (!out) return;
    Dl_info info;
    for (int i = 0; i < SITES; ++i) {
        if (!site_keys[i]) continue;
        if (dladdr(site_keys[i], &info) && info.dli_fname)
            fprintf(out, "%ld %s %lx\n", atomic_load(&site_counts[i]), info.dli_fname,
                    (unsigned long)site_keys[i] - (unsigned long)info.dli_fbase);
    }
    fclose(out);
}
