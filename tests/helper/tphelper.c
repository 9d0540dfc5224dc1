/*
 * tphelper.c --
 *
 *	A test-only extension for tclprof's test suite (package tphelper,
 *	loaded from the build directory by tests/common.tcl, never
 *	installed). Its commands burn CPU in named C functions, re-enter Tcl
 *	from C, block, fork and play with the SIGPROF disposition, so that
 *	the tests can assert which C and Tcl frames a sample must show.
 *
 *	Every function a test looks for by name is static, noinline and
 *	noclone (so it keeps its own frame and its own symbol), and every
 *	busy loop works on a volatile accumulator so the optimizer cannot
 *	remove it. Burns are measured in CPU time of the calling thread
 *	(CLOCK_THREAD_CPUTIME_ID; wall time on Windows, see BURN_CLOCK),
 *	read every BURN_CHECK iterations, so a burn of N ms gives N ms of
 *	samples to a CPU-clock profiler however loaded the machine is.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include <tcl.h>
#include <tclOO.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/types.h>
#ifndef _WIN32		/* tphelper::fork, ::sigprof, ::maskedspin: Unix only. */
#include <sys/wait.h>
#endif
#ifdef __GLIBC__
#include <malloc.h>		/* tphelper::mmapped. */
#endif

#define NOINLINE	__attribute__((noinline, noclone))

/*
 * Iterations of a busy loop between two reads of the clock, and steps of
 * arithmetic per iteration: about 0.2-0.4 ms of work per read. The thread
 * CPU clock is a real system call (the vDSO cannot serve it), about 1 us:
 * with less work per read, most samples would land in clock_gettime
 * rather than in the function that burns.
 */

#define BURN_CHECK	1000
#define BURN_STEPS	256

/*
 * Limit on any duration argument: one minute. Tests never need more, and
 * a typo must not hang the suite.
 */

#define MAX_MS		60000

/*
 * The accumulator every loop writes: volatile, so each iteration is a
 * real load and store.
 */

static volatile uint64_t sink;

/*
 * The clock the burns measure. Windows' thread CPU clock advances by the
 * scheduler's tick (10-15 ms) and its samples are taken on the wall
 * clock: there every burn, in C as in Tcl (reportwork.tcl), measures
 * wall time, so that the parts' shares hold however loaded the machine.
 */

#ifdef _WIN32
#define BURN_CLOCK	CLOCK_MONOTONIC
#else
#define BURN_CLOCK	CLOCK_THREAD_CPUTIME_ID
#endif

#ifndef _WIN32
/*
 * A SIGPROF handler that is not tclprof's, for the "foreign handler"
 * tests. It does nothing.
 */

static void
ForeignHandler(
    int sig)
{
    (void) sig;
}
#endif

/*
 *----------------------------------------------------------------------
 *
 * ClockNs --
 *
 *	Reads a clock.
 *
 * Results:
 *	The clock's value in nanoseconds.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static inline uint64_t
ClockNs(
    clockid_t clk)
{
    struct timespec ts;

    clock_gettime(clk, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/*
 *----------------------------------------------------------------------
 *
 * Spin --
 *
 *	Busy loop until clock clk has advanced by ns nanoseconds. Always
 *	inlined: the samples it gets belong to the named function it is
 *	written in, which is what the tests look for.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Burns CPU.
 *
 *----------------------------------------------------------------------
 */

static inline __attribute__((always_inline)) void
Spin(
    clockid_t clk,
    uint64_t ns)
{
    uint64_t end = ClockNs(clk) + ns;
    uint64_t acc = sink;
    int i, j;

    do {
	for (i = 0; i < BURN_CHECK; i++) {
	    for (j = 0; j < BURN_STEPS; j++) {
		acc = acc * 6364136223846793005u + 1442695040888963407u;
	    }
	    sink = acc;
	}
    } while (ClockNs(clk) < end);
}

