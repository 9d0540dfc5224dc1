/*
 * tclprofInt.h --
 *
 *	Internal interfaces shared by tclprof's modules. Each module's file
 *	name is its prefix: TpRing* lives in ring.c, TpSampler* in
 *	unix/sampler.c, and so on. Only Tclprof_Init, Tclprof_SafeInit and
 *	Tclprof_Unload are exported from the shared library.
 *
 * The data model.
 *
 *	A sample starts life in the signal handler as a *slot*: a fixed
 *	layout holding the raw C program counters (leaf first), the
 *	trampoline frames (TclNRRunCallbacks) found among them with their
 *	stack pointers and calibrated root register, and the raw Tcl frames
 *	(innermost first) with their names copied as bytes. Nothing in a
 *	slot needs a lock or a Tcl_Obj to be written. The ring stores each
 *	slot as a record of the size it uses (ring.c).
 *
 *	Outside the handler, the drain (run by the sampler thread every few
 *	milliseconds, and by the interp thread before any report) turns each
 *	slot into a *stack*: an array of location ids, root first, where C
 *	and Tcl frames are already merged in true calling order. Locations
 *	are interned by identity: a C location by (module, offset), a Tcl
 *	location by (type, name, file, line). Stacks are interned too, and
 *	each keeps its sample count; they are stored as the paths of a trie
 *	whose nodes are (parent node, location), so that a stack costs only
 *	the frames no earlier stack had below the same callers, and the
 *	profile grows with the program's distinct paths, not with the run's
 *	length. A time-ordered log of (time, stack) pairs keeps the order
 *	that timeline formats need.
 *
 *	Everything the user sees is a pure function of that profile: the
 *	call tree (built on demand from the stacks, with self counts kept on
 *	the nodes and totals derived), the flat view, and the exporters.
 *	Symbolization of C locations happens when a report needs a name,
 *	never in the handler and never while sampling is being drained.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#ifndef TCLPROF_INT_H
#define TCLPROF_INT_H

#include <tcl.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#ifndef _WIN32
#include <setjmp.h>
#endif

/*
 * Tcl 9 counts lengths and indexes in Tcl_Size; 8.6 in int.
 */

#ifndef TCL_SIZE_MAX
typedef int Tcl_Size;
#endif

/*
 * For the functions that read words of other functions' stack frames (a
 * trampoline's stack slot): under AddressSanitizer those words may lie
 * in an instrumented frame's redzone, which is not an error here.
 */

#if defined(__has_attribute)
#  if __has_attribute(no_sanitize_address)
#    define TP_NO_ASAN __attribute__((no_sanitize_address))
#  endif
#endif
#ifndef TP_NO_ASAN
#  define TP_NO_ASAN
#endif

/*
 * Tcl_GetStringFromObj with an int length, on 8.6 and 9 alike (lengths
 * here are names and scripts, far below INT_MAX).
 */

static inline const char *
TpObjString(
    Tcl_Obj *objPtr,
    int *lenPtr)
{
    Tcl_Size len;
    const char *s = Tcl_GetStringFromObj(objPtr, &len);

    *lenPtr = (int) len;
    return s;
}

#define TCLPROF_VERSION "0.1"

/*
 * Limits. Every loop in the handler is bounded by one of these.
 */

#define TP_MAX_DEPTH		1024	/* Hard cap for -maxdepth. */
#define TP_DEFAULT_DEPTH	256	/* Default -maxdepth (C and Tcl frames). */
#define TP_MAX_TRAMP		64	/* Trampoline frames recorded per slot. */
#define TP_MIN_INTERVAL_US	50	/* Smallest -interval accepted: below it
					 * the handler (0.5-20 us) and the drain
					 * would take most of the CPU. */
#define TP_MAX_INTERVAL_US	10000000
#define TP_DEFAULT_INTERVAL_US	999	/* Non-round: avoids aliasing with
					 * periodic work scheduled in ms. */
#define TP_DEFAULT_TIMELINE	(4 << 20)	/* 262 144 log entries: 4.4
						 * minutes at 1 kHz. */
#define TP_DEFAULT_INSTANCES	16	/* -instances. */
#define TP_MIN_TIMELINE		(16 << 10)
#define TP_MAX_TIMELINE		(1 << 30)
#define TP_DEFAULT_BUFFER	(2 << 20)	/* Bytes of ring: 1000-2000
					 * usual samples, 1-2 s at the default
					 * rate even if the drain never ran. */
#define TP_MIN_BUFFER		(64 << 10)
#define TP_MAX_BUFFER		(1 << 30)
#define TP_NAME_MAX		200	/* Longest Tcl name copied by the
					 * handler; longer ones are cut. */
#define TP_MAX_THREADS		128	/* Threads sampled at once besides
					 * the one that started the run
					 * (-threads all); more are ignored. */

/*
 * Location kinds, as reports show them ("kind" key of -format dict).
 */

typedef enum {
    TP_KIND_C = 0,		/* C function outside libtcl. */
    TP_KIND_TCL = 1,		/* Tcl proc, command, method, lambda. */
    TP_KIND_INTERNAL = 2	/* libtcl's own C functions and the
				 * pseudo-frames ([truncated], ...). */
} TpKind;

/*
 * Types of raw Tcl frames (TpTclRaw.type) and of Tcl locations.
 */

typedef enum {
    TP_TCL_PROC = 0,		/* A proc body: name is ::ns::proc. */
    TP_TCL_CMD = 1,		/* A command (C-implemented, or a
				 * non-compiled Tcl command). */
    TP_TCL_METHOD = 2,		/* TclOO method: "::Class method". */
    TP_TCL_LAMBDA = 3,		/* apply lambda: "apply file:line". */
    TP_TCL_CORO = 4,		/* Coroutine body marker: "coroutine name". */
    TP_TCL_EVAL = 5,		/* Script level eval (uplevel, namespace
				 * eval, source): name says which. */
    TP_TCL_PSEUDO = 6		/* [truncated], [merge-mismatch], ... */
} TpTclType;

/*
 * Slot flags.
 */

#define TP_SLOT_CTRUNC		0x01	/* C stack cut at -maxdepth. */
#define TP_SLOT_TCLTRUNC	0x02	/* Tcl stack cut at -maxdepth. */
#define TP_SLOT_UNWERR		0x04	/* libunwind failed part way. */
#define TP_SLOT_TCLERR		0x08	/* Tcl walk hit an invalid pointer. */
#define TP_SLOT_NOTCL		0x10	/* No Tcl stack was captured. */
#define TP_SLOT_CURSOR		0x20	/* The slow (cursor) unwind was used. */
#define TP_SLOT_FALLBACK	0x40	/* The CFI tables could not unwind this
					 * stack: libunwind did. */
#define TP_SLOT_UNWCHECK	0x80	/* -unwind check: the tables and
					 * libunwind disagreed. */
#define TP_SLOT_NOTRAMP		0x100	/* Frames mode: a Tcl frame runs inside
					 * a C command, in a trampoline the C
					 * walk did not find (it skipped
					 * frames); the merge cannot place the
					 * Tcl frames. */

