/*
 * pext.c --
 *
 *	Probe extension for tclprof: C commands that burn CPU in named
 *	noinline C functions and call back into Tcl in many different ways
 *	(Tcl_EvalEx, Tcl_EvalObjv, Tcl_GlobalEval, NR commands, objProcs
 *	called directly, Tcl_CreateObjTrace, C variable traces, timer
 *	handlers, Tcl_DoOneEvent loops, TclOO methods written in C).
 *
 *	gcc -O2 -g -shared -fPIC -DUSE_TCL_STUBS -I/usr/include/tcl8.6 \
 *	    pext.c -o libpext.so -ltclstub8.6
 */

#include <tcl.h>
#include <tclOO.h>
#include <time.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline, noclone))

volatile uint64_t sink;

static inline uint64_t
CpuNs(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + ts.tv_nsec;
}

/* Spin for ms of thread CPU time, in the frame it is inlined into. */
#define SPIN(ms) do {						\
    uint64_t end_ = CpuNs() + (uint64_t) (ms) * 1000000u;	\
    uint64_t acc_ = sink;					\
    int i_;							\
    do {							\
	for (i_ = 0; i_ < 20000; i_++) {			\
	    acc_ = acc_ * 6364136223846793005u + 1442695040888963407u; \
	}							\
	sink = acc_;						\
    } while (CpuNs() < end_);					\
} while (0)

/* Burners, one per scenario family, so the leaf identifies the path. */
NOINLINE void BurnA(int ms)      { SPIN(ms); sink++; }
NOINLINE void BurnBottom(int ms) { SPIN(ms); sink++; }
NOINLINE void BurnTrace(int ms)  { SPIN(ms); sink++; }
NOINLINE void BurnVT(int ms)     { SPIN(ms); sink++; }
NOINLINE void BurnTimer(int ms)  { SPIN(ms); sink++; }
NOINLINE void BurnPost(int ms)   { SPIN(ms); sink++; }
NOINLINE void BurnMethod(int ms) { SPIN(ms); sink++; }
NOINLINE void BurnErr(int ms)    { SPIN(ms); sink++; }
NOINLINE void BurnAfterCatch(int ms) { SPIN(ms); sink++; }
NOINLINE void BurnBetween(int ms) { SPIN(ms); sink++; }

static int
GetInt(Tcl_Interp *interp, Tcl_Obj *o, int *ip)
{
    return Tcl_GetIntFromObj(interp, o, ip);
}

/* pext::burn ms */
static int
PextBurnCmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    int ms;
    if (objc != 2) { Tcl_WrongNumArgs(interp, 1, objv, "ms"); return TCL_ERROR; }
    if (GetInt(interp, objv[1], &ms) != TCL_OK) return TCL_ERROR;
    BurnA(ms);
    sink++;
    return TCL_OK;
}

/* pext::burnerr ms: burns then throws an error from C */
static int
PextBurnErrCmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    int ms;
    if (objc != 2) { Tcl_WrongNumArgs(interp, 1, objv, "ms"); return TCL_ERROR; }
    if (GetInt(interp, objv[1], &ms) != TCL_OK) return TCL_ERROR;
    BurnErr(ms);
    Tcl_SetObjResult(interp, Tcl_NewStringObj("burnerr failed", -1));
    Tcl_SetErrorCode(interp, "PEXT", "BURNERR", NULL);
    sink++;
    return TCL_ERROR;
}

/* pext::evalex script: Tcl_EvalEx on the string, from a helper frame */
NOINLINE int
EvalExHelper(Tcl_Interp *interp, const char *script)
{
    int code = Tcl_EvalEx(interp, script, -1, 0);
    sink++;
    return code;
}
static int
PextEvalExCmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    int code;
    if (objc != 2) { Tcl_WrongNumArgs(interp, 1, objv, "script"); return TCL_ERROR; }
    code = EvalExHelper(interp, Tcl_GetString(objv[1]));
    sink++;
    return code;
}

