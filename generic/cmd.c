/*
 * cmd.c --
 *
 *	The `profiler` ensemble: argument parsing and dispatch only. Each
 *	subcommand is one ObjCmd; the computing modules never see objv.
 *
 *	Every error carries an -errorcode starting with TCLPROF, including
 *	the usage errors that Tcl_WrongNumArgs and Tcl_GetIndexFromObj
 *	produce (their TCL ... codes are replaced).
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static Tcl_ObjCmdProc AtexitCmd, LoadCmd, SaveCmd, SourceCmd, SendDumpCmd;
static Tcl_ObjCmdProc ProfilerCmd, CallsCmd, ExportCmd, StartCmd, StopCmd, ResetCmd,
	StatusCmd, ReportCmd, DumpCmd, TopCmd, ThreadsCmd;

/*
 * The ensemble's table ({name, proc}, as Tk's TkMakeEnsemble).
 */

static const struct {
    const char *name;
    Tcl_ObjCmdProc *proc;
} subcommands[] = {
    {"atexit", AtexitCmd},
    {"calls", CallsCmd},
    {"dump", DumpCmd},
    {"export", ExportCmd},
    {"load", LoadCmd},
    {"report", ReportCmd},
    {"reset", ResetCmd},
    {"save", SaveCmd},
    {"source", SourceCmd},
    {"start", StartCmd},
    {"status", StatusCmd},
    {"stop", StopCmd},
    {"threads", ThreadsCmd},
    {"top", TopCmd},
    {NULL, NULL}
};

/*
 *----------------------------------------------------------------------
 *
 * WrongArgs, BadIndex --
 *
 *	Usage errors with TCLPROF error codes.
 *
 * Results:
 *	TCL_ERROR.
 *
 * Side effects:
 *	Sets the interp result and error code.
 *
 *----------------------------------------------------------------------
 */

static int
WrongArgs(
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[],
    const char *msg)
{
    const char *sub = Tcl_GetString(objv[0]);

    /*
     * objv[0] is the subcommand word (from ProfilerCmd) or the direct
     * ::tclprof::<sub> command name; either way the user is told the
     * documented form.
     */

    (void) objc;
    if (strncmp(sub, "::tclprof::", 11) == 0) {
	sub += 11;
    }
    Tcl_SetObjResult(interp, Tcl_ObjPrintf(
	    "wrong # args: should be \"profiler %s%s%s\"", sub,
	    msg ? " " : "", msg ? msg : ""));
    Tcl_SetErrorCode(interp, "TCLPROF", "USAGE", "WRONGARGS", NULL);
    return TCL_ERROR;
}