/*
 * One Tcl frame as the handler copies it. The name bytes live in the
 * slot's string area (nameOff, nameLen); so does the file name.
 *
 * anchor links the frame to the C stack: the SP of the TclNRRunCallbacks
 * frame that runs it (tramp[].sp), or 0 when unknown (the frame then
 * follows the previous one).
 *   frames mode: interp.c decides ownership from the NRE callback list
 *     cut at each trampoline's root (the calibrated register) and writes
 *     the owner's SP;
 *   trace mode: the stack address recorded by the enter trace
 *     (__builtin_frame_address + a calibrated delta).
 * TP_ANCHOR_LEAF: a frame that C code is entering, whose trampoline is not
 * on the C stack yet: it goes below the C leaf.
 */

#define TP_ANCHOR_LEAF		((uintptr_t) 1)

typedef struct TpTclRaw {
    uintptr_t key;		/* Identity for de-duplication (Proc *,
				 * Command *); never dereferenced after the
				 * handler returns. */
    uintptr_t anchor;		/* See above. */
    int32_t line;		/* Line of the call site in file, or 0. */
    uint16_t nameOff;		/* Offset of the name in the string area. */
    uint16_t nameLen;		/* Its length in bytes (no NUL). */
    uint16_t fileOff;		/* Same for the file, fileLen 0 if none. */
    uint16_t fileLen;
    uint8_t type;		/* TpTclType. */
    uint8_t flags;		/* TP_RAW_* */
    uint16_t spare;
} TpTclRaw;

#define TP_RAW_LEAF		0x01	/* The running leaf (bytecode running
					 * inline; line unknown). */

/*
 * One trampoline frame (TclNRRunCallbacks) found on the C stack.
 */

typedef struct TpTramp {
    uint32_t index;		/* Index in pc[] (0 = leaf). */
    uint32_t spare;		/* TP_TRAMP_SURE: read at a calibrated
				 * callback call, where root and cb are
				 * live by construction. */
    uintptr_t sp;		/* Stack pointer of that frame. */
    uintptr_t root;		/* Its rootPtr as read at the calibrated
				 * location, or TP_ROOT_UNKNOWN. Not proven:
				 * interp.c dereferences a root only after
				 * meeting it in the callback list. */
    uintptr_t cb;		/* The NRE callback it is running, 0 if
				 * unknown; read only at a calibrated call
				 * of a callback, where it is live. */
    uintptr_t interp;		/* The Interp it runs, read at a calibrated
				 * call like cb, or 0: how the Tcl stack of
				 * a thread whose interp tclprof was never
				 * told about is found. */
} TpTramp;

#define TP_ROOT_UNKNOWN	((uintptr_t) 1)
#define TP_TRAMP_SURE	1u	/* Never a callback's address. */

/*
 * Slot header. The arrays follow it in the slot; their capacities are the
 * ring's (TpRing.maxPc, maxTcl, strBytes); TpSlotPcs() and friends
 * compute their addresses.
 */

typedef struct TpSlot {
    uint64_t timeNs;		/* CLOCK_MONOTONIC at sample time. */
    uint32_t tid;		/* Kernel thread id sampled. */
    uint32_t handlerNs;		/* Time spent in the handler. */
    uint16_t nPc;		/* Valid entries of pc[]. */
    uint16_t nTramp;		/* Valid entries of tramp[]. */
    uint16_t nTcl;		/* Valid entries of tcl[]. */
    uint16_t strUsed;		/* Bytes used in the string area. */
    uint16_t flags;		/* TP_SLOT_* */
    uint16_t mode;		/* TpMode the Tcl frames were taken in. */
    uint32_t weight;		/* Intervals this sample stands for: 1, or
				 * 1 + the CPU timer's overrun count (the
				 * kernel checks CPU timers only at its tick,
				 * 250 Hz here, so at 1 kHz one signal comes
				 * for every 4 intervals). */
} TpSlot;

/*
 * The ring (ring.c): single producer (the handler on one thread), single
 * consumer (the drain, under the session lock). The handler fills the
 * scratch slot, whose fixed layout (offPc ... offStr) every writer knows;
 * TpRingCommit copies its used part into the byte buffer as one
 * variable-length record. The drain copies a record back into readSlot.
 * head and tail are free-running byte counters.
 */

typedef struct TpRing {
    char *mem;			/* The buffer, then the scratch and read
				 * slots (touched at once, as is the
				 * buffer's start). */
    size_t memSize;		/* For munmap. */
    size_t size;		/* Bytes of the record buffer. */
    size_t slotSize;		/* Bytes of the worst-case slot. */
    TpSlot *scratch;		/* Handler: the slot being filled. */
    TpSlot *readSlot;		/* Drain: the record being merged. */
    uint32_t readSize;		/* Drain: its size in the buffer. */
    uint32_t maxPc;		/* Capacity of pc[] in a slot. */
    uint32_t maxTcl;		/* Capacity of tcl[]. */
    uint32_t strBytes;		/* Capacity of the string area. */
    size_t offPc, offTramp, offTcl, offStr;
				/* Offsets of the arrays in a slot. */
    uint64_t head;		/* Written by the handler (atomic). */
    uint64_t tail;		/* Written by the drain (atomic). */
    uint64_t dropped;		/* Handler: samples lost to a full ring. */
    uint64_t pending;		/* Windows wall clock: ticks due, not sampled
				 * yet; the sampler thread adds (atomic),
				 * the handler takes them all (atomic
				 * exchange). */
    uint64_t missed;		/* Handler: ticks that gave no sample. */
    uint64_t overruns;		/* Handler: ticks carried by a later
				 * sample as its weight (the timer's
				 * overruns). */
    uint64_t faults;		/* Handler: samples given up because a read
				 * faulted (their ticks are missed). */
    uint64_t timerTicks;	/* Handler: ticks its CPU-clock timer's
				 * signals carried (atomic): at stop, the
				 * periods of CPU time that expired and
				 * were never delivered are missed. */
} TpRing;

MODULE_SCOPE int	TpRingInit(TpRing *ring, size_t nBytes, uint32_t maxDepth);
MODULE_SCOPE void	TpRingFree(TpRing *ring);
MODULE_SCOPE TpSlot *	TpRingReserve(TpRing *ring);
MODULE_SCOPE int	TpRingCommit(TpRing *ring);
MODULE_SCOPE TpSlot *	TpRingPeek(TpRing *ring);
MODULE_SCOPE void	TpRingRelease(TpRing *ring);
MODULE_SCOPE size_t	TpRingUsed(TpRing *ring);

static inline uintptr_t *
TpSlotPcs(const TpRing *r, TpSlot *s) { return (uintptr_t *)((char *)s + r->offPc); }
static inline TpTramp *
TpSlotTramps(const TpRing *r, TpSlot *s) { return (TpTramp *)((char *)s + r->offTramp); }
static inline TpTclRaw *
TpSlotTcl(const TpRing *r, TpSlot *s) { return (TpTclRaw *)((char *)s + r->offTcl); }
static inline char *
TpSlotStr(const TpRing *r, TpSlot *s) { return (char *)s + r->offStr; }

/*
 * Copies len bytes of src into the slot's string area and fills *off and
 * *outLen; names longer than TP_NAME_MAX are cut; when the area is full
 * nothing is stored (length 0). Signal-safe.
 */

MODULE_SCOPE int	TpSlotPutStr(const TpRing *r, TpSlot *s, const char *src,
			    size_t len, uint16_t *off, uint16_t *outLen);

/*
 * How the Tcl stack is known (see DESIGN.md).
 */

typedef enum {
    TP_MODE_NONE = 0,		/* C frames only. */
    TP_MODE_FRAMES = 1,		/* Read the interpreter's frame chains. */
    TP_MODE_TRACE = 2		/* Tcl_CreateObjTrace shadow stack. */
} TpMode;

