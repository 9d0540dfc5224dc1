/*
 * exspeedscope.c --
 *
 *	speedscope's own JSON format (https://www.speedscope.app/
 *	file-format-schema.json): shared frames {name, file?, line?}, and
 *	one "sampled" profile per thread whose samples (frame indices, root
 *	first) are in time order, each weighing the sampling interval in
 *	microseconds. samples and weights always have the same length.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include <stdlib.h>
#include <string.h>

/*
 *----------------------------------------------------------------------
 *
 * TpExSpeedscope --
 *
 *	Writes the view as a speedscope file.
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
TpExSpeedscope(
    Tcl_Interp *interp,
    const TpExportCtx *x,
    Tcl_DString *out)
{
    const TpTree *t = x->t;
    int32_t *frameOf = malloc(sizeof(int32_t) * (t->nFuncs + 1));
    uint32_t *order = malloc(sizeof(uint32_t) * (t->nFuncs + 1));
    uint32_t nFrames = 0, i, k, *tids, nTids, th;
    size_t n, e;
    TpTimeEntry *tl;
    char buf[96];

    (void) interp;
    if (frameOf == NULL || order == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    for (i = 0; i < t->nFuncs; i++) {
	frameOf[i] = -1;
    }
    tl = TpExportTimeline(x, &n, &tids, &nTids);
    for (e = 0; e < n; e++) {
	const uint32_t *seq;
	uint32_t len = TpExportDepth(x, tl[e].stack, &seq);

	for (k = 0; k < len; k++) {
	    if (frameOf[seq[k]] < 0) {
		frameOf[seq[k]] = (int32_t) nFrames;
		order[nFrames++] = seq[k];
	    }
	}
    }

    Tcl_DStringAppend(out, "{\"$schema\":\"https://www.speedscope.app/"
	    "file-format-schema.json\",\n\"exporter\":\"tclprof "
	    TCLPROF_VERSION "\",\n\"name\":", -1);
    TpJsonString(out, x->p->program ? x->p->program : "tclprof profile");
    Tcl_DStringAppend(out, ",\n\"activeProfileIndex\":0,\n"
	    "\"shared\":{\"frames\":[", -1);
    for (i = 0; i < nFrames; i++) {
	const TpFunc *f = &t->funcs[order[i]];

	Tcl_DStringAppend(out, i ? ",\n{\"name\":" : "\n{\"name\":", -1);
	TpJsonString(out, f->name);
	if (f->file != NULL) {
	    Tcl_DStringAppend(out, ",\"file\":", -1);
	    TpJsonString(out, f->file);
	} else if (f->module >= 0) {
	    Tcl_DStringAppend(out, ",\"file\":", -1);
	    TpJsonString(out, x->p->modules.mods[f->module].path[0]
		    ? x->p->modules.mods[f->module].path
		    : x->p->modules.mods[f->module].shortName);
	}
	if (f->line > 0) {
	    snprintf(buf, sizeof(buf), ",\"line\":%d", f->line);
	    Tcl_DStringAppend(out, buf, -1);
	}
	Tcl_DStringAppend(out, "}", 1);
    }
    Tcl_DStringAppend(out, "]},\n\"profiles\":[", -1);
    for (th = 0; th < nTids; th++) {
	uint64_t sum = 0;
	int first = 1;
	const char *tname = TpProfileThreadName(x->p, tids[th]);

	Tcl_DStringAppend(out, th ? ",\n" : "\n", -1);
	Tcl_DStringAppend(out, "{\"type\":\"sampled\",\"name\":", -1);
	if (tname != NULL) {
	    snprintf(buf, sizeof(buf), "thread %s", tname);
	} else {
	    snprintf(buf, sizeof(buf), "thread %u", tids[th]);
	}
	TpJsonString(out, buf);
	Tcl_DStringAppend(out, ",\"unit\":\"microseconds\",\"startValue\":0,"
		"\n\"samples\":[", -1);
	for (e = 0; e < n; e++) {
	    const uint32_t *seq;
	    uint32_t len;

	    if (tl[e].tid != tids[th]) {
		continue;
	    }
	    len = TpExportDepth(x, tl[e].stack, &seq);
	    Tcl_DStringAppend(out, first ? "\n[" : ",\n[", -1);
	    first = 0;
	    for (k = 0; k < len; k++) {
		snprintf(buf, sizeof(buf), k ? ",%d" : "%d", frameOf[seq[k]]);
		Tcl_DStringAppend(out, buf, -1);
	    }
	    Tcl_DStringAppend(out, "]", 1);
	}
	Tcl_DStringAppend(out, "],\n\"weights\":[", -1);
	first = 1;
	for (e = 0; e < n; e++) {
	    uint64_t w;

	    if (tl[e].tid != tids[th]) {
		continue;
	    }
	    w = tl[e].weight * (uint64_t) x->p->intervalUs;
	    sum += w;
	    snprintf(buf, sizeof(buf), first ? "%llu" : ",%llu",
		    (unsigned long long) w);
	    first = 0;
	    Tcl_DStringAppend(out, buf, -1);
	}
	snprintf(buf, sizeof(buf), "],\n\"endValue\":%llu}",
		(unsigned long long) sum);
	Tcl_DStringAppend(out, buf, -1);
    }
    Tcl_DStringAppend(out, "]}\n", -1);
    free(tl);
    free(tids);
    free(frameOf);
    free(order);
    return TCL_OK;
}