static int
GetIndex(
    Tcl_Interp *interp,
    Tcl_Obj *obj,
    const char *const *table,
    const char *what,
    const char *code1,
    const char *code2,
    int *indexPtr)
{
    if (Tcl_GetIndexFromObj(interp, obj, table, what, 0, indexPtr)
	    != TCL_OK) {
	Tcl_SetErrorCode(interp, "TCLPROF", code1, code2, NULL);
	return TCL_ERROR;
    }
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * GetIntInRange --
 *
 *	Parses an integer option value and checks its range.
 *
 * Results:
 *	TCL_OK, or TCL_ERROR with {TCLPROF VALUE code}.
 *
 * Side effects:
 *	Sets *valuePtr.
 *
 *----------------------------------------------------------------------
 */

static int
GetIntInRange(
    Tcl_Interp *interp,
    Tcl_Obj *obj,
    const char *option,
    const char *code,
    int min,
    int max,
    int *valuePtr)
{
    Tcl_WideInt w;

    if (Tcl_GetWideIntFromObj(NULL, obj, &w) != TCL_OK || w < min || w > max) {
	TpSetError(interp, "VALUE", code,
		"bad value \"%s\" for %s: must be an integer from %d to %d",
		Tcl_GetString(obj), option, min, max);
	return TCL_ERROR;
    }
    *valuePtr = (int) w;
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * GetBytes --
 *
 *	Parses a size in bytes: an integer, optionally followed by k or M
 *	(binary units: 64k is 65536), and checks its range.
 *
 * Results:
 *	TCL_OK, or TCL_ERROR with {TCLPROF VALUE code}.
 *
 * Side effects:
 *	Sets *valuePtr.
 *
 *----------------------------------------------------------------------
 */

static int
GetBytes(
    Tcl_Interp *interp,
    Tcl_Obj *obj,
    const char *option,
    const char *code,
    int min,
    int max,
    int *valuePtr)
{
    int len;
    const char *str = TpObjString(obj, &len);
    Tcl_WideInt w = -1, unit = 1;
    Tcl_Obj *num;

    if (len > 1 && strchr("kKmM", str[len - 1]) != NULL) {
	unit = (str[len - 1] == 'k' || str[len - 1] == 'K') ? 1024 : 1048576;
	len--;
    }
    num = Tcl_NewStringObj(str, len);
    Tcl_IncrRefCount(num);
    if (Tcl_GetWideIntFromObj(NULL, num, &w) != TCL_OK || w < 0
	    || w > (Tcl_WideInt) max / unit || w * unit < min) {
	w = -1;
    }
    Tcl_DecrRefCount(num);
    if (w < 0) {
	TpSetError(interp, "VALUE", code,
		"bad value \"%s\" for %s: must be a size in bytes from %dk to"
		" %dM (an integer, optionally followed by k or M)",
		Tcl_GetString(obj), option, min / 1024, max / 1048576);
	return TCL_ERROR;
    }
    *valuePtr = (int) (w * unit);
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * GetSeconds --
 *
 *	Parses a duration in seconds (above 0, at most a day) for -keep and
 *	-last.
 *
 * Results:
 *	TCL_OK, or TCL_ERROR with {TCLPROF VALUE code}.
 *
 * Side effects:
 *	Sets *nsPtr.
 *
 *----------------------------------------------------------------------
 */

static int
GetSeconds(
    Tcl_Interp *interp,
    Tcl_Obj *obj,
    const char *option,
    const char *code,
    uint64_t *nsPtr)
{
    double seconds;

    if (Tcl_GetDoubleFromObj(NULL, obj, &seconds) != TCL_OK
	    || !(seconds > 0) || seconds > 86400) {
	TpSetError(interp, "VALUE", code, "bad value \"%s\" for %s: must be "
		"a number of seconds above 0, at most 86400",
		Tcl_GetString(obj), option);
	return TCL_ERROR;
    }
    *nsPtr = (uint64_t) (seconds * 1e9);
    return TCL_OK;
}

/*
 * The dump signals' names (-dumpsignal, ::tclprof::SendDump) and numbers.
 */

static const char *const dumpSignals[] = {
    "USR1", "USR2", "SIGUSR1", "SIGUSR2", NULL
};
static const int dumpSignos[] = { SIGUSR1, SIGUSR2, SIGUSR1, SIGUSR2 };

/*
 *----------------------------------------------------------------------
 *
 * TempDir --
 *
 *	Where a dump goes without -dumpfile, and where `tclprof dump PID`
 *	looks for it (bin/tclprof's DumpDir says the same): $TMPDIR, else
 *	on Windows $TEMP or $TMP, else /tmp.
 *
 * Results:
 *	A directory name (static or from the environment).
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static const char *
TempDir(void)
{
    static const char *const names[] = {
	"TMPDIR",
#ifdef _WIN32
	"TEMP", "TMP",
#endif
	NULL
    };
    int i;

    for (i = 0; names[i] != NULL; i++) {
	const char *dir = getenv(names[i]);

	if (dir != NULL && dir[0] != '\0') {
	    return dir;
	}
    }
    return "/tmp";
}

/*
 *----------------------------------------------------------------------
 *
 * SendDumpCmd --
 *
 *	::tclprof::SendDump pid ?USR1|USR2?: asks a process profiled with
 *	that -dumpsignal (USR2 by default) to write its dump. On Unix it
 *	sends the signal; on Windows, which has no user signals, it sets
 *	the process's dump event. `tclprof dump PID` calls it.
 *
 * Results:
 *	A Tcl result: empty, or an error {TCLPROF DUMP ...}.
 *
 * Side effects:
 *	Signals another process.
 *
 *----------------------------------------------------------------------
 */

static int
SendDumpCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Tcl_WideInt pid;
    int sig = 1;
    Tcl_Obj *err = NULL;

    (void) cd;
    if (objc < 2 || objc > 3) {
	Tcl_WrongNumArgs(interp, 1, objv, "pid ?USR1|USR2?");
	Tcl_SetErrorCode(interp, "TCLPROF", "USAGE", "WRONGARGS", NULL);
	return TCL_ERROR;
    }
    if (Tcl_GetWideIntFromObj(NULL, objv[1], &pid) != TCL_OK || pid <= 0
	    || pid > 0x7fffffff) {
	TpSetError(interp, "VALUE", "PID", "bad pid \"%s\": must be a"
		" process id", Tcl_GetString(objv[1]));
	return TCL_ERROR;
    }
    if (objc == 3 && GetIndex(interp, objv[2], dumpSignals, "signal", "VALUE",
	    "SIGNAL", &sig) != TCL_OK) {
	return TCL_ERROR;
    }
    if (TpDumpSignalSend((long) pid, dumpSignos[sig], &err) != TCL_OK) {
	Tcl_SetObjResult(interp, err);
	Tcl_SetErrorCode(interp, "TCLPROF", "DUMP", "SEND", NULL);
	return TCL_ERROR;
    }
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * StartCmd --
 *
 *	Syntax: profiler start ?-interval us? ?-clock wall|cpu?
 *	                       ?-maxdepth n? ?-buffer bytes?
 *	                       ?-mode frames|trace|none? ?-duration s?
 *	                       ?-progress bool? ?-keep s?
 *	                       ?-dumpsignal USR1|USR2? ?-dumpfile path?
 *	                       ?-oncpu tick|sampler?
 *	        [0]      [1]   [2]        [3] ...
 *
 * Results:
 *	Standard Tcl result.
 *
 * Side effects:
 *	Starts sampling the calling thread.
 *
 *----------------------------------------------------------------------
 */

static int
StartCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    static const char *const options[] = {
	"-buffer", "-clock", "-dumpfile", "-dumpsignal", "-duration",
	"-instances", "-interval", "-keep", "-maxdepth", "-mode", "-oncpu",
	"-progress", "-threads", "-timeline", "-unwind", NULL
    };
    enum { OPT_BUFFER, OPT_CLOCK, OPT_DUMPFILE, OPT_DUMPSIGNAL, OPT_DURATION,
	OPT_INSTANCES, OPT_INTERVAL, OPT_KEEP, OPT_MAXDEPTH, OPT_MODE,
	OPT_ONCPU, OPT_PROGRESS, OPT_THREADS, OPT_TIMELINE, OPT_UNWIND };
    static const char *const oncpus[] = {"sampler", "tick", NULL};
    static const char *const threadSets[] = {"all", "current", NULL};
    Tcl_DString native;
    static const char *const unwinders[] = {
	"tables", "libunwind", "check", NULL
    };
    double seconds;
    static const char *const clocks[] = {"wall", "cpu", NULL};
    static const char *const modes[] = {"none", "frames", "trace", NULL};
    TpOptions o;
    int i, idx, value;

    (void) cd;
    TpOptionsDefault(&o);
    o.modeGiven = 0;
    for (i = 1; i < objc; i += 2) {
	if (GetIndex(interp, objv[i], options, "option", "USAGE", "OPTION",
		&idx) != TCL_OK) {
	    return TCL_ERROR;
	}
	if (i + 1 >= objc) {
	    TpSetError(interp, "USAGE", "VALUE", "missing value for %s",
		    options[idx]);
	    return TCL_ERROR;
	}
	switch (idx) {
	case OPT_BUFFER:
	    if (GetBytes(interp, objv[i + 1], "-buffer", "BUFFER",
		    TP_MIN_BUFFER, TP_MAX_BUFFER, &o.bufferBytes) != TCL_OK) {
		return TCL_ERROR;
	    }
	    break;
	case OPT_TIMELINE:
	    if (GetBytes(interp, objv[i + 1], "-timeline", "TIMELINE",
		    TP_MIN_TIMELINE, TP_MAX_TIMELINE, &o.timelineBytes)
		    != TCL_OK) {
		return TCL_ERROR;
	    }
	    break;
	case OPT_INSTANCES:
	    if (Tcl_GetIntFromObj(NULL, objv[i + 1], &o.instances) != TCL_OK
		    || o.instances < 0 || o.instances > 1000000) {
		TpSetError(interp, "VALUE", "INSTANCES", "bad value \"%s\" for "
			"-instances: must be a count from 0 (keep every name) "
			"to 1000000", Tcl_GetString(objv[i + 1]));
		return TCL_ERROR;
	    }
	    break;
	case OPT_CLOCK:
	    if (GetIndex(interp, objv[i + 1], clocks, "clock", "VALUE", "CLOCK",
		    &value) != TCL_OK) {
		return TCL_ERROR;
	    }
	    o.clock = (TpClock) value;
	    break;
	case OPT_DURATION:
	    if (Tcl_GetDoubleFromObj(NULL, objv[i + 1], &seconds) != TCL_OK
		    || !(seconds > 0) || seconds > 1e6) {
		TpSetError(interp, "VALUE", "DURATION", "bad value \"%s\" for "
			"-duration: must be a number of seconds above 0",
			Tcl_GetString(objv[i + 1]));
		return TCL_ERROR;
	    }
	    o.durationNs = (uint64_t) (seconds * 1e9);
	    break;
	case OPT_KEEP:
	    if (GetSeconds(interp, objv[i + 1], "-keep", "KEEP", &o.keepNs)
		    != TCL_OK) {
		return TCL_ERROR;
	    }
	    break;
	case OPT_DUMPSIGNAL:
	    if (GetIndex(interp, objv[i + 1], dumpSignals, "signal", "VALUE",
		    "SIGNAL", &value) != TCL_OK) {
		return TCL_ERROR;
	    }
	    o.dumpSignal = dumpSignos[value];
	    break;
	case OPT_DUMPFILE:
	    if (Tcl_TranslateFileName(interp, Tcl_GetString(objv[i + 1]),
		    &native) == NULL) {
		Tcl_SetErrorCode(interp, "TCLPROF", "VALUE", "DUMPFILE", NULL);
		return TCL_ERROR;
	    }
	    if (Tcl_DStringLength(&native) >= (int) sizeof(o.dumpFile)) {
		Tcl_DStringFree(&native);
		TpSetError(interp, "VALUE", "DUMPFILE", "bad value \"%s\" for "
			"-dumpfile: the path is too long",
			Tcl_GetString(objv[i + 1]));
		return TCL_ERROR;
	    }
	    strcpy(o.dumpFile, Tcl_DStringValue(&native));
	    Tcl_DStringFree(&native);
	    break;
	case OPT_PROGRESS:
	    if (Tcl_GetBooleanFromObj(NULL, objv[i + 1], &o.progress)
		    != TCL_OK) {
		TpSetError(interp, "VALUE", "PROGRESS", "bad value \"%s\" for "
			"-progress: must be a boolean",
			Tcl_GetString(objv[i + 1]));
		return TCL_ERROR;
	    }
	    break;
	case OPT_INTERVAL:
	    if (GetIntInRange(interp, objv[i + 1], "-interval", "INTERVAL",
		    TP_MIN_INTERVAL_US, TP_MAX_INTERVAL_US, &o.intervalUs)
		    != TCL_OK) {
		return TCL_ERROR;
	    }
	    break;
	case OPT_MAXDEPTH:
	    if (GetIntInRange(interp, objv[i + 1], "-maxdepth", "MAXDEPTH",
		    8, TP_MAX_DEPTH, &o.maxDepth) != TCL_OK) {
		return TCL_ERROR;
	    }
	    break;
	case OPT_MODE:
	    if (GetIndex(interp, objv[i + 1], modes, "mode", "VALUE", "MODE",
		    &value) != TCL_OK) {
		return TCL_ERROR;
	    }
	    o.mode = (TpMode) value;
	    o.modeGiven = 1;
	    break;
	case OPT_ONCPU:
	    if (GetIndex(interp, objv[i + 1], oncpus, "-oncpu value",
		    "VALUE", "ONCPU", &value) != TCL_OK) {
		return TCL_ERROR;
	    }
	    o.oncpuTick = value;
	    break;
	case OPT_THREADS:
	    if (GetIndex(interp, objv[i + 1], threadSets, "thread set",
		    "VALUE", "THREADS", &value) != TCL_OK) {
		return TCL_ERROR;
	    }
	    o.allThreads = (value == 0);
	    break;
	case OPT_UNWIND:
	    if (GetIndex(interp, objv[i + 1], unwinders, "unwinder", "VALUE",
		    "UNWIND", &value) != TCL_OK) {
		return TCL_ERROR;
	    }
	    o.unwinder = (TpUnwinder) value;
	    break;
	}
    }
    if (o.dumpSignal != 0 && o.dumpFile[0] == '\0') {
	/*
	 * Where `tclprof dump PID` looks by default.
	 */

	snprintf(o.dumpFile, sizeof(o.dumpFile), "%s/tclprof-%d.db",
		TempDir(), (int) getpid());
    }
    return TpSessionStart(interp, &o);
}

/*
 *----------------------------------------------------------------------
 *
 * StopCmd, ResetCmd, StatusCmd --
 *
 *	Syntax: profiler stop | profiler reset | profiler status
 *	        [0]      [1]
 *
 * Results:
 *	Standard Tcl result; status returns a dict.
 *
 * Side effects:
 *	See TpSessionStop, TpSessionReset.
 *
 *----------------------------------------------------------------------
 */

static int
StopCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    (void) cd;
    if (objc != 1) {
	return WrongArgs(interp, 1, objv, NULL);
    }
    return TpSessionStop(interp);
}

static int
ResetCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    (void) cd;
    if (objc != 1) {
	return WrongArgs(interp, 1, objv, NULL);
    }
    return TpSessionReset(interp);
}

