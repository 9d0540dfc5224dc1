/*
 * interp.c --
 *
 *	The one file of tclprof that reads Tcl's internal structures
 *	(tclInt.h, tclCompile.h, tclOOInt.h). It implements frames mode: the
 *	signal handler copies the interpreter's Tcl stack and ties each Tcl
 *	frame to the TclNRRunCallbacks frame (the NRE trampoline) of the C
 *	stack that runs it. It also finds, once, which callee-saved register
 *	holds the trampoline's rootPtr in this build of libtcl.
 *
 * The data model.
 *
 *	Three chains describe a running Tcl 8.6 interpreter:
 *	  - CallFrames (iPtr->framePtr, ->callerPtr): procs, lambdas, methods
 *	    and namespace-eval scopes, in true call order (varFramePtr and
 *	    callerVarPtr follow [uplevel]: never used here);
 *	  - CmdFrames (iPtr->cmdFramePtr, ->nextPtr): one per script level
 *	    that is calling out, each knowing the command it runs (bytecode
 *	    pc, or source text for Tcl_EvalEx) and the CallFrame current when
 *	    the level started (cf->framePtr);
 *	  - NRE callbacks (execEnvPtr->callbackPtr, ->nextPtr, newest first).
 *	The CallFrames pushed between two consecutive CmdFrames are the
 *	frames created by the outer CmdFrame's command: we walk both chains
 *	together, innermost first, and emit a CMD frame for a CmdFrame only
 *	when its command pushed no CallFrame (a proc call is shown as the
 *	proc, not as the word that called it), or when the CallFrame runs
 *	in a nested trampoline (lsort -command: the C command in between is
 *	a real level). A CMD frame is named by its command's first word as
 *	written; between a CmdFrame's push and its proc's CallFrame (command
 *	lookup, argument setup) the word is all there is. A coroutine has
 *	its own chains, ending at the global frame and NULL, and its own
 *	callback list; corPtr->caller and corPtr->callerEEPtr continue them
 *	in the resumer, under a "coroutine name" marker frame that stands
 *	for the resuming command. A child interp has its own Interp: the
 *	evaluating children of the sampled interp (and its evaluating
 *	ancestors) are found through iPtr->interpInfo and captured too.
 *
 *	Lines: a frame's line is the one its code is running, from the
 *	bytecode pc of its outermost CmdFrame and TIP 280's ExtCmdLoc;
 *	file is the sourced file. A proc whose bytecode runs inline (the
 *	leaf) has no CmdFrame: line 0, TP_RAW_LEAF.
 *
 * The ownership rule (frame -> trampoline).
 *
 *	Every trampoline keeps rootPtr, the callback on top when its C->Tcl
 *	entry started, and runs every callback pushed above it. So the
 *	callback list, read newest first, is cut by the roots of the
 *	trampolines found on the C stack: a callback belongs to the
 *	trampoline whose root is the NEXT root met going down the list (the
 *	root itself belongs further out). This is robust to trampolines of
 *	other interpreters (child interps) whose roots are never met. Each
 *	Tcl frame is placed in that list by a *witness*, a callback pushed
 *	by the same trampoline while the frame is alive, recognised by its
 *	data words (not by its function, which is static in libtcl):
 *	  bytecode CmdFrame	TEBCresume, data[0] == the TEBCdata that embeds
 *				the CmdFrame (pushed by TEBC_YIELD on call-out)
 *	  list-eval CmdFrame	TEOEx_ListCallback, data[1] == the CmdFrame
 *	  proc CallFrame	InterpProcNR2, data[0] == framePtr->objv[0]
 *	  lambda CallFrame	InterpProcNR2, data[0] == framePtr->objv[1]
 *	  method CallFrame	FinalizePMCall, data[1] == the CallContext
 *	  namespace eval	NsEval_Callback, data[0] == framePtr->nsPtr
 *	  coroutine marker	NRCoroutineCallerCallback, data[0] == corPtr
 *	Frames and witnesses come in the same order, so one pass over the
 *	callbacks matches them (with a small lookahead in case a witness is
 *	missing). Frames without a witness (Tcl_EvalEx levels, frames caught
 *	in the few instructions before their callback is pushed) take
 *	max(inner neighbour, outer neighbour - 1): a Tcl_EvalEx runs its
 *	command in a trampoline nested directly in the one that called the C
 *	code. The anchor stored is the owning trampoline's root value (see
 *	ANCHOR). With fewer than two trampolines nothing needs placing and
 *	the callbacks are not read.
 *
 * Safety. TpInterpCapture runs in a signal handler that may interrupt
 *	the interpreter anywhere: no Tcl call, no allocation, no refCount;
 *	every pointer is checked for range and alignment before it is read,
 *	every walk is bounded, cross-links are checked where they are cheap
 *	(cf->level decreases by one, a Command's hash entry belongs to its
 *	namespace's table, a TEBCdata's codePtr equals its CmdFrame's). A
 *	wrong or truncated sample in the fragile windows (coroutine switch,
 *	a frame being pushed) is accepted; a crash is not.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include <tclInt.h>
#include <tclCompile.h>
#include <tclOOInt.h>
#include "tclprofInt.h"
#include <string.h>
#include <unistd.h>
#include <dlfcn.h>
#include <link.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

/*
 * Layout prefixes of private structs of libtcl 8.6 (checked against the
 * 8.6.13 sources; TpInterpCheck refuses other minor versions).
 * tclExecute.c: TEBCdata starts {ByteCode *, ptrdiff_t *, Tcl_Obj *,
 * CmdFrame cmdFrame, ...}: cmdFrame sits at 24 bytes on LP64.
 * tclInterp.c: InterpInfo is {Parent {Tcl_HashTable childTable; Target *},
 * Child {Tcl_Interp *parentInterp; Tcl_HashEntry *; Tcl_Interp
 * *childInterp; ...}}, and childTable's values point at a Child.
 */

typedef struct TpTebcPrefix {
    ByteCode *codePtr;
    ptrdiff_t *catchTop;
    Tcl_Obj *auxObjList;
    CmdFrame cmdFrame;
} TpTebcPrefix;

typedef struct TpChildPrefix {
    Tcl_Interp *parentInterp;
    Tcl_HashEntry *childEntryPtr;
    Tcl_Interp *childInterp;
} TpChildPrefix;

typedef struct TpInterpInfoPrefix {
    Tcl_HashTable childTable;
    void *targetsPtr;
    TpChildPrefix child;
} TpInterpInfoPrefix;

#define TEBC_OFFSET	offsetof(TpTebcPrefix, cmdFrame)

typedef char TpTebcLayoutCheck[(TEBC_OFFSET == 3 * sizeof(void *)) ? 1 : -1];

/*
 * The anchor written for a frame owned by trampoline t: its stack
 * pointer, which merge.c matches in both modes. The root register decides
 * ownership but cannot be the anchor: roots are not unique (each interp's
 * outermost entry starts with an empty callback list, root NULL, so a
 * child interp's frames and its parent's outermost ones would share
 * anchor 0), while a trampoline's SP is.
 */

#define ANCHOR(t)	((t)->sp)

/*
 * Bounds of every walk in the handler.
 */

#define MAX_CALLBACKS	32768	/* Callbacks read per interp per sample. */
#define MAX_CHAIN	4096	/* CallFrames/CmdFrames per context. */
#define MAX_CONTEXTS	TP_MAX_DEPTH	/* Nested coroutines per interp: each
				 * emits at least its marker, so the slot
				 * fills first. */
#define MAX_INTERPS	8	/* Active interps (parent + children). */
#define MAX_CHILDREN	256	/* Hash entries scanned per childTable. */
#define MAX_CREATORS	64	/* Commands checked for a nested entry. */
#define CREATOR_STEPS	4096	/* Callbacks read for all of them. */
#define MAX_BUCKET	64	/* Hash chain length read. */
#define MAX_COMMANDS	20000	/* Commands decoded to map a pc to a line. */
#define LOOKAHEAD	2	/* Frames tried per callback (missing
				 * witnesses). */
#define WORD_MAX	64	/* Longest command word kept for CMD. */

/*
 * Transient use of TpTclRaw.spare during a capture.
 */

#define SP_WANT		0x8000	/* Witness wanted: anchor = value,
				 * low 2 bits = data index. */
#define SP_PENDING	0x4000	/* Witness met; segment not closed yet. */
#define SP_KNOWN	0x2000	/* Low bits = segment index. */
#define SP_GUESS	0x1000	/* Segment guessed by Resolve (no
				 * witness). */
#define SP_SEG		0x00ff

/*
 * The capture state, on the handler's stack.
 */

typedef struct Cache {
    const void *k1, *k2;	/* (codePtr, pc) or (key, 0). */
    int line;
    uint16_t off, len;		/* Name or file in the string area. */
    uint16_t foff, flen;
} Cache;

typedef struct Cap {
    const TpRing *ring;
    TpSlot *slot;
    TpTclRaw *raw;		/* Slot's Tcl frames. */
    int n, max;
    const TpTramp *tramp;
    int nTramp;
    Interp *iPtr;		/* Interp being walked. */
    const Tcl_ObjType *bcType;	/* "bytecode" type, once seen. */
    int full;			/* Stopped at ring->maxTcl. */
    unsigned nextCache;
    Cache cache[16];
    uint64_t rootMet;		/* Bit k: tramp[k].root was met in a
				 * callback list, so it is a live record. */
    Interp *segInterp[SP_SEG + 1];/* The interp whose frames a segment
				 * holds, NULL if none. */
    int nCreators;
    struct {
	CmdFrame *cf;		/* A command that pushed CallFrames... */
	int raw;		/* ... the outermost of which is raw[raw]; */
	NRE_callback *cb;	/* that frame's witness callback. */
    } creators[MAX_CREATORS];
} Cap;

/*
 * What calibration learned about this libtcl (one per process): the static
 * NRE callback functions that frames mode recognises by address, and the
 * commands whose own frames already name them. Written before any handler
 * that reads them is installed.
 */

static struct {
    Tcl_NRPostProc *dispatch;	/* Runs a command's objProc or nreProc:
				 * data = {proc, clientData, objc, objv}. */
    Tcl_NRPostProc *nrCommand;	/* Pushed below each command evaluated. */
    Tcl_NRPostProc *tebcResume;	/* A bytecode level that called out:
				 * data[0] = its TEBCdata. */
    struct {
	Tcl_NRPostProc *proc;	/* Pushed just before a TclOO method's
				 * callProc (ResetFilterFlags,
				 * SetFilterFlags; FinalizeOONext and
				 * FinalizeOONextFilter for a compiled
				 * [next]) ... */
	int index;		/* ... with its CallContext in data[index]. */
    } ctxHolder[4];
    Tcl_ObjCmdProc *framed[3];	/* objProcs of procs, TclOO objects and
				 * their [my]: shown by their CallFrames
				 * or methods, never as commands. */
    const Tcl_ObjType *cmdNameType;
} known;

typedef struct ResolvedCmdNamePrefix {	/* tclObj.c's ResolvedCmdName. */
    Command *cmdPtr;
} ResolvedCmdNamePrefix;

typedef struct BcInfo {		/* What a pc tells about its command. */
    const char *word;		/* First word of the command. */
    int wordLen;
    int line;
    const char *file;
    int fileLen;
} BcInfo;

/*
 *----------------------------------------------------------------------
 *
 * Ok --
 *
 *	The cheap pointer check done before every dereference in the
 *	handler: not in the first page, in user space (x86_64: below
 *	2^47), aligned. It cannot prove the memory is mapped; the walks
 *	only follow pointers from live structures, so this catches NULLs,
 *	garbage from reused stack memory and torn values.
 *
 * Results:
 *	1 if p may be read.
 *
 * Side effects:
 *	None.
 *
 * Signal safety: safe.
 *
 *----------------------------------------------------------------------
 */

static inline int
Ok(
    const void *p,
    uintptr_t align)
{
    uintptr_t u = (uintptr_t) p;

    return u >= 4096 && u < ((uintptr_t) 1 << 47) && !(u & (align - 1));
}
#define OKP(p)	Ok((p), sizeof(void *))

/*
 *----------------------------------------------------------------------
 *
 * ObjBytes --
 *
 *	The string rep of a Tcl_Obj, if it has one and looks sane.
 *
 * Results:
 *	Pointer to the bytes (length in *lenPtr), or NULL.
 *
 * Side effects:
 *	None: never generates a string rep.
 *
 * Signal safety: safe.
 *
 *----------------------------------------------------------------------
 */

static const char *
ObjBytes(
    Tcl_Obj *objPtr,
    int *lenPtr)
{
    if (!OKP(objPtr) || !Ok(objPtr->bytes, 1) || objPtr->length < 0
	    || objPtr->length > (1 << 28)) {
	return NULL;
    }
    *lenPtr = objPtr->length;
    return objPtr->bytes;
}

/*
 * A name being built on the handler stack before one copy to the slot.
 */

typedef struct Name {
    char b[TP_NAME_MAX];
    int n;
} Name;

/*
 *----------------------------------------------------------------------
 *
 * NameAdd --
 *
 *	Appends len bytes of s (or up to its NUL if len is -1) to a Name,
 *	cut at TP_NAME_MAX.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Fills nm.
 *
 * Signal safety: safe.
 *
 *----------------------------------------------------------------------
 */

