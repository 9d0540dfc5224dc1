/*
 * save.c --
 *
 *	Saved profiles: `profiler save` writes the session's profile to an
 *	SQLite database, `profiler load` reads one or more back (summing
 *	them) into a profile that replaces the session's, and `profiler
 *	atexit` runs a script when the process ends (Tcl_Exit, SIGINT,
 *	SIGTERM, SIGHUP and the other signals that end a process) or its
 *	-duration runs out, so that a profile is written however the
 *	program stops.
 *	The schema is documented, with examples, in doc/schema.md; the
 *	statements that create it are below (schemaSql) and are the
 *	reference.
 *
 *	What is saved. A live profile's C locations are addresses, which
 *	mean nothing outside the process: the file holds *functions* as the
 *	call tree resolves them at save time (TpTreeBuild with internals
 *	shown), so it reads the same on another machine. A saved stack is
 *	the list of functions TpTreeStackFuncs gives for a profile stack,
 *	root first, each with the line of its location (the call-site line
 *	of a Tcl frame, 0 if none); the frames naming the command a C
 *	function implements are saved as the Tcl frames they are shown as.
 *	Profile stacks that become equal once addresses are replaced by
 *	functions are saved as one stack with the sum of their counts.
 *
 *	What is loaded. Tcl frames become Tcl locations again, C and
 *	internal frames become locations that carry their name
 *	(TpProfileNamedLoc: marked resolved, never looked up again). Every
 *	sample of the time-ordered log is added back in order, so counts
 *	and timeline are those saved; the stacks' counts beyond the log
 *	(profiles past the log's bound) are added at the end. Loading
 *	several files sums them: stacks are matched by their sequence of
 *	function names (and thread id), counters add up.
 *
 *	Files are written to a temporary name in the target's directory and
 *	renamed over it when complete, so a reader never sees half a file.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include <sqlite3.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * SQLite is loaded on first use (Unix builds with TP_SQLITE_SONAME, which
 * configure sets): saving and loading profiles are the only users, and
 * mapping the library at [package require] cost every profiled process
 * about 0.5 MB (its pages, relocations and unwind rows) for nothing. The
 * Windows build links SQLite in and calls it directly.
 */

#ifdef TP_SQLITE_SONAME
#include <dlfcn.h>

static struct {
    __typeof__(sqlite3_bind_int) *bind_int;
    __typeof__(sqlite3_bind_int64) *bind_int64;
    __typeof__(sqlite3_bind_null) *bind_null;
    __typeof__(sqlite3_bind_text) *bind_text;
    __typeof__(sqlite3_clear_bindings) *clear_bindings;
    __typeof__(sqlite3_close) *close;
    __typeof__(sqlite3_column_int) *column_int;
    __typeof__(sqlite3_column_int64) *column_int64;
    __typeof__(sqlite3_column_text) *column_text;
    __typeof__(sqlite3_column_type) *column_type;
    __typeof__(sqlite3_errcode) *errcode;
    __typeof__(sqlite3_errmsg) *errmsg;
    __typeof__(sqlite3_exec) *exec;
    __typeof__(sqlite3_finalize) *finalize;
    __typeof__(sqlite3_open_v2) *open_v2;
    __typeof__(sqlite3_prepare_v2) *prepare_v2;
    __typeof__(sqlite3_reset) *reset;
    __typeof__(sqlite3_step) *step;
} sq;

static const struct {
    const char *name;		/* Symbol. */
    size_t off;			/* Its pointer's offset in sq. */
} sqSyms[] = {
#define SQ(f) {"sqlite3_" #f, offsetof(__typeof__(sq), f)}
    SQ(bind_int),
    SQ(bind_int64),
    SQ(bind_null),
    SQ(bind_text),
    SQ(clear_bindings),
    SQ(close),
    SQ(column_int),
    SQ(column_int64),
    SQ(column_text),
    SQ(column_type),
    SQ(errcode),
    SQ(errmsg),
    SQ(exec),
    SQ(finalize),
    SQ(open_v2),
    SQ(prepare_v2),
    SQ(reset),
    SQ(step),
#undef SQ
};

static int sqState;		/* 0 not tried, 1 loaded, -1 failed. */
static char sqWhy[200];		/* Why it failed. */
TCL_DECLARE_MUTEX(sqLock)

#define sqlite3_bind_int (*sq.bind_int)
#define sqlite3_bind_int64 (*sq.bind_int64)
#define sqlite3_bind_null (*sq.bind_null)
#define sqlite3_bind_text (*sq.bind_text)
#define sqlite3_clear_bindings (*sq.clear_bindings)
#define sqlite3_close (*sq.close)
#define sqlite3_column_int (*sq.column_int)
#define sqlite3_column_int64 (*sq.column_int64)
#define sqlite3_column_text (*sq.column_text)
#define sqlite3_column_type (*sq.column_type)
#define sqlite3_errcode (*sq.errcode)
#define sqlite3_errmsg (*sq.errmsg)
#define sqlite3_exec (*sq.exec)
#define sqlite3_finalize (*sq.finalize)
#define sqlite3_open_v2 (*sq.open_v2)
#define sqlite3_prepare_v2 (*sq.prepare_v2)
#define sqlite3_reset (*sq.reset)
#define sqlite3_step (*sq.step)

/*
 *----------------------------------------------------------------------
 *
 * SqliteReady --
 *
 *	Loads the SQLite library and its entry points, once per process.
 *
 * Results:
 *	NULL when SQLite can be called, else why not (a static string).
 *
 * Side effects:
 *	dlopen; fills sq.
 *
 *----------------------------------------------------------------------
 */

static const char *
SqliteReady(void)
{
    Tcl_MutexLock(&sqLock);
    if (sqState == 0) {
	void *lib = dlopen(TP_SQLITE_SONAME, RTLD_NOW | RTLD_LOCAL);
	size_t i;

	sqState = 1;
	if (lib == NULL) {
	    const char *err = dlerror();

	    snprintf(sqWhy, sizeof(sqWhy), "SQLite is not available (%s)",
		    err ? err : TP_SQLITE_SONAME);
	    sqState = -1;
	}
	for (i = 0; sqState == 1 && i < sizeof(sqSyms) / sizeof(sqSyms[0]);
		i++) {
	    void *fn = dlsym(lib, sqSyms[i].name);

	    if (fn == NULL) {
		snprintf(sqWhy, sizeof(sqWhy),
			"SQLite library %s has no %s", TP_SQLITE_SONAME,
			sqSyms[i].name);
		sqState = -1;
	    } else {
		memcpy((char *) &sq + sqSyms[i].off, &fn, sizeof(fn));
	    }
	}
    }
    Tcl_MutexUnlock(&sqLock);
    return sqState == 1 ? NULL : sqWhy;
}
#else
static const char *
SqliteReady(void)
{
    return NULL;
}
#endif /* TP_SQLITE_SONAME */

#define TP_SCHEMA_VERSION	1
#define TP_FORMAT_NAME		"tclprof-profile"

/*
 * The schema, version TP_SCHEMA_VERSION. Additive changes (a new table,
 * view or meta key) keep the version; anything an older reader would
 * misread bumps it, and `profiler load` refuses versions it does not
 * know.
 */