static int
StatusCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    (void) cd;
    if (objc != 1) {
	return WrongArgs(interp, 1, objv, NULL);
    }
    Tcl_SetObjResult(interp, TpSessionStatus(interp));
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * ParseViewOption --
 *
 *	Parses one of the options that reports and exports share (how the
 *	stacks are viewed): -focus, -hide, -internals, -maxdepth, -sort,
 *	-threshold. objv[0] is the option, objv[1] its value.
 *
 * Results:
 *	1 if the option was one of them and its value is good, 0 if it is
 *	not one of them (nothing set), -1 on a bad value (error set).
 *
 * Side effects:
 *	Fills *ro.
 *
 *----------------------------------------------------------------------
 */

/*
 * -idle of report and export: the samples of waiting threads shown (the
 * default) or left out.
 */

static const char *const idleNames[] = {"show", "hide", NULL};

static const char *const viewOptions[] = {
    "-focus", "-hide", "-internals", "-maxdepth", "-sort", "-threshold", NULL
};
enum { VOPT_FOCUS, VOPT_HIDE, VOPT_INTERNALS, VOPT_MAXDEPTH, VOPT_SORT,
	VOPT_THRESHOLD };

static int
ParseViewOption(
    Tcl_Interp *interp,
    Tcl_Obj *const objv[],
    TpReportOptions *ro)
{
    static const char *const shows[] = {"hide", "show", NULL};
    static const char *const sorts[] = {"self", "total", "name", NULL};
    int idx, value;
    double pct;

    if (Tcl_GetIndexFromObj(NULL, objv[0], viewOptions, "option", 0, &idx)
	    != TCL_OK) {
	return 0;
    }
    switch (idx) {
    case VOPT_FOCUS:
	ro->focus = Tcl_GetString(objv[1]);
	break;
    case VOPT_HIDE:
	ro->hide = Tcl_GetString(objv[1]);
	break;
    case VOPT_INTERNALS:
	if (GetIndex(interp, objv[1], shows, "value", "VALUE", "INTERNALS",
		&ro->showInternals) != TCL_OK) {
	    return -1;
	}
	break;
    case VOPT_MAXDEPTH:
	if (GetIntInRange(interp, objv[1], "-maxdepth", "MAXDEPTH", 1,
		1000000, &ro->maxDepth) != TCL_OK) {
	    return -1;
	}
	break;
    case VOPT_SORT:
	if (GetIndex(interp, objv[1], sorts, "sort key", "VALUE", "SORT",
		&value) != TCL_OK) {
	    return -1;
	}
	ro->sort = value + TP_SORT_SELF;
	break;
    case VOPT_THRESHOLD:
	if (Tcl_GetDoubleFromObj(NULL, objv[1], &pct) != TCL_OK
		|| pct < 0 || pct > 100) {
	    TpSetError(interp, "VALUE", "THRESHOLD", "bad value \"%s\" for "
		    "-threshold: must be a percentage from 0 to 100",
		    Tcl_GetString(objv[1]));
	    return -1;
	}
	ro->thresholdPct = pct;
	break;
    }
    return 1;
}

