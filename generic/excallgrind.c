/*
 * excallgrind.c --
 *
 *	The callgrind profile format (valgrind's docs/callgrind-format), as
 *	KCachegrind and callgrind_annotate read it. One event, Samples.
 *	Each function's block gives its self cost (samples in which it is
 *	the leaf) and, for each callee, a calls= line followed by the
 *	inclusive cost of that call edge: the samples in which the edge
 *	occurs, counted once per sample (so recursion does not inflate it).
 *	The calls= count is the exact call count when trace mode measured
 *	one for a Tcl->Tcl edge, else the number of samples.
 *
 *	With `-thread all`, one part per thread.
 *
 *	Names are compressed ("fn=(3) name" once, "fn=(3)" after). Tcl
 *	functions are in their source file; C functions in their module
 *	(ob=) with an unknown file "???"; Tcl functions in the object "tcl".
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include <stdlib.h>
#include <string.h>

typedef struct Edge {
    uint32_t callee;
    uint64_t samples;
    uint32_t stamp;		/* Last stack counted, + 1. */
    struct Edge *next;		/* Caller's next edge. */
} Edge;

typedef struct Names {
    Tcl_HashTable ids;		/* "kind|name" -> id */
    int next;
} Names;

static void
Name(
    Tcl_DString *out,
    Names *n,
    const char *spec,		/* "fn", "cfn", "fl", "cfl", "ob", "cob" */
    const char *name)
{
    Tcl_DString key;
    Tcl_HashEntry *h;
    int isNew;
    char buf[32];

    Tcl_DStringInit(&key);
    Tcl_DStringAppend(&key, spec[0] == 'c' ? spec + 1 : spec, -1);
    Tcl_DStringAppend(&key, "|", 1);
    Tcl_DStringAppend(&key, name, -1);
    h = Tcl_CreateHashEntry(&n->ids, Tcl_DStringValue(&key), &isNew);
    Tcl_DStringFree(&key);
    if (isNew) {
	Tcl_SetHashValue(h, (ClientData) (intptr_t) ++n->next);
    }
    snprintf(buf, sizeof(buf), "%s=(%d)", spec, (int) (intptr_t) Tcl_GetHashValue(h));
    Tcl_DStringAppend(out, buf, -1);
    if (isNew) {
	Tcl_DStringAppend(out, " ", 1);
	/* Newlines would end the line: the folded escaping serves here. */
	TpFoldedName(out, name, 0);
    }
    Tcl_DStringAppend(out, "\n", 1);
}

static const char *
FileOf(
    const TpExportCtx *x,
    const TpFunc *f)
{
    return f->kind == TP_KIND_TCL && f->file != NULL ? f->file : "???";
}

static const char *
ObjOf(
    const TpExportCtx *x,
    const TpFunc *f)
{
    if (f->kind != TP_KIND_TCL && f->module >= 0) {
	const TpModule *m = &x->p->modules.mods[f->module];

	return m->path[0] ? m->path : m->shortName;
    }
    return "tcl";
}

/*
 *----------------------------------------------------------------------
 *
 * WritePart --
 *
 *	Writes one part: the samples of thread tid (every thread's if
 *	allTids), each stack from its function skip (1 leaves out the
 *	thread's root of `-thread all`). Names are defined anew in each
 *	part: KCachegrind forgets the compressed names at a part's start.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Appends to out.
 *
 *----------------------------------------------------------------------
 */

