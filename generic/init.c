/*
 * init.c --
 *
 *	Package entry points: Tclprof_Init (stubs, commands, package),
 *	Tclprof_SafeInit (refused: the profiler owns a process-wide signal),
 *	Tclprof_Unload.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"

MODULE_SCOPE int TpCmdCreate(Tcl_Interp *interp);

DLLEXPORT int Tclprof_Init(Tcl_Interp *interp);
DLLEXPORT int Tclprof_SafeInit(Tcl_Interp *interp);
DLLEXPORT int Tclprof_Unload(Tcl_Interp *interp, int flags);

/*
 *----------------------------------------------------------------------
 *
 * Tclprof_Init --
 *
 *	Initializes the package in interp.
 *
 * Results:
 *	Standard Tcl result.
 *
 * Side effects:
 *	Creates the profiler ensemble and provides the package. Where Tcl's
 *	static library with local symbols is installed, registers it so that
 *	libtcl's static functions get names when internals are shown.
 *
 *----------------------------------------------------------------------
 */

int
Tclprof_Init(
    Tcl_Interp *interp)
{
    if (Tcl_InitStubs(interp, "8.6", 0) == NULL) {
	return TCL_ERROR;
    }
    if (TpCmdCreate(interp) != TCL_OK) {
	return TCL_ERROR;
    }
#ifdef TCLPROF_STATIC_TCL
    if (TCLPROF_STATIC_TCL[0] != '\0') {
	TpSymbolSetArchive("libtcl8.6.so", TCLPROF_STATIC_TCL);
    }
#endif
    return Tcl_PkgProvideEx(interp, "tclprof", TCLPROF_VERSION, NULL);
}

/*
 *----------------------------------------------------------------------
 *
 * Tclprof_SafeInit --
 *
 *	Refuses to load into a safe interp: the profiler installs a signal
 *	handler for the whole process.
 *
 * Results:
 *	TCL_ERROR.
 *
 * Side effects:
 *	Sets the interp result.
 *
 *----------------------------------------------------------------------
 */

int
Tclprof_SafeInit(
    Tcl_Interp *interp)
{
    if (Tcl_InitStubs(interp, "8.6", 0) == NULL) {
	return TCL_ERROR;
    }
    Tcl_SetObjResult(interp, Tcl_NewStringObj(
	    "tclprof cannot be loaded into a safe interpreter: it installs "
	    "a process-wide signal handler", -1));
    Tcl_SetErrorCode(interp, "TCLPROF", "SAFE", NULL);
    return TCL_ERROR;
}

/*
 *----------------------------------------------------------------------
 *
 * Tclprof_Unload --
 *
 *	Unloading is refused while this interp's profiler runs: the handler
 *	and the sampler thread live in this library's code.
 *
 * Results:
 *	Standard Tcl result.
 *
 * Side effects:
 *	Deletes the ensemble and commands.
 *
 *----------------------------------------------------------------------
 */

int
Tclprof_Unload(
    Tcl_Interp *interp,
    int flags)
{
    (void) flags;
    if (TpSessionRunning(interp)) {
	Tcl_SetObjResult(interp, Tcl_NewStringObj(
		"cannot unload tclprof while the profiler is running", -1));
	Tcl_SetErrorCode(interp, "TCLPROF", "STATE", "RUNNING", NULL);
	return TCL_ERROR;
    }
    Tcl_DeleteNamespace(Tcl_FindNamespace(interp, "::tclprof", NULL, 0));
    Tcl_DeleteCommand(interp, "::profiler");
    return TCL_OK;
}