/* pext::evalobjv cmd ?arg ...?: Tcl_EvalObjv on the words */
NOINLINE int
EvalObjvHelper(Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    int code = Tcl_EvalObjv(interp, objc, objv, 0);
    sink++;
    return code;
}
static int
PextEvalObjvCmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    int code;
    if (objc < 2) { Tcl_WrongNumArgs(interp, 1, objv, "cmd ?arg ...?"); return TCL_ERROR; }
    code = EvalObjvHelper(interp, objc - 1, objv + 1);
    sink++;
    return code;
}

/* pext::global script: Tcl_GlobalEval (string, global level) */
NOINLINE int
GlobalHelper(Tcl_Interp *interp, const char *script)
{
    int code = Tcl_GlobalEval(interp, script);
    sink++;
    return code;
}
static int
PextGlobalCmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    int code;
    if (objc != 2) { Tcl_WrongNumArgs(interp, 1, objv, "script"); return TCL_ERROR; }
    code = GlobalHelper(interp, Tcl_GetString(objv[1]));
    sink++;
    return code;
}

/* pext::evaldirect script: Tcl_EvalObjEx with TCL_EVAL_DIRECT */
NOINLINE int
DirectEvalHelper(Tcl_Interp *interp, Tcl_Obj *script)
{
    int code = Tcl_EvalObjEx(interp, script, TCL_EVAL_DIRECT);
    sink++;
    return code;
}
static int
PextEvalDirectCmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    int code;
    if (objc != 2) { Tcl_WrongNumArgs(interp, 1, objv, "script"); return TCL_ERROR; }
    code = DirectEvalHelper(interp, objv[1]);
    sink++;
    return code;
}

/* pext::between ms script ms2: burn, eval, burn (C frames both sides) */
NOINLINE int
BetweenHelper(Tcl_Interp *interp, int ms1, Tcl_Obj *script, int ms2)
{
    int code;
    BurnBetween(ms1);
    code = Tcl_EvalObjEx(interp, script, 0);
    BurnBetween(ms2);
    sink++;
    return code;
}
static int
PextBetweenCmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    int ms1, ms2, code;
    if (objc != 4) { Tcl_WrongNumArgs(interp, 1, objv, "ms script ms"); return TCL_ERROR; }
    if (GetInt(interp, objv[1], &ms1) != TCL_OK) return TCL_ERROR;
    if (GetInt(interp, objv[3], &ms2) != TCL_OK) return TCL_ERROR;
    code = BetweenHelper(interp, ms1, objv[2], ms2);
    sink++;
    return code;
}

/* pext::down n ms: if n > 0 evaluates [::lev n-1 ms] from C, else burns */
NOINLINE int
DownHelper(Tcl_Interp *interp, int n, Tcl_Obj *msObj)
{
    Tcl_Obj *words[3];
    int code;
    words[0] = Tcl_NewStringObj("::lev", -1);
    words[1] = Tcl_NewIntObj(n - 1);
    words[2] = msObj;
    Tcl_IncrRefCount(words[0]);
    Tcl_IncrRefCount(words[1]);
    code = Tcl_EvalObjv(interp, 3, words, 0);
    Tcl_DecrRefCount(words[0]);
    Tcl_DecrRefCount(words[1]);
    sink++;
    return code;
}
static int
PextDownCmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    int n, ms, code;
    if (objc != 3) { Tcl_WrongNumArgs(interp, 1, objv, "n ms"); return TCL_ERROR; }
    if (GetInt(interp, objv[1], &n) != TCL_OK) return TCL_ERROR;
    if (GetInt(interp, objv[2], &ms) != TCL_OK) return TCL_ERROR;
    if (n > 0) {
	code = DownHelper(interp, n, objv[2]);
    } else {
	BurnBottom(ms);
	code = TCL_OK;
    }
    sink++;
    return code;
}

/* NR commands.
 *   pext::nreval script        Tcl_NREvalObj, no new trampoline
 *   pext::nrpost ms script     Tcl_NREvalObj + callback burning ms after */