static const char schemaSql[] =
"CREATE TABLE meta (\n"
"    key TEXT PRIMARY KEY,\n"
"    value\n"
");\n"
"CREATE TABLE modules (\n"
"    id INTEGER PRIMARY KEY,\n"
"    path TEXT NOT NULL,\n"
"    name TEXT NOT NULL\n"
");\n"
"CREATE TABLE frames (\n"
"    id INTEGER PRIMARY KEY,\n"
"    name TEXT NOT NULL,\n"
"    kind TEXT NOT NULL CHECK (kind IN ('c', 'tcl', 'internal')),\n"
"    type TEXT,\n"
"    module_id INTEGER REFERENCES modules(id),\n"
"    file TEXT,\n"
"    line INTEGER\n"
");\n"
"CREATE TABLE stacks (\n"
"    id INTEGER PRIMARY KEY,\n"
"    tid INTEGER NOT NULL,\n"
"    count INTEGER NOT NULL,\n"
"    depth INTEGER NOT NULL\n"
");\n"
"CREATE TABLE stack_frames (\n"
"    stack_id INTEGER NOT NULL REFERENCES stacks(id),\n"
"    depth INTEGER NOT NULL,\n"
"    frame_id INTEGER NOT NULL REFERENCES frames(id),\n"
"    line INTEGER NOT NULL DEFAULT 0,\n"
"    PRIMARY KEY (stack_id, depth)\n"
") WITHOUT ROWID;\n"
"CREATE TABLE samples (\n"
"    seq INTEGER PRIMARY KEY,\n"
"    t_ns INTEGER NOT NULL,\n"
"    stack_id INTEGER NOT NULL REFERENCES stacks(id),\n"
"    tid INTEGER NOT NULL,\n"
"    weight INTEGER NOT NULL DEFAULT 1\n"
");\n"
"CREATE TABLE calls (\n"
"    callee TEXT NOT NULL,\n"
"    type TEXT,\n"
"    count INTEGER NOT NULL\n"
");\n"
"CREATE TABLE edges (\n"
"    caller TEXT NOT NULL,\n"
"    callee TEXT NOT NULL,\n"
"    count INTEGER NOT NULL\n"
");\n"
"CREATE TABLE procs (\n"
"    name TEXT PRIMARY KEY\n"
");\n""CREATE TABLE threads (\n"
"    tid INTEGER PRIMARY KEY,\n"
"    name TEXT NOT NULL\n"
");\n"
"CREATE VIEW calls_by_callee AS\n"
"    SELECT c.callee, c.type, c.count AS calls,\n"
"        (SELECT group_concat(caller || ' (' || count || ')', ', ') FROM\n"
"            (SELECT caller, count FROM edges e WHERE e.callee = c.callee\n"
"             ORDER BY count DESC)) AS callers\n"
"    FROM calls c ORDER BY c.count DESC, c.callee;\n"
"CREATE VIEW hot_paths AS\n"
"    SELECT s.id AS stack_id, s.tid, s.count AS samples,\n"
"        round(100.0 * s.count / (SELECT total(count) FROM stacks), 2) AS pct,\n"
"        (SELECT group_concat(name, ' ; ') FROM\n"
"            (SELECT f.name FROM stack_frames sf JOIN frames f\n"
"                ON f.id = sf.frame_id\n"
"             WHERE sf.stack_id = s.id\n"
"                AND (f.kind <> 'internal' OR f.type = 'pseudo')\n"
"             ORDER BY sf.depth)) AS path\n"
"    FROM stacks s ORDER BY s.count DESC, s.id;\n"
"CREATE VIEW self_by_function AS\n"
"    SELECT f.id AS frame_id, f.name, f.kind, sum(s.count) AS self_samples,\n"
"        round(100.0 * sum(s.count) / (SELECT total(count) FROM stacks), 2)\n"
"            AS self_pct\n"
"    FROM stacks s JOIN stack_frames sf ON sf.stack_id = s.id\n"
"        AND sf.depth = (SELECT max(sf2.depth) FROM stack_frames sf2\n"
"            JOIN frames f2 ON f2.id = sf2.frame_id\n"
"            WHERE sf2.stack_id = s.id\n"
"                AND (f2.kind <> 'internal' OR f2.type = 'pseudo'))\n"
"    JOIN frames f ON f.id = sf.frame_id\n"
"    GROUP BY f.id ORDER BY self_samples DESC, f.name;\n"
"CREATE VIEW total_by_function AS\n"
"    SELECT f.id AS frame_id, f.name, f.kind, sum(s.count) AS total_samples,\n"
"        round(100.0 * sum(s.count) / (SELECT total(count) FROM stacks), 2)\n"
"            AS total_pct\n"
"    FROM (SELECT DISTINCT stack_id, frame_id FROM stack_frames) d\n"
"    JOIN stacks s ON s.id = d.stack_id JOIN frames f ON f.id = d.frame_id\n"
"    GROUP BY f.id ORDER BY total_samples DESC, f.name;\n"
"CREATE VIEW unused_procs AS\n"
"    SELECT name FROM procs\n"
"    WHERE name NOT IN (SELECT callee FROM calls)\n"
"        AND name NOT IN (SELECT name FROM frames WHERE kind = 'tcl')\n"
"    ORDER BY name;\n";

/*
 * Names of TpTclType values as the file spells them (frames.type,
 * calls.type); C and internal frames have a NULL type.
 */

static const char *const typeNames[] = {
    "proc", "cmd", "method", "lambda", "coroutine", "eval", "pseudo", NULL
};

/*
 * Metadata keys the file holds in columns of TpProfile, or recomputes:
 * everything else a loaded file's meta table holds is kept in
 * TpProfile.savedMeta and written back as it was.
 */

static const char *const ownKeys[] = {
    "format", "schema_version", "mode", "interval_us", "clock",
    "start_epoch_us", "start_time", "duration_ns", "dropped", "program",
    "samples", "truncated", "unwind_errors", "merge_mismatches",
    "handler_ns_sum", "handler_ns_max", "handled", "first_ns", "last_ns",
    "saved_epoch_us", "timeline_stride", NULL
};

/*
 * The script to run at exit and the signal path to it. Process-wide
 * because signals and exit handlers are; one interp at a time owns it.
 */

typedef struct AtExit {
    Tcl_Interp *interp;		/* Where the script runs. */
    Tcl_Obj *script;		/* Called with "exit" or "signal N". */
    pid_t ranIn;		/* Process it ran in (once per process: a
				 * forked child runs it again, its own). */
    Tcl_AsyncHandler async;	/* Signal handler -> interp thread. */
} AtExit;

static struct {
    pthread_mutex_t lock;	/* Guards owner and the installation of the
				 * signal handlers (interp threads). */
    AtExit *owner;		/* Read by the signal handler: set before
				 * the handlers are installed, cleared after
				 * they are removed. */
    volatile sig_atomic_t pendingSig;	/* Written by the handler. */
    volatile int pendingExpire;	/* -duration ran out (sampler thread). */
    struct sigaction old[NSIG];	/* Dispositions replaced, by signal. */
    unsigned char replaced[NSIG];	/* Which of them are ours now. */
    int installed;		/* Our handlers are in place. */
} exitState = { .lock = PTHREAD_MUTEX_INITIALIZER };

/*
 * The signals that end a process by default and can be caught: the
 * script runs for each of them before the process dies of it. SIGPIPE
 * and SIGXFSZ are left alone: caught, they turn into write errors in the
 * program. SIGPROF is the sampler's.
 */

static const int exitSignals[] = {
    SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU,
    SIGVTALRM
};
#define TP_N_EXIT_SIGNALS \
    ((int) (sizeof(exitSignals) / sizeof(exitSignals[0])))

#define TP_ATEXIT_KEY "tclprof::atexit"

/*
 * Save and load contexts.
 */

typedef struct SaveCtx {
    const char *path;		/* Target file. */
    Tcl_Obj *procs;		/* Defined procs walked before locking. */
    Tcl_Obj *err;		/* Message if it failed. */
    const char *errCode;	/* Second word of the error code. */
} SaveCtx;

static int	CollectProcs(Tcl_Interp *interp, Tcl_Obj **procsPtr);
static int	DoSave(Tcl_Interp *interp, TpProfile *p, void *cd);
static int	WriteDb(Tcl_Interp *interp, sqlite3 *db, TpProfile *p,
		    Tcl_Obj *procs, SaveCtx *ctx);
static int	LoadOne(Tcl_Interp *interp, TpProfile *p, const char *path,
		    Tcl_Obj *meta, int first);

/*
 *----------------------------------------------------------------------
 *
 * DbFail --
 *
 *	Records an SQLite failure in a save context.
 *
 * Results:
 *	TCL_ERROR.
 *
 * Side effects:
 *	Sets ctx->err (first failure wins).
 *
 *----------------------------------------------------------------------
 */

static int
DbFail(
    SaveCtx *ctx,
    sqlite3 *db,
    const char *what)
{
    if (ctx->err == NULL) {
	ctx->err = Tcl_ObjPrintf("cannot save the profile to \"%s\": %s: %s",
		ctx->path, what, db ? sqlite3_errmsg(db) : "out of memory");
	Tcl_IncrRefCount(ctx->err);
	ctx->errCode = "IO";
    }
    return TCL_ERROR;
}

/*
 *----------------------------------------------------------------------
 *
 * CollectProcs --
 *
 *	Lists every proc defined in the interp, fully qualified, by walking
 *	the namespaces with [info procs] and [namespace children] (public
 *	commands, so no Tcl internals are read). The interp's result and
 *	error state are preserved. Runs before the profile is locked: it
 *	evaluates Tcl.
 *
 * Results:
 *	TCL_OK with a new list in *procsPtr (refcount 1), or TCL_ERROR.
 *
 * Side effects:
 *	None visible: the walk runs in an [apply].
 *
 *----------------------------------------------------------------------
 */

static int
CollectProcs(
    Tcl_Interp *interp,
    Tcl_Obj **procsPtr)
{
    static const char walk[] =
	"::apply {{} {\n"
	"    set out {}\n"
	"    set queue [list ::]\n"
	"    while {[llength $queue]} {\n"
	"        set queue [lassign $queue ns]\n"
	"        lappend out {*}[::info procs [string trimright $ns :]::*]\n"
	"        lappend queue {*}[::namespace children $ns]\n"
	"    }\n"
	"    return $out\n"
	"}}";
    Tcl_InterpState state = Tcl_SaveInterpState(interp, TCL_OK);
    int code = Tcl_EvalEx(interp, walk, -1, TCL_EVAL_GLOBAL);

    if (code == TCL_OK) {
	*procsPtr = Tcl_GetObjResult(interp);
	Tcl_IncrRefCount(*procsPtr);
    }
    Tcl_RestoreInterpState(interp, state);
    return code == TCL_OK ? TCL_OK : TCL_ERROR;
}

/*
 *----------------------------------------------------------------------
 *
 * TpSaveFile --
 *
 *	`profiler save file`: writes the session's profile (drained; the
 *	profiler may be running) to file; `profiler dump`: only the samples
 *	of the last lastNs nanoseconds (0: the -keep window or all).
 *
 * Results:
 *	TCL_OK with the normalized file name as result, or TCL_ERROR with
 *	{TCLPROF SAVE ...}.
 *
 * Side effects:
 *	Creates or replaces file.
 *
 *----------------------------------------------------------------------
 */

