/*
 * symtest.c --
 *
 *	Standalone test of unix/symbol.c (modules and symbols). It includes
 *	symbol.c (and cache.c) itself to see the tables' insides. Build and
 *	run from the top of the source tree:
 *
 *	gcc -O2 -g -Wall -Wextra -D_GNU_SOURCE -Igeneric -I/usr/include/tcl8.6 \
 *	    -o symtest tests/symtest.c -ldl -lpthread && ./symtest
 *
 *	(add -fsanitize=address,undefined to check the parsers' bounds). It
 *	dlopens libtcl8.6.so, registers libtcl8.6.a, and checks that names
 *	are right where the truth is known: this program's own static
 *	function, every export of libtcl, the C functions behind Tcl's
 *	commands (function pointers are function starts, and some names
 *	are known), TEBCresume; that recovered names never overlap exports
 *	or each other; that gaps are unnamed; that rescans keep indexes; and
 *	that corrupt files do not crash; that the cache of recovered tables
 *	gives the same table and never a damaged or stale one. Exits 1 on
 *	any failure.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#ifndef MODULE_SCOPE
#define MODULE_SCOPE extern
#endif
#include "../unix/symbol.c"
#include "../unix/cache.c"
#include "../generic/sort.c"
#include <dirent.h>
#include <dlfcn.h>
#include <time.h>

#define DW_EH_PE_udata4	0x03
#define DW_EH_PE_sdata4	0x0b
#define DW_EH_PE_datarel	0x30

#ifndef TCLPROF_STATIC_TCL
#define TCLPROF_STATIC_TCL "/usr/lib/x86_64-linux-gnu/libtcl8.6.a"
#endif
#define TCL_SO "libtcl8.6.so"

static int failures = 0;
static TpModules mt;		/* The modules of this process. */
static int tclIdx = -1;		/* libtcl's index in mt. */
static void *tcl;		/* dlopen handle of libtcl. */

#define CHECK(cond, ...) \
    do { if (!(cond)) { failures++; printf("FAIL %s:%d: ", __FILE__, __LINE__); \
	printf(__VA_ARGS__); printf("\n"); } } while (0)

/*
 * A static function of this program: named from its own .symtab.
 */

static __attribute__((noinline)) int
SymtestStatic(
    int n)
{
    volatile int s = 0;
    int i;

    for (i = 0; i < n; i++) {
	s += i * i;
    }
    return s;
}

/*
 * A function that calls libc through this program's PLT (getpid: not
 * intercepted by the sanitizers).
 */

static __attribute__((noinline)) int
SymtestPlt(void)
{
    return (int) getpid() + 1;
}

/*
 * Resolves an absolute address; returns the name or NULL.
 */

static const char *
Name(
    uintptr_t pc,
    int *modPtr)
{
    uintptr_t off, start, size;
    const char *name;
    int m = TpModulesFind(&mt, pc, &off);

    if (modPtr) {
	*modPtr = m;
    }
    if (m < 0 || !TpSymbolLookup(&mt.mods[m], off, &name, &start, &size)) {
	return NULL;
    }
    return name;
}

/*
 * The FDE table of a loaded module (.eh_frame_hdr, GCC's encodings):
 * every function has an FDE that starts at its first byte and covers
 * its size, a witness independent of any symbol table.
 */

typedef struct Fde {
    uintptr_t start, size;	/* Module offsets. */
} Fde;

typedef struct FdeTable {
    uintptr_t bias;		/* In: module to read. */
    Fde *fdes;			/* Out: sorted by start. */
    size_t n;
} FdeTable;

