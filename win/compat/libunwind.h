/*
 * libunwind.h (Windows build) --
 *
 *	The local-unwinding subset of libunwind's interface that the
 *	calibrations of interp.c and trace.c use, over the x64 unwind
 *	tables of Windows (RtlCaptureContext, RtlLookupFunctionEntry,
 *	RtlVirtualUnwind). Registers are named by their DWARF numbers, as
 *	libunwind names them, so that a location found by calibration
 *	means the same register to the sampler (win/unwind.c).
 */

#ifndef TP_COMPAT_LIBUNWIND_H
#define TP_COMPAT_LIBUNWIND_H

#include <stdint.h>

typedef uint64_t unw_word_t;

/* Room for a CONTEXT (1232 bytes, 16-aligned) without <windows.h>. */
typedef struct {
    _Alignas(16) unsigned char opaque[1280];
} unw_context_t;

typedef struct {
    unw_context_t ctx;
    int valid;
} unw_cursor_t;

enum {
    UNW_X86_64_RAX = 0, UNW_X86_64_RDX, UNW_X86_64_RCX, UNW_X86_64_RBX,
    UNW_X86_64_RSI, UNW_X86_64_RDI, UNW_X86_64_RBP, UNW_X86_64_RSP,
    UNW_X86_64_R8, UNW_X86_64_R9, UNW_X86_64_R10, UNW_X86_64_R11,
    UNW_X86_64_R12, UNW_X86_64_R13, UNW_X86_64_R14, UNW_X86_64_R15,
    UNW_X86_64_RIP
};
#define UNW_REG_IP	UNW_X86_64_RIP
#define UNW_REG_SP	UNW_X86_64_RSP

MODULE_SCOPE int	TpCompatGetContext(unw_context_t *uc);
MODULE_SCOPE int	TpCompatInitLocal(unw_cursor_t *cur, unw_context_t *uc);
MODULE_SCOPE int	TpCompatGetReg(unw_cursor_t *cur, int reg, unw_word_t *v);
MODULE_SCOPE int	TpCompatStep(unw_cursor_t *cur);
MODULE_SCOPE uint64_t *	TpCompatContextReg(void *context, int reg);

/*
 * unw_getcontext must capture the caller's own frame: a macro, so that
 * RtlCaptureContext runs in it.
 */

#define unw_getcontext(uc)	TpCompatGetContext(uc)
#define unw_init_local(cur, uc)	TpCompatInitLocal((cur), (uc))
#define unw_get_reg(cur, r, v)	TpCompatGetReg((cur), (r), (v))
#define unw_step(cur)		TpCompatStep(cur)

#endif
