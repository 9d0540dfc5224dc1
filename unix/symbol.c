/*
 * symbol.c --
 *
 *	Modules (the ELF objects mapped in the process) and the names of
 *	the functions in them, read from the files by hand with <elf.h>.
 *
 *	A C location is (module index, offset), offset = pc - load bias: the
 *	address the ELF file itself uses. Locations keep module indexes, so
 *	a rescan never renumbers: a module is matched by (path, bias), new
 *	ones are appended, and one the loader no longer lists keeps its entry
 *	with an empty range (lo = hi = 0), its names still reachable.
 *	TpModulesFind runs for every PC of every sample: the block holding
 *	mods[] has room for capMods ints after the modules, the indexes of
 *	the modules sorted by lo, which it searches by bisection.
 *
 *	A module's symbol table is loaded on its first lookup: the functions
 *	of .symtab (static ones too) and .dynsym, or of the separate debug
 *	file (found by build-id or .gnu_debuglink) of a stripped file, and
 *	the PLT's entries ("malloc@plt", from the dynamic relocations); sorted
 *	by address, one name per address (aliases lose to global, unversioned,
 *	non-underscore names). A name is given only when the symbol's
 *	[start, start + size) contains the offset: the nearest lower symbol of
 *	a stripped library names the static functions between exported ones
 *	wrongly (TEBCresume shown as Tcl_NRExprObj+0x884b).
 *
 *	Debian's libtcl8.6.so is such a library, but libtcl8.6.a is an ar of
 *	the very objects it was linked from (minus the stub library), with
 *	their local symbols, and without -ffunction-sections: one .text per
 *	object. Each executable section of each member is placed in the .so,
 *	and all its functions named, only when its bytes are found there: at
 *	the address its exported functions give (all agreeing, sizes equal),
 *	or, when it exports none, at the one and only place they occur. Bytes
 *	the linker may rewrite (relocated fields, relaxed instructions) are
 *	not compared. Members not linked into the .so match nowhere.
 *
 *	Every offset read from a file is checked against the file's size: a
 *	truncated or corrupt file gives fewer names, never a crash. Files are
 *	mapped read-only and unmapped before the lookup returns.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define ELFDATA_NATIVE	ELFDATA2MSB
#else
#define ELFDATA_NATIVE	ELFDATA2LSB
#endif

#define TP_NEST_SCAN	8	/* Symbols looked at below the nearest lower
				 * one, for nested symbols (rare). */
#define TP_MIN_RUN	16	/* A section that exports nothing is searched
				 * for by a run of this many fixed bytes... */
#define TP_MIN_BYTES	32	/* ...and needs this many fixed bytes in
				 * all: tiny sections can match by chance. */
#define TP_MAX_HITS	64	/* Places checked before the search gives up
				 * (real sections have one; this bounds the
				 * work a hostile archive can cause). */
#define TP_MAX_SEG	8	/* Executable segments of a library. */
#define TP_MAX_NEXT	8	/* Section names whose layout is followed. */
#define TP_TRIM_BYTES	(256 * 1024)	/* A table built with more transient
					 * memory than this asks for a
					 * malloc_trim (TpSymbolTrim). */

static int trimWanted;		/* Set by LoadSymtab (atomic). */

typedef struct TpSym {	/* 16 bytes: libc's and libtcl's tables
				 * hold thousands. */
    uintptr_t start;		/* ELF virtual address of the function. */
    uint32_t size;		/* Its size in bytes (nonzero); while the
				 * table is built, its top SYM_RANK_SHIFT
				 * bits hold the alias preference. */
    uint32_t name;		/* Offset of its name in the pool. */
} TpSym;

#define SYM_RANK_SHIFT	28	/* Functions of 256 MB or more are left
				 * out. */
#define SYM_SIZE_MASK	((1u << SYM_RANK_SHIFT) - 1)

struct TpSymtab {
    TpSym *syms;		/* Sorted by start, one per start. */
    size_t nSyms;
    char *names;		/* Pool of NUL-terminated names. */
};

typedef struct Builder {	/* A table being built. */
    TpSymtab t;
    size_t capSyms;
    size_t nameLen, capNames;
    int failed;			/* Memory ran out: give up. */
} Builder;

/*
 * A read-only view of an ELF64 image of the host's byte order. Headers
 * are copied out with memcpy (archive members need not be aligned);
 * shnum and phnum are 0 when their tables are not inside the image.
 */

typedef struct Elf {
    const unsigned char *data;
    size_t size;
    Elf64_Ehdr eh;
    size_t shnum, phnum;
} Elf;

typedef struct Mapping {
    unsigned char *data;
    size_t size;
} Mapping;

/*
 * The library's side of archive matching: its exported functions sorted
 * by name and by address, and the file bytes of its executable segments.
 * One executable section of an archive member is a Piece.
 */

typedef struct DynSym {
    const char *name;		/* Points into the mapped library. */
    uintptr_t start;
    uint64_t size;
} DynSym;

typedef struct Target {
    DynSym *byName, *byAddr;	/* TmpAlloc'd, as all of this. */
    size_t nDyn, capDyn;
    struct {
	uintptr_t vaddr;
	uint64_t off;		/* Its bytes' offset in the file. */
	size_t size;
    } seg[TP_MAX_SEG];
    int nSeg;
    int fd;			/* The library, read with pread: mapped, the
				 * searches touched all of its text (1.2 MB
				 * of libtcl) and it all counted in the
				 * process's peak resident memory. */
    unsigned char *buf;		/* PieceMatches' bytes. */
    size_t bufSize;
    unsigned char *chunk;	/* PieceSearch's window, TP_CHUNK bytes. */
    struct {
	char name[32];		/* A section name (".text", ...). */
	uintptr_t end;		/* Where the last member's section of that
				 * name ended in the library. */
    } next[TP_MAX_NEXT];	/* The linker lays out the sections of one
				 * name in the order of the members: the
				 * next one is looked for there first. */
    int nNext;
} Target;

#define TP_CHUNK	(256 * 1024)

typedef struct Piece {
    const unsigned char *bytes;	/* Contents in the member. */
    unsigned char *mask;	/* 1 where the linker may change the byte. */
    size_t size;
    uint64_t align;
} Piece;

/*
 * The registered archive. Process-wide: written by TpSymbolSetArchive,
 * read when a table is loaded; the mutex guards both strings.
 */

static struct {
    pthread_mutex_t lock;
    char *soName;		/* Basename of the library it serves. */
    char *path;			/* The archive. */
    uintptr_t tclLo, tclHi;	/* libtcl's code when it is linked into
				 * another object (a static tclsh, an
				 * application embedding Tcl): absolute
				 * addresses; 0 when libtcl is a library. */
} archiveReg = { PTHREAD_MUTEX_INITIALIZER, NULL, NULL, 0, 0 };

/*
 * Transient buffers (a table being built, the archive's pieces, the
 * library's exports) are mapped and unmapped here, not malloc'd: glibc's
 * free of a block it mapped (over 128 KB) raises its mmap and trim
 * thresholds for the whole process (see cache.c), so a report in a
 * running program would change how the program's own heap behaves from
 * then on. The tables kept are malloc'd.
 *
 * TmpGrow makes room for need elements in such an array (NULL: none
 * yet), doubling. Returns the (possibly moved) array, or NULL if memory
 * ran out: ptr and *cap are then unchanged. TmpAlloc gives zeroed bytes
 * (malloc'd when small); TmpFree, told the same size, gives them back
 * (NULL is ignored).
 */

#define TP_TMP_MAP	(64 * 1024)	/* Smaller: malloc'd (glibc maps none
					 * below 128 KB). */

