/*
 * export.c --
 *
 *	`profiler export`: builds the tree and the view of the profile,
 *	asks the format's writer (one ex*.c file per format) for the whole
 *	file in a buffer, then writes the buffer out. Nothing is written
 *	before the content is complete, and a file is written under a
 *	temporary name in the same directory and renamed over the target
 *	only once closed without error: a failed export leaves neither a
 *	partial file nor a stray temporary, and never touches the profile
 *	(the writers read it only).
 *
 *	Also the helpers several writers share: JSON string quoting, the
 *	folded name escaping, and a stack's function sequence cut at
 *	-maxdepth.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

typedef int (WriterProc)(Tcl_Interp *interp, const TpExportCtx *x,
	Tcl_DString *out);

/*
 * Indexed by TP_EXPORT_*; binary formats are written without encoding or
 * end-of-line translation on a channel.
 */

static const struct {
    WriterProc *proc;
    int binary;
} writers[] = {
    {TpExCallgrind, 0},		/* TP_EXPORT_CALLGRIND */
    {TpExChrome, 0},		/* TP_EXPORT_CHROME */
    {TpExDot, 0},		/* TP_EXPORT_DOT */
    {TpExFolded, 0},		/* TP_EXPORT_FOLDED */
    {TpExHtml, 0},		/* TP_EXPORT_HTML */
    {TpExPprof, 1},		/* TP_EXPORT_PPROF */
    {TpExSpeedscope, 0}		/* TP_EXPORT_SPEEDSCOPE */
};

static int	WriteChannel(Tcl_Interp *interp, Tcl_Channel chan,
		    const char *name, Tcl_DString *out, int binary);
static int	WriteFile(Tcl_Interp *interp, Tcl_Obj *path, Tcl_DString *out);

/*
 *----------------------------------------------------------------------
 *
 * TpExport --
 *
 *	Runs an export (args: a TpExportArgs) on the drained, locked
 *	profile p. Called through TpSessionWithProfile.
 *
 * Results:
 *	TCL_OK with an empty result, or TCL_ERROR with a message and an
 *	error code {TCLPROF EXPORT ...}.
 *
 * Side effects:
 *	Writes a file or to a channel.
 *
 *----------------------------------------------------------------------
 */

int
TpExport(
    Tcl_Interp *interp,
    TpProfile *p,
    void *args)
{
    TpExportArgs *a = args;
    Tcl_Channel chan = NULL;
    TpExportCtx x;
    Tcl_DString out;
    int mode, code;

    /*
     * Check the destination first: a bad channel is reported before the
     * (possibly long) work of building the content.
     */

    if (a->channel != NULL) {
	chan = Tcl_GetChannel(interp, Tcl_GetString(a->channel), &mode);
	if (chan == NULL) {	/* Its message, our error code. */
	    TpSetError(interp, "EXPORT", "CHANNEL", "can not find channel "
		    "named \"%s\"", Tcl_GetString(a->channel));
	    return TCL_ERROR;
	}
	if (!(mode & TCL_WRITABLE)) {
	    TpSetError(interp, "EXPORT", "CHANNEL", "channel \"%s\" wasn't "
		    "opened for writing", Tcl_GetString(a->channel));
	    return TCL_ERROR;
	}
    } else {
	Tcl_StatBuf *st = Tcl_AllocStatBuf();

	if (Tcl_GetString(a->file)[0] == '\0') {
	    ckfree((char *) st);
	    TpSetError(interp, "EXPORT", "IO", "cannot write \"\": empty file"
		    " name");
	    return TCL_ERROR;
	}
	if (Tcl_FSStat(a->file, st) == 0 && S_ISDIR(st->st_mode)) {
	    ckfree((char *) st);
	    TpSetError(interp, "EXPORT", "IO", "cannot write \"%s\": it is a "
		    "directory", Tcl_GetString(a->file));
	    return TCL_ERROR;
	}
	ckfree((char *) st);
    }

    x.p = p;
    x.o = &a->ro;
    x.t = TpTreeBuild(interp, p, &a->ro);
    x.v = TpViewBuild(x.t, p, &a->ro);
    Tcl_DStringInit(&out);
    code = writers[a->format].proc(interp, &x, &out);
    TpViewFree(x.v);
    TpTreeFree(x.t);
    if (code == TCL_OK) {
	if (chan != NULL) {
	    code = WriteChannel(interp, chan, Tcl_GetString(a->channel), &out,
		    writers[a->format].binary);
	} else {
	    code = WriteFile(interp, a->file, &out);
	}
    }
    Tcl_DStringFree(&out);
    if (code == TCL_OK) {
	Tcl_ResetResult(interp);
    }
    return code;
}

