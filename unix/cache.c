/*
 * cache.c --
 *
 *	Files kept between runs, so that a process does not redo at every
 *	start the work that depends only on the libraries it loads:
 *	libtcl's symbol table recovered from its archive (symbol.c, 6-9 ms
 *	at the first report) and the modules' unwind rows (cfi.c, 1.5-2 ms
 *	each for libtcl and libc at profiler start).
 *
 *	A file holds a header, the key its maker gave (a description of
 *	what the body was made from, enough to tell when it no longer
 *	applies) and the body. It is used only when its key is the caller's
 *	byte for byte, its size is what the header says and its checksum
 *	matches; the maker then checks the body's shape as well. Files are
 *	written under a temporary name and renamed, so a reader never sees
 *	half a file. A cache that cannot be read or written costs only the
 *	work it would have saved; its files may be deleted at any time, and
 *	a write prunes the directory to a bound (CachePrune).
 *
 *	The directory is $TCLPROF_CACHE (an absolute path; empty or relative
 *	turns the cache off), else $XDG_CACHE_HOME/tclprof, else
 *	$HOME/.cache/tclprof.
 *
 *	The buffers files are read into and written from are mapped and
 *	unmapped here, not malloc'd: glibc's free of a chunk it mapped (any
 *	over 128 KB) raises its mmap and trim thresholds for the whole
 *	process, and a program whose heap grew and shrank through brk at
 *	every step no longer did (text processing ran twice as fast under
 *	the profiler as without it, its profile showing none of the kernel
 *	time its real runs spend).
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>
#include <time.h>

#define TP_CACHE_MAGIC	"TPCACHE\n"
#define TP_CACHE_FORMAT	1	/* The header's layout. */
#define TP_CACHE_MAXKEY	4096
#define TP_CACHE_MAXBODY (256u << 20)
#define TP_CACHE_MAXBYTES (64u << 20)	/* A write prunes the directory */
#define TP_CACHE_MAXFILES 128		/* to 3/4 of these, least recently
					 * used first. */
#define TP_CACHE_STALE_TMP 3600		/* Seconds after which a temporary
					 * file is a dead writer's. */
#define TP_CACHE_TOUCH	86400		/* A file read this many seconds
					 * after it was last marked used is
					 * marked again (its mtime). */

typedef struct CacheEntry {	/* CachePrune: one file of ours. */
    char name[NAME_MAX + 1];
    uint64_t size;
    int64_t mtime;
} CacheEntry;

static void	CachePrune(const char *path);

typedef struct CacheHead {	/* 32 bytes, no padding. */
    char magic[8];
    uint32_t format;
    uint32_t keyLen;
    uint64_t bodyLen;
    uint64_t checksum;		/* TpHash64 of the key, then the body. */
} CacheHead;