/*
 *----------------------------------------------------------------------
 *
 * BurnLoop, InnerBurn, OuterBurn, WallSpin --
 *
 *	The named burners. BurnLoop and InnerBurn burn ms of thread CPU
 *	time in their own frame. OuterBurn burns ms in total: in rounds of
 *	20 ms, 10% in its own frame and 90% in InnerBurn, so a profile must
 *	show InnerBurn under OuterBurn holding about 90% of the samples.
 *	The rounds are long beside the work between two reads of the clock
 *	(BURN_CHECK), by which every burn overshoots: in rounds of 2 ms,
 *	OuterBurn's 0.2 ms took 0.39 ms of CPU time on a busy machine, 17%
 *	of the round.
 *	WallSpin busy-loops for ms of wall-clock time.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Burns CPU.
 *
 *----------------------------------------------------------------------
 */

static NOINLINE void
BurnLoop(
    int ms)
{
    Spin(BURN_CLOCK, (uint64_t) ms * 1000000u);
}

static NOINLINE void
InnerBurn(
    uint64_t ns)
{
    Spin(BURN_CLOCK, ns);
}

static NOINLINE void
OuterBurn(
    int ms)
{
    const uint64_t round = 20000000;	/* 20 ms */
    uint64_t end = ClockNs(BURN_CLOCK) + (uint64_t) ms * 1000000u;

    while (ClockNs(BURN_CLOCK) < end) {
	Spin(BURN_CLOCK, round / 10);
	InnerBurn(round - round / 10);
    }
}

static NOINLINE void
WallSpin(
    int ms)
{
    Spin(CLOCK_MONOTONIC, (uint64_t) ms * 1000000u);
}

/*
 *----------------------------------------------------------------------
 *
 * GetMs, GetMsArg --
 *
 *	Reads a duration in milliseconds, 0 to MAX_MS; GetMsArg, from the
 *	only argument of a command ("cmd ms").
 *
 * Results:
 *	TCL_OK and *msPtr set, or TCL_ERROR with a message.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static int
GetMs(
    Tcl_Interp *interp,
    Tcl_Obj *objPtr,
    int *msPtr)
{
    if (Tcl_GetIntFromObj(interp, objPtr, msPtr) != TCL_OK) {
	return TCL_ERROR;
    }
    if (*msPtr < 0 || *msPtr > MAX_MS) {
	Tcl_SetObjResult(interp, Tcl_ObjPrintf(
		"bad duration \"%s\": must be 0 to %d ms",
		Tcl_GetString(objPtr), MAX_MS));
	Tcl_SetErrorCode(interp, "TPHELPER", "VALUE", NULL);
	return TCL_ERROR;
    }
    return TCL_OK;
}

static int
GetMsArg(
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[],
    int *msPtr)
{
    if (objc != 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "ms");
	return TCL_ERROR;
    }
    return GetMs(interp, objv[1], msPtr);
}

/*
 *----------------------------------------------------------------------
 *
 * CBurnCmd, AltBurnCmd, Burn2Cmd, SpinCmd, CpuUsCmd --
 *
 *	tphelper::cburn ms: BurnLoop(ms).
 *	AltBurnCmd: the same, for two commands, tphelper::cburnalt ms and
 *	the math function hburn(ms) (client data not NULL: result 0), so
 *	that neither can be named from the objProc alone.
 *	tphelper::burn2 ms: OuterBurn(ms).
 *	tphelper::spin ms:  WallSpin(ms).
 *	tphelper::cpuus: the thread's CPU time in microseconds, for Tcl
 *	loops that burn a given CPU time (their shares then hold on a busy
 *	machine beside tphelper::cburn's).
 *
 * Results:
 *	A standard Tcl result, empty on success (cpuus: the time).
 *
 * Side effects:
 *	Burns CPU.
 *
 *----------------------------------------------------------------------
 */

static int
CBurnCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    int ms;

    /* Syntax: tphelper::cburn ms */
    if (GetMsArg(interp, objc, objv, &ms) != TCL_OK) {
	return TCL_ERROR;
    }
    BurnLoop(ms);
    return TCL_OK;
}

static int
AltBurnCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    int ms;

    /* Syntax: tphelper::cburnalt ms, or hburn(ms) in expr */
    if (GetMsArg(interp, objc, objv, &ms) != TCL_OK) {
	return TCL_ERROR;
    }
    BurnLoop(ms);
    if (cd != NULL) {
	Tcl_SetObjResult(interp, Tcl_NewIntObj(0));	/* A math function. */
    }
    return TCL_OK;
}

