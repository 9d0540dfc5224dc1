/*
 * ring.c --
 *
 *	The sample ring: a preallocated byte buffer of variable-length
 *	records written by the signal handler and read by the drain. Seed
 *	002's point: a ring of raw samples, not a histogram, so the handler
 *	only copies and everything costly happens later, outside it.
 *
 *	Why records and not slots. A sample's worst case (-maxdepth C and
 *	Tcl frames, 64 trampolines, every name distinct) is about 16 KB, its
 *	usual size 1-2 KB. Fixed slots sized for the worst case made 4096
 *	samples cost 68 MB of resident memory; a byte ring of a few MB holds
 *	as many usual samples and never more memory whatever the run length.
 *
 *	How a sample travels. The handler fills the *scratch slot*, one
 *	worst-case slot with the fixed layout every writer knows (TpSlotPcs
 *	and friends); it is reused for every sample, so it stays in cache.
 *	TpRingCommit then copies the used part of each array, back to back,
 *	into the ring as one record. The drain copies a record back out into
 *	its own *read slot* with the same fixed layout, so merging code sees
 *	slots, never records.
 *
 *	Record layout (8-byte aligned): a TpRecHdr (total length), the
 *	TpSlot header, nPc PCs, nTramp trampolines, nTcl raw Tcl frames,
 *	strUsed string bytes. A record never wraps: when it does not fit
 *	before the end of the buffer a wrap marker is written there and the
 *	record starts at offset 0.
 *
 *	One producer (the handler, on the sampled thread; the recursion
 *	guard makes it single) and one consumer (the drain, under the
 *	session lock). head and tail are free-running byte counters: the
 *	producer owns head, the consumer owns tail; each reads the other's
 *	with acquire ordering and publishes its own with release ordering. A
 *	full ring drops the new sample and counts it: the handler never
 *	waits. One exception to "the consumer owns tail": when the producer
 *	finds the ring empty it starts again at offset 0 and moves tail
 *	with head (TpRingCommit).
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include <string.h>
#include <sys/mman.h>

#define TP_ALIGN(n, a)	(((n) + ((a) - 1)) & ~((size_t) (a) - 1))

/*
 * The header of a record in the ring.
 */

typedef struct TpRecHdr {
    uint32_t size;		/* Bytes of the whole record, header
				 * included, a multiple of 8; TP_REC_WRAP
				 * for the wrap marker. */
    uint32_t spare;
} TpRecHdr;

#define TP_REC_WRAP	0xffffffffu

/*
 * Bytes at the start of the buffer touched at once (TpRingInit): a few
 * usual samples' worth, what the ring holds while the drain keeps up.
 */

#define TP_RING_TOUCHED	(64 * 1024)

