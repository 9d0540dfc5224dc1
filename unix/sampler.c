/*
 * sampler.c --
 *
 *	The sampler thread and the clocks that decide when a sample is taken.
 *
 *	Wall clock: the sampler thread sleeps to absolute deadlines with
 *	clock_nanosleep(TIMER_ABSTIME) and its timer slack set to 1 ns, then
 *	sends SIGPROF to the sampled thread with pthread_kill. Relative
 *	sleeps drift and default slack coalesces wake-ups: at 10 kHz plain
 *	nanosleep delivered ~4k samples/s, absolute deadlines 8-9.4k/s
 *	(DESIGN.md). Wall-clock samples include blocked time (vwait, I/O).
 *	Each signal sent adds one to the ring's pending count; the handler
 *	takes them all as the weight of its sample. Signals sent while the
 *	thread could not take one (it waited for a CPU, or had SIGPROF
 *	blocked) merge into one, and its sample, taken where the thread was
 *	all that time, stands for all of them. Deadlines this thread woke too
 *	late for sent nothing: they are counted as missed, not weighed,
 *	since where the thread was at them is not known. (A per-thread
 *	kernel timer would know, but costs each signal twice as much here:
 *	the timer is re-armed on the sampled thread's CPU.)
 *
 *	CPU clock: a POSIX timer on the sampled thread's CPU clock, delivered
 *	to that thread (SIGEV_THREAD_ID). Only the thread's running time is
 *	sampled.
 *
 *	-threads all: the sampler thread also looks for the
 *	process's other threads in /proc/self/task every TP_SCAN_NS (so
 *	threads made after start are found within that), gives each a ring
 *	of its own through the session, and sends each its SIGPROF with
 *	tgkill at every tick (-clock cpu: a timer on that thread's CPU
 *	clock, delivered to it). A thread that has exited (ESRCH, or gone
 *	from /proc) is no longer signalled; its samples stay. Such a thread's stack range is not
 *	known to anyone: its first signal records an address on it, and the
 *	sampler thread looks that address up in /proc/self/maps.
 *
 *	In both cases the sampler thread also drains the ring every few
 *	milliseconds, so the ring only has to absorb the drain's latency.
 *	It blocks every signal, so no handler ever runs on it.
 *
 *	fork: SIGPROF arriving while fork() copies the process can make the
 *	kernel restart clone() forever (seen in gperftools and
 *	async-profiler). pthread_atfork handlers block SIGPROF on the forking
 *	thread and pause the sampler around the fork.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#define TP_DRAIN_NS	(5 * 1000 * 1000)	/* Drain period. */
#define TP_SCAN_NS	(10 * 1000 * 1000)	/* -threads all: how often
						 * new threads are looked
						 * for. */

struct TpSampler {
    pthread_t thread;		/* The sampler thread. */
    TpSession *session;		/* Drained every TP_DRAIN_NS. */
    TpRing *ring;		/* Its ring: wall-clock signals are added
				 * to ring->pending, late ticks to
				 * ring->missed. */
    uint64_t startNs;		/* When the first interval began: just
				 * before the thread was made. */
    pthread_t target;		/* Thread to signal. */
    uint32_t targetTid;
    uint64_t periodNs;
    TpClock clock;
    timer_t timer;		/* CPU clock timer, if haveTimer. */
    int haveTimer;
    int stop;			/* Set by TpSamplerStop (atomic). */
    uint64_t durationNs;	/* -duration, 0 if none. */
    int progress;		/* Progress line wanted and stderr a tty. */
    pid_t pid;			/* Process that started the thread. */
    uint64_t counted;		/* Thread: the last deadline it counted (or
				 * passed over, paused or expired). */
    int expired;		/* Thread: -duration has ended sampling. */
    int allThreads;		/* -threads all. */
    uint32_t ownTid;		/* The sampler thread's kernel id. */
    TpThreadState *threads[TP_MAX_THREADS];
    int nThreads;		/* The other threads found (sampler thread
				 * only). */
    timer_t timers[TP_MAX_THREADS];	/* -clock cpu: each one's CPU clock
				 * timer, if haveTimers[i]. */
    char haveTimers[TP_MAX_THREADS];
};

/*
 * Process-wide fork state, written by the atfork handlers only.
 */

