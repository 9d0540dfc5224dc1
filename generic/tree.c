/*
 * tree.c --
 *
 *	Builds the call tree from the profile's stacks. First every location
 *	is given a function (C locations are symbolized here, after
 *	sampling), then every stack is walked root to leaf through the tree,
 *	adding its count to the leaf node's self count. Totals are derived
 *	afterwards from self counts, so they never disagree.
 *
 *	Hiding libtcl's internals happens here, per report: the profile keeps
 *	every frame, the tree skips the hidden ones and their children are
 *	re-parented to the nearest kept frame.
 *
 *	C functions that implement a Tcl command (their address is some
 *	command's objProc) are preceded by a frame naming the command, as in
 *	Figure 9 of the paper "Integrated Tcl/C call stacks" ("tok2column ; tclprim_tok2column"), unless the
 *	Tcl stack already put that command there.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#define NODES_PER_CHUNK 3072	/* A chunk under 128 KB: glibc maps bigger
				 * blocks, and freeing one raises its
				 * thresholds for the whole process. */

typedef struct NodeChunk {
    struct NodeChunk *next;
    int used;
    TpNode nodes[NODES_PER_CHUNK];
} NodeChunk;

typedef struct FuncBuilder {
    TpTree *t;
    uint32_t capFuncs;
    Tcl_HashTable byKey;	/* Key string -> function index. */
    Tcl_HashTable cmdByProc;	/* objProc address -> command name obj. */
} FuncBuilder;

static TpNode *	NewNode(TpTree *t, uint32_t func);
static uint32_t	FuncFor(FuncBuilder *b, const char *key, int kind, int type,
		    int module, const char *name);
static void	CollectCmd(void *cd, const char *name, uintptr_t objProc);
static uint64_t	SumTotals(TpNode *n);
static void	LinkCommandsToProcs(TpTree *t);
static char *	Demangle(const char *name);

/*
 * SameCommand --
 *
 *	Whether a command word as written (a) can name the command whose
 *	qualified name is b: equal up to a leading "::", or a's unqualified
 *	word equals b's tail.
 */

static int
SameCommand(
    const char *a,
    const char *b)
{
    const char *tail;

    a += (a[0] == ':' && a[1] == ':') ? 2 : 0;
    b += (b[0] == ':' && b[1] == ':') ? 2 : 0;
    if (strcmp(a, b) == 0) {
	return 1;
    }
    tail = strrchr(b, ':');
    return tail != NULL && strchr(a, ':') == NULL && strcmp(a, tail + 1) == 0;
}

static TpNode *
NewNode(
    TpTree *t,
    uint32_t func)
{
    NodeChunk *c = t->arena;
    TpNode *n;

    if (c == NULL || c->used == NODES_PER_CHUNK) {
	c = calloc(1, sizeof(NodeChunk));
	if (c == NULL) {
	    Tcl_Panic("tclprof: out of memory");
	}
	c->next = t->arena;
	t->arena = c;
    }
    n = &c->nodes[c->used++];
    n->func = func;
    return n;
}

/*
 *----------------------------------------------------------------------
 *
 * FuncFor --
 *
 *	The function with the given identity key, created if new.
 *
 * Results:
 *	Its index.
 *
 * Side effects:
 *	May add a function.
 *
 *----------------------------------------------------------------------
 */

