/*
 * report.c --
 *
 *	The call tree as text (Figure 8 of the paper "Integrated Tcl/C call stacks": an indented tree with
 *	total and self samples and percentages, the paper's Under and In,
 *	named as every other report names them) and as Tcl
 *	values (a list of root nodes, each a dict). Pure functions of the
 *	tree and the options.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include <stdlib.h>
#include <string.h>

static const char *const typeNames[] = {
    "proc", "cmd", "method", "lambda", "coroutine", "eval", "pseudo", NULL
};

/*
 *----------------------------------------------------------------------
 *
 * TpFuncDictPut --
 *
 *	Puts what every dict report says of a function into d: name, kind,
 *	type, self, total and, where known, file, line and module.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Modifies d (unshared).
 *
 *----------------------------------------------------------------------
 */

void
TpFuncDictPut(
    Tcl_Obj *d,
    const TpProfile *p,
    const TpFunc *f,
    uint64_t self,
    uint64_t total)
{
#define PUT(k, val) Tcl_DictObjPut(NULL, d, Tcl_NewStringObj((k), -1), (val))
    PUT("name", Tcl_NewStringObj(f->name, -1));
    PUT("kind", Tcl_NewStringObj(TpKindName(f->kind), -1));
    PUT("type", Tcl_NewStringObj(f->kind == TP_KIND_TCL
	    || f->type == TP_TCL_PSEUDO ? typeNames[f->type] : "function", -1));
    PUT("self", Tcl_NewWideIntObj((Tcl_WideInt) self));
    PUT("total", Tcl_NewWideIntObj((Tcl_WideInt) total));
    if (f->file != NULL) {
	PUT("file", Tcl_NewStringObj(f->file, -1));
    }
    if (f->line > 0) {
	PUT("line", Tcl_NewIntObj(f->line));
    }
    if (f->module >= 0) {
	PUT("module", Tcl_NewStringObj(p->modules.mods[f->module].shortName, -1));
    }
    if (f->type == TP_TCL_PSEUDO && strncmp(f->name, "thread ", 7) == 0) {
	/* A thread's root (profiler report -thread all). */
	PUT("thread", Tcl_NewStringObj(f->name + 7, -1));
    }
#undef PUT
}

/*
 * Children sorted by total, largest first (ties by name), so reports are
 * stable from run to run.
 */

static const TpTree *sortTree;
static int sortKey;		/* TP_SORT_* of the report being built. */

static int
CompareNodes(
    const void *a,
    const void *b)
{
    const TpNode *x = *(const TpNode *const *) a;
    const TpNode *y = *(const TpNode *const *) b;

    if (sortKey == TP_SORT_NAME) {
	int c = strcmp(sortTree->funcs[x->func].name,
		sortTree->funcs[y->func].name);

	if (c != 0) {
	    return c;
	}
    } else if (sortKey == TP_SORT_SELF && x->self != y->self) {
	return x->self > y->self ? -1 : 1;
    }
    if (x->total != y->total) {
	return x->total > y->total ? -1 : 1;
    }
    return strcmp(sortTree->funcs[x->func].name, sortTree->funcs[y->func].name);
}