static void *
TmpAlloc(
    size_t bytes)
{
    void *p;

    if (bytes < TP_TMP_MAP) {
	return calloc(1, bytes ? bytes : 1);
    }
    p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	    -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void
TmpFree(
    void *ptr,
    size_t bytes)
{
    if (ptr == NULL) {
	return;
    }
    if (bytes < TP_TMP_MAP) {
	free(ptr);
    } else {
	munmap(ptr, bytes);
    }
}

static void *
TmpGrow(
    void *ptr,
    size_t *cap,
    size_t need,
    size_t elem)
{
    size_t n = *cap ? *cap : 64, old = *cap * elem;
    void *p;

    if (need <= *cap && ptr != NULL) {
	return ptr;
    }
    while (n < need) {
	n *= 2;
    }
    if (n > SIZE_MAX / elem) {
	return NULL;
    }
    if (ptr == NULL) {
	p = TmpAlloc(n * elem);
    } else if (n * elem < TP_TMP_MAP) {
	p = realloc(ptr, n * elem);
    } else if (old < TP_TMP_MAP) {
	if ((p = TmpAlloc(n * elem)) != NULL) {
	    memcpy(p, ptr, old);
	    free(ptr);
	}
    } else {
	p = mremap(ptr, old, n * elem, MREMAP_MAYMOVE);
	p = p == MAP_FAILED ? NULL : p;
    }
    if (p == NULL) {
	return NULL;
    }
    *cap = n;
    return p;
}

/*
 * Preference among aliases (names of one address): global, then weak,
 * then local; unversioned; not starting with "_". Higher is better.
 */

static uint32_t
Rank(
    int bind,
    const char *name)
{
    return (bind == STB_GLOBAL) * 8 + (bind == STB_WEAK) * 4
	    + (strchr(name, '@') == NULL) * 2 + (name[0] != '_');
}

/*
 * Adds a function to a table being built (copying the name); empty names
 * and sizes are ignored.
 */

static void
AddSym(
    Builder *b,
    uintptr_t start,
    uint64_t size,
    const char *name,
    int bind)
{
    size_t len = strlen(name) + 1;
    TpSym *s = NULL;
    char *names = NULL;

    if (b->failed || size == 0 || size > SYM_SIZE_MASK || len == 1) {
	return;
    }
    if (b->nameLen + len <= UINT32_MAX) {
	s = TmpGrow(b->t.syms, &b->capSyms, b->t.nSyms + 1, sizeof(TpSym));
    }
    if (s != NULL) {
	b->t.syms = s;
	names = TmpGrow(b->t.names, &b->capNames, b->nameLen + len, 1);
    }
    if (names == NULL) {
	b->failed = 1;
	return;
    }
    b->t.names = names;
    s = &b->t.syms[b->t.nSyms++];
    s->start = start;
    s->size = (uint32_t) size | Rank(bind, name) << SYM_RANK_SHIFT;
    s->name = (uint32_t) b->nameLen;
    memcpy(b->t.names + b->nameLen, name, len);
    b->nameLen += len;
}

static int
CompareSyms(
    const void *a,
    const void *b)
{
    const TpSym *x = a, *y = b;

    if (x->start != y->start) {
	return x->start < y->start ? -1 : 1;
    }
    if (x->size >> SYM_RANK_SHIFT != y->size >> SYM_RANK_SHIFT) {
	return x->size >> SYM_RANK_SHIFT > y->size >> SYM_RANK_SHIFT ? -1 : 1;
    }
    return x->name < y->name ? -1 : x->name > y->name;
}

/*
 * Sorts a built table, keeping the preferred name of each address, and
 * takes over the builder's memory: the table, or NULL (memory freed) if
 * it is empty or memory ran out. The names of the aliases left out are
 * dropped and both arrays cut to size: the tables stay as long as the
 * process (libc's debug symbols alone are thousands).
 */

static TpSymtab *
BuilderFinish(
    Builder *b)
{
    TpSymtab *t = NULL;
    TpSym *syms = NULL;
    size_t i, n = 0, used = 0;
    char *names = NULL;

    if (!b->failed && b->t.nSyms > 0) {
	TpSort(b->t.syms, b->t.nSyms, sizeof(TpSym), CompareSyms);
	for (i = 0; i < b->t.nSyms; i++) {
	    if (n == 0 || b->t.syms[n - 1].start != b->t.syms[i].start) {
		b->t.syms[n] = b->t.syms[i];
		b->t.syms[n++].size &= SYM_SIZE_MASK;
	    }
	}
	for (i = 0; i < n; i++) {
	    used += strlen(b->t.names + b->t.syms[i].name) + 1;
	}
	names = malloc(used);
	syms = malloc(n * sizeof(TpSym));
	t = malloc(sizeof(TpSymtab));
    }
    if (t != NULL && names != NULL && syms != NULL) {
	used = 0;
	for (i = 0; i < n; i++) {
	    size_t len = strlen(b->t.names + b->t.syms[i].name) + 1;

	    memcpy(names + used, b->t.names + b->t.syms[i].name, len);
	    syms[i] = b->t.syms[i];
	    syms[i].name = (uint32_t) used;
	    used += len;
	}
	t->syms = syms;
	t->nSyms = n;
	t->names = names;
    } else {
	free(t);
	free(syms);
	free(names);
	t = NULL;
    }
    TmpFree(b->t.syms, b->capSyms * sizeof(TpSym));
    TmpFree(b->t.names, b->capNames);
    b->t.syms = NULL;
    b->t.names = NULL;
    return t;
}

static void
SymtabFree(
    TpSymtab *t)
{
    if (t != NULL) {
	free(t->syms);
	free(t->names);
	free(t);
    }
}

/*
 * Maps a regular, nonempty file read-only (0, else -1); no descriptor
 * stays open. Unmap undoes it.
 */

static int
MapFile(
    const char *path,
    Mapping *m)
{
    struct stat st;
    void *p = MAP_FAILED;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    m->data = NULL;
    if (fd < 0) {
	return -1;
    }
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0
	    && (uint64_t) st.st_size <= SIZE_MAX) {
	p = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    }
    close(fd);
    if (p == MAP_FAILED) {
	return -1;
    }
    m->data = p;
    m->size = (size_t) st.st_size;
    return 0;
}

static void
Unmap(
    Mapping *m)
{
    if (m->data != NULL) {
	munmap(m->data, m->size);
	m->data = NULL;
    }
}

/*
 * The bytes [off, off + len) of an image, or NULL if not all inside it.
 */

static const unsigned char *
Span(
    const Elf *e,
    uint64_t off,
    uint64_t len)
{
    if (off > e->size || len > e->size - off) {
	return NULL;
    }
    return e->data + off;
}

/*
 * Checks the header of an ELF image and locates its tables: 0, or -1 if
 * it is not an ELF64 image of the host's byte order.
 */

static int
ElfInit(
    Elf *e,
    const unsigned char *data,
    size_t size)
{
    Elf64_Shdr sh0;

    memset(e, 0, sizeof(Elf));
    e->data = data;
    e->size = size;
    if (size < sizeof(Elf64_Ehdr) || memcmp(data, ELFMAG, SELFMAG) != 0
	    || data[EI_CLASS] != ELFCLASS64 || data[EI_DATA] != ELFDATA_NATIVE) {
	return -1;
    }
    memcpy(&e->eh, data, sizeof(Elf64_Ehdr));
    if (e->eh.e_shoff != 0 && e->eh.e_shentsize == sizeof(Elf64_Shdr)) {
	e->shnum = e->eh.e_shnum;
	if (e->shnum == 0 && Span(e, e->eh.e_shoff, sizeof(sh0)) != NULL) {
	    memcpy(&sh0, data + e->eh.e_shoff, sizeof(sh0));
	    e->shnum = sh0.sh_size < size ? (size_t) sh0.sh_size : 0;
	}
	if (e->shnum > size / sizeof(Elf64_Shdr) || Span(e, e->eh.e_shoff,
		(uint64_t) e->shnum * sizeof(Elf64_Shdr)) == NULL) {
	    e->shnum = 0;
	}
    }
    if (e->eh.e_phoff != 0 && e->eh.e_phentsize == sizeof(Elf64_Phdr)
	    && Span(e, e->eh.e_phoff,
		(uint64_t) e->eh.e_phnum * sizeof(Elf64_Phdr)) != NULL) {
	e->phnum = e->eh.e_phnum;
    }
    return 0;
}

/*
 * Section header i (1, or 0 past the end) and a section's bytes (NULL
 * if it has none in the file).
 */

static int
GetShdr(
    const Elf *e,
    size_t i,
    Elf64_Shdr *sh)
{
    if (i >= e->shnum) {
	return 0;
    }
    memcpy(sh, e->data + e->eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof(*sh));
    return 1;
}

static const unsigned char *
SecData(
    const Elf *e,
    const Elf64_Shdr *sh)
{
    return sh->sh_type == SHT_NOBITS ? NULL
	    : Span(e, sh->sh_offset, sh->sh_size);
}

/*
 * A string of string table section strndx, or NULL unless it is one and
 * the string ends inside it.
 */

static const char *
StrAt(
    const Elf *e,
    size_t strndx,
    uint64_t off)
{
    Elf64_Shdr sh;
    const unsigned char *p;

    if (!GetShdr(e, strndx, &sh) || sh.sh_type != SHT_STRTAB
	    || (p = SecData(e, &sh)) == NULL || off >= sh.sh_size
	    || memchr(p + off, 0, sh.sh_size - off) == NULL) {
	return NULL;
    }
    return (const char *) p + off;
}

/*
 * Iterates over a symbol table section: *i starts at 0; each call gives
 * the next symbol with a readable name (1), or ends (0).
 */