int
TpSaveFile(
    Tcl_Interp *interp,
    const char *path,
    uint64_t lastNs)
{
    SaveCtx ctx;
    int code;

    memset(&ctx, 0, sizeof(ctx));
    ctx.path = path;
    if (CollectProcs(interp, &ctx.procs) != TCL_OK) {
	ctx.procs = Tcl_NewListObj(0, NULL);
	Tcl_IncrRefCount(ctx.procs);
    }
    code = TpSessionWithWindow(interp, lastNs, DoSave, &ctx);
    Tcl_DecrRefCount(ctx.procs);
    if (code != TCL_OK) {
	Tcl_SetObjResult(interp, ctx.err);
	Tcl_SetErrorCode(interp, "TCLPROF", "SAVE", ctx.errCode, NULL);
	Tcl_DecrRefCount(ctx.err);
	return TCL_ERROR;
    }
    Tcl_SetObjResult(interp, Tcl_NewStringObj(path, -1));
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * DoSave --
 *
 *	TpSessionWithProfile callback of TpSaveFile: writes a temporary
 *	file next to the target, then renames it over the target.
 *
 * Results:
 *	TCL_OK, or TCL_ERROR with ctx->err set.
 *
 * Side effects:
 *	Files; symbolizes the profile's C locations (TpTreeBuild).
 *
 *----------------------------------------------------------------------
 */

static int
DoSave(
    Tcl_Interp *interp,
    TpProfile *p,
    void *cd)
{
    SaveCtx *ctx = cd;
    Tcl_Obj *tmp;
    const char *tmpPath, *why;
    sqlite3 *db = NULL;
    int code;

    if ((why = SqliteReady()) != NULL) {
	ctx->err = Tcl_ObjPrintf("cannot save the profile to \"%s\": %s",
		ctx->path, why);
	Tcl_IncrRefCount(ctx->err);
	ctx->errCode = "SQLITE";
	return TCL_ERROR;
    }
    tmp = Tcl_ObjPrintf("%s.tmp-%ld", ctx->path, (long) getpid());
    Tcl_IncrRefCount(tmp);
    tmpPath = Tcl_GetString(tmp);
    unlink(tmpPath);
    if (sqlite3_open_v2(tmpPath, &db, SQLITE_OPEN_READWRITE
	    | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
	ctx->err = Tcl_ObjPrintf("cannot save the profile to \"%s\": %s",
		ctx->path, db ? sqlite3_errmsg(db) : "out of memory");
	Tcl_IncrRefCount(ctx->err);
	ctx->errCode = "OPEN";
	sqlite3_close(db);
	unlink(tmpPath);
	Tcl_DecrRefCount(tmp);
	return TCL_ERROR;
    }

    /*
     * The temporary file is private until renamed: no journal, no sync
     * per transaction; its content is complete when sqlite3_close
     * returns.
     */

    sqlite3_exec(db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;",
	    NULL, NULL, NULL);
    code = WriteDb(interp, db, p, ctx->procs, ctx);
    if (sqlite3_close(db) != SQLITE_OK && code == TCL_OK) {
	code = DbFail(ctx, db, "close");
    }
    if (code == TCL_OK && rename(tmpPath, ctx->path) != 0) {
	ctx->err = Tcl_ObjPrintf("cannot save the profile to \"%s\": %s",
		ctx->path, Tcl_ErrnoMsg(errno));
	Tcl_IncrRefCount(ctx->err);
	ctx->errCode = "IO";
	code = TCL_ERROR;
    }
    if (code != TCL_OK) {
	unlink(tmpPath);
    }
    Tcl_DecrRefCount(tmp);
    return code;
}

/*
 * Statement helpers: prepare, bind by position, step.
 */

static int
Prepare(
    SaveCtx *ctx,
    sqlite3 *db,
    const char *sql,
    sqlite3_stmt **stmtPtr)
{
    if (sqlite3_prepare_v2(db, sql, -1, stmtPtr, NULL) != SQLITE_OK) {
	return DbFail(ctx, db, sql);
    }
    return TCL_OK;
}

static void
BindText(
    sqlite3_stmt *st,
    int i,
    const char *s)
{
    if (s == NULL) {
	sqlite3_bind_null(st, i);
    } else {
	sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
    }
}

static int
Step(
    SaveCtx *ctx,
    sqlite3 *db,
    sqlite3_stmt *st,
    const char *what)
{
    int rc = sqlite3_step(st);

    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (rc != SQLITE_DONE) {
	return DbFail(ctx, db, what);
    }
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * PutMeta --
 *
 *	Inserts one meta row; the value is an integer when it looks like
 *	one (so views and queries can compute with it), text otherwise.
 *
 * Results:
 *	TCL_OK or TCL_ERROR.
 *
 * Side effects:
 *	A row.
 *
 *----------------------------------------------------------------------
 */

static int
PutMeta(
    SaveCtx *ctx,
    sqlite3 *db,
    sqlite3_stmt *st,
    const char *key,
    Tcl_Obj *value)
{
    Tcl_WideInt w;

    BindText(st, 1, key);
    if (value->typePtr != NULL && Tcl_GetWideIntFromObj(NULL, value, &w)
	    == TCL_OK) {
	sqlite3_bind_int64(st, 2, (sqlite3_int64) w);
    } else {
	BindText(st, 2, Tcl_GetString(value));
    }
    return Step(ctx, db, st, "meta");
}

/*
 *----------------------------------------------------------------------
 *
 * BuildMeta --
 *
 *	The meta table of profile p as a dict: the live values (this
 *	process, this interp), overlaid by what a loaded profile carried,
 *	then the profile's own fields.
 *
 * Results:
 *	A new dict (refcount 0).
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static Tcl_Obj *
BuildMeta(
    Tcl_Interp *interp,
    TpProfile *p)
{
    Tcl_Obj *d = Tcl_NewDictObj(), *v, *saved = NULL;
    char host[256], when[64];
    Tcl_Time now;
    time_t secs;
    struct tm tm;
    const char *program = p->program;

#define PUT(k, o) Tcl_DictObjPut(NULL, d, Tcl_NewStringObj((k), -1), (o))
#define PUTW(k, w) PUT((k), Tcl_NewWideIntObj((Tcl_WideInt) (w)))
    PUT("format", Tcl_NewStringObj(TP_FORMAT_NAME, -1));
    PUTW("schema_version", TP_SCHEMA_VERSION);
    if (program == NULL) {
	program = Tcl_GetVar(interp, "::argv0", TCL_GLOBAL_ONLY);
    }
    PUT("program", Tcl_NewStringObj(program ? program : "", -1));
    v = Tcl_GetVar2Ex(interp, "::argv", NULL, TCL_GLOBAL_ONLY);
    PUT("args", v ? v : Tcl_NewObj());
    if (gethostname(host, sizeof(host)) != 0) {
	host[0] = '\0';
    }
    host[sizeof(host) - 1] = '\0';
    PUT("host", Tcl_NewStringObj(host, -1));
    PUTW("pid", getpid());
    PUT("tclprof_version", Tcl_NewStringObj(TCLPROF_VERSION, -1));
    PUT("tcl_version", Tcl_NewStringObj(Tcl_GetVar(interp, "::tcl_patchLevel",
	    TCL_GLOBAL_ONLY) ? Tcl_GetVar(interp, "::tcl_patchLevel",
	    TCL_GLOBAL_ONLY) : "", -1));
    PUTW("sources", 1);

    /*
     * A loaded profile keeps the process facts of the run it came from.
     */

    if (p->savedMeta != NULL) {
	Tcl_DictSearch search;
	Tcl_Obj *key, *value;
	int done;

	saved = Tcl_NewStringObj(p->savedMeta, -1);
	Tcl_IncrRefCount(saved);
	if (Tcl_DictObjFirst(NULL, saved, &search, &key, &value, &done)
		== TCL_OK) {
	    for (; !done; Tcl_DictObjNext(&search, &key, &value, &done)) {
		if (strcmp(Tcl_GetString(key), "procs") != 0) {
		    Tcl_DictObjPut(NULL, d, key, value);
		}
	    }
	    Tcl_DictObjDone(&search);
	}
	Tcl_DecrRefCount(saved);
    }

    PUT("mode", Tcl_NewStringObj(TpModeName(p->mode), -1));
    PUTW("interval_us", p->intervalUs);
    PUT("clock", Tcl_NewStringObj(TpClockName(p->clock), -1));
    PUTW("start_epoch_us", p->startEpochUs);
    secs = (time_t) (p->startEpochUs / 1000000u);
    if (gmtime_r(&secs, &tm) != NULL
	    && strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm) > 0) {
	PUT("start_time", Tcl_NewStringObj(when, -1));
    }
    PUTW("duration_ns", p->elapsedNs);
    PUTW("samples", p->samples);
    PUTW("dropped", p->dropped);
    PUTW("truncated", p->truncated);
    PUTW("unwind_errors", p->unwindErrors);
    PUTW("merge_mismatches", p->mergeMismatch);
    PUTW("handler_ns_sum", p->handlerNsSum);
    PUTW("handler_ns_max", p->handlerNsMax);
    PUTW("handled", p->handled);
    PUTW("first_ns", p->firstNs);
    PUTW("last_ns", p->lastNs);
    if (p->logStride > 1) {
	PUTW("timeline_stride", p->logStride);
    }
    Tcl_GetTime(&now);
    PUTW("saved_epoch_us", (uint64_t) now.sec * 1000000u + (uint64_t) now.usec);
#undef PUT
#undef PUTW
    return d;
}

/*
 * Saved stacks are interned by a string key: "tid|func,line|func,line...".
 */

static void
StackKey(
    Tcl_DString *key,
    uint32_t tid,
    const uint32_t *funcs,
    const int *lines,
    uint32_t n)
{
    char buf[48];
    uint32_t k;

    Tcl_DStringSetLength(key, 0);
    snprintf(buf, sizeof(buf), "%u", tid);
    Tcl_DStringAppend(key, buf, -1);
    for (k = 0; k < n; k++) {
	snprintf(buf, sizeof(buf), "|%u,%d", funcs[k], lines[k]);
	Tcl_DStringAppend(key, buf, -1);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * WriteDb --
 *
 *	Writes schema and content of profile p to the open database db in
 *	one transaction.
 *
 * Results:
 *	TCL_OK, or TCL_ERROR with ctx->err set.
 *
 * Side effects:
 *	Database rows; symbolizes p's C locations.
 *
 *----------------------------------------------------------------------
 */

static int
WriteDb(
    Tcl_Interp *interp,
    sqlite3 *db,
    TpProfile *p,
    Tcl_Obj *procs,
    SaveCtx *ctx)
{
    TpReportOptions ro;
    TpTree *t;
    sqlite3_stmt *st = NULL, *st2 = NULL;
    Tcl_Obj *meta, *key, *value, *savedProcs = NULL;
    Tcl_DictSearch search;
    Tcl_HashTable stackIds;
    Tcl_DString skey;
    uint32_t i, k, maxDepth = 0, nSaved = 0, *funcs = NULL, *saveId = NULL;
    int *lines = NULL, *modUsed = NULL, done, code = TCL_ERROR, isNew;
    Tcl_Size nProcs;
    size_t j;
    Tcl_Obj **procv;
    uint64_t *savedCount = NULL;
    uint32_t *savedTid = NULL, *savedDepth = NULL;

    memset(&ro, 0, sizeof(ro));
    ro.showInternals = 1;
    t = TpTreeBuild(interp, p, &ro);
    Tcl_InitHashTable(&stackIds, TCL_STRING_KEYS);
    Tcl_DStringInit(&skey);

    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
	DbFail(ctx, db, "begin");
	goto done;
    }
    if (sqlite3_exec(db, schemaSql, NULL, NULL, NULL) != SQLITE_OK
	    || sqlite3_exec(db, TpClustersViewSql, NULL, NULL, NULL)
	    != SQLITE_OK) {
	DbFail(ctx, db, "schema");
	goto done;
    }

    /*
     * meta.
     */

    meta = BuildMeta(interp, p);
    Tcl_IncrRefCount(meta);
    if (Prepare(ctx, db, "INSERT INTO meta (key, value) VALUES (?, ?)", &st)
	    != TCL_OK) {
	Tcl_DecrRefCount(meta);
	goto done;
    }
    if (Tcl_DictObjFirst(NULL, meta, &search, &key, &value, &done) == TCL_OK) {
	for (; !done; Tcl_DictObjNext(&search, &key, &value, &done)) {
	    if (PutMeta(ctx, db, st, Tcl_GetString(key), value) != TCL_OK) {
		break;
	    }
	}
	Tcl_DictObjDone(&search);
    }
    Tcl_DecrRefCount(meta);
    sqlite3_finalize(st);
    st = NULL;
    if (ctx->err != NULL) {
	goto done;
    }

    /*
     * modules (those the frames use) and frames (the tree's functions).
     */

    modUsed = calloc((size_t) p->modules.nMods + 1, sizeof(int));
    for (i = 0; i < t->nFuncs; i++) {
	if (t->funcs[i].module >= 0 && t->funcs[i].module < p->modules.nMods) {
	    modUsed[t->funcs[i].module] = 1;
	}
    }
    if (Prepare(ctx, db, "INSERT INTO modules (id, path, name) "
	    "VALUES (?, ?, ?)", &st) != TCL_OK) {
	goto done;
    }
    for (k = 0; k < (uint32_t) p->modules.nMods; k++) {
	const TpModule *m = &p->modules.mods[k];

	if (!modUsed[k]) {
	    continue;
	}
	sqlite3_bind_int64(st, 1, k);
	BindText(st, 2, m->path ? m->path : "");
	BindText(st, 3, m->shortName ? m->shortName : "");
	if (Step(ctx, db, st, "modules") != TCL_OK) {
	    goto done;
	}
    }
    sqlite3_finalize(st);
    st = NULL;
    if (Prepare(ctx, db, "INSERT INTO frames (id, name, kind, type, "
	    "module_id, file, line) VALUES (?, ?, ?, ?, ?, ?, ?)", &st)
	    != TCL_OK) {
	goto done;
    }
    for (i = 0; i < t->nFuncs; i++) {
	const TpFunc *f = &t->funcs[i];

	sqlite3_bind_int64(st, 1, i);
	BindText(st, 2, f->name);
	BindText(st, 3, TpKindName(f->kind));
	BindText(st, 4, (f->kind == TP_KIND_TCL || f->type == TP_TCL_PSEUDO)
		&& f->type <= TP_TCL_PSEUDO ? typeNames[f->type] : NULL);
	if (f->module >= 0 && f->module < p->modules.nMods) {
	    sqlite3_bind_int64(st, 5, f->module);
	}
	BindText(st, 6, f->file);
	sqlite3_bind_int(st, 7, f->line);
	if (Step(ctx, db, st, "frames") != TCL_OK) {
	    goto done;
	}
    }
    sqlite3_finalize(st);
    st = NULL;

    /*
     * stacks and stack_frames. TpTreeStackFuncs with internals shown
     * emits one function per location, each possibly preceded by the
     * command frame it implements (never equal to the location's own
     * function): walking both in step gives each function its line.
     */

    for (i = 0; i < p->nStacks; i++) {
	if (p->stacks[i].depth > maxDepth) {
	    maxDepth = p->stacks[i].depth;
	}
    }
    funcs = malloc(sizeof(uint32_t) * (2 * (size_t) maxDepth + 1));
    lines = malloc(sizeof(int) * (2 * (size_t) maxDepth + 1));
    saveId = malloc(sizeof(uint32_t) * ((size_t) p->nStacks + 1));
    savedCount = calloc((size_t) p->nStacks + 1, sizeof(uint64_t));
    savedTid = calloc((size_t) p->nStacks + 1, sizeof(uint32_t));
    savedDepth = calloc((size_t) p->nStacks + 1, sizeof(uint32_t));
    if (funcs == NULL || lines == NULL || saveId == NULL || savedCount == NULL
	    || savedTid == NULL || savedDepth == NULL || modUsed == NULL) {
	DbFail(ctx, NULL, "memory");
	goto done;
    }
    if (Prepare(ctx, db, "INSERT INTO stack_frames (stack_id, depth, "
	    "frame_id, line) VALUES (?, ?, ?, ?)", &st2) != TCL_OK) {
	goto done;
    }
    for (i = 0; i < p->nStacks; i++) {
	const uint32_t *ids = TpProfileStackIds(p, i);
	uint32_t n = TpTreeStackFuncs(t, p, i, &ro, funcs), loc = 0;
	Tcl_HashEntry *h;

	for (k = 0; k < n; k++) {
	    if (loc < p->stacks[i].depth && funcs[k] == t->locFunc[ids[loc]]) {
		lines[k] = p->locs[ids[loc]].line;
		loc++;
	    } else {
		lines[k] = 0;	/* An inserted command frame. */
	    }
	}
	StackKey(&skey, p->stacks[i].tid, funcs, lines, n);
	h = Tcl_CreateHashEntry(&stackIds, Tcl_DStringValue(&skey), &isNew);
	if (isNew) {
	    Tcl_SetHashValue(h, (ClientData) (uintptr_t) nSaved);
	    savedTid[nSaved] = p->stacks[i].tid;
	    savedDepth[nSaved] = n;
	    for (k = 0; k < n; k++) {
		sqlite3_bind_int64(st2, 1, nSaved);
		sqlite3_bind_int64(st2, 2, k);
		sqlite3_bind_int64(st2, 3, funcs[k]);
		sqlite3_bind_int(st2, 4, lines[k]);
		if (Step(ctx, db, st2, "stack_frames") != TCL_OK) {
		    goto done;
		}
	    }
	    nSaved++;
	}
	saveId[i] = (uint32_t) (uintptr_t) Tcl_GetHashValue(h);
	savedCount[saveId[i]] += p->stacks[i].count;
    }
    sqlite3_finalize(st2);
    st2 = NULL;
    if (Prepare(ctx, db, "INSERT INTO stacks (id, tid, count, depth) "
	    "VALUES (?, ?, ?, ?)", &st) != TCL_OK) {
	goto done;
    }
    for (i = 0; i < nSaved; i++) {
	sqlite3_bind_int64(st, 1, i);
	sqlite3_bind_int64(st, 2, savedTid[i]);
	sqlite3_bind_int64(st, 3, (sqlite3_int64) savedCount[i]);
	sqlite3_bind_int64(st, 4, savedDepth[i]);
	if (Step(ctx, db, st, "stacks") != TCL_OK) {
	    goto done;
	}
    }
    sqlite3_finalize(st);
    st = NULL;

    /*
     * samples: the time-ordered log.
     */

    if (Prepare(ctx, db, "INSERT INTO samples (seq, t_ns, stack_id, tid, "
	    "weight) VALUES (?, ?, ?, ?, ?)", &st) != TCL_OK) {
	goto done;
    }
    for (j = 0; j < p->nLog; j++) {
	const TpLogEntry *e = &p->log[j];

	sqlite3_bind_int64(st, 1, j);
	sqlite3_bind_int64(st, 2, (sqlite3_int64) e->timeNs);
	sqlite3_bind_int64(st, 3, saveId[e->stack]);
	sqlite3_bind_int64(st, 4, p->stacks[e->stack].tid);
	sqlite3_bind_int64(st, 5, e->weight ? e->weight : 1);
	if (Step(ctx, db, st, "samples") != TCL_OK) {
	    goto done;
	}
    }
    sqlite3_finalize(st);
    st = NULL;

    /*
     * calls and edges (trace mode's exact counts).
     */

    if (Prepare(ctx, db, "INSERT INTO calls (callee, type, count) "
	    "VALUES (?, ?, ?)", &st) != TCL_OK
	    || Prepare(ctx, db, "INSERT INTO edges (caller, callee, count) "
	    "VALUES (?, ?, ?)", &st2) != TCL_OK) {
	goto done;
    }
    for (i = 0; i < p->nCalls; i++) {
	const TpCalls *c = &p->calls[i];

	if (c->caller == NULL) {
	    BindText(st, 1, c->callee);
	    BindText(st, 2, c->type >= 0 && c->type <= TP_TCL_PSEUDO
		    ? typeNames[c->type] : NULL);
	    sqlite3_bind_int64(st, 3, (sqlite3_int64) c->count);
	    if (Step(ctx, db, st, "calls") != TCL_OK) {
		goto done;
	    }
	} else {
	    BindText(st2, 1, c->caller);
	    BindText(st2, 2, c->callee);
	    sqlite3_bind_int64(st2, 3, (sqlite3_int64) c->count);
	    if (Step(ctx, db, st2, "edges") != TCL_OK) {
		goto done;
	    }
	}
    }
    sqlite3_finalize(st);
    sqlite3_finalize(st2);
    st = st2 = NULL;

    /*
     * procs: those a loaded profile carried, else this interp's.
     */

    if (p->savedMeta != NULL) {
	Tcl_Obj *saved = Tcl_NewStringObj(p->savedMeta, -1);

	Tcl_IncrRefCount(saved);
	if (Tcl_DictObjGet(NULL, saved, Tcl_NewStringObj("procs", -1),
		&savedProcs) == TCL_OK && savedProcs != NULL) {
	    procs = savedProcs;
	}
	Tcl_IncrRefCount(procs);
	Tcl_DecrRefCount(saved);
    } else {
	Tcl_IncrRefCount(procs);
    }
    if (Prepare(ctx, db, "INSERT OR IGNORE INTO procs (name) VALUES (?)", &st)
	    != TCL_OK) {
	Tcl_DecrRefCount(procs);
	goto done;
    }
    if (Tcl_ListObjGetElements(NULL, procs, &nProcs, &procv) == TCL_OK) {
	for (j = 0; j < (size_t) nProcs; j++) {
	    BindText(st, 1, Tcl_GetString(procv[j]));
	    if (Step(ctx, db, st, "procs") != TCL_OK) {
		break;
	    }
	}
    }
    Tcl_DecrRefCount(procs);
    if (ctx->err != NULL) {
	goto done;
    }
    sqlite3_finalize(st);
    st = NULL;

    /*
     * threads: the names profiler threads shows.
     */

    if (Prepare(ctx, db, "INSERT OR IGNORE INTO threads (tid, name) "
	    "VALUES (?, ?)", &st) != TCL_OK) {
	goto done;
    }
    for (j = 0; j < p->nThreads; j++) {
	sqlite3_bind_int64(st, 1, (sqlite3_int64) p->threads[j].tid);
	BindText(st, 2, p->threads[j].name);
	if (Step(ctx, db, st, "threads") != TCL_OK) {
	    goto done;
	}
    }
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
	DbFail(ctx, db, "commit");
	goto done;
    }
    code = TCL_OK;

  done:
    sqlite3_finalize(st);
    sqlite3_finalize(st2);
    Tcl_DStringFree(&skey);
    Tcl_DeleteHashTable(&stackIds);
    free(funcs);
    free(lines);
    free(saveId);
    free(savedCount);
    free(savedTid);
    free(savedDepth);
    free(modUsed);
    TpTreeFree(t);
    return code;
}

/*
 *----------------------------------------------------------------------
 *
 * LoadError --
 *
 *	Sets a {TCLPROF LOAD code} error naming the file.
 *
 * Results:
 *	TCL_ERROR.
 *
 * Side effects:
 *	Interp result and error code.
 *
 *----------------------------------------------------------------------
 */

static int
LoadError(
    Tcl_Interp *interp,
    const char *code,
    const char *path,
    const char *why)
{
    TpSetError(interp, "LOAD", code, "cannot load profile \"%s\": %s", path,
	    why);
    return TCL_ERROR;
}

static int
LoadDbError(
    Tcl_Interp *interp,
    const char *path,
    sqlite3 *db)
{
    int rc = sqlite3_errcode(db);

    if (rc == SQLITE_NOTADB) {
	return LoadError(interp, "FORMAT", path,
		"not a saved profile (not an SQLite database)");
    }
    return LoadError(interp, rc == SQLITE_CORRUPT ? "CORRUPT" : "IO", path,
	    sqlite3_errmsg(db));
}

/*
 *----------------------------------------------------------------------
 *
 * TpLoadFiles --
 *
 *	`profiler load file ?file ...?`: reads saved profiles, sums them,
 *	and makes the sum the session's profile.
 *
 * Results:
 *	TCL_OK with the number of samples loaded, or TCL_ERROR with
 *	{TCLPROF LOAD OPEN|FORMAT|VERSION|CORRUPT|IO} or {TCLPROF STATE
 *	RUNNING}; the session's profile is unchanged on error.
 *
 * Side effects:
 *	Replaces the session's profile.
 *
 *----------------------------------------------------------------------
 */

int
TpLoadFiles(
    Tcl_Interp *interp,
    int nFiles,
    Tcl_Obj *const files[])
{
    TpProfile *p;
    Tcl_Obj *meta;
    int i;

    if (TpSessionRunning(interp)) {
	TpSetError(interp, "STATE", "RUNNING",
		"cannot load a profile while the profiler is running");
	return TCL_ERROR;
    }
    p = TpProfileNew();
    meta = Tcl_NewDictObj();
    Tcl_IncrRefCount(meta);
    for (i = 0; i < nFiles; i++) {
	Tcl_DString native;
	int code;

	Tcl_UtfToExternalDString(NULL, Tcl_GetString(files[i]), -1, &native);
	code = LoadOne(interp, p, Tcl_DStringValue(&native), meta, i == 0);
	Tcl_DStringFree(&native);
	if (code != TCL_OK) {
	    Tcl_DecrRefCount(meta);
	    TpProfileFree(p);
	    return TCL_ERROR;
	}
    }
    p->savedMeta = strdup(Tcl_GetString(meta));
    Tcl_DecrRefCount(meta);
    if (p->savedMeta == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    if (TpSessionSetProfile(interp, p) != TCL_OK) {
	TpProfileFree(p);
	return TCL_ERROR;
    }
    Tcl_SetObjResult(interp, Tcl_NewWideIntObj((Tcl_WideInt) p->samples));
    return TCL_OK;
}

/*
 * Reading helpers.
 */

static const char *
ColText(
    sqlite3_stmt *st,
    int i)
{
    return (const char *) sqlite3_column_text(st, i);
}

static int
ModeIndex(
    const char *name)
{
    return name == NULL ? TP_MODE_NONE : strcmp(name, "frames") == 0
	    ? TP_MODE_FRAMES : strcmp(name, "trace") == 0 ? TP_MODE_TRACE
	    : TP_MODE_NONE;
}

static int
TypeIndex(
    const char *name)
{
    int i;

    for (i = 0; name != NULL && typeNames[i] != NULL; i++) {
	if (strcmp(name, typeNames[i]) == 0) {
	    return i;
	}
    }
    return TP_TCL_CMD;
}

static int
IsOwnKey(
    const char *key)
{
    int i;

    for (i = 0; ownKeys[i] != NULL; i++) {
	if (strcmp(key, ownKeys[i]) == 0) {
	    return 1;
	}
    }
    return 0;
}

/*
 *----------------------------------------------------------------------
 *
 * ReadMeta --
 *
 *	Checks that db is a saved profile of a known schema version and
 *	adds its meta table to profile p (the first file's facts win,
 *	counters add up) and to the carried metadata dict.
 *
 * Results:
 *	TCL_OK, or TCL_ERROR with a {TCLPROF LOAD ...} error.
 *
 * Side effects:
 *	Profile fields, meta dict.
 *
 *----------------------------------------------------------------------
 */

static int
ReadMeta(
    Tcl_Interp *interp,
    sqlite3 *db,
    const char *path,
    TpProfile *p,
    Tcl_Obj *meta,
    int first)
{
    sqlite3_stmt *st = NULL;
    Tcl_Obj *fileMeta = Tcl_NewDictObj(), *v;
    Tcl_WideInt w;
    int rc, haveTable = 0;

    Tcl_IncrRefCount(fileMeta);
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master WHERE "
	    "type = 'table' AND name = 'meta'", -1, &st, NULL) != SQLITE_OK
	    || sqlite3_step(st) != SQLITE_ROW) {
	sqlite3_finalize(st);
	Tcl_DecrRefCount(fileMeta);
	return LoadDbError(interp, path, db);
    }
    haveTable = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (!haveTable) {
	Tcl_DecrRefCount(fileMeta);
	return LoadError(interp, "FORMAT", path,
		"not a saved profile (an SQLite database without tclprof's "
		"meta table)");
    }
    if (sqlite3_prepare_v2(db, "SELECT key, value FROM meta", -1, &st, NULL)
	    != SQLITE_OK) {
	Tcl_DecrRefCount(fileMeta);
	return LoadError(interp, "FORMAT", path, sqlite3_errmsg(db));
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
	const char *k = ColText(st, 0), *val = ColText(st, 1);

	if (k != NULL) {
	    Tcl_DictObjPut(NULL, fileMeta, Tcl_NewStringObj(k, -1),
		    Tcl_NewStringObj(val ? val : "", -1));
	}
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
	Tcl_DecrRefCount(fileMeta);
	return LoadDbError(interp, path, db);
    }

#define GET(k) (Tcl_DictObjGet(NULL, fileMeta, Tcl_NewStringObj((k), -1), &v) \
	== TCL_OK && v != NULL)