static TpNode **
SortedChildren(
    const TpTree *t,
    const TpNode *n,
    int *countPtr)
{
    TpNode *c, **v;
    int count = 0, i = 0;

    for (c = n->firstChild; c != NULL; c = c->nextSibling) {
	count++;
    }
    v = malloc(sizeof(TpNode *) * (size_t) (count + 1));
    if (v == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    for (c = n->firstChild; c != NULL; c = c->nextSibling) {
	v[i++] = c;
    }
    sortTree = t;
    TpSort(v, (size_t) count, sizeof(TpNode *), CompareNodes);
    *countPtr = count;
    return v;
}

static int
Visible(
    const TpNode *n,
    uint64_t all,
    const TpReportOptions *o)
{
    return all == 0 || o->thresholdPct <= 0
	    || 100.0 * (double) n->total / (double) all >= o->thresholdPct;
}

/*
 *----------------------------------------------------------------------
 *
 * TextNode --
 *
 *	Appends node n and its visible descendants to the text report.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Appends to ds.
 *
 *----------------------------------------------------------------------
 */

static void
TextNode(
    Tcl_DString *ds,
    const TpTree *t,
    const TpNode *n,
    int depth,
    uint64_t all,
    const TpReportOptions *o)
{
    const TpFunc *f = &t->funcs[n->func];
    char buf[96];
    TpNode **kids;
    int count, i;

    snprintf(buf, sizeof(buf), "%9llu %5.1f%% %9llu %5.1f%%  ",
	    (unsigned long long) n->total, 100.0 * (double) n->total / (double) all,
	    (unsigned long long) n->self, 100.0 * (double) n->self / (double) all);
    Tcl_DStringAppend(ds, buf, -1);
    for (i = 0; i < depth; i++) {
	Tcl_DStringAppend(ds, " ", 1);
    }
    Tcl_DStringAppend(ds, f->name, -1);
    if (f->kind == TP_KIND_C || f->kind == TP_KIND_INTERNAL) {
	if (f->type != TP_TCL_PSEUDO) {
	    Tcl_DStringAppend(ds, f->kind == TP_KIND_C ? "  [C]" : "  [Tcl internal]", -1);
	}
    } else if (f->file != NULL && f->type != TP_TCL_CMD) {
	/*
	 * A command's locations are its call sites, which differ; a proc's
	 * lowest line approximates where it starts.
	 */

	Tcl_DStringAppend(ds, "  (", -1);
	Tcl_DStringAppend(ds, f->file, -1);
	if (f->line > 0) {
	    snprintf(buf, sizeof(buf), ":%d", f->line);
	    Tcl_DStringAppend(ds, buf, -1);
	}
	Tcl_DStringAppend(ds, ")", 1);
    }
    Tcl_DStringAppend(ds, "\n", 1);
    if (o->maxDepth > 0 && depth + 1 >= o->maxDepth) {
	return;
    }
    kids = SortedChildren(t, n, &count);
    for (i = 0; i < count; i++) {
	if (Visible(kids[i], all, o)) {
	    TextNode(ds, t, kids[i], depth + 1, all, o);
	}
    }
    free(kids);
}

/*
 *----------------------------------------------------------------------
 *
 * TpReportText --
 *
 *	Sets the interp's result to the text report.
 *
 * Results:
 *	TCL_OK.
 *
 * Side effects:
 *	Sets the interp result.
 *
 *----------------------------------------------------------------------
 */

int
TpReportText(
    Tcl_Interp *interp,
    TpProfile *p,
    TpTree *t,
    const TpReportOptions *o)
{
    Tcl_DString ds;
    char buf[256];
    int count, i;
    uint64_t all = t->root->total;
    TpNode **kids;

    sortKey = o->sort;
    Tcl_DStringInit(&ds);
    snprintf(buf, sizeof(buf),
	    "tclprof %s: %llu samples, interval %d us, clock %s, mode %s,"
	    " %llu truncated, %llu merge mismatches\n",
	    TCLPROF_VERSION, (unsigned long long) all, p->intervalUs,
	    TpClockName(p->clock), TpModeName(p->mode),
	    (unsigned long long) p->truncated,
	    (unsigned long long) p->mergeMismatch);
    Tcl_DStringAppend(&ds, buf, -1);
    Tcl_DStringAppend(&ds,
	    "    Total      %      Self      %  Name\n", -1);
    if (all > 0) {
	kids = SortedChildren(t, t->root, &count);
	for (i = 0; i < count; i++) {
	    if (Visible(kids[i], all, o)) {
		TextNode(&ds, t, kids[i], 0, all, o);
	    }
	}
	free(kids);
    }
    Tcl_DStringResult(interp, &ds);
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * DictNode --
 *
 *	One node and its visible descendants as a dict.
 *
 * Results:
 *	A new dict object.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static Tcl_Obj *
DictNode(
    const TpProfile *p,
    const TpTree *t,
    const TpNode *n,
    const TpNode *parent,
    Tcl_HashTable *calls,
    int depth,
    uint64_t all,
    const TpReportOptions *o)
{
    const TpFunc *f = &t->funcs[n->func];
    Tcl_Obj *d = Tcl_NewDictObj(), *kids = Tcl_NewListObj(0, NULL);
    TpNode **v;
    int count, i;

#define PUT(k, val) Tcl_DictObjPut(NULL, d, Tcl_NewStringObj((k), -1), (val))
    TpFuncDictPut(d, p, f, n->self, n->total);
    if (f->kind == TP_KIND_TCL && calls->numEntries > 0) {
	Tcl_HashEntry *h = NULL;
	Tcl_DString key;

	/*
	 * Exact calls (trace mode): of this function from its parent when
	 * the parent is a Tcl function, else of this function in all.
	 */

	Tcl_DStringInit(&key);
	if (parent != NULL && t->funcs[parent->func].kind == TP_KIND_TCL) {
	    Tcl_DStringAppend(&key, t->funcs[parent->func].name, -1);
	    Tcl_DStringAppend(&key, "\x01", 1);
	    Tcl_DStringAppend(&key, f->name, -1);
	    h = Tcl_FindHashEntry(calls, Tcl_DStringValue(&key));
	}
	if (h == NULL) {
	    h = Tcl_FindHashEntry(calls, f->name);
	}
	Tcl_DStringFree(&key);
	if (h != NULL) {
	    PUT("calls", Tcl_NewWideIntObj((Tcl_WideInt) (intptr_t)
		    Tcl_GetHashValue(h)));
	}
    }
    if (o->maxDepth <= 0 || depth + 1 < o->maxDepth) {
	v = SortedChildren(t, n, &count);
	for (i = 0; i < count; i++) {
	    if (Visible(v[i], all, o)) {
		Tcl_ListObjAppendElement(NULL, kids,
			DictNode(p, t, v[i], n, calls, depth + 1, all, o));
	    }
	}
	free(v);
    }
    PUT("children", kids);
#undef PUT
    return d;
}

/*
 *----------------------------------------------------------------------
 *
 * TpReportDict --
 *
 *	Sets the interp's result to the tree as a list of root node dicts.
 *
 * Results:
 *	TCL_OK.
 *
 * Side effects:
 *	Sets the interp result.
 *
 *----------------------------------------------------------------------
 */

int
TpReportDict(
    Tcl_Interp *interp,
    TpProfile *p,
    TpTree *t,
    const TpReportOptions *o)
{
    Tcl_Obj *roots = Tcl_NewListObj(0, NULL);
    uint64_t all = t->root->total;
    TpNode **v;
    int count, i, isNew;
    uint32_t k;
    Tcl_HashTable calls;
    Tcl_DString key;

    sortKey = o->sort;
    Tcl_InitHashTable(&calls, TCL_STRING_KEYS);
    Tcl_DStringInit(&key);
    for (k = 0; k < p->nCalls; k++) {
	Tcl_DStringSetLength(&key, 0);
	if (p->calls[k].caller != NULL) {
	    Tcl_DStringAppend(&key, p->calls[k].caller, -1);
	    Tcl_DStringAppend(&key, "\x01", 1);
	}
	Tcl_DStringAppend(&key, p->calls[k].callee, -1);
	Tcl_SetHashValue(Tcl_CreateHashEntry(&calls, Tcl_DStringValue(&key),
		&isNew), (ClientData) (intptr_t) p->calls[k].count);
    }
    Tcl_DStringFree(&key);
    v = SortedChildren(t, t->root, &count);
    for (i = 0; i < count; i++) {
	if (Visible(v[i], all, o)) {
	    Tcl_ListObjAppendElement(NULL, roots,
		    DictNode(p, t, v[i], NULL, &calls, 0, all, o));
	}
    }
    free(v);
    Tcl_DeleteHashTable(&calls);
    Tcl_SetObjResult(interp, roots);
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * TpReportCalls --
 *
 *	Exact call counts (trace mode): a dict {callee count ...}, or with
 *	edges a flat list {caller callee count ...}, most calls first.
 *
 * Results:
 *	TCL_OK; the value is the interp result.
 *
 * Side effects:
 *	Sets the interp result.
 *
 *----------------------------------------------------------------------
 */

static const TpProfile *sortProfile;

static int
CompareCalls(
    const void *a,
    const void *b)
{
    const TpCalls *x = &sortProfile->calls[*(const uint32_t *) a];
    const TpCalls *y = &sortProfile->calls[*(const uint32_t *) b];

    if (x->count != y->count) {
	return x->count > y->count ? -1 : 1;
    }
    return strcmp(x->callee, y->callee);
}

int
TpReportCalls(
    Tcl_Interp *interp,
    TpProfile *p,
    int edges)
{
    Tcl_Obj *result = edges ? Tcl_NewListObj(0, NULL) : Tcl_NewDictObj();
    uint32_t *order = malloc(sizeof(uint32_t) * (p->nCalls + 1)), i;

    if (order == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    for (i = 0; i < p->nCalls; i++) {
	order[i] = i;
    }
    sortProfile = p;
    TpSort(order, p->nCalls, sizeof(uint32_t), CompareCalls);
    for (i = 0; i < p->nCalls; i++) {
	const TpCalls *c = &p->calls[order[i]];

	if (edges && c->caller != NULL) {
	    Tcl_ListObjAppendElement(NULL, result,
		    Tcl_NewStringObj(c->caller, -1));
	    Tcl_ListObjAppendElement(NULL, result,
		    Tcl_NewStringObj(c->callee, -1));
	    Tcl_ListObjAppendElement(NULL, result,
		    Tcl_NewWideIntObj((Tcl_WideInt) c->count));
	} else if (!edges && c->caller == NULL) {
	    Tcl_DictObjPut(NULL, result, Tcl_NewStringObj(c->callee, -1),
		    Tcl_NewWideIntObj((Tcl_WideInt) c->count));
	}
    }
    free(order);
    Tcl_SetObjResult(interp, result);
    return TCL_OK;
}
