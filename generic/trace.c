/*
 * trace.c --
 *
 *	Trace mode: the classic way to know the Tcl stack (the "Integrated Tcl/C call stacks" paper). An
 *	enter-only Tcl_CreateObjTrace keeps a shadow stack indexed by level;
 *	the handler copies it, cut at the interp's current level (entries
 *	above it belong to commands that have returned). The trace is
 *	created with TCL_ALLOW_INLINE_COMPILATION, without which Tcl stops
 *	compiling commands inline (x8 on fib, x16 on loops, DESIGN.md); even
 *	so Tcl spends ~250 ns per traced command before calling us.
 *
 *	What trace mode gives that frames mode cannot: exact call counts per
 *	command and per caller->callee edge.
 *
 *	Each shadow entry records the command (a TraceCmd, never freed
 *	while the trace lives, so the handler can copy its name) and an
 *	anchor: this function's frame address plus a delta, calibrated once
 *	so that it equals the SP of the TclNRRunCallbacks frame that runs the
 *	command. The merge gives each Tcl frame to the trampoline with that
 *	exact SP (DESIGN.md).
 *
 *	Coroutines run at the level of the command that resumed them, plus
 *	their own depth: each coroutine has its own shadow stack, indexed by
 *	level - auxNumLevels (0: the coroutine's body command, which Tcl
 *	runs at the resumer's level). As in frames mode, the capture splices
 *	it over the resuming context under a "coroutine NAME" marker that
 *	stands for the resuming command; nested coroutines are followed
 *	through their resumers. An entry kept across a yield ran in its
 *	resumer's trampoline, which the next resume may not share: its
 *	anchor is dropped (it then follows the marker) when the resumer's
 *	anchor has changed since it was written. A coroutine already
 *	running when the trace began never had its body command entered
 *	under the trace: the body is read from its CallFrame instead
 *	(BodyEntry).
 *
 *	Child interps. A child has its own Interp, levels and traces:
 *	each descendant of the profiled interp gets a trace and a main
 *	stack of its own (TraceInterp), those present at start and those
 *	made later (found when the command after an [interp] or a child's
 *	own command runs, as a child is made and entered through those).
 *	The handler captures every evaluating one and orders their frames
 *	by anchor, which is the trampoline's SP: deeper trampolines, lower
 *	SPs.
 *
 *	Stale entries. Tcl counts a command's level before it runs the
 *	enter traces, so from then until TraceProc writes the entry, the
 *	entry at that level names the previous command run there. Tcl
 *	spends ~250 ns there per command: with two procs called in turn,
 *	11% of the samples were filed under the other one
 *	(tests-perf/stale.tcl). Each entry records its call site
 *	(TpInterpCallSiteFrame: the caller's CmdFrame and pc), and the handler
 *	checks the innermost entry against it. A stale entry is replaced by
 *	the command last entered from the site's new position (sites[], a
 *	direct-mapped cache TraceProc fills: a loop calls from the same
 *	sites again and again), as frames mode shows the command being
 *	entered; or dropped when that is unknown.
 *
 *	Frames without a traced call. Tcl pushes some proc, lambda and
 *	method frames without dispatching a command: a proc whose objProc C
 *	calls directly, a TclOO constructor, filter or [next] target. Each
 *	entry records the caller's CallFrame; a command entered in a frame
 *	that its caller did not push as a proc does (the caller is a C
 *	command or a method call) looks at the frames pushed in between
 *	(ViaFrames): the one of a method call names that call (a filter
 *	runs before the method the call names; [new] runs the
 *	constructor), and one more is shown between the two levels. Tcl
 *	also counts a few levels it does not trace (a constructor runs two
 *	levels above [new], [next] one above its caller): such a hole
 *	keeps the entry of an older command, recognised because it was
 *	entered before the level below it, and not shown. A method written
 *	in C that [next] goes on to has neither frame nor trace: the
 *	handler finds it in the call context of the innermost method frame
 *	(EmitNextMethod).
 *
 *	Execution traces. While the callback of [trace add execution]
 *	runs, Tcl calls no object trace: the shadow stacks know nothing of
 *	it, and such a sample is taken as frames mode takes it.
 *
 *	Frames running at start. The procs and commands that enclose
 *	[profiler start] were never entered under the trace: they are read
 *	once from the interp's chains (TpInterpStartFrames), named as
 *	frames mode names them, and shown outside the traced commands while
 *	they last (the handler checks each is still on its chain, running
 *	the same command).
 *
 *	apply lambdas are named as frames mode names them ("apply
 *	file:line", TpLambdaName) and carry their file and line; both are
 *	found in TraceProc (TpInterpLambda), never in the handler.
 *
 *	The handler can interrupt TraceProc itself. Entries are fixed-size
 *	slots in arrays allocated at start (never reallocated); TraceProc
 *	marks the level it is writing (writing) and the handler skips it.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <stdlib.h>
#include <string.h>

#define TP_TRACE_LEVELS	TP_MAX_DEPTH	/* Levels kept per shadow stack. */
#define TP_TRACE_COROS	2048		/* Coroutine stacks kept: more than
					 * a chain of coroutines deep enough
					 * to fill -maxdepth. */
#define TP_TRACE_HINTS	4096		/* Coroutine -> stack hints (a power
					 * of 2). */
#define TP_CORO_LEVELS	8		/* A coroutine stack's first size. */
#define TP_TRACE_BASE	256		/* Frames active at start kept. */
#define TP_TRACE_SITES	4096		/* Call sites remembered (a power
					 * of 2). */
#define TP_TRACE_INTERPS 16		/* Interps traced: the profiled one
					 * and its descendants. */

typedef struct TraceCmd {
    char *name;			/* Fully qualified (global commands without
				 * the leading ::). */
    int nameLen;
    int type;			/* TP_TCL_PROC or TP_TCL_CMD. */
    int special;		/* One of the SPECIAL_* below, 0 for most
				 * commands (one test in TraceProc). */
    int isNext;			/* [next] or [nextto] (for the handler). */
    char *file;			/* Lambdas: the file they were written in,
				 * or NULL... */
    int fileLen;
    int line;			/* ... and the line their body starts on. */
    char *place;		/* Procs written in a sourced file: "line
				 * file" of their body, the family's place
				 * (TraceName); NULL otherwise. */
    uint64_t calls;		/* Exact number of calls. */
    struct TraceCmd *nextAll;	/* List of all, for freeing. */
} TraceCmd;

/*
 * What a command token was last seen as (TpTraceState.byToken): its
 * TraceCmd, which commands of one name share, and how to tell that the
 * token still names that command.
 */

typedef struct TokenRef {
    TraceCmd *tc;
    const char *tailPtr;	/* Tcl_GetCommandName's pointer... */
    Tcl_Namespace *nsPtr;	/* ... the namespace, when made... */
    char *tail;			/* ... and a copy of the name (malloc): a
				 * deleted command's memory, its token and
				 * its name's hash entry, is reused at the
				 * same addresses by the next command made
				 * (proc cb$n per request: cb3's calls were
				 * counted and sampled as cb0's). */
    size_t tailCap;
} TokenRef;

/*
 * TraceCmd.special: commands whose calls TraceProc treats apart.
 */

enum {
    SPECIAL_OBJECT = 1,		/* A TclOO object's command or `my`: calls
				 * are named by method (MethodCmd). */
    SPECIAL_APPLY,		/* apply: calls are named by lambda. */
    SPECIAL_INTERP		/* [interp] or a child interp's command: may
				 * make or enter a child interp. */
};

typedef struct ShadowEntry {
    TraceCmd *cmd;
    uintptr_t anchor;		/* SP of the trampoline running it. */
    uintptr_t site, pos;	/* TpInterpCallSiteFrame when entered. */
    uintptr_t resumer;		/* Coroutine stacks: the resuming command's
				 * anchor when this entry was written. */
    void *frame;		/* The caller's CallFrame when entered. */
    uint64_t seq;		/* When entered (TpTraceState.seq). */
    TraceCmd *shown;		/* Shown instead of cmd when not NULL: the
				 * method its own frame runs (ViaFrames,
				 * from the entry one level down). */
    TraceCmd *via;		/* A frame pushed by C between the command
				 * one level up and this one, shown between
				 * them, or NULL. */
    void *viaProc;		/* ViaFrames' cache: the caller frame's Proc
				 * (NULL if not looked for), the command one
				 * level up and its frame, and the name found
				 * for that command. */
    TraceCmd *viaUp;
    void *viaUpFrame;
    TraceCmd *viaUpShown;
} ShadowEntry;

typedef struct SiteEntry {
    uintptr_t pos;		/* Call site position (TpInterpCallSiteFrame)... */
    TraceCmd *cmd;		/* ... and the command last entered there. */
} SiteEntry;

typedef struct CoroStack {
    void *corPtr;		/* Coroutine owning it, or NULL. */
    uint64_t lastUse;
    ShadowEntry *e;		/* nLevels entries; e[0] is the coroutine's
				 * body command. Grown (never shrunk) by
				 * TraceProc: e is stored before nLevels,
				 * so the handler, which interrupts this
				 * thread, never reads past the end. */
    volatile int nLevels;
    TraceCmd *marker;		/* "coroutine NAME" (TP_TCL_CORO). */
    Tcl_Command token;		/* The coroutine's command, and its name */
    const char *tailPtr;	/* when marker was made (renames). */
    int bodyTried;		/* e[0] was looked for (BodyEntry). */
} CoroStack;

/*
 * One traced interp: the profiled one (interps[0]) or a descendant. A
 * child interp has its own Interp, levels and trace; its Tcl frames run in
 * trampolines nested in its parent's (DESIGN.md), and the handler orders
 * the frames of all evaluating interps by anchor.
 */

typedef struct TraceInterp {
    Tcl_Interp *volatile interp;/* NULL when the slot is free (a deleted
				 * child): the handler skips it. */
    Tcl_Trace trace;
    ShadowEntry *main;		/* Main stack, TP_TRACE_LEVELS entries. */
    struct TpTraceState *ts;
} TraceInterp;

