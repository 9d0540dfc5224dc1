/*
 * expprof.c --
 *
 *	pprof's profile.proto (github.com/google/pprof/proto/profile.proto),
 *	encoded by hand (varints and length-delimited fields; no protobuf
 *	library) and gzip-compressed with Tcl's zlib, as `go tool pprof`
 *	reads it. The rules pprof checks:
 *
 *	  - string_table[0] is "";
 *	  - every id (location, function, mapping) is nonzero;
 *	  - Sample.location_id lists the leaf first.
 *
 *	Each function of the view is one Function and one Location (id =
 *	function index + 1): Tcl frames carry their file and line, C frames
 *	their module (a Mapping, has_functions set so pprof does not try to
 *	symbolize) and the function's address. Samples have two values,
 *	samples/count and cpu|wall/nanoseconds, and a "thread" label.
 *	Stacks that the view shows alike are merged into one Sample.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include <stdlib.h>
#include <string.h>

typedef struct Strings {
    Tcl_HashTable index;	/* String -> index in the table. */
    Tcl_DString table;		/* Encoded string_table fields. */
    uint64_t n;
} Strings;

typedef struct Sample {		/* One pprof sample. */
    uint32_t tid;
    uint32_t n;			/* Functions in seq. */
    const uint32_t *seq;	/* The view's sequence, root first. */
    uint64_t count;
} Sample;