#define GETW(k) (GET(k) && Tcl_GetWideIntFromObj(NULL, v, &w) == TCL_OK)
    if (!GET("format") || strcmp(Tcl_GetString(v), TP_FORMAT_NAME) != 0) {
	Tcl_DecrRefCount(fileMeta);
	return LoadError(interp, "FORMAT", path, "not a saved profile (its "
		"meta table has no format \"" TP_FORMAT_NAME "\")");
    }
    if (!GETW("schema_version") || w < 1) {
	Tcl_DecrRefCount(fileMeta);
	return LoadError(interp, "CORRUPT", path, "bad schema_version");
    }
    if (w > TP_SCHEMA_VERSION) {
	Tcl_Obj *why = Tcl_ObjPrintf("schema version %ld is newer than this "
		"tclprof reads (%d)", (long) w, TP_SCHEMA_VERSION);

	Tcl_IncrRefCount(why);
	LoadError(interp, "VERSION", path, Tcl_GetString(why));
	Tcl_DecrRefCount(why);
	Tcl_DecrRefCount(fileMeta);
	return TCL_ERROR;
    }

    if (first) {
	if (GET("mode")) {
	    p->mode = ModeIndex(Tcl_GetString(v));
	}
	if (GETW("interval_us")) {
	    p->intervalUs = (int) w;
	}
	if (GET("clock")) {
	    p->clock = strcmp(Tcl_GetString(v), "cpu") == 0
		    ? TP_CLOCK_CPU : TP_CLOCK_WALL;
	}
	if (GET("program") && Tcl_GetString(v)[0] != '\0') {
	    p->program = strdup(Tcl_GetString(v));
	}
    }
    if (GETW("start_epoch_us") && (p->startEpochUs == 0
	    || (uint64_t) w < p->startEpochUs)) {
	p->startEpochUs = (uint64_t) w;
    }
    if (GETW("duration_ns")) {
	p->elapsedNs += (uint64_t) w;
    }
    if (GETW("dropped")) {
	p->dropped += (uint64_t) w;
    }
    if (GETW("truncated")) {
	p->truncated += (uint64_t) w;
    }
    if (GETW("unwind_errors")) {
	p->unwindErrors += (uint64_t) w;
    }
    if (GETW("merge_mismatches")) {
	p->mergeMismatch += (uint64_t) w;
    }
    if (GETW("handler_ns_sum")) {
	p->handlerNsSum += (uint64_t) w;
    }
    if (GETW("handled")) {
	p->handled += (uint64_t) w;
    }
    if (GETW("handler_ns_max") && (uint64_t) w > p->handlerNsMax) {
	p->handlerNsMax = (uint64_t) w;
    }

    /*
     * Carried metadata: the first file's facts; sources add up.
     */

    {
	Tcl_DictSearch search;
	Tcl_Obj *key, *value, *old;
	int done;
	Tcl_WideInt sources = 1, before = 0;

	if (GETW("sources")) {
	    sources = w;
	}
	if (Tcl_DictObjGet(NULL, meta, Tcl_NewStringObj("sources", -1), &old)
		== TCL_OK && old != NULL) {
	    Tcl_GetWideIntFromObj(NULL, old, &before);
	}
	Tcl_DictObjFirst(NULL, fileMeta, &search, &key, &value, &done);
	for (; !done; Tcl_DictObjNext(&search, &key, &value, &done)) {
	    if (!IsOwnKey(Tcl_GetString(key)) && (first || Tcl_DictObjGet(NULL,
		    meta, key, &old) != TCL_OK || old == NULL)) {
		Tcl_DictObjPut(NULL, meta, key, value);
	    }
	}
	Tcl_DictObjDone(&search);
	Tcl_DictObjPut(NULL, meta, Tcl_NewStringObj("sources", -1),
		Tcl_NewWideIntObj(before + sources));
    }