static struct {
    pthread_once_t once;	/* Registers the atfork handlers once. */
    int paused;			/* A fork is in progress (atomic). */
    sigset_t savedMask;		/* Forking thread's mask before prepare. */
} forkState = { PTHREAD_ONCE_INIT, 0, {{0}} };

static void *SamplerMain(void *arg);
static void ScanThreads(TpSampler *sp);
static void FindStacks(TpSampler *sp);
static void SignalThreads(TpSampler *sp, uint64_t ticks);
static void ThreadTimer(TpSampler *sp, int i);
static void ForkPrepare(void);
static void ForkParent(void);
static void ForkChild(void);
static void RegisterAtFork(void);

/*
 *----------------------------------------------------------------------
 *
 * TpSamplerStart --
 *
 *	Starts sampling the thread `target` (kernel id tid) for session s.
 *	Must be called on the target thread for -clock cpu (the CPU clock
 *	timer measures the calling thread).
 *
 * Results:
 *	The sampler, or NULL with a message in *errPtr.
 *
 * Side effects:
 *	Creates a thread and possibly a POSIX timer.
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
    sigset_t all, old;
    int err;

    if (sp == NULL) {
	*errPtr = Tcl_NewStringObj("out of memory", -1);
	return NULL;
    }
    pthread_once(&forkState.once, RegisterAtFork);
    sp->session = s;
    sp->ring = ring;
    sp->target = target;
    sp->targetTid = tid;
    sp->periodNs = (uint64_t) o->intervalUs * 1000u;
    sp->clock = o->clock;
    sp->pid = getpid();
    sp->durationNs = o->durationNs;
    sp->progress = o->progress && isatty(2);
    sp->allThreads = o->allThreads;

    if (o->clock == TP_CLOCK_CPU) {
	struct sigevent sev;
	struct itimerspec its;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev._sigev_un._tid = (pid_t) tid;
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &sp->timer) != 0) {
	    *errPtr = Tcl_ObjPrintf("cannot create the CPU clock timer: %s",
		    strerror(errno));
	    free(sp);
	    return NULL;
	}
	sp->haveTimer = 1;
	memset(&its, 0, sizeof(its));
	its.it_interval.tv_sec = (time_t) (sp->periodNs / 1000000000u);
	its.it_interval.tv_nsec = (long) (sp->periodNs % 1000000000u);
	its.it_value = its.it_interval;
	timer_settime(sp->timer, 0, &its, NULL);
    }

    /*
     * The thread inherits a mask blocking every signal: it never runs a
     * handler, and process-directed signals go to the program's threads.
     */

    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    sp->startNs = TpNowNs();
    err = pthread_create(&sp->thread, NULL, SamplerMain, sp);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err != 0) {
	if (sp->haveTimer) {
	    timer_delete(sp->timer);
	}
	*errPtr = Tcl_ObjPrintf("cannot start the sampler thread: %s",
		strerror(err));
	free(sp);
	return NULL;
    }
    return sp;
}

/*
 *----------------------------------------------------------------------
 *
 * TpSamplerStop --
 *
 *	Stops the timer and the sampler thread and waits for the thread.
 *	In a forked child the thread does not exist: only memory is freed.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Joins the thread, deletes the timer, frees sp.
 *
 *----------------------------------------------------------------------
 */

void
TpSamplerStop(
    TpSampler *sp)
{
    uint64_t stopNs = TpNowNs();

    if (sp == NULL) {
	return;
    }

    if (sp->haveTimer) {
	timer_delete(sp->timer);
    }
    if (sp->pid == getpid()) {
	int i;

	__atomic_store_n(&sp->stop, 1, __ATOMIC_RELEASE);
	pthread_join(sp->thread, NULL);
	for (i = 0; i < sp->nThreads; i++) {
	    if (sp->haveTimers[i]) {
		timer_delete(sp->timers[i]);
	    }
	}

	/*
	 * The deadlines the thread did not wake for before the stop (it was
	 * starved, or the last one fell during the stop): ticks too, counted
	 * as missed.
	 */

	if (sp->clock == TP_CLOCK_WALL && !sp->expired
		&& stopNs >= sp->counted + sp->periodNs) {
	    __atomic_add_fetch(&sp->ring->missed,
		    (stopNs - sp->counted) / sp->periodNs, __ATOMIC_ACQ_REL);
	}
	if (sp->progress) {
	    /* Erase the progress line. */
	    ssize_t n = write(2, "\r\033[K", 4);

	    (void) n;
	}
    }
    free(sp);
}

