/*
 * sys/mman.h (Windows build) --
 *
 *	ring.c maps its buffer anonymously; here VirtualAlloc commits it
 *	(zero-filled, as an anonymous mapping is).
 */

#ifndef TP_COMPAT_MMAN_H
#define TP_COMPAT_MMAN_H

#include <stddef.h>

#define PROT_READ	1
#define PROT_WRITE	2
#define MAP_PRIVATE	2
#define MAP_ANONYMOUS	0x20
#define MAP_ANON	MAP_ANONYMOUS
#define MAP_POPULATE	0
#define MAP_NORESERVE	0
#define MAP_FAILED	((void *) -1)
#define MADV_DONTFORK	0

MODULE_SCOPE void *	TpCompatMmap(size_t size);
MODULE_SCOPE int	TpCompatMunmap(void *addr);
#define mmap(a, size, prot, flags, fd, off) TpCompatMmap(size)
#define munmap(addr, size) TpCompatMunmap(addr)
#define madvise(addr, size, advice) 0
#define mlock(addr, size) 0

#endif