#undef GET
#undef GETW
    Tcl_DecrRefCount(fileMeta);
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * LoadOne --
 *
 *	Adds the saved profile in file path to profile p.
 *
 * Results:
 *	TCL_OK, or TCL_ERROR with a {TCLPROF LOAD ...} error.
 *
 * Side effects:
 *	Locations, stacks, samples and calls added to p; meta updated.
 *
 *----------------------------------------------------------------------
 */

typedef struct LoadFrame {
    int kind;			/* TpKind. */
    int type;			/* TpTclType (Tcl, pseudo). */
    int module;			/* Index in p's modules, or -1. */
    char *name;
    char *file;
    int line;
} LoadFrame;

static int
LoadOne(
    Tcl_Interp *interp,
    TpProfile *p,
    const char *path,
    Tcl_Obj *meta,
    int first)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    LoadFrame *frames = NULL;
    Tcl_HashTable modMap;		/* Saved module id -> p's index. */
    uint32_t **stackIds = NULL, *stackDepth = NULL, *stackTid = NULL;
    uint64_t *stackCount = NULL, *stackSeen = NULL, lastNs = 0;
    sqlite3_int64 nFrames = 0, nStacks = 0, id, stride = 1;
    size_t logMax;
    const char *why;
    int rc, code = TCL_ERROR, isNew, k;
    Tcl_Obj *procs;

    if ((why = SqliteReady()) != NULL) {
	return LoadError(interp, "SQLITE", path, why);	/* Nothing held. */
    }
    Tcl_InitHashTable(&modMap, TCL_ONE_WORD_KEYS);
    if (access(path, R_OK) != 0) {
	LoadError(interp, "OPEN", path, Tcl_ErrnoMsg(errno));
	goto done;
    }
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
	    NULL) != SQLITE_OK) {
	LoadError(interp, "OPEN", path, db ? sqlite3_errmsg(db)
		: "out of memory");
	goto done;
    }
    if (ReadMeta(interp, db, path, p, meta, first) != TCL_OK) {
	goto done;
    }