static int
ReadFdes(
    struct dl_phdr_info *info,
    size_t infoSize,
    void *cd)
{
    FdeTable *ft = cd;
    const unsigned char *hdr = NULL, *fde;
    int32_t rel[2], v[2];
    uint32_t count;
    size_t i;
    int k;

    (void) infoSize;
    for (k = 0; info->dlpi_addr == ft->bias && k < info->dlpi_phnum; k++) {
	if (info->dlpi_phdr[k].p_type == PT_GNU_EH_FRAME) {
	    hdr = (const unsigned char *) info->dlpi_addr
		    + info->dlpi_phdr[k].p_vaddr;
	}
    }
    if (hdr == NULL || hdr[0] != 1 || (hdr[1] & 0x0f) != DW_EH_PE_sdata4
	    || hdr[2] != DW_EH_PE_udata4
	    || hdr[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4)) {
	return 0;
    }
    memcpy(&count, hdr + 8, 4);
    ft->fdes = malloc(count * sizeof(Fde));
    for (i = 0; i < count; i++) {
	memcpy(rel, hdr + 12 + 8 * i, 8);
	fde = hdr + rel[1];
	memcpy(v, fde + 8, 8);	/* pc_begin (pcrel sdata4), pc_range */
	ft->fdes[i].start = (uintptr_t) (fde + 8 + v[0]) - ft->bias;
	ft->fdes[i].size = (uint32_t) v[1];
	if (ft->fdes[i].start != (uintptr_t) (hdr + rel[0]) - ft->bias) {
	    break;		/* Not the encoding we assumed. */
	}
    }
    ft->n = i;
    return 1;
}

static int
CompareFde(
    const void *a,
    const void *b)
{
    const Fde *x = a, *y = b;

    return x->start < y->start ? -1 : x->start > y->start;
}

static double
Now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/*
 * 1. The program's own static function, from its .symtab; the main
 * module's path; a PC in no module.
 */

static void
TestProgram(void)
{
    const char *name;
    uintptr_t off;
    int m, onStack = 0;

    SymtestStatic(10);
    name = Name((uintptr_t) &SymtestStatic + 4, &m);
    CHECK(m == 0 && name && strcmp(name, "SymtestStatic") == 0,
	    "static function: %s in module %d", name ? name : "(none)", m);
    CHECK(mt.mods[0].path[0] == '/' && !mt.mods[0].isTcl, "main path %s",
	    mt.mods[0].path);
    CHECK(TpModulesFind(&mt, (uintptr_t) &onStack, &off) < 0, "stack found");

    /*
     * The PLT: the first direct call or jump in SymtestPlt goes to
     * getpid's PLT entry, named getpid@plt.
     */

    {
	const unsigned char *code = (const unsigned char *) &SymtestPlt;
	uintptr_t target = 0;
	int32_t rel;
	int i;

	CHECK(SymtestPlt() > 1, "getpid");
	for (i = 0; i < 48 && target == 0; i++) {
	    if (code[i] == 0xe8 || code[i] == 0xe9) {
		memcpy(&rel, code + i + 1, sizeof(rel));
		target = (uintptr_t) (code + i + 5) + (intptr_t) rel;
		if (TpModulesFind(&mt, target, &off) != 0) {
		    target = 0;
		}
	    }
	}
	name = target ? Name(target, &m) : NULL;
	CHECK(name && strcmp(name, "getpid@plt") == 0, "PLT entry %#lx: %s",
		(unsigned long) target, name ? name : "(none)");
	/* A byte inside the entry, not only its first. */
	name = target ? Name(target + 7, &m) : NULL;
	CHECK(name && strcmp(name, "getpid@plt") == 0, "PLT entry +7: %s",
		name ? name : "(none)");
    }
}

/*
 * 2 and 3. libtcl's table: every export names itself at its first and
 * last byte; recovered names do not overlap exports or each other, and
 * each is exactly an FDE; the PLT's entries are named; gaps are unnamed;
 * TEBCresume is found.
 */