static int
NextSym(
    const Elf *e,
    const Elf64_Shdr *sh,
    size_t *i,
    Elf64_Sym *sym,
    const char **name)
{
    const unsigned char *p = SecData(e, sh);

    if (p == NULL || sh->sh_entsize != sizeof(Elf64_Sym)) {
	return 0;
    }
    while (++*i < sh->sh_size / sizeof(Elf64_Sym)) {
	memcpy(sym, p + *i * sizeof(Elf64_Sym), sizeof(Elf64_Sym));
	if ((*name = StrAt(e, sh->sh_link, sym->st_name)) != NULL) {
	    return 1;
	}
    }
    return 0;
}

static int
IsFunc(
    const Elf64_Sym *sym)
{
    int type = ELF64_ST_TYPE(sym->st_info);

    return (type == STT_FUNC || type == STT_GNU_IFUNC) && sym->st_size > 0
	    && sym->st_shndx != SHN_UNDEF && sym->st_shndx < SHN_LORESERVE;
}

/*
 * Adds the functions of an image's sections of one type (SHT_SYMTAB or
 * SHT_DYNSYM). Returns how many there were.
 */

static size_t
AddElfSyms(
    Builder *b,
    const Elf *e,
    uint32_t type)
{
    Elf64_Shdr sh;
    Elf64_Sym sym;
    const char *name;
    size_t i, j, n = 0;

    for (i = 1; GetShdr(e, i, &sh); i++) {
	for (j = 0; sh.sh_type == type && NextSym(e, &sh, &j, &sym, &name); ) {
	    if (IsFunc(&sym)) {
		AddSym(b, sym.st_value, sym.st_size, name,
			ELF64_ST_BIND(sym.st_info));
		n++;
	    }
	}
    }
    return n;
}

/*
 * The PLT's entries, named "function@plt" as other profilers name them
 * (x86_64 only): a sample in a PLT stub is a call on its way to another
 * module, and its caller's module+offset said nothing. Each entry of
 * .plt, .plt.sec and .plt.got that jumps through a GOT slot (jmp
 * *disp32(%rip), after an endbr64 or a bnd prefix) is named by the
 * dynamic relocation of that slot (JUMP_SLOT or GLOB_DAT); .plt's first
 * entry (the jump to the dynamic linker) and, with IBT, the lazy .plt
 * entries (which push an index) have none and stay unnamed.
 */

typedef struct GotSlot {
    uint64_t offset;		/* Address of the GOT slot. */
    const char *name;		/* The function it holds. */
} GotSlot;

static int
CompareSlots(
    const void *a,
    const void *b)
{
    const GotSlot *x = a, *y = b;

    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static size_t
AddPltSyms(
    Builder *b,
    const Elf *e)
{
#if defined(__x86_64__)
    Elf64_Shdr sh, symSh;
    Elf64_Rela r;
    Elf64_Sym sym;
    const unsigned char *p;
    const char *name;
    GotSlot *slots = NULL, *g, key;
    size_t i, j, k, nSlots = 0, cap = 0, n = 0, ent;
    uint64_t off;
    int32_t disp;
    char buf[256];

    /*
     * The GOT slots the loader fills with a function's address.
     */

    for (i = 1; GetShdr(e, i, &sh); i++) {
	if (sh.sh_type != SHT_RELA || sh.sh_entsize != sizeof(Elf64_Rela)
		|| (p = SecData(e, &sh)) == NULL
		|| !GetShdr(e, sh.sh_link, &symSh)
		|| symSh.sh_entsize != sizeof(Elf64_Sym)
		|| SecData(e, &symSh) == NULL) {
	    continue;
	}
	for (j = 0; j < sh.sh_size / sizeof(r); j++) {
	    memcpy(&r, p + j * sizeof(r), sizeof(r));
	    if ((ELF64_R_TYPE(r.r_info) != R_X86_64_JUMP_SLOT
		    && ELF64_R_TYPE(r.r_info) != R_X86_64_GLOB_DAT)
		    || ELF64_R_SYM(r.r_info) == 0
		    || ELF64_R_SYM(r.r_info) >= symSh.sh_size / sizeof(sym)) {
		continue;
	    }
	    memcpy(&sym, SecData(e, &symSh)
		    + ELF64_R_SYM(r.r_info) * sizeof(sym), sizeof(sym));
	    name = StrAt(e, symSh.sh_link, sym.st_name);
	    if (name == NULL || name[0] == '\0') {
		continue;
	    }
	    if ((g = TmpGrow(slots, &cap, nSlots + 1, sizeof(GotSlot)))
		    == NULL) {
		TmpFree(slots, cap * sizeof(GotSlot));
		return 0;
	    }
	    slots = g;
	    slots[nSlots].offset = r.r_offset;
	    slots[nSlots++].name = name;
	}
    }
    if (nSlots == 0) {
	TmpFree(slots, cap * sizeof(GotSlot));
	return 0;
    }
    TpSort(slots, nSlots, sizeof(GotSlot), CompareSlots);

    /*
     * The entries that jump through one.
     */

    for (i = 1; GetShdr(e, i, &sh); i++) {
	name = StrAt(e, e->eh.e_shstrndx, sh.sh_name);
	if (sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR)
		|| name == NULL || strncmp(name, ".plt", 4) != 0
		|| (name[4] != '\0' && name[4] != '.')
		|| (p = SecData(e, &sh)) == NULL) {
	    continue;
	}
	ent = sh.sh_entsize >= 8 && sh.sh_entsize <= 32 ? sh.sh_entsize : 16;
	for (off = 0; off + ent <= sh.sh_size; off += ent) {
	    for (k = 0; k + 6 <= ent; k++) {
		if (p[off + k] == 0xff && p[off + k + 1] == 0x25) {
		    break;
		}
	    }
	    if (k + 6 > ent) {
		continue;
	    }
	    memcpy(&disp, p + off + k + 2, sizeof(disp));
	    key.offset = sh.sh_addr + off + k + 6 + (int64_t) disp;
	    g = bsearch(&key, slots, nSlots, sizeof(GotSlot), CompareSlots);
	    if (g != NULL
		    && snprintf(buf, sizeof(buf), "%s@plt", g->name)
			< (int) sizeof(buf)) {
		AddSym(b, sh.sh_addr + off, ent, buf, STB_LOCAL);
		n++;
	    }
	}
    }
    TmpFree(slots, cap * sizeof(GotSlot));
    return n;
#else
    (void) b;
    (void) e;
    return 0;
#endif
}

/*
 * The GNU build-id of an image (and its length), or NULL.
 */

static const unsigned char *
BuildId(
    const Elf *e,
    size_t *len)
{
    Elf64_Shdr sh;
    const unsigned char *p;
    uint32_t nh[3];		/* namesz, descsz, type */
    uint64_t off, desc;
    size_t i;

    for (i = 1; GetShdr(e, i, &sh); i++) {
	if (sh.sh_type != SHT_NOTE || (p = SecData(e, &sh)) == NULL) {
	    continue;
	}
	for (off = 0; off + sizeof(nh) <= sh.sh_size; ) {
	    memcpy(nh, p + off, sizeof(nh));
	    desc = off + sizeof(nh) + (((uint64_t) nh[0] + 3) & ~3ULL);
	    if (desc + nh[1] > sh.sh_size) {
		break;
	    }
	    if (nh[2] == NT_GNU_BUILD_ID && nh[0] == 4 && nh[1] > 0
		    && memcmp(p + off + sizeof(nh), "GNU", 4) == 0) {
		*len = nh[1];
		return p + desc;
	    }
	    off = desc + (((uint64_t) nh[1] + 3) & ~3ULL);
	}
    }
    return NULL;
}

/*
 *----------------------------------------------------------------------
 *
 * OpenDebugFile --
 *
 *	Finds the separate debug file of a stripped image: by build-id
 *	under /usr/lib/debug/.build-id, else by .gnu_debuglink next to it,
 *	in .debug/ there, or under /usr/lib/debug. Only a file with the same
 *	build-id is taken, so an image without one gets none.
 *
 * Results:
 *	1 with *m, *de and found (PATH_MAX bytes: the file's path) set, or 0.
 *
 * Side effects:
 *	Maps the debug file; the caller unmaps it.
 *
 *----------------------------------------------------------------------
 */

