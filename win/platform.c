/*
 * platform.c --
 *
 *	The Windows sampler. Windows has no SIGPROF: a sampler thread stops
 *	the interp's thread (SuspendThread), reads its registers
 *	(GetThreadContext), walks its C stack with the x64 unwind tables
 *	(TpWinUnwind), copies its Tcl stack with the same code the Unix
 *	signal handler runs (TpInterpCapture, TpTraceCapture), and lets it
 *	go (ResumeThread).
 *
 * The contract of the sampling section (between SuspendThread and
 *	ResumeThread), the signal handler's contract of unix/signal.c:
 *
 *   - No allocation, no Tcl API, no lock: the suspended thread may hold
 *     the heap's lock, the loader's, or any of Tcl's. The unwind tables
 *     are found by a binary search of the mapped images' exception
 *     directories, from a module list made before the thread was
 *     suspended (RtlLookupFunctionEntry is not used there: it may take
 *     a lock for dynamic function tables). RtlVirtualUnwind only reads.
 *   - When the ring is full the sample is dropped and counted.
 *   - A read that faults (the thread was stopped while a structure it
 *     points into was being freed or reused, so a pointer that passes
 *     the checks leads nowhere) is caught by a vectored exception
 *     handler, which jumps back to TakeSample: the sample is dropped
 *     and counted as missed, the thread resumed. Only faults of the
 *     sampler thread inside the section are caught.
 *   - Stop protocol as on Unix: the owner clears ts->active, waits until
 *     ts->inHandler is 0 (TpSignalQuiesce), then touches the ring.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include "tpWin.h"
#include <libunwind.h>
#include <stdlib.h>
#include <string.h>

#define TP_DRAIN_NS	(5 * 1000 * 1000)	/* Drain period. */

/*
 * The thread states, one per thread that ever started a run; the sampler
 * finds its target's by thread id. Guarded by lock; entries are never
 * freed (a state is tiny and lives as long as its thread on Unix too).
 */

static struct {
    pthread_mutex_t lock;
    TpThreadState *states[256];
    int n;
} registry = { PTHREAD_MUTEX_INITIALIZER, {NULL}, 0 };

static __thread TpThreadState *tpThreadState;

/*
 * A module list the sampling section can search without a lock: made by
 * the sampler thread while no thread is suspended.
 */

typedef struct ModRange {
    uintptr_t lo, hi;
} ModRange;

typedef struct ModList {
    ModRange mods[TP_WIN_MAX_MODULES];
    int n;
    int missed;			/* A pc fell outside every module: rescan
				 * after resuming. */
} ModList;

struct TpSampler {
    pthread_t thread;		/* The sampler thread. */
    TpSession *session;
    TpRing *ring;
    TpThreadState *ts;		/* The target's state. */
    HANDLE target;		/* The target thread, opened to suspend. */
    uint64_t startNs;
    uint64_t periodNs;
    TpClock clock;
    uint64_t durationNs;
    int stop;			/* Set by TpSamplerStop (atomic). */
    uint64_t cpuCredit;		/* -clock cpu: the target's CPU time (ns)
				 * not yet given to a sample. */
    uint64_t lastCpu;		/* Its CPU time at the last tick. */
    ModList modList;
};

static int paused;		/* TpSamplerPause (atomic). */

/*
 *----------------------------------------------------------------------
 *
 * TpThreadStateGet, TpWinThreadState --
 *
 *	The calling thread's state, created the first time; the state of a
 *	thread given by id.
 *
 * Results:
 *	The state; TpWinThreadState: NULL if that thread has none.
 *
 * Side effects:
 *	May allocate and register the state.
 *
 *----------------------------------------------------------------------
 */

TpThreadState *
TpThreadStateGet(void)
{
    if (tpThreadState == NULL) {
	TpThreadState *ts = calloc(1, sizeof(TpThreadState));

	if (ts == NULL) {
	    Tcl_Panic("tclprof: out of memory for thread state");
	}
	ts->tid = TpGetTid();
	pthread_mutex_lock(&registry.lock);
	if (registry.n == (int) (sizeof(registry.states) / sizeof(void *))) {
	    pthread_mutex_unlock(&registry.lock);
	    Tcl_Panic("tclprof: too many profiled threads");
	}
	registry.states[registry.n++] = ts;
	pthread_mutex_unlock(&registry.lock);
	tpThreadState = ts;
    }
    return tpThreadState;
}

