/*
 * symbol.c --
 *
 *	Modules and symbols on Windows. A module is a loaded PE image; a C
 *	location's offset is its RVA (pc - image base), so the same function
 *	has the same key wherever the image was loaded. Names come from the
 *	image's export table (in memory) and, when the file still has one,
 *	its COFF symbol table (mingw-w64 keeps it unless the file is
 *	stripped: it names static functions). A function's extent is its
 *	x64 unwind entry when it has one, else up to the next symbol; a
 *	name is given only when that extent holds the offset.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include "tpWin.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Sym {
    uintptr_t start, size;	/* RVA and bytes. */
    char *name;			/* Owned by the table's pool. */
} Sym;

struct TpSymtab {
    Sym *syms;			/* Sorted by start. */
    int n, cap;
};

static int
SymAdd(
    TpSymtab *t,
    uintptr_t start,
    const char *name,
    size_t len)
{
    char *copy;

    if (len == 0 || start == 0) {
	return 0;
    }
    if (t->n == t->cap) {
	int cap = t->cap ? 2 * t->cap : 256;
	Sym *s = realloc(t->syms, sizeof(Sym) * (size_t) cap);

	if (s == NULL) {
	    return -1;
	}
	t->syms = s;
	t->cap = cap;
    }
    if ((copy = malloc(len + 1)) == NULL) {
	return -1;
    }
    memcpy(copy, name, len);
    copy[len] = '\0';
    t->syms[t->n].start = start;
    t->syms[t->n].size = 0;
    t->syms[t->n++].name = copy;
    return 0;
}

static int
SymCompare(
    const void *a,
    const void *b)
{
    const Sym *x = a, *y = b;

    return x->start < y->start ? -1 : x->start > y->start;
}

/*
 *----------------------------------------------------------------------
 *
 * ReadExports, ReadCoff --
 *
 *	The names of the export table of a mapped image; the function
 *	symbols of a PE file's COFF symbol table (read from the file: the
 *	loader does not map it).
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Adds to t.
 *
 *----------------------------------------------------------------------
 */

static void
ReadExports(
    TpSymtab *t,
    const char *base)
{
    const IMAGE_DOS_HEADER *dos = (const IMAGE_DOS_HEADER *) base;
    const IMAGE_NT_HEADERS64 *nt = (const IMAGE_NT_HEADERS64 *)
	    (base + dos->e_lfanew);
    const IMAGE_DATA_DIRECTORY *dir =
	    &nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_EXPORT];
    const IMAGE_EXPORT_DIRECTORY *ed;
    const DWORD *funcs, *names;
    const WORD *ords;
    DWORD i;

    if (dir->VirtualAddress == 0 || dir->Size == 0) {
	return;
    }
    ed = (const IMAGE_EXPORT_DIRECTORY *) (base + dir->VirtualAddress);
    funcs = (const DWORD *) (base + ed->AddressOfFunctions);
    names = (const DWORD *) (base + ed->AddressOfNames);
    ords = (const WORD *) (base + ed->AddressOfNameOrdinals);
    for (i = 0; i < ed->NumberOfNames; i++) {
	DWORD f = funcs[ords[i]];
	const char *name = base + names[i];

	if (f >= dir->VirtualAddress && f < dir->VirtualAddress + dir->Size) {
	    continue;		/* A forwarder, not code here. */
	}
	SymAdd(t, f, name, strlen(name));
    }
}