static void
NameAdd(
    Name *nm,
    const char *s,
    int len)			/* -1: NUL-terminated. */
{
    if (!Ok(s, 1)) {
	return;
    }
    while (nm->n < TP_NAME_MAX && len != 0 && (len > 0 || *s)) {
	nm->b[nm->n++] = *s++;
	len -= (len > 0);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CmdName --
 *
 *	Appends "::ns::name" for a Command by copying its namespace's
 *	fullName and its hash key (Tcl_GetCommandFullName allocates).
 *
 * Results:
 *	1 if the Command looked valid, else 0 (nothing appended).
 *
 * Side effects:
 *	None.
 *
 * Signal safety: safe.
 *
 *----------------------------------------------------------------------
 */

static int
CmdName(
    Command *cmdPtr,
    Name *nm)
{
    Tcl_HashEntry *hPtr;
    Namespace *nsPtr;
    const char *full;

    if (!OKP(cmdPtr) || !OKP(hPtr = cmdPtr->hPtr)
	    || !OKP(nsPtr = cmdPtr->nsPtr)
	    || hPtr->tablePtr != &nsPtr->cmdTable || !Ok(full = nsPtr->fullName, 1)) {
	return 0;
    }
    NameAdd(nm, full, -1);
    if (!(full[0] == ':' && full[1] == ':' && full[2] == '\0')) {
	NameAdd(nm, "::", 2);
    }
    NameAdd(nm, hPtr->key.string, -1);
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * HashFindOneWord --
 *
 *	Read-only Tcl_FindHashEntry for a TCL_ONE_WORD_KEYS table, with the
 *	index function of tclHash.c (RANDOM_INDEX of the truncated key).
 *	The interrupted code may be inside RebuildTable: then the chains
 *	are half moved and the lookup may miss, but buckets always points
 *	at live memory.
 *
 * Results:
 *	The entry's value, or NULL.
 *
 * Side effects:
 *	None.
 *
 * Signal safety: safe.
 *
 *----------------------------------------------------------------------
 */

static void *
HashFindOneWord(
    Tcl_HashTable *tablePtr,
    const void *key)
{
    Tcl_HashEntry *hPtr;
    unsigned long index;
    int i;

    if (!OKP(tablePtr) || tablePtr->keyType != TCL_ONE_WORD_KEYS
	    || !OKP(tablePtr->buckets) || tablePtr->numBuckets <= 0
	    || (Tcl_Size) tablePtr->mask != tablePtr->numBuckets - 1) {
	return NULL;
    }
    index = ((((unsigned long) PTR2UINT(key)) * 1103515245UL)
	    >> tablePtr->downShift) & tablePtr->mask;
    for (hPtr = tablePtr->buckets[index], i = 0; i < MAX_BUCKET && OKP(hPtr);
	    hPtr = hPtr->nextPtr, i++) {
	if (hPtr->key.oneWordValue == key) {
	    return hPtr->clientData;
	}
    }
    return NULL;
}

/*
 *----------------------------------------------------------------------
 *
 * Decode1, FirstWord, BcDecode --
 *
 *	For a ByteCode and a pc in it, finds the command whose code
 *	encloses pc (the decoding of GetSrcInfoForPc in tclExecute.c), its
 *	first word, and its line and file from the ExtCmdLoc that TIP 280
 *	keeps in iPtr->lineBCPtr. With pc NULL, only the file and the
 *	script's first line. Decode1 reads one entry of the compressed
 *	command location map; FirstWord cuts a command's first word.
 *
 * Results:
 *	BcDecode: 1 and *infoPtr filled (line 0, file NULL when unknown), or 0 when
 *	codePtr/pc do not look valid.
 *
 * Side effects:
 *	None.
 *
 * Signal safety: safe; O(commands before pc), capped at MAX_COMMANDS.
 *
 *----------------------------------------------------------------------
 */

static int
Decode1(
    unsigned char **pp)
{
    unsigned char *p = *pp;
    int v;

    if (*p == 0xFF) {
	v = TclGetInt4AtPtr(p + 1);
	*pp = p + 5;
    } else {
	v = TclGetInt1AtPtr(p);
	*pp = p + 1;
    }
    return v;
}

static void
FirstWord(
    const char *s,
    int len,
    const char **wordPtr,
    int *wordLen)
{
    const char *end = s + (len < 4096 ? len : 4096), *w;

    while (s < end && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')) {
	s++;
    }
    for (w = s; s < end && *s != ' ' && *s != '\t' && *s != '\n'
	    && *s != '\r' && *s != ';' && s - w < WORD_MAX; s++) {
    }
    *wordPtr = w;
    *wordLen = s - w;
}

/*
 * TpInterpFirstWord: FirstWord for trace mode, which names the commands
 * running at start as frames mode names CMD frames.
 */

void
TpInterpFirstWord(
    const char *s,
    int len,
    const char **wordPtr,
    int *wordLen)
{
    FirstWord(s, len, wordPtr, wordLen);
}

static int
BcDecode(
    Interp *iPtr,
    ByteCode *codePtr,
    const unsigned char *pc,	/* NULL: only the file is wanted. */
    BcInfo *infoPtr)
{
    unsigned char *cd, *cl, *sd, *sl;
    int pcOff, i, nCmd, codeOff = 0, srcOff = 0, codeLen, srcLen;
    int best = -1, bestDist = INT_MAX, bestSrc = 0, bestLen = 0;
    ExtCmdLoc *eclPtr;
    ECL *locPtr = NULL;

    memset(infoPtr, 0, sizeof(BcInfo));
    if (!OKP(codePtr) || !OKP(codePtr->codeStart)
	    || codePtr->numCodeBytes <= 0 || codePtr->numSrcBytes < 0) {
	return 0;
    }
    eclPtr = HashFindOneWord(iPtr->lineBCPtr, codePtr);
    if (!OKP(eclPtr)) {
	eclPtr = NULL;
    } else if (eclPtr->type == TCL_LOCATION_SOURCE) {
	infoPtr->file = ObjBytes(eclPtr->path, &infoPtr->fileLen);
    }
    if (pc == NULL) {
	infoPtr->line = eclPtr ? eclPtr->start : 0;
	return 1;
    }
    pcOff = pc - codePtr->codeStart;
    nCmd = codePtr->numCommands;
    if (pcOff < 0 || pcOff >= codePtr->numCodeBytes || nCmd < 0
	    || nCmd > MAX_COMMANDS || nCmd > codePtr->numCodeBytes
	    || !Ok(cd = codePtr->codeDeltaStart, 1)
	    || !Ok(cl = codePtr->codeLengthStart, 1)
	    || !Ok(sd = codePtr->srcDeltaStart, 1)
	    || !Ok(sl = codePtr->srcLengthStart, 1)) {
	return 0;
    }
    for (i = 0; i < nCmd; i++) {
	codeOff += Decode1(&cd);
	codeLen = Decode1(&cl);
	srcOff += Decode1(&sd);
	srcLen = Decode1(&sl);
	if (codeOff > pcOff) {
	    break;
	}
	if (pcOff <= codeOff + codeLen - 1 && pcOff - codeOff <= bestDist) {
	    bestDist = pcOff - codeOff;
	    best = i;
	    bestSrc = srcOff;
	    bestLen = srcLen;
	}
    }
    if (best < 0 || bestSrc < 0 || bestLen < 0
	    || bestSrc + bestLen > codePtr->numSrcBytes) {
	return 1;
    }
    if (Ok(codePtr->source, 1)) {
	FirstWord(codePtr->source + bestSrc, bestLen, &infoPtr->word,
		&infoPtr->wordLen);
    }
    if (eclPtr && OKP(eclPtr->loc) && eclPtr->nuloc >= 0
	    && eclPtr->nuloc <= eclPtr->nloc && eclPtr->nuloc <= MAX_COMMANDS) {
	if (best < eclPtr->nuloc && eclPtr->loc[best].srcOffset == bestSrc) {
	    locPtr = &eclPtr->loc[best];
	} else {
	    for (i = 0; i < eclPtr->nuloc; i++) {
		if (eclPtr->loc[i].srcOffset == bestSrc) {
		    locPtr = &eclPtr->loc[i];
		    break;
		}
	    }
	}
	if (locPtr && locPtr->nline > 0 && Ok(locPtr->line, sizeof(int))) {
	    infoPtr->line = locPtr->line[0];
	}
    }
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * NewRaw, Witness, CacheFind, CacheNew, PutStr, PutFile, BcCached --
 *
 *	NewRaw appends a raw frame to the slot; Witness records the callback
 *	data word that will place it (see the file header). Names, files
 *	and decoded pcs are kept in a small per-sample cache, so a recursion
 *	decodes and copies them once (it would otherwise fill the string
 *	area with copies and decode the same pc at every level).
 *
 * Results:
 *	NewRaw: the frame, or NULL when the slot is full (TCLTRUNC set).
 *	BcCached: the cache entry (name, file, line; empty if undecodable).
 *
 * Side effects:
 *	Writes the slot.
 *
 * Signal safety: safe.
 *
 *----------------------------------------------------------------------
 */

static TpTclRaw *
NewRaw(
    Cap *c,
    int type,
    uintptr_t key)
{
    TpTclRaw *r;

    if (c->n >= c->max) {
	c->full = 1;
	c->slot->flags |= TP_SLOT_TCLTRUNC;
	return NULL;
    }
    r = &c->raw[c->n++];
    memset(r, 0, sizeof(TpTclRaw));
    r->type = type;
    r->key = key;
    return r;
}

static void
Witness(
    TpTclRaw *r,
    int index,
    const void *value)
{
    if (value != NULL) {
	r->anchor = (uintptr_t) value;
	r->spare = SP_WANT | index;
    }
}

static Cache *
CacheFind(
    Cap *c,
    const void *k1,
    const void *k2)
{
    unsigned i;

    for (i = 0; i < sizeof(c->cache) / sizeof(Cache); i++) {
	if (c->cache[i].k1 == k1 && c->cache[i].k2 == k2 && k1) {
	    return &c->cache[i];
	}
    }
    return NULL;
}

static Cache *
CacheNew(
    Cap *c,
    const void *k1,
    const void *k2)
{
    Cache *e = &c->cache[c->nextCache++ % (sizeof(c->cache) / sizeof(Cache))];

    memset(e, 0, sizeof(Cache));
    e->k1 = k1;
    e->k2 = k2;
    return e;
}

static void
PutStr(
    Cap *c,
    const char *s,
    int len,
    uint16_t *offPtr,
    uint16_t *lenPtr)
{
    *offPtr = *lenPtr = 0;
    if (s && len > 0) {
	TpSlotPutStr(c->ring, c->slot, s, (size_t) len, offPtr, lenPtr);
    }
}

static void
PutFile(
    Cap *c,
    const char *file,
    int len,
    uint16_t *offPtr,
    uint16_t *lenPtr)
{
    Cache *e;

    *offPtr = *lenPtr = 0;
    if (!file || len <= 0) {
	return;
    }
    if ((e = CacheFind(c, file, (void *) c)) == NULL) {
	e = CacheNew(c, file, (void *) c);
	PutStr(c, file, len, &e->foff, &e->flen);
    }
    *offPtr = e->foff;
    *lenPtr = e->flen;
}

static const Cache *
BcCached(
    Cap *c,
    ByteCode *codePtr,
    const unsigned char *pc)
{
    Cache *e;
    BcInfo bi;

    if ((e = CacheFind(c, codePtr, pc)) == NULL) {
	e = CacheNew(c, codePtr, pc);
	if (BcDecode(c->iPtr, codePtr, pc, &bi)) {
	    PutStr(c, bi.word, bi.wordLen, &e->off, &e->len);
	    PutFile(c, bi.file, bi.fileLen, &e->foff, &e->flen);
	    e->line = bi.line;
	}
    }
    return e;
}

/*
 *----------------------------------------------------------------------
 *
 * IsBytecode --
 *
 *	Whether a Tcl_Obj holds compiled bytecode. tclByteCodeType is
 *	hidden in libtcl, so the type is recognised once by name and then
 *	by address.
 *
 * Results:
 *	1 if objPtr's internal rep is a ByteCode.
 *
 * Side effects:
 *	May set c->bcType.
 *
 * Signal safety: safe.
 *
 *----------------------------------------------------------------------
 */

static int
IsBytecode(
    Cap *c,
    Tcl_Obj *objPtr)
{
    const Tcl_ObjType *t;

    if (!OKP(objPtr) || !OKP(t = objPtr->typePtr)
	    || !OKP(objPtr->internalRep.twoPtrValue.ptr1)) {
	return 0;
    }
    if (t != c->bcType) {
	if (!Ok(t->name, 1) || strcmp(t->name, "bytecode")) {
	    return 0;
	}
	c->bcType = t;
    }
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * MethodName, EmitCallFrame --
 *
 *	Appends the raw frame for a CallFrame: proc, lambda, TclOO method,
 *	or namespace scope. bodyCf, if not NULL, is the outermost CmdFrame
 *	running in this CallFrame: it gives the line being executed.
 *	MethodName finds, in the frame's call chain, the method whose
 *	procedure is the frame's, and MethodOwnerName names it
 *	"::DeclaringClass method".
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Writes the slot.
 *
 * Signal safety: safe.
 *
 *----------------------------------------------------------------------
 */

static int	MethodOwnerName(Method *mPtr, CallChain *chain, Name *nm);

static int
MethodName(
    CallFrame *fp,
    Proc *procPtr,
    Name *nm)
{
    CallContext *ctx = fp->clientData;
    CallChain *chain;
    Method *mPtr = NULL;
    int i;
    const char *s;

    if (!OKP(ctx) || !OKP(chain = ctx->callPtr) || !OKP(chain->chain)
	    || chain->numChain <= 0 || chain->numChain > 256) {
	return 0;
    }
    for (i = 0; i < chain->numChain; i++) {
	Method *m = chain->chain[i].mPtr;
	ProcedureMethod *pm;

	if (OKP(m) && OKP(m->typePtr) && Ok(s = m->typePtr->name, 1)
		&& !strncmp(s, "method", 7) && OKP(pm = m->clientData)
		&& pm->procPtr == procPtr) {
	    mPtr = m;
	    break;
	}
    }
    return mPtr != NULL && MethodOwnerName(mPtr, chain, nm);
}

static int
MethodOwnerName(
    Method *mPtr,
    CallChain *chain,
    Name *nm)
{
    Object *oPtr;
    const char *s;
    int len;

    oPtr = OKP(mPtr->declaringClassPtr) ? mPtr->declaringClassPtr->thisPtr
	    : mPtr->declaringObjectPtr;
    if (!OKP(oPtr) || !CmdName((Command *) oPtr->command, nm)) {
	return 0;
    }
    NameAdd(nm, " ", 1);
    if ((s = ObjBytes(mPtr->namePtr, &len)) != NULL) {
	NameAdd(nm, s, len);
    } else {
	NameAdd(nm, (chain->flags & CONSTRUCTOR) ? "<constructor>"
		: (chain->flags & DESTRUCTOR) ? "<destructor>" : "?", -1);
    }
    return 1;
}

static void
EmitCallFrame(
    Cap *c,
    CallFrame *fp,
    CmdFrame *bodyCf)
{
    int flags = fp->isProcCallFrame, len, type;
    Proc *procPtr = fp->procPtr;
    const Cache *bc;
    const void *key;
    TpTclRaw *r;
    Cache *e;
    Name nm;
    const char *s;

    if (!(flags & FRAME_IS_PROC)) {
	Namespace *nsPtr = fp->nsPtr;

	if (!OKP(nsPtr) || !(r = NewRaw(c, TP_TCL_EVAL, (uintptr_t) nsPtr))) {
	    return;
	}
	nm.n = 0;
	NameAdd(&nm, "namespace ", -1);
	if (fp->objc >= 2 && OKP(fp->objv) && (s = ObjBytes(fp->objv[1], &len))) {
	    NameAdd(&nm, s, len);
	    NameAdd(&nm, " ", 1);
	}
	NameAdd(&nm, nsPtr->fullName, -1);
	PutStr(c, nm.b, nm.n, &r->nameOff, &r->nameLen);
	Witness(r, 0, nsPtr);
    } else {
	/*
	 * Between Tcl_PushCallFrame and the store of procPtr, procPtr is
	 * whatever the reused stack memory held: require a sane body.
	 */

	if (!OKP(procPtr) || !IsBytecode(c, procPtr->bodyPtr)) {
	    return;
	}
	type = (flags & FRAME_IS_LAMBDA) ? TP_TCL_LAMBDA
		: (flags & FRAME_IS_METHOD) ? TP_TCL_METHOD : TP_TCL_PROC;
	if (!(r = NewRaw(c, type, (uintptr_t) procPtr))) {
	    return;
	}
	key = (type == TP_TCL_METHOD) ? fp->clientData : procPtr->cmdPtr;
	if ((e = CacheFind(c, procPtr, key)) == NULL) {
	    e = CacheNew(c, procPtr, key);
	    nm.n = 0;
	    if (type == TP_TCL_LAMBDA) {
		bc = BcCached(c, procPtr->bodyPtr->internalRep.twoPtrValue.ptr1,
			NULL);
		s = bc->flen ? NULL : ObjBytes(procPtr->bodyPtr, &len);
		nm.n = TpLambdaName(nm.b, TP_NAME_MAX,
			TpSlotStr(c->ring, c->slot) + bc->foff, bc->flen,
			bc->line, s, s ? len : 0);
	    } else if (type == TP_TCL_METHOD ? !MethodName(fp, procPtr, &nm)
		    : !CmdName(procPtr->cmdPtr, &nm)) {
		nm.n = 0;
		if (fp->objc >= 1 && OKP(fp->objv)
			&& (s = ObjBytes(fp->objv[0], &len))) {
		    NameAdd(&nm, s, len);
		}
		if (type == TP_TCL_METHOD && fp->objc >= 2
			&& (s = ObjBytes(fp->objv[1], &len))) {
		    NameAdd(&nm, " ", 1);
		    NameAdd(&nm, s, len);
		}
	    }
	    PutStr(c, nm.b, nm.n, &e->off, &e->len);
	}
	r->nameOff = e->off;
	r->nameLen = e->len;
	if (type == TP_TCL_METHOD) {
	    Witness(r, 1, fp->clientData);
	} else if (OKP(fp->objv) && fp->objc > (type == TP_TCL_LAMBDA)) {
	    Witness(r, 0, fp->objv[type == TP_TCL_LAMBDA]);
	}
    }

    /*
     * The line: the one being run by the body's outermost CmdFrame. A
     * body running inline has no CmdFrame: only its file is known.
     */

    if (bodyCf == NULL) {
	r->flags |= TP_RAW_LEAF;
	if (flags & FRAME_IS_PROC) {
	    bc = BcCached(c, procPtr->bodyPtr->internalRep.twoPtrValue.ptr1, NULL);
	    r->fileOff = bc->foff;
	    r->fileLen = bc->flen;
	}
    } else if (bodyCf->type == TCL_LOCATION_BC
	    || bodyCf->type == TCL_LOCATION_PREBC) {
	bc = BcCached(c, (ByteCode *) bodyCf->data.tebc.codePtr,
		(const unsigned char *) bodyCf->data.tebc.pc);
	r->line = bc->line;
	r->fileOff = bc->foff;
	r->fileLen = bc->flen;
    } else if (OKP(bodyCf->line) && bodyCf->nline > 0) {
	r->line = bodyCf->line[0];
	if (bodyCf->type == TCL_LOCATION_SOURCE
		&& (s = ObjBytes(bodyCf->data.eval.path, &len))) {
	    PutFile(c, s, len, &r->fileOff, &r->fileLen);
	}
    }
}

/*
 *----------------------------------------------------------------------
 *
 * FillCmd, EmitCmd --
 *
 *	Appends a CMD frame for the command a CmdFrame is running, when
 *	that command pushed no CallFrame (C commands, [uplevel], [time],
 *	...). Bytecode levels name it by the first word of its source;
 *	Tcl_EvalEx levels by their cmd text, and only while a command runs
 *	(line != NULL); list evals by the list's first element.
 *
 * Results:
 *	FillCmd: 0 if there is no command to show (r is then garbage).
 *
 * Side effects:
 *	Writes the slot.
 *
 * Signal safety: safe.
 *
 *----------------------------------------------------------------------
 */

static int
FillCmd(
    Cap *c,
    CmdFrame *cf,
    TpTclRaw *r)
{
    const Cache *bc;
    const char *s = NULL, *file = NULL, *w;
    int len = 0, fileLen = 0, line = 0, wLen;

    if (cf->type == TCL_LOCATION_BC || cf->type == TCL_LOCATION_PREBC) {
	TpTebcPrefix *td = (TpTebcPrefix *) ((char *) cf - TEBC_OFFSET);

	if (td->codePtr != cf->data.tebc.codePtr) {
	    c->slot->flags |= TP_SLOT_TCLERR;
	    return 0;
	}
	Witness(r, 0, td);
	bc = BcCached(c, td->codePtr, (const unsigned char *) cf->data.tebc.pc);
	r->nameOff = bc->off;
	r->nameLen = bc->len;
	r->fileOff = bc->foff;
	r->fileLen = bc->flen;
	r->line = bc->line;
	return 1;
    }
    if (cf->type != TCL_LOCATION_EVAL && cf->type != TCL_LOCATION_SOURCE) {
	c->slot->flags |= TP_SLOT_TCLERR;
	return 0;
    }
    if (OKP(cf->line) && cf->nline > 0) {
	s = cf->cmd;
	len = cf->len;
	line = cf->line[0];
	if (cf->type == TCL_LOCATION_SOURCE) {
	    file = ObjBytes(cf->data.eval.path, &fileLen);
	}
	cf = NULL;		/* Tcl_EvalEx: no witness. */
    } else if (cf->line == NULL && OKP(cf->cmdObj)
	    && OKP(cf->cmdObj->typePtr) && Ok(cf->cmdObj->typePtr->name, 1)
	    && !strcmp(cf->cmdObj->typePtr->name, "list")) {
#if TCL_MAJOR_VERSION < 9
	List *listPtr = cf->cmdObj->internalRep.twoPtrValue.ptr1;

	if (OKP(listPtr) && listPtr->elemCount > 0
		&& listPtr->elemCount <= listPtr->maxElemCount) {
	    s = ObjBytes((&listPtr->elements)[0], &len);
	}
#else
	/*
	 * Tcl 9: a ListStore of slots, the list's elements from firstUsed
	 * (or, with a span, from spanStart).
	 */

	ListStore *storePtr = cf->cmdObj->internalRep.twoPtrValue.ptr1;
	ListSpan *spanPtr = cf->cmdObj->internalRep.twoPtrValue.ptr2;
	Tcl_Size first;

	if (OKP(storePtr) && storePtr->numUsed > 0
		&& storePtr->numUsed <= storePtr->numAllocated
		&& storePtr->firstUsed >= 0) {
	    first = storePtr->firstUsed;
	    if (spanPtr != NULL) {
		first = (OKP(spanPtr) && spanPtr->spanLength > 0)
			? spanPtr->spanStart : -1;
	    }
	    if (first >= 0 && first < storePtr->numAllocated) {
		s = ObjBytes(storePtr->slots[first], &len);
	    }
	}
#endif
    } else {
	return 0;		/* Tcl_EvalEx between two commands. */
    }
    if (cf) {
	Witness(r, 1, cf);
    }
    if (Ok(s, 1) && len > 0) {
	FirstWord(s, len, &w, &wLen);
	PutStr(c, w, wLen, &r->nameOff, &r->nameLen);
    }
    r->line = line;
    PutFile(c, file, fileLen, &r->fileOff, &r->fileLen);
    return 1;
}

static void
EmitCmd(
    Cap *c,
    CmdFrame *cf)
{
    TpTclRaw *r = NewRaw(c, TP_TCL_CMD, 0);

    if (r && !FillCmd(c, cf, r)) {
	c->n--;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * LiteralWord, NamesProc, EmitOtherWord --
 *
 *	A command that pushed a proc's CallFrame is normally the call of
 *	that proc, and only the proc is shown. But the word may name
 *	another command that ran the proc in the same trampoline: an NR
 *	command (Tcl_NRCreateCommand evaluating a script with
 *	Tcl_NREvalObj, which pushes no CmdFrame of its own), an alias, an
 *	ensemble. EmitOtherWord emits the word's CMD frame, outer of the
 *	proc, when the word as written cannot name the proc raw[procRaw].
 *	Words that are not literals ($cmd, [..], {*}) are never shown:
 *	what they name is unknown here.
 *
 * Results:
 *	LiteralWord: 1 if a word as written names a command by itself (not
 *	$var, [cmd], {*}..., "quoted").
 *	NamesProc: 1 if word w can name the proc whose qualified name is p
 *	(equal up to a leading "::", or p ends with "::" w).
 *	EmitOtherWord: 1 if it emitted a frame.
 *
 * Side effects:
 *	EmitOtherWord may write a frame (and its strings) to the slot.
 *
 * Signal safety: safe; bounded by the name lengths.
 *
 *----------------------------------------------------------------------
 */

static int
LiteralWord(
    const char *w,
    int wLen)
{
    return wLen > 0 && w[0] != '$' && w[0] != '[' && w[0] != '{'
	    && w[0] != '"';
}

static int
NamesProc(
    const char *w,
    int wLen,
    const char *p,
    int pLen)
{
    if (wLen >= 2 && w[0] == ':' && w[1] == ':') {
	w += 2;
	wLen -= 2;
    }
    if (pLen >= 2 && p[0] == ':' && p[1] == ':') {
	p += 2;
	pLen -= 2;
    }
    if (wLen == pLen && memcmp(w, p, (size_t) wLen) == 0) {
	return 1;
    }
    return pLen > wLen + 2 && memcmp(p + pLen - wLen, w, (size_t) wLen) == 0
	    && p[pLen - wLen - 1] == ':' && p[pLen - wLen - 2] == ':';
}

static int
EmitOtherWord(
    Cap *c,
    CmdFrame *cf,
    int procRaw)
{
    const char *str = TpSlotStr(c->ring, c->slot);
    const TpTclRaw *proc = &c->raw[procRaw];
    TpTclRaw *r;
    const char *w;
    int n = c->n;

    if (proc->type != TP_TCL_PROC || proc->nameLen == 0) {
	return 0;
    }
    EmitCmd(c, cf);
    if (c->n == n) {
	return 0;
    }
    r = &c->raw[n];
    w = str + r->nameOff;
    if (!LiteralWord(w, r->nameLen) || NamesProc(w, r->nameLen,
	    str + proc->nameOff, proc->nameLen)) {
	c->n = n;
	return 0;
    }
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * BodyCf, WalkContext --
 *
 *	Emits the frames of one context (the interp's, or one coroutine's),
 *	innermost first, by walking the CallFrame and CmdFrame chains
 *	together (see the file header). A command that pushed CallFrames is
 *	not emitted but remembered as a creator: if its frames turn out to
 *	run in a nested trampoline (lsort -command, a C command calling
 *	Tcl_EvalObjv), CheckCreators adds it back. BodyCf picks the
 *	CmdFrame that gives a CallFrame's current line.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Writes the slot.
 *
 * Signal safety: safe; both walks bounded by MAX_CHAIN.
 *
 *----------------------------------------------------------------------
 */

static CmdFrame *
BodyCf(
    Cap *c,
    CallFrame *fp,
    CmdFrame *cf)		/* Outermost CmdFrame seen with framePtr fp,
				 * or another one. */
{
    Proc *procPtr = fp->procPtr;

    if (cf == NULL || cf->framePtr != fp) {
	return NULL;
    }
    if (!(fp->isProcCallFrame & FRAME_IS_PROC)) {
	return cf;
    }

    /*
     * A proc's line comes only from its body's bytecode: a Tcl_EvalEx
     * level in the same frame (a variable trace fired while the body
     * runs inline) has lines of its own script.
     */

    return ((cf->type == TCL_LOCATION_BC || cf->type == TCL_LOCATION_PREBC)
	    && OKP(procPtr) && IsBytecode(c, procPtr->bodyPtr)
	    && cf->data.tebc.codePtr
		== procPtr->bodyPtr->internalRep.twoPtrValue.ptr1) ? cf : NULL;
}

static void
WalkContext(
    Cap *c,
    CallFrame *fp,
    CmdFrame *cf,
    int resumer)		/* The context resumed a coroutine: its
				 * innermost command is the coroutine marker
				 * already emitted. */
{
    CmdFrame *lastCf = NULL;	/* Last CmdFrame passed: the outermost one
				 * seen so far for its framePtr. */
    int steps = 0, pushed, outerRaw;

    while (!c->full && steps++ < MAX_CHAIN) {
	CallFrame *stop = NULL;

	if (cf) {
	    if (!OKP(cf) || (cf->nextPtr && (!OKP(cf->nextPtr)
		    || cf->nextPtr->level != cf->level - 1))) {
		c->slot->flags |= TP_SLOT_TCLERR;
		cf = NULL;
	    } else {
		stop = cf->framePtr;
	    }
	}
	for (pushed = 0, outerRaw = -1; OKP(fp) && fp != stop
		&& OKP(fp->callerPtr) && steps++ < MAX_CHAIN && !c->full;
		pushed++) {
	    int n = c->n;

	    EmitCallFrame(c, fp, BodyCf(c, fp, lastCf));
	    outerRaw = (c->n > n) ? n : outerRaw;
	    fp = fp->callerPtr;
	}
	if (cf == NULL) {
	    return;
	}
	if (fp != stop) {
	    c->slot->flags |= TP_SLOT_TCLERR;
	    fp = stop;
	}
	if (pushed == 0 && !resumer) {
	    EmitCmd(c, cf);
	} else if (!resumer && outerRaw == c->n - 1
		&& EmitOtherWord(c, cf, outerRaw)) {
	    /* A command that runs a proc it does not name: shown. */
	} else if (!resumer && outerRaw == c->n - 1
		&& c->nCreators < MAX_CREATORS) {
	    c->creators[c->nCreators].cf = cf;
	    c->creators[c->nCreators].raw = outerRaw;
	    c->creators[c->nCreators++].cb = NULL;
	}
	resumer = 0;
	lastCf = cf;
	cf = cf->nextPtr;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CloseStretch, AssignSegments --
 *
 *	Reads one interp's callback list (continued through the callers of
 *	running coroutines), newest first, matching frame witnesses and
 *	trampoline roots; each witnessed frame gets the index of the next
 *	root met (see the file header). The stretch after the last root met
 *	goes to the trampoline whose root is NULL (the interp's outermost,
 *	entered with an empty list), chosen by *claimed. CloseStretch gives
 *	a segment to the frames met since the previous root.
 *
 * Results:
 *	The segment given to the last stretch (nTramp if none).
 *
 * Side effects:
 *	Sets SP_KNOWN and the segment in raw[first..last).spare; records
 *	the witness callback of creators' frames.
 *
 * Signal safety: safe; bounded by MAX_CALLBACKS.
 *
 *----------------------------------------------------------------------
 */

static void
CloseStretch(
    Cap *c,
    int from,
    int to,
    int seg)
{
    for (; from < to; from++) {
	if (c->raw[from].spare & SP_PENDING) {
	    c->raw[from].spare = SP_KNOWN | (seg > SP_SEG ? SP_SEG : seg);
	}
    }
}

static int
AssignSegments(
    Cap *c,
    Interp *iPtr,
    int first,
    int last,
    uint64_t *claimed)		/* NULL-root trampolines already given to
				 * another interp. */
{
    ExecEnv *ee = iPtr->execEnvPtr;
    NRE_callback *cb;
    uint64_t mask = 0;
    int j = first, stretch = first, lastRoot = -1, k, steps = 0, ctx = 0;
    int lastWant = first, cr = 0, nullFrom;

    for (k = 0; k < c->nTramp; k++) {
	mask |= (uint64_t) 1 << ((c->tramp[k].root >> 4) & 63);
    }
    for (k = first; k < last; k++) {
	lastWant = (c->raw[k].spare & SP_WANT) ? k + 1 : lastWant;
    }
    for (nullFrom = c->nTramp; nullFrom > 0 && c->tramp[nullFrom - 1].root == 0;
	    nullFrom--) {
    }
    if (!OKP(ee)) {
	return c->nTramp;
    }
    cb = ee->callbackPtr;
    while (steps++ < MAX_CALLBACKS) {
	int jj, seen;

	if (cb == NULL) {
	    CoroutineData *corPtr = ee->corPtr;

	    if (!OKP(corPtr) || corPtr->eePtr != ee || ++ctx > MAX_CONTEXTS
		    || !OKP(ee = corPtr->callerEEPtr)) {
		break;
	    }
	    cb = ee->callbackPtr;
	    continue;
	}
	if (!OKP(cb)) {
	    c->slot->flags |= TP_SLOT_TCLERR;
	    break;
	}
	if (mask & ((uint64_t) 1 << (((uintptr_t) cb >> 4) & 63))) {
	    for (k = lastRoot + 1; k < c->nTramp; k++) {
		if (c->tramp[k].root == (uintptr_t) cb) {
		    CloseStretch(c, stretch, j, k);
		    stretch = j;
		    lastRoot = k;
		    c->rootMet |= (uint64_t) 1 << (k & 63);
		    while (lastRoot + 1 < c->nTramp
			    && c->tramp[lastRoot + 1].root == (uintptr_t) cb) {
			lastRoot++;
			c->rootMet |= (uint64_t) 1 << (lastRoot & 63);
		    }
		    break;
		}
	    }
	}
	for (jj = j, seen = 0; jj < last && seen < LOOKAHEAD; jj++) {
	    TpTclRaw *r = &c->raw[jj];

	    if (!(r->spare & SP_WANT)) {
		continue;
	    }
	    seen++;
	    if ((uintptr_t) cb->data[r->spare & 3] == r->anchor) {
		r->spare = SP_PENDING;
		j = jj + 1;
		while (cr < c->nCreators && c->creators[cr].raw < jj) {
		    cr++;
		}
		if (cr < c->nCreators && c->creators[cr].raw == jj) {
		    c->creators[cr].cb = cb;
		}
		break;
	    }
	}
	if (j >= lastWant && (stretch == j || nullFrom <= lastRoot + 1)) {
	    break;		/* All placed, or only NULL roots left (they
				 * close the stretch below). */
	}
	cb = cb->nextPtr;
    }
    for (k = lastRoot + 1; k < c->nTramp; k++) {
	if (c->tramp[k].root == 0 && !((*claimed >> (k & 63)) & 1)) {
	    *claimed |= (uint64_t) 1 << (k & 63);
	    break;
	}
    }
    CloseStretch(c, stretch, j, k);
    return k;
}

/*
 *----------------------------------------------------------------------
 *
 * Resolve --
 *
 *	Gives every frame of raw[first..last) a segment: witnessed frames
 *	keep theirs (clamped so segments never grow inwards), the others
 *	take max(inner neighbour, outer neighbour - 1).
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	raw[].spare = SP_KNOWN | segment.
 *
 * Signal safety: safe.
 *
 *----------------------------------------------------------------------
 */

static void
Resolve(
    Cap *c,
    int first,
    int last,
    int outerDefault)
{
    int i, outer = outerDefault, inner = 0, s;

    for (i = last - 1; i >= first; i--) {
	TpTclRaw *r = &c->raw[i];

	if (r->spare & SP_KNOWN) {
	    s = r->spare & SP_SEG;
	    outer = s < outer ? s : outer;
	    r->spare = SP_KNOWN | outer;
	} else {
	    r->spare = (outer > 0 ? outer - 1 : 0);
	}
    }
    for (i = first; i < last; i++) {
	TpTclRaw *r = &c->raw[i];

	s = r->spare & SP_SEG;
	if (!(r->spare & SP_KNOWN)) {
	    s = (s < inner) ? inner : s;
	    r->spare = SP_KNOWN | SP_GUESS | s;
	} else {
	    r->spare = SP_KNOWN | s;
	}
	inner = s;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CmdWitness, CheckCreators --
 *
 *	For each command that pushed CallFrames (see WalkContext), finds
 *	whether its own witness lies in the same segment as the frame it
 *	created. If not, a C command re-entered Tcl in between (lsort
 *	-command calls its compare proc through Tcl_EvalObjv): the command
 *	is inserted as a CMD frame just outside that frame, in its own
 *	segment. A Tcl_EvalEx level has no witness: its command sits in the
 *	trampoline nested in its outer neighbour's (see Resolve).
 *	CmdWitness gives the callback data word that places a CmdFrame.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	May insert raw frames in raw[first..c->n); when the slot is full
 *	the outermost frame is dropped (TCLTRUNC).
 *
 * Signal safety: safe; bounded by CREATOR_STEPS callbacks in all.
 *
 *----------------------------------------------------------------------
 */

static const void *
CmdWitness(
    CmdFrame *cf,
    int *indexPtr)
{
    TpTebcPrefix *td = (TpTebcPrefix *) ((char *) cf - TEBC_OFFSET);

    *indexPtr = 0;
    if (cf->type == TCL_LOCATION_BC || cf->type == TCL_LOCATION_PREBC) {
	return (td->codePtr == cf->data.tebc.codePtr) ? td : NULL;
    }
    *indexPtr = 1;
    return (cf->type == TCL_LOCATION_EVAL && cf->line == NULL && cf->cmdObj)
	    ? cf : NULL;
}

static void
CheckCreators(
    Cap *c,
    int first,
    int outerDefault)
{
    int i, idx, budget = CREATOR_STEPS;
    uint64_t mask = 0;

    for (i = 0; i < c->nTramp; i++) {
	mask |= (uint64_t) 1 << ((c->tramp[i].root >> 4) & 63);
    }
    for (i = c->nCreators - 1; i >= 0; i--) {
	int at = c->creators[i].raw, sP, sCmd = -1, k, passed = 0, found = 0;
	NRE_callback *cb = c->creators[i].cb;
	CmdFrame *cf = c->creators[i].cf;
	const void *w;
	TpTclRaw t;

	if (at < first || at >= c->n) {
	    continue;
	}
	sP = c->raw[at].spare & SP_SEG;
	if ((w = CmdWitness(cf, &idx)) != NULL) {
	    if (cb == NULL) {
		continue;	/* Frame not placed: assume same entry. */
	    }
	    for (cb = cb->nextPtr; OKP(cb) && budget-- > 0; cb = cb->nextPtr) {
		if (!found && cb->data[idx] == w) {
		    if (!passed) {
			break;	/* Same entry: the frame shows it. */
		    }
		    found = 1;
		}
		if (mask & ((uint64_t) 1 << (((uintptr_t) cb >> 4) & 63))) {
		    for (k = sP; k < c->nTramp; k++) {
			if (c->tramp[k].root == (uintptr_t) cb) {
			    break;
			}
		    }
		    if (k < c->nTramp) {
			passed = 1;
			if (found) {
			    sCmd = k;
			    break;
			}
		    }
		}
	    }
	    if (!found) {
		continue;
	    }
	    if (sCmd < 0) {
		sCmd = outerDefault - 1;
	    }
	} else {
	    sCmd = ((at + 1 < c->n) ? (int) (c->raw[at + 1].spare & SP_SEG)
		    : outerDefault) - 1;
	}
	if (sCmd <= sP) {
	    continue;
	}
	memset(&t, 0, sizeof(t));
	t.type = TP_TCL_CMD;
	if (!FillCmd(c, cf, &t)) {
	    continue;
	}
	if (c->n >= c->max) {
	    c->slot->flags |= TP_SLOT_TCLTRUNC;
	    if (at + 1 >= c->n) {
		continue;
	    }
	    c->n--;
	}
	memmove(&c->raw[at + 2], &c->raw[at + 1],
		(c->n - at - 1) * sizeof(TpTclRaw));
	c->n++;
	t.spare = SP_KNOWN | sCmd;	/* anchor: the witness, for
					 * DispatchFrames. */
	c->raw[at + 1] = t;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * Dispatched, CtxMethod, NameFrame, RemoveRaw, InsertRaw,
 * DispatchFrames --
 *
 *	Names what the trampolines are running, from the callbacks rather
 *	than from the source text. A trampoline frame below C code is inside
 *	one callback (tramp[].cb, a calibrated register); when that is
 *	Dispatch, the C code is a command's objProc and Dispatch's objv[0]
 *	caches the Command that was resolved (Dispatched). The callbacks
 *	pushed since that trampoline last entered C (from the inner
 *	trampoline's root, or the top of the list, down to the TEBCresume
 *	of the bytecode that called out) tell what lies between that
 *	bytecode's command and the C code: one NRCommand per command level
 *	(an alias, an ensemble or a forward adds one), and for each TclOO
 *	method implemented in C a ResetFilterFlags or SetFilterFlags holding
 *	its CallContext (CtxMethod). DispatchFrames turns that into frames:
 *	  - a command word as written ($c, {*}$c, a compiled expr's
 *	    function, a command reached through a namespace path) is renamed
 *	    to the command that runs, when there is one level;
 *	  - a command found between the word's and the C code (alias or
 *	    ensemble target, forward, [my]/[next] into a C method) gets a
 *	    frame inside the word's; a word that is not a literal is dropped
 *	    when it cannot be named (an object in a variable is named by its
 *	    method);
 *	  - a C command with no word at all (called by Tcl_EvalObjv from C,
 *	    or as the target of a tailcall) gets a frame.
 *
 * Results:
 *	Dispatched: the running Command, or NULL (not Dispatch, or not
 *	checkable, or a command shown by its own frames). CtxMethod: the
 *	method ctx is running if it is not a procedure (a method written in
 *	C, a forward), else NULL.
 *
 * Side effects:
 *	DispatchFrames inserts, renames or removes raw frames of the slot.
 *
 * Signal safety: safe; the callback walks are bounded by DISPATCH_STEPS.
 *
 *----------------------------------------------------------------------
 */

#define DISPATCH_STEPS	32	/* Callbacks read per trampoline. */
#define DISPATCH_NAMES	4	/* Frames a trampoline can add. */

static Command *
DispatchCmd(
    NRE_callback *cb)
{
    Tcl_Obj *const *objv;
    Tcl_Obj *o;
    ResolvedCmdNamePrefix *res;
    Command *cmdPtr;

    if (known.dispatch == NULL || !OKP(cb) || cb->procPtr != known.dispatch
	    || PTR2INT(cb->data[2]) < 1 || !OKP(objv = cb->data[3])
	    || !OKP(o = objv[0]) || o->typePtr != known.cmdNameType
	    || !OKP(res = o->internalRep.twoPtrValue.ptr1)
	    || !OKP(cmdPtr = res->cmdPtr)
	    || ((void *) cmdPtr->objProc != cb->data[0]
		&& (void *) cmdPtr->nreProc != cb->data[0])) {
	return NULL;
    }
    return cmdPtr;
}

static Command *
Dispatched(
    NRE_callback *cb)
{
    Command *cmdPtr = DispatchCmd(cb);
    unsigned i;

    if (cmdPtr == NULL) {
	return NULL;
    }
    for (i = 0; i < sizeof(known.framed) / sizeof(known.framed[0]); i++) {
	if (cmdPtr->objProc == known.framed[i]) {
	    return NULL;
	}
    }
    return cmdPtr;
}

static Method *
CtxMethod(
    CallContext *ctx,
    int procsToo)		/* Also procedure methods. */
{
    CallChain *chain;
    Method *mPtr;
    const char *s;

    if (!OKP(ctx) || !OKP(chain = ctx->callPtr) || !OKP(chain->chain)
	    || ctx->index < 0 || ctx->index >= chain->numChain
	    || chain->numChain > 256
	    || !OKP(mPtr = chain->chain[ctx->index].mPtr)
	    || !OKP(mPtr->typePtr) || !Ok(s = mPtr->typePtr->name, 1)
	    || (!procsToo && !strcmp(s, "method"))) {
	return NULL;		/* Procedure methods have CallFrames. */
    }
    return mPtr;
}

/*
 * A frame to add, innermost first: a command (key Command *) or a method
 * (key Method *... any unique pointer), with its name.
 */

typedef struct Added {
    int type;			/* TP_TCL_CMD or TP_TCL_METHOD. */
    const void *key;
    int level;			/* NRCommands passed when it was met. */
} Added;

static int
NameFrame(
    Cap *c,
    TpTclRaw *r,
    const Added *a,
    const void *ctx)		/* CallContext of a method, else NULL. */
{
    Cache *e;
    Name nm;

    if ((e = CacheFind(c, a->key, (void *) &known)) == NULL) {
	e = CacheNew(c, a->key, (void *) &known);
	nm.n = 0;
	if (a->type == TP_TCL_METHOD) {
	    MethodOwnerName((Method *) a->key,
		    ((const CallContext *) ctx)->callPtr, &nm);
	} else if (CmdName((Command *) a->key, &nm) && nm.n > 2
		&& memchr(nm.b + 2, ':', (size_t) nm.n - 2) == NULL) {
	    memmove(nm.b, nm.b + 2, (size_t) nm.n - 2);
	    nm.n -= 2;		/* Global commands as users type them. */
	}
	PutStr(c, nm.b, nm.n, &e->off, &e->len);
    }
    if (e->len == 0) {
	return 0;
    }
    r->type = a->type;
    r->key = (uintptr_t) a->key;
    r->nameOff = e->off;
    r->nameLen = e->len;
    return 1;
}

static void
RemoveRaw(
    Cap *c,
    int at)
{
    memmove(&c->raw[at], &c->raw[at + 1], (c->n - at - 1) * sizeof(TpTclRaw));
    c->n--;
}

static void
InsertRaw(
    Cap *c,
    int at,
    int seg,
    const Added *a,
    const void *ctx)
{
    if (c->n >= c->max) {
	c->slot->flags |= TP_SLOT_TCLTRUNC;
	return;
    }
    memmove(&c->raw[at + 1], &c->raw[at], (c->n - at) * sizeof(TpTclRaw));
    c->n++;
    memset(&c->raw[at], 0, sizeof(TpTclRaw));
    c->raw[at].spare = SP_KNOWN | seg;
    if (!NameFrame(c, &c->raw[at], a, ctx)) {
	RemoveRaw(c, at);
    }
}

/*
 * RootProven --
 *
 *	Whether tramp[k].root may be dereferenced: read at a calibrated
 *	callback call (where it is the live root by construction), or met in
 *	the callback list. A root read anywhere else (the interrupted frame
 *	in TclNRRunCallbacks' prologue or epilogue holds its caller's value
 *	in that register) is looked for from the top of the list, within a
 *	bound. Signal-safe.
 */

#define PROVE_STEPS	4096	/* Callbacks read to prove one root. */

/*
 * TclNRRunCallbacks' code, and the stretches of it between its prologue
 * and its epilogue, where the register of the root holds the root: where
 * the unwind rows compute the CFA as at its callback call (found at
 * calibration; none if unknown). Written once, before any sampling.
 */

#define FN_BODY_MAX	4
static uintptr_t fnCodeLo, fnCodeHi, fnBody[2 * FN_BODY_MAX];
static int nFnBody;

static int
RootProven(
    Cap *c,
    int k,
    NRE_callback *top)
{
    uintptr_t root = c->tramp[k].root;
    NRE_callback *cb;
    int steps;

    if ((c->tramp[k].spare & TP_TRAMP_SURE)
	    || ((c->rootMet >> (k & 63)) & 1)) {
	return 1;
    }
    if (!OKP((void *) root)) {
	return 0;
    }
    for (cb = top, steps = 0; OKP(cb) && steps < PROVE_STEPS;
	    cb = cb->nextPtr, steps++) {
	if ((uintptr_t) cb == root) {
	    c->rootMet |= (uint64_t) 1 << (k & 63);
	    return 1;
	}
    }
    return 0;
}

/*
 * WalkFrom --
 *
 *	Where DispatchFrames starts reading the callbacks trampoline k
 *	pushed since it called C: the top of the list for the innermost, else
 *	the root of the next inner trampoline of the same interp (a child
 *	interp's trampolines in between have lists of their own), once
 *	proven a live record. Signal-safe.
 *
 * Results:
 *	1 and *cbPtr, or 0 if the start cannot be proven.
 */

static int
WalkFrom(
    Cap *c,
    int k,
    NRE_callback *top,		/* Top of the innermost interp's list. */
    NRE_callback **cbPtr)
{
    Interp *ip = c->segInterp[k > SP_SEG ? SP_SEG : k], *lp;
    NRE_callback *listTop = top;
    int l;

    if (ip == NULL) {
	l = k - 1;
    } else {
	for (l = k - 1; l >= 0; l--) {
	    lp = c->segInterp[l > SP_SEG ? SP_SEG : l];
	    if (lp == NULL || lp == ip) {
		if (lp != NULL && OKP(lp->execEnvPtr)) {
		    listTop = lp->execEnvPtr->callbackPtr;
		}
		break;
	    }
	}
	if (l < 0) {
	    *cbPtr = OKP(ip->execEnvPtr) ? ip->execEnvPtr->callbackPtr : top;
	    return 1;
	}
    }
    if (l < 0) {
	*cbPtr = top;
	return 1;
    }
    if (!RootProven(c, l, listTop)) {
	return 0;
    }
    *cbPtr = (NRE_callback *) c->tramp[l].root;
    return 1;
}

/*
 * BoundRoots --
 *
 *	The root of a trampoline not read at a callback call, bounded by the
 *	next outer one's. When that one was read at its callback call, the
 *	callback it runs (X) was popped before the call, so the inner
 *	trampoline's evaluation began with the list at X->nextPtr or above
 *	it: its root is there or newer. A root read from the register that
 *	is met below X->nextPtr in the outer interp's list is its caller's
 *	stale value (TclNRRunCallbacks' prologue or epilogue, which a frame
 *	pointer build's CFI does not tell from its body; often the outermost
 *	loop's NULL root), and would give the outer trampoline's frames to
 *	the inner one. That root, and one left unknown there, becomes
 *	X->nextPtr: before the loop has run a callback, the frames its
 *	evaluation pushed (a proc's CallFrame) are its own; after the last
 *	one, nothing is above the root. A root met above X->nextPtr is kept,
 *	as is one not met at all (a child interp's list, proven or not
 *	later). A NULL or unknown root is replaced only when one interp is
 *	evaluating (else it may be a child interp's first loop, whose NULL
 *	root is matched by interp). A root met in the walk (or the bound,
 *	met on the way) is marked proven. Signal-safe: X is live by
 *	construction, the list read from its top within PROVE_STEPS.
 */

static void
BoundRoots(
    Cap *c,
    Interp *interp,
    int oneInterp)		/* No child interp is evaluating. */
{
    int k, steps, below;

    for (k = 0; k + 1 < c->nTramp; k++) {
	TpTramp *t = &TpSlotTramps(c->ring, c->slot)[k];
	const TpTramp *o = &c->tramp[k + 1];
	NRE_callback *x = (NRE_callback *) o->cb, *bound, *cb;
	Interp *ip = OKP((void *) o->interp) ? (Interp *) o->interp : interp;

	if ((t->spare & TP_TRAMP_SURE) || !(o->spare & TP_TRAMP_SURE)
		|| !OKP(x) || !OKP(ip->execEnvPtr)) {
	    continue;
	}
	bound = x->nextPtr;
	if (bound == NULL) {
	    continue;		/* The bottom of a list: nothing to bound. */
	}
	if (t->root == TP_ROOT_UNKNOWN || t->root == 0) {
	    if (oneInterp) {
		t->root = (uintptr_t) bound;
	    }
	    continue;
	}
	for (cb = ip->execEnvPtr->callbackPtr, steps = below = 0;
		OKP(cb) && steps < PROVE_STEPS; cb = cb->nextPtr, steps++) {
	    if ((uintptr_t) cb == t->root) {
		break;
	    }
	    below |= (cb == bound);
	}
	if (OKP(cb) && steps < PROVE_STEPS) {
	    if (below) {
		t->root = (uintptr_t) bound;
	    }
	    c->rootMet |= (uint64_t) 1 << (k & 63);	/* Met in the list:
							 * RootProven need not
							 * walk it again. */
	}
    }
}

static void
DispatchFrames(
    Cap *c,
    Interp *iPtr,		/* The interp running the innermost
				 * trampoline, */
    NRE_callback *top)		/* and the top of its callback list. */
{
    int k;

    for (k = 0; k < c->nTramp; k++) {
	const TpTramp *t = &c->tramp[k];
	NRE_callback *cb, *stop = (NRE_callback *) t->root;
	Command *cmdPtr = Dispatched((NRE_callback *) t->cb);
	Added add[DISPATCH_NAMES];
	const void *ctxs[DISPATCH_NAMES];
	const void *stopData = NULL;
	int nAdd = 0, levels = 0, steps, i, j, word, inner = 0, outerAt;
	TpTclRaw *r;
	const char *w;

	if (!OKP((void *) t->cb) || known.dispatch == NULL
		|| (((NRE_callback *) t->cb)->procPtr != known.dispatch
		&& ((NRE_callback *) t->cb)->procPtr != known.tebcResume)) {
	    continue;		/* Not running a command's C function, nor
				 * bytecode (a compiled [next] calls a
				 * method's callProc itself). */
	}

	/*
	 * The callbacks pushed since this trampoline called C, newest
	 * first. A nested trampoline's root is where they end on its side.
	 */

	if (!WalkFrom(c, k, top, &cb)) {
	    continue;
	}
	for (steps = 0; steps < DISPATCH_STEPS && OKP(cb) && cb != stop;
		steps++, cb = cb->nextPtr) {
	    if (cb->procPtr == known.tebcResume) {
		stopData = cb->data[0];
		break;
	    }
	    if (cb->procPtr == known.nrCommand) {
		levels++;
		continue;
	    }
	    for (j = 0; j < 4 && (cb->procPtr != known.ctxHolder[j].proc
		    || cb->procPtr == NULL); j++) {
	    }
	    if (j < 4 && nAdd < DISPATCH_NAMES) {
		CallContext *ctx = cb->data[known.ctxHolder[j].index];
		Method *mPtr = CtxMethod(ctx, 0);

		if (mPtr != NULL) {
		    add[nAdd].type = TP_TCL_METHOD;
		    add[nAdd].key = mPtr;
		    add[nAdd].level = levels;
		    ctxs[nAdd++] = ctx;
		    inner += (levels == 0);
		}
	    }
	}

	/*
	 * The innermost raw frame of this trampoline, and whether it is the
	 * command word of the bytecode that called out (its witness ends
	 * the walk).
	 */

	for (i = 0; i < c->n && (int) (c->raw[i].spare & SP_SEG) < k; i++) {
	}
	r = (i < c->n && (int) (c->raw[i].spare & SP_SEG) == k
		&& c->raw[i].type == TP_TCL_CMD) ? &c->raw[i] : NULL;
	word = r != NULL && levels > 0 && (stopData != NULL
		? r->anchor == (uintptr_t) stopData
		: (r->anchor == 0 && cb == stop));	/* Tcl_EvalEx runs each
							 * command in its own
							 * trampoline. */
	w = r ? TpSlotStr(c->ring, c->slot) + r->nameOff : NULL;

	/*
	 * The command word: renamed (one level), or kept, dropped or named
	 * by its method (levels between it and the C code).
	 */

	outerAt = i;
	if (word && levels == 1) {
	    if (inner > 0) {
		RemoveRaw(c, i);	/* [my], [next], an object: its
					 * method. */
	    } else if (cmdPtr != NULL) {
		Added a = {TP_TCL_CMD, cmdPtr, 0};

		/*
		 * The word is renamed to the command that runs, unless a
		 * compiled ensemble ([string compare -nocase]) handed its
		 * words to the subcommand's implementation: Tcl keeps them
		 * in ensembleRewrite while it runs, and both are shown.
		 */

		if (k > 0 || iPtr == NULL
			|| !OKP(iPtr->ensembleRewrite.sourceObjs)) {
		    NameFrame(c, r, &a, NULL);
		    continue;
		}
	    }
	} else if (word) {
	    for (j = 0; j < nAdd && add[j].level != levels - 1; j++) {
	    }
	    if (j < nAdd) {
		NameFrame(c, r, &add[j], ctxs[j]);
		add[j].level = -1;	/* Used. */
	    } else if (!LiteralWord(w, r->nameLen)) {
		RemoveRaw(c, i);
	    }
	} else if (r != NULL && cmdPtr != NULL && inner == 0) {
	    Name nm;

	    nm.n = 0;
	    if (CmdName(cmdPtr, &nm) && NamesProc(w, r->nameLen, nm.b, nm.n)) {
		Added a = {TP_TCL_CMD, cmdPtr, 0};

		NameFrame(c, r, &a, NULL);
		continue;	/* The word is this command. */
	    }
	}

	/*
	 * The command run may be shown already: by the word when it names
	 * it (an alias that has pushed its target's level, a C command
	 * whose callback runs in a nested trampoline), or by the frame it
	 * has just pushed (apply's lambda, before its body runs).
	 */

	if (cmdPtr != NULL && inner == 0) {
	    Name nm;

	    nm.n = 0;
	    if (r != NULL && r->key == 0 && CmdName(cmdPtr, &nm)
		    && NamesProc(w, r->nameLen, nm.b, nm.n)) {
		Added a = {TP_TCL_CMD, cmdPtr, 0};

		NameFrame(c, r, &a, NULL);
		cmdPtr = NULL;
	    } else if (k == 0 && i == 0 && c->n > 0
		    && (c->raw[0].spare & SP_SEG) == 0
		    && (c->raw[0].flags & TP_RAW_LEAF)) {
		cmdPtr = NULL;
	    }
	}

	/*
	 * Inner frames, outermost first (each insertion at outerAt goes
	 * inside the previous one): methods of middle levels, then the
	 * command run (unless [my]/[next] dispatched a method, shown
	 * instead), then its methods.
	 */

	for (j = nAdd - 1; j >= 0; j--) {
	    if (add[j].level > 0) {
		InsertRaw(c, outerAt, k, &add[j], ctxs[j]);
	    }
	}
	if (cmdPtr != NULL && inner == 0) {
	    Added a = {TP_TCL_CMD, cmdPtr, 0};

	    InsertRaw(c, outerAt, k, &a, NULL);
	}
	for (j = nAdd - 1; j >= 0; j--) {
	    if (add[j].level == 0) {
		InsertRaw(c, outerAt, k, &add[j], ctxs[j]);
	    }
	}
    }
}

/*
 *----------------------------------------------------------------------
 *
 * NameWords --
 *
 *	A command word that is not a literal ($obj, $cmd) names nothing by
 *	itself; DispatchFrames renames it when its command runs C code
 *	below. The others (and [my], an object's literal name) are mostly
 *	caught between the word's dispatch and
 *	the frame its command pushes (a method's or a proc's), where the
 *	callbacks pushed since the word's bytecode called out tell what it
 *	resolved to: a TclOO call context (the method it calls, named
 *	"::Class method" as the method's frame is), or the Dispatch of its
 *	command, pending or running, whose objv[0] caches the Command. An
 *	object whose method is not chosen yet, or a word whose callbacks are
 *	not found, is dropped: the sample stays with the caller.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Renames or removes raw frames of the slot.
 *
 * Signal safety: safe; DISPATCH_STEPS callbacks read per word.
 *
 *----------------------------------------------------------------------
 */

static void
NameWords(
    Cap *c,
    NRE_callback *top)
{
    int i = 0;

    while (i < c->n) {
	TpTclRaw *r = &c->raw[i];
	int k = r->spare & SP_SEG, levels = 0, steps, found = 0, named = 0;
	int cmdLevel = -1, ctxLevel = -1, literal;
	NRE_callback *cb, *stop;
	Command *cmdPtr = NULL;
	CallContext *ctx = NULL;
	unsigned j;

	if (r->type != TP_TCL_CMD || r->key != 0 || r->nameLen == 0) {
	    i++;
	    continue;
	}
	literal = LiteralWord(TpSlotStr(c->ring, c->slot) + r->nameOff,
		r->nameLen);
	stop = (k < c->nTramp) ? (NRE_callback *) c->tramp[k].root : NULL;
	if (!WalkFrom(c, k, top, &cb)) {
	    cb = NULL;		/* Not proven: not read. */
	}
	for (steps = 0; r->anchor != 0 && steps < DISPATCH_STEPS && OKP(cb)
		&& cb != stop; steps++, cb = cb->nextPtr) {
	    if (cb->procPtr == known.tebcResume) {
		found = ((uintptr_t) cb->data[0] == r->anchor);
		break;
	    }
	    if (cb->procPtr == known.nrCommand) {
		levels++;
	    } else if (cb->procPtr == known.dispatch) {
		cmdPtr = DispatchCmd(cb);
		cmdLevel = levels;
	    } else {
		for (j = 0; j < 4 && (cb->procPtr != known.ctxHolder[j].proc
			|| cb->procPtr == NULL); j++) {
		}
		if (j < 4) {
		    ctx = cb->data[known.ctxHolder[j].index];
		    ctxLevel = levels;
		}
	    }
	}
	if (found && levels >= 1) {
	    Method *mPtr;

	    if (cmdLevel != levels - 1 && levels == 1 && k < c->nTramp) {
		cmdPtr = DispatchCmd((NRE_callback *) c->tramp[k].cb);
		cmdLevel = 0;	/* Running: the innermost level. */
	    }
	    if (ctxLevel == levels - 1 && (mPtr = CtxMethod(ctx, 1)) != NULL) {
		Added a = {TP_TCL_METHOD, mPtr, 0};

		named = NameFrame(c, r, &a, ctx);
	    } else if (!literal && cmdLevel == levels - 1 && cmdPtr != NULL
		    && cmdPtr->objProc != known.framed[1]) {
		Added a = {TP_TCL_CMD, cmdPtr, 0};

		named = NameFrame(c, r, &a, NULL);
	    }
	}
	if (named || literal) {
	    i++;
	} else {
	    RemoveRaw(c, i);
	}
    }
}

/*
 *----------------------------------------------------------------------
 *
 * OwnLevels --
 *
 *	The callbacks of the levels of the command trampoline k is
 *	dispatching (cb0, its Dispatch): from the one under the Dispatch
 *	down to its bytecode's TEBCresume (see EnteringFrames).
 *
 * Results:
 *	The index in walked[] of the TEBCresume, or -1 if the walk met the
 *	trampoline's root first (the command was called from C: Tcl_EvalEx
 *	runs each command in a trampoline of its own), a bad pointer, or
 *	DISPATCH_STEPS callbacks.
 *
 * Side effects:
 *	Fills walked[0..result].
 *
 * Signal safety: safe; DISPATCH_STEPS callbacks read.
 *
 *----------------------------------------------------------------------
 */

static int
OwnLevels(
    Cap *c,
    int k,
    NRE_callback *cb0,
    NRE_callback *walked[DISPATCH_STEPS])
{
    NRE_callback *cb;
    int steps;

    for (cb = cb0->nextPtr, steps = 0; OKP(cb) && steps < DISPATCH_STEPS;
	    cb = cb->nextPtr, steps++) {
	if ((uintptr_t) cb == c->tramp[k].root) {
	    return -1;
	}
	walked[steps] = cb;
	if (cb->procPtr == known.tebcResume) {
	    return steps;
	}
    }
    return -1;
}

/*
 *----------------------------------------------------------------------
 *
 * EnteringFrames --
 *
 *	C code entering Tcl (sqlite calling a [db function] callback
 *	through Tcl_EvalObjv, a C command calling Tcl_EvalEx) links its
 *	Tcl frames before the trampoline that will run them is on the C
 *	stack. They are recognised when the innermost trampoline runs the
 *	Dispatch of a command (its C function has not returned) and the
 *	raw frames inner to that command's own levels are all command
 *	levels of an evaluation (a list's or a script's), none of them a
 *	proc, lambda or method frame, which only a running trampoline
 *	pushes: they go below the C frames that are calling them. The
 *	command's own levels are those whose witness callback lies below
 *	the Dispatch, down to its bytecode's TEBCresume: the bytecode's
 *	CmdFrame, and the list's CmdFrame when the command was evaluated
 *	as a list ([eval [list cmd ...]], [uplevel #0 [list source f]]),
 *	whose callback holds it in data[1]. A command whose trampoline
 *	reaches its root before any TEBCresume was called from C (each
 *	command of a Tcl_EvalEx): none of its frames is being entered.
 *
 * Results:
 *	The number of such frames at the start of raw[] (0 if none).
 *
 * Side effects:
 *	None.
 *
 * Signal safety: safe; DISPATCH_STEPS callbacks read.
 *
 *----------------------------------------------------------------------
 */

static int
EnteringFrames(
    Cap *c)
{
    NRE_callback *cb0, *walked[DISPATCH_STEPS];
    int steps, i, j;

    int k = 0;

    if (c->nTramp > 1 && c->tramp[0].index == 0) {
	k = 1;			/* The leaf is a trampoline just entered
				 * (its registers are not read). */
    }
    if (c->nTramp <= k || !OKP(cb0 = (NRE_callback *) c->tramp[k].cb)
	    || DispatchCmd(cb0) == NULL) {
	return 0;
    }
    if ((steps = OwnLevels(c, k, cb0, walked)) < 0) {
	return 0;
    }
    for (i = 0; i < c->n; i++) {
	if (c->raw[i].type != TP_TCL_CMD) {
	    return 0;
	}
	if (c->raw[i].key != 0 || c->raw[i].anchor == 0) {
	    continue;
	}
	for (j = 0; j <= steps; j++) {
	    if (c->raw[i].anchor == (uintptr_t) walked[j]->data[0]
		    || c->raw[i].anchor == (uintptr_t) walked[j]->data[1]) {
		return i;
	    }
	}
    }
    return 0;
}

/*
 *----------------------------------------------------------------------
 *
 * MissedTrampoline --
 *
 *	A C command without NRE (no nreProc) runs Tcl only through a
 *	trampoline of its own, entered from its C function. When the
 *	innermost trampoline the C walk found is running such a command
 *	(its callback is the command's Dispatch) and a proc, lambda or
 *	method frame lies inner to the command's own levels, that frame
 *	runs in a trampoline the walk did not find: the walk skipped
 *	frames (wine's contexts of a suspended thread now and then make it
 *	do so). Under the one trampoline the Tcl frames would hide the
 *	command's C frames, a wrong path. The command's own levels are
 *	found as in EnteringFrames; a command called from C, a trampoline
 *	just entered or several interps are left alone.
 *
 * Results:
 *	1 if a trampoline is missing.
 *
 * Side effects:
 *	None.
 *
 * Signal safety: safe; DISPATCH_STEPS callbacks read.
 *
 *----------------------------------------------------------------------
 */

static int
MissedTrampoline(
    Cap *c)
{
    NRE_callback *cb0, *walked[DISPATCH_STEPS];
    Command *cmdPtr;
    int steps, i, j;

    if (c->nTramp == 0 || c->tramp[0].index == 0
	    || !(c->tramp[0].spare & TP_TRAMP_SURE)
	    || !OKP(cb0 = (NRE_callback *) c->tramp[0].cb)
	    || (cmdPtr = DispatchCmd(cb0)) == NULL
	    || cmdPtr->nreProc != NULL
	    || (void *) cmdPtr->objProc != cb0->data[0]) {
	return 0;
    }
    if ((steps = OwnLevels(c, 0, cb0, walked)) < 0) {
	return 0;
    }
    for (i = 0; i < c->n; i++) {
	const TpTclRaw *r = &c->raw[i];

	for (j = 0; r->anchor != 0 && j <= steps; j++) {
	    if (r->anchor == (uintptr_t) walked[j]->data[0]
		    || r->anchor == (uintptr_t) walked[j]->data[1]) {
		return 0;	/* The command's own levels. */
	    }
	}
	if (r->type == TP_TCL_PROC || r->type == TP_TCL_LAMBDA
		|| r->type == TP_TCL_METHOD) {
	    return 1;
	}
    }
    return 0;
}

/*
 *----------------------------------------------------------------------
 *
 * CaptureInterp --
 *
 *	Emits all frames of one interp (its coroutine contexts spliced
 *	under their resumers) and gives them segments.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Writes the slot.
 *
 * Signal safety: safe.
 *
 *----------------------------------------------------------------------
 */

static void
CaptureInterp(
    Cap *c,
    Interp *iPtr,
    uint64_t *claimed)
{
    ExecEnv *ee = iPtr->execEnvPtr;
    CallFrame *fp = iPtr->framePtr;
    CmdFrame *cf = iPtr->cmdFramePtr;
    int first = c->n, ctx, outermost, outerDefault;

    c->iPtr = iPtr;
    c->nCreators = 0;
    for (ctx = 0; ctx < MAX_CONTEXTS && !c->full && OKP(ee); ctx++) {
	CoroutineData *corPtr = ee->corPtr;
	TpTclRaw *r;
	Name nm;

	WalkContext(c, fp, cf, ctx > 0);
	if (corPtr == NULL) {
	    break;
	}
	if (ctx + 1 == MAX_CONTEXTS) {
	    c->slot->flags |= TP_SLOT_TCLTRUNC;	/* Outer contexts cut. */
	    break;
	}
	if (!OKP(corPtr) || corPtr->eePtr != ee) {
	    c->slot->flags |= TP_SLOT_TCLERR;
	    break;
	}
	if ((r = NewRaw(c, TP_TCL_CORO, (uintptr_t) corPtr->cmdPtr)) != NULL) {
	    nm.n = 0;
	    NameAdd(&nm, "coroutine ", -1);
	    CmdName(corPtr->cmdPtr, &nm);
	    PutStr(c, nm.b, nm.n, &r->nameOff, &r->nameLen);
	    Witness(r, 0, corPtr);
	}
	fp = corPtr->caller.framePtr;
	cf = corPtr->caller.cmdFramePtr;
	ee = corPtr->callerEEPtr;
    }
    if (c->nTramp < 2) {

	/*
	 * One trampoline owns everything (and the unwinder's fast path
	 * did not read its root): no callback to read.
	 */

	for (ctx = first; ctx < c->n; ctx++) {
	    c->raw[ctx].spare = SP_KNOWN;
	}
	c->segInterp[0] = (c->n > first) ? iPtr : c->segInterp[0];
	return;
    }
    outermost = AssignSegments(c, iPtr, first, c->n, claimed);
    outerDefault = outermost < c->nTramp ? outermost + 1 : c->nTramp;
    Resolve(c, first, c->n, outerDefault);
    CheckCreators(c, first, outerDefault);
    for (ctx = first; ctx < c->n; ctx++) {
	Interp **sipPtr = &c->segInterp[c->raw[ctx].spare & SP_SEG];

	if (!(c->raw[ctx].spare & SP_GUESS) && *sipPtr == NULL) {
	    *sipPtr = iPtr;
	}
    }
}

/*
 *----------------------------------------------------------------------
 *
 * Unclash --
 *
 *	With several interps, a frame without a witness may have been
 *	guessed into a trampoline that runs another interp's witnessed
 *	frames: Resolve puts it just inside its outer neighbour's, but a
 *	child calling its parent through an alias has its own trampolines in
 *	between (the parent's proc caught as it starts went above the
 *	child's proc that called it). Such a frame moves to the nearest
 *	inner trampoline that no other interp holds, if its inner
 *	neighbours allow it.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Changes the segments of raw[first..last).
 *
 * Signal safety: safe.
 *
 *----------------------------------------------------------------------
 */

static void
Unclash(
    Cap *c,
    Interp *iPtr,
    int first,
    int last)
{
    int i, inner = 0, s, t;

    for (i = first; i < last; i++) {
	TpTclRaw *r = &c->raw[i];
	Interp *owner;

	s = r->spare & SP_SEG;
	owner = c->segInterp[s];
	if ((r->spare & SP_GUESS) && owner != NULL && owner != iPtr) {
	    for (t = s - 1; t >= inner; t--) {
		owner = c->segInterp[t];
		if (owner == NULL || owner == iPtr) {
		    r->spare = (r->spare & ~SP_SEG) | t;
		    s = t;
		    break;
		}
	    }
	}
	inner = s;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * ActiveInterps --
 *
 *	The interps whose frames belong to this thread's Tcl stack: the
 *	sampled one, its evaluating ancestors, and their evaluating
 *	children (a child has its own Interp and chains; its trampolines
 *	sit on the same C stack inside the parent's [interp eval]).
 *
 * Results:
 *	Number of interps stored in list[], children after parents.
 *
 * Side effects:
 *	None.
 *
 * Signal safety: safe; bounded by MAX_INTERPS and MAX_CHILDREN.
 *
 *----------------------------------------------------------------------
 */

static int
ActiveInterps(
    Interp *iPtr,
    Interp **list,
    int *depth)
{
    TpInterpInfoPrefix *info;
    int n = 0, i, d;

    for (i = 0; i < MAX_INTERPS; i++) {
	Interp *parent;

	if (!OKP(info = iPtr->interpInfo)
		|| !OKP(parent = (Interp *) info->child.parentInterp)
		|| parent->numLevels <= 0) {
	    break;
	}
	iPtr = parent;
    }
    list[n] = iPtr;
    depth[n++] = 0;
    for (i = 0; i < n && n < MAX_INTERPS; i++) {
	Tcl_HashTable *t;
	int b, seen = 0;

	if (!OKP(info = list[i]->interpInfo)) {
	    continue;
	}
	t = &info->childTable;
	if (!OKP(t->buckets) || t->numBuckets <= 0 || t->numBuckets > 65536
		|| t->numEntries <= 0) {
	    continue;
	}
	for (b = 0; b < t->numBuckets && seen < MAX_CHILDREN; b++) {
	    Tcl_HashEntry *h;

	    for (h = t->buckets[b]; OKP(h) && seen++ < MAX_CHILDREN;
		    h = h->nextPtr) {
		TpChildPrefix *ch = h->clientData;
		Interp *cPtr;

		if (OKP(ch) && OKP(cPtr = (Interp *) ch->childInterp)
			&& cPtr->numLevels > 0 && n < MAX_INTERPS) {
		    for (d = 0; d < n && list[d] != cPtr; d++) {
		    }
		    if (d == n) {
			list[n] = cPtr;
			depth[n++] = depth[i] + 1;
		    }
		}
	    }
	}
    }
    return n;
}

/*
 *----------------------------------------------------------------------
 *
 * TpInterpCapture --
 *
 *	Fills the slot's Tcl frames, innermost first, with their anchors
 *	(see the file header). slot->pc[] and tramp[] must already hold the
 *	C stack and the trampolines' root register values.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Writes slot->nTcl, the Tcl frames, strings and flags.
 *
 * Signal safety: async-signal-safe: reads memory only, no Tcl call, no
 *	allocation, every walk bounded, pointers checked before use.
 *
 *----------------------------------------------------------------------
 */

void
TpInterpCapture(
    Tcl_Interp *interp,
    const TpRing *ring,
    TpSlot *slot)
{
    Interp *list[MAX_INTERPS], *done[MAX_INTERPS];
    int depth[MAX_INTERPS], from[MAX_INTERPS + 1], n, i, j, multi = 0;
    int nEnter;
    uint64_t claimed = 0;
    Cap c;

    memset(&c, 0, sizeof(c));
    c.ring = ring;
    c.slot = slot;
    c.raw = TpSlotTcl(ring, slot);
    c.max = ring->maxTcl;
    c.tramp = TpSlotTramps(ring, slot);
    c.nTramp = slot->nTramp;

    /*
     * TclNRRunCallbacks interrupted in its prologue or epilogue: the
     * register of the root holds its caller's value (gcc's TclEvalObjEx
     * jumps there with its caller's registers restored, and they hold the
     * outer loop's root). Taken as this loop's root it would claim every
     * frame of the outer one, above the C frames that called it. The loop
     * has run no callback yet (or has none left): no frame of its own.
     */

    for (i = 0; i < c.nTramp && nFnBody > 0; i++) {
	TpTramp *t = &TpSlotTramps(ring, slot)[i];
	uintptr_t pc = TpSlotPcs(ring, slot)[t->index];

	if (!(t->spare & TP_TRAMP_SURE) && pc >= fnCodeLo && pc < fnCodeHi) {
	    for (j = 0; j < nFnBody && (pc < fnBody[2 * j]
		    || pc >= fnBody[2 * j + 1]); j++) {
	    }
	    if (j == nFnBody) {
		t->root = TP_ROOT_UNKNOWN;
	    }
	}
    }
    if (!OKP(interp) || !OKP(((Interp *) interp)->execEnvPtr)) {
	slot->nTcl = 0;
	slot->flags |= TP_SLOT_NOTCL;
	return;
    }
    n = ActiveInterps((Interp *) interp, list, depth);
    BoundRoots(&c, (Interp *) interp, n == 1);

    /*
     * Deepest interps first: their frames are usually the innermost, and
     * they claim the inner NULL-root trampolines.
     */

    for (j = 8; j >= 0; j--) {
	for (i = 0; i < n; i++) {
	    if (depth[i] == j && !c.full) {
		from[multi] = c.n;
		done[multi++] = list[i];
		CaptureInterp(&c, list[i], &claimed);
	    }
	}
    }
    from[multi] = c.n;
    for (i = 0; multi > 1 && c.nTramp > 1 && i < multi; i++) {
	Unclash(&c, done[i], from[i], from[i + 1]);
    }
    multi = (multi > 1);

    /*
     * With several interps, order all frames by segment (stable
     * insertion sort: each interp's frames are already ordered).
     */

    if (multi && c.nTramp > 1) {
	for (i = 1; i < c.n; i++) {
	    TpTclRaw t = c.raw[i];

	    for (j = i; j > 0 && (c.raw[j - 1].spare & SP_SEG)
		    > (t.spare & SP_SEG); j--) {
		c.raw[j] = c.raw[j - 1];
	    }
	    c.raw[j] = t;
	}
    }
    for (i = j = 0; i < n; i++) {
	j = depth[i] >= depth[j] ? i : j;
    }

    /*
     * Frames being entered from C are set apart while the others are
     * named from the callbacks (they are no command's word).
     */

    if (!multi && MissedTrampoline(&c)) {
	slot->flags |= TP_SLOT_NOTRAMP;
    }
    nEnter = EnteringFrames(&c);
    c.raw += nEnter;
    c.n -= nEnter;
    c.max -= nEnter;
    DispatchFrames(&c, list[j], OKP(list[j]->execEnvPtr)
	    ? list[j]->execEnvPtr->callbackPtr : NULL);
    NameWords(&c, OKP(list[j]->execEnvPtr)
	    ? list[j]->execEnvPtr->callbackPtr : NULL);
    c.raw -= nEnter;
    c.n += nEnter;
    c.max += nEnter;
    for (i = 0; i < c.n; i++) {
	int s = c.raw[i].spare & SP_SEG;

	c.raw[i].anchor = (i < nEnter) ? TP_ANCHOR_LEAF
		: s < c.nTramp ? ANCHOR(&c.tramp[s]) : 0;
	c.raw[i].spare = 0;
    }
    slot->nTcl = c.n;
    if (c.n == 0) {
	slot->flags |= TP_SLOT_NOTCL;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * TpInterpCheck --
 *
 *	Frames mode reads struct layouts compiled from 8.6 headers.
 *
 * Results:
 *	NULL if the running Tcl is 8.6.x, else a message.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

const char *
TpInterpCheck(void)
{
    int major, minor;

    Tcl_GetVersion(&major, &minor, NULL, NULL);
    if (major != TCL_MAJOR_VERSION || minor != TCL_MINOR_VERSION) {
	return "frames mode reads Tcl " TCL_VERSION " internals; this is another Tcl";
    }
    return NULL;
}

/*
 *----------------------------------------------------------------------
 *
 * TpInterpCurrentRoot, TpInterpNumLevels, TpInterpCoroutine --
 *
 *	The NRE callback on top now (the root a trampoline entered now
 *	would keep), the command nesting level, and the running coroutine
 *	with the numLevels of the command that resumed it (trace mode keeps
 *	a shadow stack per coroutine, indexed from there).
 *
 * Results:
 *	As above; TpInterpCoroutine returns NULL outside coroutines.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

uintptr_t
TpInterpCurrentRoot(
    Tcl_Interp *interp)
{
    return (uintptr_t) TOP_CB(interp);
}

int
TpInterpNumLevels(
    Tcl_Interp *interp)
{
    return ((Interp *) interp)->numLevels;
}

void *
TpInterpCoroutine(
    Tcl_Interp *interp,
    int *baseLevel)
{
    CoroutineData *corPtr = ((Interp *) interp)->execEnvPtr->corPtr;

    *baseLevel = corPtr ? corPtr->auxNumLevels : 0;
    return corPtr;
}

/*
 *----------------------------------------------------------------------
 *
 * TpInterpCoroutineCaller, TpInterpCoroutineCommand --
 *
 *	For a running coroutine: the context that resumed it (another
 *	running coroutine, or NULL for the interp's own context) with that
 *	context's base level (its auxNumLevels, 0 for the interp's), so
 *	that trace mode can walk nested coroutines as frames mode does
 *	(corPtr->callerEEPtr); and the coroutine's command, which names
 *	its "coroutine NAME" marker frame.
 *
 * Results:
 *	TpInterpCoroutineCaller: 1, or 0 when the links do not look like a
 *	running coroutine's (a coroutine switch is under way).
 *
 * Side effects:
 *	None.
 *
 * Signal safety:
 *	TpInterpCoroutineCaller: safe; pointers checked, as in CaptureInterp.
 *
 *----------------------------------------------------------------------
 */

int
TpInterpCoroutineCaller(
    void *cor,
    void **callerPtr,
    int *baseLevel)
{
    CoroutineData *corPtr = cor, *outer;
    ExecEnv *ee;

    *callerPtr = NULL;
    *baseLevel = 0;
    if (!OKP(corPtr) || !OKP(ee = corPtr->callerEEPtr)) {
	return 0;
    }
    if ((outer = ee->corPtr) == NULL) {
	return 1;
    }
    if (!OKP(outer) || outer->eePtr != ee
	    || outer->auxNumLevels > corPtr->auxNumLevels) {
	return 0;
    }
    *callerPtr = outer;
    *baseLevel = outer->auxNumLevels;
    return 1;
}

Tcl_Command
TpInterpCoroutineCommand(
    void *corPtr)
{
    return (Tcl_Command) ((CoroutineData *) corPtr)->cmdPtr;
}

/*
 *----------------------------------------------------------------------
 *
 * CallSitePos, TpInterpCallSiteLive --
 *
 *	Where the command being entered is called from: the CmdFrame on
 *	top (the caller's bytecode frame, linked by TEBC before it
 *	invokes, or a Tcl_EvalEx or list-eval frame) and the position in
 *	it (the bytecode pc, or the command's text or list). Trace mode
 *	records it with each shadow entry. The entry is stale (a later
 *	command at its level has been entered, and its enter trace has not
 *	run yet) when that CmdFrame, found within SITE_DEPTH frames of the
 *	top, has moved on to another position: Tcl links the caller's
 *	frame and sets its pc before it counts the new level. Frames pushed
 *	by the running command itself (its own body calling out, an
 *	[eval]) sit above the site, hence the few frames searched.
 *
 * Results:
 *	TpInterpCallSiteLive: 0 if the entry recorded with (site, pos) is
 *	known stale, else 1 (also when nothing was recorded). When stale
 *	because the site is the top CmdFrame and has moved on, *nowPtr is
 *	its position now (the command being entered), else 0.
 *
 * Side effects:
 *	None.
 *
 * Signal safety:
 *	TpInterpCallSiteLive: safe; at most SITE_DEPTH checked pointers.
 *
 *----------------------------------------------------------------------
 */

#define SITE_DEPTH	4	/* CmdFrames searched for a call site: the
				 * site itself, the running command's own
				 * frame, and two nested script evals. */

static uintptr_t
CallSitePos(
    const CmdFrame *cf)
{
    if (cf->type == TCL_LOCATION_BC || cf->type == TCL_LOCATION_PREBC) {
	return (uintptr_t) cf->data.tebc.pc;
    }
    return cf->cmd ? (uintptr_t) cf->cmd : (uintptr_t) cf->cmdObj;
}

int
TpInterpCallSiteLive(
    Tcl_Interp *interp,
    uintptr_t site,
    uintptr_t pos,
    uintptr_t *nowPtr)
{
    CmdFrame *cf = ((Interp *) interp)->cmdFramePtr;
    uintptr_t now;
    int i;

    *nowPtr = 0;
    if (site == 0) {
	return 1;
    }
    for (i = 0; i < SITE_DEPTH && OKP(cf); i++, cf = cf->nextPtr) {
	if ((uintptr_t) cf == site) {
	    if ((now = CallSitePos(cf)) == pos) {
		return 1;
	    }
	    *nowPtr = (i == 0) ? now : 0;
	    return 0;
	}
    }
    return 0;
}

/*
 *----------------------------------------------------------------------
 *
 * TpInterpLambda --
 *
 *	What trace mode needs to name a call "apply lambda" as frames mode
 *	does (EmitCallFrame): the lambda's body and, when it was written in
 *	a sourced file, that file and the line its body starts on. The
 *	lambda is first given its internal representation, exactly as
 *	[apply] is about to do in the same context (the CmdFrame of the
 *	call gives the location, TIP 280), so [apply] then finds it done;
 *	a lambda that cannot be converted is left to [apply] to report.
 *	The location is read where frames mode reads it: from the compiled
 *	body's ExtCmdLoc, or before the first call compiles it, from the
 *	location the compiler will use (iPtr->linePBodyPtr).
 *
 * Results:
 *	1 and *bodyPtr, *filePtr (NULL if not from a file) and *linePtr;
 *	0 if lambdaObj is not a valid lambda or lambdaType is unknown.
 *
 * Side effects:
 *	Converts lambdaObj to a lambda (it may allocate and parse the
 *	argument list). The interp's result and error state are kept.
 *
 *----------------------------------------------------------------------
 */

int
TpInterpLambda(
    Tcl_Interp *interp,
    Tcl_Obj *lambdaObj,
    const Tcl_ObjType *lambdaType,	/* apply's lambdaExpr type. */
    Tcl_Obj **bodyPtr,
    Tcl_Obj **filePtr,
    int *linePtr)
{
    Proc *procPtr;

    *bodyPtr = *filePtr = NULL;
    *linePtr = 0;
    if (lambdaType == NULL || lambdaType->setFromAnyProc == NULL) {
	return 0;
    }
    if (lambdaObj->typePtr != lambdaType || ((Proc *)
	    lambdaObj->internalRep.twoPtrValue.ptr1)->iPtr != (Interp *) interp) {
	Tcl_InterpState state = Tcl_SaveInterpState(interp, TCL_OK);

	if (lambdaType->setFromAnyProc(interp, lambdaObj) != TCL_OK) {
	    Tcl_RestoreInterpState(interp, state);
	    return 0;
	}
	Tcl_DiscardInterpState(state);
    }
    procPtr = lambdaObj->internalRep.twoPtrValue.ptr1;
    *bodyPtr = procPtr->bodyPtr;
    TpInterpProcPlace(interp, procPtr, filePtr, linePtr);
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * TpInterpProcPlace --
 *
 *	Where a proc's or lambda's body was written, when it was written in
 *	a sourced file: from the compiled body's ExtCmdLoc, or before the
 *	first call compiles it, from the location the compiler will use
 *	(iPtr->linePBodyPtr, TIP 280).
 *
 * Results:
 *	1 with *filePtr and *linePtr (the line the body starts on) set, or
 *	0 (*filePtr NULL) when the body was not read from a file.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

int
TpInterpProcPlace(
    Tcl_Interp *interp,
    void *proc,			/* Proc *. */
    Tcl_Obj **filePtr,
    int *linePtr)
{
    Interp *iPtr = (Interp *) interp;
    Proc *procPtr = proc;
    const Tcl_ObjType *bodyType;
    Tcl_HashEntry *h;
    CmdFrame *cf;

    *filePtr = NULL;
    *linePtr = 0;
    if (procPtr == NULL || procPtr->bodyPtr == NULL) {
	return 0;
    }
    bodyType = procPtr->bodyPtr->typePtr;
    if (bodyType != NULL && strcmp(bodyType->name, "bytecode") == 0) {
	h = Tcl_FindHashEntry(iPtr->lineBCPtr,
		(char *) procPtr->bodyPtr->internalRep.twoPtrValue.ptr1);
	if (h != NULL) {
	    ExtCmdLoc *eclPtr = Tcl_GetHashValue(h);

	    if (eclPtr->type == TCL_LOCATION_SOURCE && eclPtr->path) {
		*filePtr = eclPtr->path;
		*linePtr = eclPtr->start;
	    }
	    return *filePtr != NULL;
	}
    }
    h = Tcl_FindHashEntry(iPtr->linePBodyPtr, (char *) procPtr);
    if (h != NULL && (cf = Tcl_GetHashValue(h)) != NULL
	    && cf->type == TCL_LOCATION_SOURCE && cf->nline > 0
	    && cf->line != NULL && cf->line[0] >= 0
	    && cf->data.eval.path != NULL) {
	*filePtr = cf->data.eval.path;
	*linePtr = cf->line[0];
    }
    return *filePtr != NULL;
}

/*
 *----------------------------------------------------------------------
 *
 * SeeProc, CommandProcsNs, TpInterpCommandProcs --
 *
 *	Calls fn for every command of every namespace with its fully
 *	qualified name and the C function that runs it: objProc, or proc
 *	for string commands (objProc is then TclInvokeStringCommand), and
 *	nreProc too when it differs (NRE dispatch calls nreProc). Skipped:
 *	procs (they are Tcl frames), imported commands (the target is named
 *	in its own namespace), functions shared by several commands (every
 *	TclOO object, alias, coroutine or ensemble shares one: naming it
 *	after one of them would mislead), and every function of libtcl
 *	itself: it may create more commands with that function later (one
 *	[interp create] gives one child command, the next one a second),
 *	and frames mode names what libtcl runs from the command resolved.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Whatever fn does.
 *
 *----------------------------------------------------------------------
 */

typedef struct ProcSeen {
    Tcl_HashTable byProc;	/* C function -> Tcl_Obj name, or NULL once
				 * a second command uses it. */
    uintptr_t tclLo, tclHi;	/* Where libtcl is mapped ([lo, hi), lo 0
				 * if unknown). dladdr per command was a
				 * tenth of a short run's profiling cost. */
} ProcSeen;

/*
 * dl_iterate_phdr callback: the extent of the object loaded at the base
 * ps->tclLo holds on entry.
 */

static int
LibtclExtent(
    struct dl_phdr_info *info,
    size_t size,
    void *cd)
{
    ProcSeen *ps = cd;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    int i;

    (void) size;
    if (info->dlpi_addr != ps->tclLo) {
	return 0;
    }
    for (i = 0; i < info->dlpi_phnum; i++) {
	const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

	if (ph->p_type == PT_LOAD) {
	    uintptr_t a = info->dlpi_addr + ph->p_vaddr;

	    if (a < lo) {
		lo = a;
	    }
	    if (a + ph->p_memsz > hi) {
		hi = a + ph->p_memsz;
	    }
	}
    }
    if (hi > lo) {
	ps->tclLo = lo;
	ps->tclHi = hi;
	return 1;
    }
    return 0;
}

static void
SeeProc(
    ProcSeen *ps,
    uintptr_t proc,
    const char *name)
{
    int isNew;
    Tcl_HashEntry *h;
    Tcl_Obj *old;
    if (proc >= ps->tclLo && proc < ps->tclHi) {
	return;
    }
    h = Tcl_CreateHashEntry(&ps->byProc, (void *) proc, &isNew);
    old = isNew ? NULL : Tcl_GetHashValue(h);
    if (isNew) {
	Tcl_Obj *nameObj = Tcl_NewStringObj(name, -1);

	Tcl_IncrRefCount(nameObj);
	Tcl_SetHashValue(h, nameObj);
    } else if (old != NULL && strcmp(Tcl_GetString(old), name) != 0) {
	Tcl_DecrRefCount(old);
	Tcl_SetHashValue(h, NULL);
    }
}

static void
CommandProcsNs(
    Namespace *nsPtr,
    ProcSeen *ps,
    int level)
{
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;
    Tcl_DString ds;
    int isGlobal = (nsPtr->parentPtr == NULL);

    Tcl_DStringInit(&ds);
    for (hPtr = Tcl_FirstHashEntry(&nsPtr->cmdTable, &search); hPtr;
	    hPtr = Tcl_NextHashEntry(&search)) {
	Command *cmdPtr = Tcl_GetHashValue(hPtr);
	uintptr_t proc = (uintptr_t) cmdPtr->objProc;

	if (TclIsProc(cmdPtr) || TclGetOriginalCommand((Tcl_Command) cmdPtr)) {
	    continue;
	}
	Tcl_DStringSetLength(&ds, 0);
	Tcl_DStringAppend(&ds, isGlobal ? "" : nsPtr->fullName, -1);
	Tcl_DStringAppend(&ds, "::", 2);
	Tcl_DStringAppend(&ds, Tcl_GetHashKey(&nsPtr->cmdTable, hPtr), -1);
#if TCL_MAJOR_VERSION < 9
	if (cmdPtr->objProc == TclInvokeStringCommand && cmdPtr->proc) {
	    proc = (uintptr_t) cmdPtr->proc;
	}
#endif
	if (proc) {
	    SeeProc(ps, proc, Tcl_DStringValue(&ds));
	}
	if (cmdPtr->nreProc && (uintptr_t) cmdPtr->nreProc != proc) {
	    SeeProc(ps, (uintptr_t) cmdPtr->nreProc, Tcl_DStringValue(&ds));
	}
    }
    Tcl_DStringFree(&ds);
    if (level < 100) {
	for (hPtr = Tcl_FirstHashEntry(&nsPtr->childTable, &search); hPtr;
		hPtr = Tcl_NextHashEntry(&search)) {
	    CommandProcsNs(Tcl_GetHashValue(hPtr), ps, level + 1);
	}
    }
}

void
TpInterpCommandProcs(
    Tcl_Interp *interp,
    void (*fn)(void *cd, const char *name, uintptr_t objProc),
    void *cd)
{
    ProcSeen ps;
    Tcl_HashSearch search;
    Tcl_HashEntry *h;
    Dl_info info;

    Tcl_InitHashTable(&ps.byProc, TCL_ONE_WORD_KEYS);
    ps.tclLo = ps.tclHi = 0;
    TpInterpTclCode(&ps.tclLo, &ps.tclHi);	/* Linked into the program. */
    if (ps.tclLo == 0 && dladdr((void *) tclStubsPtr->tcl_GetVersion, &info)) {
	ps.tclLo = (uintptr_t) info.dli_fbase;
	if (!dl_iterate_phdr(LibtclExtent, &ps)) {
	    ps.tclLo = ps.tclHi = 0;
	}
    }
    CommandProcsNs(((Interp *) interp)->globalNsPtr, &ps, 0);
    for (h = Tcl_FirstHashEntry(&ps.byProc, &search); h;
	    h = Tcl_NextHashEntry(&search)) {
	Tcl_Obj *nameObj = Tcl_GetHashValue(h);

	if (nameObj != NULL) {
	    fn(cd, Tcl_GetString(nameObj),
		    (uintptr_t) Tcl_GetHashKey(&ps.byProc, h));
	    Tcl_DecrRefCount(nameObj);
	}
    }
    Tcl_DeleteHashTable(&ps.byProc);
}

/*
 * ----------------------------------------------------------------------
 * Calibration: where the trampolines of this libtcl are, and where each
 * keeps rootPtr and the callback it runs (see TpTrampSite). A C command
 * re-enters Tcl twice, nested, through one entry API, recording TOP_CB
 * before each entry; the inner command unwinds its own stack and looks
 * for two frames at the same return address holding, at the same
 * location (a callee-saved register, else a word of the frame), the two
 * roots in order. That frame is the entry's trampoline, whatever function
 * it belongs to (TclNRRunCallbacks, or a caller it was inlined into) and
 * wherever the compiler keeps the values. Each entry API is tried, as
 * each may have its own copy of the loop.
 * ----------------------------------------------------------------------
 */

static const int calibRegs[] = {
    UNW_X86_64_RBX, UNW_X86_64_RBP, UNW_X86_64_R12, UNW_X86_64_R13,
    UNW_X86_64_R14, UNW_X86_64_R15,
#ifdef _WIN32
    UNW_X86_64_RSI, UNW_X86_64_RDI	/* Callee-saved in the Windows ABI. */
#endif
};
#define NREGS ((int) (sizeof(calibRegs) / sizeof(int)))
#define CALIB_FRAMES	64	/* Frames unwound by the inner command. */
#define LOOP_BEFORE	0x60	/* Bytes of an inlined loop taken as the
				 * trampoline before its callback call, */
#define LOOP_AFTER	0x30	/* and after it, where the unwind rows do
				 * not bound it: the rest of the loop (its
				 * callback record freed, clang 14 -O2: up to
				 * +0x2a) and its exit, up to the epilogue
				 * restoring the root's register (+0x32). */
#define LOOP_AFTER_MAX	0x100	/* The most taken when they do. */
#define CALIB_SLOTS	1024	/* Bytes of a frame searched for a value. */

/*
 * The entry APIs calibrated: those C code uses to enter Tcl (each may own
 * a copy of the trampoline), and two whose callers call TclNRRunCallbacks
 * itself in every build (tclExecute.c's Tcl_ExprObj, tclCompile.c's
 * Tcl_SubstObj), so that the function's own locations are known.
 */

enum {
    API_EVALOBJV, API_EVALOBJEX, API_EVALOBJEX_LIST, API_EVALEX, API_EXPR,
    API_SUBST, API_NRCALL, API_CHILD, API_COUNT
};
static const char *const apiNames[API_COUNT] = {
    "Tcl_EvalObjv", "Tcl_EvalObjEx", "Tcl_EvalObjEx(list)", "Tcl_EvalEx",
    "Tcl_ExprObj", "Tcl_SubstObj", "Tcl_NRCallObjProc", "interp eval"
};

#if TCL_MAJOR_VERSION < 9 && !defined(Tcl_CreateChild)
#define Tcl_CreateChild Tcl_CreateSlave	/* 8.6.10's headers. */
#endif

/*
 * API_CHILD is libtcl entering Tcl by itself: [interp eval child script]
 * runs the child's trampoline in TclEvalObjEx, called from tclInterp.c,
 * which clang -O3 compiles out of line with a copy of the loop that no
 * entry API reaches. The calibration commands are then the child's, and
 * each entry is the parent's [interp eval]. The child is a safe one: an
 * unsafe child runs Tcl_Init (init.tcl compiled and run), a quarter of a
 * first [profiler start]; the path into it is the same. ([interp eval {}
 * script] into the interp itself is not: with gcc -O2 it found another
 * site, root on the stack, where the child finds TclEvalObjEx's.)
 */

typedef struct Calib {
    int api;			/* API_* being calibrated. */
    int depth;			/* Nesting reached by the outer command. */
    uintptr_t roots[2];		/* TOP_CB before each nested entry. */
    uintptr_t interp;		/* The interp both trampolines run. */
    int tebcOk;			/* The TEBCdata layout was verified. */
    Tcl_Obj *outerName, *innerName;
    int pipe[2];		/* For SafeRead. */
    TpTrampSite site;		/* What the inner command found... */
    int found;			/* ... if it found it. */
    Object *oPtr;		/* Object whose forward runs CalibMethodCmd. */
    int nCtx;			/* Callbacks found holding its context. */
    Tcl_Interp *parent;		/* API_CHILD: the interp evaluating */
    Tcl_Obj *childPath;		/* [interp eval childPath name]. */
} Calib;

/*
 *----------------------------------------------------------------------
 *
 * SafeRead --
 *
 *	Copies len bytes from an address that may not be mapped (a register
 *	value during calibration): the kernel checks it for write(2).
 *
 * Results:
 *	1 if the copy succeeded.
 *
 * Side effects:
 *	None visible.
 *
 *----------------------------------------------------------------------
 */

static int
SafeRead(
    Calib *cb,
    uintptr_t addr,
    void *buf,
    size_t len)
{
    if (addr < 4096 || (addr & (sizeof(void *) - 1)) || cb->pipe[0] < 0) {
	return 0;
    }
    if (write(cb->pipe[1], (void *) addr, len) != (ssize_t) len) {
	return 0;
    }
    return read(cb->pipe[0], buf, len) == (ssize_t) len;
}

/*
 *----------------------------------------------------------------------
 *
 * CalibNRProc, CalibEnter --
 *
 *	Enter Tcl to run the command named by nameObj through the entry API
 *	being calibrated. CalibNRProc is the NR procedure handed to
 *	Tcl_NRCallObjProc.
 *
 * Results:
 *	The evaluation's code.
 *
 * Side effects:
 *	Runs the command.
 *
 *----------------------------------------------------------------------
 */

static int
CalibNRProc(
    void *cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    (void) objc; (void) objv;
    return Tcl_NREvalObj(interp, (Tcl_Obj *) cd, 0);
}

static int
CalibEnter(
    Calib *cb,
    Tcl_Interp *interp,
    Tcl_Obj *nameObj)
{
    Tcl_Obj *objPtr, *resultPtr = NULL;
    int code;

    switch (cb->api) {
    case API_EVALOBJV:
	return Tcl_EvalObjv(interp, 1, &nameObj, 0);
    case API_EVALOBJEX:
	return Tcl_EvalObjEx(interp, nameObj, 0);
    case API_EVALEX:
	return Tcl_EvalEx(interp, Tcl_GetString(nameObj), -1, 0);
    case API_NRCALL:
	return Tcl_NRCallObjProc(interp, CalibNRProc, nameObj, 0, NULL);
    case API_CHILD: {
	Tcl_Obj *words[4];

	words[0] = Tcl_NewStringObj("::interp", -1);
	words[1] = Tcl_NewStringObj("eval", -1);
	words[2] = cb->childPath;
	words[3] = nameObj;
	objPtr = Tcl_NewListObj(4, words);
	Tcl_IncrRefCount(objPtr);
	code = Tcl_EvalObjEx(cb->parent, objPtr, 0);
	Tcl_DecrRefCount(objPtr);
	return code;
    }
    case API_EVALOBJEX_LIST:
	objPtr = Tcl_NewListObj(1, &nameObj);
	break;
    default:
	objPtr = Tcl_ObjPrintf("[%s]", Tcl_GetString(nameObj));
	break;
    }
    Tcl_IncrRefCount(objPtr);
    if (cb->api == API_EXPR) {
	code = Tcl_ExprObj(interp, objPtr, &resultPtr);
	if (resultPtr != NULL) {
	    Tcl_DecrRefCount(resultPtr);
	}
    } else if (cb->api == API_SUBST) {
	resultPtr = Tcl_SubstObj(interp, objPtr, TCL_SUBST_ALL);
	code = resultPtr ? TCL_OK : TCL_ERROR;
	if (resultPtr != NULL) {
	    Tcl_IncrRefCount(resultPtr);
	    Tcl_DecrRefCount(resultPtr);
	}
    } else {
	code = Tcl_EvalObjEx(interp, objPtr, 0);
    }
    Tcl_DecrRefCount(objPtr);
    return code;
}

/*
 *----------------------------------------------------------------------
 *
 * CalibOuterCmd, CalibInnerCmd --
 *
 *	The two temporary commands of TpInterpCalibrate. The outer one,
 *	called at depth 0 and 1, records TOP_CB and re-enters Tcl through
 *	the API being calibrated (one trampoline each, whose root is that
 *	TOP_CB). The inner one checks that its caller's CmdFrame sits in a
 *	TEBCdata held by a pending callback, then unwinds its own stack and
 *	finds the two trampoline frames (FindSite).
 *
 * Results:
 *	TCL_OK, or the nested evaluation's code.
 *
 * Side effects:
 *	Fill the Calib record.
 *
 *----------------------------------------------------------------------
 */

static int
CalibOuterCmd(
    void *cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Calib *cb = cd;
    int d = cb->depth++;

    (void) objc; (void) objv;
    if (d > 1) {
	return TCL_OK;
    }
    cb->roots[d] = (uintptr_t) TOP_CB(interp);
    return CalibEnter(cb, interp, d == 0 ? cb->outerName : cb->innerName);
}

static Tcl_ObjCmdProc CalibInnerCmd;

/*
 * One frame of the inner command's stack: its return address, stack
 * pointer and callee-saved registers.
 */

typedef struct CalibFrame {
    uintptr_t ip, sp;
    unw_word_t regs[NREGS];
} CalibFrame;

/*
 *----------------------------------------------------------------------
 *
 * LocValue, FindLoc, InterpMatch, CallbackAt, FindSite --
 *
 *	The search of CalibInnerCmd. LocValue reads a location in a frame
 *	(the frames are live: they are the inner command's callers).
 *	FindLoc finds a location where two frames hold two given values,
 *	registers first; with own, only the function's own: a register it
 *	saved (one it did not save holds its caller's value: at -O0 the
 *	calibration command's interp, kept in r14 by tclprof's code, was
 *	still there in both trampolines, and in a worker thread that
 *	register holds something else), a slot other than the ones it
 *	saved registers in. The interp is the same in every frame, so
 *	only it needs that. InterpMatch: a value is the interp. CallbackAt
 *	tells whether a value is a callback
 *	running a given command (Dispatch's data: objProc, clientData, objc,
 *	objv). FindSite finds the innermost pair of frames with the same
 *	return address whose root location holds roots[1] and roots[0].
 *
 * Results:
 *	FindLoc, CallbackAt, FindSite: 1 if found.
 *
 * Side effects:
 *	FindSite fills cb->site and may set known.dispatch.
 *
 *----------------------------------------------------------------------
 */

static TP_NO_ASAN uintptr_t
LocValue(
    const CalibFrame *f,
    const TpValueLoc *loc)
{
    int i;

    if (loc->kind == TP_LOC_STACK) {
	return *(const uintptr_t *) (f->sp + loc->off);
    }
    for (i = 0; i < NREGS; i++) {
	if (calibRegs[i] == loc->reg) {
	    return (uintptr_t) f->regs[i];
	}
    }
    return TP_ROOT_UNKNOWN;
}

static int
FindLoc(
    const CalibFrame *fr,	/* Frames, innermost first. */
    int n,
    int i, int j,		/* Two frames of it, i < j ... */
    int (*match)(Calib *, const CalibFrame *, uintptr_t, int),
    Calib *cb,			/* ... whose values v must satisfy
				 * match(cb, frame, v, 0 for i / 1 for j). */
    int own,			/* Only the function's own registers and
				 * slots. */
    TpValueLoc *out)
{
    TpValueLoc loc;
    uintptr_t sizeI, sizeJ, off;
    int r, k;
    uint32_t saved = ~0u;	/* Registers the function saved. */
    int32_t cfaOff[16];

    memset(&loc, 0, sizeof(loc));
    memset(cfaOff, 0, sizeof(cfaOff));
#ifndef _WIN32
    if (own && !TpCfiSavedRegs(fr[i].ip - 1, &saved, cfaOff)) {
	saved = ~0u;		/* No table here: any location, as before. */
	memset(cfaOff, 0, sizeof(cfaOff));
    }
#endif
    loc.kind = TP_LOC_REG;
    for (r = 0; r < NREGS; r++) {
	loc.reg = (uint8_t) calibRegs[r];
	if (own && calibRegs[r] < 32 && !(saved & (1u << calibRegs[r]))) {
	    continue;
	}
	if (match(cb, &fr[i], LocValue(&fr[i], &loc), 0)
		&& match(cb, &fr[j], LocValue(&fr[j], &loc), 1)) {
	    *out = loc;
	    return 1;
	}
    }

    /*
     * A frame's own words lie between its stack pointer and its caller's.
     */

    if (j + 1 >= n) {
	return 0;
    }
    sizeI = fr[i + 1].sp - fr[i].sp;
    sizeJ = fr[j + 1].sp - fr[j].sp;
    loc.kind = TP_LOC_STACK;
    loc.reg = 0;
    for (off = 0; off + 8 <= sizeI && off + 8 <= sizeJ && off < CALIB_SLOTS;
	    off += 8) {
	int theirs = 0;

	for (k = 0; own && k < 16; k++) {
	    theirs |= (saved & (1u << k)) && fr[i].sp + off
		    == fr[i + 1].sp + (uintptr_t) (intptr_t) cfaOff[k];
	}
	if (theirs) {
	    continue;
	}
	loc.off = (uint16_t) off;
	if (match(cb, &fr[i], LocValue(&fr[i], &loc), 0)
		&& match(cb, &fr[j], LocValue(&fr[j], &loc), 1)) {
	    *out = loc;
	    return 1;
	}
    }
    return 0;
}

static int
RootMatch(
    Calib *cb,
    const CalibFrame *f,
    uintptr_t v,
    int outer)
{
    (void) f;
    return v == cb->roots[outer ? 0 : 1];
}

static int
InterpMatch(
    Calib *cb,
    const CalibFrame *f,
    uintptr_t v,
    int outer)
{
    (void) f; (void) outer;
    return v == cb->interp;
}

static int
CallbackAt(
    Calib *cb,
    const CalibFrame *f,
    uintptr_t v,
    int outer)
{
    NRE_callback copy;

    (void) f;
    if (!SafeRead(cb, v, &copy, sizeof(copy))
	    || copy.data[0] != (outer ? (void *) CalibOuterCmd
		    : (void *) CalibInnerCmd)
	    || PTR2INT(copy.data[2]) != 1 || copy.procPtr == NULL) {
	return 0;
    }
    if (known.dispatch == NULL) {
	known.dispatch = copy.procPtr;
    }
    return copy.procPtr == known.dispatch;
}

static int
FindSite(
    Calib *cb,
    const CalibFrame *fr,
    int n)
{
    int i, j;
    TpValueLoc root;

    for (i = 0; i < n; i++) {
	for (j = i + 1; j < n; j++) {
	    if (fr[j].ip != fr[i].ip
		    || !FindLoc(fr, n, i, j, RootMatch, cb, 0, &root)) {
		continue;
	    }
	    memset(&cb->site, 0, sizeof(cb->site));
	    cb->site.ra = fr[i].ip;
	    cb->site.root = root;
	    if (!FindLoc(fr, n, i, j, CallbackAt, cb, 0, &cb->site.cb)) {
		cb->site.cb.kind = TP_LOC_NONE;
	    }
	    if (!FindLoc(fr, n, i, j, InterpMatch, cb, 1, &cb->site.interp)) {
		cb->site.interp.kind = TP_LOC_NONE;
	    }
	    return 1;
	}
    }
    return 0;
}

static int
CalibInnerCmd(
    void *cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Calib *cb = cd;
    Interp *iPtr = (Interp *) interp;
    CmdFrame *cf = iPtr->cmdFramePtr;
    NRE_callback *p;
    CalibFrame fr[CALIB_FRAMES];
    unw_context_t uc;
    unw_cursor_t cur;
    unw_word_t w;
    int i, n;

    (void) objc; (void) objv;

    /*
     * The script calling us is bytecode that called out: its CmdFrame is
     * embedded in a TEBCdata that the pending TEBCresume callback holds.
     */

    if (cf && cf->type == TCL_LOCATION_BC
	    && ((TpTebcPrefix *) ((char *) cf - TEBC_OFFSET))->codePtr
		    == cf->data.tebc.codePtr) {
	for (p = TOP_CB(interp), n = 0; p && n < 1000; p = p->nextPtr, n++) {
	    if ((char *) p->data[0] == (char *) cf - TEBC_OFFSET) {
		cb->tebcOk = 1;
		known.tebcResume = p->procPtr;
	    }
	}
    }

    /*
     * Called by bytecode without error handlers: the callback on top is
     * the NRCommand pushed for this command.
     */

    p = TOP_CB(interp);
    if (cb->api == API_EVALOBJEX && p && !p->data[0] && !p->data[1]
	    && !p->data[2] && !p->data[3]) {
	known.nrCommand = p->procPtr;
    }
    if (unw_getcontext(&uc) != 0 || unw_init_local(&cur, &uc) != 0) {
	return TCL_OK;
    }
    for (n = 0; n < CALIB_FRAMES; n++) {
	if (unw_get_reg(&cur, UNW_REG_IP, &w) != 0 || w == 0) {
	    break;
	}
	fr[n].ip = (uintptr_t) w;
	fr[n].sp = (unw_get_reg(&cur, UNW_REG_SP, &w) == 0) ? (uintptr_t) w : 0;
	for (i = 0; i < NREGS; i++) {
	    if (unw_get_reg(&cur, calibRegs[i], &fr[n].regs[i]) != 0) {
		fr[n].regs[i] = TP_ROOT_UNKNOWN;
	    }
	}
	if (fr[n].sp == 0 || (n > 0 && fr[n].sp <= fr[n - 1].sp)
		|| unw_step(&cur) <= 0) {
	    n++;
	    break;
	}
    }
    cb->interp = (uintptr_t) interp;
    cb->found = FindSite(cb, fr, n);
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * CalibMethodCmd --
 *
 *	Called through a TclOO forward: the first callback under our
 *	NRCommand that holds the forward's CallContext (in data[0] or
 *	data[1]) is the one pushed just before the method's callProc:
 *	ResetFilterFlags by TclOOInvokeContext, SetFilterFlags inside a
 *	filter, FinalizeOONext or FinalizeOONextFilter by a compiled
 *	[next].
 *
 * Results:
 *	TCL_OK.
 *
 * Side effects:
 *	May fill known.ctxHolder[].
 *
 *----------------------------------------------------------------------
 */

static int
CalibMethodCmd(
    void *cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Calib *cb = cd;
    NRE_callback *p;
    CallContext ctx;
    int n, i, d;

    (void) objc; (void) objv;
    for (p = TOP_CB(interp), n = 0; p && n < 16; p = p->nextPtr, n++) {
	for (d = 0; d < 2 && p->procPtr != known.nrCommand; d++) {
	    if (!SafeRead(cb, (uintptr_t) p->data[d], &ctx, sizeof(ctx))
		    || ctx.oPtr != cb->oPtr) {
		continue;
	    }
	    for (i = 0; i < 4 && known.ctxHolder[i].proc != NULL
		    && known.ctxHolder[i].proc != p->procPtr; i++) {
	    }
	    if (i < 4) {
		known.ctxHolder[i].proc = p->procPtr;
		known.ctxHolder[i].index = d;
	    }
	    cb->nCtx++;
	    return TCL_OK;
	}
    }
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * CalibOO --
 *
 *	Learns what frames mode needs to name TclOO methods written in C
 *	and to leave procs and objects to their own frames: the callbacks
 *	holding a method's context (a forward called plainly, through a
 *	filter's [next {*}$args], through a compiled [next] in a method and
 *	in a filter), and the objProcs of a proc, an object and its [my].
 *
 * Results:
 *	None (frames mode names C methods only if this worked).
 *
 * Side effects:
 *	Creates and deletes a proc, two classes and a command.
 *
 *----------------------------------------------------------------------
 */

static void
CalibOO(
    Tcl_Interp *interp,
    Calib *cb)
{
    char script[256], cmd[64];
    Tcl_CmdInfo info;
    Tcl_Command token;
    Tcl_Obj *objName, *scriptObj;
    const char *s;
    int k, code;

    snprintf(cmd, sizeof(cmd), "::tclprof_calibMethod%p", (void *) cb);
    Tcl_CreateObjCommand(interp, cmd, CalibMethodCmd, cb, NULL);
    scriptObj = Tcl_NewObj();
    Tcl_IncrRefCount(scriptObj);
    for (s = "proc @_p {} {}\n"
	    "oo::class create @_a {forward f @}\n"
	    "oo::class create @_b {forward f @; "
	    "method flt {args} {next {*}$args}; filter flt}\n"
	    "oo::class create @_c {superclass @_a; method f {} {next}}\n"
	    "oo::class create @_d {forward f @; method flt {} {next}; filter flt}\n"
	    "list [@_a new] [@_b new] [@_c new] [@_d new]"; *s; s++) {
	if (*s == '@') {
	    Tcl_AppendToObj(scriptObj, cmd, -1);
	} else {
	    Tcl_AppendToObj(scriptObj, s, 1);
	}
    }
    code = Tcl_EvalObjEx(interp, scriptObj, TCL_EVAL_GLOBAL);
    Tcl_DecrRefCount(scriptObj);
    if (code == TCL_OK) {
	Tcl_Obj *objs = Tcl_GetObjResult(interp), *o;

	Tcl_IncrRefCount(objs);
	for (k = 0; k < 4; k++) {
	    Tcl_Obj *call;

	    if (Tcl_ListObjIndex(NULL, objs, k, &o) != TCL_OK || o == NULL
		    || (token = Tcl_GetCommandFromObj(interp, o)) == NULL) {
		break;
	    }
	    cb->oPtr = ((Command *) token)->objClientData;
	    if (k == 0 && Tcl_GetCommandInfoFromToken(token, &info)) {
		known.framed[1] = info.objProc;
	    }
	    call = Tcl_ObjPrintf("%s f", Tcl_GetString(o));
	    Tcl_IncrRefCount(call);
	    (void) Tcl_EvalObjEx(interp, call, TCL_EVAL_GLOBAL);
	    Tcl_DecrRefCount(call);
	    if (k == 0) {
		call = Tcl_ObjPrintf("info object namespace %s",
			Tcl_GetString(o));
		Tcl_IncrRefCount(call);
		if (Tcl_EvalObjEx(interp, call, TCL_EVAL_GLOBAL) == TCL_OK) {
		    objName = Tcl_ObjPrintf("%s::my",
			    Tcl_GetString(Tcl_GetObjResult(interp)));
		    Tcl_IncrRefCount(objName);
		    if (Tcl_GetCommandInfo(interp, Tcl_GetString(objName),
			    &info)) {
			known.framed[2] = info.objProc;
		    }
		    Tcl_DecrRefCount(objName);
		}
		Tcl_DecrRefCount(call);
	    }
	}
	Tcl_DecrRefCount(objs);
    }
    snprintf(script, sizeof(script), "%s_p", cmd);
    if (Tcl_GetCommandInfo(interp, script, &info)) {
	known.framed[0] = info.objProc;
    }
    for (s = "abcd"; *s; s++) {
	snprintf(script, sizeof(script), "%s_%c", cmd, *s);
	if ((token = Tcl_FindCommand(interp, script, NULL,
		TCL_GLOBAL_ONLY)) != NULL) {
	    Tcl_DeleteCommandFromToken(interp, token);	/* Class: destroys
							 * it. */
	}
    }
    snprintf(script, sizeof(script), "%s_p", cmd);
    Tcl_DeleteCommand(interp, script);
    Tcl_DeleteCommand(interp, cmd);
    Tcl_ResetResult(interp);
    cb->oPtr = NULL;
}

/*
 *----------------------------------------------------------------------
 *
 * TpInterpFindTrampoline --
 *
 *	TclNRRunCallbacks' address range. Its address comes from the
 *	internal stubs table, so a Tcl linked into an executable that
 *	exports nothing is found too; its size from the dynamic symbol
 *	table, else from the static one of the file holding it.
 *
 * Results:
 *	1 and the range, or 0 if its size cannot be found.
 *
 * Side effects:
 *	May read the symbol table of the file holding libtcl.
 *
 *----------------------------------------------------------------------
 */

static int
FunctionRange(
    uintptr_t pc,
    uintptr_t *loPtr,
    uintptr_t *hiPtr)
{
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    TpModules mt;
    uintptr_t off, start, size;
    const char *name;
    int m, ok = 0;

    if (dladdr1((void *) pc, &info, (void **) &sym, RTLD_DL_SYMENT)
	    && sym != NULL && sym->st_size != 0 && info.dli_saddr != NULL
	    && pc >= (uintptr_t) info.dli_saddr
	    && pc < (uintptr_t) info.dli_saddr + sym->st_size) {
	*loPtr = (uintptr_t) info.dli_saddr;
	*hiPtr = (uintptr_t) info.dli_saddr + sym->st_size;
	return 1;
    }
    memset(&mt, 0, sizeof(mt));
    if (TpModulesScan(&mt) == TCL_OK
	    && (m = TpModulesFind(&mt, pc, &off)) >= 0
	    && TpSymbolLookup(&mt.mods[m], off, &name, &start, &size)) {
	*loPtr = pc - (off - start);
	*hiPtr = *loPtr + size;
	ok = 1;
    }
    TpModulesFree(&mt);
    return ok;
}

int
TpInterpFindTrampoline(
    uintptr_t *loPtr,
    uintptr_t *hiPtr)
{
    uintptr_t addr = (uintptr_t) (void *) TclNRRunCallbacks;

    return addr != 0 && FunctionRange(addr, loPtr, hiPtr) && *loPtr == addr;
}

/*
 *----------------------------------------------------------------------
 *
 * TpInterpTclCode --
 *
 *	Where libtcl's code lies when it is linked into another object (a
 *	static tclsh, an application embedding Tcl): from the lowest to the
 *	end of the highest function of its stub tables, which hold every
 *	public and internal entry point. A linker places an archive's
 *	objects together, apart from the application's own.
 *
 * Results:
 *	*loPtr and *hiPtr, absolute; both 0 when libtcl is a library of its
 *	own (its module is then internal as a whole).
 *
 * Side effects:
 *	May read the symbol table of the executable.
 *
 *----------------------------------------------------------------------
 */

static void
StubRange(
    const void *table,
    size_t size,
    const void *base,		/* Load address of libtcl's object. */
    uintptr_t *lo,
    uintptr_t *hi)
{
    const char *p = (const char *) table + 2 * sizeof(void *);
    Dl_info info;
    uintptr_t f;

    if (table == NULL) {
	return;
    }
    for (; p + sizeof(void *) <= (const char *) table + size;
	    p += sizeof(void *)) {
	memcpy(&f, p, sizeof(f));
	if (f == 0 || !dladdr((void *) f, &info) || info.dli_fbase != base) {
	    continue;
	}
	*lo = (*lo == 0 || f < *lo) ? f : *lo;
	*hi = f > *hi ? f : *hi;
    }
}

static struct {
    pthread_once_t once;
    uintptr_t lo, hi;
} tclCode = { PTHREAD_ONCE_INIT, 0, 0 };	/* TpInterpTclCode's answer,
						 * found once per process. */

static void TclCodeOnce(void);

void
TpInterpTclCode(
    uintptr_t *loPtr,
    uintptr_t *hiPtr)
{
    pthread_once(&tclCode.once, TclCodeOnce);
    *loPtr = tclCode.lo;
    *hiPtr = tclCode.hi;
}

static void
TclCodeOnce(void)
{
    Dl_info info;
    const char *base;
    uintptr_t lo = 0, hi = 0, off, start, size;
    const char *name;
    TpModules mt;
    int m;

    if (!dladdr((void *) tclStubsPtr->tcl_GetVersion, &info)
	    || info.dli_fname == NULL) {
	return;
    }
    base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    if (strncmp(base, "libtcl", 6) == 0 && base[6] >= '0' && base[6] <= '9') {
	return;
    }
    StubRange(tclStubsPtr, sizeof(*tclStubsPtr), info.dli_fbase, &lo, &hi);
    StubRange(tclIntStubsPtr, sizeof(*tclIntStubsPtr), info.dli_fbase, &lo,
	    &hi);
    StubRange(tclIntPlatStubsPtr, sizeof(*tclIntPlatStubsPtr),
	    info.dli_fbase, &lo, &hi);
    if (lo == 0) {
	return;
    }
    memset(&mt, 0, sizeof(mt));
    if (TpModulesScan(&mt) == TCL_OK
	    && (m = TpModulesFind(&mt, hi, &off)) >= 0
	    && TpSymbolLookup(&mt.mods[m], off, &name, &start, &size)) {
	hi += start + size - off;
    } else {
	hi += 1;
    }
    TpModulesFree(&mt);
    tclCode.lo = lo;
    tclCode.hi = hi;
}

/*
 *----------------------------------------------------------------------
 *
 * TpLocFormat --
 *
 *	Describes a location for [profiler status]: "r14", "sp+0x28".
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Writes buf.
 *
 *----------------------------------------------------------------------
 */

void
TpLocFormat(
    const TpValueLoc *loc,
    char *buf,
    size_t size)
{
    static const char *const names[16] = {
	NULL, NULL, NULL, "rbx", "rsi", "rdi", "rbp", NULL,
	NULL, NULL, NULL, NULL, "r12", "r13", "r14", "r15"
    };

    if (loc->kind == TP_LOC_REG && loc->reg < 16 && names[loc->reg]) {
	snprintf(buf, size, "%s", names[loc->reg]);
    } else if (loc->kind == TP_LOC_STACK) {
	snprintf(buf, size, "sp+0x%x", (unsigned) loc->off);
    } else {
	snprintf(buf, size, "none");
    }
}

/*
 *----------------------------------------------------------------------
 *
 * TpInterpCalibrate --
 *
 *	Finds the trampolines of this libtcl and where each keeps its root
 *	and callback (see the section header), and checks the TEBCdata
 *	layout that frames mode relies on. Not for the signal handler.
 *
 * Results:
 *	1 if at least the entries of Tcl_EvalObjv and Tcl_EvalObjEx were
 *	found; 0 and a reason (new Tcl_Obj) in *whyPtr otherwise. The sites
 *	found are in cfg either way.
 *
 * Side effects:
 *	Fills cfg->sites, nSites and fnRoot (cfg->trampLo/Hi must be set).
 *	Creates and deletes temporary commands; evaluates tiny scripts in a
 *	namespace of its own, so the program's variables are untouched.
 *
 *----------------------------------------------------------------------
 */

int
TpInterpCalibrate(
    Tcl_Interp *interp,
    TpUnwindConfig *cfg,
    Tcl_Obj **whyPtr)
{
    Calib cb;
    char outer[64], inner[64];
    int i, k, code, missing = 0;
    Tcl_Obj *why = NULL;
    Tcl_InterpState state;

    memset(&cb, 0, sizeof(cb));
    cfg->nSites = 0;
    memset(&cfg->fnRoot, 0, sizeof(cfg->fnRoot));
    if (pipe(cb.pipe) != 0) {
	cb.pipe[0] = cb.pipe[1] = -1;
    }
    known.cmdNameType = Tcl_GetObjType("cmdName");
    state = Tcl_SaveInterpState(interp, TCL_OK);
    snprintf(outer, sizeof(outer), "::tclprof_calibOuter%p", (void *) &cb);
    snprintf(inner, sizeof(inner), "::tclprof_calibInner%p", (void *) &cb);
    cb.outerName = Tcl_NewStringObj(outer, -1);
    cb.innerName = Tcl_NewStringObj(inner, -1);
    Tcl_IncrRefCount(cb.outerName);
    Tcl_IncrRefCount(cb.innerName);
    Tcl_CreateObjCommand(interp, outer, CalibOuterCmd, &cb, NULL);
    Tcl_CreateObjCommand(interp, inner, CalibInnerCmd, &cb, NULL);
    for (cb.api = 0; cb.api < API_COUNT; cb.api++) {
	Tcl_Interp *in = interp;

	cb.depth = 0;
	cb.found = 0;
	if (cb.api == API_CHILD) {
	    char child[64];

	    snprintf(child, sizeof(child), "tclprof_calibChild%p", (void *) &cb);
	    in = Tcl_CreateChild(interp, child, 1);
	    if (in == NULL) {
		continue;
	    }
	    cb.parent = interp;
	    cb.childPath = Tcl_NewListObj(0, NULL);
	    Tcl_ListObjAppendElement(NULL, cb.childPath,
		    Tcl_NewStringObj(child, -1));
	    Tcl_IncrRefCount(cb.childPath);
	    Tcl_CreateObjCommand(in, outer, CalibOuterCmd, &cb, NULL);
	    Tcl_CreateObjCommand(in, inner, CalibInnerCmd, &cb, NULL);
	}
	code = CalibEnter(&cb, in, cb.outerName);
	if (cb.api == API_CHILD) {
	    Tcl_DeleteInterp(in);
	    Tcl_DecrRefCount(cb.childPath);
	    cb.childPath = NULL;
	}
	if (code != TCL_OK || cb.depth != 2 || !cb.found
		|| cb.roots[0] == cb.roots[1]) {
	    if (cb.api == API_EVALOBJV || cb.api == API_EVALOBJEX) {
		if (why == NULL) {
		    why = Tcl_NewObj();
		}
		Tcl_AppendPrintfToObj(why, "%sno trampoline found for %s",
			missing++ ? "; " : "", apiNames[cb.api]);
	    }
	    continue;
	}
	for (k = 0; k < cfg->nSites && cfg->sites[k].ra != cb.site.ra; k++) {
	}
	if (k == cfg->nSites && k < TP_MAX_SITES) {
	    cfg->sites[cfg->nSites++] = cb.site;
	}
    }
    Tcl_DeleteCommand(interp, outer);
    Tcl_DeleteCommand(interp, inner);
    Tcl_DecrRefCount(cb.outerName);
    Tcl_DecrRefCount(cb.innerName);

    /*
     * Sorted by return address for TpTrampFind; TclNRRunCallbacks' own
     * site also gives the location of the root in any frame of it.
     */

    for (i = 1; i < cfg->nSites; i++) {
	TpTrampSite t = cfg->sites[i];

	for (k = i; k > 0 && cfg->sites[k - 1].ra > t.ra; k--) {
	    cfg->sites[k] = cfg->sites[k - 1];
	}
	cfg->sites[k] = t;
    }
    cfg->hostLo = cfg->hostHi = 0;
    for (i = 0; i < cfg->nSites; i++) {
	TpTrampSite *t = &cfg->sites[i];

	if (t->ra > cfg->trampLo && t->ra <= cfg->trampHi) {
	    cfg->fnRoot = t->root;
	    fnCodeLo = cfg->trampLo;
	    fnCodeHi = cfg->trampHi;
	    nFnBody = TpCfiSameCfa(t->ra, fnCodeLo, fnCodeHi, fnBody,
		    FN_BODY_MAX);
	    t->fnLo = t->fnHi = 0;	/* TclNRRunCallbacks' own range. */
	    continue;
	}
	if (!FunctionRange(t->ra - 1, &t->fnLo, &t->fnHi)) {
	    t->fnLo = t->fnHi = 0;
	    continue;
	}

	/*
	 * Only the loop's neighbourhood: its other calls (freeing a
	 * callback, Tcl_GetObjResult) lie just before the callback call
	 * (clang 14 -O2: 0x29-0x56 bytes), while the function's own work
	 * before the loop (TclEvalObjEx evaluating a script directly,
	 * through TclEvalEx, which runs its commands in trampolines of
	 * their own) lies further up (0x69 bytes and more) and is not
	 * that trampoline yet.
	 */

	if (t->fnLo < t->ra - LOOP_BEFORE) {
	    t->fnLo = t->ra - LOOP_BEFORE;
	}

	/*
	 * After the callback call, the loop and its exit run with the
	 * frame laid out as at the call; the epilogue that restores the
	 * root's register changes the layout. The unwind rows tell where:
	 * the compiler's own layout, not a guess (clang 14 -O2: +0x32).
	 */

	{
	    uintptr_t rowLo, rowHi, hi = t->ra + LOOP_AFTER;

	    if (TpCfiFrameExtent(t->ra, &rowLo, &rowHi) && rowHi > t->ra) {
		hi = rowHi < t->ra + LOOP_AFTER_MAX
			? rowHi : t->ra + LOOP_AFTER_MAX;
	    }
	    if (t->fnHi > hi) {
		t->fnHi = hi;
	    }
	}
	cfg->hostLo = (cfg->hostLo == 0 || t->fnLo < cfg->hostLo)
		? t->fnLo : cfg->hostLo;
	cfg->hostHi = t->fnHi > cfg->hostHi ? t->fnHi : cfg->hostHi;
    }
    if (why == NULL && !cb.tebcOk) {
	why = Tcl_NewStringObj("TEBCdata layout check failed"
		" (is this Tcl 8.6.10-compatible?)", -1);
    }
    if (why == NULL && known.dispatch != NULL && known.nrCommand != NULL) {
	CalibOO(interp, &cb);
    }
    Tcl_RestoreInterpState(interp, state);
    if (cb.pipe[0] >= 0) {
	close(cb.pipe[0]);
	close(cb.pipe[1]);
    }
    if (why) {
	*whyPtr = why;
	return 0;
    }
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * FindMethodClass --
 *
 *	Depth-first search of clsPtr, its mixins first, and its superclasses
 *	for the class that declares method nameObj. Bounded against
 *	malformed hierarchies.
 *
 * Results:
 *	The declaring class, or NULL.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static Class *
FindMethodClass(
    Class *clsPtr,
    Tcl_Obj *nameObj,
    int depth)
{
    int i;

    if (clsPtr == NULL || depth > 64) {
	return NULL;
    }
    for (i = 0; i < clsPtr->mixins.num; i++) {
	Class *found = FindMethodClass(clsPtr->mixins.list[i], nameObj,
		depth + 1);

	if (found != NULL) {
	    return found;
	}
    }
    if (Tcl_FindHashEntry(&clsPtr->classMethods, (char *) nameObj) != NULL) {
	return clsPtr;
    }
    for (i = 0; i < clsPtr->superclasses.num; i++) {
	Class *found = FindMethodClass(clsPtr->superclasses.list[i], nameObj,
		depth + 1);

	if (found != NULL) {
	    return found;
	}
    }
    return NULL;
}

/*
 *----------------------------------------------------------------------
 *
 * TpInterpMethodName --
 *
 *	Trace mode's name for a call of a TclOO object's command (public, or
 *	its private `my`): "::Class method", the class that declares the
 *	method the call runs first (per-object methods: the object's name):
 *	the object's mixins, its own methods, then its class (mixins first)
 *	and superclasses. Filters are not followed.
 *
 * Results:
 *	1 and the name appended to dsPtr, or 0 when the method is not found.
 *
 * Side effects:
 *	None. Not for the signal path (hash lookups, Tcl_Obj strings).
 *
 *----------------------------------------------------------------------
 */

int
TpInterpMethodName(
    Tcl_Interp *interp,
    Tcl_Command token,
    Tcl_Obj *methodObj,
    Tcl_DString *dsPtr)
{
    Command *cmdPtr = (Command *) token;
    Object *oPtr = (Object *) cmdPtr->objClientData;
    Class *clsPtr = NULL;
    Tcl_Obj *name;
    int i;

    if (oPtr == NULL) {
	return 0;
    }
    name = Tcl_NewObj();
    Tcl_IncrRefCount(name);
    for (i = 0; i < oPtr->mixins.num && clsPtr == NULL; i++) {
	clsPtr = FindMethodClass(oPtr->mixins.list[i], methodObj, 0);
    }
    if (clsPtr != NULL && clsPtr->thisPtr != NULL) {
	Tcl_GetCommandFullName(interp, clsPtr->thisPtr->command, name);
    } else if (oPtr->methodsPtr != NULL
	    && Tcl_FindHashEntry(oPtr->methodsPtr, (char *) methodObj) != NULL) {
	Tcl_GetCommandFullName(interp, oPtr->command, name);
    } else if ((clsPtr = FindMethodClass(oPtr->selfCls, methodObj, 0)) != NULL
	    && clsPtr->thisPtr != NULL) {
	Tcl_GetCommandFullName(interp, clsPtr->thisPtr->command, name);
    } else {
	Tcl_DecrRefCount(name);
	return 0;
    }
    Tcl_DStringAppend(dsPtr, Tcl_GetString(name), -1);
    Tcl_DStringAppend(dsPtr, " ", 1);
    Tcl_DStringAppend(dsPtr, Tcl_GetString(methodObj), -1);
    Tcl_DecrRefCount(name);
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * TpInterpCoroutineBody --
 *
 *	For trace mode, which never saw the body command of a coroutine
 *	that was already running when the trace began (or whose shadow
 *	stack it recycled): the CallFrame of that body command, when the
 *	body is a proc, lambda or method. A coroutine's chains start empty
 *	(its first CallFrame's caller is the global frame, its outermost
 *	CmdFrame has no next), and the body command runs at its base. The
 *	outermost CallFrame is the body's own only when the outermost
 *	script level runs in it: a body written in C that evaluates a
 *	script runs that script in the global frame, and then the procs it
 *	calls are not the body.
 *
 * Results:
 *	The body's CallFrame (for TpInterpFrameCmd), or NULL.
 *
 * Side effects:
 *	None. Called in TraceProc, not in the handler.
 *
 *----------------------------------------------------------------------
 */

void *
TpInterpCoroutineBody(
    Tcl_Interp *interp)
{
    Interp *iPtr = (Interp *) interp;
    CallFrame *fp = iPtr->framePtr, *root = iPtr->rootFramePtr;
    CmdFrame *cf = iPtr->cmdFramePtr;
    int n;

    if (iPtr->execEnvPtr->corPtr == NULL || fp == NULL || fp == root
	    || cf == NULL) {
	return NULL;
    }
    for (n = 0; fp->callerPtr != root; n++) {
	if (fp->callerPtr == NULL || n >= MAX_CHAIN) {
	    return NULL;
	}
	fp = fp->callerPtr;
    }
    for (n = 0; cf->nextPtr != NULL; n++) {
	if (n >= MAX_CHAIN) {
	    return NULL;
	}
	cf = cf->nextPtr;
    }
    if (cf->framePtr != fp || !(fp->isProcCallFrame & FRAME_IS_PROC)
	    || fp->procPtr == NULL) {
	return NULL;
    }
    return fp;
}

/*
 *----------------------------------------------------------------------
 *
 * TpInterpFrameCmd --
 *
 *	What trace mode needs to name a proc, lambda or method CallFrame
 *	it did not see entered, as frames mode names it (EmitCallFrame): a
 *	proc by its command, a lambda by the lambda value [apply] was
 *	given, a method as "::Class method" after the class (or object)
 *	that declares the method the frame runs.
 *
 * Results:
 *	TP_TCL_PROC and *tokenPtr, TP_TCL_LAMBDA and *lambdaPtr,
 *	TP_TCL_METHOD and the name appended to dsPtr; or -1 (also for a
 *	proc whose command is gone, or that was called by a name that does
 *	not lead to it).
 *
 * Side effects:
 *	None. Not for the handler.
 *
 *----------------------------------------------------------------------
 */

int
TpInterpFrameCmd(
    Tcl_Interp *interp,
    void *frame,
    Tcl_Command *tokenPtr,
    Tcl_Obj **lambdaPtr,
    Tcl_DString *dsPtr)
{
    CallFrame *fp = frame;
    Proc *procPtr = fp->procPtr;
    Tcl_Command token;
    Name nm;

    if (!(fp->isProcCallFrame & FRAME_IS_PROC) || procPtr == NULL) {
	return -1;
    }
    if (fp->isProcCallFrame & FRAME_IS_LAMBDA) {
	if (fp->objc < 2 || fp->objv == NULL) {
	    return -1;
	}
	*lambdaPtr = fp->objv[1];
	return TP_TCL_LAMBDA;
    }
    if (fp->isProcCallFrame & FRAME_IS_METHOD) {
	nm.n = 0;
	if (!MethodName(fp, procPtr, &nm)) {
	    return -1;
	}
	Tcl_DStringAppend(dsPtr, nm.b, nm.n);
	return TP_TCL_METHOD;
    }

    /*
     * A running proc keeps its Proc, not its Command: the proc may have
     * deleted its own command. The Command is used only if the name the
     * frame was called by still resolves to it, or to a command imported
     * from it (pointers compared, the old one never read).
     */

    if (procPtr->cmdPtr == NULL || fp->objc < 1 || fp->objv == NULL) {
	return -1;
    }
    token = Tcl_GetCommandFromObj(interp, fp->objv[0]);
    if (token != NULL && token != (Tcl_Command) procPtr->cmdPtr) {
	/* Called by a name [namespace import] made (tcltest's test). */
	token = TclGetOriginalCommand(token);
    }
    if (token == NULL || token != (Tcl_Command) procPtr->cmdPtr) {
	return -1;
    }
    *tokenPtr = token;
    return TP_TCL_PROC;
}

/*
 *----------------------------------------------------------------------
 *
 * TpInterpChildren --
 *
 *	Calls fn for every descendant of interp (children, their children,
 *	... down to MAX_INTERPS levels), parents before their children,
 *	with the command that stands for the child in its parent. Trace
 *	mode traces each descendant: frames mode captures the evaluating
 *	ones (ActiveInterps), and trace mode must show the same frames.
 *	tclInterp.c's Child record starts {Tcl_Interp *parentInterp;
 *	Tcl_HashEntry *; Tcl_Interp *childInterp; Tcl_Command interpCmd;
 *	...}.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Whatever fn does (it must not create or delete interps). Not for the
 *	handler.
 *
 *----------------------------------------------------------------------
 */

typedef struct TpChildCmdPrefix {
    Tcl_Interp *parentInterp;
    Tcl_HashEntry *childEntryPtr;
    Tcl_Interp *childInterp;
    Tcl_Command interpCmd;
} TpChildCmdPrefix;

static void
ChildrenOf(
    Interp *iPtr,
    void (*fn)(void *cd, Tcl_Interp *child, Tcl_Command childCmd),
    void *cd,
    int depth)
{
    TpInterpInfoPrefix *info = iPtr->interpInfo;
    Tcl_HashSearch search;
    Tcl_HashEntry *h;

    if (info == NULL || depth >= MAX_INTERPS) {
	return;
    }
    for (h = Tcl_FirstHashEntry(&info->childTable, &search); h != NULL;
	    h = Tcl_NextHashEntry(&search)) {
	TpChildCmdPrefix *ch = Tcl_GetHashValue(h);

	if (ch != NULL && ch->childInterp != NULL) {
	    fn(cd, ch->childInterp, ch->interpCmd);
	    ChildrenOf((Interp *) ch->childInterp, fn, cd, depth + 1);
	}
    }
}

void
TpInterpChildren(
    Tcl_Interp *interp,
    void (*fn)(void *cd, Tcl_Interp *child, Tcl_Command childCmd),
    void *cd)
{
    ChildrenOf((Interp *) interp, fn, cd, 0);
}

/*
 *----------------------------------------------------------------------
 *
 * TpInterpCallSiteFrame --
 *
 *	The call site of the command being entered (the CmdFrame on top
 *	and its position, see CallSitePos), and the CallFrame it is called
 *	from (iPtr->framePtr: the true caller, not the [uplevel]
 *	scope) and that frame's Proc when it is a proc, lambda or method
 *	frame. Trace mode records the frame with each entry: a frame that
 *	appears between two levels without a traced call of its own was
 *	pushed by C (a proc's objProc called directly, a TclOO constructor,
 *	a filter, [next]).
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

void
TpInterpCallSiteFrame(
    Tcl_Interp *interp,
    uintptr_t *sitePtr,
    uintptr_t *posPtr,
    void **framePtr,
    void **procPtr)
{
    Interp *iPtr = (Interp *) interp;
    CmdFrame *cf = iPtr->cmdFramePtr;
    CallFrame *fp = iPtr->framePtr;

    *sitePtr = (uintptr_t) cf;
    *posPtr = cf ? CallSitePos(cf) : 0;
    *framePtr = fp;
    *procPtr = (fp != NULL && (fp->isProcCallFrame & FRAME_IS_PROC))
	    ? fp->procPtr : NULL;
}

/*
 *----------------------------------------------------------------------
 *
 * TpInterpFramesPushed --
 *
 *	The proc, lambda and method CallFrames pushed on top of frame outer
 *	up to frame fp (fp included), innermost first. Not for the
 *	handler.
 *
 * Results:
 *	Their number (at most max) with the frames in list[], or -1 when
 *	outer is not found within max + 4 callers of fp.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

int
TpInterpFramesPushed(
    void *frame,
    void *outer,
    void **list,
    int max)
{
    CallFrame *fp = frame;
    int n = 0, steps;

    for (steps = 0; fp != NULL && fp != outer && steps < max + 4; steps++) {
	if ((fp->isProcCallFrame & FRAME_IS_PROC) && fp->procPtr != NULL
		&& n < max) {
	    list[n++] = fp;
	}
	fp = fp->callerPtr;
    }
    return (fp == outer && fp != NULL) ? n : -1;
}

/*
 *----------------------------------------------------------------------
 *
 * TpInterpNextMethod --
 *
 *	For trace mode's innermost entry: the method not written in Tcl
 *	that [next] is running, which pushes no frame and no level, so
 *	that no trace sees it. The innermost CallFrame is then the method
 *	frame that called [next], and its call context has moved on to the
 *	C method (TclOO runs the chain by advancing ctx->index). The caller
 *	says which frame that must be: entryFrame itself when the entry is
 *	a traced [next] (how 2), a frame pushed on entryFrame when the
 *	entry is a method call whose body ran a compiled [next] (how 1).
 *	Named as frames mode names methods: "::Class method".
 *
 * Results:
 *	The length of the name written to buf (at most max bytes), 0 if no
 *	such method runs. *keyPtr: the Method, for de-duplication.
 *
 * Side effects:
 *	None.
 *
 * Signal safety: safe; pointers checked, walks bounded.
 *
 *----------------------------------------------------------------------
 */

int
TpInterpNextMethod(
    Tcl_Interp *interp,
    void *entryFrame,
    int how,
    char *buf,
    int max,
    uintptr_t *keyPtr)
{
    CallFrame *fp = ((Interp *) interp)->framePtr;
    CallContext *ctx;
    Method *mPtr;
    int len;
    Name nm;

    if (!OKP(fp) || !(fp->isProcCallFrame & FRAME_IS_METHOD)
	    || (how == 2 ? fp != entryFrame : fp->callerPtr != entryFrame)
	    || !OKP(ctx = fp->clientData) || ctx->index <= 0
	    || (mPtr = CtxMethod(ctx, 0)) == NULL) {
	return 0;		/* Not after [next], or a procedure. */
    }
    nm.n = 0;
    if (!MethodOwnerName(mPtr, ctx->callPtr, &nm)) {
	return 0;
    }
    len = nm.n < max ? nm.n : max;
    memcpy(buf, nm.b, (size_t) len);
    *keyPtr = (uintptr_t) mPtr;
    return len;
}

/*
 *----------------------------------------------------------------------
 *
 * TpInterpNreProc --
 *
 *	The nreProc of a command: commands made by Tcl_NRCreateCommand
 *	without an objProc ([next], [nextto]) are told apart by it, as
 *	Tcl_GetCommandInfo does not return it.
 *
 * Results:
 *	The function, or NULL.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

void *
TpInterpNreProc(
    Tcl_Command token)
{
    return token ? (void *) ((Command *) token)->nreProc : NULL;
}

/*
 *----------------------------------------------------------------------
 *
 * TpInterpTraceInProgress --
 *
 *	Whether interp is running the callback of an execution trace
 *	([trace add execution]): Tcl then calls no object trace
 *	(TclCheckInterpTraces), so trace mode's shadow stack misses the
 *	callback's commands.
 *
 * Results:
 *	Nonzero if so.
 *
 * Side effects:
 *	None.
 *
 * Signal safety: safe.
 *
 *----------------------------------------------------------------------
 */

int
TpInterpTraceInProgress(
    Tcl_Interp *interp)
{
    return (((Interp *) interp)->flags & INTERP_TRACE_IN_PROGRESS) != 0;
}

/*
 *----------------------------------------------------------------------
 *
 * TpInterpStartFrames, TpInterpCmdFrameKeys, TpInterpFrameLive,
 * TpInterpCmdFrameLive --
 *
 *	Trace mode knows only the commands entered while its trace exists.
 *	TpInterpStartFrames lists the frames active when it starts,
 *	innermost first, walking the CallFrame and CmdFrame chains together
 *	as frames mode does (WalkContext): the proc, lambda and method
 *	frames, and the commands that pushed no CallFrame (a [foreach] of a
 *	sourced file, [uplevel], [eval], [source]: what frames mode shows as
 *	CMD frames), without the innermost command, the one starting the
 *	profiler. Not in a coroutine. A command is recorded with its
 *	CmdFrame and what tells that the CmdFrame still runs it: a script
 *	level runs its commands one after the other in one CmdFrame, and a
 *	CmdFrame's memory is reused by later ones. For bytecode, the
 *	ByteCode and the pc of the call; for Tcl_EvalEx, the command's text;
 *	for a list, the list (TpInterpCmdFrameKeys). [info frame] fills in
 *	a command's text the first time it is asked: the trace names the
 *	commands that way, then takes their keys again. The handler shows
 *	those still live (TpInterpFrameLive: on the interp's current
 *	CallFrame chain; TpInterpCmdFrameLive: on its CmdFrame chain,
 *	running the same command) outside the traced ones.
 *
 * Results:
 *	TpInterpStartFrames: the number of frames stored in out[].
 *	TpInterpCmdFrameKeys: none (sets the keys of sf).
 *	TpInterpFrameLive, TpInterpCmdFrameLive: 1 if live.
 *
 * Side effects:
 *	None.
 *
 * Signal safety: TpInterpFrameLive and TpInterpCmdFrameLive are safe
 *	(bounded walks, checked pointers).
 *
 *----------------------------------------------------------------------
 */

int
TpInterpStartFrames(
    Tcl_Interp *interp,
    TpStartFrame *out,
    int max)
{
    Interp *iPtr = (Interp *) interp;
    CallFrame *fp = iPtr->framePtr;
    CmdFrame *cf = iPtr->cmdFramePtr;
    int n = 0, steps = 0, innermost = 1;

    if (iPtr->execEnvPtr->corPtr != NULL) {
	return 0;
    }
    for (;;) {
	CallFrame *stop = (cf != NULL) ? cf->framePtr : NULL;
	int pushed = 0;

	for (; fp != NULL && fp != stop && fp->callerPtr != NULL && n < max
		&& steps++ < MAX_CHAIN; fp = fp->callerPtr, pushed++) {
	    if ((fp->isProcCallFrame & FRAME_IS_PROC) && fp->procPtr != NULL) {
		out[n].frame = fp;
		out[n].isCmd = 0;
		out[n].level = 0;
		out[n].key1 = out[n].key2 = 0;
		n++;
	    }
	}
	if (cf == NULL || fp != stop || n >= max || steps++ >= MAX_CHAIN) {
	    break;
	}
	if (pushed == 0 && !innermost && (cf->type == TCL_LOCATION_BC
		|| cf->type == TCL_LOCATION_PREBC
		|| cf->type == TCL_LOCATION_EVAL
		|| cf->type == TCL_LOCATION_SOURCE)) {
	    out[n].frame = cf;
	    out[n].isCmd = 1;
	    out[n].level = cf->level;
	    TpInterpCmdFrameKeys(&out[n]);
	    n++;
	}
	innermost = 0;
	cf = cf->nextPtr;
    }
    return n;
}

void
TpInterpCmdFrameKeys(
    TpStartFrame *sf)
{
    CmdFrame *cf = sf->frame;

    if (cf->type == TCL_LOCATION_BC || cf->type == TCL_LOCATION_PREBC) {
	sf->key1 = (uintptr_t) cf->data.tebc.codePtr;
	sf->key2 = (uintptr_t) cf->data.tebc.pc;
    } else if (cf->cmd != NULL) {
	sf->key1 = (uintptr_t) cf->cmd;
	sf->key2 = 0;
    } else {
	sf->key1 = 0;
	sf->key2 = (uintptr_t) cf->cmdObj;
    }
}

int
TpInterpCmdFrameLive(
    Tcl_Interp *interp,
    const TpStartFrame *sf)
{
    CmdFrame *cf;
    int steps = 0;

    if (!OKP(interp)) {
	return 0;
    }
    for (cf = ((Interp *) interp)->cmdFramePtr; OKP(cf)
	    && steps++ < MAX_CHAIN; cf = cf->nextPtr) {
	if (cf == sf->frame) {
	    if (cf->level != sf->level) {
		return 0;
	    }
	    if (cf->type == TCL_LOCATION_BC || cf->type == TCL_LOCATION_PREBC) {
		return (uintptr_t) cf->data.tebc.codePtr == sf->key1
			&& (uintptr_t) cf->data.tebc.pc == sf->key2;
	    }
	    if (cf->type == TCL_LOCATION_EVAL
		    || cf->type == TCL_LOCATION_SOURCE) {
		return sf->key1 != 0 ? (uintptr_t) cf->cmd == sf->key1
			: (cf->cmd == NULL && (uintptr_t) cf->cmdObj == sf->key2);
	    }
	    return 0;
	}
    }
    return 0;
}

int
TpInterpFrameLive(
    Tcl_Interp *interp,
    void *framePtr)
{
    CallFrame *fp;
    int steps = 0;

    if (!OKP(interp)) {
	return 0;
    }
    for (fp = ((Interp *) interp)->framePtr; OKP(fp) && steps++ < MAX_CHAIN;
	    fp = fp->callerPtr) {
	if (fp == framePtr) {
	    return 1;
	}
    }
    return 0;
}