static void
TestLibtcl(void)
{
    TpModule *tm = &mt.mods[tclIdx];
    TpSymtab *st;
    Mapping sm;
    Elf so;
    Target tg;
    FdeTable ft;
    DynSym key;
    Fde fkey, *f;
    const TpSym *s;
    const char *name;
    uintptr_t start, size;
    size_t k;
    int ok, expOk = 0, nRec = 0, overlaps = 0, nested = 0, gaps = 0;
    int fdeOk = 0, nPlt = 0;
    double t0;

    name = Name((uintptr_t) dlsym(tcl, "Tcl_CreateInterp"), &ok);
    CHECK(ok == tclIdx && name && strcmp(name, "Tcl_CreateInterp") == 0,
	    "Tcl_CreateInterp: %s", name ? name : "(none)");
    t0 = Now();
    SymtabFree(LoadSymtab(tm->path, TCL_SO));
    printf("libtcl table loads in %.1f ms\n", (Now() - t0) * 1e3);
    st = tm->syms;
    memset(&tg, 0, sizeof(tg));
    if (st == NULL || MapFile(tm->path, &sm) != 0
	    || ElfInit(&so, sm.data, sm.size) || TargetInit(&tg, &so, tm->path)) {
	CHECK(0, "cannot read %s", tm->path);
	return;
    }
    for (k = 0; k < tg.nDyn; k++) {
	const DynSym *d = &tg.byAddr[k];

	ok = TpSymbolLookup(tm, d->start, &name, &start, &size)
		&& strcmp(name, d->name) == 0 && start == d->start
		&& TpSymbolLookup(tm, d->start + d->size - 1, &name, &start,
		    &size) && strcmp(name, d->name) == 0;
	expOk += ok;
	CHECK(ok, "export %s", d->name);
    }

    ft.bias = tm->bias;
    ft.fdes = NULL;
    ft.n = 0;
    dl_iterate_phdr(ReadFdes, &ft);
    CHECK(ft.n > 1000, "no FDE table read");
    for (k = 0; k < st->nSyms; k++) {
	const char *sn;
	size_t snLen;

	s = &st->syms[k];
	sn = st->names + s->name;
	snLen = strlen(sn);
	if (snLen > 4 && strcmp(sn + snLen - 4, "@plt") == 0) {
	    /* A PLT entry: one FDE covers the whole PLT. */
	    nPlt++;
	    CHECK(ExportsIn(&tg, s->start, s->size) == 0,
		    "%s overlaps an export", sn);
	} else {
	    fkey.start = s->start;
	    f = bsearch(&fkey, ft.fdes, ft.n, sizeof(Fde), CompareFde);
	    fdeOk += f != NULL && f->size == s->size;
	    CHECK(ft.n == 0 || (f != NULL && f->size == s->size),
		    "%s [%#lx, +%#x) is no FDE", sn,
		    (unsigned long) s->start, s->size);
	}
	key.start = s->start;
	if (snLen > 4 && strcmp(sn + snLen - 4, "@plt") == 0) {
	    /* Counted above. */
	} else if (bsearch(&key, tg.byAddr, tg.nDyn, sizeof(DynSym),
		CompareDynAddr) == NULL) {
	    nRec++;
	    overlaps += ExportsIn(&tg, s->start, s->size) != 0;
	}
	if (k + 1 < st->nSyms) {
	    nested += s->start + s->size > s[1].start;
	    if (s->start + s->size < s[1].start && gaps++ < 50) {
		CHECK(!TpSymbolLookup(tm, s->start + s->size, &name, &start,
			&size), "gap after %s named %s", st->names + s->name,
			name);
	    }
	}
	if (strcmp(st->names + s->name, "TEBCresume") == 0) {
	    CHECK(TpSymbolLookup(tm, s->start + s->size / 2, &name, &start,
		    &size) && strcmp(name, "TEBCresume") == 0, "TEBCresume");
	    printf("TEBCresume at %#lx size %u\n", (unsigned long) s->start,
		    s->size);
	}
    }
    printf("libtcl: %zu names, %zu exported (%d ok), %d recovered from %s,"
	    " %d PLT entries; %d agree with an FDE (of %zu FDEs)\n", st->nSyms,
	    tg.nDyn, expOk, nRec, TCLPROF_STATIC_TCL, nPlt, fdeOk, ft.n);
    CHECK(nRec > 1000, "only %d names recovered", nRec);
    CHECK(nPlt > 50, "only %d PLT entries named", nPlt);
    CHECK(overlaps == 0, "%d recovered names overlap exports", overlaps);
    CHECK(nested == 0, "%d names overlap the next one", nested);
    CHECK(!TpSymbolLookup(tm, st->syms[0].start - 1, &name, &start, &size),
	    "below the first symbol");
    name = Name((uintptr_t) dlsym(tcl, "Tcl_NRExprObj") + 0x884b, NULL);
    printf("Tcl_NRExprObj+0x884b is %s\n", name ? name : "(unnamed)");
    CHECK(name == NULL || strcmp(name, "Tcl_NRExprObj") != 0,
	    "the classic wrong name");
    free(ft.fdes);
    TargetFree(&tg);
    Unmap(&sm);
}