/*
 *----------------------------------------------------------------------
 *
 * TpHash64 --
 *
 *	A fast 64-bit hash of len bytes, continuing from h (start with
 *	TP_HASH_INIT): eight bytes a step. For checksums and content keys,
 *	not against an adversary.
 *
 * Results:
 *	The hash.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

uint64_t
TpHash64(
    uint64_t h,
    const void *data,
    size_t len)
{
    const unsigned char *p = data;
    uint64_t w;

    while (len >= 8) {
	memcpy(&w, p, 8);
	h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
	h ^= h >> 32;
	p += 8;
	len -= 8;
    }
    while (len-- > 0) {
	h = (h ^ *p++) * 0x100000001b3ULL;
    }
    return h ^ (h >> 29);
}

/*
 *----------------------------------------------------------------------
 *
 * TpCachePath --
 *
 *	The path of the cache file called name (a plain file name).
 *
 * Results:
 *	1 with path filled; 0 if there is no cache directory, or the path
 *	would not fit (with room for the temporary name's suffix).
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

int
TpCachePath(
    const char *name,
    char *path,
    size_t size)
{
    const char *dir = getenv("TCLPROF_CACHE"), *base;
    int n;

    if (strchr(name, '/') != NULL || name[0] == '\0' || name[0] == '.') {
	return 0;
    }
    if (dir != NULL) {
	if (dir[0] != '/') {
	    return 0;
	}
	n = snprintf(path, size, "%s/%s", dir, name);
    } else if ((base = getenv("XDG_CACHE_HOME")) != NULL && base[0] == '/') {
	n = snprintf(path, size, "%s/tclprof/%s", base, name);
    } else if ((base = getenv("HOME")) != NULL && base[0] == '/') {
	n = snprintf(path, size, "%s/.cache/tclprof/%s", base, name);
    } else {
	return 0;
    }
    return n > 0 && (size_t) n + 32 < size;
}

static void *
MapAnon(
    size_t len)
{
    void *p = mmap(NULL, len ? len : 1, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    return p == MAP_FAILED ? NULL : p;
}

static int
ReadAll(
    int fd,
    void *buf,
    size_t len)
{
    char *p = buf;

    while (len > 0) {
	ssize_t got = read(fd, p, len);

	if (got < 0 && errno == EINTR) {
	    continue;
	}
	if (got <= 0) {
	    return -1;
	}
	p += got;
	len -= (size_t) got;
    }
    return 0;
}

static int
WriteAll(
    int fd,
    const void *buf,
    size_t len)
{
    const char *p = buf;

    while (len > 0) {
	ssize_t put = write(fd, p, len);

	if (put < 0 && errno == EINTR) {
	    continue;
	}
	if (put <= 0) {
	    return -1;
	}
	p += put;
	len -= (size_t) put;
    }
    return 0;
}

/*
 *----------------------------------------------------------------------
 *
 * TpCacheRead, TpCacheRelease --
 *
 *	The body of the cache file at path, if its key is key and it is
 *	whole (size and checksum). TpCacheRelease gives the buffer back.
 *
 * Results:
 *	1 with b->body and b->len set (b->body 8-byte aligned when key is a
 *	multiple of 8 bytes long); 0 if there is no such file, or it fails
 *	a check.
 *
 * Side effects:
 *	Reads the file into a mapping of its own.
 *
 *----------------------------------------------------------------------
 */

int
TpCacheRead(
    const char *path,
    const void *key,
    size_t keyLen,
    TpCacheBlob *b)
{
    CacheHead h;
    struct stat st;
    char *buf = NULL;
    size_t size = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    memset(b, 0, sizeof(*b));
    if (fd < 0) {
	return 0;
    }
    if (keyLen > TP_CACHE_MAXKEY || fstat(fd, &st) != 0
	    || !S_ISREG(st.st_mode) || (uint64_t) st.st_size < sizeof(h)
	    || (uint64_t) st.st_size > sizeof(h) + keyLen + TP_CACHE_MAXBODY
	    || (buf = MapAnon(size = (size_t) st.st_size)) == NULL
	    || ReadAll(fd, buf, size) != 0) {
	goto fail;
    }
    memcpy(&h, buf, sizeof(h));
    if (memcmp(h.magic, TP_CACHE_MAGIC, sizeof(h.magic)) != 0
	    || h.format != TP_CACHE_FORMAT || h.keyLen != keyLen
	    || h.bodyLen != size - sizeof(h) - keyLen
	    || memcmp(buf + sizeof(h), key, keyLen) != 0
	    || TpHash64(TP_HASH_INIT, buf + sizeof(h), keyLen + h.bodyLen)
		!= h.checksum) {
	goto fail;
    }

    /*
     * Used: its mtime says so to the pruning of a later write (at most
     * once a day: a read costs no write).
     */

    if ((int64_t) time(NULL) - (int64_t) st.st_mtime > TP_CACHE_TOUCH) {
	(void) futimens(fd, NULL);
    }
    close(fd);
    b->map = buf;
    b->mapLen = size;
    b->body = buf + sizeof(h) + keyLen;
    b->len = (size_t) h.bodyLen;
    return 1;

  fail:
    if (buf != NULL) {
	munmap(buf, size);
    }
    close(fd);
    return 0;
}

void
TpCacheRelease(
    TpCacheBlob *b)
{
    if (b->map != NULL) {
	munmap(b->map, b->mapLen);
    }
    memset(b, 0, sizeof(*b));
}