struct TpTraceState {
    Tcl_Interp *interp;		/* The profiled interp. */
    TraceInterp interps[TP_TRACE_INTERPS];
    volatile int nInterps;	/* Slots used (free ones included). */
    int pending;		/* Not calibrated yet, or child interps to
				 * look for: TraceProc's slow path. */
    Tcl_ObjCmdProc *interpObjProc;/* objProc of [interp]... */
    Tcl_ObjCmdProc *childObjProc;/* ... and of child interps' commands. */
    uintptr_t spDelta;		/* Calibrated anchor offset. */
    int calibrated;
    Tcl_ObjCmdProc *procObjProc;/* objProc of every proc (to tell procs). */
    Tcl_ObjCmdProc *objObjProc;	/* objProc of TclOO objects' commands... */
    Tcl_ObjCmdProc *myObjProc;	/* ... and of their `my`. */
    TraceCmd *objectCmd;	/* The one TraceCmd of every object's command
				 * and `my` (LookupCmd): their calls are named
				 * by method; one per object would grow with
				 * every object a program ever made. */
    Tcl_ObjCmdProc *applyObjProc;/* objProc of apply. */
    void *nextNreProc[2];	/* nreProcs of [next] and [nextto] (they
				 * have no objProc). */
    const Tcl_ObjType *lambdaType;/* apply's lambda Tcl_ObjType. */
    Tcl_HashTable byName;	/* Method call name -> TraceCmd. */
    CoroStack *coros;		/* TP_TRACE_COROS stacks, the first nCoros
				 * of them used... */
    volatile int nCoros;
    uint16_t *hints;		/* ... and hints[hash(corPtr)] - 1 is the
				 * index of corPtr's stack, most often: the
				 * lookup costs the same whatever the number
				 * of live coroutines. */
    SiteEntry *sites;		/* TP_TRACE_SITES entries. */
    uint64_t useClock;
    uint64_t seq;		/* Commands entered. */
    volatile int writing;	/* Index TraceProc is writing + 1, 0 if
				 * none... */
    ShadowEntry *volatile writingStack;/* ... in this stack. */
    Tcl_HashTable byToken;	/* Tcl_Command -> TokenRef. */
    Tcl_HashTable byCmd;	/* "type.special.isNext|name" -> TraceCmd:
				 * the commands of one name share one. */
    Tcl_HashTable fams;		/* "type|folded name" -> names made
				 * (TraceName). */
    int instances;		/* -instances (TpProfile.instances). */
    Tcl_HashTable edges;	/* {caller, callee} -> count. */
    TraceCmd *all;
    size_t cmdBytes;		/* Heap memory of the TraceCmds (TpTraceBytes). */
    TpStartFrame base[TP_TRACE_BASE];/* Frames active at start,
				 * innermost first (TpInterpStartFrames)... */
    TraceCmd *baseCmd[TP_TRACE_BASE];/* ... their commands... */
    int nBase;			/* ... and how many. */
    uintptr_t calFrame;		/* Calibration: frame address seen. */
    const TpUnwindConfig *cfg;	/* The trampolines, for calibration. */
};

static Tcl_CmdObjTraceProc TraceProc;
static TraceCmd *MethodCmd(TpTraceState *ts, Tcl_Interp *interp,
	Tcl_Command token, Tcl_Obj *methodObj);
static TraceCmd *NamedCmd(TpTraceState *ts, const char *name, int len,
	int type);
static TraceCmd *LambdaCmd(TpTraceState *ts, Tcl_Interp *interp,
	Tcl_Obj *lambdaObj);
static TraceCmd *NewTraceCmd(TpTraceState *ts, const char *name, int len,
	int type);
static TraceCmd *SharedCmd(TpTraceState *ts, const char *name, int len,
	int type, int special, int isNext, const char *place);
static char *	FamilyOf(TpTraceState *ts, int type, const char *name,
	size_t len, const char *place, size_t *lenPtr, int create,
	Tcl_HashEntry **hPtr);
static const char *TraceName(TpTraceState *ts, int type, const char *name,
	int *lenPtr, const char *place, char **nameBuf,
	Tcl_HashEntry **famPtr);
static TraceCmd *StartCmd(TpTraceState *ts, Tcl_Interp *interp,
			    int level);
static TraceCmd *FrameCmd(TpTraceState *ts, Tcl_Interp *interp,
	void *frame);
static void	RescanInterps(TpTraceState *ts);
static Tcl_ObjCmdProc CalibrateCmd;

/*
 * A global command's full name without its leading "::" (commands in
 * other namespaces keep theirs), as the reports show commands.
 */

