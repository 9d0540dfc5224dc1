/*
 * tok2column.c --
 *
 *	The C half of tclprof's demo: the program of Figures 6 and 10 of the paper "Integrated Tcl/C call stacks",
 *	rebuilt. The command "tok2column lang col line" tokenizes an HDL
 *	source line and returns the token under column col. Its C function
 *	tclprim_tok2column first asks Tcl procs which language lang names
 *	(lang2lang_type evaluates ::MtiFS::IsVHDLLanguage, then
 *	::MtiFS::IsVerilogLanguage, as the paper's Figure 10 does), then
 *	tokenizes in HDLTextTok2Col. The point of the demo is that the
 *	language lookup, a round trip through Tcl, costs several times the
 *	tokenizing: only a profile where C and Tcl frames interleave in
 *	their calling order shows it.
 *
 *	The functions are static and noinline so they keep their frames and
 *	names in the profile; the library is built with symbols (-g).
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include <tcl.h>
#include <ctype.h>
#include <string.h>

#define NOINLINE	__attribute__((noinline, noclone))

/*
 * Language types lang2lang_type returns.
 */

enum {
    LANGUNKNOWN = 0,
    LANGVHDL = 1,
    LANGVERILOG = 2
};

/*
 *----------------------------------------------------------------------
 *
 * AskTcl --
 *
 *	Evaluates "proc lang" (a two-element list, so no quoting problem
 *	whatever lang holds) and reads the result as a boolean. Always
 *	inlined, so the profile shows lang2lang_type itself calling the
 *	procs, as in the paper's Figure 9.
 *
 * Results:
 *	1 if the proc returned true, 0 if false or on error.
 *
 * Side effects:
 *	Runs the proc; resets the interpreter's result.
 *
 *----------------------------------------------------------------------
 */

static inline __attribute__((always_inline)) int
AskTcl(
    Tcl_Interp *interp,
    const char *proc,
    const char *lang)
{
    Tcl_Obj *cmdPtr, *words[2];
    int code, yes = 0;

    words[0] = Tcl_NewStringObj(proc, -1);
    words[1] = Tcl_NewStringObj(lang, -1);
    cmdPtr = Tcl_NewListObj(2, words);
    Tcl_IncrRefCount(cmdPtr);
    code = Tcl_EvalObjEx(interp, cmdPtr, 0);
    Tcl_DecrRefCount(cmdPtr);
    if (code == TCL_OK && Tcl_GetBooleanFromObj(NULL, Tcl_GetObjResult(interp),
	    &yes) != TCL_OK) {
	yes = 0;
    }
    Tcl_ResetResult(interp);
    return yes;
}

/*
 *----------------------------------------------------------------------
 *
 * lang2lang_type --
 *
 *	Maps a language name to a LANG* type by asking the Tcl procs
 *	::MtiFS::IsVHDLLanguage and ::MtiFS::IsVerilogLanguage, in that
 *	order (Figure 10 of that paper).
 *
 * Results:
 *	LANGVHDL, LANGVERILOG or LANGUNKNOWN.
 *
 * Side effects:
 *	Runs Tcl procs.
 *
 *----------------------------------------------------------------------
 */

static NOINLINE int
lang2lang_type(
    Tcl_Interp *interp,
    const char *lang)
{
    if (AskTcl(interp, "::MtiFS::IsVHDLLanguage", lang)) {
	return LANGVHDL;
    }
    if (AskTcl(interp, "::MtiFS::IsVerilogLanguage", lang)) {
	return LANGVERILOG;
    }
    return LANGUNKNOWN;
}