/*
 *----------------------------------------------------------------------
 *
 * TpCacheWrite --
 *
 *	Writes the cache file at path: key, then the nParts parts of the
 *	body, making the directory if need be.
 *
 * Results:
 *	1 if written; 0 if not (the cache is only a shortcut: callers go
 *	on either way).
 *
 * Side effects:
 *	Creates the directory (mode 0700) and the file, under a temporary
 *	name renamed over any older one.
 *
 *----------------------------------------------------------------------
 */

int
TpCacheWrite(
    const char *path,
    const void *key,
    size_t keyLen,
    const void *const *parts,
    const size_t *lens,
    int nParts)
{
    CacheHead h;
    char tmp[PATH_MAX], *p, *all;
    size_t at, size;
    int i, fd, ok, n;

    memset(&h, 0, sizeof(h));
    memcpy(h.magic, TP_CACHE_MAGIC, sizeof(h.magic));
    h.format = TP_CACHE_FORMAT;
    h.keyLen = (uint32_t) keyLen;
    for (i = 0; i < nParts; i++) {
	h.bodyLen += lens[i];
    }
    if (keyLen > TP_CACHE_MAXKEY || h.bodyLen > TP_CACHE_MAXBODY) {
	return 0;
    }

    /*
     * The file's bytes in one buffer: the checksum covers key and body
     * as the reader sees them, contiguous.
     */

    size = sizeof(h) + keyLen + (size_t) h.bodyLen;
    if ((all = MapAnon(size)) == NULL) {
	return 0;
    }
    at = sizeof(h);
    memcpy(all + at, key, keyLen);
    at += keyLen;
    for (i = 0; i < nParts; i++) {
	if (lens[i] > 0) {
	    memcpy(all + at, parts[i], lens[i]);
	}
	at += lens[i];
    }
    h.checksum = TpHash64(TP_HASH_INIT, all + sizeof(h), at - sizeof(h));
    memcpy(all, &h, sizeof(h));
    ok = 0;
    n = snprintf(tmp, sizeof(tmp), "%s", path);
    if (n <= 0 || (size_t) n >= sizeof(tmp)) {
	goto done;
    }

    /* Each missing directory of the path, from the top. */
    for (p = strchr(tmp + 1, '/'); p != NULL; p = strchr(p + 1, '/')) {
	*p = '\0';
	if (mkdir(tmp, 0700) != 0 && errno != EEXIST) {
	    goto done;
	}
	*p = '/';
    }
    n = snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long) getpid());
    if (n <= 0 || (size_t) n >= sizeof(tmp)) {
	goto done;
    }
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
	goto done;
    }
    ok = WriteAll(fd, all, size) == 0;
    if (close(fd) != 0 || !ok || rename(tmp, path) != 0) {
	unlink(tmp);
	ok = 0;
    }
  done:
    munmap(all, size);
    if (ok) {
	CachePrune(path);
    }
    return ok;
}