static void
StripGlobal(
    const char **sPtr,
    int *lenPtr)
{
    if (*lenPtr > 2 && (*sPtr)[0] == ':' && (*sPtr)[1] == ':'
	    && strstr(*sPtr + 2, "::") == NULL) {
	*sPtr += 2;
	*lenPtr -= 2;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * LookupCmd --
 *
 *	The TraceCmd for a command token, made or remade when the token
 *	now names another command (deleted and its memory reused, renamed).
 *	Every TclOO object's command and `my` get the one shared
 *	ts->objectCmd (SPECIAL_OBJECT: TraceProc names their calls).
 *
 * Results:
 *	The TraceCmd.
 *
 * Side effects:
 *	May allocate.
 *
 *----------------------------------------------------------------------
 */

static TraceCmd *
LookupCmd(
    TpTraceState *ts,
    Tcl_Interp *interp,
    Tcl_Command token)
{
    int isNew;
    Tcl_HashEntry *h = Tcl_CreateHashEntry(&ts->byToken, (char *) token,
	    &isNew);
    const char *tail = Tcl_GetCommandName(interp, token);
    Tcl_CmdInfo info;
    TokenRef *ref;
    Tcl_Obj *full;
    const char *s;
    int len, type, special = 0, isNext = 0, havePlace = 0;
    Tcl_DString place;

    if (isNew) {
	ref = calloc(1, sizeof(TokenRef));
	if (ref == NULL) {
	    Tcl_Panic("tclprof: out of memory");
	}
	Tcl_SetHashValue(h, ref);
	ts->cmdBytes += sizeof(TokenRef);
    } else {
	ref = Tcl_GetHashValue(h);
    }
    Tcl_GetCommandInfoFromToken(token, &info);
    if (info.objProc != NULL && (info.objProc == ts->objObjProc
	    || info.objProc == ts->myObjProc)) {
	/*
	 * An object's command or `my`: the shared TraceCmd, whatever
	 * object (TraceProc names the call by method, or by the
	 * object's name through ObjectCmd).
	 */

	if (ts->objectCmd == NULL) {
	    ts->objectCmd = NewTraceCmd(ts, "oo::object", 10, TP_TCL_CMD);
	    ts->objectCmd->special = SPECIAL_OBJECT;
	}
	ref->tc = ts->objectCmd;
	ref->tailPtr = NULL;
	return ts->objectCmd;
    }
    if (!isNew && ref->tc != NULL && ref->tc != ts->objectCmd
	    && ref->tailPtr == tail && ref->nsPtr == info.namespacePtr
	    && ref->tail != NULL && strcmp(ref->tail, tail) == 0) {
	return ref->tc;
    }
    full = Tcl_NewObj();
    Tcl_IncrRefCount(full);
    Tcl_GetCommandFullName(interp, token, full);
    s = TpObjString(full, &len);
    type = info.objProc == ts->procObjProc ? TP_TCL_PROC : TP_TCL_CMD;
    if (type == TP_TCL_CMD) {
	StripGlobal(&s, &len);
    }
    if (info.objProc == NULL) {
	void *nre = TpInterpNreProc(token);

	isNext = nre != NULL && (nre == ts->nextNreProc[0]
		|| nre == ts->nextNreProc[1]);
    } else if (info.objProc == ts->applyObjProc) {
	special = SPECIAL_APPLY;
    } else if (info.objProc == ts->interpObjProc
	    || info.objProc == ts->childObjProc) {
	special = SPECIAL_INTERP;
    }
    if (type == TP_TCL_PROC && ts->instances > 0) {
	/*
	 * A proc's place (where its body was written) tells procs made
	 * from one body (per callback or request: one family, folded past
	 * ts->instances names) from numbered procs written one by one.
	 */

	Tcl_Obj *fileObj;
	int line;

	if (TpInterpProcPlace(interp, info.objClientData, &fileObj, &line)) {
	    char num[24];

	    Tcl_DStringInit(&place);
	    snprintf(num, sizeof(num), "%d ", line);
	    Tcl_DStringAppend(&place, num, -1);
	    Tcl_DStringAppend(&place, Tcl_GetString(fileObj), -1);
	    havePlace = 1;
	}
    }
    ref->tc = SharedCmd(ts, s, len, type, special, isNext,
	    havePlace ? Tcl_DStringValue(&place) : NULL);
    if (havePlace) {
	Tcl_DStringFree(&place);
    }
    Tcl_DecrRefCount(full);
    ref->tailPtr = tail;
    ref->nsPtr = info.namespacePtr;
    len = (int) strlen(tail) + 1;
    if ((size_t) len > ref->tailCap) {
	char *copy = realloc(ref->tail, (size_t) len);

	if (copy == NULL) {
	    Tcl_Panic("tclprof: out of memory");
	}
	ts->cmdBytes += (size_t) len - ref->tailCap;
	ref->tail = copy;
	ref->tailCap = (size_t) len;
    }
    memcpy(ref->tail, tail, (size_t) len);
    return ref->tc;
}

/*
 *----------------------------------------------------------------------
 *
 * TraceName, SharedCmd --
 *
 *	TraceName: the name for a new TraceCmd. Names that differ only in
 *	their last part's numbers (TpFoldNumbers: a coroutine or proc made
 *	per request) are a family; past ts->instances of them each new one
 *	is given the family's folded name, so that the trace's tables stay
 *	bounded however many the program makes (the profile folds the
 *	earlier names when it meets the folded one, TpProfileTclLoc).
 *	Commands and coroutines fold by name; procs only with the place
 *	their body was written in (file and line, TpInterpProcPlace), so
 *	that procs made from one body (proc cb$n ...) fold and numbered
 *	procs written one by one (::step1 ... ::step20), different code,
 *	do not. A proc without a place never folds.
 *
 *	SharedCmd: the TraceCmd of a command by name, shared by every
 *	command token that ever had that name, type and behaviour.
 *
 * Results:
 *	TraceName: the name, in *nameBuf (malloc, to free) when folded;
 *	*famPtr is the family's entry to count a new name in, or NULL.
 *	SharedCmd: the TraceCmd.
 *
 * Side effects:
 *	May allocate.
 *
 *----------------------------------------------------------------------
 */

/*
 * FamilyOf: name's folded name (malloc, *lenPtr its length) and in *hPtr
 * its family's entry in ts->fams (made if create, with no names counted;
 * NULL if absent), or NULL when the name does not fold: folding is off,
 * the type is not a command, coroutine or proc with a place, or the last
 * part has no number. A proc's family is keyed by its place too.
 */

static char *
FamilyOf(
    TpTraceState *ts,
    int type,
    const char *name,
    size_t len,
    const char *place,
    size_t *lenPtr,
    int create,
    Tcl_HashEntry **hPtr)
{
    char *folded, prefix[16];
    Tcl_DString key;
    int isNew;

    *hPtr = NULL;
    if (ts->instances <= 0 || (type != TP_TCL_CMD && type != TP_TCL_CORO
	    && (type != TP_TCL_PROC || place == NULL))
	    || (folded = TpFoldNumbers(name, len, lenPtr)) == NULL) {
	return NULL;
    }
    Tcl_DStringInit(&key);
    snprintf(prefix, sizeof(prefix), "%d|", type);
    Tcl_DStringAppend(&key, prefix, -1);
    Tcl_DStringAppend(&key, folded, (int) *lenPtr);
    if (type == TP_TCL_PROC) {
	Tcl_DStringAppend(&key, "|", 1);
	Tcl_DStringAppend(&key, place, -1);
    }
    if (!create) {
	*hPtr = Tcl_FindHashEntry(&ts->fams, Tcl_DStringValue(&key));
    } else {
	*hPtr = Tcl_CreateHashEntry(&ts->fams, Tcl_DStringValue(&key),
		&isNew);
	if (isNew) {
	    Tcl_SetHashValue(*hPtr, (ClientData) 0);
	    ts->cmdBytes += sizeof(Tcl_HashEntry) + *lenPtr + 8;
	}
    }
    Tcl_DStringFree(&key);
    return folded;
}

static const char *
TraceName(
    TpTraceState *ts,
    int type,
    const char *name,
    int *lenPtr,
    const char *place,
    char **nameBuf,
    Tcl_HashEntry **famPtr)
{
    size_t foldedLen;
    char *folded;
    Tcl_HashEntry *h;

    *nameBuf = NULL;
    *famPtr = NULL;
    if ((folded = FamilyOf(ts, type, name, (size_t) *lenPtr, place,
	    &foldedLen, 1, &h)) == NULL) {
	return name;
    }
    if ((intptr_t) Tcl_GetHashValue(h) < ts->instances) {
	free(folded);
	*famPtr = h;
	return name;
    }
    *nameBuf = folded;
    *lenPtr = (int) foldedLen;
    return folded;
}

static TraceCmd *
SharedCmd(
    TpTraceState *ts,
    const char *name,
    int len,
    int type,
    int special,
    int isNext,
    const char *place)
{
    Tcl_HashEntry *fam, *h;
    char *buf, prefix[32];
    Tcl_DString key;
    TraceCmd *tc;
    int isNew;

    name = TraceName(ts, type, name, &len, place, &buf, &fam);
    Tcl_DStringInit(&key);
    snprintf(prefix, sizeof(prefix), "%d.%d.%d|", type, special, isNext);
    Tcl_DStringAppend(&key, prefix, -1);
    Tcl_DStringAppend(&key, name, len);
    h = Tcl_CreateHashEntry(&ts->byCmd, Tcl_DStringValue(&key), &isNew);
    if (isNew) {
	tc = NewTraceCmd(ts, name, len, type);
	tc->special = special;
	tc->isNext = isNext;
	if (place != NULL && type == TP_TCL_PROC && ts->instances > 0) {
	    tc->place = strdup(place);
	    if (tc->place == NULL) {
		Tcl_Panic("tclprof: out of memory");
	    }
	    ts->cmdBytes += strlen(place) + 1;
	}
	Tcl_SetHashValue(h, tc);
	ts->cmdBytes += sizeof(Tcl_HashEntry) + (size_t) Tcl_DStringLength(&key);
	if (fam != NULL) {
	    Tcl_SetHashValue(fam, (ClientData) ((intptr_t)
		    Tcl_GetHashValue(fam) + 1));
	}
    } else {
	tc = Tcl_GetHashValue(h);
    }
    Tcl_DStringFree(&key);
    free(buf);
    return tc;
}

/*
 *----------------------------------------------------------------------
 *
 * ObjectCmd --
 *
 *	The TraceCmd of a call of an object's command or `my` that names
 *	no method TpInterpMethodName finds (no method word, an unknown
 *	method): the object's own name, from the byName table, so that
 *	calls on one object share one.
 *
 * Results:
 *	The TraceCmd (type TP_TCL_CMD).
 *
 * Side effects:
 *	May allocate.
 *
 *----------------------------------------------------------------------
 */

static TraceCmd *
ObjectCmd(
    TpTraceState *ts,
    Tcl_Interp *interp,
    Tcl_Command token)
{
    Tcl_Obj *full = Tcl_NewObj();
    const char *s;
    int len;
    TraceCmd *tc;

    Tcl_IncrRefCount(full);
    Tcl_GetCommandFullName(interp, token, full);
    s = TpObjString(full, &len);
    StripGlobal(&s, &len);
    tc = NamedCmd(ts, s, len, TP_TCL_CMD);
    Tcl_DecrRefCount(full);
    return tc;
}

/*
 *----------------------------------------------------------------------
 *
 * MethodCmd --
 *
 *	The TraceCmd of a method call "$obj method": named "::Class method"
 *	after the declaring class (users read methods, not the
 *	generated object names ::oo::Obj12).
 *
 * Results:
 *	The TraceCmd (type TP_TCL_METHOD); the object's (ObjectCmd) when the
 *	method cannot be found.
 *
 * Side effects:
 *	May allocate.
 *
 *----------------------------------------------------------------------
 */

static TraceCmd *
MethodCmd(
    TpTraceState *ts,
    Tcl_Interp *interp,
    Tcl_Command token,
    Tcl_Obj *methodObj)
{
    Tcl_DString ds;
    TraceCmd *tc;

    Tcl_DStringInit(&ds);
    if (!TpInterpMethodName(interp, token, methodObj, &ds)) {
	Tcl_DStringFree(&ds);
	return ObjectCmd(ts, interp, token);
    }
    tc = NamedCmd(ts, Tcl_DStringValue(&ds), Tcl_DStringLength(&ds),
	    TP_TCL_METHOD);
    Tcl_DStringFree(&ds);
    return tc;
}

/*
 *----------------------------------------------------------------------
 *
 * LambdaCmd --
 *
 *	The TraceCmd of "apply lambda", named as frames mode names the
 *	lambda's frame (TpLambdaName: "apply file:line", else "apply
 *	{body...}") and, for a lambda written in a file, carrying that file
 *	and line, so that both modes show the same node. The lambda is
 *	read through its internal representation (TpInterpLambda), never
 *	as a list: making it a list would throw away [apply]'s compiled
 *	body at every call.
 *
 * Results:
 *	The TraceCmd (type TP_TCL_LAMBDA), or NULL if lambdaObj is not a
 *	valid lambda ([apply] will say why).
 *
 * Side effects:
 *	May allocate; converts lambdaObj as [apply] would.
 *
 *----------------------------------------------------------------------
 */

static TraceCmd *
LambdaCmd(
    TpTraceState *ts,
    Tcl_Interp *interp,
    Tcl_Obj *lambdaObj)
{
    Tcl_Obj *bodyObj, *fileObj;
    const char *body = NULL, *file = NULL;
    int bodyLen = 0, fileLen = 0, line, len;
    char name[TP_NAME_MAX + 1];
    TraceCmd *tc;

    if (!TpInterpLambda(interp, lambdaObj, ts->lambdaType, &bodyObj,
	    &fileObj, &line)) {
	return NULL;
    }
    if (fileObj != NULL) {
	file = TpObjString(fileObj, &fileLen);
    } else if (bodyObj != NULL && bodyObj->bytes != NULL) {
	body = TpObjString(bodyObj, &bodyLen);
    }
    len = TpLambdaName(name, TP_NAME_MAX, file, fileLen, line, body,
	    bodyLen);
    name[len] = '\0';
    tc = NamedCmd(ts, name, len, TP_TCL_LAMBDA);
    if (tc->file == NULL && fileLen > 0) {
	tc->file = malloc((size_t) fileLen + 1);
	if (tc->file == NULL) {
	    Tcl_Panic("tclprof: out of memory");
	}
	memcpy(tc->file, file, (size_t) fileLen);
	tc->file[fileLen] = '\0';
	tc->line = line;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	tc->fileLen = fileLen;
    }
    return tc;
}

/*
 *----------------------------------------------------------------------
 *
 * NamedCmd --
 *
 *	The TraceCmd with a computed name (methods, lambdas), made once.
 *
 * Results:
 *	The TraceCmd.
 *
 * Side effects:
 *	May allocate.
 *
 *----------------------------------------------------------------------
 */

static TraceCmd *
NamedCmd(
    TpTraceState *ts,
    const char *name,
    int len,
    int type)
{
    int isNew;
    Tcl_HashEntry *h = Tcl_FindHashEntry(&ts->byName, name), *fam;
    TraceCmd *tc;
    char *buf;

    if (h != NULL) {
	return Tcl_GetHashValue(h);
    }
    name = TraceName(ts, type, name, &len, NULL, &buf, &fam);
    h = Tcl_CreateHashEntry(&ts->byName, name, &isNew);
    if (!isNew) {
	free(buf);
	return Tcl_GetHashValue(h);
    }
    tc = NewTraceCmd(ts, name, len, type);
    Tcl_SetHashValue(h, tc);
    if (fam != NULL) {
	Tcl_SetHashValue(fam, (ClientData) ((intptr_t) Tcl_GetHashValue(fam)
		+ 1));
    }
    free(buf);
    return tc;
}

/*
 *----------------------------------------------------------------------
 *
 * FrameCmd --
 *
 *	The TraceCmd of a proc, lambda or method CallFrame whose call the
 *	trace did not see (TpInterpFrameCmd says how to name it), named as
 *	a traced call of it would be.
 *
 * Results:
 *	The TraceCmd, or NULL if the frame cannot be named.
 *
 * Side effects:
 *	May allocate.
 *
 *----------------------------------------------------------------------
 */

static TraceCmd *
FrameCmd(
    TpTraceState *ts,
    Tcl_Interp *interp,
    void *frame)
{
    Tcl_Command token = NULL;
    Tcl_Obj *lambdaObj = NULL;
    Tcl_DString ds;
    TraceCmd *tc = NULL;

    Tcl_DStringInit(&ds);
    switch (TpInterpFrameCmd(interp, frame, &token, &lambdaObj, &ds)) {
    case TP_TCL_PROC:
	tc = LookupCmd(ts, interp, token);
	break;
    case TP_TCL_LAMBDA:
	tc = LambdaCmd(ts, interp, lambdaObj);
	break;
    case TP_TCL_METHOD:
	tc = NamedCmd(ts, Tcl_DStringValue(&ds), Tcl_DStringLength(&ds),
		TP_TCL_METHOD);
	break;
    }
    Tcl_DStringFree(&ds);
    return tc;
}

/*
 *----------------------------------------------------------------------
 *
 * StartCmd --
 *
 *	The TraceCmd of a command running when the trace starts that pushed
 *	no CallFrame (a [foreach] of a sourced file, [uplevel]): named by
 *	its first word as written, as frames mode names it, from [info
 *	frame level] (which finds a bytecode command's text). A word that
 *	names a plain command takes that command's TraceCmd, the one its
 *	traced calls use.
 *
 * Results:
 *	The TraceCmd, or NULL if the command has no text.
 *
 * Side effects:
 *	Evaluates [info frame]; may allocate.
 *
 *----------------------------------------------------------------------
 */

static TraceCmd *
StartCmd(
    TpTraceState *ts,
    Tcl_Interp *interp,
    int level)
{
    Tcl_Obj *objv[3], *cmdObj = NULL;
    const char *s, *w;
    int len, wLen;
    TraceCmd *tc = NULL;
    Tcl_Command token;

    objv[0] = Tcl_NewStringObj("::info", -1);
    objv[1] = Tcl_NewStringObj("frame", -1);
    objv[2] = Tcl_NewIntObj(level);
    for (len = 0; len < 3; len++) {
	Tcl_IncrRefCount(objv[len]);
    }
    if (Tcl_EvalObjv(interp, 3, objv, TCL_EVAL_GLOBAL) == TCL_OK) {
	Tcl_Obj *key = Tcl_NewStringObj("cmd", -1);

	Tcl_IncrRefCount(key);
	if (Tcl_DictObjGet(NULL, Tcl_GetObjResult(interp), key, &cmdObj)
		== TCL_OK && cmdObj != NULL) {
	    Tcl_IncrRefCount(cmdObj);
	}
	Tcl_DecrRefCount(key);
    }
    for (len = 0; len < 3; len++) {
	Tcl_DecrRefCount(objv[len]);
    }
    if (cmdObj == NULL) {
	return NULL;
    }
    s = TpObjString(cmdObj, &len);
    TpInterpFirstWord(s, len, &w, &wLen);
    if (wLen > 0) {
	Tcl_DString ds;

	Tcl_DStringInit(&ds);
	Tcl_DStringAppend(&ds, w, wLen);
	token = Tcl_FindCommand(interp, Tcl_DStringValue(&ds), NULL,
		TCL_GLOBAL_ONLY);
	if (token != NULL) {
	    tc = LookupCmd(ts, interp, token);
	    if (tc->special != 0) {
		tc = NULL;
	    }
	}
	if (tc == NULL) {
	    tc = NewTraceCmd(ts, w, wLen, TP_TCL_CMD);
	}
	Tcl_DStringFree(&ds);
    }
    Tcl_DecrRefCount(cmdObj);
    return tc;
}

/*
 *----------------------------------------------------------------------
 *
 * NewTraceCmd --
 *
 *	Allocates a TraceCmd named by len bytes of name, on the list of all
 *	(freed by TpTraceStop; the handler may copy its name until then).
 *
 * Results:
 *	The TraceCmd.
 *
 * Side effects:
 *	Allocates.
 *
 *----------------------------------------------------------------------
 */

static TraceCmd *
NewTraceCmd(
    TpTraceState *ts,
    const char *name,
    int len,
    int type)
{
    TraceCmd *tc = calloc(1, sizeof(TraceCmd));

    if (tc == NULL || (tc->name = malloc((size_t) len + 1)) == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    memcpy(tc->name, name, (size_t) len);
    tc->name[len] = '\0';
    tc->nameLen = len;
    tc->type = type;
    tc->nextAll = ts->all;
    ts->all = tc;
    ts->cmdBytes += sizeof(TraceCmd) + (size_t) len + 1;
    return tc;
}

/*
 *----------------------------------------------------------------------
 *
 * TpTraceBytes --
 *
 *	The heap memory of a running trace's command tables: its TraceCmds
 *	with their names, and the entries of the tables that find them and
 *	count the edges (profiler status, traceBytes).
 *
 * Results:
 *	Bytes.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

size_t
TpTraceBytes(
    const TpTraceState *ts)
{
    return ts->cmdBytes + (size_t) (ts->byToken.numEntries
	    + ts->byName.numEntries + ts->edges.numEntries)
	    * (sizeof(Tcl_HashEntry) + 2 * sizeof(void *));
}

/*
 *----------------------------------------------------------------------
 *
 * SiteHash --
 *
 *	The slot of a call site position in sites[].
 *
 * Results:
 *	An index below TP_TRACE_SITES.
 *
 * Side effects:
 *	None.
 *
 * Signal safety:
 *	Safe.
 *
 *----------------------------------------------------------------------
 */

static inline unsigned
SiteHash(
    uintptr_t pos)
{
    return (unsigned) (((uint64_t) pos * 0x9E3779B97F4A7C15u) >> 52)
	    & (TP_TRACE_SITES - 1);
}

/*
 *----------------------------------------------------------------------
 *
 * FindCoro --
 *
 *	The shadow stack of coroutine corPtr, if it has one.
 *
 * Results:
 *	The CoroStack, or NULL.
 *
 * Side effects:
 *	None.
 *
 * Signal safety:
 *	Safe: reads our own array.
 *
 *----------------------------------------------------------------------
 */

static inline unsigned
CoroHash(
    const void *corPtr)
{
    return (unsigned) (((uint64_t) (uintptr_t) corPtr
	    * 0x9E3779B97F4A7C15u) >> 40) & (TP_TRACE_HINTS - 1);
}

static CoroStack *
FindCoro(
    TpTraceState *ts,
    void *corPtr)
{
    int i, n = ts->nCoros, h = ts->hints[CoroHash(corPtr)] - 1;

    if (h >= 0 && h < n && ts->coros[h].corPtr == corPtr) {
	return &ts->coros[h];
    }
    for (i = 0; i < n; i++) {
	if (ts->coros[i].corPtr == corPtr) {
	    return &ts->coros[i];
	}
    }
    return NULL;
}

/*
 *----------------------------------------------------------------------
 *
 * GrowCoro --
 *
 *	Makes a coroutine's shadow stack hold at least `want` levels (at
 *	most TP_TRACE_LEVELS).
 *
 * Results:
 *	1 if it does, 0 if want is out of range.
 *
 * Side effects:
 *	May replace cs->e by a larger copy. The handler runs on this
 *	thread: it sees the old array or the new one, never a freed one.
 *
 *----------------------------------------------------------------------
 */

static int
GrowCoro(
    CoroStack *cs,
    int want)
{
    ShadowEntry *e, *old = cs->e;
    int n = cs->nLevels;

    if (want <= n) {
	return 1;
    }
    if (want > TP_TRACE_LEVELS) {
	return 0;
    }
    while (n < want) {
	n = (n < TP_CORO_LEVELS) ? TP_CORO_LEVELS : 2 * n;
    }
    n = (n > TP_TRACE_LEVELS) ? TP_TRACE_LEVELS : n;
    e = calloc((size_t) n, sizeof(ShadowEntry));
    if (e == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    if (old != NULL) {
	memcpy(e, old, sizeof(ShadowEntry) * (size_t) cs->nLevels);
    }
    cs->e = e;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    cs->nLevels = n;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    free(old);
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * CoroStackFor --
 *
 *	The shadow stack of coroutine corPtr, taking the least recently used
 *	one when it has none, with its marker "coroutine NAME" up to date
 *	(named as frames mode names it, by the coroutine's command; remade
 *	when the command is renamed).
 *
 * Results:
 *	The CoroStack.
 *
 * Side effects:
 *	May recycle another coroutine's stack; may allocate.
 *
 *----------------------------------------------------------------------
 */

static CoroStack *
CoroStackFor(
    TpTraceState *ts,
    Tcl_Interp *interp,
    void *corPtr)
{
    int i, lru = 0;
    CoroStack *cs;
    Tcl_Command token = TpInterpCoroutineCommand(corPtr);
    const char *tail;

    ts->useClock++;
    if ((cs = FindCoro(ts, corPtr)) == NULL) {

	/*
	 * A free stack, else the least recently used one (a scan, but only
	 * with more live coroutines than stacks). The handler may be
	 * reading it: unpublish it, clear it, then publish it for its new
	 * owner.
	 */

	if (ts->nCoros < TP_TRACE_COROS) {
	    lru = ts->nCoros;
	} else {
	    for (i = 1; i < TP_TRACE_COROS; i++) {
		if (ts->coros[i].lastUse < ts->coros[lru].lastUse) {
		    lru = i;
		}
	    }
	}
	cs = &ts->coros[lru];
	cs->corPtr = NULL;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (lru == ts->nCoros) {
	    ts->nCoros = lru + 1;
	}
	GrowCoro(cs, 1);
	memset(cs->e, 0, sizeof(ShadowEntry) * (size_t) cs->nLevels);
	cs->marker = NULL;
	cs->token = NULL;
	cs->tailPtr = NULL;
	cs->bodyTried = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	cs->corPtr = corPtr;
    }
    ts->hints[CoroHash(corPtr)] = (uint16_t) (cs - ts->coros + 1);
    cs->lastUse = ts->useClock;
    tail = Tcl_GetCommandName(interp, token);
    if (cs->marker == NULL
	    || ((cs->token != token || cs->tailPtr != tail) && *tail != '\0')) {
	Tcl_Obj *full = Tcl_NewStringObj("coroutine ", -1);
	const char *name;
	int len;

	Tcl_IncrRefCount(full);
	Tcl_GetCommandFullName(interp, token, full);
	name = TpObjString(full, &len);
	cs->marker = NamedCmd(ts, name, len, TP_TCL_CORO);
	Tcl_DecrRefCount(full);
	cs->token = token;
	cs->tailPtr = tail;
    }
    return cs;
}

/*
 *----------------------------------------------------------------------
 *
 * ResumerEntry --
 *
 *	The entry of the command that resumed coroutine corPtr (whose base
 *	level is base): in the resuming coroutine's stack, or in the main
 *	stack of the coroutine's interp.
 *
 * Results:
 *	The entry, or NULL if unknown.
 *
 * Side effects:
 *	None.
 *
 * Signal safety:
 *	Safe: checked pointers and our own arrays.
 *
 *----------------------------------------------------------------------
 */

static ShadowEntry *
ResumerEntry(
    TpTraceState *ts,
    ShadowEntry *mainStack,
    void *corPtr,
    int base)
{
    void *outer;
    int outerBase, idx;
    ShadowEntry *stack = mainStack;
    int nLevels = TP_TRACE_LEVELS;

    if (!TpInterpCoroutineCaller(corPtr, &outer, &outerBase)) {
	return NULL;
    }
    if (outer != NULL) {
	CoroStack *cs = FindCoro(ts, outer);

	if (cs == NULL) {
	    return NULL;
	}
	nLevels = cs->nLevels;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	stack = cs->e;
    }
    idx = base - outerBase;
    if (idx < (outer ? 0 : 1) || idx >= nLevels) {
	return NULL;
    }
    return &stack[idx];
}

/*
 *----------------------------------------------------------------------
 *
 * AddInterp --
 *
 *	Traces interp with a shadow stack of its own, in a free slot of
 *	ts->interps. The handler may be reading the slots: a slot is
 *	published by its interp field, written last.
 *
 * Results:
 *	The TraceInterp, or NULL when every slot is taken (that interp's
 *	frames are then missing from the samples).
 *
 * Side effects:
 *	Creates a trace on interp; may allocate.
 *
 *----------------------------------------------------------------------
 */

static TraceInterp *
AddInterp(
    TpTraceState *ts,
    Tcl_Interp *interp)
{
    TraceInterp *ti = NULL;
    int i;

    for (i = 0; i < ts->nInterps && ti == NULL; i++) {
	if (ts->interps[i].interp == NULL) {
	    ti = &ts->interps[i];
	}
    }
    if (ti == NULL) {
	if (ts->nInterps >= TP_TRACE_INTERPS) {
	    return NULL;
	}
	ti = &ts->interps[ts->nInterps];
    }
    if (ti->main == NULL) {
	ti->main = calloc(TP_TRACE_LEVELS, sizeof(ShadowEntry));
	if (ti->main == NULL) {
	    Tcl_Panic("tclprof: out of memory");
	}
    } else {
	memset(ti->main, 0, sizeof(ShadowEntry) * TP_TRACE_LEVELS);
    }
    ti->ts = ts;
    ti->trace = Tcl_CreateObjTrace(interp, 0, TCL_ALLOW_INLINE_COMPILATION,
	    TraceProc, ti, NULL);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    ti->interp = interp;
    if (ti == &ts->interps[ts->nInterps]) {
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	ts->nInterps++;
    }
    return ti;
}

/*
 *----------------------------------------------------------------------
 *
 * ChildDeleted --
 *
 *	Tcl_CallWhenDeleted callback of a traced child interp: removes its
 *	trace and frees its slot before Tcl frees the interp, which the
 *	handler must no longer read.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Deletes the trace; unpublishes the slot.
 *
 *----------------------------------------------------------------------
 */

static void
ChildDeleted(
    ClientData cd,
    Tcl_Interp *interp)
{
    TraceInterp *ti = cd;

    Tcl_DeleteTrace(interp, ti->trace);
    ti->trace = NULL;
    __atomic_store_n(&ti->interp, NULL, __ATOMIC_SEQ_CST);
}

/*
 *----------------------------------------------------------------------
 *
 * SeeChild, RescanInterps --
 *
 *	Traces every descendant of the profiled interp not traced yet. Run
 *	at start and, since a child can only be created or entered through
 *	a command ([interp], or the child's own command in its parent),
 *	before the command that follows one of those (the child exists by
 *	then). SeeChild also learns the objProc that child interps'
 *	commands share.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	May create traces and register deletion callbacks.
 *
 *----------------------------------------------------------------------
 */

static void
SeeChild(
    void *cd,
    Tcl_Interp *child,
    Tcl_Command childCmd)
{
    TpTraceState *ts = cd;
    TraceInterp *ti;
    Tcl_CmdInfo info;
    int i;

    if (ts->childObjProc == NULL && childCmd != NULL
	    && Tcl_GetCommandInfoFromToken(childCmd, &info)) {
	ts->childObjProc = info.objProc;
    }
    for (i = 0; i < ts->nInterps; i++) {
	if (ts->interps[i].interp == child) {
	    return;
	}
    }
    if ((ti = AddInterp(ts, child)) != NULL) {
	Tcl_CallWhenDeleted(child, ChildDeleted, ti);
    }
}

static void
RescanInterps(
    TpTraceState *ts)
{
    ts->pending = 0;
    TpInterpChildren(ts->interp, SeeChild, ts);
}

/*
 *----------------------------------------------------------------------
 *
 * BodyEntry --
 *
 *	Fills entry 0 of coroutine stack cs, the coroutine's body command,
 *	when the trace never saw it entered: the coroutine was created
 *	before the trace began, or its stack was recycled. Without it a
 *	resumed coroutine showed its marker with the body's callees right
 *	under it. The entry gets no anchor: it follows the marker, which
 *	stands for the resuming command, as the body runs in the resumer's
 *	trampoline. Looked for once per stack.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	May write cs->e[0]; may allocate.
 *
 *----------------------------------------------------------------------
 */

static void
BodyEntry(
    TpTraceState *ts,
    Tcl_Interp *interp,
    CoroStack *cs)
{
    void *frame = TpInterpCoroutineBody(interp);
    TraceCmd *tc;

    cs->bodyTried = 1;
    if (frame == NULL || (tc = FrameCmd(ts, interp, frame)) == NULL) {
	return;
    }
    ts->writingStack = cs->e;
    __atomic_store_n(&ts->writing, 1, __ATOMIC_RELEASE);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    memset(&cs->e[0], 0, sizeof(ShadowEntry));
    cs->e[0].cmd = tc;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&ts->writing, 0, __ATOMIC_RELEASE);
}

/*
 *----------------------------------------------------------------------
 *
 * ViaFrames --
 *
 *	Called when the command being entered at level rel runs in a proc,
 *	lambda or method frame that its caller (at level upRel) did not
 *	push as a proc would (the caller is a C command or a method call).
 *	The frames pushed since that command was entered are then frames
 *	whose call Tcl never traced: a proc whose objProc C called
 *	directly, a TclOO constructor, filter or [next] target. The
 *	outermost one of a method call is that call's own frame: it names
 *	the call when the method running is not the one the call's name
 *	promised (a constructor run by [new], a filter). Of the others,
 *	the innermost is shown under this command (one per level is kept).
 *	The previous command at this level, in the same frame under the
 *	same caller, had the same answer: it is reused.
 *
 * Results:
 *	The via frame's TraceCmd or NULL; *upShownPtr: the name for the
 *	command one level up, or NULL.
 *
 * Side effects:
 *	May set stack[upRel].shown; may allocate.
 *
 *----------------------------------------------------------------------
 */

static TraceCmd *
ViaFrames(
    TpTraceState *ts,
    Tcl_Interp *interp,
    ShadowEntry *stack,
    int rel,
    int upRel,
    void *frame,
    void *proc,
    TraceCmd **upShownPtr)
{
    ShadowEntry *up = &stack[upRel], *e = &stack[rel];
    void *pushed[4];
    TraceCmd *via = NULL, *own = NULL;
    int n;

    if (e->viaProc == proc && e->frame == frame && e->viaUp == up->cmd
	    && e->viaUpFrame == up->frame) {
	own = e->viaUpShown;
	via = e->via;
    } else if ((n = TpInterpFramesPushed(frame, up->frame, pushed, 4)) > 0) {
	if (up->cmd->type == TP_TCL_METHOD) {
	    own = FrameCmd(ts, interp, pushed[--n]);
	    if (own == up->cmd) {
		own = NULL;
	    }
	}
	if (n > 0) {
	    via = FrameCmd(ts, interp, pushed[0]);
	}
    }
    if (own != NULL) {
	up->shown = own;
    }
    *upShownPtr = own;
    return via;
}

/*
 *----------------------------------------------------------------------
 *
 * TraceProc --
 *
 *	The enter trace: records the command at its level, with its call
 *	site, and counts the call and the edge from the command one level
 *	up.
 *
 * Results:
 *	TCL_OK.
 *
 * Side effects:
 *	Updates the shadow stack and the counts.
 *
 *----------------------------------------------------------------------
 */

static int
TraceProc(
    ClientData cd,
    Tcl_Interp *interp,
    int level,
    const char *command,
    Tcl_Command token,
    int objc,
    Tcl_Obj *const objv[])
{
    TraceInterp *ti = cd;
    TpTraceState *ts = ti->ts;
    uintptr_t frame = (uintptr_t) __builtin_frame_address(0);
    uintptr_t site, pos, resumerAnchor = 0;
    TraceCmd *tc, *caller = NULL, *via = NULL, *upShown = NULL;
    ShadowEntry *stack = ti->main, *e;
    void *corPtr, *callerFrame, *proc;
    int base = 0, rel, lo = 1, up;

    (void) command;
    if (ts->pending) {
	if (!ts->calibrated) {
	    ts->calFrame = frame;
	    return TCL_OK;
	}
	RescanInterps(ts);
    }
    tc = LookupCmd(ts, interp, token);
    if (tc->special) {
	if (tc->special == SPECIAL_INTERP) {
	    ts->pending = 1;
	} else if (tc->special == SPECIAL_OBJECT) {
	    tc = objc >= 2 ? MethodCmd(ts, interp, token, objv[1])
		    : ObjectCmd(ts, interp, token);
	} else if (tc->special == SPECIAL_APPLY && objc >= 2) {
	    TraceCmd *lambda = LambdaCmd(ts, interp, objv[1]);

	    tc = lambda ? lambda : tc;
	}
    }
    tc->calls++;
    corPtr = TpInterpCoroutine(interp, &base);
    rel = level - base;
    if (corPtr != NULL) {
	CoroStack *cs = CoroStackFor(ts, interp, corPtr);

	if (rel >= 0 && !GrowCoro(cs, rel + 1)) {
	    return TCL_OK;
	}
	stack = cs->e;
	lo = 0;
	if (stack[0].cmd == NULL && !cs->bodyTried && level > base) {
	    BodyEntry(ts, interp, cs);
	}
    }
    if (rel < lo || rel >= TP_TRACE_LEVELS) {
	return TCL_OK;
    }

    /*
     * The caller: one level up, in this stack or, for the coroutine's
     * body command, the command that resumed it. Tcl counts a level
     * without tracing it in a few places (a TclOO constructor runs two
     * levels above [new]): such a hole holds the command last entered
     * there, which was entered before the level below it was (it
     * belongs to an earlier call) and must not show.
     */

    if (corPtr != NULL
	    && (e = ResumerEntry(ts, ti->main, corPtr, base)) != NULL) {
	resumerAnchor = e->anchor;
	caller = e->cmd;
    }
    up = rel - 1;
    if (up > lo && stack[up].seq < stack[up - 1].seq) {
	if (stack[up].cmd != NULL) {
	    stack[up].cmd = NULL;
	}
	up--;
    }
    if (rel > lo) {
	caller = stack[up].cmd;
    }
    if (caller != NULL) {
	TraceCmd *key[2];
	int isNew;
	Tcl_HashEntry *h;

	key[0] = caller;
	key[1] = tc;
	h = Tcl_CreateHashEntry(&ts->edges, (char *) key, &isNew);
	Tcl_SetHashValue(h, (ClientData) ((uintptr_t)
		Tcl_GetHashValue(h) + 1));
    }

    /*
     * The call site, and the command last entered from it (see stale
     * entries in the file header).
     */

    TpInterpCallSiteFrame(interp, &site, &pos, &callerFrame, &proc);
    if (pos != 0) {
	SiteEntry *se = &ts->sites[SiteHash(pos)];

	if (se->pos != pos || se->cmd != tc) {
	    se->pos = 0;
	    __atomic_signal_fence(__ATOMIC_SEQ_CST);
	    se->cmd = tc;
	    __atomic_signal_fence(__ATOMIC_SEQ_CST);
	    se->pos = pos;
	}
    }

    /*
     * Frames pushed by C between the caller and this command (a proc
     * pushes its own frame: no need to look).
     */

    if (proc != NULL && rel > lo && caller != NULL
	    && caller->type != TP_TCL_PROC
	    && caller->type != TP_TCL_LAMBDA
	    && callerFrame != stack[up].frame) {
	via = ViaFrames(ts, interp, stack, rel, up, callerFrame, proc,
		&upShown);
    } else {
	proc = NULL;
    }

    ts->writingStack = stack;
    __atomic_store_n(&ts->writing, rel + 1, __ATOMIC_RELEASE);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    e = &stack[rel];
    e->cmd = tc;
    e->anchor = frame + ts->spDelta;
    e->site = site;
    e->pos = pos;
    e->resumer = resumerAnchor;
    e->frame = callerFrame;
    e->seq = ++ts->seq;
    e->shown = NULL;
    e->via = via;
    e->viaProc = proc;
    if (proc != NULL) {
	e->viaUp = caller;
	e->viaUpFrame = stack[up].frame;
	e->viaUpShown = upShown;
    }
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&ts->writing, 0, __ATOMIC_RELEASE);
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * CalibrateCmd --
 *
 *	Temporary command run once at start: its enter trace recorded
 *	TraceProc's frame address; here we find the SP of the
 *	TclNRRunCallbacks frame running us. Their difference is the delta.
 *
 * Results:
 *	TCL_OK.
 *
 * Side effects:
 *	Sets ts->spDelta and ts->calibrated.
 *
 *----------------------------------------------------------------------
 */

static int
CalibrateCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    TpTraceState *ts = cd;
    unw_context_t uc;
    unw_cursor_t cursor;
    unw_word_t ip, sp;
    int n = 0, sure;
    const TpTrampSite *site;

    (void) interp;
    (void) objc;
    (void) objv;
    if (ts->calFrame == 0) {
	return TCL_OK;
    }
    unw_getcontext(&uc);
    if (unw_init_local(&cursor, &uc) < 0) {
	return TCL_OK;
    }
    do {
	unw_get_reg(&cursor, UNW_REG_IP, &ip);
	site = TpTrampFind(ts->cfg, (uintptr_t) ip, n, &sure);
	if (site != NULL && (sure || site == TP_TRAMP_FN)) {
	    unw_get_reg(&cursor, UNW_REG_SP, &sp);
	    ts->spDelta = (uintptr_t) sp - ts->calFrame;
	    ts->calibrated = 1;
	    break;
	}
    } while (++n < 256 && unw_step(&cursor) > 0);
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * TpTraceStart --
 *
 *	Installs the trace on interp and its descendant interps, and
 *	calibrates the anchor delta.
 *
 * Results:
 *	The trace state, or NULL if calibration failed (no trace left).
 *
 * Side effects:
 *	Creates traces; briefly creates and deletes helper commands.
 *
 *----------------------------------------------------------------------
 */

TpTraceState *
TpTraceStart(
    Tcl_Interp *interp,
    const TpUnwindConfig *cfg,	/* Trampolines; kept while the trace
				 * lives. */
    int instances)		/* -instances. */
{
    TpTraceState *ts = calloc(1, sizeof(TpTraceState));
    Tcl_CmdInfo info;

    if (ts == NULL) {
	return NULL;
    }
    ts->interp = interp;
    ts->pending = 1;
    ts->cfg = cfg;
    ts->instances = instances;
    ts->sites = calloc(TP_TRACE_SITES, sizeof(SiteEntry));
    ts->coros = calloc(TP_TRACE_COROS, sizeof(CoroStack));
    ts->hints = calloc(TP_TRACE_HINTS, sizeof(uint16_t));
    if (ts->sites == NULL || ts->coros == NULL || ts->hints == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    Tcl_InitHashTable(&ts->byToken, TCL_ONE_WORD_KEYS);
    Tcl_InitHashTable(&ts->byName, TCL_STRING_KEYS);
    Tcl_InitHashTable(&ts->byCmd, TCL_STRING_KEYS);
    Tcl_InitHashTable(&ts->fams, TCL_STRING_KEYS);
    Tcl_InitHashTable(&ts->edges, (int) (2 * sizeof(TraceCmd *) / sizeof(int)));

    /*
     * Every proc has the same objProc; learn it from a throw-away proc.
     */

    Tcl_EvalEx(interp, "proc ::tclprof::Probe {} {}", -1, TCL_EVAL_GLOBAL);
    if (Tcl_GetCommandInfo(interp, "::tclprof::Probe", &info)) {
	ts->procObjProc = info.objProc;
    }
    Tcl_DeleteCommand(interp, "::tclprof::Probe");
    if (Tcl_GetCommandInfo(interp, "::apply", &info)) {
	ts->applyObjProc = info.objProc;
    }
    if (Tcl_GetCommandInfo(interp, "::interp", &info)) {
	ts->interpObjProc = info.objProc;
    }

    /*
     * And the Tcl_ObjType apply gives lambdas (not registered), from a
     * throw-away one.
     */

    {
	Tcl_Obj *objv[2];

	objv[0] = Tcl_NewStringObj("::apply", -1);
	objv[1] = Tcl_NewStringObj("{} {}", -1);
	Tcl_IncrRefCount(objv[0]);
	Tcl_IncrRefCount(objv[1]);
	if (Tcl_EvalObjv(interp, 2, objv, TCL_EVAL_GLOBAL) == TCL_OK
		&& objv[1]->typePtr != NULL
		&& strcmp(objv[1]->typePtr->name, "lambdaExpr") == 0) {
	    ts->lambdaType = objv[1]->typePtr;
	}
	Tcl_DecrRefCount(objv[0]);
	Tcl_DecrRefCount(objv[1]);
    }
    /*
     * Likewise TclOO objects' commands and their `my`, so that method
     * calls are named by method rather than by object.
     */

    if (Tcl_EvalEx(interp, "::oo::object create ::tclprof::ProbeObj", -1,
	    TCL_EVAL_GLOBAL) == TCL_OK) {
	if (Tcl_GetCommandInfo(interp, "::tclprof::ProbeObj", &info)) {
	    ts->objObjProc = info.objProc;
	}
	if (Tcl_EvalEx(interp, "info object namespace ::tclprof::ProbeObj",
		-1, TCL_EVAL_GLOBAL) == TCL_OK) {
	    Tcl_Obj *my = Tcl_ObjPrintf("%s::my",
		    Tcl_GetString(Tcl_GetObjResult(interp)));

	    Tcl_IncrRefCount(my);
	    if (Tcl_GetCommandInfo(interp, Tcl_GetString(my), &info)) {
		ts->myObjProc = info.objProc;
	    }
	    Tcl_DecrRefCount(my);
	}
	Tcl_EvalEx(interp, "::tclprof::ProbeObj destroy", -1, TCL_EVAL_GLOBAL);
    }
    ts->nextNreProc[0] = TpInterpNreProc(Tcl_FindCommand(interp,
	    "::oo::Helpers::next", NULL, TCL_GLOBAL_ONLY));
    ts->nextNreProc[1] = TpInterpNreProc(Tcl_FindCommand(interp,
	    "::oo::Helpers::nextto", NULL, TCL_GLOBAL_ONLY));
    Tcl_ResetResult(interp);

    /*
     * The procs and commands running when the trace starts: never
     * entered under it, shown (while they last) outside the commands it
     * sees, named as frames mode names them.
     */

    {
	int i, n = TpInterpStartFrames(interp, ts->base, TP_TRACE_BASE);

	for (i = 0; i < n; i++) {
	    TraceCmd *tc = ts->base[i].isCmd
		    ? StartCmd(ts, interp, ts->base[i].level)
		    : FrameCmd(ts, interp, ts->base[i].frame);

	    if (tc != NULL) {
		ts->base[ts->nBase] = ts->base[i];
		if (ts->base[i].isCmd) {
		    TpInterpCmdFrameKeys(&ts->base[ts->nBase]);
		}
		ts->baseCmd[ts->nBase++] = tc;
	    }
	}
	Tcl_ResetResult(interp);
    }

    AddInterp(ts, interp);
    Tcl_CreateObjCommand(interp, "::tclprof::Calibrate", CalibrateCmd, ts,
	    NULL);
    Tcl_EvalEx(interp, "::tclprof::Calibrate", -1, TCL_EVAL_GLOBAL);
    Tcl_DeleteCommand(interp, "::tclprof::Calibrate");
    Tcl_ResetResult(interp);
    if (!ts->calibrated) {
	TpTraceStop(ts, NULL);
	return NULL;
    }
    RescanInterps(ts);
    return ts;
}

/*
 * CallName: the name tc's calls are counted under: its family's folded
 * name if the family was folded (TraceName), as the profile names its
 * frames; *buf is to free.
 */

static const char *
CallName(
    TpTraceState *ts,
    const TraceCmd *tc,
    char **buf)
{
    size_t len;
    Tcl_HashEntry *h;

    *buf = FamilyOf(ts, tc->type, tc->name, (size_t) tc->nameLen, tc->place,
	    &len, 0, &h);
    if (*buf != NULL && h != NULL
	    && (intptr_t) Tcl_GetHashValue(h) >= ts->instances) {
	return *buf;
    }
    free(*buf);
    *buf = NULL;
    return tc->name;
}

/*
 *----------------------------------------------------------------------
 *
 * TpTraceStop --
 *
 *	Removes the trace, moves its call counts into profile p (if not
 *	NULL) and frees the state. The handler must be quiesced.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Deletes the trace; frees memory.
 *
 *----------------------------------------------------------------------
 */

void
TpTraceStop(
    TpTraceState *ts,
    TpProfile *p)
{
    TraceCmd *tc, *next;
    Tcl_HashSearch search;
    Tcl_HashEntry *h;
    int i;

    if (ts == NULL) {
	return;
    }
    for (i = 0; i < ts->nInterps; i++) {
	TraceInterp *ti = &ts->interps[i];

	if (ti->interp != NULL) {
	    Tcl_DeleteTrace(ti->interp, ti->trace);
	    if (i > 0) {
		Tcl_DontCallWhenDeleted(ti->interp, ChildDeleted, ti);
	    }
	}
	free(ti->main);
    }
    if (p != NULL) {
	char *b0, *b1;

	for (tc = ts->all; tc != NULL; tc = tc->nextAll) {
	    if (tc->calls > 0) {
		TpProfileAddCalls(p, CallName(ts, tc, &b1), tc->type, NULL,
			tc->calls);
		free(b1);
	    }
	}
	for (h = Tcl_FirstHashEntry(&ts->edges, &search); h != NULL;
		h = Tcl_NextHashEntry(&search)) {
	    TraceCmd **key = (TraceCmd **) Tcl_GetHashKey(&ts->edges, h);

	    TpProfileAddCalls(p, CallName(ts, key[1], &b1), key[1]->type,
		    CallName(ts, key[0], &b0),
		    (uint64_t) (uintptr_t) Tcl_GetHashValue(h));
	    free(b0);
	    free(b1);
	}
    }
    for (tc = ts->all; tc != NULL; tc = next) {
	next = tc->nextAll;
	free(tc->name);
	free(tc->file);
	free(tc->place);
	free(tc);
    }
    for (h = Tcl_FirstHashEntry(&ts->byToken, &search); h != NULL;
	    h = Tcl_NextHashEntry(&search)) {
	TokenRef *ref = Tcl_GetHashValue(h);

	free(ref->tail);
	free(ref);
    }
    Tcl_DeleteHashTable(&ts->byToken);
    Tcl_DeleteHashTable(&ts->byName);
    Tcl_DeleteHashTable(&ts->byCmd);
    Tcl_DeleteHashTable(&ts->fams);
    Tcl_DeleteHashTable(&ts->edges);
    for (i = 0; i < ts->nCoros; i++) {
	free(ts->coros[i].e);
    }
    free(ts->coros);
    free(ts->hints);
    free(ts->sites);
    free(ts);
}

/*
 *----------------------------------------------------------------------
 *
 * EmitCmd --
 *
 *	Appends one Tcl frame for command tc to the slot.
 *
 * Results:
 *	0 if the slot is full (TCLTRUNC set), else 1.
 *
 * Side effects:
 *	Fills slot tcl[] and strings.
 *
 * Signal safety:
 *	Handler only: reads our own immutable names.
 *
 *----------------------------------------------------------------------
 */

static int
EmitCmd(
    const TraceCmd *tc,
    uintptr_t anchor,
    const TpRing *ring,
    TpSlot *slot)
{
    TpTclRaw *out = TpSlotTcl(ring, slot);
    TpTclRaw *r;
    int k, fileLen = tc->fileLen;

    if (slot->nTcl >= ring->maxTcl) {
	slot->flags |= TP_SLOT_TCLTRUNC;
	return 0;
    }
    r = &out[slot->nTcl];
    r->key = (uintptr_t) tc;
    r->anchor = anchor;
    r->line = fileLen ? tc->line : 0;
    r->type = (uint8_t) tc->type;
    r->flags = 0;
    r->fileOff = r->fileLen = 0;

    /*
     * Recursion repeats names: reuse the bytes already copied.
     */

    for (k = (int) slot->nTcl - 1; k >= 0 && k >= (int) slot->nTcl - 8; k--) {
	if (out[k].key == r->key) {
	    r->nameOff = out[k].nameOff;
	    r->nameLen = out[k].nameLen;
	    r->fileOff = out[k].fileOff;
	    r->fileLen = out[k].fileLen;
	    break;
	}
    }
    if (k < 0 || k < (int) slot->nTcl - 8) {
	TpSlotPutStr(ring, slot, tc->name, (size_t) tc->nameLen,
		&r->nameOff, &r->nameLen);
	if (fileLen > 0) {
	    TpSlotPutStr(ring, slot, tc->file, (size_t) fileLen,
		    &r->fileOff, &r->fileLen);
	}
    }
    slot->nTcl++;
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * EmitNextMethod --
 *
 *	Appends the frame of the method not written in Tcl that [next] is
 *	running above the innermost entry, if any (TpInterpNextMethod says
 *	how it is recognised): no trace sees it. It runs in the trampoline
 *	of the entry (no anchor: it follows it).
 *
 * Results:
 *	0 if the slot is full (TCLTRUNC set), else 1.
 *
 * Side effects:
 *	May fill one slot tcl[] entry and its name.
 *
 * Signal safety:
 *	Handler only; TpInterpNextMethod is signal-safe.
 *
 *----------------------------------------------------------------------
 */

static int
EmitNextMethod(
    Tcl_Interp *interp,
    void *entryFrame,
    int how,
    const TpRing *ring,
    TpSlot *slot)
{
    char name[TP_NAME_MAX];
    uintptr_t key;
    int len = TpInterpNextMethod(interp, entryFrame, how, name, TP_NAME_MAX,
	    &key);
    TpTclRaw *r;

    if (len == 0) {
	return 1;
    }
    if (slot->nTcl >= ring->maxTcl) {
	slot->flags |= TP_SLOT_TCLTRUNC;
	return 0;
    }
    r = &TpSlotTcl(ring, slot)[slot->nTcl];
    memset(r, 0, sizeof(TpTclRaw));
    r->key = key;
    r->type = TP_TCL_METHOD;
    TpSlotPutStr(ring, slot, name, (size_t) len, &r->nameOff, &r->nameLen);
    slot->nTcl++;
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * CopyStack --
 *
 *	Appends shadow entries [from, to] of one stack, innermost first, to
 *	the slot. With checkTop, entry `to` is the innermost of the whole
 *	Tcl stack: if stale, it is replaced by the command being entered
 *	when sites[] knows it, else dropped (see the file header).
 *	resumer, for a coroutine's stack, is the anchor of the command
 *	resuming it now: entries written under another resumer lose their
 *	anchor.
 *
 * Results:
 *	0 if the slot is full, else 1.
 *
 * Side effects:
 *	Fills slot tcl[] and strings; sets TCLTRUNC when full.
 *
 * Signal safety:
 *	Handler only: reads our own preallocated arrays and immutable names,
 *	and the interp's CmdFrames through TpInterpCallSiteLive.
 *
 *----------------------------------------------------------------------
 */

static int
CopyStack(
    TpTraceState *ts,
    Tcl_Interp *interp,
    const ShadowEntry *stack,
    void *corPtr,		/* Coroutine owning stack, NULL for main. */
    int from,
    int to,
    int checkTop,
    uintptr_t resumer,
    const TpRing *ring,
    TpSlot *slot)
{
    int lvl, skip = -1, innermost = checkTop;
    uintptr_t now;

    if (ts->writing != 0 && ts->writingStack == stack) {
	skip = ts->writing - 1;
    }
    for (lvl = to; lvl >= from; lvl--) {
	const ShadowEntry *e = &stack[lvl];
	const TraceCmd *tc = e->shown ? e->shown : e->cmd;
	const TraceCmd *via = e->via;
	uintptr_t anchor = e->anchor;

	if (lvl == skip || tc == NULL
		|| (lvl > from && e->seq < stack[lvl - 1].seq)) {
	    continue;		/* Being written, empty, or a hole. */
	}
	if (corPtr != NULL && e->resumer != resumer) {
	    anchor = 0;
	}
	if (checkTop && lvl == to
		&& !TpInterpCallSiteLive(interp, e->site, e->pos, &now)) {
	    const SiteEntry *se = &ts->sites[SiteHash(now)];

	    if (now == 0 || se->pos != now || (tc = se->cmd) == NULL) {
		continue;
	    }
	} else if (innermost && (e->cmd->isNext
		|| e->cmd->type == TP_TCL_METHOD)
		&& !EmitNextMethod(interp, e->frame, e->cmd->isNext ? 2 : 1,
			ring, slot)) {
	    return 0;
	}
	innermost = 0;
	if (!EmitCmd(tc, anchor, ring, slot)
		|| (via != NULL && !EmitCmd(via, anchor, ring, slot))) {
	    return 0;
	}
    }
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * CaptureInterp --
 *
 *	Copies the shadow stacks of one interp, cut at its current level,
 *	into the slot (innermost first): the running coroutine's, then
 *	under its marker those of the contexts that resumed it, down to the
 *	interp's main stack.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Fills the slot's Tcl frames.
 *
 * Signal safety:
 *	Handler only; reads numLevels, the running coroutines and the
 *	CmdFrames through interp.c's signal-safe accessors, and our own
 *	arrays.
 *
 *----------------------------------------------------------------------
 */

static void
CaptureInterp(
    TpTraceState *ts,
    const TraceInterp *ti,
    Tcl_Interp *interp,
    const TpRing *ring,
    TpSlot *slot)
{
    int hi = TpInterpNumLevels(interp), base = 0, ctx, top = 1;
    int first = (int) slot->nTcl;
    void *corPtr = TpInterpCoroutine(interp, &base);

    for (ctx = 0; corPtr != NULL && ctx < TP_TRACE_COROS; ctx++) {
	CoroStack *cs = FindCoro(ts, corPtr);
	const ShadowEntry *re;
	void *outer;
	int outerBase;

	if (!TpInterpCoroutineCaller(corPtr, &outer, &outerBase)
		|| hi < base - 1) {
	    slot->flags |= TP_SLOT_TCLERR;
	    return;
	}
	re = ResumerEntry(ts, ti->main, corPtr, base);
	if (cs != NULL) {
	    int nLevels = cs->nLevels;
	    const ShadowEntry *e;

	    __atomic_signal_fence(__ATOMIC_SEQ_CST);
	    e = cs->e;
	    if (hi - base >= nLevels) {
		hi = base + nLevels - 1;
		if (nLevels == TP_TRACE_LEVELS) {
		    slot->flags |= TP_SLOT_TCLTRUNC;
		}
	    }
	    if (!CopyStack(ts, interp, e, corPtr, 0, hi - base, top,
		    re ? re->anchor : 0, ring, slot)
		    || (cs->marker != NULL && !EmitCmd(cs->marker,
			    re ? re->anchor : 0, ring, slot))) {
		return;
	    }

	    /*
	     * The marker stands for the resuming command.
	     */

	    hi = base - 1;
	} else {
	    hi = base;
	}
	top = 0;
	corPtr = outer;
	base = outerBase;
    }
    if (hi - base >= TP_TRACE_LEVELS) {
	hi = base + TP_TRACE_LEVELS - 1;
	slot->flags |= TP_SLOT_TCLTRUNC;
    }
    if (corPtr == NULL
	    && CopyStack(ts, interp, ti->main, NULL, 1, hi, top, 0, ring, slot)
	    && ti == &ts->interps[0]) {
	const TpTclRaw *r = TpSlotTcl(ring, slot);
	uintptr_t anchor = 0;
	int i;

	/*
	 * The frames active at start run in the trampoline of the
	 * outermost command traced (they called it).
	 */

	for (i = (int) slot->nTcl - 1; i >= first && anchor == 0; i--) {
	    anchor = r[i].anchor;
	}
	for (i = 0; i < ts->nBase; i++) {
	    const TpStartFrame *sf = &ts->base[i];

	    if ((sf->isCmd ? TpInterpCmdFrameLive(interp, sf)
		    : TpInterpFrameLive(interp, sf->frame))
		    && !EmitCmd(ts->baseCmd[i], anchor, ring, slot)) {
		break;
	    }
	}
    }
}

/*
 *----------------------------------------------------------------------
 *
 * OrderByAnchor --
 *
 *	Interleaves the frames of several interps, captured one interp
 *	after another (blocks[k] is where interp k's frames start; each
 *	block is innermost first), into one stack, innermost first. A
 *	child interp's frames run in trampolines nested in the command of
 *	its parent that entered it, and a parent's can run in trampolines
 *	nested in its child's (an alias, a C command evaluating in the
 *	parent): anchors are trampoline SPs, and inner trampolines have
 *	lower SPs. A frame without an anchor first takes the one of the
 *	next outer frame of its interp (merge.c would give it that frame's
 *	trampoline anyway), so that it stays with its interp's frames.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Reorders the slot's Tcl frames; fills their missing anchors.
 *
 * Signal safety:
 *	Handler only: our own slot. Stable insertion sort: blocks are
 *	mostly in order already (children are captured first).
 *
 *----------------------------------------------------------------------
 */

static void
OrderByAnchor(
    const TpRing *ring,
    TpSlot *slot,
    const int *blocks,
    int nBlocks)
{
    TpTclRaw *r = TpSlotTcl(ring, slot);
    int n = (int) slot->nTcl, b, i, j;

    for (b = 0; b < nBlocks; b++) {
	int end = (b + 1 < nBlocks) ? blocks[b + 1] : n;
	uintptr_t outer = 0;

	for (i = end - 1; i >= blocks[b]; i--) {
	    if (r[i].anchor == 0) {
		r[i].anchor = outer;
	    } else {
		outer = r[i].anchor;
	    }
	}
	if (outer == 0 && end > blocks[b]) {
	    return;		/* No anchor at all: leave the order. */
	}
    }
    for (i = 1; i < n; i++) {
	TpTclRaw t = r[i];

	for (j = i; j > 0 && r[j - 1].anchor > t.anchor; j--) {
	    r[j] = r[j - 1];
	}
	r[j] = t;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * TpTraceCapture --
 *
 *	Copies the shadow stacks of the profiled interp and of its
 *	descendants that are evaluating into the slot, innermost first.
 *	While one of them runs an execution trace's callback, which no
 *	object trace sees, the sample is taken as frames mode takes it
 *	(TpInterpCapture reads the interps' own frames).
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Fills the slot's Tcl frames.
 *
 * Signal safety:
 *	Handler only; reads the traced interps' numLevels and our own
 *	arrays. A child interp is read only while its slot is published
 *	(ChildDeleted unpublishes it before Tcl frees the interp).
 *
 *----------------------------------------------------------------------
 */

void
TpTraceCapture(
    TpTraceState *ts,
    Tcl_Interp *interp,
    const TpRing *ring,
    TpSlot *slot)
{
    int blocks[TP_TRACE_INTERPS], nBlocks = 0, i;
    int n = ts->nInterps;

    if (n > TP_TRACE_INTERPS) {
	n = TP_TRACE_INTERPS;
    }
    for (i = 0; i < n; i++) {
	Tcl_Interp *ip = ts->interps[i].interp;

	if (ip != NULL && (i == 0 || TpInterpNumLevels(ip) > 0)
		&& TpInterpTraceInProgress(ip)) {
	    TpInterpCapture(interp, ring, slot);
	    return;
	}
    }
    for (i = n - 1; i >= 0; i--) {
	const TraceInterp *ti = &ts->interps[i];
	Tcl_Interp *ip = ti->interp;
	uint32_t before = slot->nTcl;

	if (ip == NULL || (i > 0 && TpInterpNumLevels(ip) <= 0)) {
	    continue;
	}
	CaptureInterp(ts, ti, ip, ring, slot);
	if (slot->nTcl > before) {
	    blocks[nBlocks++] = (int) before;
	}
    }
    if (nBlocks > 1) {
	OrderByAnchor(ring, slot, blocks, nBlocks);
    }

    /*
     * A frame whose trampoline lies deeper than every one on the C stack
     * is being entered from C (its trampoline is not there yet): it goes
     * below the C frames calling it, not under the outer trampoline.
     */

    if (slot->nTramp > 0) {
	const TpTramp *tramps = TpSlotTramps(ring, slot);
	TpTclRaw *r = TpSlotTcl(ring, slot);
	uint32_t k;

	for (k = 0; k < slot->nTcl && r[k].anchor != 0
		&& r[k].anchor != TP_ANCHOR_LEAF
		&& r[k].anchor < tramps[0].sp; k++) {
	    r[k].anchor = TP_ANCHOR_LEAF;
	}
    }
}
