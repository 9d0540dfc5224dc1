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
#include <string.h>

static Tcl_ObjCmdProc AtexitCmd, LoadCmd, SaveCmd, SourceCmd;
static Tcl_ObjCmdProc CallsCmd, StartCmd, StopCmd, ResetCmd, StatusCmd, ReportCmd,
	UnknownCmd;

/*
 * The ensemble's table ({name, proc}, as Tk's TkMakeEnsemble).
 */

static const struct {
    const char *name;
    Tcl_ObjCmdProc *proc;
} subcommands[] = {
    {"atexit", AtexitCmd},
    {"calls", CallsCmd},
    {"load", LoadCmd},
    {"report", ReportCmd},
    {"reset", ResetCmd},
    {"save", SaveCmd},
    {"source", SourceCmd},
    {"start", StartCmd},
    {"status", StatusCmd},
    {"stop", StopCmd},
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
    Tcl_WrongNumArgs(interp, objc, objv, msg);
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
 * StartCmd --
 *
 *	Syntax: profiler start ?-interval us? ?-clock wall|cpu?
 *	                       ?-maxdepth n? ?-buffer samples?
 *	                       ?-mode frames|trace|none?
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
	"-buffer", "-clock", "-interval", "-maxdepth", "-mode", NULL
    };
    enum { OPT_BUFFER, OPT_CLOCK, OPT_INTERVAL, OPT_MAXDEPTH, OPT_MODE };
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
	    if (GetIntInRange(interp, objv[i + 1], "-buffer", "BUFFER",
		    TP_MIN_BUFFER, TP_MAX_BUFFER, &o.bufferSlots) != TCL_OK) {
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
	}
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
 * ReportCmd --
 *
 *	Syntax: profiler report ?-format text|dict? ?-internals show|hide?
 *	                        ?-maxdepth n? ?-threshold pct?
 *	        [0]      [1]    [2]     [3] ...
 *
 * Results:
 *	The report.
 *
 * Side effects:
 *	Drains the ring.
 *
 *----------------------------------------------------------------------
 */

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
    int code = a->format == 0 ? TpReportText(interp, p, t, &a->ro)
	    : TpReportDict(interp, p, t, &a->ro);

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
	"-format", "-internals", "-maxdepth", "-threshold", NULL
    };
    enum { OPT_FORMAT, OPT_INTERNALS, OPT_MAXDEPTH, OPT_THRESHOLD };
    static const char *const formats[] = {"text", "dict", NULL};
    static const char *const shows[] = {"hide", "show", NULL};
    ReportArgs a;
    int i, idx;
    double pct;

    (void) cd;
    memset(&a, 0, sizeof(a));
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
	case OPT_FORMAT:
	    if (GetIndex(interp, objv[i + 1], formats, "format", "VALUE",
		    "FORMAT", &a.format) != TCL_OK) {
		return TCL_ERROR;
	    }
	    break;
	case OPT_INTERNALS:
	    if (GetIndex(interp, objv[i + 1], shows, "value", "VALUE",
		    "INTERNALS", &a.ro.showInternals) != TCL_OK) {
		return TCL_ERROR;
	    }
	    break;
	case OPT_MAXDEPTH:
	    if (GetIntInRange(interp, objv[i + 1], "-maxdepth", "MAXDEPTH",
		    1, 1000000, &a.ro.maxDepth) != TCL_OK) {
		return TCL_ERROR;
	    }
	    break;
	case OPT_THRESHOLD:
	    if (Tcl_GetDoubleFromObj(NULL, objv[i + 1], &pct) != TCL_OK
		    || pct < 0 || pct > 100) {
		TpSetError(interp, "VALUE", "THRESHOLD", "bad value \"%s\" for "
			"-threshold: must be a percentage from 0 to 100",
			Tcl_GetString(objv[i + 1]));
		return TCL_ERROR;
	    }
	    a.ro.thresholdPct = pct;
	    break;
	}
    }
    return TpSessionWithProfile(interp, DoReport, &a);
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
    code = TpSaveFile(interp, Tcl_DStringValue(&native));
    Tcl_DStringFree(&native);
    if (code == TCL_OK) {
	Tcl_SetObjResult(interp, objv[1]);
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
 * UnknownCmd --
 *
 *	The ensemble's -unknown handler: an unknown subcommand is an error
 *	with a TCLPROF code (the ensemble's own would be TCL LOOKUP).
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
UnknownCmd(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Tcl_Obj *msg;
    int i;

    (void) cd;
    msg = Tcl_ObjPrintf("unknown or ambiguous subcommand \"%s\": must be ",
	    objc > 2 ? Tcl_GetString(objv[2]) : "");
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
    Tcl_Namespace *ns;
    Tcl_Command ens;
    Tcl_Obj *map = Tcl_NewDictObj(), *unknown;
    int i;

    ns = Tcl_FindNamespace(interp, "::tclprof", NULL, 0);
    if (ns == NULL) {
	ns = Tcl_CreateNamespace(interp, "::tclprof", NULL, NULL);
	if (ns == NULL) {
	    return TCL_ERROR;
	}
    }
    for (i = 0; subcommands[i].name != NULL; i++) {
	Tcl_Obj *full = Tcl_ObjPrintf("::tclprof::%s", subcommands[i].name);

	Tcl_CreateObjCommand(interp, Tcl_GetString(full), subcommands[i].proc,
		NULL, NULL);
	Tcl_DictObjPut(NULL, map, Tcl_NewStringObj(subcommands[i].name, -1),
		full);
    }
    Tcl_CreateObjCommand(interp, "::tclprof::Unknown", UnknownCmd, NULL, NULL);
    ens = Tcl_CreateEnsemble(interp, "::profiler", ns, 0);
    if (ens == NULL) {
	return TCL_ERROR;
    }
    Tcl_SetEnsembleMappingDict(interp, ens, map);
    unknown = Tcl_NewStringObj("::tclprof::Unknown", -1);
    Tcl_SetEnsembleUnknownHandler(interp, ens, unknown);
    return TCL_OK;
}