/*
 * An unknown option: the message lists the command's own options and the
 * shared view options.
 */

static int
BadOption(
    Tcl_Interp *interp,
    Tcl_Obj *opt,
    const char *const *own)
{
    Tcl_Obj *msg = Tcl_ObjPrintf("bad option \"%s\": must be ",
	    Tcl_GetString(opt));
    const char *names[32];
    int n = 0, i, j;

    for (i = 0; own[i] != NULL; i++) {
	names[n++] = own[i];
    }
    for (i = 0; viewOptions[i] != NULL; i++) {
	names[n++] = viewOptions[i];
    }
    for (i = 1; i < n; i++) {	/* Insertion sort: the message is sorted. */
	const char *x = names[i];

	for (j = i; j > 0 && strcmp(names[j - 1], x) > 0; j--) {
	    names[j] = names[j - 1];
	}
	names[j] = x;
    }
    for (i = 0; i < n; i++) {
	Tcl_AppendPrintfToObj(msg, "%s%s", i == 0 ? "" : i == n - 1
		? ", or " : ", ", names[i]);
    }
    Tcl_SetObjResult(interp, msg);
    Tcl_SetErrorCode(interp, "TCLPROF", "USAGE", "OPTION", NULL);
    return TCL_ERROR;
}

/*
 * -minweight n (clusters, dot): the lightest call-graph edge kept.
 */

