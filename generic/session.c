/*
 * session.c --
 *
 *	A profiling session: the options, the ring, the sampler, the Tcl
 *	stack source (frames or trace) and the profile they feed. SIGPROF is
 *	a process resource, so at most one session samples at a time; each
 *	interp keeps its own session (AssocData) with the profile it
 *	collected, which outlives `profiler stop` until `profiler reset`.
 *
 *	Locking. One process-wide mutex (tpProcess.lock) guards which session
 *	is running and the SIGPROF disposition. Each session has a mutex
 *	(s->lock) guarding its profile and the consumer side of its ring; the
 *	drain (sampler thread) and every reader (interp thread) take it.
 *	The handler takes no lock: it writes only the ring's producer side.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TP_ASSOC_KEY "tclprof::session"

struct TpSession {
    Tcl_Interp *interp;		/* Owner; the sampled thread runs it. */
    pthread_mutex_t lock;	/* Guards profile and the ring's consumer
				 * side (see the file comment). */
    TpOptions opts;		/* Of the current or last run. */
    TpMode mode;		/* Mode actually used. */
    char modeReason[512];	/* Why that mode. */
    int running;		/* Interp thread only. */
    int ringLive;		/* ring holds memory. */
    TpRing ring;
    TpThreadState *ts;		/* The sampled thread's handler state. */
    TpSampler *sampler;
    TpTraceState *trace;
    TpUnwindConfig unwind;	/* Copy given to the handler. */
    TpProfile *profile;		/* NULL until the first start. */
    uint64_t startNs;		/* Start of the current run. */
    uint64_t expiredNs;		/* -duration ran out at this time (sampler
				 * thread writes, under lock), or 0. */
    uint64_t elapsedNs;		/* Sum of finished runs since reset. */
    uint64_t droppedBase;	/* Drops of finished rings since reset. */
    uint64_t compactNs;		/* -keep: last TpProfileCompact (drain). */
    uint64_t missedBase;	/* Missed ticks of finished rings since
				 * reset. */
    uint64_t overrunsBase;	/* Their ticks carried as weight by a later
				 * sample, likewise. */
    uint64_t faultsBase;	/* Their samples given up to a fault,
				 * likewise. */
    pid_t pid;			/* Process the run started in. */
    pthread_t thread;		/* Thread the run samples (interp's). */
    Tcl_AsyncHandler forkAsync;	/* Restarts a run in a forked child. */
    volatile int forked;	/* Set in the child by TpSessionForkChild. */
    Tcl_AsyncHandler pollAsync;	/* Runs PollAsyncProc on the interp's
				 * thread: the dump and the tick. */
    int dumpSignalSet;		/* Our -dumpsignal handler is installed. */
    volatile int dumpPending;	/* The dump signal came (sampler thread
				 * sets, PollAsyncProc clears). */
    Tcl_Obj *tickScript;	/* TpSessionSetTick's script, or NULL
				 * (interp thread; the sampler thread reads
				 * only whether it is NULL, under lock). */
    uint64_t tickNs;		/* Its period. */
    uint64_t lastTickNs;	/* Sampler thread: when it last asked. */
    volatile int tickPending;	/* The tick is due. */
    int inPoll;			/* PollAsyncProc is running (no nesting). */
    TpThreadState *threads[TP_MAX_THREADS];
    int nThreads;		/* -threads all: the other threads sampled
				 * (sampler thread adds, under lock; their
				 * rings are drained with the session's). */
    uint64_t threadsNamed;	/* Drain: bit i: threads[i] was named after
				 * its Thread package id. */
    int mainNamed;		/* Drain: the same for the run's thread. */
};

/*
 * Process-wide state.
 */

static struct {
    pthread_mutex_t lock;	/* Guards active and the signal install. */
    TpSession *active;		/* The running session, or NULL. */
    int unwindReady;		/* TpUnwindInit done. */
    int calibrated;		/* The trampolines were looked for once... */
    int calibOk;		/* ... every entry API's was found, */
    char calibWhy[300];		/* or not, for this reason; */
    TpUnwindConfig tramps;	/* what was found (trampLo/Hi, sites,
				 * fnRoot); copied into each run's
				 * configuration. */
} tpProcess = { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0, "", {0} };

static const char *const modeNames[] = {"none", "frames", "trace", NULL};
static const char *const clockNames[] = {"wall", "cpu", NULL};
static const char *const unwinderNames[] = {
    "tables", "libunwind", "check", NULL
};

static void	DrainLocked(TpSession *s);
static int	NameThread(TpProfile *p, TpThreadState *ts);
static void	QuiesceThreads(TpSession *s);
static int	ForkAsyncProc(ClientData cd, Tcl_Interp *interp, int code);
static int	PollAsyncProc(ClientData cd, Tcl_Interp *interp, int code);
static int	FindTrampoline(Tcl_Obj **errPtr);
static TpSession *GetSession(Tcl_Interp *interp, int create);
static void	SessionDelete(ClientData cd, Tcl_Interp *interp);
static void	StopLocked(TpSession *s);

/*
 *----------------------------------------------------------------------
 *
 * TpOptionsDefault --
 *
 *	Fills in the documented defaults of `profiler start`.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Writes *o.
 *
 *----------------------------------------------------------------------
 */

void
TpOptionsDefault(
    TpOptions *o)
{
    o->intervalUs = TP_DEFAULT_INTERVAL_US;
    o->clock = TP_CLOCK_WALL;
    o->maxDepth = TP_DEFAULT_DEPTH;
    o->bufferBytes = TP_DEFAULT_BUFFER;
    o->timelineBytes = TP_DEFAULT_TIMELINE;
    o->instances = TP_DEFAULT_INSTANCES;
    o->mode = TP_MODE_NONE;
    o->modeGiven = 0;
    o->durationNs = 0;
    o->progress = 0;
    o->unwinder = TP_UNWIND_TABLES;
    o->keepNs = 0;
    o->dumpSignal = 0;
    o->dumpFile[0] = '\0';
    o->allThreads = 1;
    o->oncpuTick = 1;
}

/*
 *----------------------------------------------------------------------
 *
 * GetSession --
 *
 *	The interp's session, created on demand.
 *
 * Results:
 *	The session, or NULL if none and create is 0.
 *
 * Side effects:
 *	May create the session and its AssocData.
 *
 *----------------------------------------------------------------------
 */

static TpSession *
GetSession(
    Tcl_Interp *interp,
    int create)
{
    TpSession *s = Tcl_GetAssocData(interp, TP_ASSOC_KEY, NULL);

    if (s == NULL && create) {
	s = calloc(1, sizeof(TpSession));
	if (s == NULL) {
	    Tcl_Panic("tclprof: out of memory");
	}
	s->interp = interp;
	pthread_mutex_init(&s->lock, NULL);
	TpOptionsDefault(&s->opts);
	s->forkAsync = Tcl_AsyncCreate(ForkAsyncProc, s);
	s->pollAsync = Tcl_AsyncCreate(PollAsyncProc, s);
	Tcl_SetAssocData(interp, TP_ASSOC_KEY, SessionDelete, s);
    }
    return s;
}

/*
 *----------------------------------------------------------------------
 *
 * SessionDelete --
 *
 *	AssocData delete proc: the interp is going away. Stop the sampler,
 *	remove the trace, free, in that order.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Frees the session.
 *
 *----------------------------------------------------------------------
 */