static int
NrPostCallback(ClientData data[], Tcl_Interp *interp, int result)
{
    int ms = (int) (intptr_t) data[0];
    BurnPost(ms);
    sink++;
    return result;
}
static int
NrEvalNreProc(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    if (objc != 2) { Tcl_WrongNumArgs(interp, 1, objv, "script"); return TCL_ERROR; }
    return Tcl_NREvalObj(interp, objv[1], 0);
}
static int
NrEvalObjProc(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    int code = Tcl_NRCallObjProc(interp, NrEvalNreProc, cd, objc, objv);
    sink++;
    return code;
}
static int
NrPostNreProc(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    int ms;
    if (objc != 3) { Tcl_WrongNumArgs(interp, 1, objv, "ms script"); return TCL_ERROR; }
    if (GetInt(interp, objv[1], &ms) != TCL_OK) return TCL_ERROR;
    Tcl_NRAddCallback(interp, NrPostCallback, (ClientData) (intptr_t) ms, NULL, NULL, NULL);
    return Tcl_NREvalObj(interp, objv[2], 0);
}
static int
NrPostObjProc(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    int code = Tcl_NRCallObjProc(interp, NrPostNreProc, cd, objc, objv);
    sink++;
    return code;
}

/* pext::direct cmd ?arg ...?: calls cmd's objProc directly (no Tcl
 * dispatch), as some extensions do. */
NOINLINE int
DirectHelper(Tcl_Interp *interp, Tcl_CmdInfo *info, int objc, Tcl_Obj *const objv[])
{
    int code = info->objProc(info->objClientData, interp, objc, objv);
    sink++;
    return code;
}
static int
PextDirectCmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    Tcl_CmdInfo info;
    int code;
    if (objc < 2) { Tcl_WrongNumArgs(interp, 1, objv, "cmd ?arg ...?"); return TCL_ERROR; }
    if (!Tcl_GetCommandInfo(interp, Tcl_GetString(objv[1]), &info) || !info.isNativeObjectProc) {
	Tcl_SetObjResult(interp, Tcl_NewStringObj("no such object command", -1));
	return TCL_ERROR;
    }
    code = DirectHelper(interp, &info, objc - 1, objv + 1);
    sink++;
    return code;
}

/* pext::objtrace ms script: a Tcl_CreateObjTrace whose callback burns
 * ms on every command of script (level-limited to all levels). */
static int
ObjTraceProc(ClientData cd, Tcl_Interp *interp, int level, const char *command,
	     Tcl_Command token, int objc, Tcl_Obj *const objv[])
{
    const char *name = Tcl_GetString(objv[0]);
    if (strcmp(name, "::tracedLeaf") == 0 || strcmp(name, "tracedLeaf") == 0) {
	BurnTrace((int) (intptr_t) cd);
    }
    sink++;
    return TCL_OK;
}
static int
PextObjTraceCmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    int ms, code;
    Tcl_Trace tr;
    if (objc != 3) { Tcl_WrongNumArgs(interp, 1, objv, "ms script"); return TCL_ERROR; }
    if (GetInt(interp, objv[1], &ms) != TCL_OK) return TCL_ERROR;
    tr = Tcl_CreateObjTrace(interp, 0, TCL_ALLOW_INLINE_COMPILATION, ObjTraceProc,
	    (ClientData) (intptr_t) ms, NULL);
    code = Tcl_EvalObjEx(interp, objv[2], 0);
    Tcl_DeleteTrace(interp, tr);
    sink++;
    return code;
}

/* pext::vtrace var ms: C write trace on var burning ms in C.
 * pext::vtraceeval var script: C write trace evaluating script. */