#define FAIL() do { LoadDbError(interp, path, db); goto done; } while (0)
#define CORRUPT(why) do { LoadError(interp, "CORRUPT", path, (why)); \
	goto done; } while (0)

    /*
     * modules: matched to this process's modules by path, so module
     * names show when the same libraries are loaded here; one this
     * process never loaded (an extension the profiled script loaded) is
     * added by its path, so its frames keep their module.
     */

    if (sqlite3_prepare_v2(db, "SELECT id, path FROM modules", -1, &st, NULL)
	    != SQLITE_OK) {
	FAIL();
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
	const char *mpath = ColText(st, 1);
	int m;

	if (mpath != NULL && *mpath != '\0'
		&& (m = TpModulesAddPath(&p->modules, mpath)) >= 0) {
	    Tcl_HashEntry *h = Tcl_CreateHashEntry(&modMap,
		    (const char *) (intptr_t) sqlite3_column_int64(st, 0),
		    &isNew);

	    Tcl_SetHashValue(h, (ClientData) (intptr_t) m);
	}
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc != SQLITE_DONE) {
	FAIL();
    }

    /*
     * frames, indexed by id (ids are dense from 0 as saved; anything
     * else is refused rather than guessed at).
     */

    if (sqlite3_prepare_v2(db, "SELECT count(*), coalesce(max(id), -1) "
	    "FROM frames", -1, &st, NULL) != SQLITE_OK
	    || sqlite3_step(st) != SQLITE_ROW) {
	FAIL();
    }
    nFrames = sqlite3_column_int64(st, 0);
    if (sqlite3_column_int64(st, 1) != nFrames - 1) {
	CORRUPT("frame ids are not 0..n-1");
    }
    sqlite3_finalize(st);
    st = NULL;
    frames = calloc((size_t) nFrames + 1, sizeof(LoadFrame));
    if (frames == NULL) {
	CORRUPT("too many frames");
    }
    if (sqlite3_prepare_v2(db, "SELECT id, name, kind, type, module_id, file, "
	    "line FROM frames", -1, &st, NULL) != SQLITE_OK) {
	FAIL();
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
	LoadFrame *f;
	const char *kind = ColText(st, 2), *name = ColText(st, 1);

	id = sqlite3_column_int64(st, 0);
	if (id < 0 || id >= nFrames || name == NULL || kind == NULL) {
	    CORRUPT("bad row in frames");
	}
	f = &frames[id];
	f->kind = strcmp(kind, "tcl") == 0 ? TP_KIND_TCL
		: strcmp(kind, "internal") == 0 ? TP_KIND_INTERNAL : TP_KIND_C;
	f->type = TypeIndex(ColText(st, 3));
	f->module = -1;
	if (sqlite3_column_type(st, 4) != SQLITE_NULL) {
	    Tcl_HashEntry *h = Tcl_FindHashEntry(&modMap,
		    (const char *) (intptr_t) sqlite3_column_int64(st, 4));

	    if (h != NULL) {
		f->module = (int) (intptr_t) Tcl_GetHashValue(h);
	    }
	}
	f->name = strdup(name);
	f->file = ColText(st, 5) ? strdup(ColText(st, 5)) : NULL;
	f->line = sqlite3_column_int(st, 6);
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc != SQLITE_DONE) {
	FAIL();
    }

    /*
     * stacks and their frames, as location ids of p.
     */

    if (sqlite3_prepare_v2(db, "SELECT count(*), coalesce(max(id), -1) "
	    "FROM stacks", -1, &st, NULL) != SQLITE_OK
	    || sqlite3_step(st) != SQLITE_ROW) {
	FAIL();
    }
    nStacks = sqlite3_column_int64(st, 0);
    if (sqlite3_column_int64(st, 1) != nStacks - 1) {
	CORRUPT("stack ids are not 0..n-1");
    }
    sqlite3_finalize(st);
    st = NULL;
    stackIds = calloc((size_t) nStacks + 1, sizeof(uint32_t *));
    stackDepth = calloc((size_t) nStacks + 1, sizeof(uint32_t));
    stackTid = calloc((size_t) nStacks + 1, sizeof(uint32_t));
    stackCount = calloc((size_t) nStacks + 1, sizeof(uint64_t));
    stackSeen = calloc((size_t) nStacks + 1, sizeof(uint64_t));
    if (stackIds == NULL || stackDepth == NULL || stackTid == NULL
	    || stackCount == NULL || stackSeen == NULL) {
	CORRUPT("too many stacks");
    }
    if (sqlite3_prepare_v2(db, "SELECT id, tid, count, depth FROM stacks", -1,
	    &st, NULL) != SQLITE_OK) {
	FAIL();
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
	sqlite3_int64 depth = sqlite3_column_int64(st, 3);

	id = sqlite3_column_int64(st, 0);
	if (id < 0 || id >= nStacks || depth < 0 || depth > 100000
		|| sqlite3_column_int64(st, 2) < 0) {
	    CORRUPT("bad row in stacks");
	}
	stackTid[id] = (uint32_t) sqlite3_column_int64(st, 1);
	stackCount[id] = (uint64_t) sqlite3_column_int64(st, 2);
	stackDepth[id] = (uint32_t) depth;
	stackIds[id] = calloc((size_t) depth + 1, sizeof(uint32_t));
	if (stackIds[id] == NULL) {
	    CORRUPT("stack too deep");
	}
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc != SQLITE_DONE) {
	FAIL();
    }
    if (sqlite3_prepare_v2(db, "SELECT stack_id, depth, frame_id, line "
	    "FROM stack_frames", -1, &st, NULL) != SQLITE_OK) {
	FAIL();
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
	sqlite3_int64 sid = sqlite3_column_int64(st, 0);
	sqlite3_int64 depth = sqlite3_column_int64(st, 1);
	sqlite3_int64 fid = sqlite3_column_int64(st, 2);
	int line = sqlite3_column_int(st, 3);
	const LoadFrame *f;
	uint32_t loc;

	if (sid < 0 || sid >= nStacks || depth < 0
		|| depth >= (sqlite3_int64) stackDepth[sid]
		|| fid < 0 || fid >= nFrames) {
	    CORRUPT("stack_frames refers to a missing stack, depth or frame");
	}
	f = &frames[fid];
	if (f->kind == TP_KIND_TCL) {
	    loc = TpProfileTclLoc(p, f->type, f->name, strlen(f->name),
		    f->file, f->file ? strlen(f->file) : 0, line);
	} else if (f->type == TP_TCL_PSEUDO) {
	    loc = TpProfilePseudoLoc(p, f->name);
	} else {
	    loc = TpProfileNamedLoc(p, f->kind, f->module, f->name, f->file,
		    f->line);
	}
	stackIds[sid][depth] = loc + 1;	/* 0: not filled. */
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc != SQLITE_DONE) {
	FAIL();
    }
    for (id = 0; id < nStacks; id++) {
	uint32_t d;

	for (d = 0; d < stackDepth[id]; d++) {
	    if (stackIds[id][d] == 0) {
		CORRUPT("a stack has a missing depth");
	    }
	    stackIds[id][d]--;
	}
    }

    /*
     * samples in time order, each with its weight (files saved before
     * weights were kept have none: 1), then what the counts hold beyond
     * the log.
     */

    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = "
	    "'timeline_stride'", -1, &st, NULL) != SQLITE_OK) {
	FAIL();
    }
    if (sqlite3_step(st) == SQLITE_ROW) {
	stride = sqlite3_column_int64(st, 0);
	if (stride < 1 || stride > (1 << 30)) {
	    sqlite3_finalize(st);
	    st = NULL;
	    CORRUPT("timeline_stride is out of range");
	}
    }
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT t_ns, stack_id, tid, weight "
	    "FROM samples ORDER BY seq", -1, &st, NULL) != SQLITE_OK
	    && sqlite3_prepare_v2(db, "SELECT t_ns, stack_id, tid, 1 "
	    "FROM samples ORDER BY seq", -1, &st, NULL) != SQLITE_OK) {
	FAIL();
    }
    logMax = p->logMax;
    p->logMax = SIZE_MAX;	/* The file's log whole, as it was. */
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
	sqlite3_int64 sid = sqlite3_column_int64(st, 1);
	sqlite3_int64 w = sqlite3_column_int64(st, 3);

	if (sid < 0 || sid >= nStacks || w < 1 || w > UINT32_MAX
		|| (uint64_t) w > stackCount[sid] - stackSeen[sid]) {
	    CORRUPT("samples disagree with stacks");
	}
	lastNs = (uint64_t) sqlite3_column_int64(st, 0);
	TpProfileAddStackWeighted(p, stackIds[sid], stackDepth[sid],
		(uint32_t) sqlite3_column_int64(st, 2), lastNs, (uint32_t) w);
	stackSeen[sid] += (uint64_t) w;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc != SQLITE_DONE) {
	FAIL();
    }
    p->logMax = logMax;

    /*
     * A log thinned to one sample in timeline_stride (-timeline) holds
     * only that share of the samples: the rest are counted, not logged.
     */

    if (stride > 1) {
	p->logOff = 1;
	if ((uint32_t) stride > p->logStride) {
	    p->logStride = (uint32_t) stride;
	}
    }
    for (id = 0; id < nStacks; id++) {
	while (stackSeen[id] < stackCount[id] && stride > 1) {
	    uint64_t n = stackCount[id] - stackSeen[id];

	    n = n > UINT32_MAX ? UINT32_MAX : n;
	    TpProfileAddStackWeighted(p, stackIds[id], stackDepth[id],
		    stackTid[id], lastNs, (uint32_t) n);
	    stackSeen[id] += n;
	}
	while (stackSeen[id] < stackCount[id]) {
	    TpProfileAddStack(p, stackIds[id], stackDepth[id], stackTid[id],
		    lastNs);
	    stackSeen[id]++;
	}
    }
    p->logOff = 0;

    /*
     * Thread names (files saved before they were kept have none).
     */

    if (sqlite3_prepare_v2(db, "SELECT tid, name FROM threads", -1, &st,
	    NULL) == SQLITE_OK) {
	while (sqlite3_step(st) == SQLITE_ROW) {
	    if (ColText(st, 1) != NULL) {
		TpProfileNameThread(p, (uint32_t) sqlite3_column_int64(st, 0),
			ColText(st, 1), 0);
	    }
	}
	sqlite3_finalize(st);
    }
    st = NULL;

    /*
     * calls, edges, procs.
     */

    if (sqlite3_prepare_v2(db, "SELECT callee, type, count FROM calls", -1,
	    &st, NULL) != SQLITE_OK) {
	FAIL();
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
	if (ColText(st, 0) != NULL) {
	    TpProfileAddCalls(p, ColText(st, 0), TypeIndex(ColText(st, 1)),
		    NULL, (uint64_t) sqlite3_column_int64(st, 2));
	}
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc != SQLITE_DONE) {
	FAIL();
    }
    if (sqlite3_prepare_v2(db, "SELECT caller, callee, count FROM edges", -1,
	    &st, NULL) != SQLITE_OK) {
	FAIL();
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
	if (ColText(st, 0) != NULL && ColText(st, 1) != NULL) {
	    TpProfileAddCalls(p, ColText(st, 1), TP_TCL_PROC, ColText(st, 0),
		    (uint64_t) sqlite3_column_int64(st, 2));
	}
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc != SQLITE_DONE) {
	FAIL();
    }
    if (Tcl_DictObjGet(NULL, meta, Tcl_NewStringObj("procs", -1), &procs)
	    != TCL_OK || procs == NULL) {
	procs = Tcl_NewListObj(0, NULL);
    }
    if (Tcl_IsShared(procs)) {
	procs = Tcl_DuplicateObj(procs);
    }
    if (sqlite3_prepare_v2(db, "SELECT name FROM procs", -1, &st, NULL)
	    != SQLITE_OK) {
	Tcl_DecrRefCount(procs);	/* procs is unshared here: frees it. */
	FAIL();
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
	if (ColText(st, 0) != NULL) {
	    Tcl_ListObjAppendElement(NULL, procs,
		    Tcl_NewStringObj(ColText(st, 0), -1));
	}
    }
    Tcl_DictObjPut(NULL, meta, Tcl_NewStringObj("procs", -1), procs);
    sqlite3_finalize(st);
    st = NULL;
    if (rc != SQLITE_DONE) {
	FAIL();
    }