/*
 *----------------------------------------------------------------------
 *
 * OurName --
 *
 *	Whether a file name is one the cache writes: cfi-*.rows or
 *	*-*.syms (kind 1), or the temporary name of one, *.rows.PID.tmp or
 *	*.syms.PID.tmp (kind 2).
 *
 * Results:
 *	0, 1 or 2.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static int
OurName(
    const char *name)
{
    size_t n = strlen(name), i;

    if (n > 4 && strcmp(name + n - 4, ".tmp") == 0) {
	i = n - 4;
	while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') {
	    i--;
	}
	if (i == n - 4 || i < 6 || name[i - 1] != '.') {
	    return 0;
	}
	return (strncmp(name + i - 6, ".rows", 5) == 0
		|| strncmp(name + i - 6, ".syms", 5) == 0) ? 2 : 0;
    }
    if (n > 9 && strncmp(name, "cfi-", 4) == 0
	    && strcmp(name + n - 5, ".rows") == 0) {
	return 1;
    }
    if (n > 6 && strcmp(name + n - 5, ".syms") == 0
	    && strchr(name, '-') != NULL) {
	return 1;
    }
    return 0;
}

/*
 *----------------------------------------------------------------------
 *
 * HasMagic --
 *
 *	Whether the file name in directory dfd begins as a cache file does.
 *
 * Results:
 *	1 or 0.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static int
HasMagic(
    int dfd,
    const char *name)
{
    char magic[sizeof(TP_CACHE_MAGIC) - 1];
    int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    int ok;

    if (fd < 0) {
	return 0;
    }
    ok = ReadAll(fd, magic, sizeof(magic)) == 0
	    && memcmp(magic, TP_CACHE_MAGIC, sizeof(magic)) == 0;
    close(fd);
    return ok;
}

static int
CompareAge(
    const void *a,
    const void *b)
{
    const CacheEntry *x = a, *y = b;

    return x->mtime < y->mtime ? -1 : x->mtime > y->mtime ? 1
	    : strcmp(x->name, y->name);
}

/*
 *----------------------------------------------------------------------
 *
 * CachePrune --
 *
 *	After a write of the file at path: keeps its directory's cache
 *	files under TP_CACHE_MAXBYTES and TP_CACHE_MAXFILES. Over either,
 *	the least recently used (oldest mtime: a read marks a file used)
 *	are deleted until both are at 3/4 of their bound; the file just
 *	written is kept. Temporary files of writers that died are deleted
 *	after TP_CACHE_STALE_TMP. Only files with the cache's names and
 *	its header are touched: the directory may be shared.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Deletes files.
 *
 *----------------------------------------------------------------------
 */

static void
CachePrune(
    const char *path)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/'), *self;
    CacheEntry *e = NULL;
    size_t n = 0, cap = 0, i, mapLen = 0;
    uint64_t total = 0;
    int64_t now = (int64_t) time(NULL);
    struct dirent *d;
    struct stat st;
    DIR *dp;
    int dfd, pass;

    if (slash == NULL || (size_t) (slash - path) >= sizeof(dir)) {
	return;
    }
    memcpy(dir, path, (size_t) (slash - path));
    dir[slash - path] = '\0';
    self = slash + 1;
    if ((dp = opendir(dir[0] ? dir : "/")) == NULL) {
	return;
    }
    dfd = dirfd(dp);

    /*
     * Two passes: count, then list into a mapping of that size (not the
     * heap: see the top of the file). Files made between the passes wait
     * for the next write.
     */

    for (pass = 0; pass < 2; pass++) {
	rewinddir(dp);
	while ((d = readdir(dp)) != NULL) {
	    int kind = OurName(d->d_name);

	    if (kind == 0 || fstatat(dfd, d->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) {
		continue;
	    }
	    if (kind == 2) {
		if (pass == 0 && now - (int64_t) st.st_mtime
			> TP_CACHE_STALE_TMP && HasMagic(dfd, d->d_name)) {
		    (void) unlinkat(dfd, d->d_name, 0);
		}
		continue;
	    }
	    if (pass == 0) {
		cap++;
		continue;
	    }
	    if (n == cap || strlen(d->d_name) > NAME_MAX) {
		continue;
	    }
	    strcpy(e[n].name, d->d_name);
	    e[n].size = (uint64_t) st.st_size;
	    e[n].mtime = (int64_t) st.st_mtime;
	    total += e[n].size;
	    n++;
	}
	if (pass == 0) {
	    if (cap == 0) {
		break;
	    }
	    mapLen = cap * sizeof(CacheEntry);
	    if ((e = MapAnon(mapLen)) == NULL) {
		break;
	    }
	}
    }
    if (e != NULL && (total > TP_CACHE_MAXBYTES || n > TP_CACHE_MAXFILES)) {
	size_t left = n;

	TpSort(e, n, sizeof(CacheEntry), CompareAge);
	for (i = 0; i < n && (total > TP_CACHE_MAXBYTES / 4 * 3
		|| left > TP_CACHE_MAXFILES / 4 * 3); i++) {
	    if (strcmp(e[i].name, self) == 0) {
		continue;
	    }
	    if (!HasMagic(dfd, e[i].name)
		    || unlinkat(dfd, e[i].name, 0) == 0) {
		/* Deleted, or not the cache's: not counted. */
		total -= e[i].size;
		left--;
	    }
	}
    }
    if (e != NULL) {
	munmap(e, mapLen);
    }
    closedir(dp);
}