/*
 * The C functions behind Tcl's commands, many of them static or in
 * objects that export nothing: each objProc must be the start of a
 * symbol, and a few names are known.
 */

static void
TestCommands(void)
{
    Tcl_Interp *(*createInterp)(void) = (void *) dlsym(tcl, "Tcl_CreateInterp");
    void (*deleteInterp)(Tcl_Interp *) = (void *) dlsym(tcl, "Tcl_DeleteInterp");
    int (*eval)(Tcl_Interp *, const char *) = (void *) dlsym(tcl, "Tcl_Eval");
    const char *(*result)(Tcl_Interp *) =
	    (void *) dlsym(tcl, "Tcl_GetStringResult");
    int (*split)(Tcl_Interp *, const char *, int *, const char ***) =
	    (void *) dlsym(tcl, "Tcl_SplitList");
    void (*tclFree)(void *) = (void *) dlsym(tcl, "Tcl_Free");
    int (*cmdInfo)(Tcl_Interp *, const char *, Tcl_CmdInfo *) =
	    (void *) dlsym(tcl, "Tcl_GetCommandInfo");
    void (*findExe)(const char *) = (void *) dlsym(tcl, "Tcl_FindExecutable");
    static const char *const known[][2] = {
	{"lsort", "Tcl_LsortObjCmd"}, {"format", "Tcl_FormatObjCmd"},
	{"regexp", "Tcl_RegexpObjCmd"}, {"scan", "Tcl_ScanObjCmd"},
	{"fconfigure", "Tcl_FconfigureObjCmd"},
	{"lassign", "Tcl_LassignObjCmd"},
	{"::tcl::clock::clicks", "ClockClicksObjCmd"},
	{"::oo::define", "TclOODefineObjCmd"},
	{"::tcl::info::frame", "InfoFrameCmd"}
    };
    TpModule *tm = &mt.mods[tclIdx];
    Tcl_Interp *interp;
    Tcl_CmdInfo info;
    const char **argv, *name;
    uintptr_t off, start, size;
    int i, argc, cmds = 0, named = 0;
    size_t k;

    findExe(NULL);
    interp = createInterp();
    CHECK(eval(interp, "proc all ns {set r [info commands ${ns}::*];"
	    "foreach c [namespace children $ns] {lappend r {*}[all $c]};"
	    "return $r}; all {}") == TCL_OK, "eval");
    if (split(NULL, result(interp), &argc, &argv) == TCL_OK) {
	for (i = 0; i < argc; i++) {
	    if (!cmdInfo(interp, argv[i], &info) || !info.isNativeObjectProc
		    || TpModulesFind(&mt, (uintptr_t) info.objProc, &off)
		    != tclIdx) {
		continue;
	    }
	    cmds++;
	    if (TpSymbolLookup(tm, off, &name, &start, &size)) {
		named++;
		CHECK(start == off, "%s: objProc inside %s", argv[i], name);
	    }
	}
	tclFree(argv);
    }
    printf("commands: %d C procs in libtcl, %d named\n", cmds, named);
    CHECK(named > cmds * 9 / 10, "too few command procs named");
    for (k = 0; k < sizeof(known) / sizeof(known[0]); k++) {
	name = NULL;
	if (cmdInfo(interp, known[k][0], &info)) {
	    name = Name((uintptr_t) info.objProc + 1, NULL);
	}
	CHECK(name && strcmp(name, known[k][1]) == 0, "%s is %s, not %s",
		known[k][0], name ? name : "(unnamed)", known[k][1]);
    }
    deleteInterp(interp);
}

/*
 * 4. Rescans keep indexes; a new object is appended; an unloaded one is
 * no longer found.
 */