static int
OpenDebugFile(
    const Elf *e,
    const char *path,
    Mapping *m,
    Elf *de,
    char *found)
{
    char cand[4][PATH_MAX], hex[130];
    const unsigned char *id, *id2, *link = NULL;
    const char *slash = strrchr(path, '/'), *s;
    size_t idLen = 0, len2, linkLen = 0, i, strndx = e->eh.e_shstrndx;
    int nCand = 1, dirLen = slash ? (int) (slash - path) : 0;
    Elf64_Shdr sh;

    id = BuildId(e, &idLen);
    if (id == NULL || idLen < 2 || idLen > 64) {
	return 0;
    }
    for (i = 1; i < idLen; i++) {
	sprintf(hex + 2 * (i - 1), "%02x", id[i]);
    }
    snprintf(cand[0], PATH_MAX, "/usr/lib/debug/.build-id/%02x/%s.debug",
	    id[0], hex);
    if (strndx == SHN_XINDEX && GetShdr(e, 0, &sh)) {
	strndx = sh.sh_link;
    }
    for (i = 1; link == NULL && GetShdr(e, i, &sh); i++) {
	s = StrAt(e, strndx, sh.sh_name);
	if (s != NULL && strcmp(s, ".gnu_debuglink") == 0) {
	    link = SecData(e, &sh);
	    linkLen = sh.sh_size;
	}
    }
    if (link != NULL && memchr(link, 0, linkLen) != NULL && link[0] != '\0'
	    && strchr((const char *) link, '/') == NULL) {
	snprintf(cand[1], PATH_MAX, "%.*s/%s", dirLen, path, link);
	snprintf(cand[2], PATH_MAX, "%.*s/.debug/%s", dirLen, path, link);
	snprintf(cand[3], PATH_MAX, "/usr/lib/debug%.*s/%s", dirLen, path, link);
	nCand = 4;
    }
    for (i = 0; i < (size_t) nCand; i++) {
	if (strcmp(cand[i], path) == 0 || MapFile(cand[i], m) != 0) {
	    continue;
	}
	if (ElfInit(de, m->data, m->size) == 0
		&& (id2 = BuildId(de, &len2)) != NULL && len2 == idLen
		&& memcmp(id, id2, idLen) == 0) {
	    memcpy(found, cand[i], PATH_MAX);
	    return 1;
	}
	Unmap(m);
    }
    return 0;
}

static int
CompareDynName(
    const void *a,
    const void *b)
{
    return strcmp(((const DynSym *) a)->name, ((const DynSym *) b)->name);
}

static int
CompareDynAddr(
    const void *a,
    const void *b)
{
    const DynSym *x = a, *y = b;

    return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Prepares the library's side of archive matching: 0, or -1 if it has no
 * executable bytes or no exports, or memory ran out. TargetFree releases
 * it (also after a failure).
 */

static int
TargetInit(
    Target *t,
    const Elf *so,
    const char *soPath)
{
    Elf64_Shdr sh;
    Elf64_Phdr ph;
    Elf64_Sym sym;
    const char *name;
    size_t i, j;
    DynSym *d;

    memset(t, 0, sizeof(Target));
    t->fd = open(soPath, O_RDONLY | O_CLOEXEC);
    if (t->fd < 0) {
	return -1;
    }
    for (i = 0; i < so->phnum; i++) {
	memcpy(&ph, so->data + so->eh.e_phoff + i * sizeof(ph), sizeof(ph));
	if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && t->nSeg < TP_MAX_SEG
		&& Span(so, ph.p_offset, ph.p_filesz) != NULL) {
	    t->seg[t->nSeg].vaddr = ph.p_vaddr;
	    t->seg[t->nSeg].off = ph.p_offset;
	    t->seg[t->nSeg++].size = ph.p_filesz;
	}
    }
    for (i = 1; GetShdr(so, i, &sh); i++) {
	for (j = 0; sh.sh_type == SHT_DYNSYM
		&& NextSym(so, &sh, &j, &sym, &name); ) {
	    if (!IsFunc(&sym) || name[0] == '\0') {
		continue;
	    }
	    if ((d = TmpGrow(t->byName, &t->capDyn, t->nDyn + 1,
		    sizeof(DynSym))) == NULL) {
		return -1;
	    }
	    t->byName = d;
	    t->byName[t->nDyn].name = name;
	    t->byName[t->nDyn].start = sym.st_value;
	    t->byName[t->nDyn++].size = sym.st_size;
	}
    }
    if (t->nSeg == 0 || t->nDyn == 0
	    || (t->chunk = TmpAlloc(TP_CHUNK)) == NULL
	    || (t->byAddr = TmpAlloc(t->nDyn * sizeof(DynSym))) == NULL) {
	return -1;
    }
    memcpy(t->byAddr, t->byName, t->nDyn * sizeof(DynSym));
    TpSort(t->byName, t->nDyn, sizeof(DynSym), CompareDynName);
    TpSort(t->byAddr, t->nDyn, sizeof(DynSym), CompareDynAddr);
    return 0;
}

static void
TargetFree(
    Target *t)
{
    TmpFree(t->byName, t->capDyn * sizeof(DynSym));
    if (t->byAddr != NULL) {
	TmpFree(t->byAddr, t->nDyn * sizeof(DynSym));
    }
    TmpFree(t->buf, t->bufSize);
    TmpFree(t->chunk, TP_CHUNK);
    t->byName = t->byAddr = NULL;
    t->buf = t->chunk = NULL;
    if (t->fd >= 0) {
	close(t->fd);
    }
}

/*
 * Marks in pc->mask the bytes of a member's section that the linker may
 * have changed: the fields its relocations patch and, for the GOT loads
 * it may relax (mov -> lea, call *mem -> addr32 call), the opcode bytes
 * before them. Anything else (TLS sequences, rewritten wholesale; unknown
 * types) masks a wider window. The widths are x86_64's; the archive is
 * used on x86_64 only.
 */

static void
MaskRelocs(
    const Elf *m,
    size_t sec,
    Piece *pc)
{
    Elf64_Shdr sh;
    Elf64_Rela r;
    const unsigned char *p;
    size_t i, j;
    int64_t lo, hi, at;

    for (i = 1; GetShdr(m, i, &sh); i++) {
	if (sh.sh_type != SHT_RELA || sh.sh_info != sec
		|| sh.sh_entsize != sizeof(Elf64_Rela)
		|| (p = SecData(m, &sh)) == NULL) {
	    continue;
	}
	for (j = 0; j < sh.sh_size / sizeof(r); j++) {
	    memcpy(&r, p + j * sizeof(r), sizeof(r));
	    switch (ELF64_R_TYPE(r.r_info)) {
	    case R_X86_64_NONE:
		lo = hi = 0;
		break;
	    case R_X86_64_PC32: case R_X86_64_PLT32: case R_X86_64_32:
	    case R_X86_64_32S: case R_X86_64_GOTPCREL: case R_X86_64_GOTPC32:
		lo = 0; hi = 4;
		break;
	    case R_X86_64_64: case R_X86_64_PC64: case R_X86_64_GOTOFF64:
	    case R_X86_64_GOTPC64:
		lo = 0; hi = 8;
		break;
	    case R_X86_64_GOTPCRELX: case R_X86_64_REX_GOTPCRELX:
		lo = -3; hi = 4;
		break;
	    default:
		lo = -12; hi = 12;
		break;
	    }
	    for (; r.r_offset < pc->size && lo < hi; lo++) {
		at = (int64_t) r.r_offset + lo;
		if (at >= 0 && (uint64_t) at < pc->size) {
		    pc->mask[at] = 1;
		}
	    }
	}
    }
}

/*
 * Reads the library's bytes at [addr, addr + len) into dst: 0, or -1
 * unless they are all in one executable segment and could be read.
 */

static int
TargetRead(
    const Target *t,
    uintptr_t addr,
    size_t len,
    unsigned char *dst)
{
    int i;
    ssize_t got;
    off_t at;

    for (i = 0; i < t->nSeg; i++) {
	if (addr >= t->seg[i].vaddr && addr - t->seg[i].vaddr <= t->seg[i].size
		&& len <= t->seg[i].size - (addr - t->seg[i].vaddr)) {
	    at = (off_t) (t->seg[i].off + (addr - t->seg[i].vaddr));
	    while (len > 0) {
		got = pread(t->fd, dst, len, at);
		if (got <= 0) {
		    if (got < 0 && errno == EINTR) {
			continue;
		    }
		    return -1;
		}
		dst += got;
		len -= (size_t) got;
		at += got;
	    }
	    return 0;
	}
    }
    return -1;
}

/*
 * Does a member's section match the library's bytes at base (masked bytes
 * skipped, alignment respected)?
 */

static int
PieceMatches(
    Target *t,
    const Piece *pc,
    uintptr_t base)
{
    const unsigned char *p;
    size_t i;

    if (pc->align > 1 && base % pc->align != 0) {
	return 0;
    }
    if (t->bufSize < pc->size) {
	TmpFree(t->buf, t->bufSize);
	t->bufSize = 0;
	if ((t->buf = TmpAlloc(pc->size)) == NULL) {
	    return 0;
	}
	t->bufSize = pc->size;
    }
    if (TargetRead(t, base, pc->size, t->buf) != 0) {
	return 0;
    }
    p = t->buf;
    for (i = 0; i < pc->size; i++) {
	if (!pc->mask[i] && p[i] != pc->bytes[i]) {
	    return 0;
	}
    }
    return 1;
}

