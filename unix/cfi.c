/*
 * cfi.c --
 *
 *	tclprof's own unwinder for the signal handler, driven by tables
 *	compiled ahead of time from each module's DWARF call frame
 *	information (.eh_frame).
 *
 *	Why not libunwind in the handler: libunwind's fast trace
 *	(unw_backtrace) keys its cache by instruction address, and the
 *	interrupted address of a sample is nearly always one it has not seen;
 *	each miss makes it parse the FDE through dl_iterate_phdr, 3-5 us per
 *	sample on our VMs, and its cursor (needed for the stack pointer and
 *	root register of each TclNRRunCallbacks frame) costs about 0.45 us per
 *	frame. Both were most of the handler's time, and the handler's time
 *	was most of frames mode's overhead beyond the signal itself.
 *
 * The data model.
 *
 *	A module is one loaded ELF object (dl_iterate_phdr): its load bias,
 *	the address range of its executable segments, and, once compiled,
 *	its rows and rules. A row covers the addresses from its start to the
 *	next row's start and names the rule that says how to get from a
 *	frame at those addresses to its caller: the CFA (the caller's stack
 *	pointer) is rsp or rbp plus an offset; the return address and the
 *	callee-saved registers rbx, rbp, r12-r15 the function saved are at
 *	fixed offsets from the CFA. That is what the CFA programs of x86-64
 *	code say in practice; a rule for a program that says anything else
 *	(an expression, a register held in another register, a signal frame)
 *	is BAD, and a sample that needs it is unwound by libunwind instead.
 *
 *	A module has tens of thousands of rows but only a few hundred
 *	distinct rules (libtcl: 33 000 rows, 269 rules): the same prologues
 *	and frame sizes recur in every function. So a row is 6 bytes, its
 *	start (uint32_t, from the load bias) in one array and its rule's
 *	index (uint16_t) in a parallel one, and each distinct rule is stored
 *	once per module. A module with more than 65536 distinct rules is
 *	left to libunwind. The rows are sorted by start; a lookup reads the
 *	block index (below), a few starts after it, one index and one rule.
 *
 *	Modules are found and compiled outside the handler: at profiler
 *	start on the profiled thread (every module, so that the first samples
 *	are fast), and afterwards by the sampler thread's drain when the
 *	handler met an address in no module (a library loaded since) or a
 *	module without rows. Compiling builds the rows in a scratch mapping
 *	that is unmapped once the module's tables are copied out at their
 *	final size. The handler only reads: a module becomes visible to it by
 *	an atomic increment of the module count after the entry is written,
 *	and its tables by an atomic store of its state after they are
 *	written. Nothing is freed while the process runs: a module that was
 *	unloaded is marked dead and skipped; its tables stay (libtcl's are
 *	about 220 KB, the largest of a plain tclsh).
 *
 *	The handler checks every address it reads against the sampled
 *	thread's stack, [interrupted sp, stack top): wrong rows can give a
 *	wrong trace, never a crash.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

/*
 * DWARF register numbers on x86-64 (the psABI's table; libunwind's
 * UNW_X86_64_* numbers are the same).
 */

#define DW_RBX		3
#define DW_RBP		6
#define DW_RSP		7
#define DW_R12		12
#define DW_R15		15
#define DW_RA		16

/*
 * The callee-saved registers tracked across frames, in this order.
 */

#define TP_CFI_NSAVED	6
static const int savedDwarf[TP_CFI_NSAVED] = { DW_RBX, DW_RBP, 12, 13, 14, 15 };

/*
 * Rule kinds (TpCfiRule.kind).
 */

enum {
    ROW_NONE = 0,		/* No unwind information here. */
    ROW_RSP,			/* CFA = rsp + cfaOff. */
    ROW_RBP,			/* CFA = rbp + cfaOff. */
    ROW_END,			/* Return address undefined: outermost frame. */
    ROW_BAD,			/* A rule this unwinder does not follow. */
    ROW_PLT10,			/* A lazy-binding PLT entry: CFA = rsp + 8,
				 * plus 8 once (rip & 15) >= 10 ... */
    ROW_PLT11			/* ... or >= 11 (see PltExpression). */
};

/*
 * A rule: where a frame's CFA, return address and saved registers are.
 * Rules are compared with memcmp; fill them from a zeroed struct.
 */

typedef struct TpCfiRule {
    int32_t cfaOff;		/* Bytes added to rsp or rbp. */
    uint8_t kind;		/* ROW_* */
    int8_t raSlot;		/* Return address at CFA + 8 * raSlot. */
    int8_t saved[TP_CFI_NSAVED];/* Register i at CFA + 8 * saved[i], or 0 if
				 * this function has not saved it. */
} TpCfiRule;

#define TP_CFI_MAXRULES	65536	/* Rule indices are uint16_t. */

/*
 * Module states (TpCfiModule.state, written with release, read with
 * acquire by the handler).
 */

enum {
    MOD_NEW = 0,		/* Registered; rows not compiled yet. */
    MOD_READY,			/* Rows, rules and block index valid. */
    MOD_NOCFI,			/* No .eh_frame, or it could not be read. */
    MOD_DEAD			/* Unloaded since it was registered. */
};

typedef struct TpCfiModule {
    uintptr_t bias;		/* dlpi_addr. */
    uintptr_t lo, hi;		/* [lo, hi): its executable segments. */
    uintptr_t ehHdr;		/* Address of .eh_frame_hdr, or 0. */
    uintptr_t segLo, segEnd;	/* The segment holding .eh_frame_hdr and
				 * .eh_frame: every read stays inside. */
    const uint32_t *starts;	/* Row k covers [starts[k], starts[k + 1]),
				 * offsets from bias; sorted, and the last
				 * row's rule is ROW_NONE. */
    const uint16_t *ruleOf;	/* ruleOf[k]: row k's rule, in rules. */
    const TpCfiRule *rules;	/* The distinct rules, each once. */
    uint32_t nRows;
    uint32_t nRules;
    const uint32_t *block;	/* block[b]: the row covering the first
				 * address of the b-th TP_CFI_BLOCK bytes
				 * from lo, so that a lookup touches one or
				 * two cache lines of starts instead of a
				 * binary search's dozen or more (the
				 * handler runs with cold caches). */
    uint32_t nBlocks;
    int state;			/* MOD_*; see above. */
    int wanted;			/* Set by the handler: a sample needed the
				 * rows of this MOD_NEW module. */
    int seen;			/* Scratch for the rescan. */
} TpCfiModule;

#define TP_CFI_MAXMOD	1024
#define TP_CFI_BLOCK_SHIFT 8	/* 256-byte blocks: ~6 rows each in libtcl. */

/*
 * The process's modules. The entries and their count are written only by
 * the thread holding compileLock (Prepare: the package's warm-up thread,
 * profiler start, calibration, the drain); the handler reads nModules
 * (acquire), then entries below it, and writes only the two request
 * flags. A module is compiled without `lock`, so that calibration can
 * read libtcl's rows while the warm-up thread compiles libc's: a
 * module's tables are written while it is MOD_NEW, then its state is
 * published (release).
 */

static struct {
    pthread_mutex_t lock;	/* Readers of the tables (calibration) and
				 * every write to the entries but the
				 * tables of a module being compiled and
				 * the flags. Taken after compileLock. */
    pthread_cond_t progress;	/* Broadcast under lock when a module is
				 * compiled or the compiling ends. */
    int compiling;		/* Under lock: a TpCfiPrepare is compiling. */
    int nModules;		/* Published with release. */
    TpCfiModule modules[TP_CFI_MAXMOD];
    int rescan;			/* Set by the handler: an address in no
				 * module. */
    int build;			/* Set by the handler: some module wanted. */
    unsigned long long subs;	/* dlpi_subs at the last scan. */
} cfi = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, {{0}},
	0, 0, 0 };

static pthread_mutex_t compileLock = PTHREAD_MUTEX_INITIALIZER;
				/* Held by TpCfiPrepare: one thread scans
				 * and compiles at a time. */

/*
 * Compiling the CFA programs.
 */

typedef struct RegState {
    int cfaReg;			/* DWARF register, -1 if by expression,
				 * CFA_PLT10/11 for the PLT's expression. */
    int64_t cfaOff;
    int raRule;			/* 0 undefined, 1 offset, 2 unsupported. */
    int64_t raOff;
    int rule[TP_CFI_NSAVED];	/* 0 same value, 1 offset, 2 unsupported. */
    int64_t off[TP_CFI_NSAVED];
} RegState;

typedef struct Cie {
    uint64_t codeAlign;
    int64_t dataAlign;
    int raReg;
    int fdeEnc;			/* DW_EH_PE_* of the FDEs' addresses. */
    int hasAug;			/* 'z': FDEs have augmentation data. */
    int signal;			/* 'S': a signal frame. */
    const uint8_t *insns, *end;	/* Initial instructions. */
} Cie;

/*
 * The rows of the module being compiled, and its rules so far. The rows
 * live in an anonymous mapping that grows by mremap (no copy, and pages
 * never written are never resident) and is unmapped when Compile has
 * copied them out at their final size; the rules are few and found again
 * through a hash table.
 */

typedef struct BufRow {
    uint32_t start;		/* Offset from the module's bias. */
    uint32_t rule;		/* Index in RowBuf.rules. */
} BufRow;

typedef struct RowBuf {
    BufRow *rows;		/* The mapping, or NULL. */
    size_t n, size;		/* Rows used, rows mapped. */
    TpCfiRule *rules;		/* malloc'd; nRules used of rulesSize. */
    uint32_t nRules, rulesSize;
    uint32_t *hash;		/* Open addressing: rule index + 1, or 0 if
				 * empty; hashMask + 1 slots, at least twice
				 * nRules. */
    uint32_t hashMask;
    int failed;			/* Out of memory, an address beyond 4 GB
				 * from the bias, or too many rules. */
} RowBuf;