typedef enum {
    TP_CLOCK_WALL = 0,
    TP_CLOCK_CPU = 1
} TpClock;

/*
 * ----------------------------------------------------------------------
 * Modules and symbols (unix/symbol.c).
 *
 * A module is a loaded ELF object. C locations are (module, offset) with
 * offset = pc - load bias, i.e. the address the ELF file itself uses, so
 * the same function has the same key whatever ASLR did.
 * ----------------------------------------------------------------------
 */

typedef struct TpSymtab TpSymtab;	/* Opaque: a module's sorted symbols. */

typedef struct TpModule {
    char *path;			/* File name as the loader knows it ("" for
				 * the main program: /proc/self/exe used). */
    char *shortName;		/* Basename, for module+0xoff names. */
    uintptr_t bias;		/* Load bias (dlpi_addr). */
    uintptr_t lo, hi;		/* Lowest and highest mapped address of
				 * executable segments [lo, hi). */
    int isTcl;			/* It is libtcl: its frames are internal. */
    uintptr_t tclLo, tclHi;	/* Or libtcl is linked into it: offsets
				 * [tclLo, tclHi) are internal (0, 0: no). */
    TpSymtab *syms;		/* Loaded on first use; NULL before. */
    int symsTried;		/* Loading was attempted. */
} TpModule;

typedef struct TpModules {
    TpModule *mods;
    int nMods;
    int capMods;
} TpModules;

MODULE_SCOPE int	TpModulesScan(TpModules *mt);
MODULE_SCOPE int	TpModulesFind(TpModules *mt, uintptr_t pc, uintptr_t *offset);
MODULE_SCOPE int	TpModulesAddPath(TpModules *mt, const char *path);
MODULE_SCOPE void	TpModulesFree(TpModules *mt);

/*
 * Resolves (module, offset) to the function containing it. Returns 1 and
 * fills *name (owned by the symbol table), *start and *size only when the
 * symbol's [start, start+size) contains offset; 0 otherwise.
 */

MODULE_SCOPE int	TpSymbolLookup(TpModule *mod, uintptr_t offset,
			    const char **name, uintptr_t *start, uintptr_t *size);
MODULE_SCOPE void	TpSymbolTrim(void);	/* After a batch of lookups. */

/*
 * Optional: a static archive built from the same objects as a stripped
 * shared library (Debian's libtcl8.6.a) lends its local symbols to it.
 */

MODULE_SCOPE void	TpSymbolSetArchive(const char *soName, const char *archivePath);
MODULE_SCOPE void	TpSymbolSetTclRange(uintptr_t lo, uintptr_t hi);

/*
 * cache.c (Unix): files kept between runs (the recovered symbol table,
 * the unwind rows).
 */

#define TP_HASH_INIT	0xcbf29ce484222325ULL
MODULE_SCOPE uint64_t	TpHash64(uint64_t h, const void *data, size_t len);
MODULE_SCOPE int	TpCachePath(const char *name, char *path, size_t size);
typedef struct TpCacheBlob {
    void *map;			/* The buffer (TpCacheRelease). */
    size_t mapLen;
    const char *body;		/* The file's body, in it. */
    size_t len;
} TpCacheBlob;
MODULE_SCOPE int	TpCacheRead(const char *path, const void *key,
			    size_t keyLen, TpCacheBlob *b);
MODULE_SCOPE void	TpCacheRelease(TpCacheBlob *b);
MODULE_SCOPE int	TpCacheWrite(const char *path, const void *key,
			    size_t keyLen, const void *const *parts,
			    const size_t *lens, int nParts);

/*
 * ----------------------------------------------------------------------
 * Unwinding (unix/unwind.c).
 * ----------------------------------------------------------------------
 */

typedef enum TpUnwinder {
    TP_UNWIND_TABLES = 0,	/* cfi.c's tables, libunwind where they fail. */
    TP_UNWIND_LIBUNWIND = 1,	/* libunwind only. */
    TP_UNWIND_CHECK = 2		/* Both, compared (tests; slow). */
} TpUnwinder;

/*
 * Trampolines. Every C->Tcl entry runs the NRE callbacks in a loop, the
 * trampoline, that keeps rootPtr (TOP_CB when the entry began) and the
 * callback being run somewhere in its frame. That loop is the function
 * TclNRRunCallbacks, but a compiler may copy it into its callers in
 * tclBasic.c (clang -O2 inlines it into Tcl_EvalObjv, TclEvalObjEx,
 * Tcl_NRCallObjProc): a trampoline frame is then the caller's. Where a
 * copy keeps the two values depends on the compiler and its options (a
 * callee-saved register at -O2, a stack slot at -O0), so calibration
 * finds each copy by the return address of its callback call, and for
 * each the location of both values (TpValueLoc).
 */

enum {
    TP_LOC_NONE = 0,		/* Not known: the value is not read. */
    TP_LOC_REG,			/* In callee-saved register `reg`. */
    TP_LOC_STACK		/* At the frame's SP + off. */
};

typedef struct TpValueLoc {
    uint8_t kind;		/* TP_LOC_*. */
    uint8_t reg;		/* DWARF number (3 rbx, 6 rbp, 12-15). */
    uint16_t off;		/* Bytes above the frame's stack pointer. */
} TpValueLoc;

#define TP_MAX_SITES	16

typedef struct TpTrampSite {
    uintptr_t ra;		/* Return address of the callback call. */
    TpValueLoc root;			/* Where rootPtr is at that call... */
    TpValueLoc cb;			/* ... and the callback being run, */
    TpValueLoc interp;			/* ... and the interp. */
    uintptr_t fnLo, fnHi;	/* The loop's code around the call, in the
				 * function holding the copy. A frame there
				 * (between two callbacks, or freeing one)
				 * is taken as that trampoline too, its
				 * root unproven. */
} TpTrampSite;

typedef struct TpUnwindConfig {
    uintptr_t trampLo, trampHi;	/* [start, end) of TclNRRunCallbacks: any
				 * frame there is a trampoline. */
    TpValueLoc fnRoot;		/* rootPtr's location in that function (the
				 * interrupted frame's value is trusted
				 * only after interp.c finds it in the
				 * callback list). */
    TpTrampSite sites[TP_MAX_SITES];	/* Callback calls of every copy of
				 * the loop found by calibration, sorted
				 * by ra. */
    int nSites;
    uintptr_t hostLo, hostHi;	/* Envelope of the sites' functions. */
    int wantTrampRegs;		/* Mode needs SP/root of every trampoline. */
    TpUnwinder unwinder;
    uintptr_t stackHi;		/* Top of the sampled thread's stack. */
} TpUnwindConfig;

/*
 * TpTrampFind --
 *
 *	Whether the frame at depth n (0: the interrupted one) whose pc is
 *	given is a trampoline. Returns the site matched, *surePtr 1 if at
 *	its callback call (its locations of root and callback are trusted),
 *	0 if elsewhere in its function (root to be proven, callback not
 *	read); or TP_TRAMP_FN for a frame in TclNRRunCallbacks at no known
 *	call (root from fnRoot, to be proven; callback not read); or NULL.
 *	Signal-safe.
 */

#define TP_TRAMP_FN	((const TpTrampSite *) 1)