static int
Burn2Cmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    int ms;

    /* Syntax: tphelper::burn2 ms */
    if (GetMsArg(interp, objc, objv, &ms) != TCL_OK) {
	return TCL_ERROR;
    }
    OuterBurn(ms);
    return TCL_OK;
}

static int
SpinCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    int ms;

    /* Syntax: tphelper::spin ms */
    if (GetMsArg(interp, objc, objv, &ms) != TCL_OK) {
	return TCL_ERROR;
    }
    WallSpin(ms);
    return TCL_OK;
}

static int
CpuUsCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    (void) cd;
    /* Syntax: tphelper::cpuus */
    if (objc != 1) {
	Tcl_WrongNumArgs(interp, 1, objv, "");
	return TCL_ERROR;
    }
    Tcl_SetObjResult(interp, Tcl_NewWideIntObj((Tcl_WideInt)
	    (ClockNs(CLOCK_THREAD_CPUTIME_ID) / 1000u)));
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * EvalHelper --
 *
 *	Evaluates a script from a C frame of our own, so that a C function
 *	other than the command's objProc sits between the two trampolines.
 *	The work after the call keeps it from being a tail call.
 *
 * Results:
 *	The script's completion code.
 *
 * Side effects:
 *	Whatever the script does.
 *
 *----------------------------------------------------------------------
 */

static NOINLINE int
EvalHelper(
    Tcl_Interp *interp,
    Tcl_Obj *scriptPtr)
{
    int code;

    code = Tcl_EvalObjEx(interp, scriptPtr, 0);
    sink++;
    return code;
}

/*
 *----------------------------------------------------------------------
 *
 * CEvalCmd, CEvalNrCmd --
 *
 *	tphelper::ceval script:   Tcl_EvalObjEx from the objProc.
 *	tphelper::cevalnr script: the same through EvalHelper.
 *	Both re-enter Tcl from C (a new TclNRRunCallbacks frame).
 *
 * Results:
 *	The script's result and completion code.
 *
 * Side effects:
 *	Whatever the script does.
 *
 *----------------------------------------------------------------------
 */

static int
CEvalCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    /* Syntax: tphelper::ceval script
     *         [0]             [1] */
    if (objc != 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "script");
	return TCL_ERROR;
    }
    return Tcl_EvalObjEx(interp, objv[1], 0);
}

static int
CEvalNrCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    int code;

    /* Syntax: tphelper::cevalnr script
     *         [0]               [1] */
    if (objc != 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "script");
	return TCL_ERROR;
    }
    code = EvalHelper(interp, objv[1]);
    sink++;
    return code;
}

/*
 *----------------------------------------------------------------------
 *
 * NrEvalCmd, NrEvalNr --
 *
 *	tphelper::nreval script: an NR-enabled command
 *	(Tcl_NRCreateCommand) that evaluates its script with Tcl_NREvalObj,
 *	in the caller's trampoline: no C frame of it is on the stack while
 *	the script runs. NrEvalCmd is the objProc Tcl uses when the command
 *	is called from C.
 *
 * Results:
 *	The script's result and completion code.
 *
 * Side effects:
 *	Whatever the script does.
 *
 *----------------------------------------------------------------------
 */

static int
NrEvalNr(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    /* Syntax: tphelper::nreval script
     *         [0]              [1] */
    (void) cd;
    if (objc != 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "script");
	return TCL_ERROR;
    }
    return Tcl_NREvalObj(interp, objv[1], 0);
}

static int
NrEvalCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    return Tcl_NRCallObjProc(interp, NrEvalNr, cd, objc, objv);
}

/*
 *----------------------------------------------------------------------
 *
 * DirectCmd --
 *
 *	tphelper::direct cmd ?arg ...?: calls cmd's objProc from C, as some
 *	extensions do, without Tcl dispatching a command: for a proc, Tcl
 *	pushes its frame with no trace and no level of its own.
 *
 * Results:
 *	cmd's result and completion code.
 *
 * Side effects:
 *	Whatever cmd does.
 *
 *----------------------------------------------------------------------
 */