static void
TestRescan(void)
{
    int i, m, n0 = mt.nMods;
    uintptr_t *bias = malloc(n0 * sizeof(uintptr_t)), pc, off;
    const char *name;
    void *bz;

    for (i = 0; i < n0; i++) {
	bias[i] = mt.mods[i].bias;
    }
    TpModulesScan(&mt);
    CHECK(mt.nMods == n0, "rescan changed the count");
    bz = dlopen("libbz2.so.1.0", RTLD_NOW);
    if (bz != NULL) {
	pc = (uintptr_t) dlsym(bz, "BZ2_bzlibVersion");
	TpModulesScan(&mt);
	for (i = 0; i < n0; i++) {
	    CHECK(mt.mods[i].bias == bias[i], "index %d moved", i);
	}
	name = Name(pc, &m);
	CHECK(name && strcmp(name, "BZ2_bzlibVersion") == 0,
		"BZ2_bzlibVersion: %s", name ? name : "(none)");
	if (m >= n0 && dlclose(bz) == 0
		&& dlopen("libbz2.so.1.0", RTLD_NOW | RTLD_NOLOAD) == NULL) {
	    TpModulesScan(&mt);
	    CHECK(TpModulesFind(&mt, pc, &off) < 0, "unloaded libbz2 found");
	    printf("rescans: libbz2 appended, then no longer found\n");
	}
    }
    free(bias);
    name = Name((uintptr_t) dlsym(tcl, "Tcl_CreateInterp"), &m);
    CHECK(m == tclIdx && name, "libtcl after rescans");
}

/*
 * Writes a damaged copy of a file: cut at cut bytes, then nFlips bytes
 * rewritten, mostly in the headers and tables at both ends.
 */

static void
Damage(
    const char *src,
    const char *dst,
    size_t cut,
    int nFlips,
    unsigned *seed)
{
    Mapping m;
    FILE *f;
    unsigned char *buf;
    size_t len, at;
    int i;

    if (MapFile(src, &m) != 0) {
	return;
    }
    len = cut < m.size ? cut : m.size;
    buf = malloc(len ? len : 1);
    memcpy(buf, m.data, len);
    for (i = 0; i < nFlips && len > 0; i++) {
	at = rand_r(seed) % 2
		? (size_t) rand_r(seed) % (len < 65536 ? len : 65536)
		: len - 1 - (size_t) rand_r(seed) % (len < 32768 ? len : 32768);
	buf[at] = rand_r(seed) % 3 ? (unsigned char) rand_r(seed) : 0xff;
    }
    if ((f = fopen(dst, "wb")) != NULL) {
	fwrite(buf, 1, len, f);
	fclose(f);
    }
    free(buf);
    Unmap(&m);
}

/*
 * 5. Damaged libraries and archives load without a crash. A damaged
 * archive can only rename what its damaged symbols say; count those.
 */

static void
TestDamage(void)
{
    TpModule *tm = &mt.mods[tclIdx];
    TpSymtab *bad;
    const TpSym *s;
    const char *name;
    char soCopy[64], arCopy[64];
    uintptr_t start, size;
    unsigned seed = 12345;
    size_t k;
    int i, changed = 0;
    double t0 = Now();

    snprintf(soCopy, sizeof(soCopy), "/tmp/symtest-%d.so", (int) getpid());
    snprintf(arCopy, sizeof(arCopy), "/tmp/symtest-%d.a", (int) getpid());
    for (i = 0; i < 300; i++) {
	Damage(tm->path, soCopy, i % 10 ? SIZE_MAX : (size_t) rand_r(&seed)
		% 2000000, i % 10 ? 1 + i % 40 : 0, &seed);
	TpSymbolSetArchive(i % 3 ? "nomatch" : strrchr(soCopy, '/') + 1,
		TCLPROF_STATIC_TCL);
	SymtabFree(LoadSymtab(soCopy, strrchr(soCopy, '/') + 1));
    }
    for (i = 0; i < 40; i++) {
	Damage(TCLPROF_STATIC_TCL, arCopy, i % 4 ? SIZE_MAX
		: (size_t) rand_r(&seed) % 3000000, i % 4 ? 1 + i % 200 : 0,
		&seed);
	TpSymbolSetArchive(TCL_SO, arCopy);
	bad = LoadSymtab(tm->path, TCL_SO);
	for (k = 0; bad != NULL && k < bad->nSyms; k++) {
	    s = &bad->syms[k];
	    changed += !TpSymbolLookup(tm, s->start, &name, &start, &size)
		    || start != s->start || size != s->size
		    || strcmp(name, bad->names + s->name) != 0;
	}
	SymtabFree(bad);
    }
    printf("damaged files: 340 loads in %.1f s, no crash; %d names from"
	    " damaged archives differ\n", Now() - t0, changed);
    unlink(soCopy);
    unlink(arCopy);
}