static uint32_t
FuncFor(
    FuncBuilder *b,
    const char *key,
    int kind,
    int type,
    int module,
    const char *name)
{
    TpTree *t = b->t;
    int isNew;
    Tcl_HashEntry *h = Tcl_CreateHashEntry(&b->byKey, key, &isNew);
    TpFunc *f;

    if (!isNew) {
	return (uint32_t) (uintptr_t) Tcl_GetHashValue(h);
    }
    if (t->nFuncs == b->capFuncs) {
	b->capFuncs = b->capFuncs ? 2 * b->capFuncs : 256;
	t->funcs = realloc(t->funcs, sizeof(TpFunc) * b->capFuncs);
	if (t->funcs == NULL) {
	    Tcl_Panic("tclprof: out of memory");
	}
    }
    f = &t->funcs[t->nFuncs];
    memset(f, 0, sizeof(*f));
    f->kind = (uint8_t) kind;
    f->type = (uint8_t) type;
    f->module = module;
    f->name = strdup(name);
    f->cmdFunc = -1;
    f->procAlias = -1;
    f->own = kind == TP_KIND_TCL && (strncmp(name, "::tclprof::", 11) == 0
	    || strncmp(name, "namespace ::tclprof::", 21) == 0
	    || (type == TP_TCL_CMD && strcmp(name, "profiler") == 0));
    f->wrap = f->own && (strncmp(name, "::tclprof::cli::", 16) == 0
	    || strcmp(name, "namespace ::tclprof::cli") == 0
	    || strcmp(name, "::tclprof::source") == 0);
    if (kind != TP_KIND_TCL) {
	f->startup = (strcmp(name, "_start") == 0
		|| strncmp(name, "__libc_start_", 13) == 0
		|| strcmp(name, "RtlUserThreadStart") == 0	/* Windows */
		|| strcmp(name, "BaseThreadInitThunk") == 0
		|| strcmp(name, "mainCRTStartup") == 0
		|| strcmp(name, "__tmainCRTStartup") == 0) ? 1
		: strstr(name, "+0x") != NULL ? 2 : 0;
    }
    Tcl_SetHashValue(h, (ClientData) (uintptr_t) t->nFuncs);
    return t->nFuncs++;
}

/*
 *----------------------------------------------------------------------
 *
 * CmdPlace --
 *
 *	Gives a command's function the place of one more of its locations.
 *	A command's file and line are those of a call site: a command run
 *	from one place keeps them; one run from several places (regexp,
 *	called all over a program) keeps only what all its places share,
 *	never the first place seen.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Sets or clears f->file and f->line.
 *
 *----------------------------------------------------------------------
 */

static void
CmdPlace(
    TpFunc *f,
    const TpLoc *l)
{
    if (!f->placeSeen) {
	f->placeSeen = 1;
	f->file = l->file;
	f->line = l->file != NULL ? l->line : 0;
	return;
    }
    if (f->file != NULL && (l->file == NULL || strcmp(f->file, l->file) != 0)) {
	f->file = NULL;
    }
    if (f->file == NULL || f->line != l->line) {
	f->line = 0;
    }
}