static int
GetMinWeight(
    Tcl_Interp *interp,
    Tcl_Obj *obj,
    TpReportOptions *ro)
{
    Tcl_WideInt w;

    if (Tcl_GetWideIntFromObj(NULL, obj, &w) != TCL_OK || w < 1) {
	TpSetError(interp, "VALUE", "MINWEIGHT", "bad value \"%s\" for "
		"-minweight: must be a positive integer", Tcl_GetString(obj));
	return TCL_ERROR;
    }
    ro->minWeight = w;
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * ParseSharedOption --
 *
 *	One "-option value" pair of report or export (objv[i], objv[i+1]):
 *	a view option, or one of the options both share (-thread, -idle,
 *	-minweight, -last), or one of the command's own options.
 *
 * Results:
 *	-1 on an error (in interp's result), 1 if the pair was taken, 0 if
 *	it is the command's own option options[*idxPtr].
 *
 * Side effects:
 *	Sets *ro or *w.
 *
 *----------------------------------------------------------------------
 */

typedef struct SharedArgs {
    Tcl_Obj *threadObj;		/* -thread, or NULL. */
    int hideIdle;		/* -idle hide. */
    uint64_t lastNs;		/* -last, 0 if none. */
} SharedArgs;

static int
ParseSharedOption(
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[],
    int i,
    const char *const options[],
    TpReportOptions *ro,
    SharedArgs *w,
    int *idxPtr)
{
    const char *name;
    int r;

    if (i + 1 >= objc) {
	if (Tcl_GetIndexFromObj(NULL, objv[i], options, "option", 0, idxPtr)
		!= TCL_OK && Tcl_GetIndexFromObj(NULL, objv[i], viewOptions,
		"option", 0, idxPtr) != TCL_OK) {
	    BadOption(interp, objv[i], options);
	    return -1;
	}
	TpSetError(interp, "USAGE", "VALUE", "missing value for %s",
		Tcl_GetString(objv[i]));
	return -1;
    }
    r = ParseViewOption(interp, objv + i, ro);
    if (r != 0) {
	return r < 0 ? -1 : 1;
    }
    if (Tcl_GetIndexFromObj(NULL, objv[i], options, "option", 0, idxPtr)
	    != TCL_OK) {
	BadOption(interp, objv[i], options);
	return -1;
    }
    name = options[*idxPtr];
    if (strcmp(name, "-thread") == 0) {
	w->threadObj = objv[i + 1];
    } else if (strcmp(name, "-idle") == 0) {
	if (GetIndex(interp, objv[i + 1], idleNames, "value", "VALUE", "IDLE",
		&w->hideIdle) != TCL_OK) {
	    return -1;
	}
    } else if (strcmp(name, "-minweight") == 0) {
	if (GetMinWeight(interp, objv[i + 1], ro) != TCL_OK) {
	    return -1;
	}
    } else if (strcmp(name, "-last") == 0) {
	if (GetSeconds(interp, objv[i + 1], "-last", "LAST", &w->lastNs)
		!= TCL_OK) {
	    return -1;
	}
    } else {
	return 0;
    }
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * ReportCmd --
 *
 *	Syntax: profiler report ?-format F? ?-as text|dict? ?-function pat?
 *	                        ?-source file? ?-all? ?-directed?
 *	                        ?-minweight n? ?-last s? ?view options?
 *	        [0]      [1]    [2]     [3] ...
 *
 *	F: text dict flat callers callees lines modules clusters.
 *	-directed (no value) and -minweight: clusters only. View options:
 *	-focus pat -hide pat -internals show|hide -maxdepth n -sort
 *	self|total|name -threshold pct. -all (no value): lines lists every
 *	line. -as dict: flat, callers, callees, lines, modules and clusters
 *	return Tcl values instead of text. -last s: the samples of the last
 *	s seconds only.
 *
 * Results:
 *	The report.
 *
 * Side effects:
 *	Drains the ring.
 *
 *----------------------------------------------------------------------
 */

enum { RF_TEXT, RF_DICT, RF_FLAT, RF_CALLERS, RF_CALLEES, RF_LINES,
	RF_MODULES, RF_CLUSTERS };

typedef struct ReportArgs {
    int format;
    TpReportOptions ro;
} ReportArgs;

static int
DoReport(
    Tcl_Interp *interp,
    TpProfile *p,
    void *cd)
{
    ReportArgs *a = cd;
    TpTree *t = TpTreeBuild(interp, p, &a->ro);
    TpView *v = TpViewBuild(t, p, &a->ro);
    TpNode *root = t->root;
    int code = TCL_OK;

    switch (a->format) {
    case RF_TEXT:
    case RF_DICT:
	if (a->ro.focus != NULL || a->ro.hide != NULL) {
	    t->root = TpViewTree(v, p);
	}
	code = a->format == RF_TEXT ? TpReportText(interp, p, t, &a->ro)
		: TpReportDict(interp, p, t, &a->ro);
	t->root = root;
	break;
    case RF_FLAT:
	code = TpReportFlat(interp, p, t, v, &a->ro);
	break;
    case RF_CALLERS:
    case RF_CALLEES:
	code = TpReportCallers(interp, p, t, v, &a->ro, a->format == RF_CALLEES);
	break;
    case RF_LINES:
	code = TpReportLines(interp, p, t, v, &a->ro);
	break;
    case RF_MODULES:
	code = TpReportModules(interp, p, t, &a->ro);
	break;
    case RF_CLUSTERS:
	code = TpReportClusters(interp, p, t, v, &a->ro);
	break;
    }
    TpViewFree(v);
    TpTreeFree(t);
    return code;
}

static int
ReportCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    static const char *const options[] = {
	"-all", "-as", "-directed", "-format", "-function", "-last",
	"-idle", "-minweight", "-source", "-thread", NULL
    };
    enum { OPT_ALL, OPT_AS, OPT_DIRECTED, OPT_FORMAT, OPT_FUNCTION,
	OPT_LAST, OPT_IDLE, OPT_MINWEIGHT, OPT_SOURCE, OPT_THREAD };
    SharedArgs w = {NULL, 0, 0};
    static const char *const formats[] = {
	"text", "dict", "flat", "callers", "callees", "lines", "modules",
	"clusters", NULL
    };
    static const char *const ases[] = {"text", "dict", NULL};
    ReportArgs a;
    int i, idx, r;

    (void) cd;
    memset(&a, 0, sizeof(a));
    for (i = 1; i < objc; i += 2) {
	if (Tcl_GetIndexFromObj(NULL, objv[i], options, "option", 0, &idx)
		== TCL_OK && (idx == OPT_ALL || idx == OPT_DIRECTED)) {
	    *(idx == OPT_ALL ? &a.ro.all : &a.ro.directed) = 1;
	    i--;
	    continue;
	}
	r = ParseSharedOption(interp, objc, objv, i, options, &a.ro, &w,
		&idx);
	if (r < 0) {
	    return TCL_ERROR;
	} else if (r > 0) {
	    continue;
	}
	switch (idx) {
	case OPT_AS:
	    if (GetIndex(interp, objv[i + 1], ases, "value", "VALUE", "AS",
		    &a.ro.asValue) != TCL_OK) {
		return TCL_ERROR;
	    }
	    break;
	case OPT_FORMAT:
	    if (GetIndex(interp, objv[i + 1], formats, "format", "VALUE",
		    "FORMAT", &a.format) != TCL_OK) {
		return TCL_ERROR;
	    }
	    break;
	case OPT_FUNCTION:
	    a.ro.function = Tcl_GetString(objv[i + 1]);
	    break;
	case OPT_SOURCE:
	    a.ro.source = Tcl_GetString(objv[i + 1]);
	    break;
	}
    }
    if ((a.ro.directed || a.ro.minWeight > 0) && a.format != RF_CLUSTERS) {
	TpSetError(interp, "USAGE", "OPTION", "-directed and -minweight "
		"need -format clusters");
	return TCL_ERROR;
    }
    if ((a.format == RF_CALLERS || a.format == RF_CALLEES)
	    && a.ro.function == NULL) {
	TpSetError(interp, "USAGE", "MISSING", "-format %s needs -function "
		"pattern", formats[a.format]);
	return TCL_ERROR;
    }
    return TpSessionWithThreads(interp, w.lastNs, w.threadObj, w.hideIdle,
	    DoReport, &a);
}

/*
 *----------------------------------------------------------------------
 *
 * ExportCmd --
 *
 *	Syntax: profiler export -format F ?-file path? ?-channel chan?
 *	                        ?-directed? ?-minweight n? ?-last s?
 *	                        ?view options?
 *	        [0]      [1]    [2]     [3] ...
 *
 *	F: callgrind chrome dot folded html pprof speedscope. -directed (no
 *	value) and -minweight: dot only. Exactly one of -file and -channel.
 *	-last: only the samples of the last s seconds. View options as for
 *	report (-sort and -threshold are accepted and do not change the
 *	file's content).
 *
 * Results:
 *	Empty; or an error, the profile unchanged and no file left.
 *
 * Side effects:
 *	Writes the file (atomically: a temporary name, then renamed) or
 *	writes to the channel.
 *
 *----------------------------------------------------------------------
 */

static int
ExportCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    static const char *const options[] = {
	"-channel", "-directed", "-file", "-format", "-idle", "-last",
	"-minweight", "-thread", NULL
    };
    enum { OPT_CHANNEL, OPT_DIRECTED, OPT_FILE, OPT_FORMAT, OPT_IDLE,
	OPT_LAST, OPT_MINWEIGHT, OPT_THREAD };
    SharedArgs w = {NULL, 0, 0};
    static const char *const formats[] = {
	"callgrind", "chrome", "dot", "folded", "html", "pprof", "speedscope",
	NULL
    };
    TpExportArgs a;
    int i, idx, r, haveFormat = 0;

    (void) cd;
    memset(&a, 0, sizeof(a));
    for (i = 1; i < objc; i += 2) {
	if (Tcl_GetIndexFromObj(NULL, objv[i], options, "option", 0, &idx)
		== TCL_OK && idx == OPT_DIRECTED) {
	    a.ro.directed = 1;
	    i--;
	    continue;
	}
	r = ParseSharedOption(interp, objc, objv, i, options, &a.ro, &w,
		&idx);
	if (r < 0) {
	    return TCL_ERROR;
	} else if (r > 0) {
	    continue;
	}
	switch (idx) {
	case OPT_CHANNEL:
	    a.channel = objv[i + 1];
	    break;
	case OPT_FILE:
	    a.file = objv[i + 1];
	    break;
	case OPT_FORMAT:
	    if (GetIndex(interp, objv[i + 1], formats, "format", "VALUE",
		    "FORMAT", &a.format) != TCL_OK) {
		return TCL_ERROR;
	    }
	    haveFormat = 1;
	    break;
	}
    }
    if (!haveFormat) {
	TpSetError(interp, "USAGE", "MISSING", "missing -format: must be "
		"callgrind, chrome, dot, folded, html, pprof, or speedscope");
	return TCL_ERROR;
    }
    if ((a.ro.directed || a.ro.minWeight > 0) && a.format != TP_EXPORT_DOT) {
	TpSetError(interp, "USAGE", "OPTION", "-directed and -minweight "
		"need -format dot");
	return TCL_ERROR;
    }
    if ((a.file == NULL) == (a.channel == NULL)) {
	TpSetError(interp, "USAGE", "MISSING", "give exactly one of -file "
		"path and -channel chan");
	return TCL_ERROR;
    }
    return TpSessionWithThreads(interp, w.lastNs, w.threadObj, w.hideIdle,
	    TpExport, &a);
}

/*
 *----------------------------------------------------------------------
 *
 * ThreadsCmd --
 *
 *	Syntax: profiler threads
 *	        [0]      [1]
 *
 * Results:
 *	The threads sampled, a list of {id name samples}: the kernel's
 *	thread id, the Thread package's id of it (thread::id) if it ran
 *	Tcl else its kernel name, and its samples.
 *
 * Side effects:
 *	Drains the ring.
 *
 *----------------------------------------------------------------------
 */

static int
ThreadsCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    (void) cd;
    if (objc != 1) {
	return WrongArgs(interp, objc, objv, NULL);
    }
    return TpSessionThreadList(interp);
}

