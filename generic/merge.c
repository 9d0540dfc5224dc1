/*
 * merge.c --
 *
 *	Turns one ring slot into one stack of the profile: C frames and Tcl
 *	frames merged in true calling order.
 *
 *	Tcl 8.6 evaluates without a C frame per Tcl level: every entry from
 *	C into Tcl adds exactly one TclNRRunCallbacks frame (the trampoline),
 *	and all Tcl frames run by that entry share it (DESIGN.md). So the
 *	Tcl frames of a sample are spliced in right after the trampoline that
 *	runs them. Which trampoline runs which Tcl frame is decided by the
 *	frame's anchor, recorded when the sample was taken:
 *
 *	  frames mode: the SP of the owning trampoline frame, chosen in the
 *	    handler by interp.c (which decides ownership with the NRE root
 *	    each trampoline keeps in the calibrated register);
 *	  trace mode: the stack address the enter trace computed, equal to
 *	    the SP of the owning trampoline frame.
 *
 *	Equality is exact: SP ranges do not work, nested trampolines can be
 *	0x30 bytes apart. A frame whose anchor matches no trampoline follows
 *	the frame before it (DESIGN.md's rule, held in all 28 scenarios).
 *	With a single trampoline no anchor is needed, and the handler did not
 *	collect any.
 *
 *	A sample whose Tcl frames cannot be placed (Tcl frames but no
 *	trampoline, anchors going backwards, or a trampoline missing from
 *	the C stack, TP_SLOT_NOTRAMP) is kept under a
 *	"[merge-mismatch]" pseudo-frame and counted; it is never dropped.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include <stdlib.h>

/*
 *----------------------------------------------------------------------
 *
 * TpMergeSlot --
 *
 *	Merges a slot and adds the resulting stack to the profile.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Adds locations and a sample to p; updates p's counters. Every
 *	counter adds the sample's weight, the ticks it stands for, as
 *	p->samples does: a share of samples is then a share of time.
 *
 *----------------------------------------------------------------------
 */

void
TpMergeSlot(
    TpProfile *p,
    const TpRing *ring,
    TpSlot *slot,
    const TpUnwindConfig *cfg)
{
    uintptr_t *pcs = TpSlotPcs(ring, slot);
    TpTramp *tramps = TpSlotTramps(ring, slot);
    TpTclRaw *tcl = TpSlotTcl(ring, slot);
    const char *str = TpSlotStr(ring, slot);
    int nPc = slot->nPc, nTramp = slot->nTramp, nTcl = slot->nTcl;
    int *owner;			/* Per Tcl frame (root first): index of its
				 * trampoline in root-first order. */
    uint32_t *ids;
    uint32_t weight = slot->weight ? slot->weight : 1;
    int i, j, n = 0, mismatch = 0, next;
    size_t cap = (size_t) nPc + (size_t) nTcl + 4;

    (void) cfg;
    ids = malloc(sizeof(uint32_t) * cap);
    owner = malloc(sizeof(int) * ((size_t) nTcl + 1));
    if (ids == NULL || owner == NULL) {
	Tcl_Panic("tclprof: out of memory");
    }

    /*
     * Place each Tcl frame, outermost first. tcl[] and tramp[] are both
     * innermost first; root-first index of tcl[k] is nTcl-1-k, of
     * tramp[t] it is nTramp-1-t.
     */

    if ((nTcl > 0 && nTramp == 0) || (slot->flags & TP_SLOT_NOTRAMP)) {
	mismatch = 1;
    }
    for (i = 0; i < nTcl && !mismatch; i++) {
	const TpTclRaw *f = &tcl[nTcl - 1 - i];
	int found = -1;

	if (f->anchor == TP_ANCHOR_LEAF) {
	    found = nTramp;	/* Below the C leaf (left over). */
	} else if (nTramp == 1) {
	    found = 0;
	} else if (f->anchor != 0) {
	    for (j = 0; j < nTramp; j++) {
		const TpTramp *t = &tramps[nTramp - 1 - j];
		if (t->sp == f->anchor) {
		    found = j;
		    break;
		}
	    }
	}
	if (found < 0) {
	    found = i > 0 ? owner[i - 1] : 0;
	} else if (i > 0 && found < owner[i - 1]) {
	    mismatch = 1;
	}
	owner[i] = found;
    }

    if (slot->flags & (TP_SLOT_CTRUNC | TP_SLOT_TCLTRUNC)) {
	ids[n++] = TpProfilePseudoLoc(p, "[truncated]");
	p->truncated += weight;
    }
    if (mismatch) {
	ids[n++] = TpProfilePseudoLoc(p, "[merge-mismatch]");
	p->mergeMismatch += weight;
    }

    /*
     * Emit C frames root first; after trampoline j, the Tcl frames it
     * owns. On a mismatch the Tcl frames go first, under the pseudo-frame,
     * and the C stack follows unmerged.
     */

    next = 0;
    if (mismatch) {
	for (i = 0; i < nTcl; i++) {
	    const TpTclRaw *f = &tcl[nTcl - 1 - i];

	    ids[n++] = TpProfileTclLoc(p, f->type, str + f->nameOff,
		    f->nameLen, f->fileLen ? str + f->fileOff : NULL,
		    f->fileLen, f->line);
	}
	next = nTcl;
    }
    for (i = nPc - 1, j = 0; i >= 0; i--) {
	ids[n++] = TpProfileCLoc(p, pcs[i], i != 0);
	if (j < nTramp && (int) tramps[nTramp - 1 - j].index == i) {
	    while (next < nTcl && owner[next] == j) {
		const TpTclRaw *f = &tcl[nTcl - 1 - next];

		ids[n++] = TpProfileTclLoc(p, f->type, str + f->nameOff,
			f->nameLen, f->fileLen ? str + f->fileOff : NULL,
			f->fileLen, f->line);
		next++;
	    }
	    j++;
	}
    }

    /*
     * Tcl frames left over (their trampoline was cut off the C stack, or
     * no C stack at all): keep them at the leaf end rather than lose them.
     */

    while (next < nTcl) {
	const TpTclRaw *f = &tcl[nTcl - 1 - next];

	ids[n++] = TpProfileTclLoc(p, f->type, str + f->nameOff, f->nameLen,
		f->fileLen ? str + f->fileOff : NULL, f->fileLen, f->line);
	next++;
    }
    if (slot->flags & TP_SLOT_UNWERR) {
	p->unwindErrors += weight;
    }
    if (slot->flags & TP_SLOT_FALLBACK) {
	p->unwindFallback += weight;
    }
    if (slot->flags & TP_SLOT_UNWCHECK) {
	p->unwindCheckMismatch += weight;
    }
    p->handlerNsSum += slot->handlerNs;
    p->handled++;
    if (slot->handlerNs > p->handlerNsMax) {
	p->handlerNsMax = slot->handlerNs;
    }
    TpProfileAddStackWeighted(p, ids, (uint32_t) n, slot->tid, slot->timeNs,
	    weight);
    free(ids);
    free(owner);
}
