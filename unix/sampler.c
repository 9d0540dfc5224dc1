/*
 * sampler.c --
 *
 *	The sampler thread and the clocks that decide when a sample is taken.
 *
 *	Wall clock: the sampler thread sleeps to absolute deadlines (a
 *	timed wait on a condition that profiler stop signals, like
 *	clock_nanosleep(TIMER_ABSTIME)) with its timer slack set to 1 ns, then
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
 *	Wall clock, -oncpu tick (the default): the thread's running time is
 *	sampled by a timer on its CPU clock (as with -clock cpu), and only
 *	its time off the CPU by the sampler thread. The kernel checks a
 *	CPU-clock timer at its scheduler tick, on the thread's own CPU,
 *	which the tick interrupts anyway: the signal costs no interrupt of
 *	its own. A pthread_kill to a thread running on another CPU does
 *	(an inter-processor interrupt), and on a virtual machine that
 *	interrupt, not the handler, was most of a sample's cost (README,
 *	Overhead). The price is resolution: at most one sample per tick
 *	(HZ: 250 or 1000 on Linux), each weighing the intervals it stands
 *	for, as the timer's overruns say. At each deadline the sampler
 *	thread reads the thread's CPU clock; the wall time it did not run
 *	adds to a debt, and each whole interval of debt is sent as a
 *	wall-clock signal (pending), preferably while the thread is not
 *	running (/proc says), so that its sample shows where it waits.
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
 *	clock, delivered to it; -oncpu tick: that timer for its running
 *	time, tgkill for its time off the CPU). A thread that has exited (ESRCH, or gone
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
#include <fcntl.h>

#define TP_DRAIN_NS	(5 * 1000 * 1000)	/* Drain period. */
#define TP_OFFCPU_WAIT	8			/* -oncpu tick: intervals
						 * of debt (and at most two
						 * looks' worth) that wait
						 * for the thread to stop
						 * running. */
#define TP_MAX_LOOK_NS	(10 * 1000 * 1000)	/* -oncpu tick: the longest
						 * time between looks at the
						 * threads' CPU clocks. */
#define TP_SCAN_NS	(10 * 1000 * 1000)	/* -threads all: how often
						 * new threads are looked
						 * for. */

/*
 * -oncpu tick: what the sampler thread knows of a thread's time off the
 * CPU (OffCpu).
 */

typedef struct OffCpuState {
    clockid_t clock;		/* The thread's CPU clock. */
    uint32_t tid;
    int live;			/* The clock was read: the rest is valid. */
    uint64_t lastWallNs;	/* Wall time and the thread's CPU time at */
    uint64_t lastCpuNs;		/* the last look. */
    uint64_t offNs;		/* Its time off the CPU not yet sent. */
    uint64_t delayNs;		/* The part of offNs it spent ready to run
				 * but held off its CPU (at most offNs). */
    uint64_t lastDelayNs;	/* Its run_delay at the last reading. */
    int delayOk;		/* run_delay can be read. */
} OffCpuState;

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
    int tick;			/* Wall clock with -oncpu tick: timers
				 * sample running time, the thread only
				 * time off the CPU. */
    OffCpuState off;		/* tick: the target thread's. */
    uint64_t lookNs;		/* tick: how often the sampler thread looks
				 * at the threads' CPU clocks: the kernel's
				 * tick, at least the period (a whole number
				 * of periods). */
    clockid_t timerClock;	/* The target's CPU clock and its reading */
    uint64_t timerCpuNs;	/* when the timer was armed, if haveTimer
				 * and timerClockOk. */
    int timerClockOk;
    int stop;			/* Set by TpSamplerStop (atomic, and under
				 * wakeLock so that the sleep sees it). */
    pthread_mutex_t wakeLock;	/* The sampler thread sleeps on wake, */
    pthread_cond_t wake;	/* signalled by TpSamplerStop: a stop does not
				 * wait for the next deadline (half a tick
				 * on average, 2 ms at 250 Hz: it was most
				 * of profiler stop's time). */
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
    OffCpuState offs[TP_MAX_THREADS];	/* tick: each one's. */
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
static int WakeInit(TpSampler *sp);
static void WakeFree(TpSampler *sp);
static void SleepUntil(TpSampler *sp, uint64_t at);

/*
 * The CPU clock of thread tid of this process (as the kernel encodes it:
 * CPUCLOCK_SCHED | CPUCLOCK_PERTHREAD), which pthread_getcpuclockid gives
 * only for threads made by pthreads.
 */

#define ThreadClock(tid) ((clockid_t) ((~(unsigned) (tid)) << 3) | 6)

static void ForkPrepare(void);
static void ForkParent(void);
static void ForkChild(void);
static void RegisterAtFork(void);
static int CpuTimer(TpSampler *sp, uint32_t tid, Tcl_Obj **errPtr);
static int ReadClock(clockid_t clock, uint64_t *nsPtr);
static int OffCpuInit(OffCpuState *st, clockid_t clock, uint32_t tid);
static uint64_t OffCpu(TpSampler *sp, OffCpuState *st, uint64_t now);
static int ThreadRunning(uint32_t tid);
static int ThreadDelay(uint32_t tid, uint64_t *nsPtr);
static ssize_t ReadTaskFile(uint32_t tid, const char *name, char *buf,
		    size_t size);

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
    if (!WakeInit(sp)) {
	*errPtr = Tcl_NewStringObj("cannot make the sampler's wake-up", -1);
	free(sp);
	return NULL;
    }

    if (o->clock == TP_CLOCK_CPU && !CpuTimer(sp, tid, errPtr)) {
	WakeFree(sp);
	free(sp);
	return NULL;
    }
    if (o->clock == TP_CLOCK_WALL && o->oncpuTick) {
	clockid_t clock;

	/*
	 * Without a CPU clock to read or a timer on it, the sampler thread
	 * signals at every deadline (status says -oncpu sampler).
	 */

	if (pthread_getcpuclockid(target, &clock) == 0
		&& OffCpuInit(&sp->off, clock, tid) && CpuTimer(sp, tid, NULL)) {
	    struct timespec res;
	    uint64_t tickNs = 0;

	    /*
	     * The time off the CPU is looked at as often as the kernel's
	     * tick samples the running time (a coarse clock's resolution is
	     * the tick): more looks would wake this thread, and signal a
	     * waiting one, more often for the same weight.
	     */

	    if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) == 0) {
		tickNs = (uint64_t) res.tv_sec * 1000000000u
			+ (uint64_t) res.tv_nsec;
	    }
	    if (tickNs > TP_MAX_LOOK_NS) {
		tickNs = TP_MAX_LOOK_NS;
	    }
	    sp->lookNs = sp->periodNs * (tickNs > sp->periodNs
		    ? tickNs / sp->periodNs : 1);
	    sp->tick = 1;
	}
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
	WakeFree(sp);
	free(sp);
	return NULL;
    }
    return sp;
}

