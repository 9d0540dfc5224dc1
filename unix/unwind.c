/*
 * unwind.c --
 *
 *	The C half of a sample: libunwind called from the SIGPROF handler.
 *
 *	The handler first tries tclprof's own table-driven unwinder (cfi.c),
 *	which gives every frame's pc, and the stack pointer and root
 *	register of each TclNRRunCallbacks frame, in about 1 us. Where its
 *	tables have no usable row (code without unwind information, signal
 *	frames, stack realignment) the sample is unwound by libunwind:
 *
 *	Two paths (DESIGN.md): unw_backtrace gives instruction pointers only,
 *	for about 0.5 us per 40 frames when its per-address cache is warm
 *	(3-5 us when the interrupted address is new to it, which is most
 *	samples); the cursor (unw_step) also gives each frame's registers but
 *	costs about 0.45 us per frame. Registers are needed only to split the
 *	Tcl stack between several TclNRRunCallbacks frames, so the cursor
 *	runs only when the cheap trace found more than one of them.
 *
 *	libunwind is set to per-thread caching so that the handler never
 *	waits for a lock another thread holds, and it is warmed up on the
 *	sampled thread before the first signal: the first unwind of a process
 *	reads unwind tables and can take tens of milliseconds.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <ucontext.h>
#include <string.h>

/*
 * The frames above the interrupted one in a trace taken inside the
 * handler: unw_backtrace itself, TpUnwindSignal, the handler, and the
 * kernel's signal trampoline (__restore_rt). We do not count them; we
 * look for the interrupted PC among the first TP_SKIP_SEARCH entries.
 */

#define TP_SKIP_SEARCH	12

static void CheckUnwind(const TpUnwindConfig *cfg, void *ucontext,
	const TpRing *ring, TpSlot *slot);
static int CursorUnwind(const TpUnwindConfig *cfg, void *ucontext,
	const TpRing *ring, TpSlot *slot, int known);
static void LibunwindUnwind(const TpUnwindConfig *cfg, void *ucontext,
	const TpRing *ring, TpSlot *slot);

/*
 *----------------------------------------------------------------------
 *
 * TpUnwindInit --
 *
 *	One-time libunwind setup for the process.
 *
 * Results:
 *	0 on success, -1 if libunwind refused the caching policy.
 *
 * Side effects:
 *	Switches libunwind to per-thread caches.
 *
 *----------------------------------------------------------------------
 */

int
TpUnwindInit(void)
{
    return unw_set_caching_policy(unw_local_addr_space,
	    UNW_CACHE_PER_THREAD) == 0 ? 0 : -1;
}

/*
 *----------------------------------------------------------------------
 *
 * TpUnwindWarm --
 *
 *	Unwinds the calling thread's stack once by each path, so that
 *	libunwind's lazily built tables and per-thread caches exist before
 *	the handler needs them.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	libunwind allocates its caches.
 *
 *----------------------------------------------------------------------
 */

void
TpUnwindWarm(void)
{
    void *ips[128];
    unw_context_t uc;
    unw_cursor_t cursor;
    unw_word_t ip, sp;
    int n = 0;

    unw_backtrace(ips, 128);
    unw_getcontext(&uc);
    if (unw_init_local(&cursor, &uc) < 0) {
	return;
    }
    do {
	unw_get_reg(&cursor, UNW_REG_IP, &ip);
	unw_get_reg(&cursor, UNW_REG_SP, &sp);
    } while (++n < 256 && unw_step(&cursor) > 0);
}

/*
 *----------------------------------------------------------------------
 *
 * TpUnwindSignal --
 *
 *	Fills the slot's pc[] (interrupted frame first) and tramp[] from the
 *	signal's ucontext.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Writes slot->nPc, nTramp and the CTRUNC, UNWERR and CURSOR flags.
 *
 * Signal safety:
 *	Called only from the handler; libunwind's local unwinding with
 *	per-thread caching takes no locks once warm. Bounded by maxPc.
 *
 *----------------------------------------------------------------------
 */