/*
 * 6. The cache of recovered tables: the first load writes it, the next
 * reads it back, both the very table matched from the archive; a
 * damaged or truncated file, or one made from another archive or from
 * an archive changed since, is not used, and is written again.
 */

static int
SameTable(
    const TpSymtab *a,
    const TpSymtab *b)
{
    size_t k;

    if (a == NULL || b == NULL || a->nSyms != b->nSyms) {
	return 0;
    }
    for (k = 0; k < a->nSyms; k++) {
	if (a->syms[k].start != b->syms[k].start
		|| a->syms[k].size != b->syms[k].size
		|| strcmp(a->names + a->syms[k].name,
		    b->names + b->syms[k].name) != 0) {
	    return 0;
	}
    }
    return 1;
}

/*
 * Loads libtcl's table with the archive ar registered; checks it is the
 * truth and returns whether it came from the cache.
 */

static int
LoadCached(
    const TpSymtab *truth,
    const char *ar,
    const char *what)
{
    TpModule *tm = &mt.mods[tclIdx];
    unsigned long hits = cacheStats.hits;
    TpSymtab *t;

    TpSymbolSetArchive(TCL_SO, ar);
    t = LoadSymtab(tm->path, TCL_SO);
    CHECK(SameTable(truth, t), "%s: not the archive's table", what);
    SymtabFree(t);
    return cacheStats.hits > hits;
}

static void
TestCache(void)
{
    TpModule *tm = &mt.mods[tclIdx];
    TpSymtab *truth;
    char dir[64], good[96], arCopy[96], file[PATH_MAX] = "";
    struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 0}};
    unsigned seed = 777;
    unsigned long writes;
    struct dirent *de;
    DIR *d;
    int i, used = 0, nFiles = 0;

    snprintf(dir, sizeof(dir), "/tmp/symtest-cache-%d", (int) getpid());
    snprintf(good, sizeof(good), "%s.good", dir);
    snprintf(arCopy, sizeof(arCopy), "%s.a", dir);
    setenv("TCLPROF_CACHE", "", 1);
    TpSymbolSetArchive(TCL_SO, TCLPROF_STATIC_TCL);
    truth = LoadSymtab(tm->path, TCL_SO);
    CHECK(truth != NULL && truth->nSyms > 2000 && cacheStats.writes == 0
	    && cacheStats.hits == 0, "cache off: %lu writes",
	    cacheStats.writes);
    setenv("TCLPROF_CACHE", "relative/dir", 1);
    CHECK(!LoadCached(truth, TCLPROF_STATIC_TCL, "relative")
	    && cacheStats.writes == 0, "a relative directory was used");

    /* Written (the directory made, two levels), then read. */
    setenv("TCLPROF_CACHE", dir, 1);
    strcat(dir, "/sub");
    setenv("TCLPROF_CACHE", dir, 1);
    CHECK(!LoadCached(truth, TCLPROF_STATIC_TCL, "first")
	    && cacheStats.writes == 1, "first load: %lu writes",
	    cacheStats.writes);
    CHECK(LoadCached(truth, TCLPROF_STATIC_TCL, "second"),
	    "second load not from the cache");
    if ((d = opendir(dir)) != NULL) {
	while ((de = readdir(d)) != NULL) {
	    if (de->d_name[0] != '.') {
		nFiles++;
		snprintf(file, sizeof(file), "%s/%s", dir, de->d_name);
	    }
	}
	closedir(d);
    }
    CHECK(nFiles == 1 && strstr(file, "/libtcl8.6.so-") != NULL
	    && strstr(file, ".syms") != NULL, "%d files, %s", nFiles, file);

    /* Damaged copies: never used unless unchanged, always rewritten. */
    Damage(file, good, SIZE_MAX, 0, &seed);
    for (i = 0; i < 60; i++) {
	writes = cacheStats.writes;
	Damage(good, file, i % 4 ? SIZE_MAX : (size_t) rand_r(&seed) % 130000,
		i % 4 ? 1 + i % 7 : 0, &seed);
	if (LoadCached(truth, TCLPROF_STATIC_TCL, "damaged")) {
	    used++;
	} else {
	    CHECK(cacheStats.writes == writes + 1, "damaged %d not rewritten",
		    i);
	}
    }
    CHECK(LoadCached(truth, TCLPROF_STATIC_TCL, "after damage"),
	    "not rewritten after damage");

    /* Another archive (a copy), then that archive changed: not used. */
    Damage(TCLPROF_STATIC_TCL, arCopy, SIZE_MAX, 0, &seed);
    CHECK(!LoadCached(truth, arCopy, "other archive"),
	    "another archive's table used");
    CHECK(LoadCached(truth, arCopy, "other archive again"),
	    "the copy's table not cached");
    utimensat(AT_FDCWD, arCopy, times, 0);
    CHECK(!LoadCached(truth, arCopy, "touched archive"),
	    "a changed archive's table used");
    printf("symbol cache: %lu written, %lu read; %d of 60 damaged files"
	    " read back unchanged\n", cacheStats.writes, cacheStats.hits,
	    used);
    TpSymbolSetArchive(TCL_SO, TCLPROF_STATIC_TCL);
    setenv("TCLPROF_CACHE", "", 1);
    SymtabFree(truth);
    unlink(file);
    unlink(good);
    unlink(arCopy);
    rmdir(dir);
    *strrchr(dir, '/') = '\0';
    rmdir(dir);
}