/*
 *----------------------------------------------------------------------
 *
 * TpRingInit --
 *
 *	Lays out a slot for stacks of up to maxDepth C frames and maxDepth
 *	Tcl frames, and allocates a ring of about nBytes bytes plus the
 *	producer's scratch slot and the consumer's read slot. The slots and
 *	the start of the ring are touched now; the rest only if a backlog
 *	reaches it.
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
    size_t nBytes,
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

    /*
     * The largest record must fit, with room to spare, or a single deep
     * sample could never be stored.
     */

    nBytes = TP_ALIGN(nBytes, 4096);
    if (nBytes < 4 * ring->slotSize) {
	nBytes = TP_ALIGN(4 * ring->slotSize, 4096);
    }
    ring->size = nBytes;
    ring->memSize = nBytes + 2 * ring->slotSize;
    ring->mem = mmap(NULL, ring->memSize, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ring->mem == MAP_FAILED) {
	ring->mem = NULL;
	return -1;
    }
    ring->scratch = (TpSlot *) (ring->mem + nBytes);
    ring->readSlot = (TpSlot *) (ring->mem + nBytes + ring->slotSize);

    /*
     * Touched now: the two slots, and the start of the buffer, where the
     * records stay while the drain keeps up (TpRingCommit). The rest is
     * touched only by a backlog: a page fault in the handler then (safe,
     * only slower), and resident memory grows only as far as a backlog
     * ever reached.
     */

    memset(ring->scratch, 0, 2 * ring->slotSize);
    memset(ring->mem, 0, nBytes < TP_RING_TOUCHED ? nBytes : TP_RING_TOUCHED);
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
 *	Gives the producer the scratch slot, reset to empty. Whether the
 *	sample fits is known only at TpRingCommit, once its size is; a ring
 *	without room even for an empty record refuses at once.
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
    TpSlot *slot = ring->scratch;

    if (ring->size - (head - tail) < sizeof(TpRecHdr) + sizeof(TpSlot)) {
	__atomic_add_fetch(&ring->dropped, 1, __ATOMIC_RELAXED);
	return NULL;
    }
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
 *	Copies the scratch slot obtained from TpRingReserve into the ring
 *	as one record and publishes it.
 *
 * Results:
 *	1 if the sample was stored, 0 if the ring had no room for it (the
 *	drop is counted).
 *
 * Side effects:
 *	Writes the record (and a wrap marker when needed); advances head
 *	(release: the record's contents are visible first).
 *
 * Signal safety:
 *	Safe: memcpy is async-signal-safe (POSIX.1-2016), the rest are
 *	atomics and stores into preallocated memory.
 *
 *----------------------------------------------------------------------
 */

int
TpRingCommit(
    TpRing *ring)
{
    uint64_t head = __atomic_load_n(&ring->head, __ATOMIC_RELAXED);
    uint64_t tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
    TpSlot *slot = ring->scratch;
    size_t nPcB = sizeof(uintptr_t) * slot->nPc;
    size_t nTrB = sizeof(TpTramp) * slot->nTramp;
    size_t nTclB = sizeof(TpTclRaw) * slot->nTcl;
    size_t size = sizeof(TpRecHdr) + TP_ALIGN(sizeof(TpSlot), 8) + nPcB
	    + nTrB + nTclB + TP_ALIGN(slot->strUsed, 8);
    size_t pos = (size_t) (head % ring->size);
    size_t skip = 0;
    char *rec;

    if (head == tail && pos >= size) {
	/*
	 * The ring is empty (the drain holds no record: it advances tail to
	 * head only by releasing the last one). Start again at 0, so that
	 * while the drain keeps up records stay at the start of the buffer
	 * and only a backlog touches the rest of it. tail moves past the
	 * skipped bytes with head, so the whole ring is free at once; this
	 * is the one store to tail the producer makes. A drain that read
	 * tail before this store passes the marker to the same value (the
	 * marker survives: the record ends before it).
	 */

	((TpRecHdr *) (ring->mem + pos))->size = TP_REC_WRAP;
	head += ring->size - pos;
	tail = head;
	__atomic_store_n(&ring->tail, tail, __ATOMIC_RELEASE);
	pos = 0;
    } else if (ring->size - pos < size) {
	skip = ring->size - pos;	/* Wrap: the record starts at 0. */
    }
    if (ring->size - (head - tail) < size + skip) {
	__atomic_add_fetch(&ring->dropped, 1, __ATOMIC_RELAXED);
	return 0;
    }
    if (skip) {
	((TpRecHdr *) (ring->mem + pos))->size = TP_REC_WRAP;
	pos = 0;
    }
    rec = ring->mem + pos;
    ((TpRecHdr *) rec)->size = (uint32_t) size;
    rec += sizeof(TpRecHdr);
    memcpy(rec, (const char *) slot, TP_ALIGN(sizeof(TpSlot), 8));
    rec += TP_ALIGN(sizeof(TpSlot), 8);
    memcpy(rec, (const char *) TpSlotPcs(ring, slot), nPcB);
    rec += nPcB;
    memcpy(rec, (const char *) TpSlotTramps(ring, slot), nTrB);
    rec += nTrB;
    memcpy(rec, (const char *) TpSlotTcl(ring, slot), nTclB);
    rec += nTclB;
    memcpy(rec, TpSlotStr(ring, slot), slot->strUsed);
    __atomic_store_n(&ring->head, head + skip + size, __ATOMIC_RELEASE);
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * TpRingPeek, TpRingRelease --
 *
 *	The consumer's side: copy the oldest published record into the
 *	read slot and return it, then give the record back.
 *
 * Results:
 *	TpRingPeek: the read slot, or NULL when the ring is empty.
 *
 * Side effects:
 *	TpRingPeek passes wrap markers (advancing tail) and fills the read
 *	slot; TpRingRelease advances tail past the record.
 *
 *----------------------------------------------------------------------
 */

TpSlot *
TpRingPeek(
    TpRing *ring)
{
    uint64_t head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
    uint64_t tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
    TpSlot *slot = ring->readSlot;
    size_t pos;
    const char *rec;

    /*
     * head first: a head that shows the producer's restart at 0 makes
     * its store to tail visible (TpRingCommit). A tail past head is a
     * restart whose record head does not show yet: nothing to read.
     */

    if ((int64_t) (head - tail) <= 0) {
	return NULL;
    }
    pos = (size_t) (tail % ring->size);
    if (((TpRecHdr *) (ring->mem + pos))->size == TP_REC_WRAP) {
	tail += ring->size - pos;
	__atomic_store_n(&ring->tail, tail, __ATOMIC_RELEASE);
	pos = 0;
    }
    rec = ring->mem + pos;
    ring->readSize = ((const TpRecHdr *) rec)->size;
    rec += sizeof(TpRecHdr);
    memcpy(slot, rec, sizeof(TpSlot));
    rec += TP_ALIGN(sizeof(TpSlot), 8);
    memcpy(TpSlotPcs(ring, slot), rec, sizeof(uintptr_t) * slot->nPc);
    rec += sizeof(uintptr_t) * slot->nPc;
    memcpy(TpSlotTramps(ring, slot), rec, sizeof(TpTramp) * slot->nTramp);
    rec += sizeof(TpTramp) * slot->nTramp;
    memcpy(TpSlotTcl(ring, slot), rec, sizeof(TpTclRaw) * slot->nTcl);
    rec += sizeof(TpTclRaw) * slot->nTcl;
    memcpy(TpSlotStr(ring, slot), rec, slot->strUsed);
    return slot;
}

void
TpRingRelease(
    TpRing *ring)
{
    uint64_t tail = __atomic_load_n(&ring->tail, __ATOMIC_RELAXED);

    __atomic_store_n(&ring->tail, tail + ring->readSize, __ATOMIC_RELEASE);
}

/*
 *----------------------------------------------------------------------
 *
 * TpRingUsed --
 *
 *	Bytes of the ring holding records not yet drained.
 *
 * Results:
 *	The count.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

size_t
TpRingUsed(
    TpRing *ring)
{
    uint64_t head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
    uint64_t tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);

    /* As TpRingPeek reads them: tail past head is an empty ring. */
    return (int64_t) (head - tail) > 0 ? (size_t) (head - tail) : 0;
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