static inline const TpTrampSite *
TpTrampFind(const TpUnwindConfig *cfg, uintptr_t pc, int n, int *surePtr)
{
    int lo = 0, hi = cfg->nSites, i;

    *surePtr = 0;
    if (n > 0) {
	while (lo < hi) {
	    int mid = (lo + hi) / 2;

	    if (cfg->sites[mid].ra == pc) {
		*surePtr = 1;
		return &cfg->sites[mid];
	    } else if (cfg->sites[mid].ra < pc) {
		lo = mid + 1;
	    } else {
		hi = mid;
	    }
	}
    }
    if (pc >= cfg->trampLo && pc < cfg->trampHi) {
	return TP_TRAMP_FN;
    }
    if (pc >= cfg->hostLo && pc < cfg->hostHi) {
	for (i = 0; i < cfg->nSites; i++) {
	    if (pc >= cfg->sites[i].fnLo && pc < cfg->sites[i].fnHi) {
		return &cfg->sites[i];
	    }
	}
    }
    return NULL;
}

MODULE_SCOPE int	TpUnwindInit(void);
MODULE_SCOPE void	TpUnwindWarm(void);

/* cfi.c: the handler's own unwinder, from compiled .eh_frame tables. */
MODULE_SCOPE void	TpCfiPrepare(int all);
MODULE_SCOPE void	TpCfiWarm(void);
MODULE_SCOPE int	TpCfiFrameExtent(uintptr_t pc, uintptr_t *loPtr,
			    uintptr_t *hiPtr);
MODULE_SCOPE int	TpCfiSavedRegs(uintptr_t pc, uint32_t *maskPtr,
			    int32_t cfaOff[16]);
MODULE_SCOPE int	TpCfiSameCfa(uintptr_t ref, uintptr_t lo, uintptr_t hi,
			    uintptr_t *ranges, int max);
MODULE_SCOPE int	TpCfiUnwind(const TpUnwindConfig *cfg, void *ucontext,
			    const TpRing *ring, TpSlot *slot);
MODULE_SCOPE uintptr_t	TpCfiStackTop(void);
MODULE_SCOPE void	TpCfiAtFork(int prepare);
MODULE_SCOPE void	TpUnwindSignal(const TpUnwindConfig *cfg, void *ucontext,
			    const TpRing *ring, TpSlot *slot);

/*
 * ----------------------------------------------------------------------
 * Tcl stacks: frames mode (interp.c: the one file that reads Tcl's
 * internals) and trace mode (trace.c).
 * ----------------------------------------------------------------------
 */

typedef struct TpTraceState TpTraceState;
typedef struct TpProfile TpProfile;

/* interp.c */
MODULE_SCOPE const char *TpInterpCheck(void);	/* NULL if frames mode can run
						 * on this Tcl, else why not. */
MODULE_SCOPE void	TpInterpCapture(Tcl_Interp *interp, const TpRing *ring,
			    TpSlot *slot);	/* Signal-safe. */
MODULE_SCOPE int	TpInterpCalibrate(Tcl_Interp *interp,
			    TpUnwindConfig *cfg, Tcl_Obj **whyPtr);
MODULE_SCOPE int	TpInterpFindTrampoline(uintptr_t *loPtr,
			    uintptr_t *hiPtr);
MODULE_SCOPE void	TpInterpTclCode(uintptr_t *loPtr, uintptr_t *hiPtr);
MODULE_SCOPE void	TpLocFormat(const TpValueLoc *loc, char *buf, size_t size);
MODULE_SCOPE uintptr_t	TpInterpCurrentRoot(Tcl_Interp *interp);
MODULE_SCOPE int	TpInterpNumLevels(Tcl_Interp *interp);
MODULE_SCOPE void *	TpInterpCoroutine(Tcl_Interp *interp, int *baseLevel);
						/* Running coroutine (or NULL)
						 * and its auxNumLevels. */
MODULE_SCOPE int	TpInterpCoroutineCaller(void *corPtr, void **callerPtr,
			    int *baseLevel);	/* Signal-safe. The context that
						 * resumed corPtr, its base. */
MODULE_SCOPE Tcl_Command TpInterpCoroutineCommand(void *corPtr);
MODULE_SCOPE int	TpInterpCallSiteLive(Tcl_Interp *interp, uintptr_t site,
			    uintptr_t pos, uintptr_t *nowPtr);
						/* Signal-safe. */
MODULE_SCOPE int	TpInterpProcPlace(Tcl_Interp *interp, void *procPtr,
			    Tcl_Obj **filePtr, int *linePtr);
MODULE_SCOPE int	TpInterpLambda(Tcl_Interp *interp, Tcl_Obj *lambdaObj,
			    const Tcl_ObjType *lambdaType, Tcl_Obj **bodyPtr,
			    Tcl_Obj **filePtr, int *linePtr);
MODULE_SCOPE int	TpInterpMethodName(Tcl_Interp *interp, Tcl_Command token,
			    Tcl_Obj *methodObj, Tcl_DString *dsPtr);
MODULE_SCOPE void	TpInterpCommandProcs(Tcl_Interp *interp,
			    void (*fn)(void *cd, const char *name, uintptr_t objProc),
			    void *cd);	/* Every command's objProc, to name
					 * C command frames. */
MODULE_SCOPE void *	TpInterpCoroutineBody(Tcl_Interp *interp);
						/* CallFrame of the running
						 * coroutine's body command. */
MODULE_SCOPE int	TpInterpFrameCmd(Tcl_Interp *interp, void *framePtr,
			    Tcl_Command *tokenPtr,
			    Tcl_Obj **lambdaPtr, Tcl_DString *dsPtr);
						/* How to name a CallFrame. */
MODULE_SCOPE void	TpInterpChildren(Tcl_Interp *interp,
			    void (*fn)(void *cd, Tcl_Interp *child,
			    Tcl_Command childCmd), void *cd);
						/* Every descendant interp. */
MODULE_SCOPE void	TpInterpCallSiteFrame(Tcl_Interp *interp,
			    uintptr_t *sitePtr, uintptr_t *posPtr,
			    void **framePtr, void **procPtr);
						/* The call site and the
						 * caller's CallFrame. */
MODULE_SCOPE int	TpInterpFramesPushed(void *framePtr, void *outer,
			    void **list, int max);
						/* CallFrames above outer. */
MODULE_SCOPE int	TpInterpNextMethod(Tcl_Interp *interp,
			    void *entryFrame, int how, char *buf, int max,
			    uintptr_t *keyPtr);	/* Signal-safe. The C method
						 * [next] runs. */
MODULE_SCOPE void *	TpInterpNreProc(Tcl_Command token);
MODULE_SCOPE int	TpInterpTraceInProgress(Tcl_Interp *interp);
						/* Signal-safe. Running an
						 * execution trace. */

/*
 * A frame active when trace mode starts (TpInterpStartFrames): a proc,
 * lambda or method CallFrame, or the CmdFrame of a command that pushed
 * none, with what identifies the command it runs.
 */

typedef struct TpStartFrame {
    void *frame;		/* CallFrame, or CmdFrame if isCmd. */
    int isCmd;
    int level;			/* CmdFrame: its level ([info frame]). */
    uintptr_t key1, key2;	/* CmdFrame: the command it runs. */
} TpStartFrame;

MODULE_SCOPE int	TpInterpStartFrames(Tcl_Interp *interp,
			    TpStartFrame *out, int max);
MODULE_SCOPE int	TpInterpFrameLive(Tcl_Interp *interp, void *framePtr);
						/* Signal-safe. */