static int
DirectCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Tcl_CmdInfo info;
    int code;

    /* Syntax: tphelper::direct cmd ?arg ...?
     *         [0]              [1] [2...] */
    (void) cd;
    if (objc < 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "cmd ?arg ...?");
	return TCL_ERROR;
    }
    if (!Tcl_GetCommandInfo(interp, Tcl_GetString(objv[1]), &info)
	    || !info.isNativeObjectProc) {
	Tcl_SetObjResult(interp, Tcl_ObjPrintf(
		"\"%s\" is not a command with an objProc",
		Tcl_GetString(objv[1])));
	Tcl_SetErrorCode(interp, "TPHELPER", "DIRECT", NULL);
	return TCL_ERROR;
    }
    code = info.objProc(info.objClientData, interp, objc - 1, objv + 1);
    sink++;
    return code;
}

/*
 *----------------------------------------------------------------------
 *
 * SleepCmd --
 *
 *	tphelper::sleep ms: blocks in nanosleep for ms of wall time.
 *	nanosleep is never restarted by SA_RESTART: an interrupted sleep
 *	goes on with the time that remains.
 *
 * Results:
 *	A standard Tcl result, empty on success.
 *
 * Side effects:
 *	Blocks the thread.
 *
 *----------------------------------------------------------------------
 */

static int
SleepCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    struct timespec req;
    int ms;

    /* Syntax: tphelper::sleep ms */
    if (GetMsArg(interp, objc, objv, &ms) != TCL_OK) {
	return TCL_ERROR;
    }
    req.tv_sec = ms / 1000;
    req.tv_nsec = (long) (ms % 1000) * 1000000;
    while (nanosleep(&req, &req) != 0 && errno == EINTR) {
	/* Go on sleeping for what remains. */
    }
    return TCL_OK;
}

#ifndef _WIN32
/*
 *----------------------------------------------------------------------
 *
 * WaitChild, DispositionName --
 *
 *	WaitChild waits for child pid and sets the interp's result to its
 *	exit status, or "signal N". DispositionName names a signal's
 *	disposition: default, ignore, foreign (this helper's handler
 *	foreign), or handler (anybody else's).
 *
 * Results:
 *	WaitChild: a standard Tcl result. DispositionName: a static string.
 *
 * Side effects:
 *	WaitChild reaps the child.
 *
 *----------------------------------------------------------------------
 */

static int
WaitChild(
    Tcl_Interp *interp,
    pid_t pid)
{
    int status;

    while (waitpid(pid, &status, 0) < 0) {
	if (errno != EINTR) {
	    Tcl_SetObjResult(interp, Tcl_ObjPrintf("waitpid failed: %s",
		    Tcl_PosixError(interp)));
	    return TCL_ERROR;
	}
    }
    if (WIFEXITED(status)) {
	Tcl_SetObjResult(interp, Tcl_NewIntObj(WEXITSTATUS(status)));
    } else {
	Tcl_SetObjResult(interp, Tcl_ObjPrintf("signal %d", WTERMSIG(status)));
    }
    return TCL_OK;
}

static const char *
DispositionName(
    const struct sigaction *sa,
    void (*foreign)(int))
{
    if (sa->sa_flags & SA_SIGINFO) {
	return "handler";
    }
    if (sa->sa_handler == SIG_DFL) {
	return "default";
    }
    if (sa->sa_handler == SIG_IGN) {
	return "ignore";
    }
    return sa->sa_handler == foreign ? "foreign" : "handler";
}

/*
 *----------------------------------------------------------------------
 *
 * ForkCmd --
 *
 *	tphelper::fork ?childExit?
 *	Without argument: fork(); the child's pid in the parent, 0 in the
 *	child. With childExit: the child _exit()s at once with that status
 *	and the parent waits for it and returns its exit status (or
 *	"signal N"); this is the form the tests use, since a forked tclsh
 *	would flush the parent's pending output a second time.
 *
 * Results:
 *	See above; an error naming errno if fork or waitpid fails.
 *
 * Side effects:
 *	A new process.
 *
 *----------------------------------------------------------------------
 */

