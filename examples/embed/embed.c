/*
 * embed.c --
 *
 *	Embedding tclprof in an application with its own main(): create an
 *	interpreter, make tclprof findable, profile a script, save the
 *	profile and print the report. Build and run from the build tree:
 *
 *	    make embed
 *	    TCLLIBPATH=$PWD ./embed script.tcl profile.db
 *
 *	The application links libtcl (not the stubs library: it is the
 *	program that owns Tcl); tclprof itself is loaded by [package
 *	require], as any extension. Profiling covers every thread-safe use
 *	of this interp on this thread: tclprof samples the thread that ran
 *	[profiler start].
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include <tcl.h>
#include <stdio.h>
#include <stdlib.h>

/*
 * Run --
 *
 *	Evaluates one script, printing the error trace if it fails.
 *	Returns the Tcl completion code.
 */

static int
Run(
    Tcl_Interp *interp,
    const char *script)
{
    int code = Tcl_EvalEx(interp, script, -1, TCL_EVAL_GLOBAL);

    if (code != TCL_OK) {
	fprintf(stderr, "embed: %s\n", Tcl_GetVar(interp, "errorInfo",
		TCL_GLOBAL_ONLY));
    }
    return code;
}

int
main(
    int argc,
    char **argv)
{
    Tcl_Interp *interp;
    Tcl_Obj *cmd;
    int code;

    if (argc != 3) {
	fprintf(stderr, "usage: %s script.tcl profile.db\n", argv[0]);
	return 2;
    }
    Tcl_FindExecutable(argv[0]);
    interp = Tcl_CreateInterp();
    if (Tcl_Init(interp) != TCL_OK) {	/* auto_path, TCLLIBPATH. */
	fprintf(stderr, "embed: %s\n", Tcl_GetStringResult(interp));
	return 1;
    }
    if (Run(interp, "package require tclprof") != TCL_OK
	    || Run(interp, "profiler start") != TCL_OK) {
	return 1;
    }

    /*
     * The application's work. Here: a script file; a real application
     * would call into its own commands.
     */

    code = Tcl_EvalFile(interp, argv[1]);
    if (code != TCL_OK) {
	fprintf(stderr, "embed: %s\n", Tcl_GetVar(interp, "errorInfo",
		TCL_GLOBAL_ONLY));
    }

    cmd = Tcl_ObjPrintf("profiler stop; profiler save {%s}; "
	    "puts [profiler report -format text]", argv[2]);
    Tcl_IncrRefCount(cmd);
    if (Tcl_EvalObjEx(interp, cmd, TCL_EVAL_GLOBAL) != TCL_OK) {
	fprintf(stderr, "embed: %s\n", Tcl_GetStringResult(interp));
	code = TCL_ERROR;
    }
    Tcl_DecrRefCount(cmd);
    Tcl_DeleteInterp(interp);
    Tcl_Finalize();
    return code == TCL_OK ? 0 : 1;
}