MODULE_SCOPE void	TpInterpCmdFrameKeys(TpStartFrame *sf);
MODULE_SCOPE void	TpInterpFirstWord(const char *s, int len,
			    const char **wordPtr, int *wordLen);
						/* Signal-safe. */
MODULE_SCOPE int	TpInterpCmdFrameLive(Tcl_Interp *interp,
			    const TpStartFrame *sf);	/* Signal-safe. */

/* trace.c */
MODULE_SCOPE TpTraceState *TpTraceStart(Tcl_Interp *interp,
			    const TpUnwindConfig *cfg, int instances);
MODULE_SCOPE void	TpTraceStop(TpTraceState *ts, TpProfile *p);
MODULE_SCOPE size_t	TpTraceBytes(const TpTraceState *ts);
MODULE_SCOPE void	TpTraceCapture(TpTraceState *ts, Tcl_Interp *interp,
			    const TpRing *ring, TpSlot *slot);	/* Signal-safe. */

/*
 * ----------------------------------------------------------------------
 * The profile (profile.c): interned locations and stacks, sample log.
 * Guarded by the session's lock.
 * ----------------------------------------------------------------------
 */

typedef struct TpLoc {
    uint8_t kind;		/* TpKind. */
    uint8_t type;		/* TpTclType for Tcl locations. */
    uint8_t resolved;		/* C: name holds the function's final name
				 * (a location loaded from a saved profile,
				 * see save.c): reports use it as is and
				 * never look the offset up. 0 for sampled
				 * locations. */
    uint8_t isCaller;		/* C: pc is a return address (lookup at
				 * offset - 1). */
    int module;			/* C: index in the module table; -1 if the
				 * pc was in no known module. */
    uintptr_t offset;		/* C: pc - bias (or the raw pc if module
				 * is -1). */
    char *name;			/* Tcl: the name; C: symbol name once
				 * resolved, or "module+0xoff". Owned. */
    char *file;			/* Source file or NULL. Owned. */
    int line;			/* Line in file, 0 if unknown. */
    uintptr_t symStart;		/* C: function start offset once resolved;
				 * locations of one function share it. */
    int func;			/* Index of the function (report time). */
} TpLoc;

typedef struct TpStackNode {	/* A frame of the stacks' trie. */
    uint32_t parent;		/* Node of the caller, TP_NODE_NONE at the
				 * root. */
    uint32_t loc;		/* Location id. */
} TpStackNode;

#define TP_NODE_NONE	UINT32_MAX

typedef struct TpStack {
    uint32_t node;		/* Its innermost frame's node (TP_NODE_NONE
				 * for an empty stack): the stack is the
				 * path from the root to it. */
    uint32_t depth;
    uint64_t count;		/* Samples with exactly this stack. */
    uint32_t tid;		/* Thread it was sampled on. */
    uint32_t next;		/* 1 + the next stack ending at the same
				 * node (another thread's), or 0. */
} TpStack;

typedef struct TpLogEntry {	/* 16 bytes: the thread is the stack's. */
    uint64_t timeNs;
    uint32_t stack;
    uint32_t weight;		/* Samples this entry stands for (CPU
				 * timer overruns), usually 1. */
} TpLogEntry;

typedef struct TpHash TpHash;	/* Opaque open-addressing table. */

/*
 * Exact call counts from trace mode: one record per callee (caller NULL)
 * and one per caller->callee edge.
 */

typedef struct TpCalls {
    char *callee;		/* Owned. */
    char *caller;		/* Owned, or NULL for the callee's total. */
    int type;			/* TpTclType of the callee. */
    uint64_t count;
} TpCalls;

struct TpProfile {
    /*
     * What the profile is of; written by the session at start and stop
     * (or by a loader), read by reports and exporters.
     */

    int mode;			/* TpMode of the last run. */
    int intervalUs;
    int clock;			/* TpClock. */
    uint64_t startEpochUs;	/* Wall clock at the first start. */
    uint64_t elapsedNs;		/* Sampled wall time of finished runs. */
    uint64_t dropped;		/* Samples lost to a full ring. */
    char *program;		/* Script or program name, or NULL. */
    char *savedMeta;		/* A loaded profile's metadata that has no
				 * field here (args, host, pid, defined
				 * procs, ...), as a Tcl dict string, written
				 * back by profiler save; NULL for a live
				 * profile. Owned (malloc). */

    TpModules modules;
    uint64_t lastScanNs;	/* Last rescan of the modules. */
    TpLoc *locs;  uint32_t nLocs, capLocs;
    TpHash *locIndex;
    TpStackNode *nodes; uint32_t nNodes, capNodes;
    uint32_t *nodeSlots;	/* The trie's nodes by (parent, loc): open
				 * addressing, node id + 1 or 0 (the hash is
				 * recomputed from the node: 4 bytes a
				 * slot). */
    size_t capNodeSlots;	/* Power of two, or 0. */
    uint32_t *nodeStack;	/* nodeStack[node + 1]: 1 + the first stack
				 * ending at node (TpStack.next chains the
				 * others: one per thread), or 0. */
    size_t capNodeStack;
    TpStack *stacks; uint32_t nStacks, capStacks;
    uint64_t stackFrames;	/* Sum of the stacks' depths. */
    struct TpStackCache *cache;	/* The last stack added and the last read
				 * (TpProfileStackIds): scratch, so that
				 * neither walks the trie twice. */
    TpLogEntry *log; size_t nLog, capLog;
    size_t logMax;		/* Entries the log may hold (0: the
				 * default, TP_DEFAULT_TIMELINE bytes). */
    uint32_t logStride;		/* Past logMax the log keeps one sample in
				 * logStride (a power of two; 0 or 1: every
				 * one), each entry standing for logStride
				 * of its kind; counts stay exact. */
    uint32_t logSkip;		/* Samples since the last one logged. */
    int logKeep;		/* -keep: at logMax, forget the oldest
				 * samples instead (the window shrinks). */
    int logOff;			/* Count without logging (a loader adding
				 * what a file's log did not hold). */
    uint32_t instances;		/* -instances: Tcl names that differ only in
				 * their numbers at one place (a coroutine
				 * or proc made per request) are kept apart
				 * up to this many, then counted as one
				 * family ("coroutine ::conn*"); 0 keeps
				 * every name. */
    struct TpFamily *fams; uint32_t nFams, capFams;
    TpHash *famIndex;		/* Families by key; NULL until one. */
    uint32_t nFolded;		/* Families past `instances`. */
    uint64_t samples;		/* Samples aggregated, each by its weight
				 * (ticks), as are the counters below. */
    uint64_t truncated;		/* ... flagged truncated. */
    uint64_t unwindErrors;
    uint64_t unwindFallback;	/* Samples unwound by libunwind because the
				 * CFI tables could not. */
    uint64_t unwindCheckMismatch;	/* -unwind check disagreements. */
    uint64_t mergeMismatch;
    uint64_t handlerNsSum;
    uint64_t handlerNsMax;
    uint64_t handled;		/* Samples taken (each counted once): the
				 * divisor of handlerNsSum. 0 in a file saved
				 * before it was kept: samples is used. */
    uint64_t firstNs, lastNs;	/* Time of first and last sample. */
    TpCalls *calls; uint32_t nCalls, capCalls;
    TpHash *callIndex;		/* Exact call counts (trace mode). */
    struct TpThreadName *threads; uint32_t nThreads, capThreads;
				/* Names of the threads sampled. */
    int threadSel;		/* A window of TpProfileThreads: its
				 * TP_THREADS_* (with TP_THREADS_ALL each
				 * stack's root is its thread's); 0 else. */
};