static int
ForkCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    int childExit = -1;
    pid_t pid;

    /* Syntax: tphelper::fork ?childExit?
     *         [0]            [1] */
    if (objc > 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "?childExit?");
	return TCL_ERROR;
    }
    if (objc == 2 && Tcl_GetIntFromObj(interp, objv[1], &childExit) != TCL_OK) {
	return TCL_ERROR;
    }
    pid = fork();
    if (pid < 0) {
	Tcl_SetObjResult(interp, Tcl_ObjPrintf("fork failed: %s",
		Tcl_PosixError(interp)));
	return TCL_ERROR;
    }
    if (pid == 0 && childExit >= 0) {
	_exit(childExit & 0xff);
    }
    if (childExit < 0) {
	Tcl_SetObjResult(interp, Tcl_NewWideIntObj((Tcl_WideInt) pid));
	return TCL_OK;
    }
    return WaitChild(interp, pid);
}

/*
 *----------------------------------------------------------------------
 *
 * SigprofCmd --
 *
 *	tphelper::sigprof ?default|ignore|foreign?
 *	Reports SIGPROF's current disposition (default, ignore, foreign:
 *	this helper's handler, or handler: anybody else's, i.e.
 *	tclprof's); with an argument, sets it first.
 *
 * Results:
 *	The disposition in force before the call.
 *
 * Side effects:
 *	May change SIGPROF's disposition for the whole process.
 *
 *----------------------------------------------------------------------
 */

static int
SigprofCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    static const char *const dispositions[] = {
	"default", "ignore", "foreign", NULL
    };
    enum { D_DEFAULT, D_IGNORE, D_FOREIGN };
    struct sigaction old, sa;
    int idx;

    /* Syntax: tphelper::sigprof ?disposition?
     *         [0]               [1] */
    if (objc > 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "?disposition?");
	return TCL_ERROR;
    }
    if (objc == 2) {
	if (Tcl_GetIndexFromObj(interp, objv[1], dispositions, "disposition",
		0, &idx) != TCL_OK) {
	    return TCL_ERROR;
	}
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sa.sa_handler = (idx == D_DEFAULT) ? SIG_DFL
		: (idx == D_IGNORE) ? SIG_IGN : ForeignHandler;
	if (sigaction(SIGPROF, &sa, &old) != 0) {
	    Tcl_SetObjResult(interp, Tcl_ObjPrintf("sigaction failed: %s",
		    Tcl_PosixError(interp)));
	    return TCL_ERROR;
	}
    } else if (sigaction(SIGPROF, NULL, &old) != 0) {
	Tcl_SetObjResult(interp, Tcl_ObjPrintf("sigaction failed: %s",
		Tcl_PosixError(interp)));
	return TCL_ERROR;
    }
    Tcl_SetObjResult(interp, Tcl_NewStringObj(
	    DispositionName(&old, ForeignHandler), -1));
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * SegvCmd, SegvExit --
 *
 *	tphelper::segv ?default|foreign|restore?
 *	Reports SIGSEGV's current disposition (default, ignore, foreign:
 *	SegvExit, which _exit()s with status 42, or handler: anybody
 *	else's); with an argument, sets it first (restore: the one found
 *	before the first change, e.g. a sanitizer's).
 *	tphelper::segv fault
 *	Forks a child that reads an unmapped address, waits for it, and
 *	returns its exit status, or "signal N".
 *
 * Results:
 *	See above.
 *
 * Side effects:
 *	May change SIGSEGV's disposition for the whole process; a child.
 *
 *----------------------------------------------------------------------
 */

static void
SegvExit(
    int sig)
{
    (void) sig;
    _exit(42);
}