#undef FAIL
#undef CORRUPT
    code = TCL_OK;

  done:
    sqlite3_finalize(st);
    sqlite3_close(db);
    for (k = 0; frames != NULL && k < nFrames; k++) {
	free(frames[k].name);
	free(frames[k].file);
    }
    free(frames);
    for (k = 0; stackIds != NULL && k < nStacks; k++) {
	free(stackIds[k]);
    }
    free(stackIds);
    free(stackDepth);
    free(stackTid);
    free(stackCount);
    free(stackSeen);
    Tcl_DeleteHashTable(&modMap);
    return code;
}

/*
 * ----------------------------------------------------------------------
 * profiler atexit: a script run when the process ends.
 *
 * Three ways out, one script:
 *   - Tcl_Exit ([exit], the end of tclsh's script, a C extension calling
 *     Tcl_Exit): an exit handler runs the script with the word "exit";
 *     Tcl runs exit handlers before it tears anything down.
 *   - SIGINT, SIGTERM, SIGHUP and the other exitSignals (only
 *     when their disposition was the default: a
 *     program's own handlers are left alone): the C handler may only
 *     record the signal and mark an async handler (Tcl_AsyncMark is meant
 *     for signal handlers); the async handler runs on the interp's
 *     thread at the next command boundary or event-loop wake-up, runs the
 *     script with "signal N", then restores the default disposition and
 *     raises the signal again, so the process ends as a bare tclsh
 *     would (killed by the signal: a shell shows status 128+N). The
 *     first signal also restores the default disposition at once: if
 *     the interp is stuck in a blocking system call, a second signal
 *     ends the process without a profile.
 *   - A forked child inherits the exit handler and runs the script in
 *     its own process (once per process, see AtExit.ranIn).
 * ----------------------------------------------------------------------
 */