/*
 *----------------------------------------------------------------------
 *
 * SamplerMain --
 *
 *	The sampler thread: sends SIGPROF at each deadline (wall clock) and
 *	drains the ring every TP_DRAIN_NS.
 *
 * Results:
 *	NULL.
 *
 * Side effects:
 *	Signals the target thread; drains into the session's profile.
 *
 *----------------------------------------------------------------------
 */

static void *
SamplerMain(
    void *arg)
{
    TpSampler *sp = arg;
    struct timespec ts;
    uint64_t next, now, lastDrain, lastProgress, start, lastScan = 0;
    uint64_t sleepNs = sp->clock == TP_CLOCK_WALL ? sp->periodNs : TP_DRAIN_NS;
    int expired = 0;

    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    prctl(PR_SET_NAME, (unsigned long) "tclprof", 0, 0, 0);
    sp->ownTid = TpGetTid();

    /*
     * The schedule starts when start began, not when this thread first
     * runs (on a busy machine that can be milliseconds later): a deadline
     * already past fires at once.
     */

    start = next = sp->counted = sp->startNs;
    lastDrain = lastProgress = TpNowNs();
    while (!__atomic_load_n(&sp->stop, __ATOMIC_ACQUIRE)) {
	next += sleepNs;
	ts.tv_sec = (time_t) (next / 1000000000u);
	ts.tv_nsec = (long) (next % 1000000000u);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)
		== EINTR) {
	    /* Retry: all signals are blocked, but be safe. */
	}
	if (__atomic_load_n(&sp->stop, __ATOMIC_ACQUIRE)) {
	    break;
	}
	now = TpNowNs();
	if (sp->clock == TP_CLOCK_WALL && !expired
		&& !__atomic_load_n(&forkState.paused, __ATOMIC_ACQUIRE)) {
	    uint64_t ticks = 1;

	    /*
	     * Woken late (a busy machine): the deadlines passed since are
	     * ticks too, missed (no burst of signals: they would merge into
	     * one sample taken now, not when they were due).
	     */

	    if (now > next + sleepNs) {
		ticks += (now - next) / sleepNs;
		next += (ticks - 1) * sleepNs;
		__atomic_add_fetch(&sp->ring->missed, ticks - 1,
			__ATOMIC_ACQ_REL);
	    }
	    __atomic_add_fetch(&sp->ring->pending, 1, __ATOMIC_ACQ_REL);
	    pthread_kill(sp->target, SIGPROF);
	    if (sp->allThreads) {
		if (now - lastScan >= TP_SCAN_NS) {
		    ScanThreads(sp);
		    lastScan = now;
		}
		FindStacks(sp);
		SignalThreads(sp, ticks);
	    }
	}

	if (sp->clock == TP_CLOCK_CPU && sp->allThreads && !expired
		&& now - lastScan >= TP_SCAN_NS
		&& !__atomic_load_n(&forkState.paused, __ATOMIC_ACQUIRE)) {
	    ScanThreads(sp);
	    FindStacks(sp);
	    lastScan = now;
	}

	/*
	 * -duration: sampling ends here, whatever the program is doing (an
	 * event in the program could not fire while it computes). The run
	 * itself ends at profiler stop, on the interp's thread.
	 */

	if (sp->durationNs != 0 && !expired && now - start >= sp->durationNs) {
	    expired = 1;
	    if (sp->haveTimer) {
		struct itimerspec off;
		int i;

		memset(&off, 0, sizeof(off));
		timer_settime(sp->timer, 0, &off, NULL);
		for (i = 0; i < sp->nThreads; i++) {
		    if (sp->haveTimers[i]) {
			timer_settime(sp->timers[i], 0, &off, NULL);
		    }
		}
	    }
	    TpSessionExpired(sp->session, now);
	    sp->expired = 1;
	}
	if (sp->progress && now - lastProgress >= 1000000000u) {
	    char line[96];
	    int len;
	    ssize_t n;

	    TpSessionDrain(sp->session);
	    len = snprintf(line, sizeof(line),
		    "\rtclprof: %llu samples, %.0f s%s\033[K",
		    (unsigned long long) TpSessionSamples(sp->session),
		    (double) (now - start) / 1e9, expired ? " (done)" : "");
	    n = write(2, line, (size_t) len);
	    (void) n;
	    lastProgress = now;
	}

	/*
	 * After a long stall (the machine was busy, or the drain waited for
	 * a report), skip the missed deadlines instead of sending a burst.
	 */

	if (now > next + 4 * sleepNs) {
	    next = now;
	}
	sp->counted = next;
	if (now - lastDrain >= TP_DRAIN_NS) {
	    TpSessionDrain(sp->session);
	    lastDrain = now;
	}
    }
    return NULL;
}