/*
 * Finds where a section that exports nothing lies in the library: its
 * longest run of fixed bytes is searched for, every hit checked in full.
 * 1 with *base set if exactly one place matches; 0 if none does, several
 * do, or the section has too few fixed bytes to tell.
 */

static int
PieceSearch(
    Target *t,
    const Piece *pc,
    uintptr_t expect,
    uintptr_t *base)
{
    size_t i, run = 0, best = 0, bestAt = 0, fixed = 0, w, len;
    const unsigned char *p, *end, *hit;
    uintptr_t cand;
    int s, found = 0, hits = 0;

    for (i = 0; i < pc->size; i++) {
	run = pc->mask[i] ? 0 : run + 1;
	fixed += !pc->mask[i];
	if (run > best) {
	    best = run;
	    bestAt = i + 1 - run;
	}
    }
    if (best < TP_MIN_RUN || fixed < TP_MIN_BYTES) {
	return 0;
    }
    if (best > TP_CHUNK / 16) {
	best = TP_CHUNK / 16;	/* Unique enough; hits are checked whole. */
    }

    /*
     * Right after the previous member's section of the same name: its
     * bytes there are the proof (a search of the whole text for each
     * such section took most of the first report's time).
     */

    if (expect != 0) {
	cand = pc->align > 1 ? (expect + pc->align - 1) / pc->align
		* pc->align : expect;
	if (PieceMatches(t, pc, cand)) {
	    *base = cand;
	    return 1;
	}
    }

    /*
     * The segments are read a window at a time; consecutive windows
     * overlap by best - 1 bytes, so that every place is searched in
     * exactly one window.
     */

    for (s = 0; s < t->nSeg; s++) {
	for (w = 0; w < t->seg[s].size; w += len - (best - 1)) {
	    len = t->seg[s].size - w;
	    if (len > TP_CHUNK) {
		len = TP_CHUNK;
	    }
	    if (len < best || TargetRead(t, t->seg[s].vaddr + w, len,
		    t->chunk) != 0) {
		break;
	    }
	    p = t->chunk;
	    end = p + len;
	    while ((hit = memmem(p, end - p, pc->bytes + bestAt, best))
		    != NULL) {
		if (++hits > TP_MAX_HITS) {
		    return 0;
		}
		cand = t->seg[s].vaddr + w + (hit - t->chunk) - bestAt;
		if (PieceMatches(t, pc, cand)) {
		    if (found++) {
			return 0;
		    }
		    *base = cand;
		}
		p = hit + 1;
	    }
	    if (w + len == t->seg[s].size) {
		break;
	    }
	}
    }
    return found == 1;
}

/*
 * How many of the library's exported functions overlap [lo, lo + len).
 */

static size_t
ExportsIn(
    const Target *t,
    uintptr_t lo,
    size_t len)
{
    size_t a = 0, b = t->nDyn, n = 0, mid;

    while (a < b) {
	mid = (a + b) / 2;
	if (t->byAddr[mid].start < lo) {
	    a = mid + 1;
	} else {
	    b = mid;
	}
    }
    if (a > 0 && t->byAddr[a - 1].start + t->byAddr[a - 1].size > lo) {
	n++;
    }
    for (; a < t->nDyn && t->byAddr[a].start - lo < len; a++) {
	n++;
    }
    return n;
}

/*
 *----------------------------------------------------------------------
 *
 * PlaceSection --
 *
 *	Places one executable section of an archive member in the library
 *	and adds its functions. Its exported functions (anchors) must all
 *	give the same base and have the library's sizes, and the bytes must
 *	match there; with no anchor, the bytes must match at exactly one
 *	place. Either way the range must hold no export but the anchors.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Adds to the builder.
 *
 *----------------------------------------------------------------------
 */

static void
PlaceSection(
    Builder *b,
    Target *t,
    const Elf *m,
    size_t sec,
    const Elf64_Shdr *symSh,
    const Elf64_Shdr *sh)
{
    Piece pc;
    Elf64_Sym sym;
    const char *name;
    DynSym key, *d;
    uintptr_t base = 0, cand, expect = 0;
    size_t i, nFunc = 0, nAnchor = 0;
    int ok = 1, slot = -1;
    const char *secName = StrAt(m, m->eh.e_shstrndx, sh->sh_name);

    if (secName != NULL && strlen(secName) < sizeof(t->next[0].name)) {
	for (slot = 0; slot < t->nNext
		&& strcmp(t->next[slot].name, secName) != 0; slot++) {
	    continue;
	}
	if (slot == t->nNext) {
	    if (slot < TP_MAX_NEXT) {
		strcpy(t->next[slot].name, secName);
		t->next[slot].end = 0;
		t->nNext++;
	    } else {
		slot = -1;
	    }
	}
	expect = slot >= 0 ? t->next[slot].end : 0;
    }

    pc.bytes = SecData(m, sh);
    pc.size = sh->sh_size;
    pc.align = sh->sh_addralign;
    if (pc.bytes == NULL || (pc.mask = TmpAlloc(pc.size)) == NULL) {
	return;
    }
    MaskRelocs(m, sec, &pc);
    for (i = 0; ok && NextSym(m, symSh, &i, &sym, &name); ) {
	if (!IsFunc(&sym) || sym.st_shndx != sec || sym.st_value > pc.size
		|| sym.st_size > pc.size - sym.st_value) {
	    continue;
	}
	nFunc++;
	key.name = name;
	if (ELF64_ST_BIND(sym.st_info) == STB_LOCAL || (d = bsearch(&key,
		t->byName, t->nDyn, sizeof(DynSym), CompareDynName)) == NULL) {
	    continue;
	}
	cand = d->start - sym.st_value;
	ok = d->size == sym.st_size && (nAnchor++ == 0 || cand == base);
	base = cand;
    }
    if (ok && nFunc > 0 && (nAnchor > 0 ? PieceMatches(t, &pc, base)
	    : PieceSearch(t, &pc, expect, &base))
	    && ExportsIn(t, base, pc.size) == nAnchor) {
	if (slot >= 0) {
	    t->next[slot].end = base + pc.size;
	}
	for (i = 0; NextSym(m, symSh, &i, &sym, &name); ) {
	    if (IsFunc(&sym) && sym.st_shndx == sec && sym.st_value <= pc.size
		    && sym.st_size <= pc.size - sym.st_value) {
		AddSym(b, base + sym.st_value, sym.st_size, name,
			ELF64_ST_BIND(sym.st_info));
	    }
	}
    }
    TmpFree(pc.mask, pc.size);
}

/*
 *----------------------------------------------------------------------
 *
 * AddArchiveSyms --
 *
 *	Lends the functions of a static archive's members to the library
 *	linked from them. Members are found by walking the ar headers; the
 *	GNU symbol index ("/") and long-name table ("//") are not ELF and
 *	are skipped like anything else that is not (member names are of no
 *	use here). Thin archives are not supported.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Adds to the builder.
 *
 *----------------------------------------------------------------------
 */

static void
AddArchiveSyms(
    Builder *b,
    const Elf *so,
    const char *soPath,
    const char *path)
{
    Mapping ar;
    Target t;
    Elf m;
    Elf64_Shdr sh, symSh;
    const unsigned char *h;
    size_t pos = 8, body, size, i, sym, released = 0;

    memset(&t, 0, sizeof(t));
    t.fd = -1;
    if (so->eh.e_machine != EM_X86_64 || MapFile(path, &ar) != 0) {
	return;
    }
    if (ar.size < 8 || memcmp(ar.data, "!<arch>\n", 8) != 0
	    || TargetInit(&t, so, soPath) != 0) {
	goto done;
    }
    while (ar.size >= 60 && pos <= ar.size - 60) {
	h = ar.data + pos;
	body = pos + 60;
	if (h[58] != '`' || h[59] != '\n') {
	    break;
	}
	for (size = 0, i = 48; i < 58 && h[i] >= '0' && h[i] <= '9'; i++) {
	    size = size * 10 + (h[i] - '0');
	}
	if (size > ar.size - body) {
	    break;
	}
	if (ElfInit(&m, ar.data + body, size) == 0 && m.eh.e_type == ET_REL
		&& m.eh.e_machine == so->eh.e_machine) {
	    for (sym = 1; GetShdr(&m, sym, &symSh)
		    && symSh.sh_type != SHT_SYMTAB; sym++) {
		continue;
	    }
	    for (i = 1; sym < m.shnum && GetShdr(&m, i, &sh); i++) {
		if (sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_EXECINSTR)
			&& sh.sh_size > 0) {
		    PlaceSection(b, &t, &m, i, &symSh, &sh);
		}
	    }
	}
	pos = body + size + (size & 1);

	/*
	 * The members are read once, in order: give back the pages of
	 * those done (the file's pages stay in the page cache). Without
	 * this the whole archive (3.3 MB for libtcl8.6.a) counted in the
	 * process's peak resident memory at the first report.
	 */

	if (pos - released > (256u << 10)) {
	    size_t upTo = pos & ~(size_t) 4095;

	    madvise((char *) ar.data + released, upTo - released,
		    MADV_DONTNEED);
	    released = upTo;
	}
    }
  done:
    TargetFree(&t);
    Unmap(&ar);
}

