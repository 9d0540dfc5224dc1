/*
 * signal.c --
 *
 *	The SIGPROF handler and its installation.
 *
 * The handler's contract (read before changing anything it calls):
 *
 *   - Only async-signal-safe work: no Tcl API, no malloc, no stdio, no
 *     locks, no Tcl_Obj reference counts. It reads the interpreter's
 *     structures and copies bytes into preallocated memory, nothing else.
 *   - errno is saved on entry and restored on exit: the interrupted code
 *     may be between a failing system call and its errno check.
 *   - Re-entry is refused (a per-thread guard), never waited for.
 *   - When the ring is full the sample is dropped and counted; the handler
 *     never waits for the drain.
 *   - A fault while it follows the program's pointers (GuardedCapture)
 *     comes back to it through FaultHandler: the sample is given up and
 *     counted. Every other SIGSEGV and SIGBUS goes on to the handler that
 *     was installed before, or gets the default action.
 *   - Stop protocol: the owner clears ts->active, makes sure no handler
 *     runs (TpSignalQuiesce), and only then touches the ring or the trace.
 *   - A thread other than the one that started the run (-threads all)
 *     has no state of its own in TLS: the handler finds it by kernel
 *     thread id in a table the sampler thread appends to (a store of the
 *     entry, then a release store of the count). The states it points to
 *     are never freed, only reused by later runs once quiesced, so a
 *     handler that read a stale entry finds it inactive.
 *
 *	The handler is installed with SA_RESTART (DESIGN.md: without it a
 *	blocking socket read fails with "interrupted system call" within a
 *	millisecond, because Tcl does not retry recv on EINTR) and SA_SIGINFO
 *	(the ucontext is where the unwind starts).
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/*
 * The per-thread state, reached by one initial-exec TLS pointer: reading
 * it in the handler is a single load, with no call into the dynamic
 * loader (which a general-dynamic TLS access can make).
 */

static __thread TpThreadState *tpThreadState
	__attribute__((tls_model("initial-exec")));

/*
 * Process-wide signal state: the disposition we replaced. Written only
 * by TpSignalInstall and TpSignalRestore, which the session calls under
 * its process lock.
 */

static struct {
    int installed;		/* Our handler is the current one. */
    struct sigaction previous;	/* Disposition to restore. */
} signalState;

/*
 * The other threads' states (-threads all). The sampler thread (holding
 * the session lock) fills slots and appends them to list; the handler
 * reads list up to n. Cleared by the session after quiescing every one.
 */

static struct {
    TpThreadState slots[TP_MAX_THREADS];	/* Reused, never freed. */
    TpThreadState *list[TP_MAX_THREADS];
    int n;				/* Entries of list published. */
} sigThreads;

/*
 * The fault guard: SIGSEGV and SIGBUS handlers installed with the SIGPROF
 * one. A fault while a thread's faultGuard is set (the handler reading
 * the program's memory) jumps back into the handler, which gives up that
 * sample. Any other fault goes to the disposition found at install time:
 * the previous handler is called, or the default action is put back and
 * the faulting instruction runs again. TCLPROF_TEST_FAULTS (a number,
 * read at install) makes that many samples read an unmapped address, so
 * that the tests can check the guard. TCLPROF_TEST_SKIPTRAMP=1 makes each
 * C walk with two trampolines or more skip from the leaf to the second
 * (SkipTrampoline), as a walk misled by a bad context would, so that the
 * tests can check what the merge makes of it.
 */

static struct {
    struct sigaction segv;	/* The dispositions to chain to and to */
    struct sigaction bus;	/* restore. */
    volatile int testFaults;	/* Faults still to make (tests). */
    volatile int testSkip;	/* Tests: TCLPROF_TEST_SKIPTRAMP. */
} faultState;

/*
 * Set while FaultHandler runs the previous handler: one that chains back
 * to ours (it was installed after ours, and ours again after it) gets the
 * default action instead of a loop.
 */

static __thread int faultChaining __attribute__((tls_model("initial-exec")));

