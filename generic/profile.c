/*
 * profile.c --
 *
 *	The profile: interned locations, interned stacks with their counts,
 *	and the time-ordered sample log. This is what the drain writes and
 *	what every report and exporter reads (see the data model in
 *	tclprofInt.h). It is plain C with its own hash tables because the
 *	drain runs on the sampler thread, where no Tcl_Obj may be touched.
 *
 *	Locations are interned by identity: C ones by (module, offset,
 *	caller-ness), so ASLR does not split them; Tcl ones by (type, name,
 *	file, line). Stacks are interned by (thread, location ids) and keep a
 *	count. Their frames are nodes of a trie, (parent node, location),
 *	shared by every stack with the same path from the root: a deep
 *	program samples tens of thousands of distinct stacks that differ only
 *	near the leaf, and storing each whole made the profile grow with the
 *	run (19 MB in a minute of deep recursion).
 *
 *	The log keeps (time, stack) for timeline formats. It is bounded
 *	(logMax entries, -timeline): when it is full, every other entry is
 *	dropped and from then on one sample in two is logged, then one in
 *	four, and so on, so that the timeline covers the whole run at a
 *	coarser grain while every count stays exact. Under -keep the oldest
 *	samples are forgotten instead.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/*
 * An open-addressing table of ids. The caller supplies the hash and an
 * equality test against a stored id, so one table type serves both
 * locations and stacks without copying keys.
 */

struct TpHash {
    uint32_t *slots;		/* id + 1, or 0 for empty. */
    uint32_t *hashes;		/* Full hash of each slot's key. */
    size_t cap;			/* Power of two. */
    size_t used;
};

typedef int (TpEqProc)(const TpProfile *p, uint32_t id, const void *key);

static TpHash *	HashNew(void);
static void	HashFree(TpHash *h);
static int	HashFind(const TpProfile *p, TpHash *h, uint32_t hash,
		    TpEqProc *eq, const void *key, uint32_t *idPtr);
static void	HashInsert(TpHash *h, uint32_t hash, uint32_t id);
static void *	Grow(void *ptr, size_t *cap, size_t need, size_t elemSize);
static uint32_t	NodeIntern(TpProfile *p, uint32_t parent, uint32_t loc);
struct LocKey;
static uint32_t	LocHash(const struct LocKey *k);
static uint32_t	AddLoc(TpProfile *p, const struct LocKey *k, uint32_t h);
static int	FamilyCount(TpProfile *p, const struct LocKey *k,
		    const char *folded, size_t foldedLen);
static void	CopyFamilies(TpProfile *w, const TpProfile *p);
static void	FamilyFold(TpProfile *p, const struct LocKey *k);
static void	FoldLocs(TpProfile *p, struct TpFamily *f);
static void	LogAppend(TpProfile *p, uint32_t stack, uint64_t timeNs,
		    uint32_t weight);

/*
 * Scratch of a profile's stacks (TpProfile.cache).
 */

typedef struct TpStackCache {
    uint32_t *addIds;		/* The last stack added: its location ids */
    uint32_t *addNodes;		/* and the node of each. */
    size_t addDepth, capAdd;
    uint32_t *readIds;		/* The last stack read, materialized. */
    size_t capRead;
    uint32_t readStack;		/* Its index + 1; 0 for none. */
} TpStackCache;
static int	IsOwnModule(const char *name);

/*
 * A family of Tcl names (FamilyCount): the names of one type, file and
 * line that differ only in their numbers.
 */

typedef struct TpFamily {
    char *name;			/* Folded. Owned. */
    char *file;			/* Owned, or NULL. */
    int line;
    uint8_t type;
    uint8_t folded;
    uint32_t count;		/* Names seen, up to instances + 1. */
} TpFamily;


/*
 * FNV-1a over bytes, then mixed: adequate for ids and short names.
 */

static uint32_t
HashBytes(
    uint32_t h,
    const void *data,
    size_t len)
{
    const unsigned char *b = data;
    size_t i;

    for (i = 0; i < len; i++) {
	h = (h ^ b[i]) * 16777619u;
    }
    return h;
}