/*
 * The table of image path, just written to the cache, is read back from
 * it (the very table truth); once touch (the image or the file its
 * functions came from) is touched, it is built and written again.
 */

static void
ReadThenTouch(
    const char *path,
    const char *touch,
    const TpSymtab *truth,
    const char *what)
{
    struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 0}};
    unsigned long hits = cacheStats.hits, writes = cacheStats.writes;
    const char *base = strrchr(path, '/') + 1;
    TpSymtab *t;

    t = LoadSymtab(path, base);
    CHECK(cacheStats.hits == hits + 1 && SameTable(truth, t),
	    "%s: not read back from the cache", what);
    SymtabFree(t);
    utimensat(AT_FDCWD, touch, times, 0);
    t = LoadSymtab(path, base);
    CHECK(cacheStats.hits == hits + 1 && cacheStats.writes == writes + 1
	    && SameTable(truth, t), "%s: the table of a touched file was used",
	    what);
    SymtabFree(t);
}

/*
 * 7. The cache holds every module's table, not only those recovered from
 * an archive: a module with its own .symtab, a stripped one with its
 * debug file, and one with neither (.dynsym only). The table read back
 * is the one built; a change to the image or to its debug file, or the
 * debug file gone, is a table built again, never the old one. Small
 * tables are built, not cached.
 */