/*
 *----------------------------------------------------------------------
 *
 * CallsCmd --
 *
 *	Syntax: profiler calls ?-edges?
 *	        [0]      [1]   [2]
 *
 * Results:
 *	Exact call counts from trace mode (empty in other modes).
 *
 * Side effects:
 *	Drains the ring.
 *
 *----------------------------------------------------------------------
 */

static int
DoCalls(
    Tcl_Interp *interp,
    TpProfile *p,
    void *cd)
{
    return TpReportCalls(interp, p, *(int *) cd);
}

static int
CallsCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    static const char *const options[] = {"-edges", NULL};
    int edges = 0, idx;

    (void) cd;
    if (objc > 2) {
	return WrongArgs(interp, 1, objv, "?-edges?");
    }
    if (objc == 2) {
	if (GetIndex(interp, objv[1], options, "option", "USAGE", "OPTION",
		&idx) != TCL_OK) {
	    return TCL_ERROR;
	}
	edges = 1;
    }
    return TpSessionWithProfile(interp, DoCalls, &edges);
}

/*
 *----------------------------------------------------------------------
 *
 * SaveCmd, LoadCmd, AtexitCmd --
 *
 *	Syntax: profiler save file
 *	        profiler load file ?file ...?
 *	        profiler atexit ?script?
 *	        [0]      [1]    [2]
 *
 * Results:
 *	save: the file name; load: the number of samples loaded (several
 *	files are summed); atexit: the script.
 *
 * Side effects:
 *	See TpSaveFile, TpLoadFiles, TpSaveAtExit (save.c).
 *
 *----------------------------------------------------------------------
 */