static void ProfHandler(int sig, siginfo_t *info, void *ucontext);
static void FaultHandler(int sig, siginfo_t *info, void *ucontext);

/*
 *----------------------------------------------------------------------
 *
 * TpThreadStateGet --
 *
 *	Returns the calling thread's state, creating it the first time.
 *
 * Results:
 *	The state (never NULL; allocation failure panics like ckalloc).
 *
 * Side effects:
 *	May allocate. The state lives as long as the thread; it is tiny.
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
	tpThreadState = ts;
    }
    return tpThreadState;
}

/*
 *----------------------------------------------------------------------
 *
 * TpSignalThreadSlot, TpSignalAddThread, TpSignalClearThreads --
 *
 *	The table of other threads' states: slot i to fill (its previous
 *	run must be quiesced), publishing a filled one to the handler, and
 *	emptying the table once every state in it is quiesced.
 *
 * Results:
 *	TpSignalThreadSlot: the slot, or NULL past the table's end.
 *	TpSignalAddThread: 1, or 0 if the table is full.
 *
 * Side effects:
 *	Change the table the handler reads.
 *
 *----------------------------------------------------------------------
 */

TpThreadState *
TpSignalThreadSlot(
    int i)
{
    return (i >= 0 && i < TP_MAX_THREADS) ? &sigThreads.slots[i] : NULL;
}

int
TpSignalAddThread(
    TpThreadState *ts)
{
    int n = __atomic_load_n(&sigThreads.n, __ATOMIC_ACQUIRE);

    if (n >= TP_MAX_THREADS) {
	return 0;
    }
    sigThreads.list[n] = ts;
    __atomic_store_n(&sigThreads.n, n + 1, __ATOMIC_RELEASE);
    return 1;
}

void
TpSignalClearThreads(void)
{
    __atomic_store_n(&sigThreads.n, 0, __ATOMIC_RELEASE);
}

/*
 *----------------------------------------------------------------------
 *
 * FindThread --
 *
 *	The state of the calling thread in the table of other threads.
 *
 * Results:
 *	The state, or NULL.
 *
 * Side effects:
 *	None.
 *
 * Signal safety:
 *	Safe: one system call (gettid) and loads.
 *
 *----------------------------------------------------------------------
 */

static TpThreadState *
FindThread(void)
{
    int n = __atomic_load_n(&sigThreads.n, __ATOMIC_ACQUIRE), i;
    uint32_t tid = TpGetTid();

    for (i = n - 1; i >= 0; i--) {
	TpThreadState *ts = sigThreads.list[i];

	if (ts->tid == tid && !ts->gone) {
	    return ts;
	}
    }
    return NULL;
}

/*
 *----------------------------------------------------------------------
 *
 * ForeignInterp --
 *
 *	The interp whose Tcl stack a foreign thread's sample shows: the one
 *	its outermost trampoline runs, read at a calibrated callback call
 *	where it is live (the interp cannot be deleted under its own
 *	evaluation). ActiveInterps (interp.c) adds its evaluating children.
 *
 * Results:
 *	The interp, or NULL if no trampoline said.
 *
 * Side effects:
 *	None.
 *
 * Signal safety:
 *	Safe: reads the slot.
 *
 *----------------------------------------------------------------------
 */

static Tcl_Interp *
ForeignInterp(
    const TpRing *ring,
    TpSlot *slot)
{
    TpTramp *tramps = TpSlotTramps(ring, slot);
    int i;

    for (i = (int) slot->nTramp - 1; i >= 0; i--) {
	uintptr_t ip = tramps[i].interp;

	if (ip >= 4096 && (ip & (sizeof(void *) - 1)) == 0) {
	    return (Tcl_Interp *) ip;
	}
    }
    return NULL;
}