/*
 *----------------------------------------------------------------------
 *
 * ScanThreads --
 *
 *	-threads all: registers with the session every thread of the
 *	process not known yet (neither the sampled one, nor this one, nor
 *	one found before and still alive).
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	May add threads to the session and to sp->threads.
 *
 *----------------------------------------------------------------------
 */

static void
ScanThreads(
    TpSampler *sp)
{
    DIR *dir = opendir("/proc/self/task");
    struct dirent *de;
    char seen[TP_MAX_THREADS];
    int i, complete = 1;

    if (dir == NULL) {
	return;
    }
    memset(seen, 0, sizeof(seen));
    while ((de = readdir(dir)) != NULL) {
	char *end;
	unsigned long tid = strtoul(de->d_name, &end, 10);
	TpThreadState *ts;

	if (de->d_name[0] < '0' || de->d_name[0] > '9' || *end != '\0'
		|| tid == sp->targetTid || tid == sp->ownTid) {
	    continue;
	}
	for (i = 0; i < sp->nThreads; i++) {
	    if (sp->threads[i]->tid == tid && !sp->threads[i]->gone) {
		break;
	    }
	}
	if (i < sp->nThreads) {
	    seen[i] = 1;
	    continue;
	}
	ts = TpSessionAddThread(sp->session, (uint32_t) tid);
	if (ts == NULL) {
	    complete = 0;
	    break;
	}
	for (i = 0; i < sp->nThreads && sp->threads[i] != ts; i++) {
	}
	if (i == sp->nThreads) {
	    sp->threads[sp->nThreads++] = ts;	/* Not a reused one. */
	    sp->haveTimers[i] = 0;
	}
	seen[i] = 1;
	if (sp->clock == TP_CLOCK_CPU) {
	    ThreadTimer(sp, i);
	}
    }
    closedir(dir);

    /*
     * Threads no longer listed have exited (on the wall clock tgkill
     * tells at once; a CPU timer just stops).
     */

    for (i = 0; complete && i < sp->nThreads; i++) {
	if (!seen[i] && !sp->threads[i]->gone) {
	    __atomic_store_n(&sp->threads[i]->gone, 1, __ATOMIC_RELEASE);
	    if (sp->haveTimers[i]) {
		timer_delete(sp->timers[i]);
		sp->haveTimers[i] = 0;
	    }
	}
    }
}

/*
 *----------------------------------------------------------------------
 *
 * ThreadTimer --
 *
 *	-clock cpu: (re)arms the CPU-time timer of sp->threads[i], on that
 *	thread's CPU clock and delivered to it (the clock id of another
 *	thread is built the way the kernel defines it: pthread_getcpuclockid
 *	needs a pthread_t, which a thread found in /proc does not give). A
 *	thread whose clock cannot be had is left unsampled.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Creates a timer (deleting the one of a thread whose slot this is).
 *
 *----------------------------------------------------------------------
 */

static void
ThreadTimer(
    TpSampler *sp,
    int i)
{
    TpThreadState *ts = sp->threads[i];
    clockid_t clock = (clockid_t) ((~(unsigned) ts->tid) << 3) | 6;
				/* CPUCLOCK_SCHED | CPUCLOCK_PERTHREAD. */
    struct sigevent sev;
    struct itimerspec its;

    if (sp->haveTimers[i]) {
	timer_delete(sp->timers[i]);
	sp->haveTimers[i] = 0;
    }
    memset(&sev, 0, sizeof(sev));
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev._sigev_un._tid = (pid_t) ts->tid;
    if (timer_create(clock, &sev, &sp->timers[i]) != 0) {
	return;
    }
    sp->haveTimers[i] = 1;
    memset(&its, 0, sizeof(its));
    its.it_interval.tv_sec = (time_t) (sp->periodNs / 1000000000u);
    its.it_interval.tv_nsec = (long) (sp->periodNs % 1000000000u);
    its.it_value = its.it_interval;
    timer_settime(sp->timers[i], 0, &its, NULL);
}