static void
ReadCoff(
    TpSymtab *t,
    const char *path)
{
    FILE *f = fopen(path, "rb");
    IMAGE_DOS_HEADER dos;
    IMAGE_FILE_HEADER fh;
    IMAGE_SECTION_HEADER *sec = NULL;
    unsigned char *tab = NULL;
    char *strs = NULL;
    DWORD sig, strSize = 0, i;
    long nSyms;

    if (f == NULL) {
	return;
    }
    if (fread(&dos, sizeof(dos), 1, f) != 1 || dos.e_magic != IMAGE_DOS_SIGNATURE
	    || fseek(f, dos.e_lfanew, SEEK_SET) != 0
	    || fread(&sig, 4, 1, f) != 1 || sig != IMAGE_NT_SIGNATURE
	    || fread(&fh, sizeof(fh), 1, f) != 1
	    || fh.PointerToSymbolTable == 0 || fh.NumberOfSymbols == 0
	    || fh.NumberOfSymbols > 10000000) {
	goto done;
    }
    sec = malloc(sizeof(IMAGE_SECTION_HEADER) * fh.NumberOfSections);
    if (sec == NULL || fseek(f, fh.SizeOfOptionalHeader, SEEK_CUR) != 0
	    || fread(sec, sizeof(IMAGE_SECTION_HEADER), fh.NumberOfSections, f)
	    != fh.NumberOfSections) {
	goto done;
    }
    nSyms = (long) fh.NumberOfSymbols;
    tab = malloc((size_t) nSyms * IMAGE_SIZEOF_SYMBOL);
    if (tab == NULL || fseek(f, (long) fh.PointerToSymbolTable, SEEK_SET) != 0
	    || fread(tab, IMAGE_SIZEOF_SYMBOL, (size_t) nSyms, f)
	    != (size_t) nSyms
	    || fread(&strSize, 4, 1, f) != 1 || strSize < 4
	    || strSize > (64u << 20) || (strs = malloc(strSize)) == NULL) {
	goto done;
    }
    memcpy(strs, &strSize, 4);
    if (fread(strs + 4, 1, strSize - 4, f) != strSize - 4) {
	goto done;
    }
    for (i = 0; i < (DWORD) nSyms; i++) {
	const IMAGE_SYMBOL *s = (const IMAGE_SYMBOL *)
		(tab + (size_t) i * IMAGE_SIZEOF_SYMBOL);
	const char *name;
	size_t len;
	int sn = (SHORT) s->SectionNumber;

	if (sn > 0 && sn <= fh.NumberOfSections && ISFCN(s->Type)
		&& (sec[sn - 1].Characteristics & IMAGE_SCN_CNT_CODE)
		&& (s->StorageClass == IMAGE_SYM_CLASS_EXTERNAL
		|| s->StorageClass == IMAGE_SYM_CLASS_STATIC)) {
	    if (s->N.Name.Short == 0) {
		if (s->N.Name.Long >= strSize) {
		    goto next;
		}
		name = strs + s->N.Name.Long;
		len = strnlen(name, strSize - s->N.Name.Long);
	    } else {
		name = (const char *) s->N.ShortName;
		len = strnlen(name, 8);
	    }
	    SymAdd(t, sec[sn - 1].VirtualAddress + s->Value, name, len);
	}
      next:
	i += s->NumberOfAuxSymbols;
    }
  done:
    free(strs);
    free(tab);
    free(sec);
    fclose(f);
}

/*
 *----------------------------------------------------------------------
 *
 * LoadSymtab --
 *
 *	A module's symbols, sorted, duplicates dropped (the COFF name wins
 *	over the export's: same function), each with its extent.
 *
 * Results:
 *	The table, or NULL.
 *
 * Side effects:
 *	Allocates; reads the file.
 *
 *----------------------------------------------------------------------
 */

static TpSymtab *
LoadSymtab(
    TpModule *mod)
{
    TpSymtab *t = calloc(1, sizeof(TpSymtab));
    const char *base = (const char *) mod->bias;
    int i, j;

    if (t == NULL) {
	return NULL;
    }
    ReadCoff(t, mod->path);
    ReadExports(t, base);
    qsort(t->syms, (size_t) t->n, sizeof(Sym), SymCompare);
    for (i = 0, j = 0; i < t->n; i++) {
	if (j > 0 && t->syms[j - 1].start == t->syms[i].start) {
	    free(t->syms[i].name);
	    continue;
	}
	t->syms[j++] = t->syms[i];
    }
    t->n = j;
    for (i = 0; i < t->n; i++) {
	const RUNTIME_FUNCTION *fe = TpWinFunctionEntry(base,
		t->syms[i].start, 1);

	if (fe != NULL && fe->BeginAddress == t->syms[i].start) {
	    t->syms[i].size = fe->EndAddress - fe->BeginAddress;
	} else if (fe == NULL && i + 1 < t->n) {
	    /* A leaf function: no unwind entry; up to the next symbol. */
	    t->syms[i].size = t->syms[i + 1].start - t->syms[i].start;
	}
    }
    return t;
}

static void
SymtabFree(
    TpSymtab *t)
{
    int i;

    if (t == NULL) {
	return;
    }
    for (i = 0; i < t->n; i++) {
	free(t->syms[i].name);
    }
    free(t->syms);
    free(t);
}

int
TpSymbolLookup(
    TpModule *mod,
    uintptr_t offset,
    const char **name,
    uintptr_t *start,
    uintptr_t *size)
{
    TpSymtab *t;
    int a = 0, b, mid;

    if (!mod->symsTried) {
	mod->symsTried = 1;
	mod->syms = LoadSymtab(mod);
    }
    if ((t = mod->syms) == NULL) {
	return 0;
    }
    b = t->n;
    while (a < b) {
	mid = (a + b) / 2;
	if (t->syms[mid].start <= offset) {
	    a = mid + 1;
	} else {
	    b = mid;
	}
    }
    if (a == 0) {
	return 0;
    }
    a--;
    if (offset >= t->syms[a].start + t->syms[a].size) {
	return 0;
    }
    *name = t->syms[a].name;
    *start = t->syms[a].start;
    *size = t->syms[a].size;
    return 1;
}