/*
 *----------------------------------------------------------------------
 *
 * HDLTextTok2Col --
 *
 *	Splits line into tokens by the rules of language type: identifiers
 *	(Verilog also allows '$' after the first character; VHDL does not
 *	allow a leading '_'), numbers, and one-character operators; a
 *	comment ("//" in Verilog, "--" in VHDL) ends the line. Returns the
 *	token that covers column col (0-based).
 *
 * Results:
 *	The list {index start end text} of that token (end exclusive), or
 *	an empty list if col falls on white space, in a comment or past
 *	the end.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static NOINLINE Tcl_Obj *
HDLTextTok2Col(
    int type,
    int col,
    const char *line,
    int length)
{
    int i = 0, start, index = 0;
    Tcl_Obj *items[4];

    while (i < length) {
	unsigned char c = (unsigned char) line[i];

	if (isspace(c)) {
	    i++;
	    continue;
	}
	if (i + 1 < length && ((type == LANGVERILOG && c == '/' && line[i+1] == '/')
		|| (type == LANGVHDL && c == '-' && line[i+1] == '-'))) {
	    break;
	}
	start = i;
	if (isalpha(c) || (c == '_' && type != LANGVHDL)) {
	    while (i < length && (isalnum((unsigned char) line[i])
		    || line[i] == '_'
		    || (type == LANGVERILOG && line[i] == '$'))) {
		i++;
	    }
	} else if (isdigit(c)) {
	    while (i < length && (isalnum((unsigned char) line[i])
		    || line[i] == '_' || line[i] == '.' || line[i] == '\'')) {
		i++;
	    }
	} else {
	    i++;
	}
	if (col >= start && col < i) {
	    items[0] = Tcl_NewIntObj(index);
	    items[1] = Tcl_NewIntObj(start);
	    items[2] = Tcl_NewIntObj(i);
	    items[3] = Tcl_NewStringObj(line + start, i - start);
	    return Tcl_NewListObj(4, items);
	}
	index++;
    }
    return Tcl_NewObj();
}

/*
 *----------------------------------------------------------------------
 *
 * tclprim_tok2column --
 *
 *	The tok2column command.
 *
 * Results:
 *	A standard Tcl result: see HDLTextTok2Col.
 *
 * Side effects:
 *	Runs the MtiFS procs.
 *
 *----------------------------------------------------------------------
 */

static int
tclprim_tok2column(
    ClientData cd,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    int col, type;
#ifdef TCL_SIZE_MAX
    Tcl_Size length;		/* Tcl 9. */
#else
    int length;
#endif
    const char *line;

    /* Syntax: tok2column lang col line
     *         [0]        [1]  [2] [3] */
    if (objc != 4) {
	Tcl_WrongNumArgs(interp, 1, objv, "lang col line");
	return TCL_ERROR;
    }
    if (Tcl_GetIntFromObj(interp, objv[2], &col) != TCL_OK) {
	return TCL_ERROR;
    }
    type = lang2lang_type(interp, Tcl_GetString(objv[1]));
    if (type == LANGUNKNOWN) {
	Tcl_SetObjResult(interp, Tcl_ObjPrintf(
		"unknown language \"%s\": must be a VHDL or Verilog language",
		Tcl_GetString(objv[1])));
	Tcl_SetErrorCode(interp, "TOK2COLUMN", "LANGUAGE", NULL);
	return TCL_ERROR;
    }
    line = Tcl_GetStringFromObj(objv[3], &length);
    Tcl_SetObjResult(interp, HDLTextTok2Col(type, col, line, length));
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * Tok2column_Init --
 *
 *	Creates the tok2column command and provides package Tok2column.
 *
 * Results:
 *	A standard Tcl result.
 *
 * Side effects:
 *	A new command.
 *
 *----------------------------------------------------------------------
 */

DLLEXPORT int
Tok2column_Init(
    Tcl_Interp *interp)
{
    if (Tcl_InitStubs(interp, "8.6-", 0) == NULL) {
	return TCL_ERROR;
    }
    if (Tcl_CreateObjCommand(interp, "::tok2column", tclprim_tok2column,
	    NULL, NULL) == NULL) {
	return TCL_ERROR;
    }
    return Tcl_PkgProvideEx(interp, "Tok2column", "1.0", NULL);
}