/*
 * A thread's name: the Thread package's id of it ("tid0x...", the
 * pthread_t that thread::id spells) once it was seen running Tcl, else
 * the kernel's name of it (/proc/self/task/TID/comm).
 */

typedef struct TpThreadName {
    uint32_t tid;
    char name[40];
} TpThreadName;

/*
 * Which threads a report reads (profiler report -thread): all merged
 * into one tree (the default), each under a root of its own, or one.
 */

typedef struct TpThreadSel {
    int how;			/* TP_THREADS_*. */
    uint32_t tid;		/* TP_THREADS_ONE: the thread. */
    int hideIdle;		/* -idle hide: leave out the samples whose
				 * innermost C function waits (a condition
				 * variable, select, poll, sleep). */
} TpThreadSel;

enum { TP_THREADS_MERGED = 0, TP_THREADS_ALL = 1, TP_THREADS_ONE = 2 };


MODULE_SCOPE TpProfile *TpProfileNew(void);
MODULE_SCOPE void	TpProfileFree(TpProfile *p);
MODULE_SCOPE size_t	TpProfileBytes(const TpProfile *p);
MODULE_SCOPE uint32_t	TpProfileCLoc(TpProfile *p, uintptr_t pc, int isCaller);
MODULE_SCOPE uint32_t	TpProfileTclLoc(TpProfile *p, int type, const char *name,
			    size_t nameLen, const char *file, size_t fileLen, int line);
MODULE_SCOPE uint32_t	TpProfilePseudoLoc(TpProfile *p, const char *name);
MODULE_SCOPE char *	TpFoldNumbers(const char *name, size_t len,
			    size_t *lenPtr);
MODULE_SCOPE uint32_t	TpProfileNamedLoc(TpProfile *p, int kind, int module,
			    const char *name, const char *file, int line);
MODULE_SCOPE void	TpProfileAddStackWeighted(TpProfile *p, const uint32_t *ids,
			    uint32_t depth, uint32_t tid, uint64_t timeNs,
			    uint32_t weight);
MODULE_SCOPE void	TpProfileAddStack(TpProfile *p, const uint32_t *ids,
			    uint32_t depth, uint32_t tid, uint64_t timeNs);
MODULE_SCOPE void	TpProfileAddCalls(TpProfile *p, const char *callee, int type,
			    const char *caller, uint64_t count);
MODULE_SCOPE const uint32_t *TpProfileStackIds(const TpProfile *p, uint32_t stack);
MODULE_SCOPE void	TpProfileTrim(TpProfile *p, uint64_t sinceNs, int force);
MODULE_SCOPE TpProfile *TpProfileWindow(TpProfile *p, uint64_t sinceNs);
MODULE_SCOPE void	TpProfileWindowFree(TpProfile *p, TpProfile *w);
MODULE_SCOPE TpProfile *TpProfileCompact(TpProfile *p, uint64_t sinceNs);
MODULE_SCOPE void	TpProfileNameThread(TpProfile *p, uint32_t tid,
			    const char *name, int replace);
MODULE_SCOPE const char *TpProfileThreadName(const TpProfile *p, uint32_t tid);
MODULE_SCOPE TpProfile *TpProfileThreads(TpProfile *p, const TpThreadSel *sel);

/*
 * ----------------------------------------------------------------------
 * Merging a slot into a stack (merge.c).
 * ----------------------------------------------------------------------
 */

MODULE_SCOPE void	TpMergeSlot(TpProfile *p, const TpRing *ring, TpSlot *slot,
			    const TpUnwindConfig *cfg);

/*
 * ----------------------------------------------------------------------
 * The session (session.c): one profiler run in this process. Signals
 * are process-wide, so there is at most one session at a time.
 * ----------------------------------------------------------------------
 */

typedef struct TpOptions {
    int intervalUs;
    TpClock clock;
    int maxDepth;
    int bufferBytes;		/* -buffer: bytes of ring. */
    TpMode mode;		/* Requested mode... */
    int modeGiven;		/* ... if -mode was given; else default. */
    uint64_t durationNs;	/* Stop sampling after this much wall time
				 * (0: until profiler stop). */
    int progress;		/* Print a progress line on stderr once a
				 * second when stderr is a terminal. */
    TpUnwinder unwinder;	/* -unwind */
    uint64_t keepNs;		/* -keep: the flight recorder keeps only
				 * this much of the latest samples (0:
				 * all). */
    int dumpSignal;		/* -dumpsignal: on this signal the window
				 * is saved to dumpFile (0: none). */
    char dumpFile[1024];	/* -dumpfile, native path. */
    int allThreads;		/* -threads all: every thread of the
				 * process, not only the calling one. */
    int timelineBytes;		/* -timeline: bytes of the profile's
				 * time-ordered log. */
    int instances;		/* -instances: TpProfile.instances. */
    int oncpuTick;		/* -oncpu tick (1, the default): with the
				 * wall clock, running time is sampled at
				 * the kernel's tick by a CPU-clock timer;
				 * sampler (0): by the sampler thread's
				 * signal at every interval. */
} TpOptions;

typedef struct TpSession TpSession;

MODULE_SCOPE void	TpOptionsDefault(TpOptions *o);
MODULE_SCOPE int	TpSessionStart(Tcl_Interp *interp, const TpOptions *o);
MODULE_SCOPE int	TpSessionStop(Tcl_Interp *interp);
MODULE_SCOPE int	TpSessionReset(Tcl_Interp *interp);
MODULE_SCOPE int	TpSessionRunning(Tcl_Interp *interp);
MODULE_SCOPE Tcl_Obj *	TpSessionStatus(Tcl_Interp *interp);
MODULE_SCOPE void	TpSessionExitHandler(ClientData cd);
MODULE_SCOPE int	TpSessionSetProfile(Tcl_Interp *interp, TpProfile *p);
MODULE_SCOPE const char *TpModeName(int mode);
MODULE_SCOPE const char *TpClockName(int clock);

/*
 * Calls fn with the profile, drained and locked, and returns its result.
 * The profile must not be kept after fn returns.
 */

MODULE_SCOPE int	TpSessionWithProfile(Tcl_Interp *interp,
			    int (*fn)(Tcl_Interp *, TpProfile *, void *), void *cd);

/*
 * The same for the samples of the last lastNs nanoseconds only (0: the
 * session's -keep window, or everything).
 */

MODULE_SCOPE int	TpSessionWithWindow(Tcl_Interp *interp, uint64_t lastNs,
			    int (*fn)(Tcl_Interp *, TpProfile *, void *), void *cd);

/*
 * Periodic work on the interp's thread while sampling (profiler top):
 * script is evaluated at the first command boundary after each period.
 * NULL script: none.
 */

MODULE_SCOPE int	TpSessionSetTick(Tcl_Interp *interp, Tcl_Obj *script,
			    uint64_t periodNs);

/* Called by the sampler thread. */
MODULE_SCOPE void	TpSessionDrain(TpSession *s);
MODULE_SCOPE struct TpThreadState *TpSessionAddThread(TpSession *s,
			    uint32_t tid);

MODULE_SCOPE int	TpSessionWithThreads(Tcl_Interp *interp, uint64_t lastNs,
			    Tcl_Obj *threadObj, int hideIdle,
			    int (*fn)(Tcl_Interp *, TpProfile *, void *), void *cd);
