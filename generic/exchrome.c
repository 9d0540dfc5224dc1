/*
 * exchrome.c --
 *
 *	Chrome's trace event format (JSON object form), as Perfetto and
 *	chrome://tracing load it. Consecutive samples of a thread become
 *	duration events: when the stack changes between two samples, the
 *	frames that left are closed ("E", innermost first) and the frames
 *	that came are opened ("B", outermost first) at the later sample's
 *	time; at the end, and across gaps longer than four intervals (the
 *	profiler was stopped), everything open is closed one interval after
 *	the last sample. So B and E always nest properly per thread.
 *	Times are microseconds since the first sample.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include <stdlib.h>
#include <string.h>

static void
Event(
    Tcl_DString *out,
    const TpExportCtx *x,
    uint32_t func,
    char ph,
    uint64_t timeNs,
    uint32_t tid)
{
    const TpFunc *f = &x->t->funcs[func];
    char buf[128];

    Tcl_DStringAppend(out, ",\n{\"name\":", -1);
    TpJsonString(out, f->name);
    snprintf(buf, sizeof(buf), ",\"cat\":\"%s\",\"ph\":\"%c\",\"ts\":%llu.%03u,"
	    "\"pid\":1,\"tid\":%u", TpKindName(f->kind), ph,
	    (unsigned long long) (timeNs / 1000), (unsigned) (timeNs % 1000),
	    tid);
    Tcl_DStringAppend(out, buf, -1);
    if (ph == 'B' && (f->file != NULL || f->module >= 0)) {
	Tcl_DStringAppend(out, ",\"args\":{\"file\":", -1);
	TpJsonString(out, f->file != NULL ? f->file
		: x->p->modules.mods[f->module].shortName);
	if (f->line > 0) {
	    snprintf(buf, sizeof(buf), ",\"line\":%d", f->line);
	    Tcl_DStringAppend(out, buf, -1);
	}
	Tcl_DStringAppend(out, "}", 1);
    }
    Tcl_DStringAppend(out, "}", 1);
}

/*
 *----------------------------------------------------------------------
 *
 * TpExChrome --
 *
 *	Writes the view as Chrome trace events.
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
TpExChrome(
    Tcl_Interp *interp,
    const TpExportCtx *x,
    Tcl_DString *out)
{
    uint64_t interval = (uint64_t) x->p->intervalUs * 1000u;
    uint32_t *tids, nTids, th, *cur;
    size_t n, e;
    TpTimeEntry *tl = TpExportTimeline(x, &n, &tids, &nTids);
    char buf[200];

    (void) interp;
    cur = malloc(sizeof(uint32_t) * (x->v->maxLen + 1));
    if (cur == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    Tcl_DStringAppend(out, "{\"displayTimeUnit\":\"ms\",\n\"otherData\":"
	    "{\"exporter\":\"tclprof " TCLPROF_VERSION "\",\"mode\":\"", -1);
    Tcl_DStringAppend(out, TpModeName(x->p->mode), -1);
    snprintf(buf, sizeof(buf), "\",\"intervalUs\":%d},\n\"traceEvents\":[\n"
	    "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,"
	    "\"args\":{\"name\":", x->p->intervalUs);
    Tcl_DStringAppend(out, buf, -1);
    TpJsonString(out, x->p->program ? x->p->program : "tclprof");
    Tcl_DStringAppend(out, "}}", -1);
    for (th = 0; th < nTids; th++) {
	uint32_t depth = 0, k;
	uint64_t last = 0;
	const char *tname = TpProfileThreadName(x->p, tids[th]);

	snprintf(buf, sizeof(buf), ",\n{\"name\":\"thread_name\",\"ph\":\"M\","
		"\"pid\":1,\"tid\":%u,\"args\":{\"name\":", tids[th]);
	Tcl_DStringAppend(out, buf, -1);
	if (tname != NULL) {
	    snprintf(buf, sizeof(buf), "thread %s", tname);
	} else {
	    snprintf(buf, sizeof(buf), "thread %u", tids[th]);
	}
	TpJsonString(out, buf);
	Tcl_DStringAppend(out, "}}", 2);
	for (e = 0; e < n; e++) {
	    const uint32_t *seq;
	    uint32_t len, common = 0;
	    uint64_t at = tl[e].timeNs;

	    if (tl[e].tid != tids[th]) {
		continue;
	    }
	    len = TpExportDepth(x, tl[e].stack, &seq);
	    if (depth > 0 && at > last + 4 * interval) {
		while (depth > 0) {
		    depth--;
		    Event(out, x, cur[depth], 'E', last + interval, tids[th]);
		}
	    }
	    while (common < depth && common < len && cur[common] == seq[common]) {
		common++;
	    }
	    while (depth > common) {
		depth--;
		Event(out, x, cur[depth], 'E', at, tids[th]);
	    }
	    for (k = common; k < len; k++) {
		cur[k] = seq[k];
		Event(out, x, seq[k], 'B', at, tids[th]);
	    }
	    depth = len;
	    last = at + (tl[e].weight - 1) * interval;
	}
	while (depth > 0) {
	    depth--;
	    Event(out, x, cur[depth], 'E', last + interval, tids[th]);
	}
    }
    Tcl_DStringAppend(out, "\n]}\n", -1);
    free(cur);
    free(tl);
    free(tids);
    return TCL_OK;
}