/*
 *----------------------------------------------------------------------
 *
 * TickWeight --
 *
 *	The ticks this signal stands for. A CPU clock timer's: 1 + its
 *	overrun count (expiries while the signal waited). The wall-clock
 *	sampler's: every signal it sent since the last one taken, which
 *	merged while the thread could not take them (it waited for a CPU,
 *	or had SIGPROF blocked), so the sample taken now, where the thread
 *	was all that time, stands for them.
 *
 * Results:
 *	At least 1.
 *
 * Side effects:
 *	Takes the ring's pending count, or adds a timer's ticks to its
 *	timerTicks.
 *
 * Signal safety:
 *	Called from the handler: atomics only.
 *
 *----------------------------------------------------------------------
 */

static uint64_t
TickWeight(
    TpRing *ring,
    const siginfo_t *info)
{
    uint64_t w = 1;

    if (info != NULL && info->si_code == SI_TIMER) {
	if (info->si_overrun > 0) {
	    w += (uint64_t) info->si_overrun;
	}
	__atomic_add_fetch(&ring->timerTicks, w, __ATOMIC_ACQ_REL);
    } else {
	uint64_t sent = __atomic_exchange_n(&ring->pending, 0,
		__ATOMIC_ACQ_REL);

	if (sent > 1) {
	    w = sent;
	}
    }
    return w;
}

/*
 *----------------------------------------------------------------------
 *
 * SkipTrampoline --
 *
 *	Tests only (TCLPROF_TEST_SKIPTRAMP): drops the C frames between the
 *	leaf and the second trampoline, the innermost trampoline among
 *	them.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Rewrites the slot's pc[] and tramp[].
 *
 * Signal safety:
 *	Called from the handler: stores only.
 *
 *----------------------------------------------------------------------
 */

static void
SkipTrampoline(
    const TpRing *ring,
    TpSlot *slot)
{
    uintptr_t *pcs = TpSlotPcs(ring, slot);
    TpTramp *tramps = TpSlotTramps(ring, slot);
    uint32_t skip, i;

    if (slot->nTramp < 2 || tramps[1].index < 2) {
	return;
    }
    skip = tramps[1].index - 1;
    for (i = 1; i + skip < slot->nPc; i++) {
	pcs[i] = pcs[i + skip];
    }
    slot->nPc = (uint16_t) (slot->nPc - skip);
    for (i = 0; i + 1 < slot->nTramp; i++) {
	tramps[i] = tramps[i + 1];
	tramps[i].index -= skip;
    }
    slot->nTramp--;
}

/*
 *----------------------------------------------------------------------
 *
 * GuardedCapture --
 *
 *	The part of a sample that follows the program's pointers: the Tcl
 *	stack (the interp's frames and objects in frames mode, the shadow
 *	stack's in trace mode). A read that faults (a structure freed and
 *	unmapped under a pointer that passed every check) comes back here
 *	through FaultHandler, and the program goes on. Nothing called here
 *	takes a lock, so none is left held. The C stack's unwind is not
 *	guarded: it reads only between the stack pointer and the stack's
 *	end, and libunwind's fallback may hold the loader's lock, which a
 *	jump out of it would leave held.
 *
 * Results:
 *	1 if the slot holds the sample; 0 if a read faulted.
 *
 * Side effects:
 *	Fills the slot.
 *
 * Signal safety:
 *	Called from the handler; sigsetjmp without the signal mask is a
 *	few stores.
 *
 *----------------------------------------------------------------------
 */