/*
 * The tables are built without transient memory worth giving back.
 */

void
TpSymbolTrim(void)
{
}

/*
 * Debian's static libtcl archive has no Windows counterpart; Tcl's DLL
 * is a module of its own, so no range of another module is Tcl's.
 */

void
TpSymbolSetArchive(
    const char *soName,
    const char *archivePath)
{
    (void) soName; (void) archivePath;
}

void
TpSymbolSetTclRange(
    uintptr_t lo,
    uintptr_t hi)
{
    (void) lo; (void) hi;
}

/*
 *----------------------------------------------------------------------
 *
 * IsTclName --
 *
 *	Whether a module's file name is Tcl's DLL (tcl86.dll, tcl86t.dll,
 *	tcl90.dll, ...), in any case.
 *
 *----------------------------------------------------------------------
 */

static int
IsTclName(
    const char *s)
{
    return (s[0] == 't' || s[0] == 'T') && (s[1] == 'c' || s[1] == 'C')
	    && (s[2] == 'l' || s[2] == 'L') && s[3] >= '8' && s[3] <= '9'
	    && s[4] >= '0' && s[4] <= '9';
}

static TpModule *
ModuleAdd(
    TpModules *mt,
    const char *path)
{
    TpModule *m;
    const char *base = strrchr(path, '/');

    if (mt->nMods == mt->capMods) {
	int cap = mt->capMods ? 2 * mt->capMods : 32;
	TpModule *n = realloc(mt->mods, sizeof(TpModule) * (size_t) cap);

	if (n == NULL) {
	    return NULL;
	}
	mt->mods = n;
	mt->capMods = cap;
    }
    m = &mt->mods[mt->nMods];
    memset(m, 0, sizeof(TpModule));
    m->path = strdup(path);
    m->shortName = strdup(base ? base + 1 : path);
    if (m->path == NULL || m->shortName == NULL) {
	free(m->path);
	free(m->shortName);
	return NULL;
    }
    m->isTcl = IsTclName(m->shortName);
    mt->nMods++;
    return m;
}

int
TpModulesScan(
    TpModules *mt)
{
    HMODULE mods[TP_WIN_MAX_MODULES];
    int n = TpWinModules(mods, TP_WIN_MAX_MODULES), i, j;

    for (j = 0; j < mt->nMods; j++) {
	mt->mods[j].lo = mt->mods[j].hi = 0;	/* Unless still loaded. */
    }
    for (i = 0; i < n; i++) {
	const char *path = TpWinModulePath(mods[i]);
	uintptr_t lo = (uintptr_t) mods[i];
	TpModule *m = NULL;

	if (path == NULL) {
	    continue;
	}
	for (j = 0; j < mt->nMods; j++) {
	    if (mt->mods[j].bias == lo && strcmp(mt->mods[j].path, path) == 0) {
		m = &mt->mods[j];
		break;
	    }
	}
	if (m == NULL && (m = ModuleAdd(mt, path)) == NULL) {
	    return TCL_ERROR;
	}
	m->bias = lo;
	m->lo = lo;
	m->hi = lo + TpWinImageSize(mods[i]);
    }
    return TCL_OK;
}

int
TpModulesAddPath(
    TpModules *mt,
    const char *path)
{
    TpModule *m;
    int i;

    for (i = 0; i < mt->nMods; i++) {
	if (mt->mods[i].path != NULL && strcmp(mt->mods[i].path, path) == 0) {
	    return i;
	}
    }
    if ((m = ModuleAdd(mt, path)) == NULL) {
	return -1;
    }
    m->symsTried = 1;		/* Not mapped here: nothing to read. */
    return mt->nMods - 1;
}

int
TpModulesFind(
    TpModules *mt,
    uintptr_t pc,
    uintptr_t *offset)
{
    int i;

    for (i = 0; i < mt->nMods; i++) {
	if (pc >= mt->mods[i].lo && pc < mt->mods[i].hi) {
	    *offset = pc - mt->mods[i].bias;
	    return i;
	}
    }
    return -1;
}

void
TpModulesFree(
    TpModules *mt)
{
    int i;

    for (i = 0; i < mt->nMods; i++) {
	free(mt->mods[i].path);
	free(mt->mods[i].shortName);
	SymtabFree(mt->mods[i].syms);
    }
    free(mt->mods);
    memset(mt, 0, sizeof(TpModules));
}