/*
 *----------------------------------------------------------------------
 *
 * TpSamplerOncpuTick --
 *
 *	Whether the sampled thread's running time is sampled at the
 *	kernel's tick: -clock cpu, or -oncpu tick in effect (its timer
 *	could be made).
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
TpSamplerOncpuTick(
    const TpSampler *sp)
{
    return sp != NULL && (sp->tick || sp->clock == TP_CLOCK_CPU);
}

/*
 *----------------------------------------------------------------------
 *
 * CpuTimer --
 *
 *	Arms a timer on the calling thread's CPU clock that sends SIGPROF
 *	to that thread (tid) every period of its running time. The kernel
 *	checks it at its scheduler tick: a period shorter than the tick
 *	gives one signal per tick, whose overrun counts the periods it
 *	stands for (TickWeight).
 *
 * Results:
 *	1 if armed; 0 with a message in *errPtr (if errPtr is not NULL).
 *
 * Side effects:
 *	Creates sp->timer.
 *
 *----------------------------------------------------------------------
 */

static int
CpuTimer(
    TpSampler *sp,
    uint32_t tid,
    Tcl_Obj **errPtr)
{
    struct sigevent sev;
    struct itimerspec its;

    memset(&sev, 0, sizeof(sev));
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev._sigev_un._tid = (pid_t) tid;
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &sp->timer) != 0) {
	if (errPtr != NULL) {
	    *errPtr = Tcl_ObjPrintf("cannot create the CPU clock timer: %s",
		    strerror(errno));
	}
	return 0;
    }
    sp->haveTimer = 1;
    sp->timerClockOk = ReadClock(CLOCK_THREAD_CPUTIME_ID, &sp->timerCpuNs)
	    && pthread_getcpuclockid(pthread_self(), &sp->timerClock) == 0;
    memset(&its, 0, sizeof(its));
    its.it_interval.tv_sec = (time_t) (sp->periodNs / 1000000000u);
    its.it_interval.tv_nsec = (long) (sp->periodNs % 1000000000u);
    its.it_value = its.it_interval;
    timer_settime(sp->timer, 0, &its, NULL);
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * ReadClock --
 *
 *	Reads a clock in nanoseconds.
 *
 * Results:
 *	1, or 0 if it cannot be read (a thread's clock after it exited).
 *
 * Side effects:
 *	Sets *nsPtr.
 *
 *----------------------------------------------------------------------
 */

static int
ReadClock(
    clockid_t clock,
    uint64_t *nsPtr)
{
    struct timespec ts;

    if (clock_gettime(clock, &ts) != 0) {
	return 0;
    }
    *nsPtr = (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * OffCpuInit --
 *
 *	Starts following a thread's time off the CPU (-oncpu tick): reads
 *	its CPU clock once.
 *
 * Results:
 *	1 if the clock can be read; else 0 (st->live is 0).
 *
 * Side effects:
 *	Fills *st.
 *
 *----------------------------------------------------------------------
 */

static int
OffCpuInit(
    OffCpuState *st,
    clockid_t clock,
    uint32_t tid)
{
    memset(st, 0, sizeof(*st));
    if (!ReadClock(clock, &st->lastCpuNs)) {
	return 0;
    }
    st->clock = clock;
    st->tid = tid;
    st->lastWallNs = TpNowNs();
    st->delayOk = ThreadDelay(tid, &st->lastDelayNs);
    st->live = 1;
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * OffCpu --
 *
 *	-oncpu tick, at a look: adds the wall time a thread spent off its
 *	CPU since the last look to its debt, and says how many whole
 *	intervals of it to send now as a wall-clock signal.
 *
 *	The debt has two parts, each sent where it belongs. The time the
 *	thread was ready to run but held off its CPU (its run_delay: a busy
 *	machine) is sent while the thread is running or ready to run: the
 *	signal is taken where it was held, as with -oncpu sampler; sent
 *	while it waits, it would be sampled in the wait. The rest is time
 *	it waited for an event, sent while it waits, so that the sample
 *	shows where it waited, not the code it runs once woken; a debt of
 *	it under TP_OFFCPU_WAIT intervals (and two looks) waits for that,
 *	past that it is sent anyway. Without run_delay (a kernel without
 *	schedstats) the whole debt is treated as waiting.
 *
 * Results:
 *	The intervals to send (0: none now).
 *
 * Side effects:
 *	Updates the debt.
 *
 *----------------------------------------------------------------------
 */

static uint64_t
OffCpu(
    TpSampler *sp,
    OffCpuState *st,
    uint64_t now)
{
    uint64_t cpu, dWall, dCpu, ticks, delay, waitNs;

    if (!ReadClock(st->clock, &cpu)) {
	return 0;	/* The thread is gone: nothing to sample. */
    }
    dWall = now > st->lastWallNs ? now - st->lastWallNs : 0;
    dCpu = cpu > st->lastCpuNs ? cpu - st->lastCpuNs : 0;
    st->lastWallNs = now;
    st->lastCpuNs = cpu;
    if (dWall > dCpu) {
	st->offNs += dWall - dCpu;
    }
    if (st->offNs < sp->periodNs) {
	return 0;
    }

    /*
     * Something to send: how much of it was a wait for a CPU. run_delay
     * grows between readings whether or not they are taken, so reading
     * it only here misses none of it.
     */

    if (st->delayOk && ThreadDelay(st->tid, &delay)) {
	if (delay > st->lastDelayNs) {
	    st->delayNs += delay - st->lastDelayNs;
	}
	st->lastDelayNs = delay;
    }
    if (st->delayNs > st->offNs) {
	st->delayNs = st->offNs;
    }
    waitNs = st->offNs - st->delayNs;
    if (ThreadRunning(st->tid)) {
	/*
	 * Running or ready to run: the time it was held off its CPU is
	 * sampled now, where it was (or still is) held. The time it waited
	 * for an event waits in turn for its next wait, within limits.
	 */

	ticks = st->delayNs / sp->periodNs;
	st->delayNs -= ticks * sp->periodNs;
	if (waitNs >= TP_OFFCPU_WAIT * sp->periodNs
		|| waitNs >= 2 * sp->lookNs) {
	    ticks += waitNs / sp->periodNs;
	}
    } else {
	/*
	 * Waiting: the time it waited is sampled in the wait. The time it
	 * was held off its CPU waits until it runs again: sent now, it
	 * would be sampled in this wait, not in the code that was held.
	 */

	ticks = waitNs / sp->periodNs;
    }
    st->offNs -= ticks * sp->periodNs;
    return ticks;
}

/*
 *----------------------------------------------------------------------
 *
 * ThreadDelay --
 *
 *	The time thread tid of this process has spent ready to run but not
 *	running (run_delay, the second field of its schedstat in /proc).
 *
 * Results:
 *	1 and *nsPtr set if it could be read; else 0.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static int
ThreadDelay(
    uint32_t tid,
    uint64_t *nsPtr)
{
    char buf[96];
    unsigned long long cpu, delay;

    if (ReadTaskFile(tid, "schedstat", buf, sizeof(buf)) <= 0
	    || sscanf(buf, "%llu %llu", &cpu, &delay) != 2) {
	return 0;
    }
    *nsPtr = (uint64_t) delay;
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * ReadTaskFile --
 *
 *	Reads the start of /proc/self/task/TID/name (one read: these files
 *	are made whole at each read) into buf, NUL-terminated.
 *
 * Results:
 *	The bytes read; 0 or -1 if none.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static ssize_t
ReadTaskFile(
    uint32_t tid,
    const char *name,
    char *buf,
    size_t size)
{
    char path[64];
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/proc/self/task/%u/%s", (unsigned) tid,
	    name);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
	return -1;
    }
    n = read(fd, buf, size - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return n;
}

/*
 *----------------------------------------------------------------------
 *
 * ThreadRunning --
 *
 *	Whether thread tid of this process is running or ready to run
 *	(state R in /proc), rather than waiting.
 *
 * Results:
 *	1 if running (or not known), 0 if waiting.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static int
ThreadRunning(
    uint32_t tid)
{
    char buf[256];
    const char *paren;

    if (ReadTaskFile(tid, "stat", buf, sizeof(buf)) <= 0) {
	return 1;
    }

    /*
     * "tid (comm) S ...": the name may hold spaces and parentheses; the
     * state follows the last ") ".
     */

    paren = strrchr(buf, ')');
    if (paren == NULL || paren[1] != ' ') {
	return 1;
    }
    return paren[2] == 'R';
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
    uint64_t stopNs = TpNowNs(), cpu = 0;
    int cpuOk = 0;

    if (sp == NULL) {
	return;
    }
    if (sp->haveTimer) {
	timer_delete(sp->timer);
	cpuOk = sp->pid == getpid() && sp->timerClockOk
		&& ReadClock(sp->timerClock, &cpu) && cpu > sp->timerCpuNs;
    }
    if (sp->pid == getpid()) {
	int i;

	pthread_mutex_lock(&sp->wakeLock);
	__atomic_store_n(&sp->stop, 1, __ATOMIC_RELEASE);
	pthread_cond_signal(&sp->wake);
	pthread_mutex_unlock(&sp->wakeLock);
	pthread_join(sp->thread, NULL);
	WakeFree(sp);
	for (i = 0; i < sp->nThreads; i++) {
	    if (sp->haveTimers[i]) {
		timer_delete(sp->timers[i]);
	    }
	}

	/*
	 * The kernel looks at a CPU-clock timer only at its tick: periods
	 * of CPU time that expired after the last tick were never
	 * delivered (at 250 Hz and 1 ms, up to three). Like the time off
	 * the CPU not sent yet (-oncpu tick), they are missed ticks, so
	 * that samples plus missed is still the time over the interval.
	 */

	if (cpuOk && !sp->expired) {
	    uint64_t due = (cpu - sp->timerCpuNs) / sp->periodNs;
	    uint64_t got = __atomic_load_n(&sp->ring->timerTicks,
		    __ATOMIC_ACQUIRE);

	    if (due > got) {
		__atomic_add_fetch(&sp->ring->missed, due - got,
			__ATOMIC_ACQ_REL);
	    }
	}
	if (sp->tick && !sp->expired && sp->off.offNs >= sp->periodNs) {
	    __atomic_add_fetch(&sp->ring->missed,
		    sp->off.offNs / sp->periodNs, __ATOMIC_ACQ_REL);
	}

	/*
	 * The deadlines the thread did not wake for before the stop (it was
	 * starved, or the last one fell during the stop): ticks too, counted
	 * as missed.
	 */

	if (sp->clock == TP_CLOCK_WALL && !sp->tick && !sp->expired
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
 * WakeInit, WakeFree --
 *
 *	Make and free the condition the sampler thread sleeps on (on the
 *	monotonic clock, which TpNowNs reads).
 *
 * Results:
 *	WakeInit: 1, or 0 if the condition could not be made.
 *
 * Side effects:
 *	Initializes or destroys sp->wakeLock and sp->wake.
 *
 *----------------------------------------------------------------------
 */

static int
WakeInit(
    TpSampler *sp)
{
    pthread_condattr_t attr;
    int ok;

    if (pthread_condattr_init(&attr) != 0) {
	return 0;
    }
    ok = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0
	    && pthread_cond_init(&sp->wake, &attr) == 0;
    pthread_condattr_destroy(&attr);
    if (ok && pthread_mutex_init(&sp->wakeLock, NULL) != 0) {
	pthread_cond_destroy(&sp->wake);
	ok = 0;
    }
    return ok;
}

static void
WakeFree(
    TpSampler *sp)
{
    pthread_cond_destroy(&sp->wake);
    pthread_mutex_destroy(&sp->wakeLock);
}

/*
 *----------------------------------------------------------------------
 *
 * SleepUntil --
 *
 *	The sampler thread sleeps until the absolute time at (TpNowNs's
 *	clock) or until TpSamplerStop wakes it. Its timer slack is 1 ns
 *	(SamplerMain), which the kernel applies to this wait as to
 *	clock_nanosleep.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Blocks the calling thread.
 *
 *----------------------------------------------------------------------
 */

static void
SleepUntil(
    TpSampler *sp,
    uint64_t at)
{
    struct timespec ts;

    ts.tv_sec = (time_t) (at / 1000000000u);
    ts.tv_nsec = (long) (at % 1000000000u);
    pthread_mutex_lock(&sp->wakeLock);
    while (!__atomic_load_n(&sp->stop, __ATOMIC_ACQUIRE)
	    && pthread_cond_timedwait(&sp->wake, &sp->wakeLock, &ts)
		!= ETIMEDOUT
	    && TpNowNs() < at) {
	/* Woken early (spuriously, or by the stop, which the loop sees). */
    }
    pthread_mutex_unlock(&sp->wakeLock);
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
    uint64_t next, now, lastDrain, lastProgress, start, lastScan = 0;
    uint64_t sleepNs = sp->clock != TP_CLOCK_WALL ? TP_DRAIN_NS
	    : sp->tick ? sp->lookNs : sp->periodNs;
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

	SleepUntil(sp, next);
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
		if (!sp->tick) {
		    __atomic_add_fetch(&sp->ring->missed, ticks - 1,
			    __ATOMIC_ACQ_REL);
		}
	    }
	    if (sp->tick) {
		uint64_t off = OffCpu(sp, &sp->off, now);

		/*
		 * Its running time is the timer's. Once profiler stop has
		 * begun, the thread waits for this one in pthread_join: a
		 * debt sent now would be sampled there, in the stop, not
		 * where it was run up. It is counted as missed instead.
		 */

		if (off > 0 && __atomic_load_n(&sp->stop, __ATOMIC_ACQUIRE)) {
		    sp->off.offNs += off * sp->periodNs;
		} else if (off > 0) {
		    __atomic_add_fetch(&sp->ring->pending, off,
			    __ATOMIC_ACQ_REL);
		    pthread_kill(sp->target, SIGPROF);
		}
	    } else {
		__atomic_add_fetch(&sp->ring->pending, 1, __ATOMIC_ACQ_REL);
		pthread_kill(sp->target, SIGPROF);
	    }
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
	} else if (sp->tick) {
	    sp->offs[i].live = 0;
	    ThreadTimer(sp, i);
	    if (sp->haveTimers[i] && !OffCpuInit(&sp->offs[i],
		    ThreadClock(ts->tid), ts->tid)) {
		timer_delete(sp->timers[i]);	/* Signalled at every */
		sp->haveTimers[i] = 0;		/* deadline instead. */
	    }
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
    clockid_t clock = ThreadClock(ts->tid);
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
	if (sp->tick && sp->offs[i].live) {
	    uint64_t off = OffCpu(sp, &sp->offs[i], TpNowNs());

	    if (off == 0) {
		continue;	/* Running: its timer samples it. */
	    }
	    __atomic_add_fetch(&ts->ring->pending, off, __ATOMIC_ACQ_REL);
	} else {
	    /* -oncpu tick looks every few intervals: each look is that many. */
	    uint64_t per = sp->tick ? sp->lookNs / sp->periodNs : 1;

	    if (ticks > 1) {
		__atomic_add_fetch(&ts->ring->missed, (ticks - 1) * per,
			__ATOMIC_ACQ_REL);
	    }
	    __atomic_add_fetch(&ts->ring->pending, per, __ATOMIC_ACQ_REL);
	}
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
