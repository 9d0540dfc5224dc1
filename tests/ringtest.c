/*
 * ringtest.c --
 *
 *	Standalone test of generic/ring.c: one producer thread and one
 *	consumer thread, as the signal handler and the drain use the ring.
 *	The producer writes records of random sizes whose contents follow
 *	from a sequence number; the consumer checks that every record it
 *	reads is whole, in order, and right, and that no record is lost
 *	except those counted as dropped. The consumer pauses now and then
 *	(a backlog, wraps at the end of the buffer) and now and then keeps
 *	up (the producer's restarts at offset 0). First, on one thread,
 *	that a ring drained after every few records keeps them at the start
 *	of the buffer. Build and run from the top of the source tree:
 *
 *	gcc -O2 -g -Wall -Wextra -Igeneric -I/usr/include/tcl8.6 \
 *	    -o ringtest tests/ringtest.c -lpthread && ./ringtest
 *
 *	Exits 1 on any failure.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#ifndef MODULE_SCOPE
#define MODULE_SCOPE extern
#endif
#include "../generic/ring.c"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N_RECORDS	400000

static TpRing ring;
static volatile int producerDone;
static uint64_t committed;	/* Records the producer published. */

/*
 * A cheap generator per thread, so both sides agree on a record's
 * contents from its sequence number alone.
 */

static uint32_t
Mix(
    uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (uint32_t) x;
}

static void
Fill(
    TpSlot *slot,
    uint64_t seq)
{
    uint32_t h = Mix(seq), i;
    uintptr_t *pcs = TpSlotPcs(&ring, slot);
    char *str = TpSlotStr(&ring, slot);

    slot->timeNs = seq;
    slot->nPc = h % ring.maxPc;
    slot->nTcl = 0;
    slot->nTramp = 0;
    slot->strUsed = (h >> 8) % 200;
    for (i = 0; i < slot->nPc; i++) {
	pcs[i] = (uintptr_t) (seq * 31 + i);
    }
    for (i = 0; i < slot->strUsed; i++) {
	str[i] = (char) (seq + i);
    }
}

static int
Check(
    const TpSlot *slot,
    uint64_t seq)
{
    uint32_t h = Mix(seq), i;
    const uintptr_t *pcs = TpSlotPcs(&ring, (TpSlot *) slot);
    const char *str = TpSlotStr(&ring, (TpSlot *) slot);

    if (slot->timeNs != seq || slot->nPc != h % ring.maxPc
	    || slot->strUsed != (h >> 8) % 200) {
	return 0;
    }
    for (i = 0; i < slot->nPc; i++) {
	if (pcs[i] != (uintptr_t) (seq * 31 + i)) {
	    return 0;
	}
    }
    for (i = 0; i < slot->strUsed; i++) {
	if (str[i] != (char) (seq + i)) {
	    return 0;
	}
    }
    return 1;
}

static void *
Producer(
    void *arg)
{
    uint64_t seq = 0;
    int i;

    (void) arg;
    for (i = 0; i < N_RECORDS; i++) {
	TpSlot *slot = TpRingReserve(&ring);

	if (slot != NULL) {
	    Fill(slot, seq);
	    if (TpRingCommit(&ring)) {
		seq++;
	    }
	}
	if (i < N_RECORDS / 8) {
	    /* Phase 1: slow enough for the consumer to keep up. */
	    struct timespec ts = {0, 2000};

	    nanosleep(&ts, NULL);
	} else if (i % 64 == 0) {
	    sched_yield();
	}
    }
    __atomic_store_n(&committed, seq, __ATOMIC_RELEASE);
    __atomic_store_n(&producerDone, 1, __ATOMIC_RELEASE);
    return NULL;
}

/*
 * One thread: up to 3 records, then drain; the records must stay within
 * the first 3 worst-case records' bytes of the buffer.
 */

static int
KeptUp(void)
{
    uint64_t seq = 0, got = 0, maxPos = 0;
    int round, k;

    for (round = 0; round < 20000; round++) {
	for (k = 0; k <= round % 3; k++) {
	    TpSlot *slot = TpRingReserve(&ring);

	    if (slot == NULL) {
		return 0;
	    }
	    Fill(slot, seq);
	    if (!TpRingCommit(&ring)) {
		return 0;
	    }
	    seq++;
	    if (ring.head % ring.size > maxPos) {
		maxPos = ring.head % ring.size;
	    }
	}
	while (TpRingPeek(&ring) != NULL) {
	    if (!Check(ring.readSlot, got++)) {
		return 0;
	    }
	    TpRingRelease(&ring);
	}
    }
    printf("ringtest: drained as it goes, %llu records reached byte %llu "
	    "of %llu\n", (unsigned long long) got,
	    (unsigned long long) maxPos, (unsigned long long) ring.size);
    return got == seq && maxPos <= 3 * ring.slotSize + 64;
}

int
main(void)
{
    pthread_t t;
    uint64_t seq = 0, bad = 0;
    int pause = 0;

    if (TpRingInit(&ring, 256 * 1024, 256) != 0) {
	fprintf(stderr, "ringtest: TpRingInit failed\n");
	return 1;
    }
    if (!KeptUp()) {
	fprintf(stderr, "ringtest: FAILED: records lost, wrong, or not kept at "
		"the start of a ring drained as it goes\n");
	return 1;
    }
    TpRingFree(&ring);
    if (TpRingInit(&ring, 256 * 1024, 256) != 0) {
	fprintf(stderr, "ringtest: TpRingInit failed\n");
	return 1;
    }
    pthread_create(&t, NULL, Producer, NULL);
    for (;;) {
	TpSlot *slot = TpRingPeek(&ring);

	if (slot == NULL) {
	    if (__atomic_load_n(&producerDone, __ATOMIC_ACQUIRE)
		    && TpRingPeek(&ring) == NULL) {
		break;
	    }
	    if (seq > N_RECORDS / 8 && ++pause % 50 == 0) {
		/* Phase 2: a backlog now and then. */
		struct timespec ts = {0, 3000000};

		nanosleep(&ts, NULL);
	    }
	    continue;
	}
	if (!Check(slot, seq)) {
	    if (bad++ < 5) {
		fprintf(stderr, "ringtest: record %llu wrong (got seq %llu)\n",
			(unsigned long long) seq,
			(unsigned long long) slot->timeNs);
	    }
	}
	seq++;
	TpRingRelease(&ring);
    }
    pthread_join(t, NULL);
    printf("ringtest: two threads, %llu records, %llu dropped, %llu wrong\n",
	    (unsigned long long) seq, (unsigned long long) ring.dropped,
	    (unsigned long long) bad);
    if (bad != 0 || seq != committed || seq + ring.dropped != N_RECORDS
	    || ring.head < 4 * ring.size) {
	fprintf(stderr, "ringtest: FAILED (%llu committed)\n",
		(unsigned long long) committed);
	return 1;
    }
    TpRingFree(&ring);
    return 0;
}