static int
SegvCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    static const char *const actions[] = {
	"default", "foreign", "restore", "fault", NULL
    };
    enum { S_DEFAULT, S_FOREIGN, S_RESTORE, S_FAULT };
    static struct sigaction saved;
    static int haveSaved = 0;
    struct sigaction old, sa;
    int idx = -1;
    pid_t pid;

    /* Syntax: tphelper::segv ?action?
     *         [0]            [1] */
    if (objc > 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "?action?");
	return TCL_ERROR;
    }
    if (objc == 2 && Tcl_GetIndexFromObj(interp, objv[1], actions, "action",
	    0, &idx) != TCL_OK) {
	return TCL_ERROR;
    }
    if (idx == S_FAULT) {
	pid = fork();
	if (pid < 0) {
	    Tcl_SetObjResult(interp, Tcl_ObjPrintf("fork failed: %s",
		    Tcl_PosixError(interp)));
	    return TCL_ERROR;
	}
	if (pid == 0) {
	    volatile uintptr_t unmapped = 16;

	    (void) *(volatile int *) unmapped;
	    _exit(0);
	}
	return WaitChild(interp, pid);
    }
    if (idx >= 0) {
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = idx == S_DEFAULT ? SIG_DFL : SegvExit;
	if (sigaction(SIGSEGV, idx == S_RESTORE ? &saved : &sa, &old) != 0) {
	    Tcl_SetObjResult(interp, Tcl_ObjPrintf("sigaction failed: %s",
		    Tcl_PosixError(interp)));
	    return TCL_ERROR;
	}
	if (!haveSaved && idx != S_RESTORE) {
	    saved = old;
	    haveSaved = 1;
	}
    } else if (sigaction(SIGSEGV, NULL, &old) != 0) {
	Tcl_SetObjResult(interp, Tcl_ObjPrintf("sigaction failed: %s",
		Tcl_PosixError(interp)));
	return TCL_ERROR;
    }
    Tcl_SetObjResult(interp, Tcl_NewStringObj(
	    DispositionName(&old, SegvExit), -1));
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * MaskedSpinCmd, MaskedSpin --
 *
 *	tphelper::maskedspin ms
 *	Busy-loops for ms of wall-clock time in MaskedSpin with SIGPROF
 *	blocked in this thread, then unblocks it: the profiler's ticks of
 *	that time can only reach it as one late signal, taken in MaskedSpin
 *	when the mask is lifted, the way a thread that waited for a CPU
 *	takes its ticks.
 *
 * Results:
 *	A standard Tcl result, empty on success.
 *
 * Side effects:
 *	Burns CPU; changes the thread's signal mask for that time.
 *
 *----------------------------------------------------------------------
 */

static NOINLINE void
MaskedSpin(
    int ms)
{
    sigset_t set, old;

    sigemptyset(&set);
    sigaddset(&set, SIGPROF);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    WallSpin(ms);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    sink += 1;			/* The signal is taken before this. */
}

static int
MaskedSpinCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    int ms;

    (void) cd;
    /* Syntax: tphelper::maskedspin ms */
    if (GetMsArg(interp, objc, objv, &ms) != TCL_OK) {
	return TCL_ERROR;
    }
    MaskedSpin(ms);
    return TCL_OK;
}
#endif /* !_WIN32 */

#ifdef __GLIBC__
/*
 *----------------------------------------------------------------------
 *
 * MmappedCmd --
 *
 *	tphelper::mmapped kb: 1 if glibc's malloc serves a block of kb KB
 *	by a mapping of its own, 0 if from the heap. A block over the
 *	default mmap threshold (128 KB) comes from the heap only once
 *	something in the process freed a mapped block bigger than it: glibc
 *	then raises its mmap and trim thresholds for the whole process.
 *
 * Results:
 *	A standard Tcl result.
 *
 * Side effects:
 *	Gives the heap's free top back first (malloc_trim), so that only
 *	the threshold decides. Allocates and frees the block; freeing it,
 *	if mapped, raises the thresholds to its size: probe once per
 *	process.
 *
 *----------------------------------------------------------------------
 */

static int
MmappedCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    int kb;
    size_t before;
    void *p;
    int mapped;

    (void) cd;
    if (objc != 2 || Tcl_GetIntFromObj(interp, objv[1], &kb) != TCL_OK
	    || kb <= 0 || kb > 1024) {
	Tcl_WrongNumArgs(interp, 1, objv, "kb (1-1024)");
	return TCL_ERROR;
    }
    malloc_trim(0);		/* Else the heap's free top may serve it. */
    before = mallinfo2().hblks;
    p = malloc((size_t) kb * 1024);
    mapped = p != NULL && mallinfo2().hblks > before;
    free(p);
    Tcl_SetObjResult(interp, Tcl_NewBooleanObj(mapped));
    return TCL_OK;
}
#endif