void
TpUnwindSignal(
    const TpUnwindConfig *cfg,
    void *ucontext,
    const TpRing *ring,
    TpSlot *slot)
{
    if (cfg->unwinder == TP_UNWIND_CHECK) {
	CheckUnwind(cfg, ucontext, ring, slot);
	return;
    }
    if (cfg->unwinder == TP_UNWIND_TABLES
	    && TpCfiUnwind(cfg, ucontext, ring, slot) == 0) {
	return;
    }
    if (cfg->unwinder == TP_UNWIND_TABLES) {
	slot->flags = (uint16_t) ((slot->flags & ~TP_SLOT_CTRUNC)
		| TP_SLOT_FALLBACK);
	slot->nPc = slot->nTramp = 0;
    }
    LibunwindUnwind(cfg, ucontext, ring, slot);
}

/*
 *----------------------------------------------------------------------
 *
 * CheckUnwind --
 *
 *	-unwind check: unwinds with the tables and with libunwind's cursor
 *	and compares every pc, and the stack pointer and root register of
 *	every trampoline. The slot keeps libunwind's result. For tests: it
 *	costs what both unwinders cost.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	As TpUnwindSignal; sets TP_SLOT_FALLBACK if the tables gave up and
 *	TP_SLOT_UNWCHECK if they finished with another answer.
 *
 * Signal safety:
 *	Handler only; the copy lives on the handler's stack, bounded by
 *	TP_MAX_DEPTH.
 *
 *----------------------------------------------------------------------
 */