static void
Varint(
    Tcl_DString *b,
    uint64_t v)
{
    char buf[10];
    int n = 0;

    do {
	buf[n++] = (char) ((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
	v >>= 7;
    } while (v != 0);
    Tcl_DStringAppend(b, buf, n);
}

static void
Key(
    Tcl_DString *b,
    int field,
    int wire)
{
    Varint(b, ((uint64_t) field << 3) | (uint64_t) wire);
}

static void
Uint(
    Tcl_DString *b,
    int field,
    uint64_t v)
{
    Key(b, field, 0);
    Varint(b, v);
}

static void
Bytes(
    Tcl_DString *b,
    int field,
    const char *bytes,
    int len)
{
    Key(b, field, 2);
    Varint(b, (uint64_t) len);
    Tcl_DStringAppend(b, bytes, len);
}

static void
Message(
    Tcl_DString *b,
    int field,
    Tcl_DString *m)
{
    Bytes(b, field, Tcl_DStringValue(m), Tcl_DStringLength(m));
    Tcl_DStringSetLength(m, 0);
}

static uint64_t
Str(
    Strings *s,
    const char *str)
{
    int isNew;
    Tcl_HashEntry *h = Tcl_CreateHashEntry(&s->index, str, &isNew);

    if (isNew) {
	Tcl_SetHashValue(h, (ClientData) (uintptr_t) s->n);
	Bytes(&s->table, 6, str, (int) strlen(str));
	s->n++;
    }
    return (uint64_t) (uintptr_t) Tcl_GetHashValue(h);
}

static void
ValueType(
    Tcl_DString *b,
    int field,
    Strings *s,
    const char *type,
    const char *unit)
{
    Tcl_DString m;

    Tcl_DStringInit(&m);
    Uint(&m, 1, Str(s, type));
    Uint(&m, 2, Str(s, unit));
    Message(b, field, &m);
    Tcl_DStringFree(&m);
}

/*
 *----------------------------------------------------------------------
 *
 * TpExPprof --
 *
 *	Writes the view as a gzip-compressed profile.proto.
 *
 * Results:
 *	TCL_OK, or TCL_ERROR if compression fails ({TCLPROF EXPORT ZLIB}).
 *
 * Side effects:
 *	Appends to out; uses the interp result as scratch.
 *
 *----------------------------------------------------------------------
 */

int
TpExPprof(
    Tcl_Interp *interp,
    const TpExportCtx *x,
    Tcl_DString *out)
{
    const TpProfile *p = x->p;
    const TpTree *t = x->t;
    const char *timeType = p->clock == TP_CLOCK_CPU ? "cpu" : "wall";
    uint64_t intervalNs = (uint64_t) p->intervalUs * 1000u;
    Strings s;
    Tcl_DString prof, m, sub;
    Sample *samples;		/* Distinct (thread, sequence), in the
				 * order of their first stack. */
    uint32_t *slots, nSamples = 0, j;
    size_t nSlots = 64;
    uint8_t *usedFunc = calloc(t->nFuncs + 1, 1);
    uint8_t *usedMod = calloc((size_t) p->modules.nMods + 1, 1);
    uint32_t i, k;
    Tcl_Size len;
    Tcl_Obj *raw, *gz;
    unsigned char *bytes;
    char buf[200];

    while (nSlots < 2 * (size_t) p->nStacks) {
	nSlots *= 2;
    }
    samples = malloc(sizeof(Sample) * (p->nStacks + 1));
    slots = calloc(nSlots, sizeof(uint32_t));
    if (usedFunc == NULL || usedMod == NULL || samples == NULL
	    || slots == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    Tcl_InitHashTable(&s.index, TCL_STRING_KEYS);
    Tcl_DStringInit(&s.table);
    s.n = 0;
    Str(&s, "");
    Tcl_DStringInit(&prof);
    Tcl_DStringInit(&m);
    Tcl_DStringInit(&sub);

    ValueType(&prof, 1, &s, "samples", "count");
    ValueType(&prof, 1, &s, timeType, "nanoseconds");

    /*
     * Samples, merged by (thread, sequence): stacks that differ only in
     * their offsets within functions, or below -maxdepth, are one sample.
     * The sequences are compared as numbers (formatting each frame into
     * a string key took most of a deep recursion's export).
     */

    for (i = 0; i < p->nStacks; i++) {
	const uint32_t *seq;
	uint32_t n = TpExportDepth(x, i, &seq), tid = p->stacks[i].tid;
	uint32_t hash = 2166136261u ^ tid;
	size_t slot;

	if (n == 0) {
	    continue;
	}
	for (k = 0; k < n; k++) {
	    hash = (hash ^ seq[k]) * 16777619u;
	    usedFunc[seq[k]] = 1;
	}
	for (slot = (hash ^ (hash >> 15)) & (nSlots - 1); slots[slot] != 0;
		slot = (slot + 1) & (nSlots - 1)) {
	    const Sample *o = &samples[slots[slot] - 1];

	    if (o->tid == tid && o->n == n && (o->seq == seq
		    || memcmp(o->seq, seq, sizeof(uint32_t) * n) == 0)) {
		break;
	    }
	}
	if (slots[slot] == 0) {
	    samples[nSamples].tid = tid;
	    samples[nSamples].n = n;
	    samples[nSamples].seq = seq;
	    samples[nSamples].count = 0;
	    slots[slot] = ++nSamples;
	}
	samples[slots[slot] - 1].count += p->stacks[i].count;
    }
    free(slots);
    for (j = 0; j < nSamples; j++) {
	const Sample *sm = &samples[j];
	const char *tname;
	Tcl_DString lab;

	for (k = sm->n; k > 0; k--) {		/* Leaf first. */
	    Varint(&sub, (uint64_t) sm->seq[k - 1] + 1);
	}
	Message(&m, 1, &sub);			/* location_id, packed */
	Varint(&sub, sm->count);
	Varint(&sub, sm->count * intervalNs);
	Message(&m, 2, &sub);			/* value, packed */
	Tcl_DStringInit(&lab);
	Uint(&lab, 1, Str(&s, "thread"));
	Uint(&lab, 3, sm->tid);
	Message(&m, 3, &lab);			/* label */
	tname = TpProfileThreadName(p, sm->tid);
	if (tname != NULL) {
	    Uint(&lab, 1, Str(&s, "thread_name"));
	    Uint(&lab, 2, Str(&s, tname));
	    Message(&m, 3, &lab);		/* label: key, str */
	}
	Tcl_DStringFree(&lab);
	Message(&prof, 2, &m);
    }
    free(samples);

    /*
     * Locations and functions: one of each per function used.
     */

    for (i = 0; i < t->nFuncs; i++) {
	const TpFunc *f = &t->funcs[i];
	const char *file = f->file;

	if (!usedFunc[i]) {
	    continue;
	}
	Uint(&m, 1, i + 1);
	if (f->kind != TP_KIND_TCL && f->module >= 0) {
	    Uint(&m, 2, (uint64_t) f->module + 1);
	    usedMod[f->module] = 1;
	    if (f->addr != 0) {
		Uint(&m, 3, f->addr);
	    }
	}
	Uint(&sub, 1, i + 1);
	if (f->line > 0) {
	    Uint(&sub, 2, (uint64_t) f->line);
	}
	Message(&m, 4, &sub);
	Message(&prof, 4, &m);

	if (file == NULL && f->module >= 0) {
	    file = p->modules.mods[f->module].path[0]
		    ? p->modules.mods[f->module].path
		    : p->modules.mods[f->module].shortName;
	}
	Uint(&m, 1, i + 1);
	Uint(&m, 2, Str(&s, f->name));
	Uint(&m, 3, Str(&s, f->name));
	if (file != NULL) {
	    Uint(&m, 4, Str(&s, file));
	}
	if (f->line > 0) {
	    Uint(&m, 5, (uint64_t) f->line);
	}
	Message(&prof, 5, &m);
    }
    for (i = 0; i < (uint32_t) p->modules.nMods; i++) {
	const TpModule *mod = &p->modules.mods[i];

	if (!usedMod[i]) {
	    continue;
	}
	Uint(&m, 1, i + 1);
	Uint(&m, 2, mod->lo);
	Uint(&m, 3, mod->hi > mod->lo ? mod->hi : mod->lo + 1);
	Uint(&m, 4, 0);
	Uint(&m, 5, Str(&s, mod->path[0] ? mod->path : mod->shortName));
	Uint(&m, 7, 1);				/* has_functions */
	Uint(&m, 8, 1);				/* has_filenames */
	Message(&prof, 3, &m);
    }

    Uint(&prof, 9, p->startEpochUs * 1000u);
    Uint(&prof, 10, p->elapsedNs ? p->elapsedNs : p->lastNs - p->firstNs);
    ValueType(&prof, 11, &s, timeType, "nanoseconds");
    Uint(&prof, 12, intervalNs);
    snprintf(buf, sizeof(buf), "tclprof %s, mode %s, clock %s, interval %d us,"
	    " %llu dropped", TCLPROF_VERSION, TpModeName(p->mode),
	    TpClockName(p->clock), p->intervalUs,
	    (unsigned long long) p->dropped);
    Uint(&prof, 13, Str(&s, buf));
    Uint(&prof, 14, Str(&s, timeType));	/* default_sample_type */
    Tcl_DStringAppend(&prof, Tcl_DStringValue(&s.table),
	    Tcl_DStringLength(&s.table));

    Tcl_DeleteHashTable(&s.index);
    Tcl_DStringFree(&s.table);
    Tcl_DStringFree(&m);
    Tcl_DStringFree(&sub);
    free(usedFunc);
    free(usedMod);

    raw = Tcl_NewByteArrayObj((unsigned char *) Tcl_DStringValue(&prof),
	    Tcl_DStringLength(&prof));
    Tcl_DStringFree(&prof);
    Tcl_IncrRefCount(raw);
    if (Tcl_ZlibDeflate(interp, TCL_ZLIB_FORMAT_GZIP, raw, 6, NULL) != TCL_OK) {
	Tcl_DecrRefCount(raw);
	Tcl_SetErrorCode(interp, "TCLPROF", "EXPORT", "ZLIB", NULL);
	return TCL_ERROR;
    }
    Tcl_DecrRefCount(raw);
    gz = Tcl_GetObjResult(interp);
    bytes = Tcl_GetByteArrayFromObj(gz, &len);
    Tcl_DStringAppend(out, (const char *) bytes, len);
    Tcl_ResetResult(interp);
    return TCL_OK;
}
