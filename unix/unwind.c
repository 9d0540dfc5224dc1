/*
 * unwind.c --
 *
 *	The C half of a sample: libunwind called from the SIGPROF handler.
 *
 *	Two paths (DESIGN.md): unw_backtrace gives instruction pointers only,
 *	for about 0.5 us per 40 frames; the cursor (unw_step) also gives each
 *	frame's registers but costs about 17 us. Registers are needed only to
 *	split the Tcl stack between several TclNRRunCallbacks frames, so the
 *	cursor runs only when the cheap trace found more than one of them.
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

static int CursorUnwind(const TpUnwindConfig *cfg, void *ucontext,
	const TpRing *ring, TpSlot *slot, int known);

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
    uintptr_t *pcs = TpSlotPcs(ring, slot);
    TpTramp *tramps = TpSlotTramps(ring, slot);
    ucontext_t *uc = ucontext;
    uintptr_t ip = (uintptr_t) uc->uc_mcontext.gregs[REG_RIP];
    int n, i, skip = -1, nTramp = 0;

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
	if (pcs[i] >= cfg->trampLo && pcs[i] < cfg->trampHi) {
	    if (nTramp < TP_MAX_TRAMP) {
		tramps[nTramp].index = (uint32_t) i;
		tramps[nTramp].sp = 0;
		tramps[nTramp].root = 0;
	    }
	    nTramp++;
	}
    }
    if (nTramp > 1 && cfg->wantTrampRegs) {
	/*
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
    unw_cursor_t cursor;
    unw_word_t ip, sp, reg;
    int n = 0, nTramp = 0, r = 0, i, stopAfter = -1, agree = 1;

    /*
     * The outermost trampoline of the fast trace, if known.
     */

    for (i = 0; i < known; i++) {
	if (pcs[i] >= cfg->trampLo && pcs[i] < cfg->trampHi) {
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
	if (ip >= cfg->trampLo && ip < cfg->trampHi && nTramp < TP_MAX_TRAMP) {
	    tramps[nTramp].index = (uint32_t) n;
	    tramps[nTramp].sp = 0;
	    tramps[nTramp].root = 0;
	    if (unw_get_reg(&cursor, UNW_REG_SP, &sp) == 0) {
		tramps[nTramp].sp = (uintptr_t) sp;
	    }
	    if (cfg->rootReg >= 0
		    && unw_get_reg(&cursor, cfg->rootReg, &reg) == 0) {
		tramps[nTramp].root = (uintptr_t) reg;
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
