/*
 * util.c --
 *
 *	Small helpers shared by the modules: clocks, thread ids, and the one
 *	way errors are reported (message and error code together).
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include <stdarg.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

/*
 *----------------------------------------------------------------------
 *
 * TpNowNs --
 *
 *	Reads CLOCK_MONOTONIC.
 *
 * Results:
 *	Nanoseconds since an arbitrary origin.
 *
 * Side effects:
 *	None.
 *
 * Signal safety:
 *	Safe: clock_gettime is async-signal-safe.
 *
 *----------------------------------------------------------------------
 */

uint64_t
TpNowNs(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/*
 *----------------------------------------------------------------------
 *
 * TpGetTid --
 *
 *	Returns the kernel id of the calling thread (what timer_create's
 *	SIGEV_THREAD_ID wants; pthread_t is not it).
 *
 * Results:
 *	The thread id.
 *
 * Side effects:
 *	None.
 *
 * Signal safety:
 *	Safe: a raw system call.
 *
 *----------------------------------------------------------------------
 */

uint32_t
TpGetTid(void)
{
    return (uint32_t) syscall(SYS_gettid);
}

/*
 *----------------------------------------------------------------------
 *
 * TpSetError --
 *
 *	Sets the interpreter's result to a formatted message and its error
 *	code to {TCLPROF code1 code2}. Every error of the package goes
 *	through here so none lacks an error code.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Changes the interpreter's result and errorCode.
 *
 *----------------------------------------------------------------------
 */

void
TpSetError(
    Tcl_Interp *interp,
    const char *code1,
    const char *code2,
    const char *fmt,
    ...)
{
    va_list ap;
    char buf[512];

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    Tcl_SetObjResult(interp, Tcl_NewStringObj(buf, -1));
    Tcl_SetErrorCode(interp, "TCLPROF", code1, code2, NULL);
}

/*
 *----------------------------------------------------------------------
 *
 * TpKindName --
 *
 *	Names a location kind the way reports show it.
 *
 * Results:
 *	"c", "tcl" or "internal".
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

const char *
TpKindName(
    int kind)
{
    switch (kind) {
    case TP_KIND_C:
	return "c";
    case TP_KIND_TCL:
	return "tcl";
    default:
	return "internal";
    }
}

/*
 *----------------------------------------------------------------------
 *
 * TpLambdaName --
 *
 *	The name both modes give an apply lambda: "apply file:line" when
 *	the lambda was written in a sourced file (line: where its body
 *	starts), else "apply {body}" with the first 40 bytes of the body,
 *	white space around it removed, and "...}" when cut. One function,
 *	so that frames mode (in the handler) and trace mode (in the trace)
 *	cannot drift apart: a lambda must be the same tree node in both.
 *
 * Results:
 *	The name's length; the name in buf, cut at size bytes, no NUL.
 *
 * Side effects:
 *	None.
 *
 * Signal safety:
 *	Safe (frames mode calls it in the handler): copies bytes only.
 *
 *----------------------------------------------------------------------
 */

static void
NameAppend(
    char *buf,
    int size,
    int *nPtr,
    const char *s,
    int len)
{
    while (len-- > 0 && *nPtr < size) {
	buf[(*nPtr)++] = *s++;
    }
}

static int
IsBlank(
    char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int
TpLambdaName(
    char *buf,
    int size,
    const char *file,		/* NULL or fileLen 0: not from a file. */
    int fileLen,
    int line,
    const char *body,
    int bodyLen)
{
    int n = 0;

    NameAppend(buf, size, &n, "apply ", 6);
    if (file != NULL && fileLen > 0) {
	char num[16];
	int i = (int) sizeof(num), v = line > 0 ? line : 0;

	do {
	    num[--i] = (char) ('0' + v % 10);
	} while ((v /= 10) && i > 0);
	NameAppend(buf, size, &n, file, fileLen);
	NameAppend(buf, size, &n, ":", 1);
	NameAppend(buf, size, &n, num + i, (int) sizeof(num) - i);
	return n;
    }
    if (body == NULL) {
	bodyLen = 0;
    }
    while (bodyLen > 0 && IsBlank(*body)) {
	body++;
	bodyLen--;
    }
    while (bodyLen > 0 && IsBlank(body[bodyLen - 1])) {
	bodyLen--;
    }
    NameAppend(buf, size, &n, "{", 1);
    NameAppend(buf, size, &n, body, bodyLen < 40 ? bodyLen : 40);
    NameAppend(buf, size, &n, bodyLen <= 40 ? "}" : "...}", bodyLen <= 40 ? 1 : 4);
    return n;
}