TpThreadState *
TpWinThreadState(
    uint32_t tid)
{
    TpThreadState *ts = NULL;
    int i;

    pthread_mutex_lock(&registry.lock);
    for (i = registry.n - 1; i >= 0; i--) {
	if (registry.states[i]->tid == tid) {
	    ts = registry.states[i];
	    break;
	}
    }
    pthread_mutex_unlock(&registry.lock);
    return ts;
}

/*
 *----------------------------------------------------------------------
 *
 * TpSignalInstall, TpSignalRestore, TpSignalQuiesce --
 *
 *	No signal to install on Windows. Quiesce is the stop protocol's
 *	first half, as on Unix.
 *
 * Results:
 *	TpSignalInstall: TCL_OK.
 *
 * Side effects:
 *	Quiesce clears ts->active and waits for a sample in progress.
 *
 *----------------------------------------------------------------------
 */

int
TpSignalInstall(
    Tcl_Obj **errPtr)
{
    (void) errPtr;
    return TCL_OK;
}

void
TpSignalRestore(void)
{
}

void
TpSignalQuiesce(
    TpThreadState *ts)
{
    __atomic_store_n(&ts->active, 0, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&ts->inHandler, __ATOMIC_SEQ_CST)) {
	SwitchToThread();
    }
}

/*
 *----------------------------------------------------------------------
 *
 * TpSignalThreadSlot, TpSignalAddThread, TpSignalClearThreads --
 *
 *	The table of other threads' states (-threads all). The Windows
 *	sampler samples the thread that called [profiler start] only: the
 *	table stays empty.
 *
 * Results:
 *	TpSignalThreadSlot: NULL. TpSignalAddThread: 0.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

TpThreadState *
TpSignalThreadSlot(
    int i)
{
    (void) i;
    return NULL;
}

int
TpSignalAddThread(
    TpThreadState *ts)
{
    (void) ts;
    return 0;
}

void
TpSignalClearThreads(void)
{
}

/*
 *----------------------------------------------------------------------
 *
 * TpDumpSignalInstall, TpDumpSignalRestore, TpDumpSignalTake,
 * TpDumpSignalSend --
 *
 *	-dumpsignal on Windows, which has no user signals: a named event
 *	per process and signal name ("Local\tclprof-dump-PID-SIGNO"),
 *	auto-reset, that TpDumpSignalSend sets from another process
 *	(`tclprof dump PID`) and the sampler thread's drain polls (Take).
 *
 * Results:
 *	Install and Send: TCL_OK, or TCL_ERROR with a message in *errPtr.
 *	Take: 1 if the event was set since the last call.
 *
 * Side effects:
 *	Create, close, set or reset the event.
 *
 *----------------------------------------------------------------------
 */

static HANDLE dumpEvent;

static void
DumpEventName(
    char *buf,
    size_t size,
    long pid,
    int signo)
{
    snprintf(buf, size, "Local\\tclprof-dump-%ld-%d", pid, signo);
}

int
TpDumpSignalInstall(
    int signo,
    Tcl_Obj **errPtr)
{
    char name[64];

    DumpEventName(name, sizeof(name), (long) GetCurrentProcessId(), signo);
    dumpEvent = CreateEventA(NULL, FALSE, FALSE, name);
    if (dumpEvent == NULL) {
	*errPtr = Tcl_ObjPrintf("cannot create the dump event %s: error %lu",
		name, (unsigned long) GetLastError());
	return TCL_ERROR;
    }
    ResetEvent(dumpEvent);
    return TCL_OK;
}

void
TpDumpSignalRestore(void)
{
    if (dumpEvent != NULL) {
	CloseHandle(dumpEvent);
	dumpEvent = NULL;
    }
}

int
TpDumpSignalTake(void)
{
    return dumpEvent != NULL
	    && WaitForSingleObject(dumpEvent, 0) == WAIT_OBJECT_0;
}