static void
TestCacheSources(void)
{
    char dir[64], cache[96], self[96], dbg[96], dbgFile[128];
    char exe[PATH_MAX], cmd[2 * PATH_MAX + 512];
    TpSymtab *truth, *t, *dynOnly;
    unsigned long hits, writes;
    unsigned seed = 99;
    ssize_t n;
    size_t k, nDyn = 0;
    int hasStatic = 0;

    n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    CHECK(n > 0, "no /proc/self/exe");
    if (n <= 0) {
	return;
    }
    exe[n] = '\0';
    snprintf(dir, sizeof(dir), "/tmp/symtest-src-%d", (int) getpid());
    snprintf(cache, sizeof(cache), "%s/cache", dir);
    snprintf(self, sizeof(self), "%s/self", dir);
    snprintf(dbg, sizeof(dbg), "%s/dbg", dir);
    snprintf(dbgFile, sizeof(dbgFile), "%s/.debug/dbg.debug", dir);
    snprintf(cmd, sizeof(cmd), "mkdir -p %s/.debug && objcopy --only-keep-debug"
	    " %s %s && objcopy --strip-all --add-gnu-debuglink=%s %s %s",
	    dir, exe, dbgFile, dbgFile, exe, dbg);
    CHECK(system(cmd) == 0, "cannot make the fixtures: %s", cmd);
    Damage(exe, self, SIZE_MAX, 0, &seed);
    setenv("TCLPROF_CACHE", cache, 1);
    symCacheMinEntries = 0;

    /* Its own .symtab: written, read back, and built again once touched. */
    writes = cacheStats.writes;
    hits = cacheStats.hits;
    truth = LoadSymtab(self, "self");
    CHECK(truth != NULL && cacheStats.writes == writes + 1
	    && cacheStats.hits == hits, "self: first load not written");
    for (k = 0; truth != NULL && k < truth->nSyms; k++) {
	hasStatic |= strcmp(truth->names + truth->syms[k].name,
		"SymtestStatic") == 0;
    }
    CHECK(hasStatic, "self: the static function is not in the table");
    ReadThenTouch(self, self, truth, "self");

    /*
     * Stripped, with a debug file: the same table as the unstripped
     * image's; a touched debug file or none is a table built again.
     */

    writes = cacheStats.writes;
    hits = cacheStats.hits;
    t = LoadSymtab(dbg, "dbg");
    CHECK(cacheStats.writes == writes + 1 && SameTable(truth, t),
	    "debug: not the unstripped image's table (%zu against %zu)",
	    t ? t->nSyms : 0, truth ? truth->nSyms : 0);
    SymtabFree(t);
    ReadThenTouch(dbg, dbgFile, truth, "debug");
    unlink(dbgFile);
    dynOnly = LoadSymtab(dbg, "dbg");
    CHECK(cacheStats.hits == hits + 1 && cacheStats.writes == writes + 3
	    && dynOnly != NULL && truth != NULL
	    && dynOnly->nSyms < truth->nSyms,
	    "no debug file: the debug file's table was used");
    t = LoadSymtab(dbg, "dbg");
    CHECK(cacheStats.hits == hits + 2 && SameTable(dynOnly, t),
	    "no debug file: not read back from the cache");
    SymtabFree(t);
    nDyn = dynOnly ? dynOnly->nSyms : 0;
    SymtabFree(dynOnly);

    /* A table under the threshold is built every time, never cached. */
    symCacheMinEntries = 1024;
    writes = cacheStats.writes;
    hits = cacheStats.hits;
    t = LoadSymtab(self, "self");
    CHECK(cacheStats.writes == writes && cacheStats.hits == hits
	    && SameTable(truth, t), "a small table was cached");
    SymtabFree(t);
    printf("symbol cache sources: tables from the image's own .symtab and"
	    " from its debug file (%zu names), and from .dynsym only (%zu),"
	    " cached\n", truth ? truth->nSyms : 0, nDyn);
    SymtabFree(truth);
    setenv("TCLPROF_CACHE", "", 1);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    CHECK(system(cmd) == 0, "cannot remove %s", dir);
}

int
main(void)
{
    int i;

    tcl = dlopen(TCL_SO, RTLD_NOW | RTLD_GLOBAL);
    if (tcl == NULL) {
	printf("FAIL: dlopen %s: %s\n", TCL_SO, dlerror());
	return 1;
    }
    setenv("TCLPROF_CACHE", "", 1);	/* TestCache turns it on. */
    TpSymbolSetArchive(TCL_SO, TCLPROF_STATIC_TCL);
    CHECK(TpModulesScan(&mt) == TCL_OK, "scan");
    for (i = 0; i < mt.nMods; i++) {
	printf("module %2d %-22s bias %#lx [%#lx, %#lx)%s\n", i,
		mt.mods[i].shortName, (unsigned long) mt.mods[i].bias,
		(unsigned long) mt.mods[i].lo, (unsigned long) mt.mods[i].hi,
		mt.mods[i].isTcl ? " tcl" : "");
	if (mt.mods[i].isTcl) {
	    tclIdx = i;
	}
    }
    if (tclIdx < 0) {
	printf("FAIL: libtcl not among the modules\n");
	return 1;
    }
    TestProgram();
    TestLibtcl();
    TestCommands();
    TestRescan();
    TestDamage();
    TestCache();
    TestCacheSources();
    TpSymbolSetArchive(NULL, NULL);
    TpModulesFree(&mt);
    printf("%s: %d failure%s\n", failures ? "FAILED" : "PASSED", failures,
	    failures == 1 ? "" : "s");
    return failures != 0;
}