static void
WritePart(
    const TpExportCtx *x,
    Tcl_DString *out,
    int part,
    int allTids,
    uint32_t tid,
    uint32_t skip)
{
    const TpTree *t = x->t;
    const TpProfile *p = x->p;
    uint64_t *self = calloc(t->nFuncs + 1, sizeof(uint64_t));
    uint8_t *used = calloc(t->nFuncs + 1, 1);
    Edge **edges = calloc(t->nFuncs + 1, sizeof(Edge *));
    uint64_t all = 0;
    uint32_t s, k, i;
    Names names;
    char buf[256];

    if (self == NULL || used == NULL || edges == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    for (s = 0; s < p->nStacks; s++) {
	const uint32_t *seq;
	uint32_t n = TpExportDepth(x, s, &seq);
	uint64_t count = p->stacks[s].count;

	if (n <= skip || (!allTids && p->stacks[s].tid != tid)) {
	    continue;
	}
	seq += skip;
	n -= skip;
	all += count;
	self[seq[n - 1]] += count;
	used[seq[0]] = 1;
	for (k = 1; k < n; k++) {
	    Edge *e;

	    used[seq[k]] = 1;
	    for (e = edges[seq[k - 1]]; e != NULL && e->callee != seq[k];
		    e = e->next) {
	    }
	    if (e == NULL) {
		e = calloc(1, sizeof(Edge));
		if (e == NULL) {
		    Tcl_Panic("tclprof: out of memory");
		}
		e->callee = seq[k];
		e->next = edges[seq[k - 1]];
		edges[seq[k - 1]] = e;
	    }
	    if (e->stamp != s + 1) {
		e->stamp = s + 1;
		e->samples += count;
	    }
	}
    }

    snprintf(buf, sizeof(buf), "\npart: %d\n", part);
    Tcl_DStringAppend(out, buf, -1);
    if (!allTids) {
	const char *name = TpProfileThreadName(p, tid);

	/*
	 * The kernel's id (KCachegrind shows it in its Parts list) and the
	 * name `profiler threads` gives.
	 */

	snprintf(buf, sizeof(buf), "thread: %u\ndesc: Thread: ", tid);
	Tcl_DStringAppend(out, buf, -1);
	TpFoldedName(out, name != NULL ? name : "?", 0);
	Tcl_DStringAppend(out, "\n", 1);
    }
    snprintf(buf, sizeof(buf), "desc: Mode: %s, clock %s, interval "
	    "%d us\npositions: line\nevents: Samples\nsummary: %llu\n\n",
	    TpModeName(p->mode), TpClockName(p->clock), p->intervalUs,
	    (unsigned long long) all);
    Tcl_DStringAppend(out, buf, -1);

    Tcl_InitHashTable(&names.ids, TCL_STRING_KEYS);
    names.next = 0;
    for (i = 0; i < t->nFuncs; i++) {
	const TpFunc *f = &t->funcs[i];
	Edge *e;
	int line = f->line > 0 ? f->line : 0;

	if (!used[i]) {
	    continue;
	}
	Name(out, &names, "ob", ObjOf(x, f));
	Name(out, &names, "fl", FileOf(x, f));
	Name(out, &names, "fn", f->name);
	snprintf(buf, sizeof(buf), "%d %llu\n", line,
		(unsigned long long) self[i]);
	Tcl_DStringAppend(out, buf, -1);
	for (e = edges[i]; e != NULL; e = e->next) {
	    const TpFunc *c = &t->funcs[e->callee];
	    uint64_t calls = e->samples;
	    uint32_t j;

	    /*
	     * Trace mode counts the calls of the run's own thread (the
	     * first named); another thread's part has the samples.
	     */

	    if ((allTids || (p->nThreads > 0 && tid == p->threads[0].tid))
		    && f->kind == TP_KIND_TCL && c->kind == TP_KIND_TCL) {
		for (j = 0; j < p->nCalls; j++) {
		    if (p->calls[j].caller != NULL
			    && strcmp(p->calls[j].caller, f->name) == 0
			    && strcmp(p->calls[j].callee, c->name) == 0) {
			calls = p->calls[j].count;
			break;
		    }
		}
	    }
	    Name(out, &names, "cob", ObjOf(x, c));
	    Name(out, &names, "cfl", FileOf(x, c));
	    Name(out, &names, "cfn", c->name);
	    snprintf(buf, sizeof(buf), "calls=%llu %d\n%d %llu\n",
		    (unsigned long long) calls, c->line > 0 ? c->line : 0,
		    line, (unsigned long long) e->samples);
	    Tcl_DStringAppend(out, buf, -1);
	}
	Tcl_DStringAppend(out, "\n", 1);
    }
    snprintf(buf, sizeof(buf), "totals: %llu\n", (unsigned long long) all);
    Tcl_DStringAppend(out, buf, -1);
    Tcl_DeleteHashTable(&names.ids);
    for (i = 0; i < t->nFuncs; i++) {
	Edge *e, *next;

	for (e = edges[i]; e != NULL; e = next) {
	    next = e->next;
	    free(e);
	}
    }
    free(edges);
    free(self);
    free(used);
}

/*
 *----------------------------------------------------------------------
 *
 * TpExCallgrind --
 *
 *	Writes the view in the callgrind format: one part, or with
 *	`-thread all` one part per thread (a "thread:" header each, as
 *	callgrind's --separate-threads gives them; KCachegrind lists them
 *	as parts, callgrind_annotate reads only single-part files).
 *	`-thread ID` writes that thread's part alone.
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
TpExCallgrind(
    Tcl_Interp *interp,
    const TpExportCtx *x,
    Tcl_DString *out)
{
    const TpProfile *p = x->p;

    (void) interp;
    Tcl_DStringAppend(out, "# callgrind format\nversion: 1\ncreator: tclprof "
	    TCLPROF_VERSION "\ncmd: ", -1);
    TpFoldedName(out, p->program ? p->program : "tclsh", 0);
    Tcl_DStringAppend(out, "\n", 1);
    if (p->threadSel == TP_THREADS_ALL || p->threadSel == TP_THREADS_ONE) {
	/*
	 * Threads in the order of their first stack; the roots of
	 * `-thread all` are left out (the part says which thread).
	 */

	uint32_t *tids = malloc(sizeof(uint32_t) * (p->nStacks + 1));
	uint32_t nTids = 0, s, j;

	if (tids == NULL) {
	    Tcl_Panic("tclprof: out of memory");
	}
	for (s = 0; s < p->nStacks; s++) {
	    for (j = 0; j < nTids && tids[j] != p->stacks[s].tid; j++) {
	    }
	    if (j == nTids) {
		tids[nTids++] = p->stacks[s].tid;
	    }
	}
	for (j = 0; j < nTids; j++) {
	    WritePart(x, out, (int) j + 1, 0, tids[j],
		    p->threadSel == TP_THREADS_ALL ? 1 : 0);
	}
	if (nTids == 0) {
	    WritePart(x, out, 1, 1, 0, 0);
	}
	free(tids);
    } else {
	WritePart(x, out, 1, 1, 0, 0);
    }
    return TCL_OK;
}