static void
RunAtExitScript(
    AtExit *ae,
    Tcl_Obj *reason)
{
    Tcl_InterpState state;
    Tcl_Obj *cmd;

    if (ae->script == NULL || ae->ranIn == getpid()
	    || Tcl_InterpDeleted(ae->interp)) {
	Tcl_DecrRefCount(reason);
	return;
    }
    ae->ranIn = getpid();
    Tcl_Preserve(ae->interp);
    state = Tcl_SaveInterpState(ae->interp, TCL_OK);
    cmd = Tcl_DuplicateObj(ae->script);
    Tcl_IncrRefCount(cmd);
    Tcl_ListObjAppendList(NULL, cmd, reason);
    if (Tcl_EvalObjEx(ae->interp, cmd, TCL_EVAL_GLOBAL) != TCL_OK) {
	Tcl_Channel err = Tcl_GetStdChannel(TCL_STDERR);

	if (err != NULL) {
	    Tcl_WriteChars(err, "tclprof: error in the atexit script: ", -1);
	    Tcl_WriteObj(err, Tcl_GetVar2Ex(ae->interp, "::errorInfo", NULL,
		    TCL_GLOBAL_ONLY) ? Tcl_GetVar2Ex(ae->interp, "::errorInfo",
		    NULL, TCL_GLOBAL_ONLY) : Tcl_GetObjResult(ae->interp));
	    Tcl_WriteChars(err, "\n", 1);
	    Tcl_Flush(err);
	}
    }
    Tcl_DecrRefCount(cmd);
    Tcl_DecrRefCount(reason);
    Tcl_RestoreInterpState(ae->interp, state);
    Tcl_Release(ae->interp);
}

static void
AtExitProc(
    ClientData cd)
{
    RunAtExitScript(cd, Tcl_NewStringObj("exit", -1));
}

/*
 *----------------------------------------------------------------------
 *
 * TermHandler --
 *
 *	Handler of the exitSignals installed by `profiler atexit`.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Records the signal, marks the async handler, restores the default
 *	disposition (a second signal kills).
 *
 * Signal safety:
 *	Only sigaction and Tcl_AsyncMark, which Tcl documents as callable
 *	from signal handlers; errno saved and restored.
 *
 *----------------------------------------------------------------------
 */

static void
TermHandler(
    int sig)
{
    int savedErrno = errno;
    AtExit *ae = exitState.owner;
    struct sigaction dfl;

    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, NULL);
    if (exitState.pendingSig == 0 && ae != NULL && ae->async != NULL) {
	exitState.pendingSig = sig;
	Tcl_AsyncMark(ae->async);
    }
    errno = savedErrno;
}

static int
SignalAsyncProc(
    ClientData cd,
    Tcl_Interp *interp,
    int code)
{
    AtExit *ae = cd;
    int sig = exitState.pendingSig;
    sigset_t set;
    struct sigaction dfl;

    (void) interp;
    if (sig == 0) {
	if (exitState.pendingExpire) {
	    exitState.pendingExpire = 0;
	    RunAtExitScript(ae, Tcl_NewStringObj("duration", -1));
	}
	return code;
    }
    RunAtExitScript(ae, Tcl_ObjPrintf("signal %d", sig));
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, NULL);
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    _exit(128 + sig);
    return code;	/* Not reached. */
}

/*
 *----------------------------------------------------------------------
 *
 * TpSaveExpired --
 *
 *	-duration ran out: the run is over, so the atexit script runs now,
 *	with "duration", on the interp's thread (at its next command or
 *	event), and not again at exit. Called by the sampler thread.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Marks the async handler of the atexit script, if there is one.
 *
 *----------------------------------------------------------------------
 */

void
TpSaveExpired(void)
{
    pthread_mutex_lock(&exitState.lock);
    if (exitState.owner != NULL && exitState.owner->async != NULL) {
	exitState.pendingExpire = 1;
	Tcl_AsyncMark(exitState.owner->async);
    }
    pthread_mutex_unlock(&exitState.lock);
}

/*
 *----------------------------------------------------------------------
 *
 * AtExitDelete --
 *
 *	AssocData delete proc: the interp goes away, so nothing may run a
 *	script in it any more.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Removes the exit handler, the signal handlers and the async handler.
 *
 *----------------------------------------------------------------------
 */

static void
AtExitDelete(
    ClientData cd,
    Tcl_Interp *interp)
{
    AtExit *ae = cd;

    (void) interp;
    pthread_mutex_lock(&exitState.lock);
    if (exitState.owner == ae) {
	if (exitState.installed) {
	    struct sigaction cur;
	    int i, sig;

	    /* Put back the old disposition only where ours still is. */
	    for (i = 0; i < TP_N_EXIT_SIGNALS; i++) {
		sig = exitSignals[i];
		if (exitState.replaced[sig] && sigaction(sig, NULL, &cur) == 0
			&& cur.sa_handler == TermHandler) {
		    sigaction(sig, &exitState.old[sig], NULL);
		}
		exitState.replaced[sig] = 0;
	    }
	    exitState.installed = 0;
	}
	exitState.owner = NULL;
    }
    pthread_mutex_unlock(&exitState.lock);
    Tcl_DeleteExitHandler(AtExitProc, ae);
    if (ae->async != NULL) {
	Tcl_AsyncDelete(ae->async);
    }
    if (ae->script != NULL) {
	Tcl_DecrRefCount(ae->script);
    }
    ckfree(ae);
}

/*
 *----------------------------------------------------------------------
 *
 * TpSaveAtExit --
 *
 *	`profiler atexit ?script?`: sets (empty: removes) the script run
 *	when the process ends; see the section comment above. Without
 *	script, returns the current one.
 *
 * Results:
 *	TCL_OK, or TCL_ERROR {TCLPROF STATE BUSY} when another interp owns
 *	the hook.
 *
 * Side effects:
 *	Exit handler, async handler, handlers of the exitSignals.
 *
 *----------------------------------------------------------------------
 */

int
TpSaveAtExit(
    Tcl_Interp *interp,
    Tcl_Obj *script)
{
    AtExit *ae = Tcl_GetAssocData(interp, TP_ATEXIT_KEY, NULL);
    int len;

    if (script == NULL) {
	Tcl_SetObjResult(interp, ae && ae->script ? ae->script : Tcl_NewObj());
	return TCL_OK;
    }
    TpObjString(script, &len);
    if (len == 0) {
	if (ae != NULL) {
	    Tcl_DeleteAssocData(interp, TP_ATEXIT_KEY);
	}
	return TCL_OK;
    }
    if (ae == NULL) {
	pthread_mutex_lock(&exitState.lock);
	if (exitState.owner != NULL) {
	    pthread_mutex_unlock(&exitState.lock);
	    TpSetError(interp, "STATE", "BUSY",
		    "another interpreter has set the atexit script");
	    return TCL_ERROR;
	}
	ae = (AtExit *) ckalloc(sizeof(AtExit));
	memset(ae, 0, sizeof(*ae));
	ae->interp = interp;
	ae->async = Tcl_AsyncCreate(SignalAsyncProc, ae);
	exitState.owner = ae;
	exitState.pendingSig = 0;
	if (!exitState.installed) {
	    struct sigaction sa, old;
	    int i, sig;

	    memset(&sa, 0, sizeof(sa));
	    sa.sa_handler = TermHandler;
	    sigemptyset(&sa.sa_mask);
	    sa.sa_flags = SA_RESTART;
	    for (i = 0; i < TP_N_EXIT_SIGNALS; i++) {
		sig = exitSignals[i];
		if (sigaction(sig, NULL, &old) == 0
			&& old.sa_handler == SIG_DFL) {
		    exitState.old[sig] = old;
		    exitState.replaced[sig] = 1;
		    sigaction(sig, &sa, NULL);
		}
	    }
	    exitState.installed = 1;
	}
	pthread_mutex_unlock(&exitState.lock);
	Tcl_CreateExitHandler(AtExitProc, ae);
	Tcl_SetAssocData(interp, TP_ATEXIT_KEY, AtExitDelete, ae);
    }
    if (ae->script != NULL) {
	Tcl_DecrRefCount(ae->script);
    }
    ae->script = script;
    Tcl_IncrRefCount(script);
    Tcl_SetObjResult(interp, script);
    return TCL_OK;
}