static TpHash *
HashNew(void)
{
    TpHash *h = calloc(1, sizeof(TpHash));

    if (h == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    h->cap = 1024;
    h->slots = calloc(h->cap, sizeof(uint32_t));
    h->hashes = calloc(h->cap, sizeof(uint32_t));
    if (h->slots == NULL || h->hashes == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    return h;
}

static void
HashFree(
    TpHash *h)
{
    if (h != NULL) {
	free(h->slots);
	free(h->hashes);
	free(h);
    }
}

static int
HashFind(
    const TpProfile *p,
    TpHash *h,
    uint32_t hash,
    TpEqProc *eq,
    const void *key,
    uint32_t *idPtr)
{
    size_t mask = h->cap - 1, i = hash & mask;

    while (h->slots[i] != 0) {
	if (h->hashes[i] == hash && eq(p, h->slots[i] - 1, key)) {
	    *idPtr = h->slots[i] - 1;
	    return 1;
	}
	i = (i + 1) & mask;
    }
    return 0;
}

static void
HashInsert(
    TpHash *h,
    uint32_t hash,
    uint32_t id)
{
    size_t mask, i;

    if ((h->used + 1) * 2 > h->cap) {
	uint32_t *oldSlots = h->slots, *oldHashes = h->hashes;
	size_t oldCap = h->cap, j;

	h->cap *= 2;
	h->slots = calloc(h->cap, sizeof(uint32_t));
	h->hashes = calloc(h->cap, sizeof(uint32_t));
	if (h->slots == NULL || h->hashes == NULL) {
	    Tcl_Panic("tclprof: out of memory");
	}
	h->used = 0;
	for (j = 0; j < oldCap; j++) {
	    if (oldSlots[j] != 0) {
		HashInsert(h, oldHashes[j], oldSlots[j] - 1);
	    }
	}
	free(oldSlots);
	free(oldHashes);
    }
    mask = h->cap - 1;
    i = hash & mask;
    while (h->slots[i] != 0) {
	i = (i + 1) & mask;
    }
    h->slots[i] = id + 1;
    h->hashes[i] = hash;
    h->used++;
}

/*
 *----------------------------------------------------------------------
 *
 * Grow --
 *
 *	Makes an array big enough for `need` elements, doubling.
 *
 * Results:
 *	The (possibly moved) array.
 *
 * Side effects:
 *	Reallocates; panics when memory is exhausted.
 *
 *----------------------------------------------------------------------
 */

static void *
Grow(
    void *ptr,
    size_t *cap,
    size_t need,
    size_t elemSize)
{
    size_t n = *cap ? *cap : 64;

    if (need <= *cap) {
	return ptr;
    }
    while (n < need) {
	n *= 2;
    }
    ptr = realloc(ptr, n * elemSize);
    if (ptr == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    *cap = n;
    return ptr;
}

/*
 *----------------------------------------------------------------------
 *
 * TpProfileNew, TpProfileFree --
 *
 *	Create and destroy an empty profile.
 *
 * Results:
 *	TpProfileNew: the profile.
 *
 * Side effects:
 *	Allocates or frees memory.
 *
 *----------------------------------------------------------------------
 */

TpProfile *
TpProfileNew(void)
{
    TpProfile *p = calloc(1, sizeof(TpProfile));

    if (p == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    p->locIndex = HashNew();
    p->callIndex = HashNew();
    p->cache = calloc(1, sizeof(TpStackCache));
    if (p->cache == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    TpModulesScan(&p->modules);
    return p;
}

void
TpProfileFree(
    TpProfile *p)
{
    uint32_t i;

    if (p == NULL) {
	return;
    }
    for (i = 0; i < p->nLocs; i++) {
	free(p->locs[i].name);
	free(p->locs[i].file);
    }
    free(p->locs);
    free(p->nodes);
    free(p->stacks);
    if (p->cache != NULL) {
	free(p->cache->addIds);
	free(p->cache->addNodes);
	free(p->cache->readIds);
	free(p->cache);
    }
    free(p->log);
    for (i = 0; i < p->nCalls; i++) {
	free(p->calls[i].callee);
	free(p->calls[i].caller);
    }
    free(p->calls);
    free(p->threads);
    free(p->program);
    free(p->savedMeta);
    HashFree(p->callIndex);
    HashFree(p->locIndex);
    for (i = 0; i < p->nFams; i++) {
	free(p->fams[i].name);
	free(p->fams[i].file);
    }
    free(p->fams);
    HashFree(p->famIndex);
    free(p->nodeSlots);
    free(p->nodeStack);
    TpModulesFree(&p->modules);
    free(p);
}

/*
 *----------------------------------------------------------------------
 *
 * TpProfileBytes --
 *
 *	The heap memory the profile holds: its arrays at their allocated
 *	capacity, its hash tables and its names (the module table and the
 *	symbol tables, shared with reports, are not counted).
 *
 * Results:
 *	Bytes.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

size_t
TpProfileBytes(
    const TpProfile *p)
{
    size_t n = sizeof(TpProfile);
    uint32_t i;

    if (p == NULL) {
	return 0;
    }
    n += (size_t) p->capLocs * sizeof(TpLoc);
    for (i = 0; i < p->nLocs; i++) {
	n += (p->locs[i].name ? strlen(p->locs[i].name) + 1 : 0)
		+ (p->locs[i].file ? strlen(p->locs[i].file) + 1 : 0);
    }
    n += (size_t) p->capNodes * sizeof(TpStackNode);
    n += (size_t) p->capStacks * sizeof(TpStack);
    n += sizeof(TpStackCache) + (p->cache->capAdd * 2 + p->cache->capRead)
	    * sizeof(uint32_t);
    n += p->capLog * sizeof(TpLogEntry);
    n += (size_t) p->capCalls * sizeof(TpCalls);
    n += (p->locIndex->cap + p->callIndex->cap) * 2 * sizeof(uint32_t);
    n += (size_t) p->capFams * sizeof(TpFamily)
	    + (p->famIndex ? p->famIndex->cap * 2 * sizeof(uint32_t) : 0);
    for (i = 0; i < p->nFams; i++) {
	n += strlen(p->fams[i].name) + 1
		+ (p->fams[i].file ? strlen(p->fams[i].file) + 1 : 0);
    }
    n += (p->capNodeSlots + p->capNodeStack) * sizeof(uint32_t);
    return n;
}

/*
 * Location keys.
 */

typedef struct LocKey {
    int kind, type, module, isCaller;
    int named;			/* Identity is the name (Tcl, pseudo, and
				 * C locations loaded with their name). */
    uintptr_t offset;
    const char *name; size_t nameLen;
    const char *file; size_t fileLen;
    int line;
} LocKey;

static int
StrEq(
    const char *s,
    const char *b,
    size_t len)
{
    if (s == NULL) {
	return len == 0;
    }
    return strncmp(s, b, len) == 0 && s[len] == '\0';
}

static int
LocEq(
    const TpProfile *p,
    uint32_t id,
    const void *keyPtr)
{
    const LocKey *k = keyPtr;
    const TpLoc *l = &p->locs[id];

    if (l->kind != k->kind || l->type != k->type) {
	return 0;
    }
    if (k->named != l->resolved) {
	return 0;
    }
    if (k->kind == TP_KIND_TCL || k->type == TP_TCL_PSEUDO || k->named) {
	return l->line == k->line && StrEq(l->name, k->name, k->nameLen)
		&& StrEq(l->file, k->file, k->fileLen)
		&& (!k->named || l->module == k->module);
    }
    return l->module == k->module && l->offset == k->offset
	    && l->isCaller == k->isCaller;
}

static char *
DupN(
    const char *s,
    size_t len)
{
    char *d;

    if (s == NULL || len == 0) {
	return NULL;
    }
    d = malloc(len + 1);
    if (d == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

static uint32_t
LocHash(
    const LocKey *k)
{
    uint32_t h = 2166136261u;

    h = HashBytes(h, &k->kind, sizeof(int));
    h = HashBytes(h, &k->type, sizeof(int));
    if (k->kind == TP_KIND_TCL || k->type == TP_TCL_PSEUDO || k->named) {
	h = HashBytes(h, k->name, k->nameLen);
	h = HashBytes(h, k->file, k->fileLen);
	h = HashBytes(h, &k->line, sizeof(int));
	if (k->named) {
	    h = HashBytes(h, &k->module, sizeof(int));
	}
    } else {
	h = HashBytes(h, &k->module, sizeof(int));
	h = HashBytes(h, &k->offset, sizeof(uintptr_t));
	h = HashBytes(h, &k->isCaller, sizeof(int));
    }
    return h;
}

static uint32_t
InternLoc(
    TpProfile *p,
    const LocKey *k)
{
    uint32_t h = LocHash(k), id;

    if (HashFind(p, p->locIndex, h, LocEq, k, &id)) {
	return id;
    }
    return AddLoc(p, k, h);
}

/*
 * AddLoc: a new location for key k (of hash h), whether or not one with
 * the same key exists (a window copies a folded family's locations, which
 * share a name, one for one).
 */

static uint32_t
AddLoc(
    TpProfile *p,
    const LocKey *k,
    uint32_t h)
{
    uint32_t id;
    size_t cap;
    TpLoc *l;

    cap = p->capLocs;
    p->locs = Grow(p->locs, &cap, (size_t) p->nLocs + 1, sizeof(TpLoc));
    p->capLocs = (uint32_t) cap;
    id = p->nLocs++;
    l = &p->locs[id];
    memset(l, 0, sizeof(*l));
    l->kind = (uint8_t) k->kind;
    l->type = (uint8_t) k->type;
    l->module = k->module;
    l->offset = k->offset;
    l->isCaller = (uint8_t) k->isCaller;
    l->name = DupN(k->name, k->nameLen);
    l->file = DupN(k->file, k->fileLen);
    l->line = k->line;
    l->resolved = (uint8_t) k->named;
    HashInsert(p->locIndex, h, id);
    return id;
}

/*
 *----------------------------------------------------------------------
 *
 * TpProfileCLoc --
 *
 *	Interns the C location of a program counter. isCaller says the pc
 *	is a return address (every frame but the interrupted one): its
 *	call instruction, and so its function and line, is at pc - 1.
 *
 * Results:
 *	The location id.
 *
 * Side effects:
 *	May rescan the loaded modules (a library loaded since the last scan)
 *	and add a location.
 *
 *----------------------------------------------------------------------
 */

/*
 *----------------------------------------------------------------------
 *
 * IsOwnModule --
 *
 *	Whether a module is tclprof's own library: libtclprof*.so on Unix,
 *	tclprof.dll or tclprof<version>.dll on Windows (in any case there).
 *
 *----------------------------------------------------------------------
 */

static int
IsOwnModule(
    const char *name)
{
    static const char own[] = "tclprof";
    size_t i;

    if (strncmp(name, "libtclprof", 10) == 0) {
	return 1;
    }
    for (i = 0; i < sizeof(own) - 1; i++) {
	if ((name[i] | 0x20) != own[i]) {
	    return 0;
	}
    }
    while (name[i] >= '0' && name[i] <= '9') {
	i++;
    }
    return (name[i] == '.' && (name[i + 1] | 0x20) == 'd'
	    && (name[i + 2] | 0x20) == 'l' && (name[i + 3] | 0x20) == 'l'
	    && name[i + 4] == '\0');
}

uint32_t
TpProfileCLoc(
    TpProfile *p,
    uintptr_t pc,
    int isCaller)
{
    LocKey k;
    uintptr_t offset = pc;
    int mod = TpModulesFind(&p->modules, pc, &offset);

    if (mod < 0 && TpNowNs() - p->lastScanNs > 50u * 1000 * 1000) {
	/*
	 * A library loaded since the last scan. Rate-limited: a pc in no
	 * module at all (JIT code, a corrupt frame) would rescan per sample.
	 */

	p->lastScanNs = TpNowNs();
	TpModulesScan(&p->modules);
	mod = TpModulesFind(&p->modules, pc, &offset);
    }
    if (mod < 0) {
	offset = pc;
    }
    memset(&k, 0, sizeof(k));
    /*
     * libtcl's frames are internals; so are the profiler's own (its trace
     * procedure in trace mode): both are hidden unless asked for.
     */

    k.kind = (mod >= 0 && (p->modules.mods[mod].isTcl
	    || (offset >= p->modules.mods[mod].tclLo
		&& offset < p->modules.mods[mod].tclHi)
	    || IsOwnModule(p->modules.mods[mod].shortName)))
	    ? TP_KIND_INTERNAL : TP_KIND_C;
    k.type = 0;
    k.module = mod;
    k.offset = offset;
    k.isCaller = isCaller ? 1 : 0;
    return InternLoc(p, &k);
}

/*
 *----------------------------------------------------------------------
 *
 * TpProfileTclLoc, TpProfilePseudoLoc --
 *
 *	Intern a Tcl location (proc, command, ...) or a pseudo-frame such
 *	as "[truncated]".
 *
 * Results:
 *	The location id.
 *
 * Side effects:
 *	May add a location.
 *
 *----------------------------------------------------------------------
 */

uint32_t
TpProfileTclLoc(
    TpProfile *p,
    int type,
    const char *name,
    size_t nameLen,
    const char *file,
    size_t fileLen,
    int line)
{
    LocKey k;
    uint32_t h, id;
    char *folded;
    size_t foldedLen;

    memset(&k, 0, sizeof(k));
    k.kind = TP_KIND_TCL;
    k.type = type;
    k.module = -1;
    k.name = nameLen ? name : "?";
    k.nameLen = nameLen ? nameLen : 1;
    k.file = file;
    k.fileLen = file ? fileLen : 0;
    k.line = line;
    if (p->instances == 0 || type == TP_TCL_PSEUDO || type == TP_TCL_LAMBDA
	    || type == TP_TCL_EVAL) {
	/* Lambdas and script levels are named by their place or file. */
	return InternLoc(p, &k);
    }
    if (k.fileLen == 0 && line <= 0 && type != TP_TCL_CMD
	    && type != TP_TCL_CORO) {
	/*
	 * A proc or method without a place (trace mode names them so):
	 * numbered procs written apart (::step1 ... ::step20) would be
	 * one family. As the trace, only commands and coroutines fold
	 * without one.
	 */

	return InternLoc(p, &k);
    }
    h = LocHash(&k);
    if (HashFind(p, p->locIndex, h, LocEq, &k, &id)) {
	return id;
    }
    folded = TpFoldNumbers(k.name, k.nameLen, &foldedLen);
    if (folded == NULL) {
	if (memchr(k.name, '*', k.nameLen) != NULL) {
	    /*
	     * A name the trace folded (trace.c, TraceName): the names of
	     * its family met so far are folded now.
	     */

	    FamilyFold(p, &k);
	}
	return AddLoc(p, &k, h);
    }
    if (FamilyCount(p, &k, folded, foldedLen)) {
	k.name = folded;
	k.nameLen = foldedLen;
	id = InternLoc(p, &k);
    } else {
	id = AddLoc(p, &k, h);
    }
    free(folded);
    return id;
}

/*
 *----------------------------------------------------------------------
 *
 * TpFoldNumbers --
 *
 *	A name with the numbers of its last part (after the last "::")
 *	replaced by "*": each run that starts with a digit and goes on over
 *	hexadecimal digits ("::ns2::gen17" and "::ns2::gen18" give
 *	"::ns2::gen*", "sock55d0c8a0" gives "sock*"). A namespace's
 *	numbers stay: they are rarely a counter, and a name that kept them
 *	is easier to find in the program.
 *
 * Results:
 *	The folded name (malloc, NUL-terminated, its length in *lenPtr),
 *	or NULL when the last part has no digit.
 *
 * Side effects:
 *	Allocates.
 *
 *----------------------------------------------------------------------
 */

char *
TpFoldNumbers(
    const char *name,
    size_t len,
    size_t *lenPtr)
{
    size_t i, last = 0, n;
    char *out;

    for (i = 0; i + 1 < len; i++) {
	if (name[i] == ':' && name[i + 1] == ':') {
	    last = i + 2;
	}
    }
    for (i = last; i < len && !isdigit((unsigned char) name[i]); i++) {
	/* Empty. */
    }
    if (i == len) {
	return NULL;
    }
    out = malloc(len + 1);
    if (out == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    memcpy(out, name, last);
    n = last;
    for (i = last; i < len; ) {
	if (isdigit((unsigned char) name[i])) {
	    while (i < len && isxdigit((unsigned char) name[i])) {
		i++;
	    }
	    out[n++] = '*';
	} else {
	    out[n++] = name[i++];
	}
    }
    out[n] = '\0';
    *lenPtr = n;
    return out;
}

/*
 *----------------------------------------------------------------------
 *
 * FamilyCount --
 *
 *	Counts a new Tcl name in its family: the names of one type, file
 *	and line that fold to the same name (TpFoldNumbers). Past
 *	p->instances names the family is folded: the locations of its
 *	names so far are renamed to the folded name, so that reports
 *	count them as one function with every later one.
 *
 * Results:
 *	1 if the family is folded (the caller interns the folded name),
 *	else 0 (the caller adds the name itself).
 *
 * Side effects:
 *	May add a family, and rename locations.
 *
 *----------------------------------------------------------------------
 */

static int
FamEq(
    const TpProfile *p,
    uint32_t id,
    const void *keyPtr)
{
    const LocKey *k = keyPtr;
    const TpFamily *f = &p->fams[id];

    return f->type == k->type && f->line == k->line
	    && StrEq(f->name, k->name, k->nameLen)
	    && StrEq(f->file, k->file, k->fileLen);
}

static int
FamilyCount(
    TpProfile *p,
    const LocKey *k,
    const char *folded,
    size_t foldedLen)
{
    LocKey fk = *k;
    uint32_t h, id;
    size_t cap;
    TpFamily *f;

    fk.name = folded;
    fk.nameLen = foldedLen;
    h = LocHash(&fk);
    if (p->famIndex == NULL) {
	p->famIndex = HashNew();
    }
    if (!HashFind(p, p->famIndex, h, FamEq, &fk, &id)) {
	cap = p->capFams;
	p->fams = Grow(p->fams, &cap, (size_t) p->nFams + 1, sizeof(TpFamily));
	p->capFams = (uint32_t) cap;
	id = p->nFams++;
	f = &p->fams[id];
	memset(f, 0, sizeof(*f));
	f->name = DupN(folded, foldedLen);
	f->file = DupN(k->file, k->fileLen);
	f->line = k->line;
	f->type = (uint8_t) k->type;
	HashInsert(p->famIndex, h, id);
    }
    f = &p->fams[id];
    if (f->folded) {
	return 1;
    }
    if (++f->count <= p->instances) {
	return 0;
    }
    FoldLocs(p, f);
    return 1;
}

/*
 * FamilyFold: folds the family whose folded name is k's, if there is one
 * (a name that arrives folded). FoldLocs: marks family f folded and
 * renames the locations of its names.
 */

static void
FamilyFold(
    TpProfile *p,
    const LocKey *k)
{
    uint32_t id;

    if (p->famIndex != NULL
	    && HashFind(p, p->famIndex, LocHash(k), FamEq, k, &id)
	    && !p->fams[id].folded) {
	FoldLocs(p, &p->fams[id]);
    }
}

static void
FoldLocs(
    TpProfile *p,
    TpFamily *f)
{
    uint32_t i;

    f->folded = 1;
    p->nFolded++;
    for (i = 0; i < p->nLocs; i++) {
	TpLoc *l = &p->locs[i];
	char *ln;
	size_t lnLen;

	if (l->kind != TP_KIND_TCL || l->type != f->type || l->resolved
		|| l->line != f->line || l->name == NULL
		|| !StrEq(l->file, f->file ? f->file : "",
			f->file ? strlen(f->file) : 0)) {
	    continue;
	}
	ln = TpFoldNumbers(l->name, strlen(l->name), &lnLen);
	if (ln != NULL && strcmp(ln, f->name) == 0) {
	    free(l->name);
	    l->name = ln;		/* Stays under its old hash: found by
					 * no lookup, named as the family. */
	} else {
	    free(ln);
	}
    }
}

/*
 * CopyFamilies: w (a window or compacted copy of p, which may take p's
 * place and go on sampling) folds the names p folds and counts on.
 */

static void
CopyFamilies(
    TpProfile *w,
    const TpProfile *p)
{
    uint32_t i;

    w->instances = p->instances;
    w->nFolded = p->nFolded;
    if (p->nFams == 0) {
	return;
    }
    w->famIndex = HashNew();
    w->fams = malloc(sizeof(TpFamily) * p->nFams);
    if (w->fams == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    w->nFams = w->capFams = p->nFams;
    for (i = 0; i < p->nFams; i++) {
	const TpFamily *f = &p->fams[i];
	LocKey k;

	w->fams[i] = *f;
	w->fams[i].name = strdup(f->name);
	w->fams[i].file = f->file ? strdup(f->file) : NULL;
	memset(&k, 0, sizeof(k));
	k.kind = TP_KIND_TCL;
	k.type = f->type;
	k.module = -1;
	k.name = f->name;
	k.nameLen = strlen(f->name);
	k.file = f->file;
	k.fileLen = f->file ? strlen(f->file) : 0;
	k.line = f->line;
	HashInsert(w->famIndex, LocHash(&k), i);
    }
}

uint32_t
TpProfilePseudoLoc(
    TpProfile *p,
    const char *name)
{
    LocKey k;

    memset(&k, 0, sizeof(k));
    k.kind = TP_KIND_INTERNAL;
    k.type = TP_TCL_PSEUDO;
    k.module = -1;
    k.name = name;
    k.nameLen = strlen(name);
    return InternLoc(p, &k);
}

/*
 *----------------------------------------------------------------------
 *
 * TpProfileNamedLoc --
 *
 *	Interns a C or internal location known by its function's name
 *	rather than by an address: the locations of a profile loaded from
 *	a saved file, whose addresses meant something only in the process
 *	that saved it. They are marked resolved, so reports use the name
 *	as is (tree.c); module is an index in this profile's module table
 *	or -1.
 *
 * Results:
 *	The location id.
 *
 * Side effects:
 *	May add a location.
 *
 *----------------------------------------------------------------------
 */

uint32_t
TpProfileNamedLoc(
    TpProfile *p,
    int kind,
    int module,
    const char *name,
    const char *file,
    int line)
{
    LocKey k;

    memset(&k, 0, sizeof(k));
    k.kind = kind;
    k.type = 0;
    k.module = module;
    k.named = 1;
    k.name = name;
    k.nameLen = strlen(name);
    k.file = file;
    k.fileLen = file ? strlen(file) : 0;
    k.line = line;
    return InternLoc(p, &k);
}

/*
 * Stack keys.
 */

static uint32_t
Mix2(
    uint32_t a,
    uint32_t b)
{
    uint32_t h = a * 0x9e3779b1u ^ (b + 0x7f4a7c15u) * 0x85ebca77u;

    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    return h ^ (h >> 13);
}

/*
 *----------------------------------------------------------------------
 *
 * NodeSlot, NodeIntern --
 *
 *	NodeIntern: the trie node for location loc called from node parent
 *	(TP_NODE_NONE: at the root), added if new. The table holds node ids
 *	only (at most two thirds full); a slot's hash is recomputed from its
 *	node when the table grows. NodeSlot: the slot holding that node, or
 *	the empty slot where it goes.
 *
 * Results:
 *	The node's id; the slot's index.
 *
 * Side effects:
 *	May add a node.
 *
 *----------------------------------------------------------------------
 */

static size_t
NodeSlot(
    const TpProfile *p,
    uint32_t parent,
    uint32_t loc)
{
    size_t mask = p->capNodeSlots - 1, i;

    for (i = Mix2(parent, loc) & mask; p->nodeSlots[i] != 0;
	    i = (i + 1) & mask) {
	const TpStackNode *n = &p->nodes[p->nodeSlots[i] - 1];

	if (n->parent == parent && n->loc == loc) {
	    break;
	}
    }
    return i;
}

static uint32_t
NodeIntern(
    TpProfile *p,
    uint32_t parent,
    uint32_t loc)
{
    size_t i, cap;
    uint32_t id;

    /*
     * Room for one more node first, so that one probe finds the node or
     * the slot it goes in.
     */

    if (3 * ((size_t) p->nNodes + 1) > 2 * p->capNodeSlots) {
	uint32_t j;

	free(p->nodeSlots);
	p->capNodeSlots = p->capNodeSlots ? 2 * p->capNodeSlots : 1024;
	p->nodeSlots = calloc(p->capNodeSlots, sizeof(uint32_t));
	if (p->nodeSlots == NULL) {
	    Tcl_Panic("tclprof: out of memory");
	}
	for (j = 0; j < p->nNodes; j++) {
	    p->nodeSlots[NodeSlot(p, p->nodes[j].parent, p->nodes[j].loc)]
		    = j + 1;
	}
    }
    i = NodeSlot(p, parent, loc);
    if (p->nodeSlots[i] != 0) {
	return p->nodeSlots[i] - 1;
    }
    if (p->nNodes >= TP_NODE_NONE - 1) {
	Tcl_Panic("tclprof: too many stack frames");
    }
    cap = p->capNodes;
    p->nodes = Grow(p->nodes, &cap, (size_t) p->nNodes + 1,
	    sizeof(TpStackNode));
    p->capNodes = (uint32_t) cap;
    id = p->nNodes++;
    p->nodes[id].parent = parent;
    p->nodes[id].loc = loc;
    p->nodeSlots[i] = id + 1;
    return id;
}

/*
 *----------------------------------------------------------------------
 *
 * TpProfileAddStack --
 *
 *	Counts one sample (TpProfileAddStackWeighted: weight samples) of
 *	the stack ids[0..depth) (root first) taken on thread tid at timeNs.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Interns the stack, increments its count, appends to the log.
 *
 *----------------------------------------------------------------------
 */

void
TpProfileAddStack(
    TpProfile *p,
    const uint32_t *ids,
    uint32_t depth,
    uint32_t tid,
    uint64_t timeNs)
{
    TpProfileAddStackWeighted(p, ids, depth, tid, timeNs, 1);
}

void
TpProfileAddStackWeighted(
    TpProfile *p,
    const uint32_t *ids,
    uint32_t depth,
    uint32_t tid,
    uint64_t timeNs,
    uint32_t weight)
{
    TpStackCache *c = p->cache;
    uint32_t id, node = TP_NODE_NONE, *slot;
    size_t i = 0, cap, at;

    /*
     * The trie path of ids. Consecutive samples mostly share their outer
     * frames: the frames the last stack added had in common with this
     * one have their nodes already, and only the rest are looked up.
     */

    while (i < depth && i < c->addDepth && ids[i] == c->addIds[i]) {
	i++;
    }
    if (i > 0) {
	node = c->addNodes[i - 1];
    }
    if (depth > c->capAdd) {
	cap = c->capAdd;
	c->addIds = Grow(c->addIds, &cap, depth, sizeof(uint32_t));
	cap = c->capAdd;
	c->addNodes = Grow(c->addNodes, &cap, depth, sizeof(uint32_t));
	c->capAdd = cap;
    }
    for (; i < depth; i++) {
	node = NodeIntern(p, node, ids[i]);
	c->addIds[i] = ids[i];
	c->addNodes[i] = node;
    }
    c->addDepth = depth;

    /*
     * The stack: the one ending at that node on this thread.
     */

    at = (uint32_t) (node + 1);	/* The empty stack's node: 0. */
    if (at + 1 > p->capNodeStack) {
	size_t old = p->capNodeStack;

	cap = old;
	p->nodeStack = Grow(p->nodeStack, &cap, at + 1, sizeof(uint32_t));
	memset(p->nodeStack + old, 0, (cap - old) * sizeof(uint32_t));
	p->capNodeStack = cap;
    }
    slot = &p->nodeStack[at];
    for (id = *slot; id != 0 && p->stacks[id - 1].tid != tid;
	    id = p->stacks[id - 1].next) {
    }
    if (id != 0) {
	id--;
    } else {
	cap = p->capStacks;
	p->stacks = Grow(p->stacks, &cap, (size_t) p->nStacks + 1,
		sizeof(TpStack));
	p->capStacks = (uint32_t) cap;
	id = p->nStacks++;
	p->stacks[id].node = node;
	p->stacks[id].depth = depth;
	p->stacks[id].count = 0;
	p->stacks[id].tid = tid;
	p->stacks[id].next = *slot;
	*slot = id + 1;
	p->stackFrames += depth;
    }
    p->stacks[id].count += weight;
    p->samples += weight;
    if (p->samples == 1 || timeNs < p->firstNs) {
	p->firstNs = timeNs;
    }
    if (timeNs > p->lastNs) {
	p->lastNs = timeNs;
    }
    LogAppend(p, id, timeNs, weight);
}

/*
 *----------------------------------------------------------------------
 *
 * LogAppend --
 *
 *	Logs a sample of stack at timeNs, keeping the log within logMax
 *	entries (see the file comment).
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	May thin the log and double logStride, or (logKeep) forget the
 *	oldest eighth of the samples.
 *
 *----------------------------------------------------------------------
 */

static void
LogAppend(
    TpProfile *p,
    uint32_t stack,
    uint64_t timeNs,
    uint32_t weight)
{
    size_t max = p->logMax ? p->logMax
	    : TP_DEFAULT_TIMELINE / sizeof(TpLogEntry);

    if (p->logOff) {
	return;
    }
    if (p->logStride > 1 && ++p->logSkip < p->logStride) {
	return;
    }
    p->logSkip = 0;
    if (p->nLog >= max && p->logKeep) {
	/*
	 * At least the oldest eighth goes. Trim cuts the log's head up to
	 * the first sample at or after the time given; threads' samples
	 * may be drained a little out of time order, hence the latest time
	 * of that eighth.
	 */

	uint64_t cut = 0;
	size_t i;

	for (i = 0; i <= max / 8 && i < p->nLog; i++) {
	    cut = p->log[i].timeNs > cut ? p->log[i].timeNs : cut;
	}
	TpProfileTrim(p, cut + 1, 1);
    } else if (p->nLog >= max) {
	size_t i;

	for (i = 0; 2 * i < p->nLog; i++) {
	    p->log[i] = p->log[2 * i];
	}
	p->nLog = i;
	p->logStride = p->logStride > 1 ? 2 * p->logStride : 2;
	if (p->logStride == 0) {
	    Tcl_Panic("tclprof: timeline stride overflow");
	}
    }
    p->log = Grow(p->log, &p->capLog, p->nLog + 1, sizeof(TpLogEntry));
    p->log[p->nLog].timeNs = timeNs;
    p->log[p->nLog].stack = stack;
    p->log[p->nLog].weight = weight;
    p->nLog++;
}

/*
 *----------------------------------------------------------------------
 *
 * TpProfileTrim --
 *
 *	The flight recorder's bound: forgets the samples taken before
 *	sinceNs (their counts and their log entries). The log is in time
 *	order, so they are its head. Cutting the head moves the rest of the
 *	log down, so the drain calls this with force 0 and the cut is made
 *	only once an eighth of the log (and at least 1024 entries) is
 *	stale; force 1 cuts whatever is stale.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Decrements stack counts and p->samples; shortens the log. Stacks
 *	whose count falls to 0 stay interned (a window rebuilt by
 *	TpProfileWindow leaves them out).
 *
 *----------------------------------------------------------------------
 */

void
TpProfileTrim(
    TpProfile *p,
    uint64_t sinceNs,
    int force)
{
    size_t n = 0, i;

    while (n < p->nLog && p->log[n].timeNs < sinceNs) {
	n++;
    }
    if (n == 0 || (!force && (n < 1024 || n < p->nLog / 8))) {
	return;
    }
    for (i = 0; i < n; i++) {
	TpStack *st = &p->stacks[p->log[i].stack];
	uint64_t w = p->log[i].weight;

	st->count -= w < st->count ? w : st->count;
	p->samples -= w < p->samples ? w : p->samples;
    }
    memmove(p->log, p->log + n, (p->nLog - n) * sizeof(TpLogEntry));
    p->nLog -= n;
    p->firstNs = p->nLog ? p->log[0].timeNs : p->lastNs;
}

/*
 *----------------------------------------------------------------------
 *
 * TpProfileWindow, TpProfileWindowFree --
 *
 *	A new profile holding only the samples of p taken at or after
 *	sinceNs: the same locations under the same ids, the stacks that
 *	have samples in the window (renumbered), the window's log. It is
 *	what `-last` and a -keep session hand to reports, exporters and
 *	save, so every one of them reads the window without knowing it.
 *	Module symbol tables are lent by p (and those the window loads are
 *	given back to p): TpProfileWindowFree must free the window.
 *	Counters that are not per sample (truncated, unwind errors, call
 *	counts) are not kept.
 *
 * Results:
 *	TpProfileWindow: the new profile.
 *
 * Side effects:
 *	Allocates; TpProfileWindowFree frees it.
 *
 *----------------------------------------------------------------------
 */

static TpProfile *WindowOf(TpProfile *p, uint64_t sinceNs,
			    const TpThreadSel *sel);

TpProfile *
TpProfileWindow(
    TpProfile *p,
    uint64_t sinceNs)
{
    return WindowOf(p, sinceNs, NULL);
}

/*
 *----------------------------------------------------------------------
 *
 * TpProfileThreads --
 *
 *	The profile as `profiler report -thread` reads it: a window
 *	(TpProfileWindow) holding only one thread's samples, or every
 *	thread's under a root of its own ("thread NAME"), or for the merged
 *	default the threads seen running Tcl (threads that only ran C, such
 *	as Tcl's notifier, are left out unless asked for by name or with
 *	all). TpProfileWindowFree frees it.
 *
 * Results:
 *	The new profile.
 *
 * Side effects:
 *	Allocates.
 *
 *----------------------------------------------------------------------
 */

TpProfile *
TpProfileThreads(
    TpProfile *p,
    const TpThreadSel *sel)
{
    return WindowOf(p, 0, sel);
}

/*
 *----------------------------------------------------------------------
 *
 * TpProfileNameThread, TpProfileThreadName --
 *
 *	Set (replace: even if already named) and get the name of thread
 *	tid.
 *
 * Results:
 *	TpProfileThreadName: the name, or NULL if it has none.
 *
 * Side effects:
 *	TpProfileNameThread may grow the table.
 *
 *----------------------------------------------------------------------
 */

void
TpProfileNameThread(
    TpProfile *p,
    uint32_t tid,
    const char *name,
    int replace)
{
    uint32_t i;

    if (p == NULL) {
	return;
    }
    for (i = 0; i < p->nThreads && p->threads[i].tid != tid; i++) {
    }
    if (i == p->nThreads) {
	if (p->nThreads == p->capThreads) {
	    uint32_t cap = p->capThreads ? 2 * p->capThreads : 8;
	    TpThreadName *t = realloc(p->threads, cap * sizeof(TpThreadName));

	    if (t == NULL) {
		Tcl_Panic("tclprof: out of memory");
	    }
	    p->threads = t;
	    p->capThreads = cap;
	}
	p->nThreads++;
	p->threads[i].tid = tid;
    } else if (!replace) {
	return;
    }
    snprintf(p->threads[i].name, sizeof(p->threads[i].name), "%s", name);
}

const char *
TpProfileThreadName(
    const TpProfile *p,
    uint32_t tid)
{
    uint32_t i;

    for (i = 0; i < p->nThreads; i++) {
	if (p->threads[i].tid == tid) {
	    return p->threads[i].name;
	}
    }
    return NULL;
}

/*
 * Whether a thread ran Tcl: it is named after its Thread package id.
 */

static int
ThreadRanTcl(
    const TpProfile *p,
    uint32_t tid)
{
    const char *name = TpProfileThreadName(p, tid);

    return name == NULL || TpThreadNameIsTcl(name);
}

/*
 *----------------------------------------------------------------------
 *
 * TpThreadNameIsTcl --
 *
 *	Whether a thread's name is a Thread package id ("tid" and the
 *	thread's address as the C library prints a pointer: tid0x7f... with
 *	glibc, tid00000000... with Windows' C library), which names the
 *	threads seen running Tcl.
 *
 * Results:
 *	1 or 0.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

int
TpThreadNameIsTcl(
    const char *name)
{
    const char *q;

    if (strncmp(name, "tid", 3) != 0) {
	return 0;
    }
    q = name + 3;
    if (q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) {
	q += 2;
    }
    if (*q == '\0') {
	return 0;
    }
    for (; *q != '\0'; q++) {
	if (!((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f')
		|| (*q >= 'A' && *q <= 'F'))) {
	    return 0;
	}
    }
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * StackIdle --
 *
 *	Whether a stack is a thread waiting: its innermost C function is
 *	one of the C library's blocking waits (a wall-clock sample of a
 *	thread blocked in the event loop, a condition wait, select, poll,
 *	a sleep), as py-spy's --idle tells them.
 *
 * Results:
 *	1 if idle.
 *
 * Side effects:
 *	May load a module's symbols.
 *
 *----------------------------------------------------------------------
 */

static int
StackIdle(
    TpProfile *p,
    const TpStack *st)
{
    static const char *const waits[] = {
	"__futex_abstimed_wait_common", "__futex_abstimed_wait_common64",
	"futex_wait", "__lll_lock_wait", "pthread_cond_wait",
	"pthread_cond_timedwait", "__pthread_cond_wait",
	"__pthread_cond_timedwait", "__select", "select", "__poll", "poll",
	"ppoll", "__ppoll", "epoll_wait", "epoll_pwait", "__GI_epoll_wait",
	"__clock_nanosleep", "clock_nanosleep", "__nanosleep", "nanosleep",
	"pselect", "__pselect", "sigtimedwait", "__sigtimedwait",
	"sigsuspend", "__sigsuspend", "pause", "__libc_pause",
	"pthread_join", "__pthread_clockjoin_ex", "__GI___clock_nanosleep",
	"__GI___select", "__GI___poll", NULL
    };
    const TpLoc *l;
    const char *name = NULL;
    uintptr_t start, size;
    int i;

    if (st->depth == 0) {
	return 0;
    }
    l = &p->locs[p->nodes[st->node].loc];
    if (l->kind == TP_KIND_TCL) {
	return 0;
    }
    if (l->resolved) {
	name = l->name;
    } else if (l->module >= 0 && l->module < p->modules.nMods) {
	TpSymbolLookup(&p->modules.mods[l->module],
		l->offset - (l->isCaller ? 1 : 0), &name, &start, &size);
    }
    for (i = 0; name != NULL && waits[i] != NULL; i++) {
	if (strcmp(name, waits[i]) == 0) {
	    return 1;
	}
    }
    return 0;
}

/*
 * CopyLoc: a copy of location l (of another profile) in w, with its name
 * and where it was resolved. A folded family's locations, which share a
 * name, are copied one for one (AddLoc).
 */

static uint32_t
CopyLoc(
    TpProfile *w,
    const TpLoc *l)
{
    LocKey k;
    uint32_t id;

    memset(&k, 0, sizeof(k));
    k.kind = l->kind;
    k.type = l->type;
    k.module = l->module;
    k.isCaller = l->isCaller;
    k.named = l->resolved;
    k.offset = l->offset;
    if (l->kind == TP_KIND_TCL || l->type == TP_TCL_PSEUDO || l->resolved) {
	k.name = l->name;
	k.nameLen = l->name ? strlen(l->name) : 0;
	k.file = l->file;
	k.fileLen = l->file ? strlen(l->file) : 0;
	k.line = l->line;
    }
    id = AddLoc(w, &k, LocHash(&k));
    if (w->locs[id].name == NULL && l->name != NULL) {
	w->locs[id].name = strdup(l->name);
    }
    if (w->locs[id].file == NULL && l->file != NULL) {
	w->locs[id].file = strdup(l->file);
    }
    w->locs[id].line = l->line;
    w->locs[id].symStart = l->symStart;
    return id;
}

static TpProfile *
WindowOf(
    TpProfile *p,
    uint64_t sinceNs,
    const TpThreadSel *sel)
{
    TpProfile *w = calloc(1, sizeof(TpProfile));
    uint32_t i, d, top, *map, *ids = NULL;
    const uint32_t *from;
    size_t j, capIds = 0;
    int m;

    if (w == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    w->locIndex = HashNew();

    w->cache = calloc(1, sizeof(TpStackCache));
    if (w->cache == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    w->callIndex = HashNew();
    w->mode = p->mode;
    w->intervalUs = p->intervalUs;
    w->clock = p->clock;
    w->startEpochUs = p->startEpochUs;
    w->dropped = p->dropped;
    w->program = p->program ? strdup(p->program) : NULL;
    w->savedMeta = p->savedMeta ? strdup(p->savedMeta) : NULL;
    w->handlerNsSum = p->handlerNsSum;
    w->handlerNsMax = p->handlerNsMax;
    w->handled = p->handled;
    w->lastScanNs = p->lastScanNs;
    w->logMax = p->logMax;
    w->logKeep = p->logKeep;
    CopyFamilies(w, p);

    w->modules.mods = calloc((size_t) p->modules.nMods + 1, sizeof(TpModule));
    if (w->modules.mods == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    for (m = 0; m < p->modules.nMods; m++) {
	w->modules.mods[m] = p->modules.mods[m];
	w->modules.mods[m].path = strdup(p->modules.mods[m].path);
	w->modules.mods[m].shortName = strdup(p->modules.mods[m].shortName);
    }
    w->modules.nMods = w->modules.capMods = p->modules.nMods;

    /*
     * Only the locations the window's stacks use are copied, on first
     * use (map: p's id to w's, TP_NODE_NONE until copied): a flight
     * recorder whose program keeps making new names (procs made and
     * deleted, generated code) forgets the ones gone out of the window
     * at its next compaction.
     */

    map = malloc(sizeof(uint32_t) * ((size_t) p->nLocs + 1));
    if (map == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }
    for (i = 0; i < p->nLocs; i++) {
	map[i] = TP_NODE_NONE;
    }

    for (j = 0; j < p->nThreads; j++) {
	TpProfileNameThread(w, p->threads[j].tid, p->threads[j].name, 1);
    }
    /*
     * A profile without a log (loaded from a file saved without one) has
     * its stacks' counts to select threads from; a time window needs the
     * log.
     */

    for (j = 0; j < (p->nLog || sel == NULL ? p->nLog : p->nStacks); j++) {
	const TpLogEntry *e = p->nLog ? &p->log[j] : NULL;
	uint32_t si = e ? e->stack : (uint32_t) j;
	const TpStack *st = &p->stacks[si];
	uint64_t t = e ? e->timeNs : p->firstNs;
	uint64_t w64 = e ? (uint64_t) e->weight
		* (p->logStride > 1 ? p->logStride : 1) : st->count;
	uint32_t weight = w64 > UINT32_MAX ? UINT32_MAX : (uint32_t) w64;

	if (t < sinceNs || weight == 0) {
	    continue;
	}
	if (sel != NULL && ((sel->how == TP_THREADS_ONE && st->tid != sel->tid)
		|| (sel->how == TP_THREADS_MERGED && !ThreadRanTcl(p, st->tid)))) {
	    continue;
	}
	if (sel != NULL && sel->hideIdle && StackIdle(p, st)) {
	    continue;
	}
	if ((size_t) st->depth + 1 > capIds) {
	    free(ids);
	    capIds = (size_t) st->depth + 1;
	    ids = malloc(sizeof(uint32_t) * capIds);
	    if (ids == NULL) {
		Tcl_Panic("tclprof: out of memory");
	    }
	}
	top = 0;
	if (sel != NULL && sel->how == TP_THREADS_ALL) {
	    const char *name = TpProfileThreadName(p, st->tid);
	    char root[64];

	    if (name != NULL) {
		snprintf(root, sizeof(root), "thread %s", name);
	    } else {
		snprintf(root, sizeof(root), "thread %u", st->tid);
	    }
	    ids[top++] = TpProfilePseudoLoc(w, root);
	}
	from = TpProfileStackIds(p, si);
	for (d = 0; d < st->depth; d++) {
	    if (map[from[d]] == TP_NODE_NONE) {
		map[from[d]] = CopyLoc(w, &p->locs[from[d]]);
	    }
	    ids[top++] = map[from[d]];
	}
	TpProfileAddStackWeighted(w, ids, top, st->tid, t, weight);
    }
    free(ids);
    free(map);
    if (w->samples) {
	w->elapsedNs = w->lastNs - w->firstNs + (uint64_t) p->intervalUs * 1000;
    }
    if (sel != NULL) {
	/*
	 * A choice of threads, not of time: the run's counters hold.
	 */

	w->threadSel = sel->how;
	w->elapsedNs = p->elapsedNs;
	w->truncated = p->truncated;
	w->unwindErrors = p->unwindErrors;
	w->unwindFallback = p->unwindFallback;
	w->mergeMismatch = p->mergeMismatch;
	for (j = 0; j < p->nCalls; j++) {
	    TpProfileAddCalls(w, p->calls[j].callee, p->calls[j].type,
		    p->calls[j].caller, p->calls[j].count);
	}
    }
    return w;
}

void
TpProfileWindowFree(
    TpProfile *p,
    TpProfile *w)
{
    int m;

    for (m = 0; m < w->modules.nMods && m < p->modules.nMods; m++) {
	TpModule *wm = &w->modules.mods[m];
	TpModule *pm = &p->modules.mods[m];

	if (pm->syms == NULL && !pm->symsTried && wm->symsTried) {
	    pm->syms = wm->syms;
	    pm->symsTried = 1;
	}
	wm->syms = NULL;
    }
    TpProfileFree(w);
}

/*
 *----------------------------------------------------------------------
 *
 * TpProfileCompact --
 *
 *	The flight recorder's second bound. Trimming leaves the stacks seen
 *	only before the window interned with a count of 0; a long run whose
 *	stacks keep changing would accumulate them. When more than half of
 *	the stacks are empty, the profile is replaced by its window
 *	(TpProfileWindow) carrying over the run's counters, call counts and
 *	symbol tables.
 *
 * Results:
 *	p itself when nothing was worth compacting, else the new profile (p
 *	is freed).
 *
 * Side effects:
 *	May free p.
 *
 *----------------------------------------------------------------------
 */

TpProfile *
TpProfileCompact(
    TpProfile *p,
    uint64_t sinceNs)
{
    TpProfile *w;
    uint32_t i, live = 0;
    int m;

    for (i = 0; i < p->nStacks; i++) {
	live += p->stacks[i].count != 0;
    }
    if (p->nStacks < 64 || live * 2 >= p->nStacks) {
	return p;
    }
    w = TpProfileWindow(p, sinceNs);
    w->elapsedNs = p->elapsedNs;
    w->truncated = p->truncated;
    w->unwindErrors = p->unwindErrors;
    w->unwindFallback = p->unwindFallback;
    w->unwindCheckMismatch = p->unwindCheckMismatch;
    w->mergeMismatch = p->mergeMismatch;
    for (i = 0; i < p->nCalls; i++) {
	TpProfileAddCalls(w, p->calls[i].callee, p->calls[i].type,
		p->calls[i].caller, p->calls[i].count);
    }
    for (m = 0; m < p->modules.nMods; m++) {
	p->modules.mods[m].syms = NULL;	/* w has them now. */
    }
    TpProfileFree(p);
    return w;
}

/*
 *----------------------------------------------------------------------
 *
 * TpProfileStackIds --
 *
 *	The location ids of a stack, root first, read from the trie into
 *	the profile's scratch. Reading the same stack again costs nothing,
 *	so a caller may read it, call something that reads it too
 *	(TpTreeStackFuncs), and keep using its pointer.
 *
 * Results:
 *	Pointer to depth ids, valid until another stack of p is read.
 *
 * Side effects:
 *	Fills the scratch (callers hold the session's lock, or own p).
 *
 *----------------------------------------------------------------------
 */

const uint32_t *
TpProfileStackIds(
    const TpProfile *p,
    uint32_t stack)
{
    TpStackCache *c = p->cache;
    uint32_t depth = p->stacks[stack].depth, node = p->stacks[stack].node;

    if (c->readStack == stack + 1) {
	return c->readIds;
    }
    if (depth > c->capRead || c->readIds == NULL) {
	/* Never NULL, even for an empty stack: callers memcpy from it. */
	c->readIds = Grow(c->readIds, &c->capRead, depth ? depth : 1,
		sizeof(uint32_t));
    }
    while (depth-- > 0) {
	c->readIds[depth] = p->nodes[node].loc;
	node = p->nodes[node].parent;
    }
    c->readStack = stack + 1;
    return c->readIds;
}

/*
 * Call count keys.
 */

typedef struct CallKey {
    const char *callee;
    const char *caller;
} CallKey;

static int
CallEq(
    const TpProfile *p,
    uint32_t id,
    const void *keyPtr)
{
    const CallKey *k = keyPtr;
    const TpCalls *c = &p->calls[id];

    return strcmp(c->callee, k->callee) == 0 && (c->caller == NULL
	    ? k->caller == NULL
	    : (k->caller != NULL && strcmp(c->caller, k->caller) == 0));
}

/*
 *----------------------------------------------------------------------
 *
 * TpProfileAddCalls --
 *
 *	Adds count exact calls of callee (from caller, or in all when caller
 *	is NULL) to the profile.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	May add a record.
 *
 *----------------------------------------------------------------------
 */

void
TpProfileAddCalls(
    TpProfile *p,
    const char *callee,
    int type,
    const char *caller,
    uint64_t count)
{
    CallKey k;
    uint32_t h, id;

    k.callee = callee;
    k.caller = caller;
    h = HashBytes(2166136261u, callee, strlen(callee));
    h = HashBytes(h, "|", 1);
    if (caller != NULL) {
	h = HashBytes(h, caller, strlen(caller));
    }
    if (!HashFind(p, p->callIndex, h, CallEq, &k, &id)) {
	size_t cap = p->capCalls;

	p->calls = Grow(p->calls, &cap, (size_t) p->nCalls + 1,
		sizeof(TpCalls));
	p->capCalls = (uint32_t) cap;
	id = p->nCalls++;
	p->calls[id].callee = DupN(callee, strlen(callee));
	p->calls[id].caller = caller ? DupN(caller, strlen(caller)) : NULL;
	p->calls[id].type = type;
	p->calls[id].count = 0;
	HashInsert(p->callIndex, h, id);
    }
    p->calls[id].count += count;
}