int
TpDumpSignalSend(
    long pid,
    int signo,
    Tcl_Obj **errPtr)
{
    char name[64];
    HANDLE ev;
    int ok;

    DumpEventName(name, sizeof(name), pid, signo);
    ev = OpenEventA(EVENT_MODIFY_STATE, FALSE, name);
    if (ev == NULL) {
	*errPtr = Tcl_ObjPrintf("cannot signal process %ld: it has no dump"
		" event (is it profiled with that -dumpsignal?)", pid);
	return TCL_ERROR;
    }
    ok = SetEvent(ev);
    CloseHandle(ev);
    if (!ok) {
	*errPtr = Tcl_ObjPrintf("cannot signal process %ld: error %lu", pid,
		(unsigned long) GetLastError());
	return TCL_ERROR;
    }
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * TpUnwindInit, TpUnwindWarm, TpCfiPrepare, TpCfiWarm, TpCfiAtFork,
 * TpCfiStackTop, TpCfiUnwind, TpCfiFrameExtent, TpCfiSameCfa --
 *
 *	The Unix unwinders' set-up entry points. Nothing to prepare here:
 *	the unwind tables are mapped with each image. TpCfiStackTop gives
 *	the calling thread's stack top from its TEB. The frame-layout
 *	queries of calibration answer "unknown" (calibration then keeps its
 *	fixed window around an inlined loop, and trusts TclNRRunCallbacks'
 *	root register wherever the function is interrupted).
 *
 * Results:
 *	See each.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

int
TpUnwindInit(void)
{
    return 0;
}

void
TpUnwindWarm(void)
{
}

void
TpCfiPrepare(
    int all)
{
    (void) all;
}

void
TpCfiWarm(void)
{
}

void
TpCfiAtFork(
    int prepare)
{
    (void) prepare;
}

int
TpCfiFrameExtent(
    uintptr_t pc,
    uintptr_t *loPtr,
    uintptr_t *hiPtr)
{
    (void) pc; (void) loPtr; (void) hiPtr;
    return 0;
}

int
TpCfiSameCfa(
    uintptr_t ref,
    uintptr_t lo,
    uintptr_t hi,
    uintptr_t *ranges,
    int max)
{
    (void) ref; (void) lo; (void) hi; (void) ranges; (void) max;
    return 0;
}

uintptr_t
TpCfiStackTop(void)
{
    ULONG_PTR lo, hi;

    GetCurrentThreadStackLimits(&lo, &hi);
    return (uintptr_t) hi;
}

int
TpCfiUnwind(
    const TpUnwindConfig *cfg,
    void *ucontext,
    const TpRing *ring,
    TpSlot *slot)
{
    (void) cfg; (void) ucontext; (void) ring; (void) slot;
    return -1;
}

/*
 *----------------------------------------------------------------------
 *
 * ScanModules, FindModule --
 *
 *	Make the lock-free module list; find the image holding a pc.
 *
 * Results:
 *	FindModule: the image's base, or 0.
 *
 * Side effects:
 *	ScanModules takes the loader's lock (never in the sampling
 *	section).
 *
 *----------------------------------------------------------------------
 */

static int
CompareRange(
    const void *a,
    const void *b)
{
    const ModRange *x = a, *y = b;

    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void
ScanModules(
    ModList *ml)
{
    HMODULE mods[TP_WIN_MAX_MODULES];
    int n = TpWinModules(mods, TP_WIN_MAX_MODULES), i;

    for (i = 0; i < n; i++) {
	ml->mods[i].lo = (uintptr_t) mods[i];
	ml->mods[i].hi = (uintptr_t) mods[i] + TpWinImageSize(mods[i]);
    }
    qsort(ml->mods, (size_t) n, sizeof(ModRange), CompareRange);
    ml->n = n;
    ml->missed = 0;
}

static uintptr_t
FindModule(
    ModList *ml,
    uintptr_t pc)
{
    int a = 0, b = ml->n, mid;

    while (a < b) {
	mid = (a + b) / 2;
	if (ml->mods[mid].lo <= pc) {
	    a = mid + 1;
	} else {
	    b = mid;
	}
    }
    if (a == 0 || pc >= ml->mods[a - 1].hi) {
	ml->missed = 1;
	return 0;
    }
    return ml->mods[a - 1].lo;
}

/*
 *----------------------------------------------------------------------
 *
 * ReadLoc --
 *
 *	A trampoline frame's value at a calibrated location (a register
 *	of the unwound context, or a word of its frame).
 *
 * Results:
 *	The value, or TP_ROOT_UNKNOWN.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static uintptr_t
ReadLoc(
    CONTEXT *c,
    const TpValueLoc *loc,
    uintptr_t lo,
    uintptr_t hi)
{
    uintptr_t sp = c->Rsp;

    if (loc->kind == TP_LOC_REG) {
	uint64_t *p = TpCompatContextReg(c, loc->reg);

	return p != NULL ? (uintptr_t) *p : TP_ROOT_UNKNOWN;
    }
    if (loc->kind == TP_LOC_STACK && sp + loc->off >= lo
	    && sp + loc->off + 8 <= hi && ((sp + loc->off) & 7) == 0) {
	return *(const uintptr_t *) (sp + loc->off);
    }
    return TP_ROOT_UNKNOWN;
}

/*
 *----------------------------------------------------------------------
 *
 * TpWinUnwind --
 *
 *	Fills the slot's pc[] (interrupted frame first) and tramp[] from
 *	the suspended thread's context.
 *
 * Results:
 *	1, or 0 if the interrupted pc lies in no module (the sample is to
 *	be given up).
 *
 * Side effects:
 *	Writes nPc, nTramp and the CTRUNC and UNWERR flags; *c is unwound.
 *
 * Sampling section:
 *	No lock, no allocation; bounded by maxPc.
 *
 *----------------------------------------------------------------------
 */

static int
TpWinUnwind(
    const TpUnwindConfig *cfg,
    CONTEXT *c,
    ModList *ml,
    const TpRing *ring,
    TpSlot *slot)
{
    uintptr_t *pcs = TpSlotPcs(ring, slot);
    TpTramp *tramps = TpSlotTramps(ring, slot);
    uintptr_t lo = c->Rsp, hi = cfg->stackHi, base;
    int n = 0, nTramp = 0, sure;
    const TpTrampSite *site;

    if (hi == 0 || lo >= hi) {
	slot->flags |= TP_SLOT_UNWERR;
	return 1;
    }
    for (;;) {
	/*
	 * Code lies in the images: a pc in none of them is not a place
	 * the thread was. wine, stopping a thread inside its own system
	 * call machinery, gives contexts whose pc and return addresses
	 * point into the heap. At the leaf the whole context is suspect:
	 * the sample is given up. Above it the walk stops there
	 * (TP_SLOT_UNWERR; the merge then flags what it cannot place).
	 * Scanning on for a word that lies in an image was tried: it
	 * resumed at stale return addresses and skipped live frames,
	 * making wrong samples where stopping makes flagged ones. A
	 * library loaded since the module list was made misses once: the
	 * list is made again after the thread is resumed.
	 */

	base = FindModule(ml, c->Rip);
	if (base == 0) {
	    if (n == 0) {
		return 0;
	    }
	    slot->flags |= TP_SLOT_UNWERR;
	    break;
	}
	pcs[n] = c->Rip;
	site = TpTrampFind(cfg, c->Rip, n, &sure);
	if (site != NULL && nTramp < TP_MAX_TRAMP) {
	    tramps[nTramp].index = (uint32_t) n;
	    tramps[nTramp].spare = sure ? TP_TRAMP_SURE : 0;
	    tramps[nTramp].sp = c->Rsp;
	    tramps[nTramp].root = ReadLoc(c, site == TP_TRAMP_FN
		    ? &cfg->fnRoot : &site->root, lo, hi);
	    tramps[nTramp].cb = !sure ? 0 : ReadLoc(c, &site->cb, lo, hi);
	    if (tramps[nTramp].cb == TP_ROOT_UNKNOWN) {
		tramps[nTramp].cb = 0;
	    }
	    nTramp++;
	}
	if (++n == (int) ring->maxPc) {
	    slot->flags |= TP_SLOT_CTRUNC;
	    break;
	}
	if (!TpWinStep(c, base, lo, hi)) {
	    break;
	}
    }
    slot->nPc = (uint16_t) n;
    slot->nTramp = (uint16_t) nTramp;
    return 1;
}

/*
 * TpUnwindSignal is the Unix handler's; on Windows the sampler thread
 * unwinds (TpWinUnwind). Present for the symbols' sake only.
 */

void
TpUnwindSignal(
    const TpUnwindConfig *cfg,
    void *ucontext,
    const TpRing *ring,
    TpSlot *slot)
{
    (void) cfg; (void) ucontext; (void) ring;
    slot->flags |= TP_SLOT_UNWERR;
}

/*
 * The sampling section's fault guard (see the contract at the top). One
 * sampler thread runs at a time: the state is global. TCLPROF_TEST_FAULTS
 * (a number, read at start) makes that many samples read an unmapped
 * address, so that the tests can check the guard.
 */

static struct {
    volatile DWORD thread;	/* The sampler thread inside the section,
				 * else 0. */
    void *jump[5];		/* __builtin_setjmp's buffer. */
    PVOID handler;		/* The vectored handler, added once. */
    volatile int testFaults;	/* Faults still to make (tests). */
} guard;

static LONG CALLBACK
GuardFault(
    PEXCEPTION_POINTERS ep)
{
    if (ep->ExceptionRecord->ExceptionCode == EXCEPTION_ACCESS_VIOLATION
	    && guard.thread != 0 && guard.thread == GetCurrentThreadId()) {
	guard.thread = 0;
	__builtin_longjmp(guard.jump, 1);
    }
    return EXCEPTION_CONTINUE_SEARCH;
}

/*
 *----------------------------------------------------------------------
 *
 * TakeSample --
 *
 *	One sample of the target thread: suspend, capture, resume.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Publishes a record in the ring, or counts a drop.
 *
 *----------------------------------------------------------------------
 */

static void
TakeSample(
    TpSampler *sp,
    uint32_t weight)
{
    TpThreadState *ts = sp->ts;
    CONTEXT ctx;
    TpSlot *slot;
    uint64_t t0, dt, w;

    if (!__atomic_load_n(&ts->active, __ATOMIC_ACQUIRE)) {
	return;
    }
    __atomic_store_n(&ts->inHandler, 1, __ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&ts->active, __ATOMIC_SEQ_CST)) {
	goto done;
    }
    if (SuspendThread(sp->target) == (DWORD) -1) {
	goto done;
    }
    memset(&ctx, 0, sizeof(ctx));
    ctx.ContextFlags = CONTEXT_FULL;
    if (!GetThreadContext(sp->target, &ctx)) {
	ResumeThread(sp->target);
	goto done;
    }

    /*
     * The sampling section: see the contract at the top of the file.
     */

    if (__builtin_setjmp(guard.jump)) {
	/* A read faulted: this sample is dropped (not committed). */
	ts->ring->faults++;
	__atomic_add_fetch(&ts->ring->missed, weight, __ATOMIC_ACQ_REL);
	ResumeThread(sp->target);
	goto done;
    }
    guard.thread = GetCurrentThreadId();
    t0 = TpNowNs();
    slot = TpRingReserve(ts->ring);
    if (slot != NULL && guard.testFaults > 0) {
	volatile uintptr_t unmapped = 16;

	guard.testFaults--;
	(void) *(volatile int *) unmapped;
    }
    if (slot != NULL) {
	slot->timeNs = t0;
	slot->tid = ts->tid;
	slot->mode = (uint16_t) ts->mode;
	slot->weight = weight;
	w = __atomic_exchange_n(&ts->ring->pending, 0, __ATOMIC_ACQ_REL);
	if (w > 1) {
	    ts->ring->missed += w - 1;
	}
	if (!TpWinUnwind(&ts->unwind, &ctx, &sp->modList, ts->ring, slot)) {
	    /* Given up as a fault is: not committed, its ticks missed. */
	    ts->ring->faults++;
	    __atomic_add_fetch(&ts->ring->missed, weight, __ATOMIC_ACQ_REL);
	    guard.thread = 0;
	    ResumeThread(sp->target);
	    goto done;
	}
	if (ts->mode == TP_MODE_FRAMES) {
	    TpInterpCapture(ts->interp, ts->ring, slot);
	} else if (ts->mode == TP_MODE_TRACE && ts->trace != NULL) {
	    TpTraceCapture(ts->trace, ts->interp, ts->ring, slot);
	}
	dt = TpNowNs() - t0;
	slot->handlerNs = (uint32_t) (dt > UINT32_MAX ? UINT32_MAX : dt);
	TpRingCommit(ts->ring);
    }
    guard.thread = 0;
    ResumeThread(sp->target);
  done:
    __atomic_store_n(&ts->inHandler, 0, __ATOMIC_RELEASE);
    if (sp->modList.missed) {
	ScanModules(&sp->modList);	/* A library loaded since. */
    }
}

/*
 *----------------------------------------------------------------------
 *
 * SleepNs --
 *
 *	Sleeps for about ns nanoseconds: NtDelayExecution, whose unit is
 *	100 ns (Sleep's is 1 ms, which at the default 999 us interval
 *	would lose about one tick in six). Windows rounds it to the timer
 *	resolution, 1 ms after timeBeginPeriod(1); wine keeps it finer.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Sleeps.
 *
 *----------------------------------------------------------------------
 */

typedef LONG (NTAPI *NtDelayExecutionProc)(BOOLEAN alertable,
	PLARGE_INTEGER interval);

static void
SleepNs(
    uint64_t ns)
{
    static NtDelayExecutionProc delay;	/* Found once; a pointer store is
					 * atomic, any thread finds the same
					 * value. */
    LARGE_INTEGER interval;

    if (delay == NULL) {
	delay = (NtDelayExecutionProc) (void (*)(void)) GetProcAddress(
		GetModuleHandleA("ntdll.dll"), "NtDelayExecution");
    }
    if (delay == NULL) {
	Sleep((DWORD) (ns / 1000000u));
	return;
    }
    interval.QuadPart = -(LONGLONG) (ns / 100u);	/* Relative. */
    delay(FALSE, &interval);
}

/*
 *----------------------------------------------------------------------
 *
 * ThreadCpuNs --
 *
 *	A thread's CPU time, user and kernel.
 *
 * Results:
 *	Nanoseconds (0 if unknown).
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static uint64_t
ThreadCpuNs(
    HANDLE thread)
{
    FILETIME c, e, k, u;

    if (!GetThreadTimes(thread, &c, &e, &k, &u)) {
	return 0;
    }
    return ((((uint64_t) k.dwHighDateTime << 32) | k.dwLowDateTime)
	    + (((uint64_t) u.dwHighDateTime << 32) | u.dwLowDateTime)) * 100;
}

/*
 *----------------------------------------------------------------------
 *
 * SamplerMain --
 *
 *	The sampler thread: one sample per interval (wall clock), or per
 *	interval in which the target ran (-clock cpu: its cycle counter
 *	moved), and a drain every few milliseconds.
 *
 * Results:
 *	NULL.
 *
 * Side effects:
 *	Samples, drains; calls TpSessionExpired after -duration.
 *
 *----------------------------------------------------------------------
 */

static void *
SamplerMain(
    void *arg)
{
    TpSampler *sp = arg;
    uint64_t next, now, lastDrain, start;
    int expired = 0;

    SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_HIGHEST);
    timeBeginPeriod(1);
    ScanModules(&sp->modList);
    start = next = sp->startNs;
    lastDrain = TpNowNs();
    while (!__atomic_load_n(&sp->stop, __ATOMIC_ACQUIRE)) {
	uint64_t ticks = 1;

	next += sp->periodNs;

	/*
	 * In steps of at most 10 ms, so that profiler stop never waits for
	 * a long -interval's next deadline.
	 */

	while ((now = TpNowNs()) < next
		&& !__atomic_load_n(&sp->stop, __ATOMIC_ACQUIRE)) {
	    SleepNs(next - now < 10000000u ? next - now : 10000000u);
	}
	if (__atomic_load_n(&sp->stop, __ATOMIC_ACQUIRE)) {
	    break;
	}
	now = TpNowNs();

	/*
	 * Woken late: the deadlines passed since are ticks too, counted
	 * as missed by the sample that takes them (as on Unix).
	 */

	if (now > next + sp->periodNs) {
	    ticks += (now - next) / sp->periodNs;
	    next += (ticks - 1) * sp->periodNs;
	}
	if (!expired && !__atomic_load_n(&paused, __ATOMIC_ACQUIRE)) {
	    if (sp->clock == TP_CLOCK_CPU) {
		/*
		 * The thread's CPU time advances by the scheduler's tick
		 * (10-16 ms): a sample when at least one interval of it
		 * accrued, weighing the intervals it stands for (as the
		 * Unix CPU timer's overruns do).
		 */

		uint64_t cpu = ThreadCpuNs(sp->target);

		sp->cpuCredit += cpu > sp->lastCpu ? cpu - sp->lastCpu : 0;
		sp->lastCpu = cpu;
		if (sp->cpuCredit >= sp->periodNs) {
		    uint64_t n = sp->cpuCredit / sp->periodNs;

		    sp->cpuCredit -= n * sp->periodNs;
		    TakeSample(sp, (uint32_t) (n > UINT32_MAX ? UINT32_MAX : n));
		}
	    } else {
		__atomic_add_fetch(&sp->ring->pending, ticks, __ATOMIC_ACQ_REL);
		TakeSample(sp, 1);
	    }
	}
	if (sp->durationNs != 0 && !expired && now - start >= sp->durationNs) {
	    expired = 1;
	    TpSessionExpired(sp->session, now);
	}
	if (now > next + 4 * sp->periodNs) {
	    next = now;
	}
	if (now - lastDrain >= TP_DRAIN_NS) {
	    TpSessionDrain(sp->session);
	    lastDrain = now;
	}
    }
    timeEndPeriod(1);
    return NULL;
}