static void
SessionDelete(
    ClientData cd,
    Tcl_Interp *interp)
{
    TpSession *s = cd;

    (void) interp;
    pthread_mutex_lock(&tpProcess.lock);
    if (s->running) {
	StopLocked(s);
    }
    pthread_mutex_unlock(&tpProcess.lock);
    if (s->forkAsync != NULL) {
	Tcl_AsyncDelete(s->forkAsync);
    }
    if (s->pollAsync != NULL) {
	Tcl_AsyncDelete(s->pollAsync);
    }
    if (s->tickScript != NULL) {
	Tcl_DecrRefCount(s->tickScript);
    }
    TpProfileFree(s->profile);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/*
 *----------------------------------------------------------------------
 *
 * FindTrampoline --
 *
 *	Finds TclNRRunCallbacks' address range, once per process.
 *
 * Results:
 *	TCL_OK, or TCL_ERROR with a reason in *errPtr.
 *
 * Side effects:
 *	Sets tpProcess.tramps.trampLo/Hi.
 *
 *----------------------------------------------------------------------
 */

static int
FindTrampoline(
    Tcl_Obj **errPtr)
{
    if (tpProcess.tramps.trampLo != 0) {
	return TCL_OK;
    }
    if (!TpInterpFindTrampoline(&tpProcess.tramps.trampLo,
	    &tpProcess.tramps.trampHi)) {
	*errPtr = Tcl_NewStringObj(
		"cannot find TclNRRunCallbacks in the loaded Tcl library", -1);
	return TCL_ERROR;
    }
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * TpSessionStart --
 *
 *	Starts profiling the calling thread's interp with options o.
 *
 * Results:
 *	TCL_OK, or TCL_ERROR with a message and error code in interp.
 *
 * Side effects:
 *	Installs the handler, allocates the ring, starts the sampler; in
 *	trace mode installs the trace. The profile of previous runs is kept
 *	and added to.
 *
 *----------------------------------------------------------------------
 */

int
TpSessionStart(
    Tcl_Interp *interp,
    const TpOptions *o)
{
    TpSession *s = GetSession(interp, 1);
    TpThreadState *ts;
    Tcl_Obj *err = NULL;
    TpMode mode;
    const char *why;

    pthread_mutex_lock(&tpProcess.lock);
    if (tpProcess.active != NULL) {
	pthread_mutex_unlock(&tpProcess.lock);
	if (tpProcess.active == s) {
	    TpSetError(interp, "STATE", "RUNNING", "profiler is already running");
	} else {
	    TpSetError(interp, "STATE", "BUSY",
		    "profiler is running in another interpreter");
	}
	return TCL_ERROR;
    }
    if (FindTrampoline(&err) != TCL_OK) {
	goto error;
    }
    if (!tpProcess.unwindReady) {
	TpUnwindInit();
	tpProcess.unwindReady = 1;
    }

    /*
     * Choose the Tcl stack source. Frames mode needs a known Tcl layout
     * and the trampolines, found once per process: they are a property
     * of the Tcl library's machine code, the same for every interp.
     */

    mode = o->mode;
    why = TpInterpCheck();
    if (why == NULL && !tpProcess.calibrated) {
	Tcl_Obj *calibErr = NULL;

	tpProcess.calibrated = 1;
	tpProcess.calibOk = TpInterpCalibrate(interp, &tpProcess.tramps,
		&calibErr);
	if (!tpProcess.calibOk) {
	    snprintf(tpProcess.calibWhy, sizeof(tpProcess.calibWhy), "%s",
		    calibErr ? Tcl_GetString(calibErr) : "calibration failed");
	}
	if (calibErr) {
	    Tcl_DecrRefCount(calibErr);
	}
    }
    if (mode == TP_MODE_FRAMES && why != NULL) {
	pthread_mutex_unlock(&tpProcess.lock);
	TpSetError(interp, "MODE", "UNAVAILABLE",
		"frames mode is not available: %s", why);
	return TCL_ERROR;
    }
    /*
     * The default is frames mode (no per-command cost). Without the
     * trampolines' roots frames mode cannot tell which C->Tcl entry runs
     * which Tcl frame, so the default falls back to trace mode; an
     * explicit -mode frames runs anyway and says so.
     */

    if (mode == TP_MODE_NONE && !o->modeGiven) {
	if (why != NULL) {
	    mode = TP_MODE_TRACE;
	    snprintf(s->modeReason, sizeof(s->modeReason),
		    "default: frames mode unavailable (%s), trace mode used", why);
	} else if (!tpProcess.calibOk) {
	    mode = TP_MODE_TRACE;
	    snprintf(s->modeReason, sizeof(s->modeReason),
		    "default: frames mode could not find the trampolines"
		    " (%s), trace mode used", tpProcess.calibWhy);
	} else {
	    mode = TP_MODE_FRAMES;
	    snprintf(s->modeReason, sizeof(s->modeReason),
		    "default: frames mode has no per-command cost");
	}
    } else {
	snprintf(s->modeReason, sizeof(s->modeReason), "requested");
	if (mode == TP_MODE_FRAMES && !tpProcess.calibOk) {
	    size_t len = strlen(s->modeReason);

	    snprintf(s->modeReason + len, sizeof(s->modeReason) - len,
		    "; trampolines not all found (%s): Tcl frames of nested"
		    " C->Tcl entries may be misplaced", tpProcess.calibWhy);
	}
    }

    /*
     * The handler must not run until everything it reads is in place:
     * signal installed, ring allocated, thread state filled, then active.
     */

    if (TpSignalInstall(&err) != TCL_OK) {
	pthread_mutex_unlock(&tpProcess.lock);
	Tcl_SetObjResult(interp, err);
	Tcl_SetErrorCode(interp, "TCLPROF", "SIGNAL", "BUSY", NULL);
	return TCL_ERROR;
    }
    if (o->dumpSignal != 0) {
	if (TpDumpSignalInstall(o->dumpSignal, &err) != TCL_OK) {
	    TpSignalRestore();
	    pthread_mutex_unlock(&tpProcess.lock);
	    Tcl_SetObjResult(interp, err);
	    Tcl_SetErrorCode(interp, "TCLPROF", "SIGNAL", "BUSY", NULL);
	    return TCL_ERROR;
	}
	s->dumpSignalSet = 1;
	s->dumpPending = 0;
    }
    pthread_mutex_lock(&s->lock);
    if (s->profile == NULL) {
	s->profile = TpProfileNew();
    }
    s->profile->logMax = (size_t) o->timelineBytes / sizeof(TpLogEntry);
    s->profile->logKeep = o->keepNs != 0;
    s->profile->instances = (uint32_t) o->instances;
    if (TpRingInit(&s->ring, (size_t) o->bufferBytes,
	    (uint32_t) o->maxDepth) != 0) {
	pthread_mutex_unlock(&s->lock);
	TpSignalRestore();
	if (s->dumpSignalSet) {
	    TpDumpSignalRestore();
	    s->dumpSignalSet = 0;
	}
	pthread_mutex_unlock(&tpProcess.lock);
	TpSetError(interp, "RESOURCE", "MEMORY",
		"cannot allocate a ring of %d bytes", o->bufferBytes);
	return TCL_ERROR;
    }
    s->ringLive = 1;
    pthread_mutex_unlock(&s->lock);

    s->opts = *o;
    s->mode = mode;
    s->unwind = tpProcess.tramps;
    if (mode != TP_MODE_FRAMES) {
	int i;

	for (i = 0; i < s->unwind.nSites; i++) {
	    s->unwind.sites[i].cb.kind = TP_LOC_NONE;
	}
    }
    s->unwind.wantTrampRegs = mode != TP_MODE_NONE;
    s->unwind.unwinder = o->unwinder;
    s->unwind.stackHi = TpCfiStackTop();
    /*
     * Every module's unwind rows now (5 ms the first time in a process,
     * nothing after): leaving them to the drain made the first samples
     * fall back to libunwind with cold caches, up to 18 ms in the handler.
     */

    if (o->unwinder != TP_UNWIND_LIBUNWIND) {
	TpCfiPrepare(1);
    }
    s->trace = NULL;
    if (mode == TP_MODE_TRACE) {
	s->trace = TpTraceStart(interp, &s->unwind, o->instances);
	if (s->trace == NULL) {
	    err = Tcl_NewStringObj("cannot install the trace: calibration of "
		    "the stack anchor failed", -1);
	    goto errorRing;
	}
    }

    ts = TpThreadStateGet();
    ts->tid = TpGetTid();	/* Not the parent's, in a forked child: its
				 * timer is delivered by this id. */
    ts->ring = &s->ring;
    ts->interp = interp;
    ts->mode = mode;
    ts->trace = s->trace;
    ts->unwind = s->unwind;
    s->ts = ts;
    TpUnwindWarm();

    ts->sawTcl = 0;
    ts->threadId = (uintptr_t) pthread_self();
    {
	char name[40];

	/*
	 * The run's own thread runs Tcl by definition: named after its
	 * Thread package id from the start.
	 */

	snprintf(name, sizeof(name), "tid%p", (void *) pthread_self());
	pthread_mutex_lock(&s->lock);
	TpProfileNameThread(s->profile, ts->tid, name, 1);
	pthread_mutex_unlock(&s->lock);
    }
    s->mainNamed = 1;
    s->threadsNamed = 0;
    s->nThreads = 0;
    s->pid = getpid();
    s->thread = pthread_self();
    s->startNs = TpNowNs();
    pthread_mutex_lock(&s->lock);
    s->profile->mode = mode;
    s->profile->intervalUs = o->intervalUs;
    s->profile->clock = o->clock;
    if (s->profile->program == NULL) {
	const char *argv0 = Tcl_GetVar2(interp, "argv0", NULL, TCL_GLOBAL_ONLY);

	s->profile->program = strdup(argv0 != NULL ? argv0 : "tclsh");
    }
    if (s->profile->startEpochUs == 0) {
	Tcl_Time now;

	Tcl_GetTime(&now);
	s->profile->startEpochUs = (uint64_t) now.sec * 1000000u
		+ (uint64_t) now.usec;
    }
    pthread_mutex_unlock(&s->lock);
    __atomic_store_n(&ts->active, 1, __ATOMIC_RELEASE);
    s->sampler = TpSamplerStart(s, &s->ring, pthread_self(), ts->tid, o,
	    &err);
    if (s->sampler == NULL) {
	TpSignalQuiesce(ts);
	if (s->trace) {
	    TpTraceStop(s->trace, NULL);
	    s->trace = NULL;
	}
	goto errorRing;
    }
    s->opts.oncpuTick = TpSamplerOncpuTick(s->sampler);
    s->running = 1;
    tpProcess.active = s;
    pthread_mutex_unlock(&tpProcess.lock);
    return TCL_OK;

  errorRing:
    pthread_mutex_lock(&s->lock);
    TpRingFree(&s->ring);
    s->ringLive = 0;
    pthread_mutex_unlock(&s->lock);
    TpSignalRestore();
    if (s->dumpSignalSet) {
	TpDumpSignalRestore();
	s->dumpSignalSet = 0;
    }
  error:
    pthread_mutex_unlock(&tpProcess.lock);
    Tcl_SetObjResult(interp, err);
    Tcl_SetErrorCode(interp, "TCLPROF", "START", "FAILED", NULL);
    return TCL_ERROR;
}

/*
 *----------------------------------------------------------------------
 *
 * StopLocked --
 *
 *	Stops a running session: sampler first (no new signals), then the
 *	handler (quiesce), then the last drain, then the trace, then the
 *	signal disposition. Caller holds tpProcess.lock.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Everything the session started is stopped and freed; the profile
 *	stays.
 *
 *----------------------------------------------------------------------
 */

/*
 *----------------------------------------------------------------------
 *
 * QuiesceThreads --
 *
 *	The stop protocol for the other threads: none of them takes a
 *	sample any more, and the handler's table is emptied. In a forked
 *	child those threads do not exist (one may have been copied in the
 *	middle of a handler): their states are only turned off.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Clears every other thread's active flag.
 *
 *----------------------------------------------------------------------
 */

static void
QuiesceThreads(
    TpSession *s)
{
    int i;

    for (i = 0; i < s->nThreads; i++) {
	if (s->pid == getpid()) {
	    TpSignalQuiesce(s->threads[i]);
	} else {
	    __atomic_store_n(&s->threads[i]->active, 0, __ATOMIC_SEQ_CST);
	}
    }
    TpSignalClearThreads();
}

static void
StopLocked(
    TpSession *s)
{
    int i;

    TpSamplerStop(s->sampler);
    s->sampler = NULL;
    TpSignalQuiesce(s->ts);
    QuiesceThreads(s);
    pthread_mutex_lock(&s->lock);
    DrainLocked(s);
    s->droppedBase += s->ring.dropped;
    s->missedBase += s->ring.missed + s->ring.pending;
    s->overrunsBase += s->ring.overruns;
    s->faultsBase += s->ring.faults;
    TpRingFree(&s->ring);
    s->ringLive = 0;
    for (i = 0; i < s->nThreads; i++) {
	TpRing *r = &s->threads[i]->ownRing;

	s->droppedBase += r->dropped;
	s->missedBase += r->missed + r->pending;
	s->overrunsBase += r->overruns;
	s->faultsBase += r->faults;
	TpRingFree(r);
	s->threads[i]->ring = NULL;
    }
    s->nThreads = 0;
    if (s->trace != NULL) {
	TpTraceStop(s->trace, s->profile);
	s->trace = NULL;
	s->ts->trace = NULL;
    }
    s->elapsedNs += (s->expiredNs ? s->expiredNs : TpNowNs()) - s->startNs;
    s->expiredNs = 0;
    s->profile->elapsedNs = s->elapsedNs;
    s->profile->dropped = s->droppedBase;
    pthread_mutex_unlock(&s->lock);
    s->ts->ring = NULL;
    TpSignalRestore();
    if (s->dumpSignalSet) {
	TpDumpSignalRestore();
	s->dumpSignalSet = 0;
    }
    s->running = 0;
    tpProcess.active = NULL;
}

/*
 *----------------------------------------------------------------------
 *
 * TpSessionStop --
 *
 *	`profiler stop`.
 *
 * Results:
 *	TCL_OK, or TCL_ERROR when not running.
 *
 * Side effects:
 *	See StopLocked.
 *
 *----------------------------------------------------------------------
 */

int
TpSessionStop(
    Tcl_Interp *interp)
{
    TpSession *s = GetSession(interp, 0);

    pthread_mutex_lock(&tpProcess.lock);
    if (s == NULL || !s->running) {
	pthread_mutex_unlock(&tpProcess.lock);
	TpSetError(interp, "STATE", "IDLE", "profiler is not running");
	return TCL_ERROR;
    }
    StopLocked(s);
    pthread_mutex_unlock(&tpProcess.lock);
    TpSessionSetTick(interp, NULL, 0);	/* The live view ends too. */
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * TpSessionReset --
 *
 *	`profiler reset`: forgets the samples and counters. While running,
 *	sampling goes on into a fresh profile.
 *
 * Results:
 *	TCL_OK.
 *
 * Side effects:
 *	Frees the profile.
 *
 *----------------------------------------------------------------------
 */

int
TpSessionReset(
    Tcl_Interp *interp)
{
    TpSession *s = GetSession(interp, 0);

    if (s == NULL) {
	return TCL_OK;
    }
    pthread_mutex_lock(&s->lock);
    if (s->ringLive) {
	DrainLocked(s);
	s->droppedBase = 0 - s->ring.dropped;
	s->missedBase = 0 - s->ring.missed;
	s->overrunsBase = 0 - s->ring.overruns;
	s->faultsBase = 0 - s->ring.faults;
    } else {
	s->droppedBase = 0;
	s->missedBase = 0;
	s->overrunsBase = 0;
	s->faultsBase = 0;
    }
    if (s->running) {
	TpProfile *fresh = TpProfileNew();

	fresh->mode = s->profile->mode;
	fresh->intervalUs = s->profile->intervalUs;
	fresh->clock = s->profile->clock;
	fresh->startEpochUs = s->profile->startEpochUs;
	fresh->logMax = s->profile->logMax;
	fresh->logKeep = s->profile->logKeep;
	fresh->instances = s->profile->instances;
	TpProfileFree(s->profile);
	s->profile = fresh;
	s->mainNamed = 0;		/* The drain names them again. */
	s->threadsNamed = 0;
    } else {
	TpProfileFree(s->profile);
	s->profile = NULL;
	s->opts.keepNs = 0;	/* The next profile is not a window. */
    }
    s->elapsedNs = 0;
    s->startNs = TpNowNs();
    pthread_mutex_unlock(&s->lock);
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * DrainLocked, TpSessionDrain --
 *
 *	Moves every published slot of the ring into the profile. Caller of
 *	DrainLocked holds s->lock; TpSessionDrain takes it (sampler thread).
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Frees ring slots; adds samples to the profile.
 *
 *----------------------------------------------------------------------
 */

/*
 *----------------------------------------------------------------------
 *
 * NameThread --
 *
 *	Names a sampled thread in the profile after its Thread package id
 *	("tid0x...", as thread::id spells it) once it was seen running Tcl
 *	(the run's own thread from the start), else after its kernel name.
 *
 * Results:
 *	1 once named so (nothing more to do), else 0.
 *
 * Side effects:
 *	May name the thread in p.
 *
 *----------------------------------------------------------------------
 */

static int
NameThread(
    TpProfile *p,
    TpThreadState *ts)
{
    char name[40];
    uintptr_t id = __atomic_load_n(&ts->threadId, __ATOMIC_ACQUIRE);

    if (!ts->foreign) {
	/* The run's thread: its id was set at start. */
    } else if (!__atomic_load_n(&ts->sawTcl, __ATOMIC_ACQUIRE) || id == 0) {
	if (ts->comm[0] != '\0') {
	    TpProfileNameThread(p, ts->tid, ts->comm, 0);
	}
	return 0;
    }
    snprintf(name, sizeof(name), "tid%p", (void *) id);
    TpProfileNameThread(p, ts->tid, name, 1);
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * TpSessionAddThread --
 *
 *	-threads all: the sampler thread found thread tid. Gives it a state
 *	(a slot of the handler's table), a ring and the unwinder's
 *	configuration, and publishes it to the handler. Its Tcl stack is
 *	read in frames mode (trace mode too: a trace can only be made on
 *	the interp's own thread), from the interp its trampolines run, when
 *	the trampolines were calibrated; else, and with -mode none, only its
 *	C stack is sampled.
 *
 * Results:
 *	The state (a new one, or the reused one of a thread that has
 *	exited), or NULL when no more threads can be sampled.
 *
 * Side effects:
 *	Allocates a ring; names the thread in the profile after its kernel
 *	name until it is seen running Tcl.
 *
 *----------------------------------------------------------------------
 */

TpThreadState *
TpSessionAddThread(
    TpSession *s,
    uint32_t tid)
{
    TpThreadState *ts;
    size_t bytes = (size_t) s->opts.bufferBytes / 8;
    char path[64], comm[sizeof(ts->comm)];
    FILE *f;
    int i;

    pthread_mutex_lock(&s->lock);
    ts = TpSignalThreadSlot(s->nThreads);
    if (ts == NULL) {
	/*
	 * The table is full: a thread that has exited gives its slot and
	 * ring to this one, once its last samples are drained (no handler
	 * can run for it: it is gone, and the handler skips gone slots).
	 */

	for (i = 0; i < s->nThreads && !s->threads[i]->gone; i++) {
	}
	if (i == s->nThreads) {
	    pthread_mutex_unlock(&s->lock);
	    return NULL;
	}
	DrainLocked(s);
	ts = s->threads[i];
	__atomic_store_n(&ts->active, 0, __ATOMIC_SEQ_CST);
	s->droppedBase += ts->ownRing.dropped;
	s->missedBase += ts->ownRing.missed + ts->ownRing.pending;
	s->overrunsBase += ts->ownRing.overruns;
	s->faultsBase += ts->ownRing.faults;
	ts->ownRing.dropped = ts->ownRing.missed = ts->ownRing.pending = 0;
	ts->ownRing.overruns = ts->ownRing.faults = 0;
	ts->probeSp = ts->stackHi = ts->threadId = 0;
	ts->sawTcl = 0;
	ts->comm[0] = '\0';
	if (i < 64) {
	    s->threadsNamed &= ~((uint64_t) 1 << i);
	}
    } else {
	memset(ts, 0, sizeof(*ts));
	if (bytes < TP_MIN_BUFFER) {
	    bytes = TP_MIN_BUFFER;
	}
	if (TpRingInit(&ts->ownRing, bytes, (uint32_t) s->opts.maxDepth)
		!= 0) {
	    pthread_mutex_unlock(&s->lock);
	    return NULL;
	}
	i = -1;
    }
    ts->ring = &ts->ownRing;
    ts->tid = tid;
    ts->foreign = 1;
    ts->unwind = tpProcess.tramps;
    ts->unwind.wantTrampRegs = 1;
    ts->unwind.unwinder = s->opts.unwinder;
    ts->unwind.stackHi = 0;
    ts->mode = (s->mode != TP_MODE_NONE && tpProcess.calibOk
	    && TpInterpCheck() == NULL) ? TP_MODE_FRAMES : TP_MODE_NONE;
    if (ts->mode != TP_MODE_FRAMES) {
	for (i = 0; i < ts->unwind.nSites; i++) {
	    ts->unwind.sites[i].cb.kind = TP_LOC_NONE;
	    ts->unwind.sites[i].interp.kind = TP_LOC_NONE;
	}
    }
    snprintf(path, sizeof(path), "/proc/self/task/%u/comm", tid);
    if ((f = fopen(path, "r")) != NULL) {
	if (fgets(comm, sizeof(comm), f) != NULL) {
	    comm[strcspn(comm, "\n")] = '\0';
	    snprintf(ts->comm, sizeof(ts->comm), "%s", comm);
	    TpProfileNameThread(s->profile, tid, comm, 0);
	}
	fclose(f);
    }
    if (i < 0) {
	s->threads[s->nThreads++] = ts;
	TpSignalAddThread(ts);
    }
    __atomic_store_n(&ts->gone, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&ts->active, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&s->lock);
    return ts;
}

static void
DrainLocked(
    TpSession *s)
{
    TpSlot *slot;

    if (!s->ringLive || s->profile == NULL) {
	return;
    }
    int i;

    while ((slot = TpRingPeek(&s->ring)) != NULL) {
	TpMergeSlot(s->profile, &s->ring, slot, &s->unwind);
	TpRingRelease(&s->ring);
    }
    if (!s->mainNamed && s->ts != NULL) {
	s->mainNamed = NameThread(s->profile, s->ts);
    }
    for (i = 0; i < s->nThreads; i++) {
	TpThreadState *ts = s->threads[i];

	while ((slot = TpRingPeek(ts->ring)) != NULL) {
	    TpMergeSlot(s->profile, ts->ring, slot, &ts->unwind);
	    TpRingRelease(ts->ring);
	}
	if (i < 64 && !((s->threadsNamed >> i) & 1)
		&& NameThread(s->profile, ts)) {
	    s->threadsNamed |= (uint64_t) 1 << i;
	}
    }
    if (s->opts.keepNs != 0) {
	uint64_t now = TpNowNs();
	uint64_t since = now > s->opts.keepNs ? now - s->opts.keepNs : 0;
	uint64_t every = s->opts.keepNs > 1000000000u ? s->opts.keepNs
		: 1000000000u;

	TpProfileTrim(s->profile, since, 0);
	if (now - s->compactNs >= every) {
	    s->compactNs = now;
	    TpProfileTrim(s->profile, since, 1);
	    s->profile = TpProfileCompact(s->profile, since);
	}
    }
}

void
TpSessionDrain(
    TpSession *s)
{
    int mark = 0;

    TpCfiPrepare(0);	/* Rows for modules the handler asked for. */
    pthread_mutex_lock(&s->lock);
    DrainLocked(s);

    /*
     * The dump signal's handler only raised a flag, and the tick is only
     * due: both are done by PollAsyncProc on the interp's thread, at its
     * next command boundary or event (Tcl_AsyncMark is safe here, on a
     * plain thread; it is not in a signal handler: it takes a mutex).
     */

    if (s->dumpSignalSet && TpDumpSignalTake()) {
	s->dumpPending = 1;
	mark = 1;
    }
    if (s->tickScript != NULL) {
	uint64_t now = TpNowNs();

	if (now - s->lastTickNs >= s->tickNs) {
	    s->lastTickNs = now;
	    s->tickPending = 1;
	    mark = 1;
	}
    }
    pthread_mutex_unlock(&s->lock);
    if (mark && s->pollAsync != NULL) {
	Tcl_AsyncMark(s->pollAsync);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * TpSessionSamples, TpSessionExpired --
 *
 *	For the sampler thread: the samples aggregated so far (progress
 *	line), and the note that -duration ran out (sampling has stopped;
 *	elapsed time stops there too).
 *
 * Results:
 *	TpSessionSamples: the count.
 *
 * Side effects:
 *	TpSessionExpired sets s->expiredNs.
 *
 *----------------------------------------------------------------------
 */

uint64_t
TpSessionSamples(
    TpSession *s)
{
    uint64_t n;

    pthread_mutex_lock(&s->lock);
    n = s->profile != NULL ? s->profile->samples : 0;
    pthread_mutex_unlock(&s->lock);
    return n;
}

void
TpSessionExpired(
    TpSession *s,
    uint64_t nowNs)
{
    pthread_mutex_lock(&s->lock);
    s->expiredNs = nowNs;
    pthread_mutex_unlock(&s->lock);
    TpSaveExpired();
}

/*
 *----------------------------------------------------------------------
 *
 * TpSessionWithProfile --
 *
 *	Runs fn on the interp's profile, drained and locked. A session that
 *	never ran gets an empty profile, so reports of nothing are empty
 *	reports, not errors.
 *
 * Results:
 *	What fn returns.
 *
 * Side effects:
 *	Those of fn; holds the session lock meanwhile (the sampler thread
 *	waits; the handler does not).
 *
 *----------------------------------------------------------------------
 */

int
TpSessionWithProfile(
    Tcl_Interp *interp,
    int (*fn)(Tcl_Interp *, TpProfile *, void *),
    void *cd)
{
    return TpSessionWithWindow(interp, 0, fn, cd);
}

/*
 *----------------------------------------------------------------------
 *
 * TpSessionWithWindow --
 *
 *	TpSessionWithProfile for the samples of the last lastNs nanoseconds
 *	(-last), or with lastNs 0 of the -keep window. The window ends now
 *	while the profiler runs, else at the last sample. fn gets a profile
 *	built for the window (TpProfileWindow), or the profile itself when
 *	there is no window.
 *
 * Results:
 *	What fn returns.
 *
 * Side effects:
 *	Those of fn; the session lock is held meanwhile.
 *
 *----------------------------------------------------------------------
 */

int
TpSessionWithWindow(
    Tcl_Interp *interp,
    uint64_t lastNs,
    int (*fn)(Tcl_Interp *, TpProfile *, void *),
    void *cd)
{
    TpSession *s = GetSession(interp, 1);
    uint64_t windowNs = lastNs;
    int code;

    pthread_mutex_lock(&s->lock);
    DrainLocked(s);
    if (s->profile == NULL) {
	s->profile = TpProfileNew();
    }
    if (s->opts.keepNs != 0 && (windowNs == 0 || windowNs > s->opts.keepNs)) {
	windowNs = s->opts.keepNs;
    }
    if (windowNs == 0) {
	code = fn(interp, s->profile, cd);
    } else {
	uint64_t end = s->running ? TpNowNs() : s->profile->lastNs + 1;
	TpProfile *w;

	TpProfileTrim(s->profile, s->opts.keepNs != 0 && end > s->opts.keepNs
		? end - s->opts.keepNs : 0, 1);
	w = TpProfileWindow(s->profile, end > windowNs ? end - windowNs : 0);
	code = fn(interp, w, cd);
	TpProfileWindowFree(s->profile, w);
    }
    pthread_mutex_unlock(&s->lock);
    return code;
}

/*
 *----------------------------------------------------------------------
 *
 * TpSessionWithThreads --
 *
 *	TpSessionWithWindow for the threads threadObj selects (`profiler
 *	report -thread`): "merged" (or NULL), "all", a kernel thread id or
 *	a thread's name as `profiler threads` lists them; without the
 *	samples of threads waiting if hideIdle (-idle hide).
 *
 * Results:
 *	What fn returns, or TCL_ERROR for an unknown thread.
 *
 * Side effects:
 *	Those of fn.
 *
 *----------------------------------------------------------------------
 */

typedef struct ThreadsCtx {
    Tcl_Obj *threadObj;
    int hideIdle;
    int (*fn)(Tcl_Interp *, TpProfile *, void *);
    void *cd;
} ThreadsCtx;

static int
ThreadsFn(
    Tcl_Interp *interp,
    TpProfile *p,
    void *cd)
{
    ThreadsCtx *x = cd;
    TpThreadSel sel;
    TpProfile *w;
    const char *want = x->threadObj ? Tcl_GetString(x->threadObj) : "merged";
    uint32_t i;
    int code, needCopy = 0;

    memset(&sel, 0, sizeof(sel));
    if (strcmp(want, "merged") == 0) {
	/*
	 * Only samples of a thread that never ran Tcl leave the merged
	 * tree, and a copy of the profile (as big as the profile) is
	 * made only if there are some: a thread named but never sampled,
	 * such as a helper that has since exited, does not count.
	 */

	sel.how = TP_THREADS_MERGED;
	for (i = 0; i < p->nThreads && !needCopy; i++) {
	    uint32_t k;

	    if (TpThreadNameIsTcl(p->threads[i].name)) {
		continue;
	    }
	    for (k = 0; k < p->nStacks && !needCopy; k++) {
		needCopy = p->stacks[k].tid == p->threads[i].tid
			&& p->stacks[k].count != 0;
	    }
	}
    } else if (strcmp(want, "all") == 0) {
	sel.how = TP_THREADS_ALL;
	needCopy = 1;
    } else {
	Tcl_WideInt tid;
	int found = 0;

	sel.how = TP_THREADS_ONE;
	needCopy = 1;
	for (i = 0; i < p->nThreads && !found; i++) {
	    if (strcmp(p->threads[i].name, want) == 0) {
		sel.tid = p->threads[i].tid;
		found = 1;
	    }
	}
	if (!found && Tcl_GetWideIntFromObj(NULL, x->threadObj, &tid)
		== TCL_OK && tid > 0 && tid <= UINT32_MAX) {
	    for (i = 0; i < p->nStacks && !found; i++) {
		found = p->stacks[i].tid == (uint32_t) tid;
	    }
	    sel.tid = (uint32_t) tid;
	}
	if (!found) {
	    TpSetError(interp, "VALUE", "THREAD", "bad value \"%s\" for "
		    "-thread: must be merged, all, or a thread's id or name "
		    "as profiler threads lists them", want);
	    return TCL_ERROR;
	}
    }
    sel.hideIdle = x->hideIdle;
    if (!needCopy && !sel.hideIdle) {
	return x->fn(interp, p, x->cd);
    }
    w = TpProfileThreads(p, &sel);
    code = x->fn(interp, w, x->cd);
    TpProfileWindowFree(p, w);
    return code;
}

int
TpSessionWithThreads(
    Tcl_Interp *interp,
    uint64_t lastNs,
    Tcl_Obj *threadObj,
    int hideIdle,
    int (*fn)(Tcl_Interp *, TpProfile *, void *),
    void *cd)
{
    ThreadsCtx x;

    x.threadObj = threadObj;
    x.hideIdle = hideIdle;
    x.fn = fn;
    x.cd = cd;
    return TpSessionWithWindow(interp, lastNs, ThreadsFn, &x);
}

/*
 *----------------------------------------------------------------------
 *
 * TpSessionThreadList --
 *
 *	`profiler threads`: {id name samples} for every thread sampled, in
 *	the order they were first named (the run's own thread first).
 *
 * Results:
 *	TCL_OK; the list is the interp's result.
 *
 * Side effects:
 *	Drains the ring.
 *
 *----------------------------------------------------------------------
 */

static int
ThreadListFn(
    Tcl_Interp *interp,
    TpProfile *p,
    void *cd)
{
    Tcl_Obj *list = Tcl_NewObj();
    uint32_t i, k;

    (void) cd;
    for (i = 0; i < p->nThreads; i++) {
	uint64_t n = 0;
	Tcl_Obj *row[3];

	for (k = 0; k < p->nStacks; k++) {
	    if (p->stacks[k].tid == p->threads[i].tid) {
		n += p->stacks[k].count;
	    }
	}
	if (n == 0) {
	    continue;
	}
	row[0] = Tcl_NewWideIntObj((Tcl_WideInt) p->threads[i].tid);
	row[1] = Tcl_NewStringObj(p->threads[i].name, -1);
	row[2] = Tcl_NewWideIntObj((Tcl_WideInt) n);
	Tcl_ListObjAppendElement(NULL, list, Tcl_NewListObj(3, row));
    }
    Tcl_SetObjResult(interp, list);
    return TCL_OK;
}

int
TpSessionThreadList(
    Tcl_Interp *interp)
{
    return TpSessionWithWindow(interp, 0, ThreadListFn, NULL);
}

/*
 *----------------------------------------------------------------------
 *
 * TpSessionStatus --
 *
 *	`profiler status` as a dict.
 *
 * Results:
 *	A new dict object.
 *
 * Side effects:
 *	Drains the ring.
 *
 *----------------------------------------------------------------------
 */

Tcl_Obj *
TpSessionStatus(
    Tcl_Interp *interp)
{
    TpSession *s = GetSession(interp, 1);
    Tcl_Obj *d = Tcl_NewDictObj();
    TpProfile *p;
    uint64_t samples = 0, truncated = 0, unwErr = 0, mism = 0, hSum = 0;
    uint64_t fallback = 0, checkMism = 0, handled = 0;
    uint64_t hMax = 0, dropped, elapsed, ringBytes = 0, ringUsed = 0;
    uint64_t profileBytes, missed, overruns, faults, traceBytes;
    uint64_t logEntries = 0, logStride = 1, nStacks = 0, nNodes = 0;
    uint64_t stackFrames = 0, folded = 0;

#define PUT(k, v) Tcl_DictObjPut(NULL, d, Tcl_NewStringObj((k), -1), (v))
    pthread_mutex_lock(&s->lock);
    DrainLocked(s);
    p = s->profile;
    if (p != NULL && s->opts.keepNs != 0) {
	uint64_t end = s->running ? TpNowNs() : p->lastNs + 1;

	TpProfileTrim(p, end > s->opts.keepNs ? end - s->opts.keepNs : 0, 1);
	p = s->profile = TpProfileCompact(p, end > s->opts.keepNs
		? end - s->opts.keepNs : 0);
    }
    if (p != NULL) {
	samples = p->samples;
	truncated = p->truncated;
	unwErr = p->unwindErrors;
	fallback = p->unwindFallback;
	checkMism = p->unwindCheckMismatch;
	mism = p->mergeMismatch;
	hSum = p->handlerNsSum;
	hMax = p->handlerNsMax;
	handled = p->handled ? p->handled : p->samples;
	logEntries = p->nLog;
	nStacks = p->nStacks;
	nNodes = p->nNodes;
	stackFrames = p->stackFrames;
	folded = p->nFolded;
	logStride = p->logStride > 1 ? p->logStride : 1;
    }
    dropped = s->droppedBase + (s->ringLive ? s->ring.dropped : 0);
    missed = s->missedBase + (s->ringLive ? s->ring.missed : 0);
    overruns = s->overrunsBase + (s->ringLive ? s->ring.overruns : 0);
    faults = s->faultsBase + (s->ringLive ? s->ring.faults : 0);
    if (s->ringLive) {
	int i;

	for (i = 0; i < s->nThreads; i++) {
	    dropped += s->threads[i]->ownRing.dropped;
	    missed += s->threads[i]->ownRing.missed;
	    overruns += s->threads[i]->ownRing.overruns;
	    faults += s->threads[i]->ownRing.faults;
	}
    }
    if (s->ringLive) {
	ringBytes = s->ring.memSize;
	ringUsed = TpRingUsed(&s->ring);
    }
    profileBytes = TpProfileBytes(p);
    traceBytes = s->trace != NULL ? TpTraceBytes(s->trace) : 0;
    elapsed = s->elapsedNs + (s->running ? (s->expiredNs ? s->expiredNs
	    : TpNowNs()) - s->startNs : 0);
    pthread_mutex_unlock(&s->lock);

    PUT("running", Tcl_NewBooleanObj(s->running));
    PUT("mode", Tcl_NewStringObj(modeNames[s->mode], -1));
    PUT("modeReason", Tcl_NewStringObj(s->modeReason, -1));
    PUT("intervalUs", Tcl_NewIntObj(s->opts.intervalUs));
    PUT("clock", Tcl_NewStringObj(clockNames[s->opts.clock], -1));
    PUT("oncpu", Tcl_NewStringObj(s->opts.oncpuTick ? "tick" : "sampler",
	    -1));
    PUT("maxDepth", Tcl_NewIntObj(s->opts.maxDepth));
    PUT("buffer", Tcl_NewIntObj(s->opts.bufferBytes));
    PUT("ringBytes", Tcl_NewWideIntObj((Tcl_WideInt) ringBytes));
    PUT("ringUsedBytes", Tcl_NewWideIntObj((Tcl_WideInt) ringUsed));
    PUT("profileBytes", Tcl_NewWideIntObj((Tcl_WideInt) profileBytes));
    PUT("traceBytes", Tcl_NewWideIntObj((Tcl_WideInt) traceBytes));
    PUT("stacks", Tcl_NewWideIntObj((Tcl_WideInt) nStacks));
    PUT("stackNodes", Tcl_NewWideIntObj((Tcl_WideInt) nNodes));
    PUT("stackFrames", Tcl_NewWideIntObj((Tcl_WideInt) stackFrames));
    PUT("timeline", Tcl_NewIntObj(s->opts.timelineBytes));
    PUT("instances", Tcl_NewIntObj(s->opts.instances));
    PUT("foldedNames", Tcl_NewWideIntObj((Tcl_WideInt) folded));
    PUT("timelineSamples", Tcl_NewWideIntObj((Tcl_WideInt) logEntries));
    PUT("timelineStride", Tcl_NewWideIntObj((Tcl_WideInt) logStride));
    PUT("samples", Tcl_NewWideIntObj((Tcl_WideInt) samples));
    PUT("dropped", Tcl_NewWideIntObj((Tcl_WideInt) dropped));
    PUT("missed", Tcl_NewWideIntObj((Tcl_WideInt) missed));
    PUT("overruns", Tcl_NewWideIntObj((Tcl_WideInt) overruns));
    PUT("faults", Tcl_NewWideIntObj((Tcl_WideInt) faults));
    PUT("deliveredRate", Tcl_NewDoubleObj(samples + missed == 0 ? 1.0
	    : (double) samples / (double) (samples + missed)));
    PUT("truncated", Tcl_NewWideIntObj((Tcl_WideInt) truncated));
    PUT("unwindErrors", Tcl_NewWideIntObj((Tcl_WideInt) unwErr));
    PUT("unwinder", Tcl_NewStringObj(unwinderNames[s->opts.unwinder], -1));
    PUT("unwindFallback", Tcl_NewWideIntObj((Tcl_WideInt) fallback));
    if (s->opts.unwinder == TP_UNWIND_CHECK) {
	PUT("unwindCheckMismatches",
		Tcl_NewWideIntObj((Tcl_WideInt) checkMism));
    }
    PUT("mergeMismatches", Tcl_NewWideIntObj((Tcl_WideInt) mism));
    PUT("handlerNsMax", Tcl_NewWideIntObj((Tcl_WideInt) hMax));
    PUT("handlerNsMean", Tcl_NewWideIntObj((Tcl_WideInt)
	    (handled ? hSum / handled : 0)));
    PUT("elapsedUs", Tcl_NewWideIntObj((Tcl_WideInt) (elapsed / 1000)));
    PUT("keep", Tcl_NewDoubleObj((double) s->opts.keepNs / 1e9));
    {
	Tcl_Obj *sites = Tcl_NewObj();
	const TpUnwindConfig *u = &tpProcess.tramps;
	char root[32], cb[32];
	int i;

	for (i = 0; i < u->nSites; i++) {
	    Dl_info info;
	    uintptr_t ra = u->sites[i].ra;
	    Tcl_Obj *site;

	    TpLocFormat(&u->sites[i].root, root, sizeof(root));
	    TpLocFormat(&u->sites[i].cb, cb, sizeof(cb));
	    if (ra > u->trampLo && ra <= u->trampHi) {
		info.dli_sname = "TclNRRunCallbacks";
		info.dli_saddr = (void *) u->trampLo;
	    } else if (!dladdr((void *) ra, &info) || info.dli_sname == NULL) {
		info.dli_sname = "?";
		info.dli_saddr = (void *) ra;
	    }
	    site = Tcl_ObjPrintf("%s+0x%lx root %s callback %s",
		    info.dli_sname,
		    (unsigned long) (ra - (uintptr_t) info.dli_saddr), root, cb);
	    if (u->sites[i].fnHi > u->sites[i].fnLo) {
		/* An inlined copy: the loop's bytes around the call. */
		Tcl_AppendPrintfToObj(site, " loop -0x%lx +0x%lx",
			(unsigned long) (ra - u->sites[i].fnLo),
			(unsigned long) (u->sites[i].fnHi - ra));
	    }
	    Tcl_ListObjAppendElement(NULL, sites, site);
	}
	PUT("trampolines", sites);
    }
#undef PUT
    return d;
}

/*
 *----------------------------------------------------------------------
 *
 * TpSessionRunning --
 *
 *	Whether the interp's session is sampling.
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
TpSessionRunning(
    Tcl_Interp *interp)
{
    TpSession *s = GetSession(interp, 0);

    return s != NULL && s->running;
}

/*
 *----------------------------------------------------------------------
 *
 * TpSessionSetProfile --
 *
 *	Replaces the interp's profile with p (a profile loaded from a file,
 *	or merged from several): every report and export then reads it.
 *
 * Results:
 *	TCL_OK, or TCL_ERROR while the profiler runs.
 *
 * Side effects:
 *	Frees the previous profile; the session owns p.
 *
 *----------------------------------------------------------------------
 */

int
TpSessionSetProfile(
    Tcl_Interp *interp,
    TpProfile *p)
{
    TpSession *s = GetSession(interp, 1);

    if (s->running) {
	TpSetError(interp, "STATE", "RUNNING",
		"cannot replace the profile while the profiler is running");
	return TCL_ERROR;
    }
    pthread_mutex_lock(&s->lock);
    TpProfileFree(s->profile);
    s->profile = p;
    s->elapsedNs = p->elapsedNs;
    s->droppedBase = p->dropped;
    s->missedBase = 0;
    s->overrunsBase = 0;
    s->faultsBase = 0;
    s->mode = (TpMode) p->mode;
    s->opts.intervalUs = p->intervalUs;
    s->opts.clock = (TpClock) p->clock;
    s->opts.keepNs = 0;	/* A loaded profile is read whole. */
    pthread_mutex_unlock(&s->lock);
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * TpModeName, TpClockName --
 *
 *	Names of modes and clocks, as options and reports spell them.
 *
 * Results:
 *	A static string.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

const char *
TpModeName(
    int mode)
{
    return mode >= 0 && mode <= TP_MODE_TRACE ? modeNames[mode] : "none";
}

const char *
TpClockName(
    int clock)
{
    return clock == TP_CLOCK_CPU ? "cpu" : "wall";
}

/*
 *----------------------------------------------------------------------
 *
 * TpSessionSetTick --
 *
 *	Sets (script non-NULL) or clears the script run every periodNs
 *	while the interp's session samples (`profiler top`).
 *
 * Results:
 *	TCL_OK.
 *
 * Side effects:
 *	Keeps a reference to script.
 *
 *----------------------------------------------------------------------
 */

int
TpSessionSetTick(
    Tcl_Interp *interp,
    Tcl_Obj *script,
    uint64_t periodNs)
{
    TpSession *s = GetSession(interp, 1);
    Tcl_Obj *old;

    if (script != NULL) {
	Tcl_IncrRefCount(script);
    }
    pthread_mutex_lock(&s->lock);
    old = s->tickScript;
    s->tickScript = script;
    s->tickNs = periodNs;
    s->lastTickNs = TpNowNs();
    s->tickPending = 0;
    pthread_mutex_unlock(&s->lock);
    if (old != NULL) {
	Tcl_DecrRefCount(old);
    }
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * PollAsyncProc --
 *
 *	Async handler, on the interp's thread at a command boundary or in
 *	the event loop: writes the dump the dump signal asked for, and runs
 *	the tick script when due. The interp's state is saved around both,
 *	so the interrupted script sees nothing; errors go to stderr.
 *
 * Results:
 *	code, unchanged.
 *
 * Side effects:
 *	Writes the dump file; evaluates the tick script.
 *
 *----------------------------------------------------------------------
 */

static void
PollReport(
    Tcl_Interp *interp,
    const char *what)
{
    Tcl_Channel err = Tcl_GetStdChannel(TCL_STDERR);

    if (err != NULL) {
	Tcl_WriteChars(err, "tclprof: ", -1);
	Tcl_WriteChars(err, what, -1);
	Tcl_WriteChars(err, ": ", -1);
	Tcl_WriteObj(err, Tcl_GetObjResult(interp));
	Tcl_WriteChars(err, "\n", 1);
	Tcl_Flush(err);
    }
}

static int
PollAsyncProc(
    ClientData cd,
    Tcl_Interp *interp,
    int code)
{
    TpSession *s = cd;
    Tcl_InterpState state;

    (void) interp;
    if (s->inPoll || Tcl_InterpDeleted(s->interp)) {
	return code;
    }
    s->inPoll = 1;
    if (s->dumpPending) {
	s->dumpPending = 0;
	state = Tcl_SaveInterpState(s->interp, TCL_OK);
	if (TpSaveFile(s->interp, s->opts.dumpFile, 0) != TCL_OK) {
	    PollReport(s->interp, "cannot write the dump");
	}
	Tcl_RestoreInterpState(s->interp, state);
    }
    if (s->tickPending && s->tickScript != NULL) {
	Tcl_Obj *script = s->tickScript;

	s->tickPending = 0;
	Tcl_IncrRefCount(script);
	state = Tcl_SaveInterpState(s->interp, TCL_OK);
	if (Tcl_EvalObjEx(s->interp, script, TCL_EVAL_GLOBAL) != TCL_OK) {
	    PollReport(s->interp, "live view stopped");
	    TpSessionSetTick(s->interp, NULL, 0);
	}
	Tcl_RestoreInterpState(s->interp, state);
	Tcl_DecrRefCount(script);
    }
    s->inPoll = 0;
    return code;
}

/*
 * ----------------------------------------------------------------------
 * fork.
 *
 * The sampler thread does not exist in a forked child, and a fork taken
 * while it drained would leave the child a session lock that nobody can
 * release. So the atfork handlers (unix/sampler.c) call:
 *   TpSessionForkPrepare: takes tpProcess.lock and the running session's
 *     lock (in that order, as StopLocked does): no drain is half done
 *     when the process is copied;
 *   TpSessionForkParent: releases them;
 *   TpSessionForkChild: re-initializes them (the child's copies were held
 *     by the forking thread) and, when the fork was made by the sampled
 *     thread, flags the session and marks its async handler.
 * The async handler (ForkAsyncProc) runs on the child's interp thread at
 * the next command boundary: it stops the inherited run without joining
 * the missing thread (TpSamplerStop knows), drops the parent's samples
 * (the parent keeps and saves them), and starts a fresh run with the same
 * options, so the child profiles itself from the fork on.
 * ----------------------------------------------------------------------
 */

void
TpSessionForkPrepare(void)
{
    pthread_mutex_lock(&tpProcess.lock);
    if (tpProcess.active != NULL) {
	pthread_mutex_lock(&tpProcess.active->lock);
    }
}

void
TpSessionForkParent(void)
{
    if (tpProcess.active != NULL) {
	pthread_mutex_unlock(&tpProcess.active->lock);
    }
    pthread_mutex_unlock(&tpProcess.lock);
}

void
TpSessionForkChild(void)
{
    TpSession *s = tpProcess.active;

    pthread_mutex_init(&tpProcess.lock, NULL);
    if (s != NULL) {
	pthread_mutex_init(&s->lock, NULL);
	if (pthread_equal(s->thread, pthread_self()) && s->forkAsync != NULL) {
	    s->forked = 1;
	    Tcl_AsyncMark(s->forkAsync);
	}
    }
}

/*
 *----------------------------------------------------------------------
 *
 * ForkAsyncProc --
 *
 *	Async handler: in a forked child, replaces the inherited run by a
 *	fresh one (see above). Elsewhere, does nothing.
 *
 * Results:
 *	code, unchanged.
 *
 * Side effects:
 *	Stops and restarts the session; frees the inherited profile.
 *
 *----------------------------------------------------------------------
 */

static int
ForkAsyncProc(
    ClientData cd,
    Tcl_Interp *interp,
    int code)
{
    TpSession *s = cd;
    TpOptions o;
    Tcl_InterpState state;

    (void) interp;
    if (!s->forked) {
	return code;
    }
    s->forked = 0;
    pthread_mutex_lock(&tpProcess.lock);
    if (!s->running || s->pid == getpid()) {
	pthread_mutex_unlock(&tpProcess.lock);
	return code;
    }
    StopLocked(s);
    pthread_mutex_unlock(&tpProcess.lock);
    pthread_mutex_lock(&s->lock);
    TpProfileFree(s->profile);
    s->profile = NULL;
    s->elapsedNs = 0;
    s->droppedBase = 0;
    s->missedBase = 0;
    s->overrunsBase = 0;
    s->faultsBase = 0;
    pthread_mutex_unlock(&s->lock);
    o = s->opts;
    state = Tcl_SaveInterpState(s->interp, TCL_OK);
    if (TpSessionStart(s->interp, &o) != TCL_OK) {
	Tcl_Channel err = Tcl_GetStdChannel(TCL_STDERR);

	if (err != NULL) {
	    Tcl_WriteChars(err, "tclprof: cannot profile the forked child: ",
		    -1);
	    Tcl_WriteObj(err, Tcl_GetObjResult(s->interp));
	    Tcl_WriteChars(err, "\n", 1);
	}
    }
    Tcl_RestoreInterpState(s->interp, state);
    return code;
}

/*
 *----------------------------------------------------------------------
 *
 * TpSessionExitHandler --
 *
 *	Process exit with the profiler still running: stop the sampler
 *	thread and put the SIGPROF disposition back before Tcl finalizes
 *	(and may unload this library while the thread would still run its
 *	code). Registered once per process by Tclprof_Init; runs after the
 *	exit handlers registered later (e.g. profiler atexit's save).
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	The running session, if any, stops sampling; its data stays.
 *
 *----------------------------------------------------------------------
 */

void
TpSessionExitHandler(
    ClientData cd)
{
    TpSession *s;

    (void) cd;
    pthread_mutex_lock(&tpProcess.lock);
    s = tpProcess.active;
    if (s != NULL && s->pid == getpid()) {
	TpSamplerStop(s->sampler);
	s->sampler = NULL;
	TpSignalQuiesce(s->ts);
	QuiesceThreads(s);
	TpSignalRestore();
	s->running = 0;
	tpProcess.active = NULL;
    }
    pthread_mutex_unlock(&tpProcess.lock);
}