typedef struct Reader {
    const uint8_t *p, *end;
    int bad;			/* Read past end, or bad encoding. */
} Reader;

#define TP_CFI_STATES	16	/* DW_CFA_remember_state depth. */
#define CFA_PLT10	-10
#define CFA_PLT11	-11

/*
 * The one CFA expression worth following: the PLT's. Its entries push
 * once before jumping, so the CFA is rsp + 8, or rsp + 16 from the push
 * (offset 10 or 11 of each 16-byte entry, depending on the linker's
 * layout) on. GNU ld writes it as: DW_OP_breg7 (rsp) 8; DW_OP_breg16
 * (rip) 0; DW_OP_lit15; DW_OP_and; DW_OP_lit11 (or lit10); DW_OP_ge;
 * DW_OP_lit3; DW_OP_shl; DW_OP_plus.
 */

static const uint8_t pltExpr[] = {
    0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x00, 0x2a, 0x33, 0x24, 0x22
};
#define PLT_LIT_AT	6

static void	AddRow(RowBuf *rb, uintptr_t bias, uintptr_t addr,
		    const RegState *rs, int signal);
static int	Compile(TpCfiModule *m);
static int	StoreTables(TpCfiModule *m, const RowBuf *rb);
static uint32_t	InternRule(RowBuf *rb, const TpCfiRule *rule);
static void	MakeRule(const RegState *rs, int signal, TpCfiRule *rule);
static int	ParseCie(const uint8_t *cie, const uint8_t *limit, Cie *c);
static int	RunProgram(RowBuf *rb, uintptr_t bias, const Cie *c,
		    const uint8_t *p, const uint8_t *end, uintptr_t loc,
		    uintptr_t locEnd, RegState *rs, const RegState *init);
static int	CompileCallback(struct dl_phdr_info *info, size_t size,
		    void *data);
static int	ScanCallback(struct dl_phdr_info *info, size_t size,
		    void *data);
static void	ScanLocked(void);
static void	Prepare(int all, uintptr_t only);
static int	SavedIndex(uint64_t reg);

/*
 *----------------------------------------------------------------------
 *
 * Reader helpers: U8, Leb, Uleb, Sleb, Fixed, Encoded --
 *
 *	Bounded readers of .eh_frame data (outside the handler only). Any
 *	read past the end sets r->bad and returns 0.
 *
 *----------------------------------------------------------------------
 */

static uint64_t
U8(
    Reader *r)
{
    if (r->p >= r->end) {
	r->bad = 1;
	return 0;
    }
    return *r->p++;
}

static uint64_t
Leb(
    Reader *r,
    int isSigned)
{
    uint64_t v = 0, b;
    int shift = 0;

    do {
	b = U8(r);
	if (shift < 64) {
	    v |= (b & 0x7f) << shift;
	}
	shift += 7;
    } while ((b & 0x80) && !r->bad);
    if (isSigned && shift < 64 && (b & 0x40)) {
	v |= ~(uint64_t) 0 << shift;
    }
    return v;
}

static uint64_t
Uleb(
    Reader *r)
{
    return Leb(r, 0);
}

static int64_t
Sleb(
    Reader *r)
{
    return (int64_t) Leb(r, 1);
}

static uint64_t
Fixed(
    Reader *r,
    int size)
{
    uint64_t v = 0;

    if (r->end - r->p < size) {
	r->bad = 1;
	return 0;
    }
    memcpy(&v, r->p, (size_t) size);	/* Little-endian only. */
    r->p += size;
    return v;
}

/*
 * Pointer encodings (LSB's DW_EH_PE_*).
 */

#define PE_OMIT		0xff
#define PE_FORMAT	0x0f
#define PE_APPL		0x70
#define PE_INDIRECT	0x80
#define PE_PCREL	0x10
#define PE_DATAREL	0x30

static uint64_t
Encoded(
    Reader *r,
    int enc,
    uintptr_t dataBase)
{
    uintptr_t here = (uintptr_t) r->p;
    uint64_t v;

    if (enc == PE_OMIT) {
	return 0;
    }
    switch (enc & PE_FORMAT) {
    case 0x00: v = Fixed(r, 8); break;				/* absptr */
    case 0x01: v = Uleb(r); break;				/* uleb128 */
    case 0x02: v = Fixed(r, 2); break;				/* udata2 */
    case 0x03: v = Fixed(r, 4); break;				/* udata4 */
    case 0x04: v = Fixed(r, 8); break;				/* udata8 */
    case 0x09: v = (uint64_t) Sleb(r); break;			/* sleb128 */
    case 0x0a: v = (uint64_t) (int64_t) (int16_t) Fixed(r, 2); break;
    case 0x0b: v = (uint64_t) (int64_t) (int32_t) Fixed(r, 4); break;
    case 0x0c: v = Fixed(r, 8); break;				/* sdata8 */
    default:
	r->bad = 1;
	return 0;
    }
    switch (enc & PE_APPL) {
    case 0:
	break;
    case PE_PCREL:
	v += here;
	break;
    case PE_DATAREL:
	v += dataBase;
	break;
    default:
	r->bad = 1;	/* textrel, funcrel, aligned: not used on Linux. */
	return 0;
    }
    if (enc & PE_INDIRECT) {
	r->bad = 1;	/* Only personality routines use it; skipped. */
	return 0;
    }
    return v;
}

/*
 *----------------------------------------------------------------------
 *
 * SavedIndex --
 *
 *	The index of a DWARF register among the tracked callee-saved ones.
 *
 * Results:
 *	0..TP_CFI_NSAVED-1, or -1.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static int
SavedIndex(
    uint64_t reg)
{
    int i;

    for (i = 0; i < TP_CFI_NSAVED; i++) {
	if ((uint64_t) savedDwarf[i] == reg) {
	    return i;
	}
    }
    return -1;
}

/*
 *----------------------------------------------------------------------
 *
 * ParseCie --
 *
 *	Reads the CIE at `cie` (its length word), bounded by limit.
 *
 * Results:
 *	0, or -1 if the CIE is malformed or uses what we do not follow.
 *
 * Side effects:
 *	Fills *c.
 *
 *----------------------------------------------------------------------
 */

static int
ParseCie(
    const uint8_t *cie,
    const uint8_t *limit,
    Cie *c)
{
    Reader r = { cie, limit, 0 };
    uint64_t len = Fixed(&r, 4), id;
    const uint8_t *end;
    const char *aug;
    int version;

    if (len == 0xffffffffu) {
	len = Fixed(&r, 8);
	end = r.p + len;
	id = Fixed(&r, 8);
    } else {
	end = r.p + len;
	id = Fixed(&r, 4);
    }
    if (r.bad || end > limit || id != 0) {
	return -1;
    }
    r.end = end;
    memset(c, 0, sizeof(*c));
    c->fdeEnc = 0;
    version = (int) U8(&r);
    if (version != 1 && version != 3) {
	return -1;
    }
    aug = (const char *) r.p;
    while (U8(&r) != 0 && !r.bad) {
	/* Skip the augmentation string. */
    }
    if (r.bad || (aug[0] != '\0' && aug[0] != 'z')) {
	return -1;	/* "eh" and other ancient forms. */
    }
    c->codeAlign = Uleb(&r);
    c->dataAlign = Sleb(&r);
    c->raReg = version == 1 ? (int) U8(&r) : (int) Uleb(&r);
    if (aug[0] == 'z') {
	uint64_t augLen = Uleb(&r);
	const uint8_t *augEnd = r.p + augLen;
	const char *a;

	c->hasAug = 1;
	if (augEnd > end) {
	    return -1;
	}
	for (a = aug + 1; *a != '\0' && !r.bad; a++) {
	    switch (*a) {
	    case 'R':
		c->fdeEnc = (int) U8(&r);
		break;
	    case 'L':
		U8(&r);
		break;
	    case 'P': {
		int enc = (int) U8(&r);

		/* The pointer itself: its size is all we need. */
		Encoded(&r, enc & ~PE_INDIRECT & 0x0f, 0);
		break;
	    }
	    case 'S':
		c->signal = 1;
		break;
	    default:
		/* Unknown letters: augLen lets us skip their data. */
		goto augDone;
	    }
	}
      augDone:
	r.p = augEnd;
    }
    if (r.bad || c->raReg != DW_RA || c->codeAlign == 0) {
	return -1;
    }
    c->insns = r.p;
    c->end = end;
    return 0;
}

/*
 *----------------------------------------------------------------------
 *
 * MakeRule --
 *
 *	The rule for register state rs (NULL: no unwind information).
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Fills *rule, padding and unused fields zeroed.
 *
 *----------------------------------------------------------------------
 */

/*
 * SlotOk: is off a multiple of 8 whose eighth fits an int8_t? Slot: that
 * eighth. (Written as a mask and a shift: gcc 12 -O2 divided by 8 with
 * idiv here, a fifth of the compile's time.)
 */

static inline int
SlotOk(
    int64_t off)
{
    return (off & 7) == 0 && off >= -128 * 8 && off <= 127 * 8;
}

static inline int8_t
Slot(
    int64_t off)
{
    return (int8_t) (off < 0 ? -(int64_t) ((uint64_t) -off >> 3)
	    : (int64_t) ((uint64_t) off >> 3));
}