MODULE_SCOPE int	TpSessionThreadList(Tcl_Interp *interp);
MODULE_SCOPE uint64_t	TpSessionSamples(TpSession *s);
MODULE_SCOPE void	TpSessionExpired(TpSession *s, uint64_t nowNs);

/* Called by the atfork handlers (unix/sampler.c); see session.c. */
MODULE_SCOPE void	TpSessionForkPrepare(void);
MODULE_SCOPE void	TpSessionForkParent(void);
MODULE_SCOPE void	TpSessionForkChild(void);

/*
 * ----------------------------------------------------------------------
 * The sampler and the handler (unix/sampler.c, unix/signal.c).
 * ----------------------------------------------------------------------
 */

/* Per-thread state the handler reads, reached through one TLS pointer. */
typedef struct TpThreadState {
    volatile int active;	/* 1 while samples are wanted (interp
				 * thread writes). */
    volatile int inHandler;	/* Recursion guard and stop protocol. */
    TpRing *ring;		/* Ring of this thread. */
    Tcl_Interp *interp;		/* Interp whose Tcl stack is captured. */
    TpMode mode;
    TpTraceState *trace;	/* Trace mode's shadow stack. */
    TpUnwindConfig unwind;
    uint32_t tid;
    int foreign;		/* Found by the sampler (-threads all), not
				 * the thread that started the run: its
				 * interp is read from its trampolines. */
    volatile int gone;		/* The thread has exited (sampler thread
				 * writes). */
    volatile uintptr_t probeSp;	/* Handler: a stack pointer of the thread
				 * while unwind.stackHi is unknown... */
    volatile uintptr_t stackHi;	/* ... which the sampler thread then finds
				 * (atomic; 0: not yet, 1: not found). */
    volatile uintptr_t threadId;	/* Handler: pthread_self() (the Thread
				 * package's id), 0 until sampled. */
    volatile int sawTcl;	/* Handler: a sample had Tcl frames. */
    char comm[16];		/* The kernel's name of a foreign thread. */
    TpRing ownRing;		/* The ring of a foreign thread. */
#ifndef _WIN32
    volatile int faultGuard;	/* Handler: reading the program's memory;
				 * a fault there jumps to faultJmp. */
    sigjmp_buf faultJmp;
#endif
} TpThreadState;

MODULE_SCOPE TpThreadState *TpThreadStateGet(void);	/* Creates it. */
MODULE_SCOPE int	TpSignalInstall(Tcl_Obj **errPtr);
MODULE_SCOPE int	TpThreadNameIsTcl(const char *name);
MODULE_SCOPE TpThreadState *TpSignalThreadSlot(int i);
MODULE_SCOPE int	TpSignalAddThread(TpThreadState *ts);
MODULE_SCOPE void	TpSignalClearThreads(void);
MODULE_SCOPE void	TpSignalRestore(void);
MODULE_SCOPE void	TpSignalQuiesce(TpThreadState *ts);
MODULE_SCOPE int	TpDumpSignalInstall(int signo, Tcl_Obj **errPtr);
MODULE_SCOPE void	TpDumpSignalRestore(void);
MODULE_SCOPE int	TpDumpSignalTake(void);	/* 1 once per signal. */
MODULE_SCOPE int	TpDumpSignalSend(long pid, int signo,
			    Tcl_Obj **errPtr);

typedef struct TpSampler TpSampler;
MODULE_SCOPE TpSampler *TpSamplerStart(TpSession *s, TpRing *ring, pthread_t target, uint32_t tid,
			    const TpOptions *o, Tcl_Obj **errPtr);
MODULE_SCOPE void	TpSamplerStop(TpSampler *sp);
MODULE_SCOPE int	TpSamplerOncpuTick(const TpSampler *sp);
MODULE_SCOPE void	TpSamplerPause(int pause);

/*
 * ----------------------------------------------------------------------
 * Reports (tree.c, report.c).
 * ----------------------------------------------------------------------
 */

typedef struct TpReportOptions {
    int showInternals;
    int maxDepth;		/* 0 = unlimited. */
    double thresholdPct;	/* Hide nodes below this % of all samples. */
    /*
     * Fields below: the report and export layer (reportx.c, export.c).
     * Zero means the default for each.
     */
    int sort;			/* TP_SORT_*. */
    const char *focus;		/* Pattern (string match): keep only the
				 * samples through a matching frame, rooted
				 * at the outermost match. NULL: all. */
    const char *hide;		/* Pattern: frames elided, their children
				 * re-parented. NULL: none. */
    const char *function;	/* callers/callees: the function(s). */
    const char *source;		/* lines: one file, or NULL for every file
				 * with samples. */
    int all;			/* lines: every line, not only the lines
				 * of sampled procs. */
    int asValue;		/* Tcl values (dicts) instead of text. */
    int directed;		/* clusters, dot: follow calls one way. */
    Tcl_WideInt minWeight;	/* clusters, dot: lightest edge kept (0:
				 * the default, 1). */
} TpReportOptions;

enum {
    TP_SORT_DEFAULT = 0,	/* total for trees, self for flat. */
    TP_SORT_SELF = 1,
    TP_SORT_TOTAL = 2,
    TP_SORT_NAME = 3
};

/*
 * A function: what a tree node stands for. Locations of one function (a
 * C function's many return addresses, a proc's many call-site lines)
 * share it. Built at report time, when C locations are symbolized.
 */

typedef struct TpFunc {
    uint8_t kind;		/* TpKind. */
    uint8_t type;		/* TpTclType for Tcl functions. */
    int module;			/* C: module index, else -1. */
    char *name;			/* Owned. */
    const char *file;		/* Borrowed from a location, or NULL. */
    int line;			/* Lowest line seen, 0 if unknown. */
    uintptr_t addr;		/* C: absolute start address, 0 if unknown. */
    int cmdFunc;		/* C function that implements a Tcl command:
				 * that command's function, else -1. */
    int procAlias;		/* Command frame whose word names a proc:
				 * that proc's function, else -1. */
    int own;			/* A Tcl frame of tclprof itself (::tclprof::*,
				 * e.g. the tclprof command line): hidden
				 * with the internals. */
    int wrap;			/* One of the command line's frames around
				 * the profiled script (::tclprof::cli::*,
				 * ::tclprof::source): recognised by name,
				 * never by file, so that a user's [uplevel]
				 * is never taken for the wrapper's. */
    int placeSeen;		/* A command: file and line were set from a
				 * first location (CmdPlace). */
    int startup;		/* C: 1 for the process's start-up functions
				 * (_start, __libc_start_*), 2 for a function
				 * without a name (module+0xoff): a stripped
				 * main. Folded at the root with internals
				 * hidden. */
} TpFunc;

typedef struct TpNode {
    uint32_t func;		/* Index in the tree's funcs. */
    uint64_t self;		/* Samples whose leaf is this node. */
    uint64_t total;		/* self + children's totals (derived). */
    struct TpNode *firstChild;
    struct TpNode *nextSibling;
} TpNode;

typedef struct TpTree {
    TpNode *root;		/* Synthetic root: its children are the real
				 * roots; its total is all samples. */
    TpFunc *funcs;
    uint32_t nFuncs;
    uint32_t *locFunc;		/* Location id -> function index. */
    void *arena;		/* Node storage. */
} TpTree;

