/*
 * exhtml.c --
 *
 *	The interactive flame graph: one self-contained HTML file, the page
 *	library/flamegraph.html (embedded at build time as flamegraph.h: a
 *	C string, so the package needs no data files at run time) with the
 *	profile's data put in place of its marker as a JSON object:
 *
 *	  meta     program, date, durationMs, samples, mode, clock,
 *	           intervalUs, dropped, truncated, version
 *	  funcs    [name, kind (0 C, 1 Tcl, 2 libtcl internal), file,
 *	           line, module] per function used
 *	  threads  [{tid, name (when known), stacks: [[count, func, func,
 *	           ...] root first]}]
 *
 *	The page builds the tree itself; the stacks are those of the view,
 *	so the picture shows what `profiler report` shows under the same
 *	options.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char flamegraphHtml[] =
#include "flamegraph.h"
;

#define DATA_MARKER "/*@TCLPROF_DATA@*/"

/*
 *----------------------------------------------------------------------
 *
 * TpExHtml --
 *
 *	Writes the flame graph page.
 *
 * Results:
 *	TCL_OK, or TCL_ERROR if the embedded page lacks its marker
 *	({TCLPROF EXPORT TEMPLATE}: a build problem).
 *
 * Side effects:
 *	Appends to out.
 *
 *----------------------------------------------------------------------
 */

int
TpExHtml(
    Tcl_Interp *interp,
    const TpExportCtx *x,
    Tcl_DString *out)
{
    const TpProfile *p = x->p;
    const TpTree *t = x->t;
    const char *mark = strstr(flamegraphHtml, DATA_MARKER);
    int32_t *idOf;
    uint32_t *tids = NULL, nTids = 0, i, k, th, nUsed = 0;
    uint32_t *order;
    char buf[256], date[64];
    time_t sec = (time_t) (p->startEpochUs / 1000000u);
    struct tm tm;

    if (mark == NULL) {
	TpSetError(interp, "EXPORT", "TEMPLATE", "the embedded flame graph "
		"page has no data marker");
	return TCL_ERROR;
    }
    idOf = malloc(sizeof(int32_t) * (t->nFuncs + 1));
    order = malloc(sizeof(uint32_t) * (t->nFuncs + 1));
    tids = malloc(sizeof(uint32_t) * (p->nStacks + 1));
    if (idOf == NULL || order == NULL || tids == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    for (i = 0; i < t->nFuncs; i++) {
	idOf[i] = -1;
    }
    for (i = 0; i < p->nStacks; i++) {
	const uint32_t *seq;
	uint32_t n = TpExportDepth(x, i, &seq);

	if (n == 0) {
	    continue;
	}
	for (k = 0; k < n; k++) {
	    if (idOf[seq[k]] < 0) {
		idOf[seq[k]] = (int32_t) nUsed;
		order[nUsed++] = seq[k];
	    }
	}
	for (k = 0; k < nTids && tids[k] != p->stacks[i].tid; k++) {
	}
	if (k == nTids) {
	    tids[nTids++] = p->stacks[i].tid;
	}
    }

    Tcl_DStringAppend(out, flamegraphHtml, (int) (mark - flamegraphHtml));
    Tcl_DStringAppend(out, "const TCLPROF_DATA = {\"meta\":{\"program\":", -1);
    TpJsonString(out, p->program ? p->program : "");
    date[0] = '\0';
    if (p->startEpochUs != 0 && gmtime_r(&sec, &tm) != NULL) {
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S UTC", &tm);
    }
    Tcl_DStringAppend(out, ",\"date\":", -1);
    TpJsonString(out, date);
    snprintf(buf, sizeof(buf), ",\"durationMs\":%.1f,\"samples\":%llu,"
	    "\"mode\":\"%s\",\"clock\":\"%s\",\"intervalUs\":%d,\"dropped\":%llu,"
	    "\"truncated\":%llu,\"version\":\"" TCLPROF_VERSION "\"},\n\"funcs\":[",
	    (double) (p->elapsedNs ? p->elapsedNs : p->lastNs - p->firstNs) / 1e6,
	    (unsigned long long) x->v->samples, TpModeName(p->mode),
	    TpClockName(p->clock), p->intervalUs,
	    (unsigned long long) p->dropped, (unsigned long long) p->truncated);
    Tcl_DStringAppend(out, buf, -1);
    for (i = 0; i < nUsed; i++) {
	const TpFunc *f = &t->funcs[order[i]];

	Tcl_DStringAppend(out, i ? ",\n[" : "\n[", -1);
	TpJsonString(out, f->name);
	snprintf(buf, sizeof(buf), ",%d,", f->kind == TP_KIND_C ? 0
		: f->kind == TP_KIND_TCL ? 1 : 2);
	Tcl_DStringAppend(out, buf, -1);
	TpJsonString(out, f->file ? f->file : "");
	snprintf(buf, sizeof(buf), ",%d,", f->line);
	Tcl_DStringAppend(out, buf, -1);
	TpJsonString(out, f->module >= 0 ? p->modules.mods[f->module].shortName
		: "");
	Tcl_DStringAppend(out, "]", 1);
    }
    Tcl_DStringAppend(out, "],\n\"threads\":[", -1);
    for (th = 0; th < nTids; th++) {
	int first = 1;
	const char *tname = TpProfileThreadName(p, tids[th]);

	snprintf(buf, sizeof(buf), "%s{\"tid\":%u,", th ? ",\n" : "",
		tids[th]);
	Tcl_DStringAppend(out, buf, -1);
	if (tname != NULL) {
	    Tcl_DStringAppend(out, "\"name\":", -1);
	    TpJsonString(out, tname);
	    Tcl_DStringAppend(out, ",", 1);
	}
	Tcl_DStringAppend(out, "\"stacks\":[", -1);
	for (i = 0; i < p->nStacks; i++) {
	    const uint32_t *seq;
	    uint32_t n;

	    if (p->stacks[i].tid != tids[th]
		    || (n = TpExportDepth(x, i, &seq)) == 0) {
		continue;
	    }
	    snprintf(buf, sizeof(buf), "%s[%llu", first ? "\n" : ",\n",
		    (unsigned long long) p->stacks[i].count);
	    first = 0;
	    Tcl_DStringAppend(out, buf, -1);
	    for (k = 0; k < n; k++) {
		snprintf(buf, sizeof(buf), ",%d", idOf[seq[k]]);
		Tcl_DStringAppend(out, buf, -1);
	    }
	    Tcl_DStringAppend(out, "]", 1);
	}
	Tcl_DStringAppend(out, "]}", 2);
    }
    Tcl_DStringAppend(out, "]};", -1);
    Tcl_DStringAppend(out, mark + strlen(DATA_MARKER), -1);
    free(idOf);
    free(order);
    free(tids);
    return TCL_OK;
}