/*
 *----------------------------------------------------------------------
 *
 * WriteFile --
 *
 *	Writes out to path through a temporary file in the same directory
 *	(so the rename is atomic), in binary mode: every writer produces
 *	the exact bytes of the file (text formats in UTF-8).
 *
 * Results:
 *	TCL_OK, or TCL_ERROR with {TCLPROF EXPORT IO}.
 *
 * Side effects:
 *	Creates or replaces path; removes the temporary on failure.
 *
 *----------------------------------------------------------------------
 */

static int
WriteFile(
    Tcl_Interp *interp,
    Tcl_Obj *path,
    Tcl_DString *out)
{
    Tcl_Obj *tmp;
    Tcl_Channel chan;
    int len = Tcl_DStringLength(out), err = 0;
    const char *what = NULL;

    tmp = Tcl_ObjPrintf("%s.tclprof-%d.tmp", Tcl_GetString(path),
	    (int) getpid());
    Tcl_IncrRefCount(tmp);
    Tcl_SetErrno(0);
    chan = Tcl_FSOpenFileChannel(NULL, tmp, "w", 0666);
    if (chan == NULL) {
	err = Tcl_GetErrno();
	what = "cannot create";
	goto error;
    }
    if (Tcl_SetChannelOption(NULL, chan, "-translation", "binary") != TCL_OK
	    || Tcl_Write(chan, Tcl_DStringValue(out), len) != len) {
	err = Tcl_GetErrno();
	Tcl_Close(NULL, chan);
	what = "cannot write";
	goto errorTmp;
    }
    Tcl_SetErrno(0);
    if (Tcl_Close(NULL, chan) != TCL_OK) {
	err = Tcl_GetErrno();
	what = "cannot write";
	goto errorTmp;
    }
    if (Tcl_FSRenameFile(tmp, path) != 0) {
	err = Tcl_GetErrno();
	what = "cannot rename the temporary file to";
	goto errorTmp;
    }
    Tcl_DecrRefCount(tmp);
    return TCL_OK;

  errorTmp:
    Tcl_FSDeleteFile(tmp);
  error:
    TpSetError(interp, "EXPORT", "IO", "%s \"%s\": %s", what,
	    Tcl_GetString(path), err ? Tcl_ErrnoMsg(err) : "I/O error");
    Tcl_DecrRefCount(tmp);
    return TCL_ERROR;
}

/*
 *----------------------------------------------------------------------
 *
 * WriteChannel --
 *
 *	Writes out to an open channel. Text goes through the channel's
 *	encoding and translation like any [puts]; binary content is
 *	written with the channel switched to binary for the duration.
 *
 * Results:
 *	TCL_OK, or TCL_ERROR with {TCLPROF EXPORT IO}.
 *
 * Side effects:
 *	Writes and flushes the channel.
 *
 *----------------------------------------------------------------------
 */