static void
MakeRule(
    const RegState *rs,
    int signal,
    TpCfiRule *rule)
{
    int i;

    memset(rule, 0, sizeof(*rule));
    if (rs == NULL) {
	rule->kind = ROW_NONE;
    } else if (signal || rs->raRule == 2) {
	rule->kind = ROW_BAD;
    } else if (rs->raRule == 0) {
	rule->kind = ROW_END;
    } else if (rs->cfaReg == CFA_PLT10 || rs->cfaReg == CFA_PLT11) {
	rule->kind = rs->cfaReg == CFA_PLT10 ? ROW_PLT10 : ROW_PLT11;
	rule->raSlot = -1;
	for (i = 0; i < TP_CFI_NSAVED; i++) {
	    if (rs->rule[i] != 0) {
		rule->kind = ROW_BAD;
	    }
	}
    } else if ((rs->cfaReg != DW_RSP && rs->cfaReg != DW_RBP)
	    || rs->cfaOff < INT32_MIN || rs->cfaOff > INT32_MAX
	    || !SlotOk(rs->raOff)) {
	rule->kind = ROW_BAD;
    } else {
	rule->kind = rs->cfaReg == DW_RSP ? ROW_RSP : ROW_RBP;
	rule->cfaOff = (int32_t) rs->cfaOff;
	rule->raSlot = Slot(rs->raOff);
	for (i = 0; i < TP_CFI_NSAVED; i++) {
	    if (rs->rule[i] == 2 || (rs->rule[i] == 1
		    && (rs->off[i] == 0 || !SlotOk(rs->off[i])))) {
		rule->kind = ROW_BAD;
		break;
	    }
	    rule->saved[i] = rs->rule[i] == 1 ? Slot(rs->off[i]) : 0;
	}
    }
}

/*
 *----------------------------------------------------------------------
 *
 * HashRule, InternRule --
 *
 *	InternRule: the index of rule among the module's rules, adding it if
 *	new. HashRule hashes a rule's bytes.
 *
 * Results:
 *	The index; 0 with rb->failed set if memory runs out or the module
 *	has more rules than a row's index can name.
 *
 * Side effects:
 *	May grow rb->rules and rebuild rb->hash.
 *
 *----------------------------------------------------------------------
 */

static uint32_t
HashRule(
    const TpCfiRule *rule)
{
    uint32_t w[sizeof(TpCfiRule) / 4];	/* An int32_t aligns it. */
    uint64_t h = 0;
    size_t i;

    memcpy(w, rule, sizeof(w));
    for (i = 0; i < sizeof(w) / 4; i++) {
	h = (h ^ w[i]) * 0x9e3779b97f4a7c15ull;
    }
    return (uint32_t) (h >> 32);
}

static uint32_t
InternRule(
    RowBuf *rb,
    const TpCfiRule *rule)
{
    uint32_t h, idx;

    /*
     * A row often has the rule of the row before it (and merges with it):
     * that needs no hashing.
     */

    if (rb->n > 0 && memcmp(&rb->rules[rb->rows[rb->n - 1].rule], rule,
	    sizeof(*rule)) == 0) {
	return rb->rows[rb->n - 1].rule;
    }
    if (rb->hash != NULL) {
	for (h = HashRule(rule) & rb->hashMask; rb->hash[h] != 0;
		h = (h + 1) & rb->hashMask) {
	    idx = rb->hash[h] - 1;
	    if (memcmp(&rb->rules[idx], rule, sizeof(*rule)) == 0) {
		return idx;
	    }
	}
    }
    if (rb->nRules == TP_CFI_MAXRULES) {
	rb->failed = 1;
	return 0;
    }
    if (rb->nRules == rb->rulesSize) {
	uint32_t size = rb->rulesSize ? 2 * rb->rulesSize : 64;
	TpCfiRule *rules = realloc(rb->rules, size * sizeof(TpCfiRule));

	if (rules == NULL) {
	    rb->failed = 1;
	    return 0;
	}
	rb->rules = rules;
	rb->rulesSize = size;
    }
    idx = rb->nRules++;
    rb->rules[idx] = *rule;

    /*
     * Keep the table at most half full: rebuilt at twice the size.
     */

    if (rb->hash == NULL || 2 * rb->nRules > rb->hashMask + 1) {
	uint32_t slots = rb->hash != NULL ? 2 * (rb->hashMask + 1) : 256;
	uint32_t *hash = calloc(slots, sizeof(uint32_t)), i;

	if (hash == NULL) {
	    rb->failed = 1;
	    return 0;
	}
	free(rb->hash);
	rb->hash = hash;
	rb->hashMask = slots - 1;
	for (i = 0; i < rb->nRules; i++) {
	    for (h = HashRule(&rb->rules[i]) & rb->hashMask; hash[h] != 0;
		    h = (h + 1) & rb->hashMask) {
		/* Probe on. */
	    }
	    hash[h] = i + 1;
	}
    } else {
	for (h = HashRule(rule) & rb->hashMask; rb->hash[h] != 0;
		h = (h + 1) & rb->hashMask) {
	    /* Probe on. */
	}
	rb->hash[h] = idx + 1;
    }
    return idx;
}

/*
 *----------------------------------------------------------------------
 *
 * AddRow --
 *
 *	Appends the row for the addresses from addr on, in state rs.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Grows rb; sets rb->failed if memory runs out.
 *
 *----------------------------------------------------------------------
 */

