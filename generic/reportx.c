/*
 * reportx.c --
 *
 *	Views and the reports computed from them: flat, callers, callees,
 *	lines and modules.
 *
 *	A *view* is every stack of the profile as the function sequence the
 *	user sees: libtcl internals skipped unless shown, command frames
 *	inserted (both done by TpTreeStackFuncs), frames matching -hide
 *	removed (their callees re-parented to the nearest kept frame), and
 *	with -focus each sequence cut so that it starts at its outermost
 *	matching frame, sequences without a match being left out. Reports and
 *	exporters read views only, so `profiler report -format flat`, the
 *	pprof file and the flame graph of one profile under one set of
 *	options always count the same samples.
 *
 *	"Total" of a function is the number of samples in which it appears
 *	at least once (a recursive function is counted once per sample);
 *	"self" the number of samples in which it is the leaf. That is Knuth's
 *	distinction between a routine's own cost and the cost it causes.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include <stdlib.h>
#include <string.h>

static void *	XAlloc(size_t size);
static int	FuncLess(const TpTree *t, uint32_t a, uint32_t b, int sort,
		    const uint64_t *self, const uint64_t *total);
static void	AppendWhere(Tcl_DString *ds, const TpProfile *p, const TpFunc *f);
static Tcl_Obj *FuncDict(const TpProfile *p, const TpFunc *f, uint64_t self,
		    uint64_t total, uint64_t all);

static void *
XAlloc(
    size_t size)
{
    void *m = calloc(1, size ? size : 1);

    if (m == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    return m;
}

/*
 *----------------------------------------------------------------------
 *
 * TpNameMatch --
 *
 *	Whether a frame name matches a user's pattern (string match). A
 *	leading "::" of the name is optional, so "a" matches the proc "::a".
 *
 * Results:
 *	1 or 0.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

int
TpNameMatch(
    const char *pattern,
    const char *name)
{
    if (Tcl_StringMatch(name, pattern)) {
	return 1;
    }
    return name[0] == ':' && name[1] == ':' && Tcl_StringMatch(name + 2, pattern);
}

/*
 *----------------------------------------------------------------------
 *
 * TpViewBuild --
 *
 *	Computes the view of profile p under options o (see the file
 *	comment).
 *
 * Results:
 *	A new view; free with TpViewFree.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

TpView *
TpViewBuild(
    const TpTree *t,
    const TpProfile *p,
    const TpReportOptions *o)
{
    TpView *v = XAlloc(sizeof(TpView));
    uint32_t i, maxDepth = 0, *tmp, *slots;
    uint8_t *hidden, *focus;
    size_t cap = 1024, used = 0, nSlots = 64;

    v->nStacks = p->nStacks;
    v->first = XAlloc(sizeof(uint32_t) * (p->nStacks + 1));
    v->len = XAlloc(sizeof(uint32_t) * (p->nStacks + 1));
    v->seq = XAlloc(sizeof(uint32_t) * cap);
    hidden = XAlloc(t->nFuncs + 1);
    focus = XAlloc(t->nFuncs + 1);
    for (i = 0; i < t->nFuncs; i++) {
	hidden[i] = o->hide != NULL && TpNameMatch(o->hide, t->funcs[i].name);
	focus[i] = o->focus != NULL && TpNameMatch(o->focus, t->funcs[i].name);
    }
    for (i = 0; i < p->nStacks; i++) {
	if (p->stacks[i].depth > maxDepth) {
	    maxDepth = p->stacks[i].depth;
	}
    }
    tmp = XAlloc(sizeof(uint32_t) * (2 * (size_t) maxDepth + 1));

    /*
     * Stacks that differ only in where their C leaf or callers were (an
     * offset within the same function) have the same sequence of
     * functions: each sequence is stored once, and the stacks that have
     * it share it. slots holds stack + 1 of each distinct sequence,
     * open-addressed by the sequence's hash.
     */

    while (nSlots < 2 * (size_t) p->nStacks) {
	nSlots *= 2;
    }
    slots = XAlloc(sizeof(uint32_t) * nSlots);
    for (i = 0; i < p->nStacks; i++) {
	uint32_t n = TpTreeStackFuncs(t, p, i, o, tmp), k, m = 0, start = 0;
	uint32_t h = 2166136261u;
	size_t slot;

	for (k = 0; k < n; k++) {
	    if (!hidden[tmp[k]]) {
		tmp[m++] = tmp[k];
	    }
	}
	if (o->focus != NULL) {
	    while (start < m && !focus[tmp[start]]) {
		start++;
	    }
	    if (start == m) {
		v->first[i] = (uint32_t) used;
		v->len[i] = 0;
		continue;
	    }
	}
	m -= start;
	if (m > 0) {
	    v->samples += p->stacks[i].count;
	}
	if (m > v->maxLen) {
	    v->maxLen = m;
	}
	for (k = 0; k < m; k++) {
	    h = (h ^ tmp[start + k]) * 16777619u;
	}
	slot = (h ^ (h >> 15)) & (nSlots - 1);
	while (slots[slot] != 0) {
	    uint32_t j = slots[slot] - 1;

	    if (v->len[j] == m && memcmp(v->seq + v->first[j], tmp + start,
		    sizeof(uint32_t) * m) == 0) {
		break;
	    }
	    slot = (slot + 1) & (nSlots - 1);
	}
	if (slots[slot] != 0) {
	    v->first[i] = v->first[slots[slot] - 1];
	    v->len[i] = m;
	    continue;
	}
	slots[slot] = i + 1;
	if (used + m > cap) {
	    while (used + m > cap) {
		cap *= 2;
	    }
	    v->seq = realloc(v->seq, sizeof(uint32_t) * cap);
	    if (v->seq == NULL) {
		Tcl_Panic("tclprof: out of memory");
	    }
	}
	memcpy(v->seq + used, tmp + start, sizeof(uint32_t) * m);
	v->first[i] = (uint32_t) used;
	v->len[i] = m;
	used += m;
    }
    free(slots);
    free(tmp);
    free(hidden);
    free(focus);
    return v;
}

/*
 *----------------------------------------------------------------------
 *
 * TpViewTree --
 *
 *	Builds a call tree from the view's sequences (for tree reports under
 *	-hide or -focus). The nodes live in the view.
 *
 * Results:
 *	The synthetic root; its total is the view's samples.
 *
 * Side effects:
 *	Allocates nodes freed by TpViewFree.
 *
 *----------------------------------------------------------------------
 */

typedef struct ViewChunk {
    struct ViewChunk *next;
    uint32_t used;
    TpNode nodes[1024];
} ViewChunk;

static TpNode *
ViewNode(
    TpView *v,
    uint32_t func)
{
    ViewChunk *c = v->arena;
    TpNode *n;

    if (c == NULL || c->used == 1024) {
	c = XAlloc(sizeof(ViewChunk));
	c->next = v->arena;
	v->arena = c;
    }
    n = &c->nodes[c->used++];
    n->func = func;
    return n;
}