static int
WriteChannel(
    Tcl_Interp *interp,
    Tcl_Channel chan,
    const char *name,
    Tcl_DString *out,
    int binary)
{
    Tcl_DString enc, tra;
    int len = Tcl_DStringLength(out), ok;

    Tcl_DStringInit(&enc);
    Tcl_DStringInit(&tra);
    if (binary) {
	Tcl_GetChannelOption(NULL, chan, "-encoding", &enc);
	Tcl_GetChannelOption(NULL, chan, "-translation", &tra);
	Tcl_SetChannelOption(NULL, chan, "-translation", "binary");
	ok = Tcl_Write(chan, Tcl_DStringValue(out), len) == len;
    } else {
	ok = Tcl_WriteChars(chan, Tcl_DStringValue(out), len) >= 0;
    }
    ok = ok && Tcl_Flush(chan) == TCL_OK;
    if (binary) {
	Tcl_SetChannelOption(NULL, chan, "-translation", Tcl_DStringValue(&tra));
	Tcl_SetChannelOption(NULL, chan, "-encoding", Tcl_DStringValue(&enc));
    }
    Tcl_DStringFree(&enc);
    Tcl_DStringFree(&tra);
    if (!ok) {
	TpSetError(interp, "EXPORT", "IO", "cannot write to channel \"%s\": %s",
		name, Tcl_ErrnoMsg(Tcl_GetErrno()));
	return TCL_ERROR;
    }
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * TpExportDepth --
 *
 *	The view's function sequence of one stack (root first), cut at
 *	-maxdepth frames from the root.
 *
 * Results:
 *	Its length (0: the sample is not in the view); *seqPtr set.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

uint32_t
TpExportDepth(
    const TpExportCtx *x,
    uint32_t stack,
    const uint32_t **seqPtr)
{
    uint32_t n = x->v->len[stack];

    *seqPtr = x->v->seq + x->v->first[stack];
    if (x->o->maxDepth > 0 && n > (uint32_t) x->o->maxDepth) {
	n = (uint32_t) x->o->maxDepth;
    }
    return n;
}

/*
 *----------------------------------------------------------------------
 *
 * TpJsonString --
 *
 *	Appends s as a JSON string literal (quotes, backslashes and control
 *	characters escaped; "</" written "<\/" so the JSON can sit in an
 *	HTML <script> element).
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Appends to out.
 *
 *----------------------------------------------------------------------
 */

void
TpJsonString(
    Tcl_DString *out,
    const char *s)
{
    const char *run = s;
    char buf[8];

    Tcl_DStringAppend(out, "\"", 1);
    for (; *s != '\0'; s++) {
	unsigned char c = (unsigned char) *s;
	const char *rep = NULL;

	if (c == '"') {
	    rep = "\\\"";
	} else if (c == '\\') {
	    rep = "\\\\";
	} else if (c == '\n') {
	    rep = "\\n";
	} else if (c == '\t') {
	    rep = "\\t";
	} else if (c == '\r') {
	    rep = "\\r";
	} else if (c < 0x20) {
	    snprintf(buf, sizeof(buf), "\\u%04x", c);
	    rep = buf;
	} else if (c == '<' && s[1] == '/') {
	    rep = "<\\";	/* The '/' follows with the next run. */
	} else if (c == 0xc0 && (unsigned char) s[1] == 0x80) {
	    /* Tcl's encoding of NUL. */
	    Tcl_DStringAppend(out, run, (int) (s - run));
	    Tcl_DStringAppend(out, "\\u0000", -1);
	    s++;
	    run = s + 1;
	    continue;
	}
	if (rep != NULL) {
	    Tcl_DStringAppend(out, run, (int) (s - run));
	    Tcl_DStringAppend(out, rep, -1);
	    run = s + 1;
	}
    }
    Tcl_DStringAppend(out, run, (int) (s - run));
    Tcl_DStringAppend(out, "\"", 1);
}

/*
 *----------------------------------------------------------------------
 *
 * TpFoldedName --
 *
 *	Appends a frame name escaped for the folded format (one line per
 *	stack, frames separated by ';', the count after the last space):
 *
 *	  ';'        becomes ':'   (the separator cannot occur in a name);
 *	  newline    becomes the two characters "\n", carriage return "\r"
 *	             (a line is a stack);
 *	  a leaf name ending in a space and digits gets a '_' appended,
 *	             so "foo 12" is written "foo 12_" and a reader that
 *	             takes the last space-separated number as the count
 *	             cannot take the 12.
 *
 *	The escaping is one-way (a name that really ends in "12_" is not
 *	told apart); folded files are for pictures, not for loading back.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Appends to out.
 *
 *----------------------------------------------------------------------
 */

void
TpFoldedName(
    Tcl_DString *out,
    const char *name,
    int leaf)
{
    const char *s, *run = name;
    size_t len = strlen(name);

    for (s = name; *s != '\0'; s++) {
	const char *rep = NULL;

	if (*s == ';') {
	    rep = ":";
	} else if (*s == '\n') {
	    rep = "\\n";
	} else if (*s == '\r') {
	    rep = "\\r";
	}
	if (rep != NULL) {
	    Tcl_DStringAppend(out, run, (int) (s - run));
	    Tcl_DStringAppend(out, rep, -1);
	    run = s + 1;
	}
    }
    Tcl_DStringAppend(out, run, (int) (s - run));
    if (leaf && len >= 2 && name[len - 1] >= '0' && name[len - 1] <= '9') {
	const char *d = name + len - 1;

	while (d > name && d[-1] >= '0' && d[-1] <= '9') {
	    d--;
	}
	if (d > name && (d[-1] == ' ' || d[-1] == '\t')) {
	    Tcl_DStringAppend(out, "_", 1);
	}
    }
}

/*
 *----------------------------------------------------------------------
 *
 * TpExportTimeline --
 *
 *	The view's samples in time order (see TpTimeEntry), and the
 *	threads seen.
 *
 * Results:
 *	A malloc'ed array of *nPtr entries (samples out of the view are
 *	left out); *tidsPtr a malloc'ed array of *nTidsPtr thread ids.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

TpTimeEntry *
TpExportTimeline(
    const TpExportCtx *x,
    size_t *nPtr,
    uint32_t **tidsPtr,
    uint32_t *nTidsPtr)
{
    const TpProfile *p = x->p;
    size_t n = p->nLog ? p->nLog : p->nStacks, i, k = 0;
    TpTimeEntry *e = malloc(sizeof(TpTimeEntry) * (n + 1));
    uint32_t *tids = malloc(sizeof(uint32_t) * 16), nTids = 0, capTids = 16, j;
    uint64_t at = 0, *lastNs = malloc(sizeof(uint64_t) * 16);
				/* Per thread: its previous sample's time. */

    if (e == NULL || tids == NULL || lastNs == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    for (i = 0; i < n; i++) {
	uint32_t stack = p->nLog ? p->log[i].stack : (uint32_t) i;
	uint32_t tid = p->stacks[stack].tid;

	if (x->v->len[stack] == 0) {
	    continue;
	}
	for (j = 0; j < nTids && tids[j] != tid; j++) {
	}
	if (j == nTids) {
	    if (nTids == capTids) {
		capTids *= 2;
		tids = realloc(tids, sizeof(uint32_t) * capTids);
		lastNs = realloc(lastNs, sizeof(uint64_t) * capTids);
		if (tids == NULL || lastNs == NULL) {
		    Tcl_Panic("tclprof: out of memory");
		}
	    }
	    lastNs[nTids] = 0;
	    tids[nTids++] = tid;
	}
	e[k].stack = stack;
	e[k].tid = tid;
	if (p->nLog) {
	    uint64_t t = p->log[i].timeNs - p->firstNs;
	    uint64_t back;

	    /*
	     * A sample of weight w was taken at the end of the w intervals
	     * it stands for (its thread took their ticks late): its span
	     * starts w - 1 intervals earlier, not before its thread's
	     * previous sample.
	     */

	    e[k].weight = (uint64_t) (p->log[i].weight ? p->log[i].weight : 1)
		    * (p->logStride > 1 ? p->logStride : 1);
	    back = (uint64_t) (e[k].weight - 1) * p->intervalUs * 1000u;
	    t = t > back ? t - back : 0;
	    e[k].timeNs = t > lastNs[j] ? t : lastNs[j];
	    lastNs[j] = p->log[i].timeNs - p->firstNs;
	} else {
	    e[k].timeNs = at;
	    e[k].weight = p->stacks[i].count;
	    at += p->stacks[i].count * (uint64_t) p->intervalUs * 1000u;
	}
	k++;
    }
    free(lastNs);
    *nPtr = k;
    *tidsPtr = tids;
    *nTidsPtr = nTids;
    return e;
}