static char *
VarTraceBurn(ClientData cd, Tcl_Interp *interp, const char *n1, const char *n2, int flags)
{
    BurnVT((int) (intptr_t) cd);
    sink++;
    return NULL;
}
NOINLINE int
VarTraceEvalHelper(Tcl_Interp *interp, Tcl_Obj *script)
{
    int code = Tcl_EvalObjEx(interp, script, TCL_EVAL_GLOBAL);
    sink++;
    return code;
}
static char *
VarTraceEval(ClientData cd, Tcl_Interp *interp, const char *n1, const char *n2, int flags)
{
    Tcl_Obj *script = (Tcl_Obj *) cd;
    (void) VarTraceEvalHelper(interp, script);
    sink++;
    return NULL;
}
static int
PextVtraceCmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    int ms;
    if (objc != 3) { Tcl_WrongNumArgs(interp, 1, objv, "var ms"); return TCL_ERROR; }
    if (GetInt(interp, objv[2], &ms) != TCL_OK) return TCL_ERROR;
    return Tcl_TraceVar(interp, Tcl_GetString(objv[1]), TCL_GLOBAL_ONLY | TCL_TRACE_WRITES,
	    VarTraceBurn, (ClientData) (intptr_t) ms);
}
static int
PextVtraceEvalCmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    Tcl_Obj *script;
    if (objc != 3) { Tcl_WrongNumArgs(interp, 1, objv, "var script"); return TCL_ERROR; }
    script = Tcl_DuplicateObj(objv[2]);
    Tcl_IncrRefCount(script);	/* leaked on purpose: probe only */
    return Tcl_TraceVar(interp, Tcl_GetString(objv[1]), TCL_GLOBAL_ONLY | TCL_TRACE_WRITES,
	    VarTraceEval, script);
}

/* pext::timer ms var: a C timer handler (fires at once) burning ms,
 * then setting the global var to 1. */
typedef struct { Tcl_Interp *interp; int ms; Tcl_Obj *var; } TimerData;
static void
TimerBurnProc(ClientData cd)
{
    TimerData *t = cd;
    BurnTimer(t->ms);
    Tcl_ObjSetVar2(t->interp, t->var, NULL, Tcl_NewIntObj(1), TCL_GLOBAL_ONLY);
    Tcl_DecrRefCount(t->var);
    ckfree(t);
    sink++;
}
static int
PextTimerCmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    TimerData *t;
    int ms;
    if (objc != 3) { Tcl_WrongNumArgs(interp, 1, objv, "ms var"); return TCL_ERROR; }
    if (GetInt(interp, objv[1], &ms) != TCL_OK) return TCL_ERROR;
    t = (TimerData *) ckalloc(sizeof(TimerData));
    t->interp = interp;
    t->ms = ms;
    t->var = objv[2];
    Tcl_IncrRefCount(t->var);
    Tcl_CreateTimerHandler(0, TimerBurnProc, t);
    return TCL_OK;
}

/* pext::pump var: Tcl_DoOneEvent loop in C until the global var is set */
NOINLINE void
PumpLoop(Tcl_Interp *interp, const char *var)
{
    while (Tcl_GetVar(interp, var, TCL_GLOBAL_ONLY) == NULL) {
	Tcl_DoOneEvent(TCL_ALL_EVENTS);
	sink++;
    }
}
static int
PextPumpCmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    if (objc != 2) { Tcl_WrongNumArgs(interp, 1, objv, "var"); return TCL_ERROR; }
    PumpLoop(interp, Tcl_GetString(objv[1]));
    sink++;
    return TCL_OK;
}

/* pext::catcheval script ms: evaluates script (expected to fail), resets
 * the result, burns ms in C after catching the error */
NOINLINE int
CatchEvalHelper(Tcl_Interp *interp, Tcl_Obj *script, int ms)
{
    int code = Tcl_EvalObjEx(interp, script, 0);
    if (code == TCL_ERROR) {
	Tcl_ResetResult(interp);
	BurnAfterCatch(ms);
    }
    sink++;
    return TCL_OK;
}
static int
PextCatchEvalCmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    int ms, code;
    if (objc != 3) { Tcl_WrongNumArgs(interp, 1, objv, "script ms"); return TCL_ERROR; }
    if (GetInt(interp, objv[2], &ms) != TCL_OK) return TCL_ERROR;
    code = CatchEvalHelper(interp, objv[1], ms);
    sink++;
    return code;
}

/* TclOO methods written in C.
 *   pext::cmethod class name ms         a method burning ms
 *   pext::cmethodeval class name script a method evaluating script */