/*
 *----------------------------------------------------------------------
 *
 * FindStacks --
 *
 *	For each thread whose handler left an address on its stack, the
 *	end of the mapping that holds it (/proc/self/maps): the bound of
 *	the unwinder's stack reads on that thread.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Sets ts->stackHi (1: not found, unwind without a bound check).
 *
 *----------------------------------------------------------------------
 */

static void
FindStacks(
    TpSampler *sp)
{
    FILE *f = NULL;
    char line[512];
    int i;

    for (i = 0; i < sp->nThreads; i++) {
	TpThreadState *ts = sp->threads[i];
	uintptr_t probe, found = 1, none = 0;

	/*
	 * The end first, then the probe: the handler clears them in the
	 * other order when a new thread has taken this one's kernel id.
	 */

	if (__atomic_load_n(&ts->stackHi, __ATOMIC_ACQUIRE) != 0
		|| (probe = __atomic_load_n(&ts->probeSp, __ATOMIC_ACQUIRE))
		== 0) {
	    continue;
	}
	if (f == NULL && (f = fopen("/proc/self/maps", "r")) == NULL) {
	    return;
	}
	rewind(f);
	while (fgets(line, sizeof(line), f) != NULL) {
	    unsigned long lo, hi;

	    if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && probe >= lo
		    && probe < hi) {
		found = hi;
		break;
	    }
	}
	__atomic_compare_exchange_n(&ts->stackHi, &none, found, 0,
		__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    }
    if (f != NULL) {
	fclose(f);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * SignalThreads --
 *
 *	Sends this tick's SIGPROF to every other thread found and alive.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Signals; marks the threads that have exited.
 *
 *----------------------------------------------------------------------
 */

static void
SignalThreads(
    TpSampler *sp,
    uint64_t ticks)
{
    int i;

    for (i = 0; i < sp->nThreads; i++) {
	TpThreadState *ts = sp->threads[i];

	if (ts->gone) {
	    continue;
	}
	if (ticks > 1) {
	    __atomic_add_fetch(&ts->ring->missed, ticks - 1, __ATOMIC_ACQ_REL);
	}
	__atomic_add_fetch(&ts->ring->pending, 1, __ATOMIC_ACQ_REL);
	if (syscall(SYS_tgkill, (long) sp->pid, (long) ts->tid, SIGPROF) != 0
		&& errno == ESRCH) {
	    __atomic_store_n(&ts->gone, 1, __ATOMIC_RELEASE);
	}
    }
}

/*
 *----------------------------------------------------------------------
 *
 * TpSamplerPause --
 *
 *	Pauses (pause != 0) or resumes the sending of wall-clock samples.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Sets the process-wide pause flag.
 *
 *----------------------------------------------------------------------
 */

void
TpSamplerPause(
    int pause)
{
    __atomic_store_n(&forkState.paused, pause, __ATOMIC_RELEASE);
}

/*
 *----------------------------------------------------------------------
 *
 * ForkPrepare, ForkParent, ForkChild, RegisterAtFork --
 *
 *	pthread_atfork handlers: no SIGPROF reaches the forking thread while
 *	fork() runs, so clone() is never interrupted and restarted.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Changes the forking thread's signal mask for the fork's duration.
 *
 *----------------------------------------------------------------------
 */

static void
ForkPrepare(void)
{
    sigset_t set;

    TpSamplerPause(1);
    sigemptyset(&set);
    sigaddset(&set, SIGPROF);
    pthread_sigmask(SIG_BLOCK, &set, &forkState.savedMask);
    TpSessionForkPrepare();	/* No drain in progress while copying. */
    TpCfiAtFork(1);		/* Nor a compilation of unwind rows. */
}

static void
ForkParent(void)
{
    TpCfiAtFork(0);
    TpSessionForkParent();
    pthread_sigmask(SIG_SETMASK, &forkState.savedMask, NULL);
    TpSamplerPause(0);
}

static void
ForkChild(void)
{
    /*
     * The sampler thread and the CPU timer do not exist in the child: no
     * SIGPROF will come unless the child starts a profiler of its own,
     * which TpSessionForkChild arranges when the profiled thread forked.
     */

    TpCfiAtFork(0);
    TpSessionForkChild();
    pthread_sigmask(SIG_SETMASK, &forkState.savedMask, NULL);
    TpSamplerPause(0);
}

static void
RegisterAtFork(void)
{
    pthread_atfork(ForkPrepare, ForkParent, ForkChild);
}