/*
 *----------------------------------------------------------------------
 *
 * MethodCall, CMethodCmd --
 *
 *	TclOO methods written in C:
 *	  tphelper::cmethod class name      $obj name ms burns ms in
 *					    BurnLoop;
 *	  tphelper::cmethodeval class name  $obj name script evaluates
 *					    script from C (Tcl_EvalObjEx).
 *	MethodCall is both methods' callProc (client data NULL: burn).
 *
 * Results:
 *	A standard Tcl result.
 *
 * Side effects:
 *	CMethodCmd defines a method.
 *
 *----------------------------------------------------------------------
 */

static NOINLINE int
MethodCall(
    ClientData cd,
    Tcl_Interp *interp,
    Tcl_ObjectContext context,
    int objc,
    Tcl_Obj *const objv[])
{
    int skip = Tcl_ObjectContextSkippedArgs(context), ms, code;

    if (objc != skip + 1) {
	Tcl_WrongNumArgs(interp, skip, objv, cd ? "script" : "ms");
	return TCL_ERROR;
    }
    if (cd != NULL) {
	code = Tcl_EvalObjEx(interp, objv[skip], 0);
	sink++;
	return code;
    }
    if (GetMs(interp, objv[skip], &ms) != TCL_OK) {
	return TCL_ERROR;
    }
    BurnLoop(ms);
    sink++;
    return TCL_OK;
}

static const Tcl_MethodType burnMethodType = {
    TCL_OO_METHOD_VERSION_CURRENT, "tphelperBurn", MethodCall, NULL, NULL
};
static const Tcl_MethodType evalMethodType = {
    TCL_OO_METHOD_VERSION_CURRENT, "tphelperEval", MethodCall, NULL, NULL
};

static int
CMethodCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Tcl_Object o;
    Tcl_Class cls;

    /* Syntax: tphelper::cmethod class name
     *         [0]               [1]   [2] */
    if (objc != 3) {
	Tcl_WrongNumArgs(interp, 1, objv, "class name");
	return TCL_ERROR;
    }
    if ((o = Tcl_GetObjectFromObj(interp, objv[1])) == NULL) {
	return TCL_ERROR;
    }
    if ((cls = Tcl_GetObjectAsClass(o)) == NULL) {
	Tcl_SetObjResult(interp, Tcl_ObjPrintf("\"%s\" is not a class",
		Tcl_GetString(objv[1])));
	Tcl_SetErrorCode(interp, "TPHELPER", "CLASS", NULL);
	return TCL_ERROR;
    }
    Tcl_NewMethod(interp, cls, objv[2], 1,
	    cd ? &evalMethodType : &burnMethodType, cd);
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * CThreadBurnMain, CThreadTclMain, CThreadsCmd --
 *
 *	tphelper::cthreads ms script: two threads of C's own, not the
 *	Thread package's, both joined before the command returns. One only
 *	burns ms of its CPU time in BurnLoop (a thread that runs no Tcl);
 *	the other creates an interp of its own and evaluates script in it
 *	(a C extension's thread calling into Tcl, never told about
 *	tclprof).
 *
 * Results:
 *	The second thread's script result; an error if a thread cannot be
 *	started or the script fails.
 *
 * Side effects:
 *	Runs two threads.
 *
 *----------------------------------------------------------------------
 */

typedef struct CThreadArgs {
    int ms;
    char *script;		/* malloc'ed copy. */
    char *result;		/* malloc'ed by the thread. */
    int code;
} CThreadArgs;

static NOINLINE void *
CThreadBurnMain(
    void *arg)
{
    CThreadArgs *a = arg;

    BurnLoop(a->ms);
    return NULL;
}

static NOINLINE void *
CThreadTclMain(
    void *arg)
{
    CThreadArgs *a = arg;
    Tcl_Interp *interp = Tcl_CreateInterp();

    a->code = Tcl_EvalEx(interp, a->script, -1, TCL_EVAL_GLOBAL);
    a->result = strdup(Tcl_GetStringResult(interp));
    Tcl_DeleteInterp(interp);
    Tcl_FinalizeThread();
    return NULL;
}