/*
 *----------------------------------------------------------------------
 *
 * The cache of symbol tables (cache.c). Building a table is done at the
 * first report of every run: matching libtcl's archive against the
 * library takes 6-9 ms, and reading and sorting libc's functions from
 * its debug file (libc6-dbg) 2 ms, most of an export's time. A table is
 * kept and read back (0.1-0.2 ms) as long as the files it was made from
 * are the same (the key: the image's path, build-id, size, modification
 * time and inode, and those of the file that gave its .symtab when the
 * image has none: its debug file or the archive) and the building is
 * this version's (TP_SYMCACHE_VERSION: bump it whenever what the
 * building finds can change). A file that fails a check is not used,
 * and is written again. Small tables are not cached: building them costs
 * less than reading a file.
 *
 *----------------------------------------------------------------------
 */

#define TP_SYMCACHE_VERSION	2
#define TP_SYMCACHE_MAXSYMS	(1u << 22)

/*
 * Symbol entries (of every type) below which a table is built, not
 * cached: building a small one costs less than reading a file. libc's
 * debug file has 10 000 entries and its .dynsym 3 000, libtcl's .dynsym
 * 1 100, this library 800. A variable only so that symtest can cache
 * small tables.
 */

static size_t symCacheMinEntries = 1024;

enum {				/* Where a table's .symtab came from. */
    SRC_SELF,			/* The image's own. */
    SRC_DEBUG,			/* Its separate debug file. */
    SRC_ARCHIVE,		/* The archive registered for it. */
    SRC_NONE			/* None: .dynsym and the PLT only. */
};

typedef struct CacheKeyData {	/* All fields 8-byte aligned: no padding. */
    char what[8];		/* "symtab". */
    uint32_t version;
    uint32_t symSize;		/* sizeof(TpSym). */
    uint32_t source;		/* SRC_*. */
    uint32_t reserved;		/* 0. */
    uint64_t soSize, soMtimeNs, soIno;
    uint64_t srcSize, srcMtimeNs, srcIno;	/* The debug file or the
				 * archive; 0 for SRC_SELF and SRC_NONE. */
    uint64_t paths;		/* TpHash64 of the paths and the build-id. */
} CacheKeyData;

typedef struct CacheKey {
    CacheKeyData k;
    char path[PATH_MAX];	/* The cache file. */
} CacheKey;

typedef struct CacheBody {	/* Then the symbols, then the names. */
    uint64_t nSyms, namesLen;
} CacheBody;

/*
 * Counters for the tests (symtest): tables read from and written to the
 * cache.
 */

static struct {
    unsigned long hits, writes;
} cacheStats;

static uint64_t
MtimeNs(
    const struct stat *st)
{
    return (uint64_t) st->st_mtim.tv_sec * 1000000000u
	    + (uint64_t) st->st_mtim.tv_nsec;
}

/*
 * The cache file and its key for the table of image soPath (so) whose
 * .symtab came from source, the file srcPath (NULL for SRC_SELF and
 * SRC_NONE): 1, or 0 if it has no cache (no directory, no build-id, a
 * file that cannot be stat'ed).
 */

static int
CacheKeyMake(
    const Elf *so,
    const char *soPath,
    const char *shortName,
    int source,
    const char *srcPath,
    CacheKey *k)
{
    char name[NAME_MAX];
    const unsigned char *id;
    struct stat ss, as;
    size_t idLen = 0;
    uint64_t h;

    memset(k, 0, sizeof(*k));
    memset(&as, 0, sizeof(as));
    if ((id = BuildId(so, &idLen)) == NULL || idLen == 0 || idLen > 64
	    || stat(soPath, &ss) != 0
	    || (srcPath != NULL && stat(srcPath, &as) != 0)) {
	return 0;
    }
    h = TpHash64(TpHash64(TP_HASH_INIT, soPath, strlen(soPath) + 1), id,
	    idLen);
    if (snprintf(name, sizeof(name), "%.200s-%016llx.syms", shortName,
	    (unsigned long long) h) <= 0
	    || !TpCachePath(name, k->path, sizeof(k->path))) {
	return 0;
    }
    memcpy(k->k.what, "symtab", 7);
    k->k.version = TP_SYMCACHE_VERSION;
    k->k.symSize = (uint32_t) sizeof(TpSym);
    k->k.source = (uint32_t) source;
    k->k.soSize = (uint64_t) ss.st_size;
    k->k.soMtimeNs = MtimeNs(&ss);
    k->k.soIno = (uint64_t) ss.st_ino;
    if (srcPath != NULL) {
	k->k.srcSize = (uint64_t) as.st_size;
	k->k.srcMtimeNs = MtimeNs(&as);
	k->k.srcIno = (uint64_t) as.st_ino;
	h = TpHash64(h, srcPath, strlen(srcPath) + 1);
    }
    k->k.paths = h;
    return 1;
}

/*
 * The table in k's cache file, or NULL if there is none that passes
 * every check: cache.c's (key, size, checksum), then the shape of a
 * table BuilderFinish makes (sorted distinct starts, sizes in range,
 * names inside the pool, the pool NUL-terminated).
 */

static TpSymtab *
CacheRead(
    const CacheKey *k)
{
    TpCacheBlob b;
    CacheBody h;
    const TpSym *cs;
    const char *cn;
    TpSym *syms = NULL;
    char *names = NULL;
    TpSymtab *t = NULL;
    size_t symBytes;
    uint64_t i;

    if (!TpCacheRead(k->path, &k->k, sizeof(k->k), &b)) {
	return NULL;
    }
    if (b.len < sizeof(h)) {
	goto done;
    }
    memcpy(&h, b.body, sizeof(h));
    symBytes = (size_t) h.nSyms * sizeof(TpSym);
    if (h.nSyms == 0 || h.nSyms > TP_SYMCACHE_MAXSYMS || h.namesLen == 0
	    || b.len < sizeof(h) + symBytes
	    || h.namesLen != b.len - sizeof(h) - symBytes) {
	goto done;
    }
    cs = (const TpSym *) (b.body + sizeof(h));	/* 8-byte aligned. */
    cn = b.body + sizeof(h) + symBytes;
    if (cn[h.namesLen - 1] != '\0') {
	goto done;
    }
    for (i = 0; i < h.nSyms; i++) {
	if (cs[i].name >= h.namesLen || cs[i].size == 0
		|| cs[i].size > SYM_SIZE_MASK
		|| (i > 0 && cs[i].start <= cs[i - 1].start)) {
	    goto done;
	}
    }
    syms = malloc(symBytes);
    names = malloc(h.namesLen);
    t = malloc(sizeof(TpSymtab));
    if (syms == NULL || names == NULL || t == NULL) {
	free(syms);
	free(names);
	free(t);
	t = NULL;
	goto done;
    }
    memcpy(syms, cs, symBytes);
    memcpy(names, cn, h.namesLen);
    t->syms = syms;
    t->nSyms = (size_t) h.nSyms;
    t->names = names;
    cacheStats.hits++;
  done:
    TpCacheRelease(&b);
    return t;
}

/*
 * Writes table t to k's cache file. Failures are silent: the cache is
 * only a shortcut.
 */

static void
CacheWrite(
    const CacheKey *k,
    const TpSymtab *t)
{
    CacheBody h;
    const void *parts[3];
    size_t lens[3], i, end;

    h.nSyms = t->nSyms;
    h.namesLen = 0;
    for (i = 0; i < t->nSyms; i++) {
	end = t->syms[i].name + strlen(t->names + t->syms[i].name) + 1;
	h.namesLen = end > h.namesLen ? end : h.namesLen;
    }
    if (h.nSyms == 0 || h.nSyms > TP_SYMCACHE_MAXSYMS) {
	return;
    }
    parts[0] = &h;
    lens[0] = sizeof(h);
    parts[1] = t->syms;
    lens[1] = t->nSyms * sizeof(TpSym);
    parts[2] = t->names;
    lens[2] = (size_t) h.namesLen;
    if (TpCacheWrite(k->path, &k->k, sizeof(k->k), parts, lens, 3)) {
	cacheStats.writes++;
    }
}

