/*
 * exfolded.c --
 *
 *	The folded-stacks format of Brendan Gregg's flamegraph.pl (and of
 *	inferno, speedscope's importer, ...): one line per distinct stack,
 *	frames root first separated by ';', a space, the sample count.
 *	Names are escaped by TpFoldedName (export.c). Stacks that the view
 *	shows alike (e.g. they differ only in hidden internals) are merged
 *	into one line; lines are sorted, as flamegraph.pl's own collapse
 *	scripts leave them.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include <stdlib.h>
#include <string.h>

static int
CompareLines(
    const void *a,
    const void *b)
{
    return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/*
 *----------------------------------------------------------------------
 *
 * TpExFolded --
 *
 *	Writes the folded stacks of the view.
 *
 * Results:
 *	TCL_OK.
 *
 * Side effects:
 *	Appends to out.
 *
 *----------------------------------------------------------------------
 */

int
TpExFolded(
    Tcl_Interp *interp,
    const TpExportCtx *x,
    Tcl_DString *out)
{
    Tcl_HashTable lines;		/* Escaped stack -> count. */
    Tcl_HashSearch search;
    Tcl_HashEntry *h;
    Tcl_DString line;
    const char **keys;
    uint32_t s, k;
    int isNew, n = 0, i;
    char buf[32];

    (void) interp;
    Tcl_InitHashTable(&lines, TCL_STRING_KEYS);
    Tcl_DStringInit(&line);
    for (s = 0; s < x->p->nStacks; s++) {
	const uint32_t *seq;
	uint32_t len = TpExportDepth(x, s, &seq);

	if (len == 0) {
	    continue;
	}
	Tcl_DStringSetLength(&line, 0);
	for (k = 0; k < len; k++) {
	    if (k > 0) {
		Tcl_DStringAppend(&line, ";", 1);
	    }
	    TpFoldedName(&line, x->t->funcs[seq[k]].name, k + 1 == len);
	}
	h = Tcl_CreateHashEntry(&lines, Tcl_DStringValue(&line), &isNew);
	Tcl_SetHashValue(h, (ClientData) (uintptr_t) ((isNew ? 0
		: (uintptr_t) Tcl_GetHashValue(h)) + x->p->stacks[s].count));
    }
    Tcl_DStringFree(&line);
    keys = malloc(sizeof(char *) * (size_t) (lines.numEntries + 1));
    if (keys == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    for (h = Tcl_FirstHashEntry(&lines, &search); h != NULL;
	    h = Tcl_NextHashEntry(&search)) {
	keys[n++] = Tcl_GetHashKey(&lines, h);
    }
    TpSort(keys, (size_t) n, sizeof(char *), CompareLines);
    for (i = 0; i < n; i++) {
	h = Tcl_FindHashEntry(&lines, keys[i]);
	Tcl_DStringAppend(out, keys[i], -1);
	snprintf(buf, sizeof(buf), " %llu\n",
		(unsigned long long) (uintptr_t) Tcl_GetHashValue(h));
	Tcl_DStringAppend(out, buf, -1);
    }
    free(keys);
    Tcl_DeleteHashTable(&lines);
    return TCL_OK;
}