static uint64_t
ViewTotals(
    TpNode *n)
{
    TpNode *c;
    uint64_t total = n->self;

    for (c = n->firstChild; c != NULL; c = c->nextSibling) {
	total += ViewTotals(c);
    }
    n->total = total;
    return total;
}

TpNode *
TpViewTree(
    TpView *v,
    const TpProfile *p)
{
    TpNode *root = ViewNode(v, UINT32_MAX);
    uint32_t i, k;

    for (i = 0; i < v->nStacks; i++) {
	const uint32_t *s = v->seq + v->first[i];
	TpNode *node = root;

	if (v->len[i] == 0) {
	    continue;
	}
	for (k = 0; k < v->len[i]; k++) {
	    TpNode *c;

	    for (c = node->firstChild; c != NULL; c = c->nextSibling) {
		if (c->func == s[k]) {
		    break;
		}
	    }
	    if (c == NULL) {
		c = ViewNode(v, s[k]);
		c->nextSibling = node->firstChild;
		node->firstChild = c;
	    }
	    node = c;
	}
	node->self += p->stacks[i].count;
    }
    ViewTotals(root);
    return root;
}

/*
 *----------------------------------------------------------------------
 *
 * TpViewFree --
 *
 *	Frees a view and the nodes of its trees.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Frees memory.
 *
 *----------------------------------------------------------------------
 */

void
TpViewFree(
    TpView *v)
{
    ViewChunk *c, *next;

    if (v == NULL) {
	return;
    }
    for (c = v->arena; c != NULL; c = next) {
	next = c->next;
	free(c);
    }
    free(v->first);
    free(v->len);
    free(v->seq);
    free(v);
}

/*
 * Per-function self and total counts of a view (total counted once per
 * sample, with a stamp per function).
 */

static void
FuncCounts(
    const TpTree *t,
    const TpProfile *p,
    const TpView *v,
    uint64_t *self,
    uint64_t *total)
{
    uint32_t i, k, *stamp = XAlloc(sizeof(uint32_t) * (t->nFuncs + 1));

    for (i = 0; i < v->nStacks; i++) {
	const uint32_t *s = v->seq + v->first[i];
	uint64_t count = p->stacks[i].count;

	if (v->len[i] == 0) {
	    continue;
	}
	self[s[v->len[i] - 1]] += count;
	for (k = 0; k < v->len[i]; k++) {
	    if (stamp[s[k]] != i + 1) {
		stamp[s[k]] = i + 1;
		total[s[k]] += count;
	    }
	}
    }
    free(stamp);
}

static int
FuncLess(
    const TpTree *t,
    uint32_t a,
    uint32_t b,
    int sort,
    const uint64_t *self,
    const uint64_t *total)
{
    int c;

    switch (sort) {
    case TP_SORT_NAME:
	c = strcmp(t->funcs[a].name, t->funcs[b].name);
	return c != 0 ? c < 0 : a < b;
    case TP_SORT_TOTAL:
	if (total[a] != total[b]) {
	    return total[a] > total[b];
	}
	if (self[a] != self[b]) {
	    return self[a] > self[b];
	}
	break;
    default:
	if (self[a] != self[b]) {
	    return self[a] > self[b];
	}
	if (total[a] != total[b]) {
	    return total[a] > total[b];
	}
	break;
    }
    c = strcmp(t->funcs[a].name, t->funcs[b].name);
    return c != 0 ? c < 0 : a < b;
}

/*
 * A merge sort of function indices (qsort has no context argument, and
 * these reports must not use statics).
 */

static void
SortFuncs(
    const TpTree *t,
    uint32_t *v,
    uint32_t n,
    int sort,
    const uint64_t *self,
    const uint64_t *total)
{
    uint32_t *tmp, width, i;

    if (n < 2) {
	return;
    }
    tmp = XAlloc(sizeof(uint32_t) * n);
    for (width = 1; width < n; width *= 2) {
	for (i = 0; i < n; i += 2 * width) {
	    uint32_t lo = i, mid = i + width < n ? i + width : n;
	    uint32_t hi = i + 2 * width < n ? i + 2 * width : n;
	    uint32_t a = lo, b = mid, k = lo;

	    while (a < mid && b < hi) {
		tmp[k++] = FuncLess(t, v[b], v[a], sort, self, total)
			? v[b++] : v[a++];
	    }
	    while (a < mid) {
		tmp[k++] = v[a++];
	    }
	    while (b < hi) {
		tmp[k++] = v[b++];
	    }
	}
	memcpy(v, tmp, sizeof(uint32_t) * n);
    }
    free(tmp);
}

static void
AppendWhere(
    Tcl_DString *ds,
    const TpProfile *p,
    const TpFunc *f)
{
    char buf[32];

    if (f->kind == TP_KIND_TCL || f->type == TP_TCL_PSEUDO) {
	if (f->file != NULL) {
	    Tcl_DStringAppend(ds, "  (", -1);
	    Tcl_DStringAppend(ds, f->file, -1);
	    if (f->line > 0) {
		snprintf(buf, sizeof(buf), ":%d", f->line);
		Tcl_DStringAppend(ds, buf, -1);
	    }
	    Tcl_DStringAppend(ds, ")", 1);
	}
    } else {
	Tcl_DStringAppend(ds, f->kind == TP_KIND_C ? "  [C " : "  [Tcl internal ", -1);
	Tcl_DStringAppend(ds, f->module >= 0
		? p->modules.mods[f->module].shortName : "?", -1);
	Tcl_DStringAppend(ds, "]", 1);
    }
}

/*
 * A name in a text report: one line per row, so control characters are
 * shown escaped ("\n"), as Tcl would write them.
 */

static void
AppendName(
    Tcl_DString *ds,
    const char *name)
{
    const char *s, *run = name;
    char buf[8];

    for (s = name; *s != '\0'; s++) {
	if ((unsigned char) *s < 0x20) {
	    Tcl_DStringAppend(ds, run, (int) (s - run));
	    if (*s == '\n') {
		Tcl_DStringAppend(ds, "\\n", 2);
	    } else if (*s == '\t') {
		Tcl_DStringAppend(ds, "\\t", 2);
	    } else {
		snprintf(buf, sizeof(buf), "\\x%02x", (unsigned char) *s);
		Tcl_DStringAppend(ds, buf, -1);
	    }
	    run = s + 1;
	}
    }
    Tcl_DStringAppend(ds, run, (int) (s - run));
}

static Tcl_Obj *
FuncDict(
    const TpProfile *p,
    const TpFunc *f,
    uint64_t self,
    uint64_t total,
    uint64_t all)
{
    Tcl_Obj *d = Tcl_NewDictObj();
    double a = all ? (double) all : 1.0;

#define PUT(k, val) Tcl_DictObjPut(NULL, d, Tcl_NewStringObj((k), -1), (val))
    TpFuncDictPut(d, p, f, self, total);
    PUT("selfPct", Tcl_NewDoubleObj(100.0 * (double) self / a));
    PUT("totalPct", Tcl_NewDoubleObj(100.0 * (double) total / a));
#undef PUT
    return d;
}