static void
AddRow(
    RowBuf *rb,
    uintptr_t bias,
    uintptr_t addr,
    const RegState *rs,
    int signal)
{
    TpCfiRule rule;
    uint32_t start, idx;

    if (addr < bias || addr - bias > UINT32_MAX) {
	rb->failed = 1;
    }
    if (rb->failed) {
	return;
    }
    start = (uint32_t) (addr - bias);
    MakeRule(rs, signal, &rule);
    idx = InternRule(rb, &rule);
    if (rb->failed) {
	return;
    }

    /*
     * Rows with the same start replace each other (advance_loc by 0, or
     * the end marker of one FDE where the next begins); neighbours with
     * the same rule (the same index: rules are distinct) merge.
     */

    if (rb->n > 0 && rb->rows[rb->n - 1].start == start) {
	rb->rows[rb->n - 1].rule = idx;
	if (rb->n > 1 && rb->rows[rb->n - 2].rule == idx) {
	    rb->n--;
	}
	return;
    }
    if (rb->n > 0 && rb->rows[rb->n - 1].rule == idx) {
	return;
    }
    if (rb->n == rb->size) {
	size_t size = rb->size ? 2 * rb->size : 8192;
	void *rows = rb->rows == NULL
		? mmap(NULL, size * sizeof(BufRow), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
		: mremap(rb->rows, rb->size * sizeof(BufRow),
		    size * sizeof(BufRow), MREMAP_MAYMOVE);

	if (rows == MAP_FAILED) {
	    rb->failed = 1;
	    return;
	}
	rb->rows = rows;
	rb->size = size;
    }
    rb->rows[rb->n].start = start;
    rb->rows[rb->n].rule = idx;
    rb->n++;
}

/*
 *----------------------------------------------------------------------
 *
 * RunProgram --
 *
 *	Runs the CFA instructions [p, end) from location loc. When rb is
 *	not NULL (an FDE's program; a CIE's initial instructions run with
 *	rb NULL), each location change emits the row for the addresses
 *	before it, and the end emits the last one.
 *
 * Results:
 *	0, or -1 on malformed input.
 *
 * Side effects:
 *	Updates *rs; adds rows.
 *
 *----------------------------------------------------------------------
 */

static int
RunProgram(
    RowBuf *rb,
    uintptr_t bias,
    const Cie *c,
    const uint8_t *p,
    const uint8_t *end,
    uintptr_t loc,
    uintptr_t locEnd,
    RegState *rs,
    const RegState *init)
{
    Reader r = { p, end, 0 };
    RegState stack[TP_CFI_STATES];
    int depth = 0;

    while (r.p < r.end && !r.bad) {
	int op = (int) U8(&r);
	int hi = op & 0xc0, low = op & 0x3f;
	uint64_t reg = 0, delta = 0;
	int64_t off = 0;
	int idx, adv = 0;

	if (hi == 0x40) {			/* advance_loc */
	    delta = (uint64_t) low;
	    adv = 1;
	} else if (hi == 0x80) {		/* offset */
	    reg = (uint64_t) low;
	    off = (int64_t) Uleb(&r) * c->dataAlign;
	    goto setOffset;
	} else if (hi == 0xc0) {		/* restore */
	    reg = (uint64_t) low;
	    goto restore;
	} else {
	    switch (op) {
	    case 0x00:				/* nop */
		break;
	    case 0x01:				/* set_loc */
		if (rb != NULL && loc < locEnd) {
		    AddRow(rb, bias, loc, rs, c->signal);
		}
		loc = (uintptr_t) Encoded(&r, c->fdeEnc, 0);
		break;
	    case 0x02: delta = Fixed(&r, 1); adv = 1; break;
	    case 0x03: delta = Fixed(&r, 2); adv = 1; break;
	    case 0x04: delta = Fixed(&r, 4); adv = 1; break;
	    case 0x05:				/* offset_extended */
		reg = Uleb(&r);
		off = (int64_t) Uleb(&r) * c->dataAlign;
		goto setOffset;
	    case 0x11:				/* offset_extended_sf */
		reg = Uleb(&r);
		off = Sleb(&r) * c->dataAlign;
		goto setOffset;
	    case 0x2f:				/* GNU_negative_offset_ext */
		reg = Uleb(&r);
		off = -(int64_t) Uleb(&r) * c->dataAlign;
		goto setOffset;
	    case 0x06:				/* restore_extended */
		reg = Uleb(&r);
		goto restore;
	    case 0x07:				/* undefined */
		reg = Uleb(&r);
		if (reg == DW_RA) {
		    rs->raRule = 0;
		} else if ((idx = SavedIndex(reg)) >= 0) {
		    rs->rule[idx] = 2;
		}
		break;
	    case 0x08:				/* same_value */
		reg = Uleb(&r);
		if ((idx = SavedIndex(reg)) >= 0) {
		    rs->rule[idx] = 0;
		} else if (reg == DW_RA) {
		    rs->raRule = 2;
		}
		break;
	    case 0x09:				/* register */
		reg = Uleb(&r);
		Uleb(&r);
		goto unsupported;
	    case 0x0a:				/* remember_state */
		if (depth == TP_CFI_STATES) {
		    return -1;
		}
		stack[depth++] = *rs;
		break;
	    case 0x0b:				/* restore_state */
		if (depth == 0) {
		    return -1;
		}
		/*
		 * The CFA rule is restored too, as GCC's epilogues expect
		 * (remember; def_cfa_offset 8; ret; restore) and as libgcc
		 * and libunwind do.
		 */

		*rs = stack[--depth];
		break;
	    case 0x0c:				/* def_cfa */
		rs->cfaReg = (int) Uleb(&r);
		rs->cfaOff = (int64_t) Uleb(&r);
		break;
	    case 0x12:				/* def_cfa_sf */
		rs->cfaReg = (int) Uleb(&r);
		rs->cfaOff = Sleb(&r) * c->dataAlign;
		break;
	    case 0x0d:				/* def_cfa_register */
		rs->cfaReg = (int) Uleb(&r);
		break;
	    case 0x0e:				/* def_cfa_offset */
		rs->cfaOff = (int64_t) Uleb(&r);
		break;
	    case 0x13:				/* def_cfa_offset_sf */
		rs->cfaOff = Sleb(&r) * c->dataAlign;
		break;
	    case 0x0f: {			/* def_cfa_expression */
		uint64_t len = Uleb(&r);

		if ((uint64_t) (r.end - r.p) < len) {
		    return -1;
		}
		rs->cfaReg = -1;
		if (len == sizeof(pltExpr)
			&& memcmp(r.p, pltExpr, PLT_LIT_AT) == 0
			&& memcmp(r.p + PLT_LIT_AT + 1, pltExpr + PLT_LIT_AT + 1,
			    sizeof(pltExpr) - PLT_LIT_AT - 1) == 0
			&& (r.p[PLT_LIT_AT] == 0x3a || r.p[PLT_LIT_AT] == 0x3b)) {
		    rs->cfaReg = r.p[PLT_LIT_AT] == 0x3a ? CFA_PLT10 : CFA_PLT11;
		}
		r.p += len;
		break;
	    }
	    case 0x10:				/* expression */
	    case 0x16: {			/* val_expression */
		uint64_t len;

		reg = Uleb(&r);
		len = Uleb(&r);
		if ((uint64_t) (r.end - r.p) < len) {
		    return -1;
		}
		r.p += len;
		goto unsupported;
	    }
	    case 0x14:				/* val_offset */
		reg = Uleb(&r);
		Uleb(&r);
		goto unsupported;
	    case 0x15:				/* val_offset_sf */
		reg = Uleb(&r);
		Sleb(&r);
		goto unsupported;
	    case 0x2e:				/* GNU_args_size */
		Uleb(&r);
		break;
	    default:
		return -1;
	    }
	}
	if (adv) {
	    /*
	     * The state built so far holds from loc up to the new location.
	     */

	    if (rb != NULL && loc < locEnd) {
		AddRow(rb, bias, loc, rs, c->signal);
	    }
	    loc += (uintptr_t) (delta * c->codeAlign);
	}
	continue;

      setOffset:
	if (reg == DW_RA) {
	    rs->raRule = 1;
	    rs->raOff = off;
	} else if ((idx = SavedIndex(reg)) >= 0) {
	    rs->rule[idx] = 1;
	    rs->off[idx] = off;
	}
	continue;

      restore:
	if (init == NULL) {
	    return -1;	/* restore in a CIE. */
	}
	if (reg == DW_RA) {
	    rs->raRule = init->raRule;
	    rs->raOff = init->raOff;
	} else if ((idx = SavedIndex(reg)) >= 0) {
	    rs->rule[idx] = init->rule[idx];
	    rs->off[idx] = init->off[idx];
	}
	continue;

      unsupported:
	if (reg == DW_RA) {
	    rs->raRule = 2;
	} else if ((idx = SavedIndex(reg)) >= 0) {
	    rs->rule[idx] = 2;
	}
    }
    if (rb != NULL && loc < locEnd) {
	AddRow(rb, bias, loc, rs, c->signal);
    }
    return r.bad ? -1 : 0;
}

/*
 *----------------------------------------------------------------------
 *
 * StoreTables --
 *
 *	Copies the rows and rules compiled in rb out to module m at their
 *	final size, and builds its block index.
 *
 * Results:
 *	0, or -1 if the rows are out of order or memory runs out.
 *
 * Side effects:
 *	Sets m's starts, ruleOf, rules and block and their counts (the
 *	caller publishes the state). rb is the caller's to release.
 *
 *----------------------------------------------------------------------
 */

static int
StoreTables(
    TpCfiModule *m,
    const RowBuf *rb)
{
    uint64_t nBlocks, b;
    uint32_t *starts, *block;
    uint16_t *ruleOf;
    TpCfiRule *rules;
    size_t k;

    /*
     * The search table is sorted by pcBegin, so the rows are too, except
     * for overlapping FDEs (never seen); check rather than trust.
     */

    for (k = 1; k < rb->n; k++) {
	if (rb->rows[k].start <= rb->rows[k - 1].start) {
	    return -1;
	}
    }
    if (m->lo < m->bias) {
	return -1;
    }
    nBlocks = ((m->hi - m->lo) >> TP_CFI_BLOCK_SHIFT) + 1;
    starts = malloc(sizeof(uint32_t) * rb->n);
    ruleOf = malloc(sizeof(uint16_t) * rb->n);
    rules = malloc(sizeof(TpCfiRule) * rb->nRules);
    block = malloc(sizeof(uint32_t) * nBlocks);
    if (starts == NULL || ruleOf == NULL || rules == NULL || block == NULL) {
	free(starts);
	free(ruleOf);
	free(rules);
	free(block);
	return -1;
    }
    for (k = 0; k < rb->n; k++) {
	starts[k] = rb->rows[k].start;
	ruleOf[k] = (uint16_t) rb->rows[k].rule;
    }
    memcpy(rules, rb->rules, sizeof(TpCfiRule) * rb->nRules);

    /*
     * The block index. Addresses before the first row map to row 0, whose
     * start the lookup checks.
     */

    k = 0;
    for (b = 0; b < nBlocks; b++) {
	uintptr_t addr = m->lo + (b << TP_CFI_BLOCK_SHIFT) - m->bias;

	while (k + 1 < rb->n && starts[k + 1] <= addr) {
	    k++;
	}
	block[b] = (uint32_t) k;
    }
    m->starts = starts;
    m->ruleOf = ruleOf;
    m->rules = rules;
    m->nRows = (uint32_t) rb->n;
    m->nRules = rb->nRules;
    m->block = block;
    m->nBlocks = (uint32_t) nBlocks;
    return 0;
}

/*
 *----------------------------------------------------------------------
 *
 * The cache of compiled rows (cache.c). Compiling libtcl's and libc's
 * rows takes 1.5-2 ms each, and profiler start waits for them. A
 * module's rows depend only on the bytes Compile reads, from its
 * .eh_frame_hdr to the end of that segment, and on where its segments
 * lie from its load address: the key is a hash of those bytes and those
 * offsets, whatever the file's path (the program's own has none). Only
 * modules with more than TP_CFI_CACHE_ROWS rows are cached: the small
 * ones compile faster than a file is read. TP_CFI_CACHE_VERSION: bump it
 * whenever what Compile makes of the same bytes can change.
 *
 *----------------------------------------------------------------------
 */

#define TP_CFI_CACHE_VERSION	1
#define TP_CFI_CACHE_ROWS	4096

typedef struct CfiKey {		/* All fields 8-byte aligned: no padding. */
    char what[8];		/* "cfirows". */
    uint32_t version;
    uint32_t ruleSize;		/* sizeof(TpCfiRule). */
    uint64_t lo, hi, ehHdr, segLo, segEnd, from;	/* Less the bias. */
    uint64_t bytes;		/* TpHash64 of [from, segEnd). */
} CfiKey;

typedef struct CfiBody {	/* Then starts, ruleOf (padded to 4 bytes),
				 * rules, block. */
    uint32_t nRows, nRules, nBlocks, pad;
} CfiBody;

/*
 * Module m's key and cache file (from: where the hashed bytes begin, the
 * lower of .eh_frame_hdr and .eh_frame): 1, or 0 if there is no cache.
 */

static int
CfiKeyMake(
    const TpCfiModule *m,
    uintptr_t from,
    CfiKey *k,
    char *path,
    size_t size)
{
    char name[64];

    memset(k, 0, sizeof(*k));
    if (from < m->segLo || from >= m->segEnd || m->lo < m->bias) {
	return 0;
    }
    memcpy(k->what, "cfirows", 8);
    k->version = TP_CFI_CACHE_VERSION;
    k->ruleSize = (uint32_t) sizeof(TpCfiRule);
    k->lo = m->lo - m->bias;
    k->hi = m->hi - m->bias;
    k->ehHdr = m->ehHdr - m->bias;
    k->segLo = m->segLo - m->bias;
    k->segEnd = m->segEnd - m->bias;
    k->from = from - m->bias;
    k->bytes = TpHash64(TP_HASH_INIT, (const void *) from, m->segEnd - from);
    snprintf(name, sizeof(name), "cfi-%016llx.rows", (unsigned long long)
	    TpHash64(k->bytes, k, sizeof(*k) - sizeof(k->bytes)));
    return TpCachePath(name, path, size);
}

/*
 * Fills m's tables from its cache file: 0, or -1 if there is none that
 * passes every check (cache.c's, then the shape StoreTables gives: rows
 * in order, rule indexes and kinds in range, the block index of m's
 * size, pointing at rows).
 */

static int
CfiCacheRead(
    TpCfiModule *m,
    const CfiKey *k,
    const char *path)
{
    TpCacheBlob b;
    CfiBody h;
    size_t need, ruleOfBytes;
    const uint32_t *cStarts, *cBlock;
    const uint16_t *cRuleOf;
    const TpCfiRule *cRules;
    uint32_t *starts, *block;
    uint16_t *ruleOf;
    TpCfiRule *rules;
    uint32_t i;
    int result = -1;

    if (!TpCacheRead(path, k, sizeof(*k), &b)) {
	return -1;
    }
    if (b.len < sizeof(h)) {
	goto done;
    }
    memcpy(&h, b.body, sizeof(h));
    ruleOfBytes = (2 * (size_t) h.nRows + 3) & ~(size_t) 3;
    need = sizeof(h) + 4 * (size_t) h.nRows + ruleOfBytes
	    + sizeof(TpCfiRule) * (size_t) h.nRules + 4 * (size_t) h.nBlocks;
    if (h.nRows < 2 || h.nRows > (1u << 26) || h.nRules == 0
	    || h.nRules > TP_CFI_MAXRULES
	    || h.nBlocks != ((m->hi - m->lo) >> TP_CFI_BLOCK_SHIFT) + 1
	    || need != b.len) {
	goto done;
    }

    /*
     * Checked where they lie (the body is 8-byte aligned, each array
     * 4-byte aligned after it), then copied.
     */

    cStarts = (const uint32_t *) (b.body + sizeof(h));
    cRuleOf = (const uint16_t *) (cStarts + h.nRows);
    cRules = (const TpCfiRule *) ((const char *) cRuleOf + ruleOfBytes);
    cBlock = (const uint32_t *) (cRules + h.nRules);
    for (i = 0; i < h.nRows; i++) {
	if (cRuleOf[i] >= h.nRules
		|| (i > 0 && cStarts[i] <= cStarts[i - 1])) {
	    goto done;
	}
    }
    for (i = 0; i < h.nRules; i++) {
	if (cRules[i].kind > ROW_PLT11) {
	    goto done;
	}
    }
    for (i = 0; i < h.nBlocks; i++) {
	if (cBlock[i] >= h.nRows) {
	    goto done;
	}
    }
    starts = malloc(4 * (size_t) h.nRows);
    ruleOf = malloc(2 * (size_t) h.nRows);
    rules = malloc(sizeof(TpCfiRule) * h.nRules);
    block = malloc(4 * (size_t) h.nBlocks);
    if (starts == NULL || ruleOf == NULL || rules == NULL || block == NULL) {
	free(starts);
	free(ruleOf);
	free(rules);
	free(block);
	goto done;
    }
    memcpy(starts, cStarts, 4 * (size_t) h.nRows);
    memcpy(ruleOf, cRuleOf, 2 * (size_t) h.nRows);
    memcpy(rules, cRules, sizeof(TpCfiRule) * h.nRules);
    memcpy(block, cBlock, 4 * (size_t) h.nBlocks);
    m->starts = starts;
    m->ruleOf = ruleOf;
    m->rules = rules;
    m->nRows = h.nRows;
    m->nRules = h.nRules;
    m->block = block;
    m->nBlocks = h.nBlocks;
    result = 0;
  done:
    TpCacheRelease(&b);
    return result;
}

/*
 * Writes m's tables to its cache file, if it has enough rows to be worth
 * it. Failures are silent.
 */

static void
CfiCacheWrite(
    const TpCfiModule *m,
    const CfiKey *k,
    const char *path)
{
    CfiBody h;
    static const char zeros[4] = {0, 0, 0, 0};
    const void *parts[6];
    size_t lens[6];

    if (m->nRows <= TP_CFI_CACHE_ROWS) {
	return;
    }
    memset(&h, 0, sizeof(h));
    h.nRows = m->nRows;
    h.nRules = m->nRules;
    h.nBlocks = m->nBlocks;
    parts[0] = &h;
    lens[0] = sizeof(h);
    parts[1] = m->starts;
    lens[1] = 4 * (size_t) m->nRows;
    parts[2] = m->ruleOf;
    lens[2] = 2 * (size_t) m->nRows;
    parts[3] = zeros;
    lens[3] = ((2 * (size_t) m->nRows + 3) & ~(size_t) 3) - lens[2];
    parts[4] = m->rules;
    lens[4] = sizeof(TpCfiRule) * m->nRules;
    parts[5] = m->block;
    lens[5] = 4 * (size_t) m->nBlocks;
    (void) TpCacheWrite(path, k, sizeof(*k), parts, lens, 6);
}

/*
 *----------------------------------------------------------------------
 *
 * Compile --
 *
 *	Compiles module m's .eh_frame into rows and rules: every FDE, in
 *	address order (the order of .eh_frame_hdr's search table).
 *
 * Results:
 *	0, or -1 if the module's CFI could not be read, or has more
 *	distinct rules than TP_CFI_MAXRULES (libunwind unwinds it then).
 *
 * Side effects:
 *	Sets m's tables (see StoreTables; the caller publishes the state).
 *
 *----------------------------------------------------------------------
 */

static int
Compile(
    TpCfiModule *m)
{
    const uint8_t *hdr = (const uint8_t *) m->ehHdr;
    const uint8_t *limit = (const uint8_t *) m->segEnd;
    Reader r = { hdr, limit, 0 };
    RowBuf rb;
    uint64_t count, i;
    uintptr_t frame;
    int tableEnc, fdeCountEnc, result, cached;
    CfiKey key;
    char path[PATH_MAX];

    memset(&rb, 0, sizeof(rb));
    if (hdr == NULL || U8(&r) != 1) {
	return -1;
    }
    (void) U8(&r);	/* eh_frame_ptr's encoding... */
    fdeCountEnc = (int) U8(&r);
    tableEnc = (int) U8(&r);
    frame = (uintptr_t) Encoded(&r, hdr[1], (uintptr_t) hdr);	/* ... and
								 * the pointer. */
    count = Encoded(&r, fdeCountEnc, (uintptr_t) hdr);
    if (r.bad || tableEnc != 0x3b || fdeCountEnc == PE_OMIT
	    || (uint64_t) (limit - r.p) / 8 < count) {
	/* 0x3b = datarel sdata4, what every Linux linker writes. */
	return -1;
    }
    cached = count > TP_CFI_CACHE_ROWS / 8 && CfiKeyMake(m,
	    frame >= m->segLo && frame < m->ehHdr ? frame : m->ehHdr, &key,
	    path, sizeof(path));
    if (cached && CfiCacheRead(m, &key, path) == 0) {
	return 0;
    }
    for (i = 0; i < count; i++) {
	Reader e = { r.p + 8 * i, limit, 0 };
	const uint8_t *fde, *fdeEnd, *ciePtr;
	uint64_t len, cieOff, augLen;
	uintptr_t pcBegin, pcRange;
	Cie c;
	RegState init, rs;

	Encoded(&e, 0x3b, (uintptr_t) hdr);
	fde = (const uint8_t *) (uintptr_t) Encoded(&e, 0x3b, (uintptr_t) hdr);
	if (e.bad || fde < (const uint8_t *) m->segLo || fde >= limit) {
	    continue;
	}
	e.p = fde;
	e.end = limit;
	len = Fixed(&e, 4);
	if (len == 0 || len == 0xffffffffu
		|| (uint64_t) (limit - e.p) < len) {
	    continue;	/* 64-bit lengths do not occur in .eh_frame. */
	}
	fdeEnd = e.p + len;
	e.end = fdeEnd;
	cieOff = Fixed(&e, 4);
	ciePtr = e.p - 4 - cieOff;
	if (cieOff == 0 || ciePtr >= fde
		|| ciePtr < (const uint8_t *) m->segLo
		|| ParseCie(ciePtr, limit, &c) != 0) {
	    continue;
	}
	pcBegin = (uintptr_t) Encoded(&e, c.fdeEnc, 0);
	pcRange = (uintptr_t) Encoded(&e, c.fdeEnc & PE_FORMAT, 0);
	if (c.hasAug) {
	    augLen = Uleb(&e);
	    if ((uint64_t) (e.end - e.p) < augLen) {
		continue;
	    }
	    e.p += augLen;
	}
	if (e.bad || pcRange == 0) {
	    continue;
	}
	memset(&init, 0, sizeof(init));
	init.cfaReg = -1;
	init.raRule = 2;	/* Until the CIE says where it is. */
	if (RunProgram(NULL, m->bias, &c, c.insns, c.end, pcBegin,
		pcBegin + pcRange, &init, NULL) != 0) {
	    continue;
	}
	rs = init;
	AddRow(&rb, m->bias, pcBegin, &rs, c.signal);
	if (RunProgram(&rb, m->bias, &c, e.p, fdeEnd, pcBegin,
		pcBegin + pcRange, &rs, &init) != 0) {
	    /* A row of this FDE may be wrong: none of it is trusted. */
	    RegState bad = init;

	    bad.raRule = 2;
	    AddRow(&rb, m->bias, pcBegin, &bad, 1);
	}
	AddRow(&rb, m->bias, pcBegin + pcRange, NULL, 0);
    }
    result = rb.failed || rb.n == 0 ? -1 : StoreTables(m, &rb);
    if (result == 0 && cached) {
	CfiCacheWrite(m, &key, path);
    }
    if (rb.rows != NULL) {
	munmap(rb.rows, rb.size * sizeof(BufRow));
    }
    free(rb.rules);
    free(rb.hash);
    return result;
}

/*
 *----------------------------------------------------------------------
 *
 * ScanCallback, ScanLocked --
 *
 *	Registers the loaded modules not yet known, and marks dead the
 *	ones no longer loaded. Caller holds cfi.lock.
 *
 * Results:
 *	ScanCallback: 0 (go on).
 *
 * Side effects:
 *	Appends to cfi.modules and publishes cfi.nModules.
 *
 *----------------------------------------------------------------------
 */

static int
ScanCallback(
    struct dl_phdr_info *info,
    size_t size,
    void *data)
{
    uintptr_t lo = UINTPTR_MAX, hi = 0, ehHdr = 0, segLo = 0, segEnd = 0;
    int i, n = cfi.nModules;
    TpCfiModule *m;

    (void) size;
    (void) data;
    for (i = 0; i < info->dlpi_phnum; i++) {
	const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

	if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
	    uintptr_t a = info->dlpi_addr + ph->p_vaddr;

	    if (a < lo) {
		lo = a;
	    }
	    if (a + ph->p_memsz > hi) {
		hi = a + ph->p_memsz;
	    }
	} else if (ph->p_type == PT_GNU_EH_FRAME) {
	    ehHdr = info->dlpi_addr + ph->p_vaddr;
	}
    }
    if (hi == 0) {
	return 0;
    }

    /*
     * The end of the loadable segment holding .eh_frame_hdr bounds every
     * read (.eh_frame sits in the same read-only segment).
     */

    for (i = 0; i < info->dlpi_phnum && ehHdr != 0; i++) {
	const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
	uintptr_t a = info->dlpi_addr + ph->p_vaddr;

	if (ph->p_type == PT_LOAD && ehHdr >= a && ehHdr < a + ph->p_memsz) {
	    segLo = a;
	    segEnd = a + ph->p_memsz;
	}
    }
    for (i = 0; i < n; i++) {
	m = &cfi.modules[i];
	if (m->state != MOD_DEAD && m->bias == info->dlpi_addr
		&& m->lo == lo && m->hi == hi) {
	    m->seen = 1;
	    return 0;
	}
    }
    if (n == TP_CFI_MAXMOD) {
	return 0;
    }
    m = &cfi.modules[n];
    memset(m, 0, sizeof(*m));
    m->bias = info->dlpi_addr;
    m->lo = lo;
    m->hi = hi;
    m->ehHdr = segEnd != 0 ? ehHdr : 0;
    m->segLo = segLo;
    m->segEnd = segEnd;
    m->state = m->ehHdr != 0 ? MOD_NEW : MOD_NOCFI;
    m->seen = 1;
    __atomic_store_n(&cfi.nModules, n + 1, __ATOMIC_RELEASE);
    return 0;
}