static void
CollectCmd(
    void *cd,
    const char *name,
    uintptr_t objProc)
{
    FuncBuilder *b = cd;
    int isNew;
    Tcl_HashEntry *h = Tcl_CreateHashEntry(&b->cmdByProc,
	    (const char *) objProc, &isNew);

    /*
     * Several commands may share one objProc (every proc, aliases,
     * ensembles, objects): such an objProc names no command in
     * particular, so it is marked ambiguous (NULL) and never used.
     */

    if (isNew) {
	Tcl_Obj *o = Tcl_NewStringObj(name, -1);

	Tcl_IncrRefCount(o);
	Tcl_SetHashValue(h, o);
    } else if (Tcl_GetHashValue(h) != NULL) {
	Tcl_DecrRefCount((Tcl_Obj *) Tcl_GetHashValue(h));
	Tcl_SetHashValue(h, NULL);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * Demangle --
 *
 *	C++ symbol names of extensions are shown demangled, as the tools
 *	users compare with do, by the C++ runtime's demangler. libstdc++ is
 *	loaded for that only when a mangled name is met (C++ code is in the
 *	process anyway), once; a machine without it keeps mangled names.
 *
 * Results:
 *	A malloc'ed demangled name, or NULL (not mangled, or no demangler).
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

typedef char *(DemangleProc)(const char *mangled, char *buf, size_t *len,
	int *status);

/*
 * Process-wide, written once under demangleOnce: the demangler or NULL.
 */

static pthread_once_t demangleOnce = PTHREAD_ONCE_INIT;
static DemangleProc *demangleProc = NULL;

static void
FindDemangler(void)
{
    void *lib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);

    if (lib != NULL) {
	demangleProc = (DemangleProc *) dlsym(lib, "__cxa_demangle");
    }
}

static char *
Demangle(
    const char *name)
{
    char *out;
    int status = -1;

    if (name[0] != '_' || name[1] != 'Z') {
	return NULL;
    }
    pthread_once(&demangleOnce, FindDemangler);
    if (demangleProc == NULL) {
	return NULL;
    }
    out = demangleProc(name, NULL, NULL, &status);
    if (status != 0) {
	free(out);
	return NULL;
    }
    return out;
}

/*
 *----------------------------------------------------------------------
 *
 * TpTreeBuild --
 *
 *	Builds the call tree of profile p under report options o.
 *
 * Results:
 *	A new tree; free with TpTreeFree.
 *
 * Side effects:
 *	Symbolizes C locations (cached in the profile's locations).
 *
 *----------------------------------------------------------------------
 */

TpTree *
TpTreeBuild(
    Tcl_Interp *interp,
    TpProfile *p,
    const TpReportOptions *o)
{
    TpTree *t = calloc(1, sizeof(TpTree));
    FuncBuilder b;
    uint32_t i, *funcs, maxDepth = 0;
    Tcl_DString key;
    Tcl_HashSearch search;
    Tcl_HashEntry *h;
    char buf[128];

    if (t == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    memset(&b, 0, sizeof(b));
    b.t = t;
    Tcl_InitHashTable(&b.byKey, TCL_STRING_KEYS);
    Tcl_InitHashTable(&b.cmdByProc, TCL_ONE_WORD_KEYS);
    if (interp != NULL) {
	TpInterpCommandProcs(interp, CollectCmd, &b);
    }
    Tcl_DStringInit(&key);
    t->locFunc = malloc(sizeof(uint32_t) * (p->nLocs + 1));
    if (t->locFunc == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    for (i = 0; i < p->nLocs; i++) {
	TpLoc *l = &p->locs[i];
	uint32_t fi;

	Tcl_DStringSetLength(&key, 0);
	if (l->kind == TP_KIND_TCL || l->type == TP_TCL_PSEUDO) {
	    const char *name = l->name;

	    snprintf(buf, sizeof(buf), "t%d|", l->type);
	    Tcl_DStringAppend(&key, buf, -1);
	    if (l->type == TP_TCL_CMD) {
		/*
		 * One spelling per command: global commands as users type
		 * them ("lsort", not "::lsort"), others fully qualified
		 * ("pext::burn" as written is "::pext::burn", which frames
		 * mode names it when it sees the command run). A relative
		 * name inside a namespace is taken from the global one.
		 */

		if (name[0] == ':' && name[1] == ':'
			&& strstr(name + 2, "::") == NULL) {
		    name += 2;
		} else if (name[0] != ':' && name[0] != '$' && name[0] != '['
			&& name[0] != '{' && name[0] != '"'
			&& strstr(name, "::") != NULL) {
		    Tcl_DStringAppend(&key, "::", 2);
		}
	    }
	    Tcl_DStringAppend(&key, name, -1);
	    name = Tcl_DStringValue(&key) + strlen(buf);
	    fi = FuncFor(&b, Tcl_DStringValue(&key), l->kind, l->type, -1,
		    name);
	    if (l->type == TP_TCL_CMD) {
		CmdPlace(&t->funcs[fi], l);
	    } else {
		TpFunc *f = &t->funcs[fi];

		/* The line is one of the function's file, never another's. */
		if (l->file != NULL && f->file == NULL) {
		    f->file = l->file;
		    f->line = 0;
		}
		if (l->line > 0 && (f->line == 0 || l->line < f->line)
			&& (l->file == NULL ? f->file == NULL
			: f->file != NULL && strcmp(l->file, f->file) == 0)) {
		    f->line = l->line;
		}
	    }
	} else if (l->resolved) {
	    /*
	     * Loaded from a saved profile: the name was resolved in the
	     * process that saved it; the address means nothing here.
	     */

	    snprintf(buf, sizeof(buf), "n|%d|%d|", l->kind, l->module);
	    Tcl_DStringAppend(&key, buf, -1);
	    Tcl_DStringAppend(&key, l->name, -1);
	    fi = FuncFor(&b, Tcl_DStringValue(&key), l->kind, 0, l->module,
		    l->name);
	    if (l->file != NULL && t->funcs[fi].file == NULL) {
		t->funcs[fi].file = l->file;
		t->funcs[fi].line = l->line;
	    }
	} else {
	    TpModule *m = l->module >= 0 ? &p->modules.mods[l->module] : NULL;
	    uintptr_t look = l->offset - (l->isCaller ? 1 : 0);
	    const char *sym = NULL;
	    uintptr_t start = 0, size = 0;

	    if (m != NULL && TpSymbolLookup(m, look, &sym, &start, &size)) {
		char *pretty = Demangle(sym);

		snprintf(buf, sizeof(buf), "c|%d|%lx|", l->module,
			(unsigned long) start);
		Tcl_DStringAppend(&key, buf, -1);
		fi = FuncFor(&b, Tcl_DStringValue(&key), l->kind, 0,
			l->module, pretty ? pretty : sym);
		free(pretty);
		t->funcs[fi].addr = m->bias + start;
	    } else if (m != NULL) {
		snprintf(buf, sizeof(buf), "%s+0x%lx", m->shortName,
			(unsigned long) look);
		Tcl_DStringAppend(&key, "c|", -1);
		Tcl_DStringAppend(&key, buf, -1);
		fi = FuncFor(&b, Tcl_DStringValue(&key), l->kind, 0,
			l->module, buf);
	    } else {
		snprintf(buf, sizeof(buf), "0x%lx", (unsigned long) look);
		Tcl_DStringAppend(&key, "c|", -1);
		Tcl_DStringAppend(&key, buf, -1);
		fi = FuncFor(&b, Tcl_DStringValue(&key), l->kind, 0, -1, buf);
	    }
	}
	t->locFunc[i] = fi;
    }

    /*
     * Label command implementations.
     */

    for (i = 0; i < t->nFuncs; i++) {
	TpFunc *f = &t->funcs[i];

	if (f->kind != TP_KIND_TCL && f->addr != 0) {
	    h = Tcl_FindHashEntry(&b.cmdByProc, (const char *) f->addr);
	    if (h != NULL && Tcl_GetHashValue(h) != NULL) {
		const char *cmd = Tcl_GetString(Tcl_GetHashValue(h));

		if (cmd[0] == ':' && cmd[1] == ':'
			&& strstr(cmd + 2, "::") == NULL) {
		    cmd += 2;	/* Global commands as users type them. */
		}
		Tcl_DStringSetLength(&key, 0);
		snprintf(buf, sizeof(buf), "t%d|", TP_TCL_CMD);
		Tcl_DStringAppend(&key, buf, -1);
		Tcl_DStringAppend(&key, cmd, -1);
		f->cmdFunc = (int) FuncFor(&b, Tcl_DStringValue(&key),
			TP_KIND_TCL, TP_TCL_CMD, -1, cmd);
		f = &t->funcs[i];	/* FuncFor may have moved funcs. */
	    }
	}
    }
    Tcl_DStringFree(&key);
    for (h = Tcl_FirstHashEntry(&b.cmdByProc, &search); h != NULL;
	    h = Tcl_NextHashEntry(&search)) {
	if (Tcl_GetHashValue(h) != NULL) {
	    Tcl_DecrRefCount((Tcl_Obj *) Tcl_GetHashValue(h));
	}
    }
    Tcl_DeleteHashTable(&b.cmdByProc);
    Tcl_DeleteHashTable(&b.byKey);
    TpSymbolTrim();

    LinkCommandsToProcs(t);

    /*
     * Walk every stack into the tree.
     */

    t->root = NewNode(t, UINT32_MAX);
    for (i = 0; i < p->nStacks; i++) {
	if (p->stacks[i].depth > maxDepth) {
	    maxDepth = p->stacks[i].depth;
	}
    }
    funcs = malloc(sizeof(uint32_t) * (2 * (size_t) maxDepth + 1));
    if (funcs == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    for (i = 0; i < p->nStacks; i++) {
	uint32_t n = TpTreeStackFuncs(t, p, i, o, funcs), k;
	TpNode *node = t->root;

	for (k = 0; k < n; k++) {
	    TpNode *c, *prev = NULL;

	    for (c = node->firstChild; c != NULL; prev = c, c = c->nextSibling) {
		if (c->func == funcs[k]) {
		    break;
		}
	    }
	    if (c == NULL) {
		c = NewNode(t, funcs[k]);
		c->nextSibling = node->firstChild;
		node->firstChild = c;
	    } else if (prev != NULL) {
		/* Move to front: hot children are found first. */
		prev->nextSibling = c->nextSibling;
		c->nextSibling = node->firstChild;
		node->firstChild = c;
	    }
	    node = c;
	}
	node->self += p->stacks[i].count;
    }
    free(funcs);
    SumTotals(t->root);
    return t;
}

/*
 *----------------------------------------------------------------------
 *
 * LinkCommandsToProcs --
 *
 *	Frames mode names a command frame by its first word as written
 *	("VerilogLanguage" inside namespace ::MtiFS). When that word names a
 *	proc of the profile, the command frame and the proc frame are one
 *	call: the command frame is dropped when the proc frame follows it,
 *	and stands for the proc when it does not yet (a sample taken while
 *	the proc's frame was being set up). The word is resolved as a
 *	qualified name, then from the global namespace, then by its tail
 *	when exactly one proc has that tail.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Sets procAlias of command functions.
 *
 *----------------------------------------------------------------------
 */

static void
LinkCommandsToProcs(
    TpTree *t)
{
    Tcl_HashTable byName, byTail;
    Tcl_HashEntry *h;
    Tcl_DString ds;
    uint32_t i;
    int isNew;

    Tcl_InitHashTable(&byName, TCL_STRING_KEYS);
    Tcl_InitHashTable(&byTail, TCL_STRING_KEYS);
    for (i = 0; i < t->nFuncs; i++) {
	const TpFunc *f = &t->funcs[i];
	const char *tail;

	if (f->kind != TP_KIND_TCL || f->type != TP_TCL_PROC) {
	    continue;
	}
	Tcl_SetHashValue(Tcl_CreateHashEntry(&byName, f->name, &isNew),
		(ClientData) (intptr_t) i);
	tail = strrchr(f->name, ':');
	tail = tail ? tail + 1 : f->name;
	h = Tcl_CreateHashEntry(&byTail, tail, &isNew);
	Tcl_SetHashValue(h, (ClientData) (intptr_t) (isNew ? (int) i : -1));
    }
    Tcl_DStringInit(&ds);
    for (i = 0; i < t->nFuncs; i++) {
	TpFunc *f = &t->funcs[i];

	if (f->kind != TP_KIND_TCL || f->type != TP_TCL_CMD) {
	    continue;
	}
	h = Tcl_FindHashEntry(&byName, f->name);
	if (h == NULL && strncmp(f->name, "::", 2) != 0) {
	    Tcl_DStringSetLength(&ds, 0);
	    Tcl_DStringAppend(&ds, "::", 2);
	    Tcl_DStringAppend(&ds, f->name, -1);
	    h = Tcl_FindHashEntry(&byName, Tcl_DStringValue(&ds));
	}
	if (h == NULL && strchr(f->name, ':') == NULL) {
	    h = Tcl_FindHashEntry(&byTail, f->name);
	}
	if (h != NULL) {
	    f->procAlias = (int) (intptr_t) Tcl_GetHashValue(h);
	}
    }
    Tcl_DStringFree(&ds);
    Tcl_DeleteHashTable(&byName);
    Tcl_DeleteHashTable(&byTail);
}

/*
 *----------------------------------------------------------------------
 *
 * TpTreeStackFuncs --
 *
 *	The functions of one stack, root first, as the tree shows them:
 *	hidden frames skipped, command frames inserted, and consecutive
 *	duplicates (a C function's inner frames, e.g. recursion through a
 *	hidden frame) kept as they are.
 *
 * Results:
 *	The number of functions written to out (room for 2 * depth).
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

uint32_t
TpTreeStackFuncs(
    const TpTree *t,
    const TpProfile *p,
    uint32_t stack,
    const TpReportOptions *o,
    uint32_t *out)
{
    const uint32_t *ids = TpProfileStackIds(p, stack);
    uint32_t depth = p->stacks[stack].depth, k, n = 0, firstOwn = 0;
    uint32_t lastOwn = 0, skip = 0;
    int lastTcl = -1;		/* Last Tcl function emitted. */

    /*
     * The process's start-up frames at the root (_start,
     * __libc_start_main, __libc_start_call_main; on Windows
     * RtlUserThreadStart ... mainCRTStartup; then the program's own
     * unnamed main, as in a stripped tclsh, or a tclsh's main) are
     * folded away: every sample
     * has them, and they are nobody's code.
     */

    if (!o->showInternals) {
	int mainModule = -2;

	for (k = 0; k < depth; k++) {
	    const TpFunc *f = &t->funcs[t->locFunc[ids[k]]];

	    if (f->startup == 1) {
		if (strcmp(f->name, "_start") == 0
			|| strcmp(f->name, "mainCRTStartup") == 0) {
		    mainModule = f->module;
		}
		skip = k + 1;
		continue;
	    }
	    if (skip == k && mainModule >= 0 && f->module == mainModule
		    && (f->startup == 2 || ((strcmp(f->name, "main") == 0
		    || strcmp(f->name, "wmain") == 0)
		    && mainModule < p->modules.nMods && strncmp(
			p->modules.mods[mainModule].shortName, "tclsh", 5) == 0))) {
		skip = k + 1;	/* A tclsh's main, unnamed (Debian's) or
				 * named (built from source); an
				 * application's own main stays. */
	    }
	    break;
	}
    }

    /*
     * Tcl frames that lie between the command line's wrapper frames (its
     * catch/uplevel between ::tclprof::cli::record and ::tclprof::source)
     * go with them; tclprof's other frames are hidden one by one, so the
     * user's frames stay around them (a sample in [profiler status]
     * called by the user's loop, in a script run by the command line).
     */

    if (!o->showInternals) {
	for (k = 0; k < depth; k++) {
	    if (t->funcs[t->locFunc[ids[k]]].wrap) {
		firstOwn = lastOwn ? firstOwn : k;
		lastOwn = k + 1;
	    }
	}
    }

    for (k = skip; k < depth; k++) {
	uint32_t fi = t->locFunc[ids[k]];
	const TpFunc *f = &t->funcs[fi];

	if ((f->own || (k >= firstOwn && k < lastOwn
		&& f->kind == TP_KIND_TCL)) && !o->showInternals) {
	    continue;
	}
	if (f->procAlias >= 0) {
	    if (k + 1 < depth
		    && t->locFunc[ids[k + 1]] == (uint32_t) f->procAlias) {
		continue;
	    }
	    fi = (uint32_t) f->procAlias;
	    f = &t->funcs[fi];
	}

	/*
	 * A C function implementing a command gets the command's frame,
	 * unless a Tcl command frame (the same call, as the Tcl stack
	 * named it) is already right above it, or the function is hidden
	 * (tclprof's own: a sample taken in [profiler status] shows none
	 * of it, live or loaded from a file).
	 */

	if (f->cmdFunc >= 0 && lastTcl != f->cmdFunc
		&& (f->kind != TP_KIND_INTERNAL || o->showInternals)) {
	    int same = lastTcl >= 0 && SameCommand(t->funcs[lastTcl].name,
		    t->funcs[f->cmdFunc].name);

	    if (same && n > 0 && out[n - 1] == (uint32_t) lastTcl
		    && t->funcs[lastTcl].type == TP_TCL_CMD) {
		/*
		 * The command frame as written ("pext::run", "run" inside
		 * its namespace) is the call of this C function's command:
		 * name it by its qualified name, so that one command is one
		 * function whichever way its callers spell it.
		 */

		out[n - 1] = (uint32_t) f->cmdFunc;
		lastTcl = f->cmdFunc;
	    } else if (!same && !(n > 0 && out[n - 1] == (uint32_t) f->cmdFunc)) {
		out[n++] = (uint32_t) f->cmdFunc;
		lastTcl = f->cmdFunc;
	    }
	}
	if (f->kind == TP_KIND_INTERNAL && f->type != TP_TCL_PSEUDO
		&& !o->showInternals) {
	    continue;
	}
	if (f->kind == TP_KIND_TCL) {
	    lastTcl = (int) fi;
	} else if (f->kind == TP_KIND_C) {
	    lastTcl = -1;
	}
	out[n++] = fi;
    }
    if (n == 0 && skip > 0) {
	out[n++] = t->locFunc[ids[skip - 1]];	/* Nothing else to show
						 * (a sample in tclsh's
						 * main, or in Tcl below
						 * it): the sample keeps
						 * its innermost start-up
						 * frame, never vanishes. */
    }
    return n;
}

static uint64_t
SumTotals(
    TpNode *n)
{
    TpNode *c;
    uint64_t total = n->self;

    for (c = n->firstChild; c != NULL; c = c->nextSibling) {
	total += SumTotals(c);
    }
    n->total = total;
    return total;
}

/*
 *----------------------------------------------------------------------
 *
 * TpTreeFree --
 *
 *	Frees a tree.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Frees memory.
 *
 *----------------------------------------------------------------------
 */

void
TpTreeFree(
    TpTree *t)
{
    NodeChunk *c, *next;
    uint32_t i;

    if (t == NULL) {
	return;
    }
    for (c = t->arena; c != NULL; c = next) {
	next = c->next;
	free(c);
    }
    for (i = 0; i < t->nFuncs; i++) {
	free(t->funcs[i].name);
    }
    free(t->funcs);
    free(t->locFunc);
    free(t);
}