/*
 * Whether an image's sections of one type hold a function (as AddElfSyms
 * would add it): an image whose .symtab holds none is read as a stripped
 * one. And the number of symbol entries in them (of every kind: a bound
 * on the work of reading them, not a count of functions).
 */

static int
HasFunctions(
    const Elf *e,
    uint32_t type)
{
    Elf64_Shdr sh;
    Elf64_Sym sym;
    const char *name;
    size_t i, j;

    for (i = 1; GetShdr(e, i, &sh); i++) {
	for (j = 0; sh.sh_type == type && NextSym(e, &sh, &j, &sym, &name); ) {
	    if (IsFunc(&sym)) {
		return 1;
	    }
	}
    }
    return 0;
}

static size_t
SymbolEntries(
    const Elf *e,
    uint32_t type)
{
    Elf64_Shdr sh;
    size_t i, n = 0;

    for (i = 1; GetShdr(e, i, &sh); i++) {
	if (sh.sh_type == type && sh.sh_entsize == sizeof(Elf64_Sym)) {
	    n += sh.sh_size / sizeof(Elf64_Sym);
	}
    }
    return n;
}

/*
 * Reads the function symbols of a module's file: .dynsym and .symtab;
 * without .symtab, those of its debug file or else of the archive
 * registered for its basename. The table, or NULL if no name was found.
 * Where the .symtab comes from is decided first, so that the cache's key
 * names every file the table is made from.
 */

static TpSymtab *
LoadSymtab(
    const char *path,
    const char *shortName)
{
    Builder b;
    Mapping m, dm;
    Elf e, de;
    char *archive = NULL, debugPath[PATH_MAX];
    TpSymtab *t, *cached = NULL;
    size_t transient, entries;
    CacheKey key;
    int haveKey = 0, source = SRC_NONE;

    memset(&b, 0, sizeof(b));
    if (MapFile(path, &m) != 0) {
	return NULL;
    }
    if (ElfInit(&e, m.data, m.size) == 0) {
	entries = SymbolEntries(&e, SHT_DYNSYM);
	if (HasFunctions(&e, SHT_SYMTAB)) {
	    source = SRC_SELF;
	    entries += SymbolEntries(&e, SHT_SYMTAB);
	} else if (OpenDebugFile(&e, path, &dm, &de, debugPath)) {
	    source = SRC_DEBUG;
	    entries += SymbolEntries(&de, SHT_SYMTAB);
	} else {
	    pthread_mutex_lock(&archiveReg.lock);
	    if (archiveReg.soName != NULL
		    && strcmp(archiveReg.soName, shortName) == 0) {
		archive = strdup(archiveReg.path);
	    }
	    pthread_mutex_unlock(&archiveReg.lock);
	    if (archive != NULL) {
		source = SRC_ARCHIVE;
		entries = symCacheMinEntries;
	    }
	}
	if (entries >= symCacheMinEntries) {
	    haveKey = CacheKeyMake(&e, path, shortName, source,
		    source == SRC_DEBUG ? debugPath : archive, &key);
	    cached = haveKey ? CacheRead(&key) : NULL;
	}
	if (cached == NULL) {
	    AddElfSyms(&b, &e, SHT_DYNSYM);
	    AddPltSyms(&b, &e);
	    if (source == SRC_SELF) {
		AddElfSyms(&b, &e, SHT_SYMTAB);
	    } else if (source == SRC_DEBUG) {
		AddElfSyms(&b, &de, SHT_SYMTAB);
	    } else if (source == SRC_ARCHIVE) {
		AddArchiveSyms(&b, &e, path, archive);
	    }
	}
	if (source == SRC_DEBUG) {
	    Unmap(&dm);
	}
    }
    Unmap(&m);
    if (cached != NULL) {
	free(archive);
	return cached;
    }
    transient = b.capSyms * sizeof(TpSym) + b.capNames;
    t = BuilderFinish(&b);
    if (haveKey && t != NULL) {
	CacheWrite(&key, t);
    }
    if (archive != NULL || transient > TP_TRIM_BYTES) {
	/*
	 * The builder's arrays and the archive's pieces are freed, below
	 * the table just allocated: glibc keeps such memory resident
	 * until trimmed (0.6 MB after libtcl's first lookup). Trimmed once
	 * the report has loaded every table it needs (TpSymbolTrim): a
	 * trim walks the whole heap, and a big program's may be large.
	 */

	__atomic_store_n(&trimWanted, 1, __ATOMIC_RELAXED);
    }
    free(archive);
    return t;
}

/*
 *----------------------------------------------------------------------
 *
 * TpSymbolTrim --
 *
 *	Gives the memory freed after building big symbol tables back to
 *	the system, once, when tables were loaded since the last call.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	malloc_trim (glibc).
 *
 *----------------------------------------------------------------------
 */

void
TpSymbolTrim(void)
{
    if (__atomic_exchange_n(&trimWanted, 0, __ATOMIC_RELAXED)) {
#ifdef __GLIBC__
	malloc_trim(0);
#endif
    }
}

/*
 *----------------------------------------------------------------------
 *
 * TpSymbolSetArchive --
 *
 *	Registers a static archive built from the same objects as the
 *	stripped library whose basename is soName; NULL clears. Tables
 *	loaded afterwards use it.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Replaces the process-wide registration.
 *
 *----------------------------------------------------------------------
 */

void
TpSymbolSetArchive(
    const char *soName,
    const char *archivePath)
{
    pthread_mutex_lock(&archiveReg.lock);
    free(archiveReg.soName);
    free(archiveReg.path);
    archiveReg.soName = archiveReg.path = NULL;
    if (soName != NULL && archivePath != NULL) {
	archiveReg.soName = strdup(soName);
	archiveReg.path = strdup(archivePath);
	if (archiveReg.soName == NULL || archiveReg.path == NULL) {
	    free(archiveReg.soName);
	    free(archiveReg.path);
	    archiveReg.soName = archiveReg.path = NULL;
	}
    }
    pthread_mutex_unlock(&archiveReg.lock);
}

/*
 *----------------------------------------------------------------------
 *
 * TpSymbolSetTclRange --
 *
 *	Registers where libtcl's code lies when it is linked into another
 *	object: the modules scanned afterwards that contain it treat frames
 *	in [lo, hi) as Tcl's internals, the rest as the application's.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Replaces the process-wide registration.
 *
 *----------------------------------------------------------------------
 */

void
TpSymbolSetTclRange(
    uintptr_t lo,
    uintptr_t hi)
{
    pthread_mutex_lock(&archiveReg.lock);
    archiveReg.tclLo = lo;
    archiveReg.tclHi = hi;
    pthread_mutex_unlock(&archiveReg.lock);
}

/*
 *----------------------------------------------------------------------
 *
 * TpSymbolLookup --
 *
 *	Names the function of a module that contains offset, loading the
 *	module's symbols on first use. The innermost symbol containing the
 *	offset wins; a symbol that does not contain it is never used.
 *
 * Results:
 *	1 with *name (owned by the table), *start and *size set, or 0.
 *
 * Side effects:
 *	May load the module's table (reads files, a few ms for libtcl with
 *	its archive).
 *
 *----------------------------------------------------------------------
 */

int
TpSymbolLookup(
    TpModule *mod,
    uintptr_t offset,
    const char **name,
    uintptr_t *start,
    uintptr_t *size)
{
    TpSymtab *t;
    const TpSym *s;
    size_t a = 0, b, mid, k;

    if (!mod->symsTried) {
	mod->symsTried = 1;
	mod->syms = LoadSymtab(mod->path, mod->shortName);
    }
    if ((t = mod->syms) == NULL) {
	return 0;
    }
    for (b = t->nSyms; a < b; ) {
	mid = (a + b) / 2;
	if (t->syms[mid].start <= offset) {
	    a = mid + 1;
	} else {
	    b = mid;
	}
    }
    for (k = 0; k < TP_NEST_SCAN && k < a; k++) {
	s = &t->syms[a - 1 - k];
	if (offset - s->start < s->size) {
	    *name = t->names + s->name;
	    *start = s->start;
	    *size = s->size;
	    return 1;
	}
    }
    return 0;
}

/*
 * Makes room for one more module: 0, or -1 if memory ran out. The block
 * holds capMods modules then capMods ints, the order TpModulesFind
 * searches (rebuilt at the end of every scan).
 */

