/*
 * link.h (Windows build) --
 *
 *	dl_iterate_phdr over the loaded modules: each PE image is shown as
 *	one loadable segment covering the whole image.
 */

#ifndef TP_COMPAT_LINK_H
#define TP_COMPAT_LINK_H

#include <stddef.h>
#include <stdint.h>
#include "dlfcn.h"

#define ElfW(type)	TpCompatElf_##type
#define PT_LOAD		1

typedef TpCompatSym TpCompatElf_Sym;

typedef struct {
    uint32_t p_type;
    uintptr_t p_vaddr;
    uintptr_t p_memsz;
} TpCompatElf_Phdr;

struct dl_phdr_info {
    uintptr_t dlpi_addr;
    const char *dlpi_name;
    const TpCompatElf_Phdr *dlpi_phdr;
    uint16_t dlpi_phnum;
};

MODULE_SCOPE int	TpCompatIteratePhdr(int (*fn)(struct dl_phdr_info *,
			    size_t, void *), void *cd);
#define dl_iterate_phdr(fn, cd)	TpCompatIteratePhdr((fn), (cd))

#endif