typedef struct { int ms; Tcl_Obj *script; } MData;
static int
CMethodBurnCall(ClientData cd, Tcl_Interp *interp, Tcl_ObjectContext ctx,
		int objc, Tcl_Obj *const objv[])
{
    MData *m = cd;
    BurnMethod(m->ms);
    sink++;
    return TCL_OK;
}
NOINLINE int
CMethodEvalHelper(Tcl_Interp *interp, Tcl_Obj *script)
{
    int code = Tcl_EvalObjEx(interp, script, 0);
    sink++;
    return code;
}
static int
CMethodEvalCall(ClientData cd, Tcl_Interp *interp, Tcl_ObjectContext ctx,
		int objc, Tcl_Obj *const objv[])
{
    MData *m = cd;
    int code = CMethodEvalHelper(interp, m->script);
    sink++;
    return code;
}
static const Tcl_MethodType burnType = {
    TCL_OO_METHOD_VERSION_CURRENT, "pextBurn", CMethodBurnCall, NULL, NULL
};
static const Tcl_MethodType evalType = {
    TCL_OO_METHOD_VERSION_CURRENT, "pextEval", CMethodEvalCall, NULL, NULL
};
static int
PextCMethodCmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    Tcl_Object o;
    Tcl_Class cls;
    MData *m;
    int isEval = (cd != NULL);
    if (objc != 4) { Tcl_WrongNumArgs(interp, 1, objv, "class name ms|script"); return TCL_ERROR; }
    o = Tcl_GetObjectFromObj(interp, objv[1]);
    if (o == NULL) return TCL_ERROR;
    cls = Tcl_GetObjectAsClass(o);
    if (cls == NULL) { Tcl_SetObjResult(interp, Tcl_NewStringObj("not a class", -1)); return TCL_ERROR; }
    m = (MData *) ckalloc(sizeof(MData));
    m->ms = 0;
    m->script = NULL;
    if (isEval) {
	m->script = Tcl_DuplicateObj(objv[3]);
	Tcl_IncrRefCount(m->script);
    } else if (GetInt(interp, objv[3], &m->ms) != TCL_OK) {
	ckfree(m);
	return TCL_ERROR;
    }
    Tcl_NewMethod(interp, cls, objv[2], 1, isEval ? &evalType : &burnType, m);
    return TCL_OK;
}

/* pext::crec depth script: C recursion depth deep, then evaluates script */
NOINLINE int
CRecurse(Tcl_Interp *interp, int depth, Tcl_Obj *script)
{
    int code;
    if (depth > 0) {
	code = CRecurse(interp, depth - 1, script);
    } else {
	code = Tcl_EvalObjEx(interp, script, 0);
    }
    sink++;
    return code;
}
static int
PextCRecCmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    int depth, code;
    if (objc != 3) { Tcl_WrongNumArgs(interp, 1, objv, "depth script"); return TCL_ERROR; }
    if (GetInt(interp, objv[1], &depth) != TCL_OK) return TCL_ERROR;
    code = CRecurse(interp, depth, objv[2]);
    sink++;
    return code;
}

/* pext::mkdel name script: creates command name whose deleteProc
 * evaluates script (so [rename name {}] runs Tcl from C). */
typedef struct { Tcl_Interp *interp; Tcl_Obj *script; } DelData;
NOINLINE void
DeleteEvalHelper(Tcl_Interp *interp, Tcl_Obj *script)
{
    (void) Tcl_EvalObjEx(interp, script, 0);
    sink++;
}
static void
DelProc(ClientData cd)
{
    DelData *d = cd;
    DeleteEvalHelper(d->interp, d->script);
    Tcl_DecrRefCount(d->script);
    ckfree(d);
    sink++;
}
static int
NopCmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    return TCL_OK;
}
static int
PextMkDelCmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    DelData *d;
    if (objc != 3) { Tcl_WrongNumArgs(interp, 1, objv, "name script"); return TCL_ERROR; }
    d = (DelData *) ckalloc(sizeof(DelData));
    d->interp = interp;
    d->script = Tcl_DuplicateObj(objv[2]);
    Tcl_IncrRefCount(d->script);
    Tcl_CreateObjCommand(interp, Tcl_GetString(objv[1]), NopCmd, d, DelProc);
    return TCL_OK;
}

