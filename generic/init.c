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

/*
 * Process-wide: whether the exit handler is registered. Guarded by
 * initMutex.
 */

TCL_DECLARE_MUTEX(initMutex)
static int exitHandlerSet = 0;

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
 *	Creates the profiler ensemble and provides the package. The first
 *	time in a process, starts compiling the modules' unwind rows on a
 *	thread of their own (TpCfiWarm). Where Tcl's
 *	static library with local symbols is installed, registers it so that
 *	libtcl's static functions get names when internals are shown.
 *
 *----------------------------------------------------------------------
 */

int
Tclprof_Init(
    Tcl_Interp *interp)
{
    if (Tcl_InitStubs(interp, TCL_VERSION, 0) == NULL) {
	return TCL_ERROR;
    }
    if (TpCmdCreate(interp) != TCL_OK) {
	return TCL_ERROR;
    }
    Tcl_MutexLock(&initMutex);
    if (!exitHandlerSet) {
	Tcl_CreateExitHandler(TpSessionExitHandler, NULL);
	exitHandlerSet = 1;
	TpCfiWarm();		/* The first start's 5 ms, done meanwhile. */
    }
    Tcl_MutexUnlock(&initMutex);
#ifdef TCLPROF_STATIC_TCL
    if (TCLPROF_STATIC_TCL[0] != '\0') {
	TpSymbolSetArchive("libtcl8.6.so", TCLPROF_STATIC_TCL);
    }
#endif
    {
	uintptr_t lo, hi;

	TpInterpTclCode(&lo, &hi);
	TpSymbolSetTclRange(lo, hi);
    }
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
    if (Tcl_InitStubs(interp, TCL_VERSION, 0) == NULL) {
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
    if (TpSessionRunning(interp)) {
	Tcl_SetObjResult(interp, Tcl_NewStringObj(
		"cannot unload tclprof while the profiler is running", -1));
	Tcl_SetErrorCode(interp, "TCLPROF", "STATE", "RUNNING", NULL);
	return TCL_ERROR;
    }
    {
	Tcl_Namespace *ns = Tcl_FindNamespace(interp, "::tclprof", NULL, 0);

	if (ns != NULL) {
	    Tcl_DeleteNamespace(ns);
	}
    }
    Tcl_DeleteCommand(interp, "::profiler");
    if (flags == TCL_UNLOAD_DETACH_FROM_PROCESS) {
	Tcl_MutexLock(&initMutex);
	if (exitHandlerSet) {
	    Tcl_DeleteExitHandler(TpSessionExitHandler, NULL);
	    exitHandlerSet = 0;
	}
	Tcl_MutexUnlock(&initMutex);
    }
    return TCL_OK;
}