static int __attribute__((noinline))
GuardedCapture(
    TpThreadState *ts,
    TpSlot *slot)
{
    if (sigsetjmp(ts->faultJmp, 0) != 0) {
	__atomic_store_n(&ts->faultGuard, 0, __ATOMIC_SEQ_CST);
	return 0;
    }
    __atomic_store_n(&ts->faultGuard, 1, __ATOMIC_SEQ_CST);
    if (faultState.testFaults > 0 && __atomic_sub_fetch(
	    &faultState.testFaults, 1, __ATOMIC_RELAXED) >= 0) {
	volatile uintptr_t unmapped = 16;

	(void) *(volatile int *) unmapped;
    }
    if (faultState.testSkip) {
	SkipTrampoline(ts->ring, slot);
    }
    if (ts->mode == TP_MODE_FRAMES) {
	Tcl_Interp *interp = ts->foreign ? ForeignInterp(ts->ring, slot)
		: ts->interp;

	if (interp != NULL) {
	    TpInterpCapture(interp, ts->ring, slot);
	} else {
	    slot->nTcl = 0;
	    slot->flags |= TP_SLOT_NOTCL;
	}
    } else if (ts->mode == TP_MODE_TRACE && ts->trace != NULL) {
	TpTraceCapture(ts->trace, ts->interp, ts->ring, slot);
    }
    __atomic_store_n(&ts->faultGuard, 0, __ATOMIC_SEQ_CST);
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * ProfHandler --
 *
 *	The SIGPROF handler: takes one sample of the current thread into
 *	its ring.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Fills the ring's scratch slot and publishes it as a record, or
 *	counts a drop.
 *
 * Signal safety:
 *	This is the signal path; see the contract at the top of the file.
 *
 *----------------------------------------------------------------------
 */

static void
ProfHandler(
    int sig,
    siginfo_t *info,
    void *ucontext)
{
    int savedErrno = errno;
    TpThreadState *ts = tpThreadState;
    TpSlot *slot;
    uint64_t t0, dt, w;
    uintptr_t self;

    (void) sig;
    if (ts == NULL || !__atomic_load_n(&ts->active, __ATOMIC_ACQUIRE)) {
	ts = FindThread();
    }
    if (ts == NULL || !__atomic_load_n(&ts->active, __ATOMIC_ACQUIRE)
	    || ts->inHandler) {
	errno = savedErrno;
	return;
    }
    __atomic_store_n(&ts->inHandler, 1, __ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&ts->active, __ATOMIC_SEQ_CST)) {
	goto done;
    }
    self = (uintptr_t) pthread_self();
    if (ts->foreign && ts->threadId != 0 && ts->threadId != self) {
	/*
	 * Another thread has this kernel id: the one this state was made
	 * for exited, and this one began before the sampler thread's next
	 * look at /proc. Its stack is elsewhere (unless the C library gave
	 * it the same one, and the same pthread_self): find it again. The
	 * probe is cleared first, so that the sampler thread never pairs
	 * the old probe with the cleared end.
	 */

	__atomic_store_n(&ts->probeSp, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&ts->stackHi, 0, __ATOMIC_RELEASE);
	ts->unwind.stackHi = 0;
    }
    __atomic_store_n(&ts->threadId, self, __ATOMIC_RELEASE);
    if (ts->foreign && ts->unwind.stackHi == 0) {
	uintptr_t hi = __atomic_load_n(&ts->stackHi, __ATOMIC_ACQUIRE);

	/*
	 * Where this thread's stack ends is not known yet: the sampler
	 * thread finds the mapping holding the address given here (the
	 * handler runs on the thread's own stack). This tick is missed.
	 */

	if (hi == 0) {
	    volatile char here = 0;

	    __atomic_store_n(&ts->probeSp, (uintptr_t) &here,
		    __ATOMIC_RELEASE);
	    __atomic_add_fetch(&ts->ring->missed, TickWeight(ts->ring, info),
		    __ATOMIC_ACQ_REL);
	    goto done;
	}
	ts->unwind.stackHi = hi > 1 ? hi : 0;
    }
    t0 = TpNowNs();
    slot = TpRingReserve(ts->ring);
    if (slot != NULL) {
	slot->timeNs = t0;
	slot->tid = ts->tid;
	slot->mode = (uint16_t) ts->mode;
	w = TickWeight(ts->ring, info);
	slot->weight = (uint32_t) (w > UINT32_MAX ? UINT32_MAX : w);

	TpUnwindSignal(&ts->unwind, ucontext, ts->ring, slot);
	if (!GuardedCapture(ts, slot)) {
	    /* A read faulted: the sample is given up, its ticks missed. */
	    ts->ring->faults++;
	    __atomic_add_fetch(&ts->ring->missed, w, __ATOMIC_ACQ_REL);
	    goto done;
	}
	if (w > 1) {
	    ts->ring->overruns += w - 1;
	}
	if (slot->nTcl > 0 && !ts->sawTcl) {
	    ts->sawTcl = 1;
	}
	dt = TpNowNs() - t0;
	slot->handlerNs = (uint32_t) (dt > UINT32_MAX ? UINT32_MAX : dt);
	if (!TpRingCommit(ts->ring) && w > 1) {
	    /* Dropped (counted once): the ticks it carried are missed. */
	    ts->ring->overruns -= w - 1;
	    __atomic_add_fetch(&ts->ring->missed, w - 1, __ATOMIC_ACQ_REL);
	}
    } else {
	/* Dropped (counted once) at once: its merged ticks are missed. */
	w = TickWeight(ts->ring, info);
	if (w > 1) {
	    __atomic_add_fetch(&ts->ring->missed, w - 1, __ATOMIC_ACQ_REL);
	}
    }
  done:
    __atomic_store_n(&ts->inHandler, 0, __ATOMIC_RELEASE);
    errno = savedErrno;
}