/* pext::async ms: marks an async handler that burns ms in C; it runs at
 * the next Tcl_AsyncReady check point of the bytecode engine.
 * pext::asynceval script: marks an async handler evaluating script. */
typedef struct { int ms; Tcl_Obj *script; Tcl_Interp *interp; } AsyncData;
static AsyncData asyncData;
static Tcl_AsyncHandler asyncToken;
NOINLINE void BurnAsync(int ms) { SPIN(ms); sink++; }
NOINLINE int
AsyncEvalHelper(Tcl_Interp *interp, Tcl_Obj *script)
{
    int code = Tcl_EvalObjEx(interp, script, 0);
    sink++;
    return code;
}
static int
AsyncProc(ClientData cd, Tcl_Interp *interp, int code)
{
    AsyncData *a = cd;
    if (a->script != NULL && interp != NULL) {
	Tcl_InterpState st = Tcl_SaveInterpState(interp, code);
	(void) AsyncEvalHelper(interp, a->script);
	code = Tcl_RestoreInterpState(interp, st);
    } else {
	BurnAsync(a->ms);
    }
    sink++;
    return code;
}
static int
PextAsyncCmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    if (objc != 2) { Tcl_WrongNumArgs(interp, 1, objv, "ms|script"); return TCL_ERROR; }
    if (asyncToken == NULL) {
	asyncToken = Tcl_AsyncCreate(AsyncProc, &asyncData);
    }
    if (asyncData.script) { Tcl_DecrRefCount(asyncData.script); asyncData.script = NULL; }
    asyncData.interp = interp;
    if (cd != NULL) {
	asyncData.script = Tcl_DuplicateObj(objv[1]);
	Tcl_IncrRefCount(asyncData.script);
    } else if (GetInt(interp, objv[1], &asyncData.ms) != TCL_OK) {
	return TCL_ERROR;
    }
    Tcl_AsyncMark(asyncToken);
    return TCL_OK;
}

/* pext::expr expression: Tcl_ExprObj from C */
NOINLINE int
ExprHelper(Tcl_Interp *interp, Tcl_Obj *e, Tcl_Obj **resPtr)
{
    int code = Tcl_ExprObj(interp, e, resPtr);
    sink++;
    return code;
}
static int
PextExprCmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    Tcl_Obj *res;
    int code;
    if (objc != 2) { Tcl_WrongNumArgs(interp, 1, objv, "expression"); return TCL_ERROR; }
    code = ExprHelper(interp, objv[1], &res);
    if (code == TCL_OK) { Tcl_SetObjResult(interp, res); Tcl_DecrRefCount(res); }
    sink++;
    return code;
}

/* pext::nrposteval script1 script2: NR command evaluating script1 with
 * Tcl_NREvalObj; its post callback evaluates script2 with Tcl_EvalObjEx
 * (a new trampoline inside a callback of the outer one). */
NOINLINE int
PostEvalHelper(Tcl_Interp *interp, Tcl_Obj *script)
{
    int code = Tcl_EvalObjEx(interp, script, 0);
    sink++;
    return code;
}
static int
NrPostEvalCallback(ClientData data[], Tcl_Interp *interp, int result)
{
    Tcl_Obj *script = data[0];
    if (result == TCL_OK) {
	result = PostEvalHelper(interp, script);
    }
    Tcl_DecrRefCount(script);
    sink++;
    return result;
}
static int
NrPostEvalNreProc(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    if (objc != 3) { Tcl_WrongNumArgs(interp, 1, objv, "script1 script2"); return TCL_ERROR; }
    Tcl_IncrRefCount(objv[2]);
    Tcl_NRAddCallback(interp, NrPostEvalCallback, objv[2], NULL, NULL, NULL);
    return Tcl_NREvalObj(interp, objv[1], 0);
}
static int
NrPostEvalObjProc(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    int code = Tcl_NRCallObjProc(interp, NrPostEvalNreProc, cd, objc, objv);
    sink++;
    return code;
}

/* pext::parenteval script: evaluates script in the interp's master
 * (parent) with Tcl_EvalObjEx, from C running in the child. */