static int
ModulesReserve(
    TpModules *mt)
{
    int cap = mt->capMods ? 2 * mt->capMods : 32;
    TpModule *mods;

    if (mt->nMods < mt->capMods) {
	return 0;
    }
    mods = malloc((size_t) cap * (sizeof(TpModule) + sizeof(int)));
    if (mods == NULL) {
	return -1;
    }
    if (mt->nMods > 0) {
	memcpy(mods, mt->mods, (size_t) mt->nMods * sizeof(TpModule));
    }
    free(mt->mods);
    mt->mods = mods;
    mt->capMods = cap;
    return 0;
}

static int *
ModulesOrder(
    const TpModules *mt)
{
    return (int *) (mt->mods + mt->capMods);
}

/*
 * Rebuilds the order TpModulesFind searches: insertion sort by lo, there
 * are tens of modules.
 */

static void
ModulesSort(
    TpModules *mt)
{
    int *order = ModulesOrder(mt);
    int i, j;

    for (i = 0; i < mt->nMods; i++) {
	for (j = i; j > 0 && mt->mods[order[j - 1]].lo > mt->mods[i].lo; j--) {
	    order[j] = order[j - 1];
	}
	order[j] = i;
    }
}

typedef struct ScanState {	/* One TpModulesScan. */
    TpModules *mt;
    int oldN;			/* Modules known before it. */
    unsigned char *seen;	/* Which of those the loader still lists. */
    int first;			/* The next object is the first listed: the
				 * program. */
    int failed;			/* Memory ran out. */
    uintptr_t vdso;		/* The vdso's ELF header (AT_SYSINFO_EHDR). */
} ScanState;

/*
 * dl_iterate_phdr callback: matches one loaded object with a known module
 * by (path, bias), or appends it. Objects without executable segments are
 * left out; the vdso is kept, without symbols. Returns 1 (stop) only when
 * memory ran out.
 */

static int
ScanObject(
    struct dl_phdr_info *info,
    size_t infoSize,
    void *cd)
{
    ScanState *ss = cd;
    TpModules *mt = ss->mt;
    TpModule *m;
    const char *name = info->dlpi_name ? info->dlpi_name : "", *base;
    uintptr_t lo = UINTPTR_MAX, hi = 0, a, bias = info->dlpi_addr;
    int i, isMain = ss->first, isVdso;

    (void) infoSize;
    ss->first = 0;
    for (i = 0; i < info->dlpi_phnum; i++) {
	const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

	if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
	    a = bias + ph->p_vaddr;
	    lo = a < lo ? a : lo;
	    hi = a + ph->p_memsz > hi ? a + ph->p_memsz : hi;
	}
    }
    isVdso = strncmp(name, "linux-vdso", 10) == 0
	    || strncmp(name, "linux-gate", 10) == 0
	    || (ss->vdso && (uintptr_t) info->dlpi_phdr - ss->vdso < 65536);
    if (lo >= hi || (name[0] == '\0' && !isMain && !isVdso)) {
	return 0;
    }
    if (isVdso && name[0] == '\0') {
	name = "linux-vdso.so.1";
    }
    for (i = 0; i < mt->nMods; i++) {
	m = &mt->mods[i];
	if (m->bias == bias && (isMain ? i == 0 : strcmp(m->path, name) == 0)) {
	    m->lo = lo;
	    m->hi = hi;
	    if (i < ss->oldN) {
		ss->seen[i] = 1;
	    }
	    return 0;
	}
    }
    if (ModulesReserve(mt) != 0) {
	ss->failed = 1;
	return 1;
    }
    m = &mt->mods[mt->nMods];
    memset(m, 0, sizeof(TpModule));
    m->path = isMain ? realpath("/proc/self/exe", NULL) : NULL;
    if (m->path == NULL) {
	m->path = strdup(isMain ? "/proc/self/exe" : name);
    }
    base = m->path ? strrchr(m->path, '/') : NULL;
    m->shortName = strdup(base ? base + 1 : m->path ? m->path : "");
    if (m->path == NULL || m->shortName == NULL) {
	free(m->path);
	free(m->shortName);
	ss->failed = 1;
	return 1;
    }
    m->bias = bias;
    m->lo = lo;
    m->hi = hi;
    m->isTcl = strncmp(m->shortName, "libtcl", 6) == 0
	    && m->shortName[6] >= '0' && m->shortName[6] <= '9';
    pthread_mutex_lock(&archiveReg.lock);
    if (!m->isTcl && archiveReg.tclLo >= lo && archiveReg.tclLo < hi) {
	m->tclLo = archiveReg.tclLo - bias;
	m->tclHi = archiveReg.tclHi - bias;
    }
    pthread_mutex_unlock(&archiveReg.lock);
    m->symsTried = isVdso;	/* No file to read. */
    mt->nMods++;
    return 0;
}

/*
 *----------------------------------------------------------------------
 *
 * TpModulesScan --
 *
 *	(Re)reads the list of loaded objects. Known modules keep their
 *	indexes; new ones are appended; those no longer loaded get an empty
 *	range. The caller holds the lock guarding mt.
 *
 * Results:
 *	TCL_OK, or TCL_ERROR if memory ran out (the table stays usable).
 *
 * Side effects:
 *	SIGPROF is blocked on this thread while the loader's list is read:
 *	the handler's unwinder may walk the same list.
 *
 *----------------------------------------------------------------------
 */

int
TpModulesScan(
    TpModules *mt)
{
    ScanState ss;
    sigset_t block, old;
    int i;

    ss.mt = mt;
    ss.oldN = mt->nMods;
    ss.first = 1;
    ss.failed = 0;
    ss.vdso = (uintptr_t) getauxval(AT_SYSINFO_EHDR);
    if ((ss.seen = calloc(1, (size_t) mt->nMods + 1)) == NULL) {
	return TCL_ERROR;
    }
    sigemptyset(&block);
    sigaddset(&block, SIGPROF);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    dl_iterate_phdr(ScanObject, &ss);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    for (i = 0; i < ss.oldN; i++) {
	if (!ss.seen[i]) {
	    mt->mods[i].lo = mt->mods[i].hi = 0;
	}
    }
    free(ss.seen);

    ModulesSort(mt);
    return ss.failed ? TCL_ERROR : TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * TpModulesAddPath --
 *
 *	A module known only by its path (a saved profile's library that
 *	this process never loaded): the path and name for reports, no
 *	address range, no symbols. A module already known by that path is
 *	returned instead.
 *
 * Results:
 *	Its index, or -1 if memory ran out.
 *
 * Side effects:
 *	May append to mt. The caller holds the lock guarding mt.
 *
 *----------------------------------------------------------------------
 */

int
TpModulesAddPath(
    TpModules *mt,
    const char *path)
{
    TpModule *m;
    const char *base;
    int i;

    for (i = 0; i < mt->nMods; i++) {
	if (mt->mods[i].path != NULL && strcmp(mt->mods[i].path, path) == 0) {
	    return i;
	}
    }
    if (ModulesReserve(mt) != 0) {
	return -1;
    }
    m = &mt->mods[mt->nMods];
    memset(m, 0, sizeof(TpModule));
    base = strrchr(path, '/');
    m->path = strdup(path);
    m->shortName = strdup(base ? base + 1 : path);
    if (m->path == NULL || m->shortName == NULL) {
	free(m->path);
	free(m->shortName);
	return -1;
    }
    m->isTcl = strncmp(m->shortName, "libtcl", 6) == 0
	    && m->shortName[6] >= '0' && m->shortName[6] <= '9';
    m->symsTried = 1;		/* Not mapped here: nothing to read. */
    mt->nMods++;
    ModulesSort(mt);
    return mt->nMods - 1;
}

/*
 *----------------------------------------------------------------------
 *
 * TpModulesFind, TpModulesFree --
 *
 *	Find the module whose executable range contains pc; free the
 *	modules and their symbol tables.
 *
 * Results:
 *	TpModulesFind: the index with *offset = pc - bias, or -1.
 *
 * Side effects:
 *	TpModulesFree leaves mt empty and reusable.
 *
 *----------------------------------------------------------------------
 */

int
TpModulesFind(
    TpModules *mt,
    uintptr_t pc,
    uintptr_t *offset)
{
    const int *order;
    int a = 0, b = mt->nMods, mid, i;

    if (b == 0) {
	return -1;
    }
    order = ModulesOrder(mt);
    while (a < b) {
	mid = (a + b) / 2;
	if (mt->mods[order[mid]].lo <= pc) {
	    a = mid + 1;
	} else {
	    b = mid;
	}
    }
    if (a == 0 || pc >= mt->mods[i = order[a - 1]].hi) {
	return -1;
    }
    *offset = pc - mt->mods[i].bias;
    return i;
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
