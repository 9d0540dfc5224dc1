/*
 * ring.c --
 *
 *	The sample ring: a preallocated, pre-faulted array of fixed-size
 *	slots written by the signal handler and read by the drain. Seed 002's
 *	point: a ring of raw samples, not a histogram, so the handler only
 *	copies and everything costly happens later, outside it.
 *
 *	One producer (the handler, on the sampled thread; the recursion
 *	guard makes it single) and one consumer (the drain, under the session
 *	lock). head and tail are free-running counters: the producer owns
 *	head, the consumer owns tail; each reads the other's with acquire
 *	ordering and publishes its own with release ordering. A full ring
 *	drops the new sample and counts it: the handler never waits.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include <string.h>
#include <sys/mman.h>

#define TP_ALIGN(n, a)	(((n) + ((a) - 1)) & ~((size_t) (a) - 1))

/*
 *----------------------------------------------------------------------
 *
 * TpRingInit --
 *
 *	Lays out and allocates a ring of nSlots slots for stacks of up to
 *	maxDepth C frames and maxDepth Tcl frames. The memory is touched
 *	now (MAP_POPULATE) so the handler never takes a first-touch fault.
 *
 * Results:
 *	0 on success, -1 if the memory could not be had.
 *
 * Side effects:
 *	Maps memory; fills in *ring.
 *
 *----------------------------------------------------------------------
 */

int
TpRingInit(
    TpRing *ring,
    uint32_t nSlots,
    uint32_t maxDepth)
{
    size_t off;
    uint32_t strBytes;

    memset(ring, 0, sizeof(*ring));
    /*
     * Names are de-duplicated per slot, so 16 bytes per frame covers the
     * usual stack; a recursion of distinct long names is cut and flagged.
     */
    strBytes = maxDepth * 16;
    if (strBytes < 2048) {
	strBytes = 2048;
    }
    if (strBytes > 65000) {
	strBytes = 65000;
    }
    off = TP_ALIGN(sizeof(TpSlot), 16);
    ring->offPc = off;
    off += TP_ALIGN(sizeof(uintptr_t) * maxDepth, 16);
    ring->offTramp = off;
    off += sizeof(TpTramp) * TP_MAX_TRAMP;
    ring->offTcl = off;
    off += TP_ALIGN(sizeof(TpTclRaw) * maxDepth, 16);
    ring->offStr = off;
    off += strBytes;
    ring->slotSize = TP_ALIGN(off, 64);
    ring->maxPc = maxDepth;
    ring->maxTcl = maxDepth;
    ring->strBytes = strBytes;
    ring->nSlots = nSlots;
    ring->memSize = ring->slotSize * nSlots;
    ring->mem = mmap(NULL, ring->memSize, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (ring->mem == MAP_FAILED) {
	ring->mem = NULL;
	return -1;
    }
    return 0;
}

/*
 *----------------------------------------------------------------------
 *
 * TpRingFree --
 *
 *	Releases the ring's memory. The caller has made sure no handler
 *	can be running (TpSignalQuiesce).
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Unmaps memory.
 *
 *----------------------------------------------------------------------
 */

void
TpRingFree(
    TpRing *ring)
{
    if (ring->mem != NULL) {
	munmap(ring->mem, ring->memSize);
	ring->mem = NULL;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * TpRingReserve --
 *
 *	Gives the producer the next free slot, reset to empty.
 *
 * Results:
 *	The slot, or NULL when the ring is full (the drop is counted).
 *
 * Side effects:
 *	May increment ring->dropped.
 *
 * Signal safety:
 *	Safe: atomics and stores into preallocated memory only.
 *
 *----------------------------------------------------------------------
 */

TpSlot *
TpRingReserve(
    TpRing *ring)
{
    uint64_t head = __atomic_load_n(&ring->head, __ATOMIC_RELAXED);
    uint64_t tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
    TpSlot *slot;

    if (head - tail >= ring->nSlots) {
	__atomic_add_fetch(&ring->dropped, 1, __ATOMIC_RELAXED);
	return NULL;
    }
    slot = (TpSlot *) (ring->mem + (head % ring->nSlots) * ring->slotSize);
    slot->nPc = slot->nTramp = slot->nTcl = slot->strUsed = 0;
    slot->flags = 0;
    slot->mode = TP_MODE_NONE;
    return slot;
}

/*
 *----------------------------------------------------------------------
 *
 * TpRingCommit --
 *
 *	Publishes the slot obtained from TpRingReserve.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Advances head (release: the slot's contents are visible first).
 *
 * Signal safety:
 *	Safe.
 *
 *----------------------------------------------------------------------
 */

void
TpRingCommit(
    TpRing *ring)
{
    uint64_t head = __atomic_load_n(&ring->head, __ATOMIC_RELAXED);

    __atomic_store_n(&ring->head, head + 1, __ATOMIC_RELEASE);
}

/*
 *----------------------------------------------------------------------
 *
 * TpRingPeek, TpRingRelease --
 *
 *	The consumer's side: look at the oldest published slot, then give
 *	it back.
 *
 * Results:
 *	TpRingPeek: the slot or NULL when the ring is empty.
 *
 * Side effects:
 *	TpRingRelease advances tail.
 *
 *----------------------------------------------------------------------
 */

TpSlot *
TpRingPeek(
    TpRing *ring)
{
    uint64_t tail = __atomic_load_n(&ring->tail, __ATOMIC_RELAXED);
    uint64_t head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);

    if (tail == head) {
	return NULL;
    }
    return (TpSlot *) (ring->mem + (tail % ring->nSlots) * ring->slotSize);
}

void
TpRingRelease(
    TpRing *ring)
{
    uint64_t tail = __atomic_load_n(&ring->tail, __ATOMIC_RELAXED);

    __atomic_store_n(&ring->tail, tail + 1, __ATOMIC_RELEASE);
}

/*
 *----------------------------------------------------------------------
 *
 * TpSlotPutStr --
 *
 *	Copies a name into the slot's string area. Names longer than
 *	TP_NAME_MAX are cut; when the area is full nothing is copied.
 *
 * Results:
 *	1 if the bytes were stored (possibly cut), 0 if the area is full.
 *
 * Side effects:
 *	Fills *off and *outLen; advances slot->strUsed.
 *
 * Signal safety:
 *	Safe: a bounded byte copy into preallocated memory. src must be
 *	readable for len bytes (the caller validated it).
 *
 *----------------------------------------------------------------------
 */

int
TpSlotPutStr(
    const TpRing *ring,
    TpSlot *slot,
    const char *src,
    size_t len,
    uint16_t *off,
    uint16_t *outLen)
{
    char *dst;
    size_t i;

    if (len > TP_NAME_MAX) {
	len = TP_NAME_MAX;
    }
    if (slot->strUsed + len > ring->strBytes) {
	*off = 0;
	*outLen = 0;
	return 0;
    }
    dst = TpSlotStr(ring, slot) + slot->strUsed;
    for (i = 0; i < len; i++) {
	dst[i] = src[i];
    }
    *off = slot->strUsed;
    *outLen = (uint16_t) len;
    slot->strUsed += (uint16_t) len;
    return 1;
}