/*
 *----------------------------------------------------------------------
 *
 * FaultHandler --
 *
 *	The SIGSEGV and SIGBUS handler of the fault guard (see faultState):
 *	back into ProfHandler if the fault is its own, else on to the
 *	disposition that was there before.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	A jump into ProfHandler; or the previous handler's; or the default
 *	disposition put back (the fault repeats and kills as it would have).
 *
 * Signal safety:
 *	Safe: loads, gettid, sigaction, raise, siglongjmp.
 *
 *----------------------------------------------------------------------
 */

static void
FaultHandler(
    int sig,
    siginfo_t *info,
    void *ucontext)
{
    TpThreadState *ts = tpThreadState;
    const struct sigaction *prev;

    if (info != NULL && info->si_code > 0) {	/* Sent by the kernel. */
	if (ts == NULL || !ts->faultGuard) {
	    ts = FindThread();
	}
	if (ts != NULL && ts->faultGuard) {
	    siglongjmp(ts->faultJmp, 1);
	}
    }
    prev = sig == SIGBUS ? &faultState.bus : &faultState.segv;
    if (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN
	    && !faultChaining) {
	faultChaining = 1;
	if (prev->sa_flags & SA_SIGINFO) {
	    prev->sa_sigaction(sig, info, ucontext);
	} else {
	    prev->sa_handler(sig);
	}
	faultChaining = 0;
	return;
    }

    /*
     * The default action: put it back. A fault's instruction runs again
     * on return and faults again, now with the default action (a core
     * dump that shows where); a signal someone sent is sent again.
     */

    sigaction(sig, prev, NULL);
    if (info == NULL || info->si_code <= 0) {
	raise(sig);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * FaultInstall, FaultRestore --
 *
 *	Install the fault guard's handlers where they are not in place
 *	(they chain to what was there), and put back what was there where
 *	ours are still in place: a handler installed after ours, which may
 *	chain to ours, stays. TCLPROF_TEST_FAULTS is read at every install.
 *
 * Results:
 *	None. Without the guard (sigaction failed) the handler works as
 *	before; a fault in it would kill the program.
 *
 * Side effects:
 *	Change the SIGSEGV and SIGBUS dispositions.
 *
 *----------------------------------------------------------------------
 */

static int
IsOurs(
    int sig)
{
    struct sigaction cur;

    return sigaction(sig, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO)
	    && cur.sa_sigaction == FaultHandler;
}

static void
FaultInstall(void)
{
    struct sigaction sa;
    const char *n = getenv("TCLPROF_TEST_FAULTS");

    __atomic_store_n(&faultState.testFaults, n != NULL ? atoi(n) : 0,
	    __ATOMIC_RELEASE);
    n = getenv("TCLPROF_TEST_SKIPTRAMP");
    __atomic_store_n(&faultState.testSkip, n != NULL && atoi(n) > 0,
	    __ATOMIC_RELEASE);
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = FaultHandler;

    /*
     * SA_NODEFER: the jump back into ProfHandler skips the return that
     * would unblock the signal. SA_ONSTACK: a thread that set up an
     * alternate stack for faults (a stack overflow) keeps using it.
     */

    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (!IsOurs(SIGSEGV)) {
	sigaction(SIGSEGV, &sa, &faultState.segv);
    }
    if (!IsOurs(SIGBUS)) {
	sigaction(SIGBUS, &sa, &faultState.bus);
    }
}

static void
FaultRestore(void)
{
    if (IsOurs(SIGSEGV)) {
	sigaction(SIGSEGV, &faultState.segv, NULL);
    }
    if (IsOurs(SIGBUS)) {
	sigaction(SIGBUS, &faultState.bus, NULL);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * TpSignalInstall --
 *
 *	Installs the SIGPROF handler, unless someone else's is there: two
 *	profilers sharing one signal would each see the other's samples.
 *
 * Results:
 *	TCL_OK, or TCL_ERROR with a message in *errPtr.
 *
 * Side effects:
 *	Changes the process's SIGPROF disposition.
 *
 *----------------------------------------------------------------------
 */

int
TpSignalInstall(
    Tcl_Obj **errPtr)
{
    struct sigaction sa, old;

    if (signalState.installed) {
	return TCL_OK;
    }
    if (sigaction(SIGPROF, NULL, &old) != 0) {
	*errPtr = Tcl_ObjPrintf("cannot read the SIGPROF disposition: %s",
		strerror(errno));
	return TCL_ERROR;
    }
    if ((old.sa_flags & SA_SIGINFO) ? old.sa_sigaction != NULL
	    : (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)) {
	*errPtr = Tcl_NewStringObj("another SIGPROF handler is installed "
		"(another profiler?): refusing to replace it", -1);
	return TCL_ERROR;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = ProfHandler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigfillset(&sa.sa_mask);
    sigdelset(&sa.sa_mask, SIGSEGV);	/* The fault guard's. */
    sigdelset(&sa.sa_mask, SIGBUS);
    FaultInstall();
    if (sigaction(SIGPROF, &sa, &signalState.previous) != 0) {
	*errPtr = Tcl_ObjPrintf("cannot install the SIGPROF handler: %s",
		strerror(errno));
	FaultRestore();
	return TCL_ERROR;
    }
    signalState.installed = 1;
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * TpSignalRestore --
 *
 *	Puts back the SIGPROF disposition found at install time. A SIGPROF
 *	already sent but not yet delivered, to this thread or another, is
 *	consumed or discarded first: delivered after the restore, the
 *	default action would kill the process.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Changes the SIGPROF disposition; may consume a pending SIGPROF.
 *
 *----------------------------------------------------------------------
 */

void
TpSignalRestore(void)
{
    sigset_t set, old, pending;
    struct timespec zero = {0, 0};
    struct sigaction ign;

    if (!signalState.installed) {
	return;
    }
    sigemptyset(&set);
    sigaddset(&set, SIGPROF);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    while (sigpending(&pending) == 0 && sigismember(&pending, SIGPROF)) {
	if (sigtimedwait(&set, NULL, &zero) < 0 && errno != EINTR) {
	    break;
	}
    }
    /*
     * Other threads (-threads all) may have a SIGPROF pending too, sent
     * before the sampler thread stopped and not delivered yet (a thread
     * not scheduled since). They cannot be consumed from here; setting
     * the disposition to SIG_IGN discards every pending SIGPROF of every
     * thread (POSIX; Linux flushes each thread's queue), after which the
     * previous disposition is safe to put back.
     */

    memset(&ign, 0, sizeof(ign));
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPROF, &ign, NULL);
    sigaction(SIGPROF, &signalState.previous, NULL);
    signalState.installed = 0;
    FaultRestore();
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/*
 *----------------------------------------------------------------------
 *
 * TpSignalQuiesce --
 *
 *	The stop protocol's first half: no more samples are taken on ts's
 *	thread, and none is in progress when this returns.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Clears ts->active.
 *
 *----------------------------------------------------------------------
 */

void
TpSignalQuiesce(
    TpThreadState *ts)
{
    __atomic_store_n(&ts->active, 0, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&ts->inHandler, __ATOMIC_SEQ_CST)) {
	/*
	 * Only reachable when called from another thread than ts's: on
	 * ts's own thread a running handler has finished before we run.
	 */

	sched_yield();
    }
}

/*
 * ----------------------------------------------------------------------
 * The dump signal (profiler start -dumpsignal). Its handler only raises a
 * flag: everything else (the sampler thread noticing it, the interp's
 * thread writing the file) happens outside any handler. The flag and the
 * disposition to restore are process-wide; TpDumpSignalInstall and
 * TpDumpSignalRestore are called under the session's process lock.
 * ----------------------------------------------------------------------
 */

static struct {
    int signo;			/* Installed on this signal, or 0. */
    struct sigaction previous;	/* Disposition to restore. */
    volatile sig_atomic_t raised;	/* Set by DumpHandler. */
} dumpState;

/*
 *----------------------------------------------------------------------
 *
 * DumpHandler --
 *
 *	The dump signal's handler: raises the flag.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Sets dumpState.raised.
 *
 * Signal safety:
 *	Safe: one store (errno untouched).
 *
 *----------------------------------------------------------------------
 */

static void
DumpHandler(
    int sig)
{
    (void) sig;
    __atomic_store_n(&dumpState.raised, 1, __ATOMIC_RELEASE);
}

/*
 *----------------------------------------------------------------------
 *
 * TpDumpSignalInstall, TpDumpSignalRestore, TpDumpSignalTake --
 *
 *	Install the dump handler on signo (refused if the program handles
 *	that signal itself), put the previous disposition back, and consume
 *	the flag.
 *
 * Results:
 *	Install: TCL_OK, or TCL_ERROR with a message in *errPtr. Take: 1 if
 *	the signal came since the last call.
 *
 * Side effects:
 *	Change the signal's disposition; Take clears the flag.
 *
 *----------------------------------------------------------------------
 */

int
TpDumpSignalInstall(
    int signo,
    Tcl_Obj **errPtr)
{
    struct sigaction sa, old;

    if (sigaction(signo, NULL, &old) != 0) {
	*errPtr = Tcl_ObjPrintf("cannot read the disposition of signal %d: %s",
		signo, strerror(errno));
	return TCL_ERROR;
    }
    if ((old.sa_flags & SA_SIGINFO) ? old.sa_sigaction != NULL
	    : (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)) {
	*errPtr = Tcl_ObjPrintf("signal %d already has a handler: refusing to"
		" replace it", signo);
	return TCL_ERROR;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = DumpHandler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    dumpState.raised = 0;
    if (sigaction(signo, &sa, &dumpState.previous) != 0) {
	*errPtr = Tcl_ObjPrintf("cannot install the handler of signal %d: %s",
		signo, strerror(errno));
	return TCL_ERROR;
    }
    dumpState.signo = signo;
    return TCL_OK;
}

void
TpDumpSignalRestore(void)
{
    if (dumpState.signo != 0) {
	sigaction(dumpState.signo, &dumpState.previous, NULL);
	dumpState.signo = 0;
    }
}

int
TpDumpSignalTake(void)
{
    return __atomic_exchange_n(&dumpState.raised, 0, __ATOMIC_ACQ_REL) != 0;
}

/*
 *----------------------------------------------------------------------
 *
 * TpDumpSignalSend --
 *
 *	Asks process pid for its dump: sends it signo.
 *
 * Results:
 *	TCL_OK, or TCL_ERROR with a message in *errPtr.
 *
 * Side effects:
 *	Signals the process.
 *
 *----------------------------------------------------------------------
 */

int
TpDumpSignalSend(
    long pid,
    int signo,
    Tcl_Obj **errPtr)
{
    if (kill((pid_t) pid, signo) != 0) {
	*errPtr = Tcl_ObjPrintf("cannot signal process %ld: %s", pid,
		errno == ESRCH ? "no such process" : strerror(errno));
	return TCL_ERROR;
    }
    return TCL_OK;
}