static void
CheckUnwind(
    const TpUnwindConfig *cfg,
    void *ucontext,
    const TpRing *ring,
    TpSlot *slot)
{
    uintptr_t pcs[TP_MAX_DEPTH];
    TpTramp tramps[TP_MAX_TRAMP];
    uintptr_t *slotPcs = TpSlotPcs(ring, slot);
    TpTramp *slotTramps = TpSlotTramps(ring, slot);
    int ok, nPc, nTramp, i, same;

    ok = TpCfiUnwind(cfg, ucontext, ring, slot) == 0;
    nPc = slot->nPc;
    nTramp = slot->nTramp;
    if (ok) {
	memcpy(pcs, slotPcs, sizeof(uintptr_t) * (size_t) nPc);
	memcpy(tramps, slotTramps, sizeof(TpTramp) * (size_t) nTramp);
    }
    slot->nPc = slot->nTramp = 0;
    slot->flags &= (uint16_t) ~TP_SLOT_CTRUNC;
    if (CursorUnwind(cfg, ucontext, ring, slot, 0) < 0) {
	slot->flags |= TP_SLOT_UNWERR;
    }
    if (!ok) {
	slot->flags |= TP_SLOT_FALLBACK;
	return;
    }
    same = nPc == slot->nPc && nTramp == slot->nTramp
	    && memcmp(pcs, slotPcs, sizeof(uintptr_t) * (size_t) nPc) == 0;
    for (i = 0; same && i < nTramp; i++) {
	same = tramps[i].index == slotTramps[i].index
		&& tramps[i].sp == slotTramps[i].sp
		&& tramps[i].root == slotTramps[i].root
		&& tramps[i].cb == slotTramps[i].cb;
    }
    if (!same) {
	slot->flags |= TP_SLOT_UNWCHECK;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * LibunwindUnwind --
 *
 *	libunwind's two paths: the fast trace, and the cursor when the
 *	trace found two or more trampolines (or could not start).
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	As TpUnwindSignal.
 *
 * Signal safety:
 *	Handler only.
 *
 *----------------------------------------------------------------------
 */

static void
LibunwindUnwind(
    const TpUnwindConfig *cfg,
    void *ucontext,
    const TpRing *ring,
    TpSlot *slot)
{
    uintptr_t *pcs = TpSlotPcs(ring, slot);
    TpTramp *tramps = TpSlotTramps(ring, slot);
    ucontext_t *uc = ucontext;
    uintptr_t ip = (uintptr_t) uc->uc_mcontext.gregs[REG_RIP];
    int n, i, skip = -1, nTramp = 0, wantCb = 0;

    n = unw_backtrace((void **) pcs, (int) ring->maxPc);
    for (i = 0; i < n && i < TP_SKIP_SEARCH; i++) {
	if (pcs[i] == ip) {
	    skip = i;
	    break;
	}
    }
    if (skip < 0) {
	/*
	 * The fast trace did not get through the signal frame (no unwind
	 * info for the interrupted code, e.g. a prologue): the cursor
	 * starts from the ucontext itself and does better.
	 */

	if (CursorUnwind(cfg, ucontext, ring, slot, 0) < 0) {
	    slot->flags |= TP_SLOT_UNWERR;
	}
	return;
    }
    if (n == (int) ring->maxPc) {
	slot->flags |= TP_SLOT_CTRUNC;
    }
    n -= skip;
    memmove(pcs, pcs + skip, sizeof(uintptr_t) * (size_t) n);
    for (i = 0; i < n; i++) {
	int sure;
	const TpTrampSite *site = TpTrampFind(cfg, pcs[i], i, &sure);

	if (site != NULL) {
	    if (nTramp < TP_MAX_TRAMP) {
		tramps[nTramp].index = (uint32_t) i;
		tramps[nTramp].spare = 0;
		tramps[nTramp].sp = 0;
		tramps[nTramp].root = TP_ROOT_UNKNOWN;
		tramps[nTramp].cb = 0;
		tramps[nTramp].interp = 0;
	    }
	    if (sure && site->cb.kind != TP_LOC_NONE) {
		wantCb = 1;
	    }
	    nTramp++;
	}
    }
    if (cfg->wantTrampRegs && (nTramp > 1 || (nTramp == 1 && wantCb))) {
	/*
	 * Frames mode reads the callback each trampoline runs even when
	 * there is only one.
	 *
	 * The cursor only has to reach the outermost trampoline: the frames
	 * beyond it (Tcl_Main, main, libc's start) are already in pc[] from
	 * the fast trace. Stopping there also spares libunwind its last
	 * step past _start, where it falls back on heuristics that probe
	 * memory with system calls.
	 */

	slot->nPc = (uint16_t) n;
	if (CursorUnwind(cfg, ucontext, ring, slot, n) < 0) {
	    slot->flags |= TP_SLOT_UNWERR;
	}
	return;
    }
    slot->nPc = (uint16_t) n;
    slot->nTramp = (uint16_t) (nTramp > TP_MAX_TRAMP ? TP_MAX_TRAMP : nTramp);
}

/*
 *----------------------------------------------------------------------
 *
 * CursorLoc --
 *
 *	cfi.c's ReadLoc for a libunwind cursor: a trampoline frame's value
 *	at a calibrated location.
 *
 * Results:
 *	The value, or TP_ROOT_UNKNOWN.
 *
 * Side effects:
 *	None.
 *
 * Signal safety: safe (stack reads checked against [lo, hi)).
 *
 *----------------------------------------------------------------------
 */

static TP_NO_ASAN uintptr_t
CursorLoc(
    unw_cursor_t *cursor,
    const TpValueLoc *loc,
    uintptr_t sp,		/* The frame's stack pointer, 0 if unknown. */
    uintptr_t lo,		/* Readable stack: [lo, hi). */
    uintptr_t hi)
{
    unw_word_t reg;

    if (loc->kind == TP_LOC_REG) {
	return unw_get_reg(cursor, loc->reg, &reg) == 0
		? (uintptr_t) reg : TP_ROOT_UNKNOWN;
    }
    if (loc->kind == TP_LOC_STACK && sp != 0 && hi != 0
	    && sp + loc->off >= lo && sp + loc->off + 8 <= hi
	    && ((sp + loc->off) & 7) == 0) {
	return *(const uintptr_t *) (sp + loc->off);
    }
    return TP_ROOT_UNKNOWN;
}

/*
 *----------------------------------------------------------------------
 *
 * CursorUnwind --
 *
 *	The slow path: steps a libunwind cursor from the signal frame,
 *	recording for each TclNRRunCallbacks frame its stack pointer and the
 *	calibrated register that holds its NRE root.
 *
 *	known > 0: pc[0..known) already holds the fast trace and slot->nPc
 *	is known. The walk then stops after the outermost trampoline of that
 *	trace, as long as every pc it saw agreed with the trace (if one does
 *	not, it walks on to the end like an unknown stack).
 *
 * Results:
 *	0, or -1 if libunwind failed before the outermost frame (what was
 *	collected so far is kept).
 *
 * Side effects:
 *	Overwrites pc[], tramp[], nPc and nTramp; sets CTRUNC and CURSOR.
 *
 * Signal safety:
 *	Handler only; bounded by maxPc.
 *
 *----------------------------------------------------------------------
 */

static int
CursorUnwind(
    const TpUnwindConfig *cfg,
    void *ucontext,
    const TpRing *ring,
    TpSlot *slot,
    int known)
{
    uintptr_t *pcs = TpSlotPcs(ring, slot);
    TpTramp *tramps = TpSlotTramps(ring, slot);
    const ucontext_t *uc = ucontext;
    uintptr_t lo = (uintptr_t) uc->uc_mcontext.gregs[REG_RSP];
    const TpTrampSite *site;
    unw_cursor_t cursor;
    unw_word_t ip, sp;
    int n = 0, nTramp = 0, r = 0, i, stopAfter = -1, agree = 1, sure;

    /*
     * The outermost trampoline of the fast trace, if known.
     */

    for (i = 0; i < known; i++) {
	if (TpTrampFind(cfg, pcs[i], i, &sure) != NULL) {
	    stopAfter = i;
	}
    }

    slot->flags |= TP_SLOT_CURSOR;
    if (unw_init_local2(&cursor, (unw_context_t *) ucontext,
	    UNW_INIT_SIGNAL_FRAME) < 0) {
	slot->nPc = 0;
	slot->nTramp = 0;
	return -1;
    }
    do {
	if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0) {
	    break;
	}
	if (n < known && pcs[n] != (uintptr_t) ip) {
	    agree = 0;
	}
	pcs[n] = (uintptr_t) ip;
	site = TpTrampFind(cfg, (uintptr_t) ip, n, &sure);
	if (site != NULL && nTramp < TP_MAX_TRAMP) {
	    tramps[nTramp].index = (uint32_t) n;
	    tramps[nTramp].spare = sure ? TP_TRAMP_SURE : 0;
	    tramps[nTramp].sp = 0;
	    if (unw_get_reg(&cursor, UNW_REG_SP, &sp) == 0) {
		tramps[nTramp].sp = (uintptr_t) sp;
	    }
	    tramps[nTramp].root = CursorLoc(&cursor, site == TP_TRAMP_FN
		    ? &cfg->fnRoot : &site->root, tramps[nTramp].sp, lo,
		    cfg->stackHi);
	    tramps[nTramp].cb = !sure ? 0 : CursorLoc(&cursor,
		    &site->cb, tramps[nTramp].sp, lo, cfg->stackHi);
	    if (tramps[nTramp].cb == TP_ROOT_UNKNOWN) {
		tramps[nTramp].cb = 0;
	    }
	    tramps[nTramp].interp = !sure ? 0 : CursorLoc(&cursor,
		    &site->interp, tramps[nTramp].sp, lo, cfg->stackHi);
	    if (tramps[nTramp].interp == TP_ROOT_UNKNOWN) {
		tramps[nTramp].interp = 0;
	    }
	    nTramp++;
	}
	if (agree && n == stopAfter) {
	    /* The rest of pc[] is the fast trace's. */
	    slot->nTramp = (uint16_t) nTramp;
	    return 0;
	}
	n++;
	r = unw_step(&cursor);
    } while (r > 0 && n < (int) ring->maxPc);
    slot->nPc = (uint16_t) n;
    slot->nTramp = (uint16_t) nTramp;
    if (n == (int) ring->maxPc && r > 0) {
	slot->flags |= TP_SLOT_CTRUNC;
    }
    return r < 0 ? -1 : 0;
}