/*
 * Exact call counts of a callee (caller NULL) or an edge, from trace mode;
 * -1 when unknown.
 */

static Tcl_WideInt
CallCount(
    const TpProfile *p,
    const char *caller,
    const char *callee)
{
    uint32_t i;

    for (i = 0; i < p->nCalls; i++) {
	const TpCalls *c = &p->calls[i];

	if (strcmp(c->callee, callee) == 0 && ((caller == NULL
		&& c->caller == NULL) || (caller != NULL && c->caller != NULL
		&& strcmp(c->caller, caller) == 0))) {
	    return (Tcl_WideInt) c->count;
	}
    }
    return -1;
}

static void
Header(
    Tcl_DString *ds,
    const TpProfile *p,
    const char *what,
    uint64_t all)
{
    char buf[256];

    snprintf(buf, sizeof(buf), "tclprof %s %s: %llu samples, interval %d us,"
	    " clock %s, mode %s\n", TCLPROF_VERSION, what,
	    (unsigned long long) all, p->intervalUs, TpClockName(p->clock),
	    TpModeName(p->mode));
    Tcl_DStringAppend(ds, buf, -1);
}

/*
 *----------------------------------------------------------------------
 *
 * TpReportFlat --
 *
 *	The flat profile: per function self and total samples, their
 *	percentages and the cumulative self percentage, sorted by self
 *	(default), total or name. Functions under -threshold percent of
 *	total are left out.
 *
 * Results:
 *	TCL_OK; text, or with asValue a list of dicts {name kind type self
 *	total selfPct totalPct ?file? ?line? ?module? ?calls?}.
 *
 * Side effects:
 *	Sets the interp result.
 *
 *----------------------------------------------------------------------
 */

