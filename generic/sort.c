/*
 * sort.c --
 *
 *	TpSort: the one sort the profiler uses (see below for why not
 *	qsort). No Tcl calls, so that the standalone tests can include it.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <sys/mman.h>
#endif

/*
 *----------------------------------------------------------------------
 *
 * TpSort --
 *
 *	qsort's contract, sorted stably (a merge sort: the order glibc's
 *	qsort gives, since it merge-sorts too), with a scratch buffer
 *	mapped and unmapped here when it is large. glibc's qsort mallocs
 *	its scratch buffer and frees it, and glibc's free of a block it
 *	mapped (any over 128 KB) raises its mmap and trim thresholds for the
 *	whole process: a report on a large profile would change how the
 *	program's own heap behaves from then on. Elsewhere (Windows) it is
 *	qsort.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Sorts base; falls back on qsort if no scratch memory.
 *
 *----------------------------------------------------------------------
 */

#ifndef _WIN32
#define TP_SORT_MAP	(64 * 1024)	/* Scratch from here up is mapped. */

static void
MergeSort(
    char *a,			/* n elements of size bytes... */
    char *tmp,			/* ... and room for n more. */
    size_t n,
    size_t size,
    int (*cmp)(const void *, const void *))
{
    size_t half = n / 2, i = 0, j = half, k = 0;

    if (n < 2) {
	return;
    }
    if (n <= 8) {			/* Insertion sort, stable. */
	for (i = 1; i < n; i++) {
	    for (j = i; j > 0 && cmp(a + (j - 1) * size, a + j * size) > 0;
		    j--) {
		memcpy(tmp, a + j * size, size);
		memcpy(a + j * size, a + (j - 1) * size, size);
		memcpy(a + (j - 1) * size, tmp, size);
	    }
	}
	return;
    }
    MergeSort(a, tmp, half, size, cmp);
    MergeSort(a + half * size, tmp, n - half, size, cmp);
    if (cmp(a + (half - 1) * size, a + half * size) <= 0) {
	return;				/* Already in order. */
    }
    while (i < half && j < n) {
	if (cmp(a + j * size, a + i * size) < 0) {
	    memcpy(tmp + k++ * size, a + j++ * size, size);
	} else {
	    memcpy(tmp + k++ * size, a + i++ * size, size);
	}
    }
    if (i < half) {
	memcpy(tmp + k * size, a + i * size, (half - i) * size);
	k += half - i;
    }
    memcpy(a, tmp, k * size);	/* The rest of the right half stays. */
}
#endif

void
TpSort(
    void *base,
    size_t n,
    size_t size,
    int (*cmp)(const void *, const void *))
{
#ifndef _WIN32
    size_t bytes;
    char *tmp;

    if (n < 2 || size == 0) {
	return;
    }
    if (n > SIZE_MAX / size) {
	qsort(base, n, size, cmp);
	return;
    }
    bytes = n * size;
    if (bytes < TP_SORT_MAP) {
	tmp = malloc(bytes);
    } else {
	tmp = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	tmp = tmp == MAP_FAILED ? NULL : tmp;
    }
    if (tmp == NULL) {
	qsort(base, n, size, cmp);
	return;
    }
    MergeSort(base, tmp, n, size, cmp);
    if (bytes < TP_SORT_MAP) {
	free(tmp);
    } else {
	munmap(tmp, bytes);
    }
#else
    qsort(base, n, size, cmp);
#endif
}
