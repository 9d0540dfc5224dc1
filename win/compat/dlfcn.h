/*
 * dlfcn.h (Windows build) --
 *
 *	The part of the dynamic loader's interface generic/ uses: dladdr
 *	(which module holds an address, and the nearest exported symbol
 *	below it), dladdr1 with RTLD_DL_SYMENT (the symbol's size: here the
 *	extent of the function's x64 unwind entry), dlopen/dlsym (only to
 *	look for an optional helper; LoadLibrary and GetProcAddress).
 *	Implemented in win/compat.c over the PE headers of loaded modules.
 */

#ifndef TP_COMPAT_DLFCN_H
#define TP_COMPAT_DLFCN_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *dli_fname;	/* Module path, '/' separated. */
    void *dli_fbase;		/* Its load address. */
    const char *dli_sname;	/* Nearest exported symbol below, or NULL. */
    void *dli_saddr;		/* Its address. */
} Dl_info;

typedef struct {
    uint64_t st_size;		/* Bytes of the function. */
} TpCompatSym;

#define RTLD_LAZY	1
#define RTLD_NOW	2
#define RTLD_LOCAL	0
#define RTLD_GLOBAL	0x100
#define RTLD_DL_SYMENT	1

MODULE_SCOPE int	TpCompatDladdr(const void *addr, Dl_info *info,
			    const TpCompatSym **symPtr);
MODULE_SCOPE void *	TpCompatDlopen(const char *name);
MODULE_SCOPE void *	TpCompatDlsym(void *handle, const char *name);

#define dladdr(addr, info)		TpCompatDladdr((addr), (info), NULL)
#define dladdr1(addr, info, extra, flags) \
	TpCompatDladdr((addr), (info), (const TpCompatSym **) (extra))
#define dlopen(name, flags)		TpCompatDlopen(name)
#define dlsym(handle, name)		TpCompatDlsym((handle), (name))
#define dlclose(handle)			0

#endif