static int
SaveCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Tcl_DString native;
    int code;

    (void) cd;
    if (objc != 2) {
	return WrongArgs(interp, 1, objv, "file");
    }
    if (Tcl_TranslateFileName(interp, Tcl_GetString(objv[1]), &native)
	    == NULL) {
	Tcl_SetErrorCode(interp, "TCLPROF", "SAVE", "OPEN", NULL);
	return TCL_ERROR;
    }
    code = TpSaveFile(interp, Tcl_DStringValue(&native), 0);
    Tcl_DStringFree(&native);
    if (code == TCL_OK) {
	Tcl_SetObjResult(interp, objv[1]);
    }
    return code;
}

/*
 *----------------------------------------------------------------------
 *
 * DumpCmd --
 *
 *	Syntax: profiler dump ?-last s? file
 *	        [0]      [1]  [2]   [3] [4]
 *
 *	The flight recorder's output: saves (as profiler save) the samples
 *	of the last s seconds, or of the -keep window, or all.
 *
 * Results:
 *	The file name.
 *
 * Side effects:
 *	Writes the file (temporary name, then renamed).
 *
 *----------------------------------------------------------------------
 */

static int
DumpCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    static const char *const options[] = {"-last", NULL};
    Tcl_DString native;
    uint64_t lastNs = 0;
    int code, idx;

    (void) cd;
    if (objc != 2 && objc != 4) {
	return WrongArgs(interp, 1, objv, "?-last seconds? file");
    }
    if (objc == 4) {
	if (GetIndex(interp, objv[1], options, "option", "USAGE", "OPTION",
		&idx) != TCL_OK || GetSeconds(interp, objv[2], "-last", "LAST",
		&lastNs) != TCL_OK) {
	    return TCL_ERROR;
	}
    }
    if (Tcl_TranslateFileName(interp, Tcl_GetString(objv[objc - 1]),
	    &native) == NULL) {
	Tcl_SetErrorCode(interp, "TCLPROF", "SAVE", "OPEN", NULL);
	return TCL_ERROR;
    }
    code = TpSaveFile(interp, Tcl_DStringValue(&native), lastNs);
    Tcl_DStringFree(&native);
    if (code == TCL_OK) {
	Tcl_SetObjResult(interp, objv[objc - 1]);
    }
    return code;
}

static int
LoadCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    (void) cd;
    if (objc < 2) {
	return WrongArgs(interp, 1, objv, "file ?file ...?");
    }
    return TpLoadFiles(interp, objc - 1, objv + 1);
}

static int
AtexitCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    (void) cd;
    if (objc > 2) {
	return WrongArgs(interp, 1, objv, "?script?");
    }
    return TpSaveAtExit(interp, objc == 2 ? objv[1] : NULL);
}

/*
 *----------------------------------------------------------------------
 *
 * SourceCmd --
 *
 *	Syntax: profiler source file
 *	        [0]      [1]    [2]
 *
 *	Evaluates file in the current frame as tclsh evaluates its script
 *	(Tcl_FSEvalFileEx, not [source]'s NRE path, whose error trace lacks
 *	the enclosing command's "invoked from within" line), so that
 *	`tclprof record` shows a script's errors exactly as tclsh does.
 *
 * Results:
 *	The script's result.
 *
 * Side effects:
 *	Those of the script.
 *
 *----------------------------------------------------------------------
 */

static int
SourceCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    (void) cd;
    if (objc != 2) {
	return WrongArgs(interp, 1, objv, "file");
    }
    return Tcl_FSEvalFileEx(interp, objv[1], NULL);
}

/*
 *----------------------------------------------------------------------
 *
 * TopCmd --
 *
 *	Syntax: profiler top ?-every s? ?-rows n? ?-channel chan?
 *	        profiler top off
 *	        [0]      [1] [2]    [3] ...
 *
 *	The live view: while the profiler runs, every s seconds (default
 *	1), at the next command boundary or event, the screen is cleared
 *	and the n (default 20) functions with the most samples of their own
 *	over the last period are written to chan (default stderr, so that
 *	a program's stdout stays its own), with their share of the period
 *	and their self and total time since the start (py-spy top's view).
 *	The drawing is the Tcl procedure ::tclprof::TopShow below.
 *
 * Results:
 *	Empty.
 *
 * Side effects:
 *	Sets or clears the session's tick (TpSessionSetTick).
 *
 *----------------------------------------------------------------------
 */

static const char topScript[] =
"namespace eval ::tclprof {}\n"
"proc ::tclprof::TopShow {rows chan period} {\n"
"    set st [profiler status]\n"
"    set all [profiler report -format flat -as dict]\n"
"    set recent [profiler report -format flat -as dict -last $period]\n"
"    set n 0\n"
"    foreach d $recent {incr n [dict get $d self]}\n"
"    set cum {}\n"
"    foreach d $all {\n"
"        dict set cum [dict get $d name] [list [dict get $d self] [dict get $d total]]\n"
"    }\n"
"    set sec [expr {[dict get $st intervalUs] / 1e6}]\n"
"    set out \"\\033\\[H\\033\\[2J\"\n"
"    append out [format {tclprof top: %d samples in %.1f s, %d in the last %g s, %d dropped} \\\n"
"        [dict get $st samples] [expr {[dict get $st elapsedUs] / 1e6}] $n $period \\\n"
"        [dict get $st dropped]] \\n\\n\n"
"    append out [format {%6s %7s %9s %9s  %s} %Own %Total OwnTime TotalTime Function] \\n\n"
"    set shown 0\n"
"    foreach d [lsort -integer -decreasing -index 1 [lmap d $recent {\n"
"        list [dict get $d name] [dict get $d self] [dict get $d total]\n"
"    }]] {\n"
"        lassign $d name self total\n"
"        if {$self == 0 || [incr shown] > $rows} break\n"
"        lassign [expr {[dict exists $cum $name] ? [dict get $cum $name] : {0 0}}] cs ct\n"
"        append out [format {%5.1f%% %6.1f%% %8.2fs %8.2fs  %s} \\\n"
"            [expr {100.0 * $self / max($n, 1)}] [expr {100.0 * $total / max($n, 1)}] \\\n"
"            [expr {$cs * $sec}] [expr {$ct * $sec}] $name] \\n\n"
"    }\n"
"    puts -nonewline $chan $out\n"
"    flush $chan\n"
"}\n";