static int
CThreadsCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CThreadArgs a;
    pthread_t burner, caller;

    (void) cd;
    if (objc != 3) {
	Tcl_WrongNumArgs(interp, 1, objv, "ms script");
	return TCL_ERROR;
    }
    memset(&a, 0, sizeof(a));
    if (GetMs(interp, objv[1], &a.ms) != TCL_OK) {
	return TCL_ERROR;
    }
    a.script = strdup(Tcl_GetString(objv[2]));
    if (pthread_create(&burner, NULL, CThreadBurnMain, &a) != 0) {
	free(a.script);
	Tcl_SetObjResult(interp, Tcl_NewStringObj("cannot start a thread", -1));
	return TCL_ERROR;
    }
    if (pthread_create(&caller, NULL, CThreadTclMain, &a) != 0) {
	pthread_join(burner, NULL);
	free(a.script);
	Tcl_SetObjResult(interp, Tcl_NewStringObj("cannot start a thread", -1));
	return TCL_ERROR;
    }
    pthread_join(burner, NULL);
    pthread_join(caller, NULL);
    free(a.script);
    Tcl_SetObjResult(interp, Tcl_NewStringObj(a.result ? a.result : "", -1));
    free(a.result);
    return a.code == TCL_OK ? TCL_OK : TCL_ERROR;
}

/*
 *----------------------------------------------------------------------
 *
 * Tphelper_Init --
 *
 *	Creates the tphelper::* commands and provides package tphelper.
 *
 * Results:
 *	A standard Tcl result.
 *
 * Side effects:
 *	New commands in namespace ::tphelper.
 *
 *----------------------------------------------------------------------
 */

DLLEXPORT int
Tphelper_Init(
    Tcl_Interp *interp)
{
    static const struct {
	const char *name;
	Tcl_ObjCmdProc *proc;
    } cmds[] = {
	{"::tphelper::cburn",	CBurnCmd},
	{"::tphelper::burn2",	Burn2Cmd},
	{"::tphelper::spin",	SpinCmd},
	{"::tphelper::cpuus",	CpuUsCmd},
	{"::tphelper::ceval",	CEvalCmd},
	{"::tphelper::cevalnr",	CEvalNrCmd},
	{"::tphelper::sleep",	SleepCmd},
#ifndef _WIN32
	{"::tphelper::fork",	ForkCmd},
	{"::tphelper::sigprof",	SigprofCmd},
	{"::tphelper::maskedspin",	MaskedSpinCmd},
	{"::tphelper::segv",	SegvCmd},
#endif
	{"::tphelper::direct",	DirectCmd},
#ifdef __GLIBC__
	{"::tphelper::mmapped",	MmappedCmd},
#endif
	{"::tphelper::cthreads",	CThreadsCmd},
	{NULL, NULL}
    };
    int i;

    if (Tcl_InitStubs(interp, "8.6-", 0) == NULL
	    || Tcl_OOInitStubs(interp) == NULL) {
	return TCL_ERROR;
    }
    for (i = 0; cmds[i].name != NULL; i++) {
	if (Tcl_CreateObjCommand(interp, cmds[i].name, cmds[i].proc, NULL,
		NULL) == NULL) {
	    return TCL_ERROR;
	}
    }
    if (Tcl_NRCreateCommand(interp, "::tphelper::nreval", NrEvalCmd,
	    NrEvalNr, NULL, NULL) == NULL
	    || Tcl_CreateObjCommand(interp, "::tphelper::cburnalt", AltBurnCmd,
		NULL, NULL) == NULL
	    || Tcl_CreateObjCommand(interp, "::tcl::mathfunc::hburn", AltBurnCmd,
		(ClientData) "math", NULL) == NULL
	    || Tcl_CreateObjCommand(interp, "::tphelper::cmethod", CMethodCmd,
		NULL, NULL) == NULL
	    || Tcl_CreateObjCommand(interp, "::tphelper::cmethodeval",
		CMethodCmd, (ClientData) "eval", NULL) == NULL) {
	return TCL_ERROR;
    }
    return Tcl_PkgProvideEx(interp, "tphelper", "1.0", NULL);
}