MODULE_SCOPE TpTree *	TpTreeBuild(Tcl_Interp *interp, TpProfile *p,
			    const TpReportOptions *o);
MODULE_SCOPE void	TpTreeFree(TpTree *t);
MODULE_SCOPE uint32_t	TpTreeStackFuncs(const TpTree *t, const TpProfile *p,
			    uint32_t stack, const TpReportOptions *o,
			    uint32_t *out);
MODULE_SCOPE int	TpReportText(Tcl_Interp *interp, TpProfile *p, TpTree *t,
			    const TpReportOptions *o);
MODULE_SCOPE void	TpFuncDictPut(Tcl_Obj *d, const TpProfile *p,
			    const TpFunc *f, uint64_t self, uint64_t total);
MODULE_SCOPE int	TpReportCalls(Tcl_Interp *interp, TpProfile *p, int edges);
MODULE_SCOPE int	TpReportDict(Tcl_Interp *interp, TpProfile *p, TpTree *t,
			    const TpReportOptions *o);

/*
 * ----------------------------------------------------------------------
 * Views (reportx.c): every stack as the function sequence reports and
 * exporters show (internals, -hide and -focus applied), and the reports
 * computed from them.
 * ----------------------------------------------------------------------
 */

typedef struct TpView {
    uint32_t nStacks;		/* One entry per profile stack. */
    uint32_t *first;		/* Offset of stack i's functions in seq. */
    uint32_t *len;		/* Their number (0: sample focused out). */
    uint32_t *seq;		/* Function indices, root first. */
    uint64_t samples;		/* Samples that survived -focus. */
    uint32_t maxLen;		/* Longest sequence. */
    void *arena;		/* Nodes of TpViewTree. */
} TpView;

MODULE_SCOPE TpView *	TpViewBuild(const TpTree *t, const TpProfile *p,
			    const TpReportOptions *o);
MODULE_SCOPE void	TpViewFree(TpView *v);
MODULE_SCOPE TpNode *	TpViewTree(TpView *v, const TpProfile *p);
MODULE_SCOPE int	TpNameMatch(const char *pattern, const char *name);
MODULE_SCOPE int	TpReportFlat(Tcl_Interp *interp, TpProfile *p, TpTree *t,
			    TpView *v, const TpReportOptions *o);
MODULE_SCOPE int	TpReportCallers(Tcl_Interp *interp, TpProfile *p, TpTree *t,
			    TpView *v, const TpReportOptions *o, int callees);
MODULE_SCOPE int	TpReportModules(Tcl_Interp *interp, TpProfile *p, TpTree *t,
			    const TpReportOptions *o);
MODULE_SCOPE int	TpReportLines(Tcl_Interp *interp, TpProfile *p, TpTree *t,
			    TpView *v, const TpReportOptions *o);

/*
 * The procs' call graph and its clusters (clusters.c).
 */

MODULE_SCOPE int	TpReportClusters(Tcl_Interp *interp, TpProfile *p,
			    TpTree *t, TpView *v, const TpReportOptions *o);
MODULE_SCOPE const char	TpClustersViewSql[];	/* The saved file's views. */

/*
 * ----------------------------------------------------------------------
 * Export (export.c and one ex*.c file per format). Each writer appends
 * the whole file to a buffer; export.c writes the buffer out, so a
 * failure never leaves half a file.
 * ----------------------------------------------------------------------
 */

enum {
    TP_EXPORT_CALLGRIND, TP_EXPORT_CHROME, TP_EXPORT_DOT, TP_EXPORT_FOLDED,
    TP_EXPORT_HTML, TP_EXPORT_PPROF, TP_EXPORT_SPEEDSCOPE
};

typedef struct TpExportArgs {
    int format;			/* TP_EXPORT_*. */
    Tcl_Obj *file;		/* -file path, or NULL. */
    Tcl_Obj *channel;		/* -channel name, or NULL. */
    TpReportOptions ro;
} TpExportArgs;

typedef struct TpExportCtx {
    TpProfile *p;
    TpTree *t;
    TpView *v;
    const TpReportOptions *o;
} TpExportCtx;

MODULE_SCOPE int	TpExport(Tcl_Interp *interp, TpProfile *p, void *args);
MODULE_SCOPE int	TpExFolded(Tcl_Interp *interp, const TpExportCtx *x,
			    Tcl_DString *out);
MODULE_SCOPE int	TpExSpeedscope(Tcl_Interp *interp, const TpExportCtx *x,
			    Tcl_DString *out);
MODULE_SCOPE int	TpExPprof(Tcl_Interp *interp, const TpExportCtx *x,
			    Tcl_DString *out);
MODULE_SCOPE int	TpExCallgrind(Tcl_Interp *interp, const TpExportCtx *x,
			    Tcl_DString *out);
MODULE_SCOPE int	TpExChrome(Tcl_Interp *interp, const TpExportCtx *x,
			    Tcl_DString *out);
MODULE_SCOPE int	TpExHtml(Tcl_Interp *interp, const TpExportCtx *x,
			    Tcl_DString *out);
MODULE_SCOPE int	TpExDot(Tcl_Interp *interp, const TpExportCtx *x,
			    Tcl_DString *out);	/* clusters.c */
MODULE_SCOPE void	TpJsonString(Tcl_DString *out, const char *s);
MODULE_SCOPE void	TpFoldedName(Tcl_DString *out, const char *name, int leaf);
MODULE_SCOPE uint32_t	TpExportDepth(const TpExportCtx *x, uint32_t stack,
			    const uint32_t **seqPtr);

/*
 * The samples of a view in time order, for timeline formats: the
 * profile's log, or if it has none (a profile loaded without one) one
 * entry per stack weighing its count. Threads in order of appearance.
 */

typedef struct TpTimeEntry {
    uint64_t timeNs;		/* Since the first sample: when the span
				 * it stands for began. */
    uint64_t weight;		/* Samples it stands for. */
    uint32_t stack;
    uint32_t tid;
} TpTimeEntry;

MODULE_SCOPE TpTimeEntry *TpExportTimeline(const TpExportCtx *x, size_t *nPtr,
			    uint32_t **tidsPtr, uint32_t *nTidsPtr);

/*
 * ----------------------------------------------------------------------
 * Saved profiles (save.c): SQLite files, see doc/schema.md.
 * ----------------------------------------------------------------------
 */

MODULE_SCOPE int	TpSaveFile(Tcl_Interp *interp, const char *path,
			    uint64_t lastNs);
MODULE_SCOPE int	TpLoadFiles(Tcl_Interp *interp, int nFiles,
			    Tcl_Obj *const files[]);
MODULE_SCOPE void	TpSaveExpired(void);
MODULE_SCOPE int	TpSaveAtExit(Tcl_Interp *interp, Tcl_Obj *script);

/*
 * Small helpers (util.c).
 */

MODULE_SCOPE uint64_t	TpNowNs(void);
MODULE_SCOPE void	TpSort(void *base, size_t n, size_t size,
			    int (*cmp)(const void *, const void *));
MODULE_SCOPE uint32_t	TpGetTid(void);
MODULE_SCOPE void	TpSetError(Tcl_Interp *interp, const char *code1,
			    const char *code2, const char *fmt, ...);
MODULE_SCOPE const char *TpKindName(int kind);
MODULE_SCOPE int	TpLambdaName(char *buf, int size, const char *file,
			    int fileLen, int line, const char *body,
			    int bodyLen);	/* Signal-safe. */

#endif /* TCLPROF_INT_H */