static int
TopCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    static const char *const options[] = {
	"-channel", "-every", "-rows", NULL
    };
    enum { OPT_CHANNEL, OPT_EVERY, OPT_ROWS };
    Tcl_Obj *chan = NULL, *script;
    uint64_t everyNs = 1000000000u;
    int rows = 20, i, idx, mode;
    char period[32];

    (void) cd;
    if (objc == 2 && strcmp(Tcl_GetString(objv[1]), "off") == 0) {
	return TpSessionSetTick(interp, NULL, 0);
    }
    if (objc % 2 != 1) {
	return WrongArgs(interp, 1, objv,
		"?-every seconds? ?-rows n? ?-channel chan? | off");
    }
    for (i = 1; i < objc; i += 2) {
	if (GetIndex(interp, objv[i], options, "option", "USAGE", "OPTION",
		&idx) != TCL_OK) {
	    return TCL_ERROR;
	}
	switch (idx) {
	case OPT_CHANNEL:
	    if (Tcl_GetChannel(interp, Tcl_GetString(objv[i + 1]), &mode)
		    == NULL) {
		Tcl_SetErrorCode(interp, "TCLPROF", "VALUE", "CHANNEL", NULL);
		return TCL_ERROR;
	    }
	    if (!(mode & TCL_WRITABLE)) {
		TpSetError(interp, "VALUE", "CHANNEL", "channel \"%s\" wasn't "
			"opened for writing", Tcl_GetString(objv[i + 1]));
		return TCL_ERROR;
	    }
	    chan = objv[i + 1];
	    break;
	case OPT_EVERY:
	    if (GetSeconds(interp, objv[i + 1], "-every", "EVERY", &everyNs)
		    != TCL_OK) {
		return TCL_ERROR;
	    }
	    break;
	case OPT_ROWS:
	    if (GetIntInRange(interp, objv[i + 1], "-rows", "ROWS", 1, 1000,
		    &rows) != TCL_OK) {
		return TCL_ERROR;
	    }
	    break;
	}
    }
    if (!TpSessionRunning(interp)) {
	TpSetError(interp, "STATE", "IDLE", "profiler is not running");
	return TCL_ERROR;
    }
    if (Tcl_Eval(interp, topScript) != TCL_OK) {
	return TCL_ERROR;
    }
    snprintf(period, sizeof(period), "%.17g", (double) everyNs / 1e9);
    script = Tcl_ObjPrintf("::tclprof::TopShow %d %s %s", rows,
	    chan != NULL ? Tcl_GetString(chan) : "stderr", period);
    Tcl_ResetResult(interp);
    return TpSessionSetTick(interp, script, everyNs);
}

/*
 *----------------------------------------------------------------------
 *
 * ProfilerCmd --
 *
 *	Syntax: profiler subcommand ?arg ...?
 *	        [0]      [1]        [2] ...
 *
 *	The ensemble's dispatcher, written out rather than made with
 *	Tcl_CreateEnsemble: an ensemble reports a missing subcommand with
 *	the code {TCL WRONGARGS} and never calls its -unknown handler, and
 *	every error of ours carries a TCLPROF code.
 *
 * Results:
 *	The subcommand's.
 *
 * Side effects:
 *	The subcommand's.
 *
 *----------------------------------------------------------------------
 */

static int
ProfilerCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Tcl_Obj *msg;
    int i, idx;

    if (objc < 2) {
	Tcl_SetObjResult(interp, Tcl_NewStringObj(
		"wrong # args: should be \"profiler subcommand ?arg ...?\"", -1));
	Tcl_SetErrorCode(interp, "TCLPROF", "USAGE", "WRONGARGS", NULL);
	return TCL_ERROR;
    }
    if (Tcl_GetIndexFromObjStruct(NULL, objv[1], subcommands,
	    sizeof(subcommands[0]), "subcommand", TCL_EXACT, &idx) == TCL_OK) {
	return subcommands[idx].proc(cd, interp, objc - 1, objv + 1);
    }
    msg = Tcl_ObjPrintf("unknown subcommand \"%s\": must be ",
	    Tcl_GetString(objv[1]));
    for (i = 0; subcommands[i].name != NULL; i++) {
	Tcl_AppendPrintfToObj(msg, "%s%s", i == 0 ? ""
		: subcommands[i + 1].name == NULL ? ", or " : ", ",
		subcommands[i].name);
    }
    Tcl_SetObjResult(interp, msg);
    Tcl_SetErrorCode(interp, "TCLPROF", "USAGE", "SUBCOMMAND", NULL);
    return TCL_ERROR;
}

/*
 *----------------------------------------------------------------------
 *
 * TpCmdCreate --
 *
 *	Creates ::tclprof::<sub> for each subcommand and the ::profiler
 *	ensemble over them.
 *
 * Results:
 *	Standard Tcl result.
 *
 * Side effects:
 *	Creates commands and a namespace.
 *
 *----------------------------------------------------------------------
 */

int
TpCmdCreate(
    Tcl_Interp *interp)
{
    int i;

    if (Tcl_FindNamespace(interp, "::tclprof", NULL, 0) == NULL
	    && Tcl_CreateNamespace(interp, "::tclprof", NULL, NULL) == NULL) {
	return TCL_ERROR;
    }
    for (i = 0; subcommands[i].name != NULL; i++) {
	Tcl_Obj *full = Tcl_ObjPrintf("::tclprof::%s", subcommands[i].name);

	Tcl_IncrRefCount(full);
	Tcl_CreateObjCommand(interp, Tcl_GetString(full), subcommands[i].proc,
		NULL, NULL);
	Tcl_DecrRefCount(full);
    }
    Tcl_CreateObjCommand(interp, "::profiler", ProfilerCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "::tclprof::SendDump", SendDumpCmd, NULL,
	    NULL);
    return TCL_OK;
}