static void
ScanLocked(void)
{
    int i;

    for (i = 0; i < cfi.nModules; i++) {
	cfi.modules[i].seen = 0;
    }
    dl_iterate_phdr(ScanCallback, NULL);
    for (i = 0; i < cfi.nModules; i++) {
	if (!cfi.modules[i].seen) {
	    __atomic_store_n(&cfi.modules[i].state, MOD_DEAD,
		    __ATOMIC_RELEASE);
	}
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CompileCallback, TpCfiPrepare --
 *
 *	Registers every loaded module and compiles the rows of all of them
 *	(all = 1: profiler start) or of those a sample asked for (all = 0:
 *	the drain, after the handler set a request flag). CompileCallback
 *	notes the modules to compile; CompileHeld compiles each once the
 *	loader's lock is released.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Allocates rows; publishes modules to the handler.
 *
 *----------------------------------------------------------------------
 */

/*
 * The libraries tclprof itself brings (SQLite for save and load, the
 * libunwind fallback and its liblzma) and tclprof's own: a Tcl program
 * seldom runs in them, so "every module" leaves them out; their rows are
 * compiled when a sample first asks for them (the drain, within
 * milliseconds; that sample falls back on libunwind). About a third of
 * the rows of a plain tclsh's modules, kept for the process's life.
 */

static int
OnDemand(
    const char *path)
{
    static const char *const prefixes[] = {
	"libsqlite3.", "liblzma.", "libunwind.", "libunwind-", "libtclprof",
	NULL
    };
    const char *base = strrchr(path, '/');
    int i;

    base = base != NULL ? base + 1 : path;
    for (i = 0; prefixes[i] != NULL; i++) {
	if (strncmp(base, prefixes[i], strlen(prefixes[i])) == 0) {
	    return 1;
	}
    }
    return 0;
}

/*
 * The modules to compile, noted by CompileCallback with their paths (the
 * loader's strings are the module's own, gone if it is unloaded): the
 * compiling is done after dl_iterate_phdr returns. Inside its callback
 * the loader's lock is held, and compiling allocates: a malloc that
 * unwinds (heaptrack, a heap profiler) takes its unwinder's lock and then
 * the loader's, while another thread's malloc holds the unwinder's lock
 * and waits for ours. A deadlock, seen under heaptrack.
 */

#define PENDING_NAMES	(64 * 1024)

typedef struct Pending {
    int all;			/* TpCfiPrepare's argument. */
    uintptr_t only;		/* Not 0: only the module holding this
				 * address (LockFor). */
    int n;			/* Modules noted. */
    int full;			/* Some did not fit: go round again. */
    int index[TP_CFI_MAXMOD];	/* Their indexes in cfi.modules */
    uint32_t nameOff[TP_CFI_MAXMOD];	/* and paths in names. */
    size_t used;
    char names[PENDING_NAMES];
} Pending;

static int
CompileCallback(
    struct dl_phdr_info *info,
    size_t size,
    void *data)
{
    Pending *pd = data;
    int i, n = cfi.nModules;

    (void) size;
    for (i = 0; i < n; i++) {
	TpCfiModule *m = &cfi.modules[i];
	const char *name = info->dlpi_name != NULL ? info->dlpi_name : "";
	size_t len = strlen(name) + 1;

	if (m->bias != info->dlpi_addr || m->state != MOD_NEW
		|| !((pd->all && !OnDemand(name)) || m->wanted)
		|| (pd->only != 0 && (pd->only < m->lo
		    || pd->only >= m->hi))) {
	    continue;
	}
	if (pd->used + len > sizeof(pd->names) || pd->n == TP_CFI_MAXMOD) {
	    pd->full = 1;
	    return 1;
	}
	pd->index[pd->n] = i;
	pd->nameOff[pd->n++] = (uint32_t) pd->used;
	memcpy(pd->names + pd->used, name, len);
	pd->used += len;
    }
    return 0;
}

/*
 * CompileHeld: compiles module m, loaded from path, holding it with a
 * reference of our own (dlopen without loading) so that no thread can
 * unload it while its tables are read. The program itself ("") and the
 * vDSO cannot be unloaded. A module gone meanwhile, or replaced by
 * another at another address, stays new: the next scan marks it dead.
 */

static void
CompileHeld(
    TpCfiModule *m,
    const char *path)
{
    void *handle = NULL;
    struct link_map *lm = NULL;

    if (path[0] != '\0' && strchr(path, '/') != NULL) {
	handle = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
	if (handle == NULL) {
	    return;
	}
	if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || lm == NULL
		|| lm->l_addr != m->bias) {
	    dlclose(handle);
	    return;
	}
    }
    __atomic_store_n(&m->state, Compile(m) == 0 ? MOD_READY : MOD_NOCFI,
	    __ATOMIC_RELEASE);
    if (handle != NULL) {
	dlclose(handle);
    }
}

void
TpCfiPrepare(
    int all)
{
    Prepare(all, 0);
}

/*
 * Prepare: TpCfiPrepare, or with only not 0 (all 1) the one module holding
 * that address.
 */

static void
Prepare(
    int all,
    uintptr_t only)
{
    static Pending pending;	/* Under compileLock; untouched pages of it
				 * cost nothing. */
    Pending *pd = &pending;
    int k, rounds = 0;

    if (!all && !__atomic_load_n(&cfi.rescan, __ATOMIC_ACQUIRE)
	    && !__atomic_load_n(&cfi.build, __ATOMIC_ACQUIRE)) {
	return;
    }
    pthread_mutex_lock(&compileLock);
    pthread_mutex_lock(&cfi.lock);
    if (all || __atomic_exchange_n(&cfi.rescan, 0, __ATOMIC_ACQ_REL)) {
	ScanLocked();
    }
    __atomic_store_n(&cfi.build, 0, __ATOMIC_RELEASE);
    cfi.compiling = 1;
    pthread_mutex_unlock(&cfi.lock);
    do {
	rounds++;
	pd->all = all;
	pd->only = only;
	pd->n = 0;
	pd->full = 0;
	pd->used = 0;
	dl_iterate_phdr(CompileCallback, pd);
	for (k = 0; k < pd->n; k++) {
	    CompileHeld(&cfi.modules[pd->index[k]],
		    pd->names + pd->nameOff[k]);
	    pthread_mutex_lock(&cfi.lock);
	    pthread_cond_broadcast(&cfi.progress);
	    pthread_mutex_unlock(&cfi.lock);
	}
    } while (pd->full && pd->n > 0 && rounds < 16);
    pthread_mutex_lock(&cfi.lock);
    cfi.compiling = 0;
    pthread_cond_broadcast(&cfi.progress);
    pthread_mutex_unlock(&cfi.lock);
    pthread_mutex_unlock(&compileLock);
}

/*
 *----------------------------------------------------------------------
 *
 * TpCfiWarm --
 *
 *	Compiles every loaded module's rows on a short-lived thread of its
 *	own, so that the first [profiler start] (which compiles them too,
 *	waiting for this thread if it is still at work) finds them ready.
 *	Called once per process, when the package is first loaded.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Starts a detached thread with every signal blocked; it exits when
 *	the rows are compiled. If it cannot start, start compiles them.
 *
 *----------------------------------------------------------------------
 */

static void *
WarmMain(
    void *arg)
{
    (void) arg;
    TpCfiPrepare(1);
    return NULL;
}

void
TpCfiWarm(void)
{
    pthread_attr_t attr;
    pthread_t thread;
    sigset_t all, old;

    if (pthread_attr_init(&attr) != 0) {
	return;
    }
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    (void) pthread_create(&thread, &attr, WarmMain, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
}

/*
 *----------------------------------------------------------------------
 *
 * TpCfiFrameExtent --
 *
 *	The addresses around pc where its function's frame is laid out as
 *	at pc: the same CFA rule and the same saved registers. Calibration
 *	uses it to bound an inlined trampoline loop by its function's
 *	epilogue, which restores the registers the loop's root lives in.
 *
 * Results:
 *	1 and [*loPtr, *hiPtr) set; 0 if pc has no compiled row.
 *
 * Side effects:
 *	Compiles the modules' rows if not done yet.
 *
 *----------------------------------------------------------------------
 */

/*
 * RowAtLocked: the compiled module holding pc and the index of the row
 * covering it (not the last, ROW_NONE, row). Called with cfi.lock held.
 * RuleAt: row k's rule.
 */

static const TpCfiRule *
RuleAt(
    const TpCfiModule *m,
    uint32_t k)
{
    return &m->rules[m->ruleOf[k]];
}

/*
 * LockFor: takes cfi.lock once the module holding pc is compiled, or
 * cannot be (on demand, without CFI, not loaded). It waits for a thread
 * compiling (the warm-up thread) to reach that module, or compiles that
 * one module itself: calibration reads libtcl's rows while the warm-up
 * thread compiles the others (libc's take as long as libtcl's).
 */

static void
LockFor(
    uintptr_t pc)
{
    int j, prepared = 0;

    pthread_mutex_lock(&cfi.lock);
    for (;;) {
	for (j = 0; j < cfi.nModules; j++) {
	    const TpCfiModule *m = &cfi.modules[j];

	    if (pc >= m->lo && pc < m->hi && __atomic_load_n(&m->state,
		    __ATOMIC_ACQUIRE) == MOD_READY) {
		return;
	    }
	}
	if (cfi.compiling) {
	    pthread_cond_wait(&cfi.progress, &cfi.lock);
	} else if (!prepared) {
	    pthread_mutex_unlock(&cfi.lock);
	    Prepare(1, pc);
	    prepared = 1;
	    pthread_mutex_lock(&cfi.lock);
	} else {
	    return;
	}
    }
}

static const TpCfiModule *
RowAtLocked(
    uintptr_t pc,
    uint32_t *kPtr)
{
    int j;

    for (j = 0; j < cfi.nModules; j++) {
	const TpCfiModule *m = &cfi.modules[j];
	uint32_t off, lo = 0, hi;

	if (pc < m->lo || pc >= m->hi
		|| __atomic_load_n(&m->state, __ATOMIC_ACQUIRE) != MOD_READY
		|| m->nRows == 0 || pc - m->bias > UINT32_MAX) {
	    continue;
	}
	off = (uint32_t) (pc - m->bias);
	hi = m->nRows;
	while (lo < hi) {		/* First row starting after off. */
	    uint32_t mid = lo + (hi - lo) / 2;

	    if (m->starts[mid] <= off) {
		lo = mid + 1;
	    } else {
		hi = mid;
	    }
	}
	if (lo == 0 || lo >= m->nRows) {
	    return NULL;
	}
	*kPtr = lo - 1;
	return m;
    }
    return NULL;
}

int
TpCfiFrameExtent(
    uintptr_t pc,
    uintptr_t *loPtr,
    uintptr_t *hiPtr)
{
    const TpCfiModule *m;
    uint32_t k, e;
    int found = 0;

    LockFor(pc);
    m = RowAtLocked(pc, &k);
    if (m != NULL && (RuleAt(m, k)->kind == ROW_RSP
	    || RuleAt(m, k)->kind == ROW_RBP)) {
	/*
	 * A module's rules are distinct: the same layout is the same rule.
	 */

	e = k;
	while (k > 0 && m->ruleOf[k - 1] == m->ruleOf[e]) {
	    k--;
	}
	while (e + 1 < m->nRows && m->ruleOf[e + 1] == m->ruleOf[k]) {
	    e++;
	}
	if (e + 1 < m->nRows) {
	    *loPtr = m->bias + m->starts[k];
	    *hiPtr = m->bias + m->starts[e + 1];
	    found = 1;
	}
    }
    pthread_mutex_unlock(&cfi.lock);
    return found;
}

/*
 *----------------------------------------------------------------------
 *
 * TpCfiSavedRegs --
 *
 *	The callee-saved registers the function holding pc has saved at pc
 *	(so it uses them for values of its own), and where: register r at
 *	CFA + cfaOff[r]. A register it has not saved still holds its
 *	caller's value, and a slot where it saved one holds its caller's
 *	value too.
 *
 * Results:
 *	1 and *maskPtr (bit r: DWARF register r saved), cfaOff[] filled; 0
 *	if no table covers pc.
 *
 * Side effects:
 *	Compiles the tables if not done yet.
 *
 *----------------------------------------------------------------------
 */

int
TpCfiSavedRegs(
    uintptr_t pc,
    uint32_t *maskPtr,
    int32_t cfaOff[16])
{
    const TpCfiModule *m;
    const TpCfiRule *rule;
    uint32_t k;
    int i, found = 0;

    LockFor(pc);
    m = RowAtLocked(pc, &k);
    rule = m != NULL ? RuleAt(m, k) : NULL;
    if (rule != NULL && (rule->kind == ROW_RSP || rule->kind == ROW_RBP)) {
	*maskPtr = 0;
	for (i = 0; i < TP_CFI_NSAVED; i++) {
	    if (rule->saved[i] != 0) {
		*maskPtr |= 1u << savedDwarf[i];
		cfaOff[savedDwarf[i]] = 8 * rule->saved[i];
	    }
	}
	found = 1;
    }
    pthread_mutex_unlock(&cfi.lock);
    return found;
}

/*
 *----------------------------------------------------------------------
 *
 * TpCfiSameCfa --
 *
 *	The stretches of [lo, hi) whose rows compute the CFA as the row at
 *	ref does: a function's body, between its prologue and its epilogue,
 *	including blocks placed after its return.
 *
 * Results:
 *	The number of [start, end) pairs written to ranges (at most max), 0
 *	if ref has no compiled row.
 *
 * Side effects:
 *	Compiles the modules' rows if not done yet.
 *
 *----------------------------------------------------------------------
 */

int
TpCfiSameCfa(
    uintptr_t ref,
    uintptr_t lo,
    uintptr_t hi,
    uintptr_t *ranges,
    int max)
{
    const TpCfiModule *m;
    const TpCfiRule *r;
    uint32_t k;
    int count = 0;

    LockFor(ref);
    m = RowAtLocked(ref, &k);
    r = m != NULL ? RuleAt(m, k) : NULL;
    if (r != NULL && (r->kind == ROW_RSP || r->kind == ROW_RBP)) {
	for (k = 0; k + 1 < m->nRows; k++) {
	    uintptr_t a = m->bias + m->starts[k];
	    uintptr_t b = m->bias + m->starts[k + 1];

	    if (b <= lo || a >= hi || RuleAt(m, k)->kind != r->kind
		    || RuleAt(m, k)->cfaOff != r->cfaOff) {
		continue;
	    }
	    a = a < lo ? lo : a;
	    b = b > hi ? hi : b;
	    if (count > 0 && ranges[2 * count - 1] == a) {
		ranges[2 * count - 1] = b;	/* Adjacent: one stretch. */
	    } else if (count < max) {
		ranges[2 * count] = a;
		ranges[2 * count + 1] = b;
		count++;
	    }
	}
    }
    pthread_mutex_unlock(&cfi.lock);
    return count;
}

/*
 *----------------------------------------------------------------------
 *
 * TpCfiAtFork --
 *
 *	pthread_atfork support: the sampler thread may be compiling rows
 *	when another thread forks; the child must not inherit the locks
 *	held. prepare = 1 takes them, 0 (parent and child) releases them.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Locks or unlocks compileLock and cfi.lock.
 *
 *----------------------------------------------------------------------
 */

void
TpCfiAtFork(
    int prepare)
{
    if (prepare) {
	pthread_mutex_lock(&compileLock);
	pthread_mutex_lock(&cfi.lock);
    } else {
	pthread_mutex_unlock(&cfi.lock);
	pthread_mutex_unlock(&compileLock);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * FindRule --
 *
 *	The rule for address pc: that of the row covering it.
 *
 * Results:
 *	The rule, or NULL (no module; module not compiled, in which case it
 *	is requested).
 *
 * Side effects:
 *	May set the request flags.
 *
 * Signal safety:
 *	Handler; reads published data only, bounded.
 *
 *----------------------------------------------------------------------
 */

static const TpCfiRule *
FindRule(
    uintptr_t pc,
    int *hintPtr)
{
    int n = __atomic_load_n(&cfi.nModules, __ATOMIC_ACQUIRE);
    int i = *hintPtr, j;
    const TpCfiModule *m = NULL;
    const uint32_t *starts;
    uint32_t off, k, b;

    if (i >= 0 && i < n && pc >= cfi.modules[i].lo && pc < cfi.modules[i].hi
	    && __atomic_load_n(&cfi.modules[i].state, __ATOMIC_ACQUIRE)
		== MOD_READY) {
	m = &cfi.modules[i];
    } else {
	for (j = 0; j < n; j++) {
	    const TpCfiModule *c = &cfi.modules[j];
	    int state;

	    if (pc < c->lo || pc >= c->hi) {
		continue;
	    }
	    state = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
	    if (state == MOD_DEAD) {
		continue;
	    }
	    if (state == MOD_NEW) {
		__atomic_store_n(&cfi.modules[j].wanted, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&cfi.build, 1, __ATOMIC_RELEASE);
		return NULL;
	    }
	    if (state != MOD_READY) {
		return NULL;
	    }
	    m = c;
	    *hintPtr = j;
	    break;
	}
	if (m == NULL) {
	    __atomic_store_n(&cfi.rescan, 1, __ATOMIC_RELEASE);
	    return NULL;
	}
    }
    if (pc - m->bias > UINT32_MAX) {
	return NULL;
    }
    off = (uint32_t) (pc - m->bias);
    starts = m->starts;
    b = (uint32_t) ((pc - m->lo) >> TP_CFI_BLOCK_SHIFT);
    if (m->nRows == 0 || b >= m->nBlocks) {
	return NULL;
    }
    k = m->block[b];
    if (off < starts[k]) {
	return NULL;
    }
    while (k + 1 < m->nRows && starts[k + 1] <= off) {
	k++;
    }
    return &m->rules[m->ruleOf[k]];
}

/*
 *----------------------------------------------------------------------
 *
 * ReadLoc --
 *
 *	The value a trampoline frame keeps at a calibrated location: one of
 *	the frame's callee-saved registers as unwound so far, or a word of
 *	its stack, read only inside [lo, hi).
 *
 * Results:
 *	The value, or TP_ROOT_UNKNOWN (location unknown or outside the
 *	stack).
 *
 * Side effects:
 *	None.
 *
 * Signal safety: safe.
 *
 *----------------------------------------------------------------------
 */

static TP_NO_ASAN uintptr_t
ReadLoc(
    const TpValueLoc *loc,
    const uintptr_t *regs,	/* The frame's rbx, rbp, r12-r15. */
    uintptr_t sp,		/* The frame's stack pointer. */
    uintptr_t lo,		/* Readable stack: [lo, hi). */
    uintptr_t hi)
{
    int i;

    if (loc->kind == TP_LOC_REG) {
	i = SavedIndex(loc->reg);
	return i >= 0 ? regs[i] : TP_ROOT_UNKNOWN;
    }
    if (loc->kind == TP_LOC_STACK && sp + loc->off >= lo
	    && sp + loc->off + 8 <= hi && ((sp + loc->off) & 7) == 0) {
	return *(const uintptr_t *) (sp + loc->off);
    }
    return TP_ROOT_UNKNOWN;
}

/*
 *----------------------------------------------------------------------
 *
 * TpCfiUnwind --
 *
 *	Unwinds the interrupted thread from the signal's ucontext with the
 *	compiled rows: pc[] (interrupted frame first), and for each
 *	TclNRRunCallbacks frame its index, stack pointer and root register.
 *
 * Results:
 *	0 if the walk reached the outermost frame (or -maxdepth); -1 if it
 *	met an address without a usable row, or a read outside the stack:
 *	the caller then unwinds with libunwind.
 *
 * Side effects:
 *	Writes pc[], tramp[], nPc, nTramp and CTRUNC.
 *
 * Signal safety:
 *	Handler only: no locks, no allocation; every stack read is checked
 *	against [sp, cfg->stackHi); bounded by maxPc.
 *
 *----------------------------------------------------------------------
 */

int
TpCfiUnwind(
    const TpUnwindConfig *cfg,
    void *ucontext,
    const TpRing *ring,
    TpSlot *slot)
{
    const ucontext_t *uc = ucontext;
    uintptr_t *pcs = TpSlotPcs(ring, slot);
    TpTramp *tramps = TpSlotTramps(ring, slot);
    uintptr_t ip, sp, lo, hi = cfg->stackHi;
    uintptr_t regs[TP_CFI_NSAVED];
    int n = 0, nTramp = 0, hint = -1, i, sure;

    if (hi == 0) {
	return -1;
    }
    ip = (uintptr_t) uc->uc_mcontext.gregs[REG_RIP];
    sp = lo = (uintptr_t) uc->uc_mcontext.gregs[REG_RSP];
    regs[0] = (uintptr_t) uc->uc_mcontext.gregs[REG_RBX];
    regs[1] = (uintptr_t) uc->uc_mcontext.gregs[REG_RBP];
    regs[2] = (uintptr_t) uc->uc_mcontext.gregs[REG_R12];
    regs[3] = (uintptr_t) uc->uc_mcontext.gregs[REG_R13];
    regs[4] = (uintptr_t) uc->uc_mcontext.gregs[REG_R14];
    regs[5] = (uintptr_t) uc->uc_mcontext.gregs[REG_R15];
    if (sp >= hi || sp < 4096) {
	return -1;
    }
    while (1) {
	const TpCfiRule *rule;
	const TpTrampSite *site;
	uintptr_t cfa, ra, raAddr;
	uintptr_t next[TP_CFI_NSAVED];

	if (n == (int) ring->maxPc) {
	    slot->flags |= TP_SLOT_CTRUNC;
	    break;
	}
	pcs[n] = ip;
	site = TpTrampFind(cfg, ip, n, &sure);
	if (site != NULL) {
	    if (nTramp < TP_MAX_TRAMP) {
		tramps[nTramp].index = (uint32_t) n;
		tramps[nTramp].spare = sure ? TP_TRAMP_SURE : 0;
		tramps[nTramp].sp = sp;
		tramps[nTramp].root = ReadLoc(site == TP_TRAMP_FN
			? &cfg->fnRoot : &site->root, regs, sp, lo, hi);
		tramps[nTramp].cb = !sure ? 0
			: ReadLoc(&site->cb, regs, sp, lo, hi);
		if (tramps[nTramp].cb == TP_ROOT_UNKNOWN) {
		    tramps[nTramp].cb = 0;
		}
		tramps[nTramp].interp = !sure ? 0
			: ReadLoc(&site->interp, regs, sp, lo, hi);
		if (tramps[nTramp].interp == TP_ROOT_UNKNOWN) {
		    tramps[nTramp].interp = 0;
		}
	    }
	    nTramp++;
	}
	n++;

	/*
	 * A return address points after the call: the call itself, which
	 * is the code that belongs to the frame, is at ip - 1. The
	 * interrupted frame's ip is exact.
	 */

	rule = FindRule(n == 1 ? ip : ip - 1, &hint);
	if (rule == NULL) {
	    return -1;
	}
	if (rule->kind == ROW_END) {
	    break;
	}
	if (rule->kind == ROW_RSP) {
	    cfa = sp + (intptr_t) rule->cfaOff;
	} else if (rule->kind == ROW_RBP) {
	    cfa = regs[1] + (intptr_t) rule->cfaOff;
	} else if ((rule->kind == ROW_PLT10 || rule->kind == ROW_PLT11)
		&& n == 1) {
	    /* Only an interrupted frame can be in the PLT: it never calls. */
	    cfa = sp + 8 + ((ip & 15) >= (rule->kind == ROW_PLT10 ? 10u : 11u)
		    ? 8 : 0);
	} else {
	    return -1;
	}
	raAddr = cfa + 8 * (intptr_t) rule->raSlot;
	if (cfa <= sp || cfa > hi || (cfa & 7) != 0
		|| raAddr < lo || raAddr > hi - 8) {
	    return -1;
	}
	for (i = 0; i < TP_CFI_NSAVED; i++) {
	    next[i] = regs[i];
	    if (rule->saved[i] != 0) {
		uintptr_t a = cfa + 8 * (intptr_t) rule->saved[i];

		/*
		 * A leaf function may keep registers in the 128-byte red
		 * zone below its rsp (the kernel put the signal frame
		 * below it).
		 */

		if (a < lo - (n == 1 ? 128 : 0) || a > hi - 8) {
		    return -1;
		}
		next[i] = *(const uintptr_t *) a;
	    }
	}
	ra = *(const uintptr_t *) raAddr;
	memcpy(regs, next, sizeof(regs));
	sp = cfa;
	ip = ra;
	if (ip == 0) {
	    break;
	}
    }
    slot->nPc = (uint16_t) n;
    slot->nTramp = (uint16_t) (nTramp > TP_MAX_TRAMP ? TP_MAX_TRAMP : nTramp);
    return 0;
}

/*
 *----------------------------------------------------------------------
 *
 * TpCfiStackTop --
 *
 *	The top (highest address) of the calling thread's stack.
 *
 * Results:
 *	The address, or 0 if unknown (the handler then uses libunwind).
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

uintptr_t
TpCfiStackTop(void)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    uintptr_t top = 0;

    if (pthread_getattr_np(pthread_self(), &attr) != 0) {
	return 0;
    }
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
	top = (uintptr_t) addr + size;
    }
    pthread_attr_destroy(&attr);
    return top;
}