NOINLINE int
ParentEvalHelper(Tcl_Interp *parent, Tcl_Obj *script)
{
    int code = Tcl_EvalObjEx(parent, script, TCL_EVAL_GLOBAL);
    sink++;
    return code;
}
static int
PextParentEvalCmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    Tcl_Interp *parent = Tcl_GetMaster(interp);
    Tcl_Obj *script;
    int code;
    if (objc != 2) { Tcl_WrongNumArgs(interp, 1, objv, "script"); return TCL_ERROR; }
    if (parent == NULL) { Tcl_SetObjResult(interp, Tcl_NewStringObj("no parent", -1)); return TCL_ERROR; }
    script = Tcl_DuplicateObj(objv[1]);
    Tcl_IncrRefCount(script);
    code = ParentEvalHelper(parent, script);
    Tcl_DecrRefCount(script);
    if (code != TCL_OK) {
	Tcl_SetObjResult(interp, Tcl_GetObjResult(parent));
    }
    sink++;
    return code;
}

/* pext::evalfile path: Tcl_EvalFile */
NOINLINE int
EvalFileHelper(Tcl_Interp *interp, const char *path)
{
    int code = Tcl_EvalFile(interp, path);
    sink++;
    return code;
}
static int
PextEvalFileCmd(ClientData cd, Tcl_Interp *interp, int objc, Tcl_Obj *const objv[])
{
    int code;
    if (objc != 2) { Tcl_WrongNumArgs(interp, 1, objv, "path"); return TCL_ERROR; }
    code = EvalFileHelper(interp, Tcl_GetString(objv[1]));
    sink++;
    return code;
}

int
Pext_Init(Tcl_Interp *interp)
{
    if (Tcl_InitStubs(interp, "8.6", 0) == NULL) return TCL_ERROR;
    if (Tcl_OOInitStubs(interp) == NULL) return TCL_ERROR;
    Tcl_CreateObjCommand(interp, "pext::burn", PextBurnCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "pext::burnerr", PextBurnErrCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "pext::evalex", PextEvalExCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "pext::evalobjv", PextEvalObjvCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "pext::global", PextGlobalCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "pext::evaldirect", PextEvalDirectCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "pext::between", PextBetweenCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "pext::down", PextDownCmd, NULL, NULL);
    Tcl_NRCreateCommand(interp, "pext::nreval", NrEvalObjProc, NrEvalNreProc, NULL, NULL);
    Tcl_NRCreateCommand(interp, "pext::nrpost", NrPostObjProc, NrPostNreProc, NULL, NULL);
    Tcl_CreateObjCommand(interp, "pext::direct", PextDirectCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "pext::objtrace", PextObjTraceCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "pext::vtrace", PextVtraceCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "pext::vtraceeval", PextVtraceEvalCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "pext::timer", PextTimerCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "pext::pump", PextPumpCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "pext::catcheval", PextCatchEvalCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "pext::cmethod", PextCMethodCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "pext::cmethodeval", PextCMethodCmd, (ClientData) 1, NULL);
    Tcl_CreateObjCommand(interp, "pext::crec", PextCRecCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "pext::mkdel", PextMkDelCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "pext::async", PextAsyncCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "pext::asynceval", PextAsyncCmd, (ClientData) 1, NULL);
    Tcl_CreateObjCommand(interp, "pext::expr", PextExprCmd, NULL, NULL);
    /* A second command sharing pext::burn's objProc (very common in real
     * extensions); PEXT_NOSHARE=1 leaves it out, to compare. */
    if (getenv("PEXT_NOSHARE") == NULL) {
	Tcl_CreateObjCommand(interp, "tcl::mathfunc::cburn", PextBurnCmd, NULL, NULL);
    }
    Tcl_NRCreateCommand(interp, "pext::nrposteval", NrPostEvalObjProc, NrPostEvalNreProc, NULL, NULL);
    Tcl_CreateObjCommand(interp, "pext::parenteval", PextParentEvalCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "pext::evalfile", PextEvalFileCmd, NULL, NULL);
    return Tcl_PkgProvide(interp, "pext", "1.0");
}