/*
 *----------------------------------------------------------------------
 *
 * TpSamplerStart, TpSamplerStop, TpSamplerPause --
 *
 *	Start the sampler thread for the thread tid; stop and free it;
 *	pause sampling.
 *
 * Results:
 *	Start: the sampler, or NULL with a message in *errPtr.
 *
 * Side effects:
 *	Start opens the target thread and creates a thread.
 *
 *----------------------------------------------------------------------
 */

TpSampler *
TpSamplerStart(
    TpSession *s,
    TpRing *ring,
    pthread_t target,
    uint32_t tid,
    const TpOptions *o,
    Tcl_Obj **errPtr)
{
    TpSampler *sp = calloc(1, sizeof(TpSampler));
    int err;

    (void) target;
    if (sp == NULL) {
	*errPtr = Tcl_NewStringObj("out of memory", -1);
	return NULL;
    }
    sp->session = s;
    sp->ring = ring;
    sp->ts = TpWinThreadState(tid);
    sp->periodNs = (uint64_t) o->intervalUs * 1000u;
    sp->clock = o->clock;
    sp->durationNs = o->durationNs;
    sp->target = OpenThread(THREAD_SUSPEND_RESUME | THREAD_GET_CONTEXT
	    | THREAD_QUERY_INFORMATION, FALSE, tid);
    if (sp->ts == NULL || sp->target == NULL) {
	*errPtr = Tcl_ObjPrintf("cannot open thread %u to sample it (error %lu)",
		(unsigned) tid, (unsigned long) GetLastError());
	if (sp->target != NULL) {
	    CloseHandle(sp->target);
	}
	free(sp);
	return NULL;
    }
    if (sp->clock == TP_CLOCK_CPU) {
	sp->lastCpu = ThreadCpuNs(sp->target);
    }
    if (guard.handler == NULL) {
	guard.handler = AddVectoredExceptionHandler(1, GuardFault);
    }
    {
	const char *n = getenv("TCLPROF_TEST_FAULTS");

	guard.testFaults = n != NULL ? atoi(n) : 0;
    }
    sp->startNs = TpNowNs();
    err = pthread_create(&sp->thread, NULL, SamplerMain, sp);
    if (err != 0) {
	*errPtr = Tcl_ObjPrintf("cannot start the sampler thread: %s",
		strerror(err));
	CloseHandle(sp->target);
	free(sp);
	return NULL;
    }
    return sp;
}

/*
 * -oncpu tick is Linux's: here the sampler thread suspends the thread at
 * every interval, running or not.
 */

int
TpSamplerOncpuTick(
    const TpSampler *sp)
{
    (void) sp;
    return 0;
}

void
TpSamplerStop(
    TpSampler *sp)
{
    if (sp == NULL) {
	return;
    }
    __atomic_store_n(&sp->stop, 1, __ATOMIC_RELEASE);
    pthread_join(sp->thread, NULL);
    CloseHandle(sp->target);
    free(sp);
}

void
TpSamplerPause(
    int pause)
{
    __atomic_store_n(&paused, pause, __ATOMIC_RELEASE);
}