int
TpReportFlat(
    Tcl_Interp *interp,
    TpProfile *p,
    TpTree *t,
    TpView *v,
    const TpReportOptions *o)
{
    uint64_t *self = XAlloc(sizeof(uint64_t) * (t->nFuncs + 1));
    uint64_t *total = XAlloc(sizeof(uint64_t) * (t->nFuncs + 1));
    uint32_t *order = XAlloc(sizeof(uint32_t) * (t->nFuncs + 1));
    uint32_t i, n = 0;
    uint64_t all = v->samples, cum = 0;
    double a = all ? (double) all : 1.0;
    Tcl_Obj *list = Tcl_NewListObj(0, NULL);
    Tcl_DString ds;
    char buf[128];

    FuncCounts(t, p, v, self, total);
    for (i = 0; i < t->nFuncs; i++) {
	if (total[i] > 0 && 100.0 * (double) total[i] / a >= o->thresholdPct) {
	    order[n++] = i;
	}
    }
    SortFuncs(t, order, n, o->sort, self, total);
    Tcl_DStringInit(&ds);
    Header(&ds, p, "flat", all);
    Tcl_DStringAppend(&ds,
	    "     Self      %   Cum%     Total      %  Name\n", -1);
    for (i = 0; i < n; i++) {
	const TpFunc *f = &t->funcs[order[i]];

	cum += self[order[i]];
	if (o->asValue) {
	    Tcl_Obj *d = FuncDict(p, f, self[order[i]], total[order[i]], all);
	    Tcl_WideInt calls = f->kind == TP_KIND_TCL
		    ? CallCount(p, NULL, f->name) : -1;

	    if (calls >= 0) {
		Tcl_DictObjPut(NULL, d, Tcl_NewStringObj("calls", -1),
			Tcl_NewWideIntObj(calls));
	    }
	    Tcl_ListObjAppendElement(NULL, list, d);
	    continue;
	}
	snprintf(buf, sizeof(buf), "%9llu %5.1f%% %5.1f%% %9llu %5.1f%%  ",
		(unsigned long long) self[order[i]],
		100.0 * (double) self[order[i]] / a, 100.0 * (double) cum / a,
		(unsigned long long) total[order[i]],
		100.0 * (double) total[order[i]] / a);
	Tcl_DStringAppend(&ds, buf, -1);
	AppendName(&ds, f->name);
	AppendWhere(&ds, p, f);
	Tcl_DStringAppend(&ds, "\n", 1);
    }
    free(self);
    free(total);
    free(order);
    if (o->asValue) {
	Tcl_DStringFree(&ds);
	Tcl_SetObjResult(interp, list);
    } else {
	Tcl_DecrRefCount(list);
	Tcl_DStringResult(interp, &ds);
    }
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * TpReportCallers --
 *
 *	For each function matching o->function: its total and self, and
 *	its callers (or callees) with the samples in which each edge occurs
 *	(once per sample). Callees of a leaf occurrence are listed as
 *	"[self]"; callers of a root occurrence as "[root]".
 *
 * Results:
 *	TCL_OK; text, or with asValue a list of dicts {name total self
 *	callers|callees {{name samples pct ?calls?} ...}}.
 *
 * Side effects:
 *	Sets the interp result.
 *
 *----------------------------------------------------------------------
 */

typedef struct EdgeCount {
    uint64_t count;
    uint32_t stamp;		/* Last stack counted (+1). */
} EdgeCount;

int
TpReportCallers(
    Tcl_Interp *interp,
    TpProfile *p,
    TpTree *t,
    TpView *v,
    const TpReportOptions *o,
    int callees)
{
    uint64_t *self = XAlloc(sizeof(uint64_t) * (t->nFuncs + 1));
    uint64_t *total = XAlloc(sizeof(uint64_t) * (t->nFuncs + 1));
    uint32_t *matched = XAlloc(sizeof(uint32_t) * (t->nFuncs + 1));
    uint8_t *isMatch = XAlloc(t->nFuncs + 1);
    uint32_t i, k, nMatched = 0;
    const uint32_t none = t->nFuncs;	/* [root] or [self]. */
    Tcl_HashTable edges;		/* (func << 32 | other) -> EdgeCount */
    Tcl_Obj *list = Tcl_NewListObj(0, NULL);
    Tcl_DString ds;
    char buf[128];
    double a = v->samples ? (double) v->samples : 1.0;

    Tcl_InitHashTable(&edges, TCL_ONE_WORD_KEYS);
    FuncCounts(t, p, v, self, total);
    for (i = 0; i < t->nFuncs; i++) {
	if (total[i] > 0 && TpNameMatch(o->function, t->funcs[i].name)) {
	    isMatch[i] = 1;
	    matched[nMatched++] = i;
	}
    }
    SortFuncs(t, matched, nMatched, o->sort == TP_SORT_DEFAULT
	    ? TP_SORT_TOTAL : o->sort, self, total);
    for (i = 0; i < v->nStacks; i++) {
	const uint32_t *s = v->seq + v->first[i];
	uint32_t len = v->len[i];

	for (k = 0; k < len; k++) {
	    uint32_t other;
	    uintptr_t key;
	    Tcl_HashEntry *h;
	    EdgeCount *e;
	    int isNew;

	    if (!isMatch[s[k]]) {
		continue;
	    }
	    if (callees) {
		other = k + 1 < len ? s[k + 1] : none;
	    } else {
		other = k > 0 ? s[k - 1] : none;
	    }
	    key = ((uintptr_t) s[k] << 32) | other;
	    h = Tcl_CreateHashEntry(&edges, (const char *) key, &isNew);
	    if (isNew) {
		e = XAlloc(sizeof(EdgeCount));
		Tcl_SetHashValue(h, e);
	    } else {
		e = Tcl_GetHashValue(h);
	    }
	    if (e->stamp != i + 1) {
		e->stamp = i + 1;
		e->count += p->stacks[i].count;
	    }
	}
    }

    Tcl_DStringInit(&ds);
    Header(&ds, p, callees ? "callees" : "callers", v->samples);
    if (nMatched == 0) {
	Tcl_DStringAppend(&ds, "no sampled function matches \"", -1);
	Tcl_DStringAppend(&ds, o->function, -1);
	Tcl_DStringAppend(&ds, "\"\n", -1);
    }
    for (i = 0; i < nMatched; i++) {
	uint32_t fi = matched[i], j, nOther = 0;
	uint32_t *others = XAlloc(sizeof(uint32_t) * (t->nFuncs + 2));
	uint64_t *cnt = XAlloc(sizeof(uint64_t) * (t->nFuncs + 2));
	uint64_t *zero = XAlloc(sizeof(uint64_t) * (t->nFuncs + 2));
	Tcl_HashSearch search;
	Tcl_HashEntry *h;
	Tcl_Obj *d = NULL, *sub = Tcl_NewListObj(0, NULL);

	for (h = Tcl_FirstHashEntry(&edges, &search); h != NULL;
		h = Tcl_NextHashEntry(&search)) {
	    uintptr_t key = (uintptr_t) Tcl_GetHashKey(&edges, h);

	    if ((uint32_t) (key >> 32) == fi) {
		uint32_t other = (uint32_t) (key & 0xffffffffu);

		if (other != none) {
		    others[nOther++] = other;
		}
		cnt[other] = ((EdgeCount *) Tcl_GetHashValue(h))->count;
	    }
	}
	SortFuncs(t, others, nOther, TP_SORT_TOTAL, zero, cnt);
	if (cnt[none] > 0) {
	    others[nOther++] = none;
	}
	if (o->asValue) {
	    d = FuncDict(p, &t->funcs[fi], self[fi], total[fi], v->samples);
	} else {
	    snprintf(buf, sizeof(buf), "%s%9llu %5.1f%% total, %9llu %5.1f%% self  ",
		    i ? "\n" : "", (unsigned long long) total[fi],
		    100.0 * (double) total[fi] / a,
		    (unsigned long long) self[fi], 100.0 * (double) self[fi] / a);
	    Tcl_DStringAppend(&ds, buf, -1);
	    AppendName(&ds, t->funcs[fi].name);
	    AppendWhere(&ds, p, &t->funcs[fi]);
	    Tcl_DStringAppend(&ds, callees ? "\n  called:\n" : "\n  called by:\n", -1);
	}
	for (j = 0; j < nOther; j++) {
	    uint32_t of = others[j];
	    const char *name = of == none ? (callees ? "[self]" : "[root]")
		    : t->funcs[of].name;
	    Tcl_WideInt calls = -1;

	    if (of != none && t->funcs[of].kind == TP_KIND_TCL
		    && t->funcs[fi].kind == TP_KIND_TCL) {
		calls = callees ? CallCount(p, t->funcs[fi].name, name)
			: CallCount(p, name, t->funcs[fi].name);
	    }
	    if (o->asValue) {
		Tcl_Obj *e = Tcl_NewDictObj();

		Tcl_DictObjPut(NULL, e, Tcl_NewStringObj("name", -1),
			Tcl_NewStringObj(name, -1));
		Tcl_DictObjPut(NULL, e, Tcl_NewStringObj("samples", -1),
			Tcl_NewWideIntObj((Tcl_WideInt) cnt[of]));
		Tcl_DictObjPut(NULL, e, Tcl_NewStringObj("pct", -1),
			Tcl_NewDoubleObj(total[fi] ? 100.0 * (double) cnt[of]
			/ (double) total[fi] : 0.0));
		if (calls >= 0) {
		    Tcl_DictObjPut(NULL, e, Tcl_NewStringObj("calls", -1),
			    Tcl_NewWideIntObj(calls));
		}
		Tcl_ListObjAppendElement(NULL, sub, e);
	    } else {
		snprintf(buf, sizeof(buf), "  %9llu %5.1f%%  ",
			(unsigned long long) cnt[of], total[fi] ? 100.0
			* (double) cnt[of] / (double) total[fi] : 0.0);
		Tcl_DStringAppend(&ds, buf, -1);
		AppendName(&ds, name);
		if (calls >= 0) {
		    snprintf(buf, sizeof(buf), "  (%lld calls)", (long long) calls);
		    Tcl_DStringAppend(&ds, buf, -1);
		}
		Tcl_DStringAppend(&ds, "\n", 1);
	    }
	}
	if (o->asValue) {
	    Tcl_DictObjPut(NULL, d, Tcl_NewStringObj(callees ? "callees"
		    : "callers", -1), sub);
	    Tcl_ListObjAppendElement(NULL, list, d);
	} else {
	    Tcl_DecrRefCount(sub);
	}
	free(others);
	free(cnt);
	free(zero);
    }
    {
	Tcl_HashSearch search;
	Tcl_HashEntry *h;

	for (h = Tcl_FirstHashEntry(&edges, &search); h != NULL;
		h = Tcl_NextHashEntry(&search)) {
	    free(Tcl_GetHashValue(h));
	}
    }
    Tcl_DeleteHashTable(&edges);
    free(self);
    free(total);
    free(matched);
    free(isMatch);
    if (o->asValue) {
	Tcl_DStringFree(&ds);
	Tcl_SetObjResult(interp, list);
    } else {
	Tcl_DecrRefCount(list);
	Tcl_DStringResult(interp, &ds);
    }
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * TpReportModules --
 *
 *	Samples per shared object (the per-module view of sampling VM profilers): self is the module of
 *	the sample's innermost C frame, total counts each module once per
 *	sample in which any of its frames appears. Computed on the raw
 *	stacks: libtcl is counted even when its frames are hidden in trees.
 *	Samples with no C frame count under "[no C frame]".
 *
 * Results:
 *	TCL_OK; text, or with asValue a list of dicts {module path self
 *	total selfPct totalPct}.
 *
 * Side effects:
 *	Sets the interp result.
 *
 *----------------------------------------------------------------------
 */

int
TpReportModules(
    Tcl_Interp *interp,
    TpProfile *p,
    TpTree *t,
    const TpReportOptions *o)
{
    int nm = p->modules.nMods, i, n = 0;
    uint64_t *self = XAlloc(sizeof(uint64_t) * (size_t) (nm + 2));
    uint64_t *total = XAlloc(sizeof(uint64_t) * (size_t) (nm + 2));
    uint32_t *stamp = XAlloc(sizeof(uint32_t) * (size_t) (nm + 2));
    uint32_t *order = XAlloc(sizeof(uint32_t) * (size_t) (nm + 2));
    const int unknown = nm, noC = nm + 1;	/* Pseudo modules. */
    uint64_t all = 0;
    uint32_t s, k;
    Tcl_Obj *list = Tcl_NewListObj(0, NULL);
    Tcl_DString ds;
    char buf[128];
    double a;

    (void) t;
    for (s = 0; s < p->nStacks; s++) {
	const uint32_t *ids = TpProfileStackIds(p, s);
	uint64_t count = p->stacks[s].count;
	int leaf = noC;

	all += count;
	for (k = 0; k < p->stacks[s].depth; k++) {
	    const TpLoc *l = &p->locs[ids[k]];
	    int m;

	    if (l->kind == TP_KIND_TCL || l->type == TP_TCL_PSEUDO) {
		continue;
	    }
	    m = l->module >= 0 ? l->module : unknown;
	    leaf = m;
	    if (stamp[m] != s + 1) {
		stamp[m] = s + 1;
		total[m] += count;
	    }
	}
	if (leaf == noC) {
	    total[noC] += count;
	}
	self[leaf] += count;
    }
    a = all ? (double) all : 1.0;
    for (i = 0; i < nm + 2; i++) {
	if (total[i] > 0 && 100.0 * (double) total[i] / a >= o->thresholdPct) {
	    uint32_t j = (uint32_t) n++;

	    /* Insertion sort: a few dozen modules. */
	    while (j > 0 && (o->sort == TP_SORT_TOTAL
		    ? total[order[j - 1]] < total[i]
		    : self[order[j - 1]] < self[i])) {
		order[j] = order[j - 1];
		j--;
	    }
	    order[j] = (uint32_t) i;
	}
    }
    Tcl_DStringInit(&ds);
    Header(&ds, p, "modules", all);
    Tcl_DStringAppend(&ds, "     Self      %     Total      %  Module\n", -1);
    for (i = 0; i < n; i++) {
	int m = (int) order[i];
	const char *name = m == unknown ? "[unknown]" : m == noC
		? "[no C frame]" : p->modules.mods[m].shortName;
	const char *path = m < nm ? p->modules.mods[m].path : "";

	if (o->asValue) {
	    Tcl_Obj *d = Tcl_NewDictObj();

	    Tcl_DictObjPut(NULL, d, Tcl_NewStringObj("module", -1),
		    Tcl_NewStringObj(name, -1));
	    Tcl_DictObjPut(NULL, d, Tcl_NewStringObj("path", -1),
		    Tcl_NewStringObj(path, -1));
	    Tcl_DictObjPut(NULL, d, Tcl_NewStringObj("self", -1),
		    Tcl_NewWideIntObj((Tcl_WideInt) self[m]));
	    Tcl_DictObjPut(NULL, d, Tcl_NewStringObj("total", -1),
		    Tcl_NewWideIntObj((Tcl_WideInt) total[m]));
	    Tcl_DictObjPut(NULL, d, Tcl_NewStringObj("selfPct", -1),
		    Tcl_NewDoubleObj(100.0 * (double) self[m] / a));
	    Tcl_DictObjPut(NULL, d, Tcl_NewStringObj("totalPct", -1),
		    Tcl_NewDoubleObj(100.0 * (double) total[m] / a));
	    Tcl_ListObjAppendElement(NULL, list, d);
	    continue;
	}
	snprintf(buf, sizeof(buf), "%9llu %5.1f%% %9llu %5.1f%%  ",
		(unsigned long long) self[m], 100.0 * (double) self[m] / a,
		(unsigned long long) total[m], 100.0 * (double) total[m] / a);
	Tcl_DStringAppend(&ds, buf, -1);
	Tcl_DStringAppend(&ds, name, -1);
	if (path[0] != '\0' && strcmp(path, name) != 0) {
	    Tcl_DStringAppend(&ds, "  (", -1);
	    Tcl_DStringAppend(&ds, path, -1);
	    Tcl_DStringAppend(&ds, ")", -1);
	}
	Tcl_DStringAppend(&ds, "\n", 1);
    }
    free(self);
    free(total);
    free(stamp);
    free(order);
    if (o->asValue) {
	Tcl_DStringFree(&ds);
	Tcl_SetObjResult(interp, list);
    } else {
	Tcl_DecrRefCount(list);
	Tcl_DStringResult(interp, &ds);
    }
    return TCL_OK;
}

/*
 * ----------------------------------------------------------------------
 * The line listing (Knuth's "profile listing": counts to the left of the
 * source). Procs are found by parsing the file with Tcl's own parser
 * (Tcl_ParseCommand), descending into `namespace eval` bodies; nothing is
 * evaluated.
 * ----------------------------------------------------------------------
 */

typedef struct ProcDef {
    char *name;			/* Fully qualified. */
    int first, last;		/* Lines of the proc command. */
    int func;			/* Its function in the tree, or -1. */
} ProcDef;

typedef struct SourceFile {
    const char *text;		/* Whole file (owned by textObj). */
    Tcl_Size length;
    int *lineStart;		/* Byte offset of each line (1-based). */
    int nLines;
    ProcDef *procs;
    int nProcs, capProcs;
} SourceFile;

static int
LineOf(
    const SourceFile *sf,
    const char *at)
{
    int off = (int) (at - sf->text), lo = 1, hi = sf->nLines;

    while (lo < hi) {
	int mid = (lo + hi + 1) / 2;

	if (sf->lineStart[mid] <= off) {
	    lo = mid;
	} else {
	    hi = mid - 1;
	}
    }
    return lo;
}

/*
 * The text of a word if it is a simple (brace-quoted or bare) word, with
 * its length; NULL otherwise.
 */

static const char *
SimpleWord(
    const Tcl_Token *w,
    int *lenPtr)
{
    if (w->type != TCL_TOKEN_SIMPLE_WORD) {
	return NULL;
    }
    *lenPtr = w[1].size;
    return w[1].start;
}

static void
Qualify(
    Tcl_DString *out,
    const char *ns,
    const char *name,
    int len)
{
    Tcl_DStringSetLength(out, 0);
    if (len >= 2 && name[0] == ':' && name[1] == ':') {
	Tcl_DStringAppend(out, name, len);
	return;
    }
    Tcl_DStringAppend(out, ns, -1);
    if (strcmp(ns, "::") != 0) {
	Tcl_DStringAppend(out, "::", 2);
    }
    Tcl_DStringAppend(out, name, len);
}

static void
FindProcs(
    SourceFile *sf,
    const char *script,
    int length,
    const char *ns,
    int level)
{
    Tcl_Parse parse;
    const char *p = script, *end = script + length;
    Tcl_DString qual;

    if (level > 20) {
	return;
    }
    Tcl_DStringInit(&qual);
    while (p < end) {
	const Tcl_Token *w[4] = {NULL, NULL, NULL, NULL};
	const Tcl_Token *tok;
	const char *s0, *s1, *s2;
	int i, l0 = 0, l1 = 0, l2 = 0;

	if (Tcl_ParseCommand(NULL, p, (int) (end - p), 0, &parse) != TCL_OK) {
	    break;
	}
	tok = parse.tokenPtr;
	for (i = 0; i < parse.numWords && i < 4; i++) {
	    w[i] = tok;
	    tok += tok->numComponents + 1;
	}
	if (parse.numWords == 4 && (s0 = SimpleWord(w[0], &l0)) != NULL
		&& (s1 = SimpleWord(w[1], &l1)) != NULL) {
	    if ((l0 == 4 && strncmp(s0, "proc", 4) == 0)
		    || (l0 == 6 && strncmp(s0, "::proc", 6) == 0)) {
		ProcDef *d;

		if (sf->nProcs == sf->capProcs) {
		    sf->capProcs = sf->capProcs ? 2 * sf->capProcs : 32;
		    sf->procs = realloc(sf->procs,
			    sizeof(ProcDef) * (size_t) sf->capProcs);
		    if (sf->procs == NULL) {
			Tcl_Panic("tclprof: out of memory");
		    }
		}
		d = &sf->procs[sf->nProcs++];
		Qualify(&qual, ns, s1, l1);
		d->name = strdup(Tcl_DStringValue(&qual));
		d->first = LineOf(sf, parse.commandStart);
		d->last = LineOf(sf, w[3]->start + w[3]->size - 1);
		d->func = -1;
	    } else if (l0 == 9 && strncmp(s0, "namespace", 9) == 0
		    && l1 == 4 && strncmp(s1, "eval", 4) == 0
		    && (s2 = SimpleWord(w[2], &l2)) != NULL
		    && w[3]->type == TCL_TOKEN_SIMPLE_WORD) {
		char *child;

		Qualify(&qual, ns, s2, l2);
		child = strdup(Tcl_DStringValue(&qual));
		FindProcs(sf, w[3][1].start, w[3][1].size, child, level + 1);
		free(child);
	    }
	}
	p = parse.commandStart + parse.commandSize;
	Tcl_FreeParse(&parse);
    }
    Tcl_DStringFree(&qual);
}

/*
 * Reads one file; TCL_ERROR with {TCLPROF LINES IO} if it cannot.
 */

static int
ReadSource(
    Tcl_Interp *interp,
    Tcl_Obj *path,
    Tcl_Obj *textObj,
    SourceFile *sf)
{
    Tcl_Channel chan = Tcl_FSOpenFileChannel(NULL, path, "r", 0);
    int i, n = 2;

    if (chan == NULL) {
	TpSetError(interp, "LINES", "IO", "cannot read \"%s\": %s",
		Tcl_GetString(path), Tcl_PosixError(NULL));
	return TCL_ERROR;
    }
    Tcl_SetChannelOption(NULL, chan, "-encoding", "utf-8");
    if (Tcl_ReadChars(chan, textObj, -1, 0) < 0) {
	TpSetError(interp, "LINES", "IO", "cannot read \"%s\": %s",
		Tcl_GetString(path), Tcl_PosixError(NULL));
	Tcl_Close(NULL, chan);
	return TCL_ERROR;
    }
    Tcl_Close(NULL, chan);
    memset(sf, 0, sizeof(*sf));
    sf->text = Tcl_GetStringFromObj(textObj, &sf->length);
    for (i = 0; i < sf->length; i++) {
	n += sf->text[i] == '\n';
    }
    sf->lineStart = XAlloc(sizeof(int) * (size_t) (n + 1));
    sf->nLines = 1;
    sf->lineStart[1] = 0;
    for (i = 0; i < sf->length; i++) {
	if (sf->text[i] == '\n' && i + 1 < sf->length) {
	    sf->lineStart[++sf->nLines] = i + 1;
	}
    }
    FindProcs(sf, sf->text, sf->length, "::", 0);
    return TCL_OK;
}

static void
FreeSource(
    SourceFile *sf)
{
    int i;

    for (i = 0; i < sf->nProcs; i++) {
	free(sf->procs[i].name);
    }
    free(sf->procs);
    free(sf->lineStart);
}

static int
SameFile(
    const char *a,
    Tcl_Obj *normB)
{
    Tcl_Obj *o = Tcl_NewStringObj(a, -1);
    Tcl_Obj *na;
    int same;

    Tcl_IncrRefCount(o);
    na = Tcl_FSGetNormalizedPath(NULL, o);
    same = na != NULL && strcmp(Tcl_GetString(na), Tcl_GetString(normB)) == 0;
    Tcl_DecrRefCount(o);
    return same;
}

/*
 *----------------------------------------------------------------------
 *
 * ListFile --
 *
 *	The listing of one file into ds (or a dict appended to list).
 *
 * Results:
 *	TCL_OK, or TCL_ERROR if the file cannot be read.
 *
 * Side effects:
 *	Appends to ds or list.
 *
 *----------------------------------------------------------------------
 */

static int
ListFile(
    Tcl_Interp *interp,
    const TpProfile *p,
    const TpTree *t,
    const TpView *v,
    const TpReportOptions *o,
    const uint64_t *fself,
    const uint64_t *ftotal,
    Tcl_Obj *path,
    Tcl_DString *ds,
    Tcl_Obj *list)
{
    Tcl_Obj *norm = Tcl_FSGetNormalizedPath(NULL, path);
    Tcl_Obj *textObj = Tcl_NewObj(), *procList, *lineList, *unsampled, *uncalled;
    SourceFile sf;
    uint64_t *hits, *self, fileSamples = 0, all = v->samples;
    uint32_t *stamp, s, k, i;
    uint8_t *inFile, *show;
    Tcl_HashTable byName;
    Tcl_HashEntry *h;
    int j, isNew, nSampled = 0;
    double a = all ? (double) all : 1.0;
    char buf[160];

    Tcl_IncrRefCount(textObj);
    if (norm == NULL || ReadSource(interp, path, textObj, &sf) != TCL_OK) {
	if (norm == NULL) {
	    TpSetError(interp, "LINES", "IO", "cannot read \"%s\"",
		    Tcl_GetString(path));
	}
	Tcl_DecrRefCount(textObj);
	return TCL_ERROR;
    }

    /*
     * Which locations are lines of this file; then the inclusive (once
     * per sample) and self count of every line.
     */

    inFile = XAlloc(p->nLocs + 1);
    for (i = 0; i < p->nLocs; i++) {
	const TpLoc *l = &p->locs[i];

	inFile[i] = l->kind == TP_KIND_TCL && l->file != NULL && l->line > 0
		&& l->line <= sf.nLines && SameFile(l->file, norm);
    }
    hits = XAlloc(sizeof(uint64_t) * (size_t) (sf.nLines + 2));
    self = XAlloc(sizeof(uint64_t) * (size_t) (sf.nLines + 2));
    stamp = XAlloc(sizeof(uint32_t) * (size_t) (sf.nLines + 2));
    for (s = 0; s < p->nStacks; s++) {
	const uint32_t *ids = TpProfileStackIds(p, s);
	uint64_t count = p->stacks[s].count;
	int innermost = 0, counted = 0;

	if (v->len[s] == 0) {
	    continue;
	}
	for (k = 0; k < p->stacks[s].depth; k++) {
	    const TpLoc *l = &p->locs[ids[k]];

	    if (l->kind == TP_KIND_TCL) {
		innermost = inFile[ids[k]] ? l->line : 0;
	    }
	    if (inFile[ids[k]]) {
		counted = 1;
		if (stamp[l->line] != s + 1) {
		    stamp[l->line] = s + 1;
		    hits[l->line] += count;
		}
	    }
	}
	if (innermost > 0) {
	    self[innermost] += count;
	}
	if (counted) {
	    fileSamples += count;
	}
    }

    /*
     * Procs: their functions by name, their totals.
     */

    Tcl_InitHashTable(&byName, TCL_STRING_KEYS);
    for (i = 0; i < t->nFuncs; i++) {
	if (t->funcs[i].kind == TP_KIND_TCL) {
	    h = Tcl_CreateHashEntry(&byName, t->funcs[i].name, &isNew);
	    if (isNew) {
		Tcl_SetHashValue(h, (ClientData) (uintptr_t) i);
	    }
	}
    }
    show = XAlloc((size_t) sf.nLines + 2);
    procList = Tcl_NewListObj(0, NULL);
    unsampled = Tcl_NewListObj(0, NULL);
    uncalled = Tcl_NewListObj(0, NULL);
    for (j = 0; j < sf.nProcs; j++) {
	ProcDef *d = &sf.procs[j];
	uint64_t tot = 0, sf_self = 0, lineHits = 0;
	Tcl_WideInt calls = CallCount(p, NULL, d->name);
	int l;
	Tcl_Obj *pd;

	h = Tcl_FindHashEntry(&byName, d->name);
	if (h != NULL) {
	    d->func = (int) (uintptr_t) Tcl_GetHashValue(h);
	    tot = ftotal[d->func];
	    sf_self = fself[d->func];
	}
	for (l = d->first; l <= d->last; l++) {
	    lineHits += hits[l];
	}
	if (tot > 0 || lineHits > 0) {
	    nSampled++;
	    for (l = d->first; l <= d->last; l++) {
		show[l] = 1;
	    }
	    if (tot > hits[d->first]) {
		hits[d->first] = tot;	/* Header line: the proc's total. */
	    }
	} else {
	    Tcl_ListObjAppendElement(NULL, unsampled,
		    Tcl_NewStringObj(d->name, -1));
	    if (p->nCalls > 0 && calls < 0) {
		Tcl_ListObjAppendElement(NULL, uncalled,
			Tcl_NewStringObj(d->name, -1));
	    }
	}
	pd = Tcl_NewDictObj();
	Tcl_DictObjPut(NULL, pd, Tcl_NewStringObj("name", -1),
		Tcl_NewStringObj(d->name, -1));
	Tcl_DictObjPut(NULL, pd, Tcl_NewStringObj("first", -1),
		Tcl_NewIntObj(d->first));
	Tcl_DictObjPut(NULL, pd, Tcl_NewStringObj("last", -1),
		Tcl_NewIntObj(d->last));
	Tcl_DictObjPut(NULL, pd, Tcl_NewStringObj("total", -1),
		Tcl_NewWideIntObj((Tcl_WideInt) tot));
	Tcl_DictObjPut(NULL, pd, Tcl_NewStringObj("self", -1),
		Tcl_NewWideIntObj((Tcl_WideInt) sf_self));
	if (calls >= 0) {
	    Tcl_DictObjPut(NULL, pd, Tcl_NewStringObj("calls", -1),
		    Tcl_NewWideIntObj(calls));
	}
	Tcl_ListObjAppendElement(NULL, procList, pd);
	if (tot > fileSamples) {
	    fileSamples = tot;
	}
    }
    Tcl_DeleteHashTable(&byName);
    for (j = 1; j <= sf.nLines; j++) {
	if (o->all || hits[j] > 0) {
	    show[j] = 1;
	}
    }

    snprintf(buf, sizeof(buf), "== %%s: %llu samples (%.1f%%), %d of %d procs"
	    " sampled\n", (unsigned long long) fileSamples,
	    100.0 * (double) fileSamples / a, nSampled, sf.nProcs);
    if (ds != NULL) {
	Tcl_DStringAppend(ds, "== ", 3);
	Tcl_DStringAppend(ds, Tcl_GetString(norm), -1);
	Tcl_DStringAppend(ds, strstr(buf, ":"), -1);
	Tcl_DStringAppend(ds, "  Samples      %   Line  Source\n", -1);
	for (j = 1; j <= sf.nLines; j++) {
	    const char *ls = sf.text + sf.lineStart[j];
	    const char *le = j < sf.nLines ? sf.text + sf.lineStart[j + 1] - 1
		    : sf.text + sf.length;

	    if (!show[j]) {
		if (j > 1 && show[j - 1]) {
		    Tcl_DStringAppend(ds, "      ...\n", -1);
		}
		continue;
	    }
	    if (le > ls && le[-1] == '\r') {
		le--;
	    }
	    if (le > ls && *le == '\n' && j == sf.nLines) {
		/* Last line without a trailing newline. */
	    }
	    if (hits[j] > 0) {
		snprintf(buf, sizeof(buf), "%9llu %5.1f%% %6d  ",
			(unsigned long long) hits[j],
			100.0 * (double) hits[j] / a, j);
	    } else {
		snprintf(buf, sizeof(buf), "%16s %6d  ", "", j);
	    }
	    Tcl_DStringAppend(ds, buf, -1);
	    Tcl_DStringAppend(ds, ls, (int) (le - ls));
	    Tcl_DStringAppend(ds, "\n", 1);
	}
	if (sf.nProcs > 0) {
	    Tcl_Size nUn;

	    Tcl_ListObjLength(NULL, unsampled, &nUn);
	    Tcl_DStringAppend(ds, "Procs defined but never sampled:", -1);
	    if (nUn == 0) {
		Tcl_DStringAppend(ds, " none", -1);
	    }
	    for (j = 0; j < nUn; j++) {
		Tcl_Obj *e;

		Tcl_ListObjIndex(NULL, unsampled, j, &e);
		Tcl_DStringAppend(ds, " ", 1);
		Tcl_DStringAppend(ds, Tcl_GetString(e), -1);
	    }
	    Tcl_DStringAppend(ds, "\n", 1);
	    if (p->nCalls > 0) {
		Tcl_ListObjLength(NULL, uncalled, &nUn);
		Tcl_DStringAppend(ds, "Procs defined but never called (exact):", -1);
		if (nUn == 0) {
		    Tcl_DStringAppend(ds, " none", -1);
		}
		for (j = 0; j < nUn; j++) {
		    Tcl_Obj *e;

		    Tcl_ListObjIndex(NULL, uncalled, j, &e);
		    Tcl_DStringAppend(ds, " ", 1);
		    Tcl_DStringAppend(ds, Tcl_GetString(e), -1);
		}
		Tcl_DStringAppend(ds, "\n", 1);
	    }
	}
	Tcl_DecrRefCount(procList);
	Tcl_DecrRefCount(unsampled);
	Tcl_DecrRefCount(uncalled);
    } else {
	Tcl_Obj *d = Tcl_NewDictObj();

	lineList = Tcl_NewListObj(0, NULL);
	for (j = 1; j <= sf.nLines; j++) {
	    const char *ls = sf.text + sf.lineStart[j];
	    const char *le = j < sf.nLines ? sf.text + sf.lineStart[j + 1] - 1
		    : sf.text + sf.length;
	    Tcl_Obj *ld;

	    if (!show[j]) {
		continue;
	    }
	    ld = Tcl_NewDictObj();
	    Tcl_DictObjPut(NULL, ld, Tcl_NewStringObj("line", -1),
		    Tcl_NewIntObj(j));
	    Tcl_DictObjPut(NULL, ld, Tcl_NewStringObj("samples", -1),
		    Tcl_NewWideIntObj((Tcl_WideInt) hits[j]));
	    Tcl_DictObjPut(NULL, ld, Tcl_NewStringObj("self", -1),
		    Tcl_NewWideIntObj((Tcl_WideInt) self[j]));
	    Tcl_DictObjPut(NULL, ld, Tcl_NewStringObj("source", -1),
		    Tcl_NewStringObj(ls, (int) (le - ls)));
	    Tcl_ListObjAppendElement(NULL, lineList, ld);
	}
	Tcl_DictObjPut(NULL, d, Tcl_NewStringObj("file", -1), norm);
	Tcl_DictObjPut(NULL, d, Tcl_NewStringObj("samples", -1),
		Tcl_NewWideIntObj((Tcl_WideInt) fileSamples));
	Tcl_DictObjPut(NULL, d, Tcl_NewStringObj("procs", -1), procList);
	Tcl_DictObjPut(NULL, d, Tcl_NewStringObj("lines", -1), lineList);
	Tcl_DictObjPut(NULL, d, Tcl_NewStringObj("unsampled", -1), unsampled);
	if (p->nCalls > 0) {
	    Tcl_DictObjPut(NULL, d, Tcl_NewStringObj("uncalled", -1), uncalled);
	} else {
	    Tcl_DecrRefCount(uncalled);
	}
	Tcl_ListObjAppendElement(NULL, list, d);
    }
    free(inFile);
    free(hits);
    free(self);
    free(stamp);
    free(show);
    FreeSource(&sf);
    Tcl_DecrRefCount(textObj);
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * TpReportLines --
 *
 *	The line listing of o->source, or of every file named by a sampled
 *	Tcl frame. Each listed line shows the samples in which it was
 *	executing (once per sample); the line of a `proc` command shows the
 *	proc's total if larger (in trace mode, which knows no lines, that
 *	is all there is). Only the lines of sampled procs are listed unless
 *	o->all; then the procs defined in the file but never sampled, and
 *	in trace mode the ones never called (exact).
 *
 * Results:
 *	TCL_OK, or TCL_ERROR if a file cannot be read; text, or with
 *	asValue a list of dicts {file samples procs lines unsampled
 *	?uncalled?}.
 *
 * Side effects:
 *	Reads the files; sets the interp result.
 *
 *----------------------------------------------------------------------
 */

int
TpReportLines(
    Tcl_Interp *interp,
    TpProfile *p,
    TpTree *t,
    TpView *v,
    const TpReportOptions *o)
{
    uint64_t *self = XAlloc(sizeof(uint64_t) * (t->nFuncs + 1));
    uint64_t *total = XAlloc(sizeof(uint64_t) * (t->nFuncs + 1));
    Tcl_Obj *files = Tcl_NewListObj(0, NULL), *list = Tcl_NewListObj(0, NULL);
    Tcl_HashTable seen;
    Tcl_DString ds;
    uint32_t i;
    Tcl_Size n;
    int j, code = TCL_OK, isNew;

    Tcl_IncrRefCount(files);
    Tcl_IncrRefCount(list);
    FuncCounts(t, p, v, self, total);
    Tcl_InitHashTable(&seen, TCL_STRING_KEYS);
    if (o->source != NULL) {
	Tcl_ListObjAppendElement(NULL, files, Tcl_NewStringObj(o->source, -1));
    } else {
	for (i = 0; i < t->nFuncs; i++) {
	    const TpFunc *f = &t->funcs[i];

	    if (f->kind == TP_KIND_TCL && f->file != NULL && total[i] > 0) {
		Tcl_CreateHashEntry(&seen, f->file, &isNew);
		if (isNew) {
		    Tcl_ListObjAppendElement(NULL, files,
			    Tcl_NewStringObj(f->file, -1));
		}
	    }
	}
    }
    Tcl_DeleteHashTable(&seen);
    Tcl_DStringInit(&ds);
    Header(&ds, p, "lines", v->samples);
    Tcl_ListObjLength(NULL, files, &n);
    if (n == 0) {
	Tcl_DStringAppend(&ds, "no sampled frame names a source file: give"
		" -source file\n", -1);
    }
    for (j = 0; j < n && code == TCL_OK; j++) {
	Tcl_Obj *path;

	Tcl_ListObjIndex(NULL, files, j, &path);
	code = ListFile(interp, p, t, v, o, self, total, path,
		o->asValue ? NULL : &ds, list);
    }
    if (code == TCL_OK) {
	if (o->asValue) {
	    Tcl_SetObjResult(interp, list);
	} else {
	    Tcl_DStringResult(interp, &ds);
	}
    }
    Tcl_DStringFree(&ds);
    Tcl_DecrRefCount(list);
    Tcl_DecrRefCount(files);
    free(self);
    free(total);
    return code;
}
