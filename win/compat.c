/*
 * compat.c --
 *
 *	The POSIX interfaces generic/ uses, for Windows (see tpWinCompat.h
 *	and the headers of win/compat/): anonymous memory, the thread id,
 *	dladdr and dl_iterate_phdr over the PE images loaded in the process,
 *	and libunwind's local cursor over the x64 unwind tables.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#include "tclprofInt.h"
#include "tpWin.h"
#include <dlfcn.h>
#include <link.h>
#include <libunwind.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

long
TpCompatSyscall(
    long number)
{
    return number == SYS_gettid ? (long) GetCurrentThreadId() : -1;
}

int
TpCompatRename(
    const char *from,
    const char *to)
{
    if (MoveFileExA(from, to, MOVEFILE_REPLACE_EXISTING)) {
	return 0;
    }
    errno = GetLastError() == ERROR_ACCESS_DENIED ? EACCES : EIO;
    return -1;
}

struct tm *
TpCompatGmtime(
    const time_t *t,
    struct tm *tm)
{
    return gmtime_s(tm, t) == 0 ? tm : NULL;
}

int
TpCompatGethostname(
    char *name,
    int namelen)
{
    DWORD n = (DWORD) namelen;

    return GetComputerNameA(name, &n) ? 0 : -1;
}

/*
 * sigaction over the C runtime's signal(): handlers only, no mask or
 * flags. Signals the runtime does not know never arrive: they read as
 * SIG_DFL and setting them does nothing.
 */

int
TpCompatSigaction(
    int sig,
    const struct sigaction *sa,
    struct sigaction *old)
{
    void (*prev)(int) = SIG_DFL;
    int known = sig == SIGINT || sig == SIGTERM || sig == SIGABRT
	    || sig == SIGFPE || sig == SIGILL || sig == SIGSEGV;

    if (known) {
	if (sa != NULL) {
	    prev = signal(sig, sa->sa_handler);
	} else {
	    prev = signal(sig, SIG_DFL);
	    signal(sig, prev);
	}
	if (prev == SIG_ERR) {
	    return -1;
	}
    }
    if (old != NULL) {
	memset(old, 0, sizeof(*old));
	old->sa_handler = prev;
    }
    return 0;
}

void *
TpCompatMmap(
    size_t size)
{
    void *p = VirtualAlloc(NULL, size, MEM_COMMIT | MEM_RESERVE,
	    PAGE_READWRITE);

    return p != NULL ? p : MAP_FAILED;
}

int
TpCompatMunmap(
    void *addr)
{
    return VirtualFree(addr, 0, MEM_RELEASE) ? 0 : -1;
}

/*
 * Module names handed out by dladdr stay valid for the life of the
 * process (as the loader's do): interned here, under a lock.
 */

static struct {
    pthread_mutex_t lock;	/* Guards names. */
    struct { HMODULE base; char *path; } *names;
    int n, cap;
} nameCache = { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0 };

/*
 *----------------------------------------------------------------------
 *
 * TpWinModulePath --
 *
 *	The path of a loaded module, with '/' separators.
 *
 * Results:
 *	A string that lives as long as the process, or NULL.
 *
 * Side effects:
 *	Interns the name on first use.
 *
 *----------------------------------------------------------------------
 */

const char *
TpWinModulePath(
    HMODULE base)
{
    char buf[MAX_PATH * 2], *p;
    const char *r = NULL;
    int i;
    DWORD len;

    pthread_mutex_lock(&nameCache.lock);
    for (i = 0; i < nameCache.n; i++) {
	if (nameCache.names[i].base == base) {
	    r = nameCache.names[i].path;
	    goto done;
	}
    }
    len = GetModuleFileNameA(base, buf, sizeof(buf));
    if (len == 0 || len >= sizeof(buf)) {
	goto done;
    }
    for (p = buf; *p; p++) {
	if (*p == '\\') {
	    *p = '/';
	}
    }
    if (nameCache.n == nameCache.cap) {
	int cap = nameCache.cap ? 2 * nameCache.cap : 32;
	void *n = realloc(nameCache.names, sizeof(*nameCache.names) * cap);

	if (n == NULL) {
	    goto done;
	}
	nameCache.names = n;
	nameCache.cap = cap;
    }
    if ((p = strdup(buf)) == NULL) {
	goto done;
    }
    nameCache.names[nameCache.n].base = base;
    nameCache.names[nameCache.n++].path = p;
    r = p;
  done:
    pthread_mutex_unlock(&nameCache.lock);
    return r;
}

/*
 *----------------------------------------------------------------------
 *
 * TpWinImageSize, TpWinFunctionEntry --
 *
 *	The size of a loaded PE image from its optional header; the x64
 *	unwind entry (.pdata) of the function holding rva, primary part
 *	(a chained entry is followed to the function's first part).
 *	TpWinFunctionEntry takes no lock (a binary search of the mapped
 *	exception directory): the sampler calls it while the sampled thread
 *	is suspended.
 *
 * Results:
 *	The size in bytes; the entry or NULL (a leaf function has none).
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static const IMAGE_NT_HEADERS64 *
NtHeaders(
    const char *base)
{
    const IMAGE_DOS_HEADER *dos = (const IMAGE_DOS_HEADER *) base;
    const IMAGE_NT_HEADERS64 *nt;

    if (dos->e_magic != IMAGE_DOS_SIGNATURE) {
	return NULL;
    }
    nt = (const IMAGE_NT_HEADERS64 *) (base + dos->e_lfanew);
    if (nt->Signature != IMAGE_NT_SIGNATURE
	    || nt->OptionalHeader.Magic != IMAGE_NT_OPTIONAL_HDR64_MAGIC) {
	return NULL;
    }
    return nt;
}

uintptr_t
TpWinImageSize(
    const void *base)
{
    const IMAGE_NT_HEADERS64 *nt = NtHeaders(base);

    return nt ? nt->OptionalHeader.SizeOfImage : 0;
}

const RUNTIME_FUNCTION *
TpWinFunctionEntry(
    const void *base,
    uintptr_t rva,
    int primary)
{
    const IMAGE_NT_HEADERS64 *nt = NtHeaders(base);
    const IMAGE_DATA_DIRECTORY *dir;
    const RUNTIME_FUNCTION *tab, *e = NULL;
    size_t lo = 0, hi, mid;
    int hops = 0;

    if (nt == NULL || nt->OptionalHeader.NumberOfRvaAndSizes
	    <= IMAGE_DIRECTORY_ENTRY_EXCEPTION) {
	return NULL;
    }
    dir = &nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_EXCEPTION];
    tab = (const RUNTIME_FUNCTION *) ((const char *) base + dir->VirtualAddress);
    hi = dir->Size / sizeof(RUNTIME_FUNCTION);
    while (lo < hi) {
	mid = (lo + hi) / 2;
	if (rva < tab[mid].BeginAddress) {
	    hi = mid;
	} else if (rva >= tab[mid].EndAddress) {
	    lo = mid + 1;
	} else {
	    e = &tab[mid];
	    break;
	}
    }
    while (primary && e != NULL && hops++ < 32) {
	const unsigned char *ui = (const unsigned char *) base
		+ (e->UnwindData & ~1u);
	unsigned nCodes = ui[2];

	if (e->UnwindData & 1u) {	/* Points to another entry. */
	    e = (const RUNTIME_FUNCTION *) ui;
	    continue;
	}
	if (!((ui[0] >> 3) & UNW_FLAG_CHAININFO)) {
	    break;
	}
	e = (const RUNTIME_FUNCTION *) (ui + 4 + 2 * ((nCodes + 1) & ~1u));
    }
    return e;
}

/*
 *----------------------------------------------------------------------
 *
 * TpCompatDladdr --
 *
 *	dladdr: the module holding addr and the nearest export below it;
 *	with symPtr (dladdr1's RTLD_DL_SYMENT) the function's size when the
 *	export starts the function whose unwind entry holds addr.
 *
 * Results:
 *	Nonzero if addr is in a loaded module.
 *
 * Side effects:
 *	Fills *info (and *symPtr, pointing to thread-local storage).
 *
 *----------------------------------------------------------------------
 */

int
TpCompatDladdr(
    const void *addr,
    Dl_info *info,
    const TpCompatSym **symPtr)
{
    static __thread TpCompatSym sym;
    HMODULE mod;
    const char *base;
    const IMAGE_NT_HEADERS64 *nt;
    const IMAGE_DATA_DIRECTORY *dir;
    uintptr_t rva, best = 0;
    const char *bestName = NULL;
    const RUNTIME_FUNCTION *fe;

    memset(info, 0, sizeof(*info));
    if (symPtr != NULL) {
	*symPtr = NULL;
    }
    if (!GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS
	    | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT, addr, &mod)) {
	return 0;
    }
    base = (const char *) mod;
    rva = (uintptr_t) addr - (uintptr_t) base;
    info->dli_fbase = (void *) base;
    info->dli_fname = TpWinModulePath(mod);
    if ((nt = NtHeaders(base)) == NULL) {
	return 1;
    }
    dir = &nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_EXPORT];
    if (dir->VirtualAddress != 0 && dir->Size != 0) {
	const IMAGE_EXPORT_DIRECTORY *ed = (const IMAGE_EXPORT_DIRECTORY *)
		(base + dir->VirtualAddress);
	const DWORD *funcs = (const DWORD *) (base + ed->AddressOfFunctions);
	const DWORD *names = (const DWORD *) (base + ed->AddressOfNames);
	const WORD *ords = (const WORD *) (base + ed->AddressOfNameOrdinals);
	DWORD i;

	for (i = 0; i < ed->NumberOfNames; i++) {
	    uintptr_t f = funcs[ords[i]];

	    if (f <= rva && f >= best && (f < dir->VirtualAddress
		    || f >= dir->VirtualAddress + dir->Size)) {
		best = f;
		bestName = base + names[i];
	    }
	}
    }
    if (bestName != NULL) {
	info->dli_sname = bestName;
	info->dli_saddr = (void *) (base + best);
    }
    if (symPtr != NULL && bestName != NULL
	    && (fe = TpWinFunctionEntry(base, rva, 1)) != NULL
	    && fe->BeginAddress == best) {
	sym.st_size = fe->EndAddress - fe->BeginAddress;
	*symPtr = &sym;
    }
    return 1;
}

void *
TpCompatDlopen(
    const char *name)
{
    return (void *) LoadLibraryA(name);
}

void *
TpCompatDlsym(
    void *handle,
    const char *name)
{
    return handle ? (void *) GetProcAddress(handle, name) : NULL;
}

/*
 *----------------------------------------------------------------------
 *
 * TpWinModules --
 *
 *	The modules loaded in the process.
 *
 * Results:
 *	Their number (at most max), filled in mods[].
 *
 * Side effects:
 *	Takes the loader's lock: never while a thread is suspended.
 *
 *----------------------------------------------------------------------
 */

int
TpWinModules(
    HMODULE *mods,
    int max)
{
    DWORD need = 0;

    if (!EnumProcessModules(GetCurrentProcess(), mods,
	    (DWORD) (sizeof(HMODULE) * (size_t) max), &need)) {
	return 0;
    }
    need /= sizeof(HMODULE);
    return (int) (need > (DWORD) max ? (DWORD) max : need);
}

int
TpCompatIteratePhdr(
    int (*fn)(struct dl_phdr_info *, size_t, void *),
    void *cd)
{
    HMODULE mods[TP_WIN_MAX_MODULES];
    int n = TpWinModules(mods, TP_WIN_MAX_MODULES), i, r = 0;

    for (i = 0; i < n && r == 0; i++) {
	TpCompatElf_Phdr ph;
	struct dl_phdr_info info;

	ph.p_type = PT_LOAD;
	ph.p_vaddr = 0;
	ph.p_memsz = TpWinImageSize(mods[i]);
	info.dlpi_addr = (uintptr_t) mods[i];
	info.dlpi_name = TpWinModulePath(mods[i]);
	info.dlpi_phdr = &ph;
	info.dlpi_phnum = 1;
	r = fn(&info, sizeof(info), cd);
    }
    return r;
}

/*
 * ----------------------------------------------------------------------
 * libunwind's local cursor. The cursor holds a CONTEXT; a step is one
 * RtlVirtualUnwind, or for a leaf function (no unwind entry) a pop of
 * the return address.
 * ----------------------------------------------------------------------
 */

_Static_assert(sizeof(unw_context_t) >= sizeof(CONTEXT)
	&& _Alignof(unw_context_t) >= _Alignof(CONTEXT),
	"unw_context_t must hold a CONTEXT");

uint64_t *
TpCompatContextReg(
    void *context,
    int reg)
{
    CONTEXT *c = context;

    switch (reg) {
    case UNW_X86_64_RAX: return &c->Rax;
    case UNW_X86_64_RDX: return &c->Rdx;
    case UNW_X86_64_RCX: return &c->Rcx;
    case UNW_X86_64_RBX: return &c->Rbx;
    case UNW_X86_64_RSI: return &c->Rsi;
    case UNW_X86_64_RDI: return &c->Rdi;
    case UNW_X86_64_RBP: return &c->Rbp;
    case UNW_X86_64_RSP: return &c->Rsp;
    case UNW_X86_64_R8: return &c->R8;
    case UNW_X86_64_R9: return &c->R9;
    case UNW_X86_64_R10: return &c->R10;
    case UNW_X86_64_R11: return &c->R11;
    case UNW_X86_64_R12: return &c->R12;
    case UNW_X86_64_R13: return &c->R13;
    case UNW_X86_64_R14: return &c->R14;
    case UNW_X86_64_R15: return &c->R15;
    case UNW_X86_64_RIP: return &c->Rip;
    }
    return NULL;
}

/*
 *----------------------------------------------------------------------
 *
 * TpWinStep --
 *
 *	Unwinds one frame of a context, in place, with the tables of the
 *	module holding its Rip. Takes no lock: modBase is the module the
 *	caller found for Rip (0: look it up, which is lock-free too).
 *
 * Results:
 *	1 if the caller's frame is in *c, 0 at the end of the stack or on
 *	an error.
 *
 * Side effects:
 *	Rewrites *c.
 *
 *----------------------------------------------------------------------
 */

int
TpWinStep(
    CONTEXT *c,
    uintptr_t modBase,
    uintptr_t stackLo,
    uintptr_t stackHi)
{
    const RUNTIME_FUNCTION *fe = NULL;
    uintptr_t rsp0 = c->Rsp;
    void *handlerData;
    DWORD64 establisher;

    if (c->Rip == 0) {
	return 0;
    }
    if (modBase != 0) {
	fe = TpWinFunctionEntry((const void *) modBase, c->Rip - modBase, 0);
    }
    if (fe != NULL) {
	RtlVirtualUnwind(UNW_FLAG_NHANDLER, modBase, c->Rip,
		(PRUNTIME_FUNCTION) fe, c, &handlerData, &establisher, NULL);
    } else {
	if (c->Rsp < stackLo || c->Rsp + 8 > stackHi || (c->Rsp & 7)) {
	    return 0;
	}
	c->Rip = *(const uint64_t *) c->Rsp;
	c->Rsp += 8;
    }
    return c->Rip != 0 && c->Rsp > rsp0 && c->Rsp <= stackHi;
}

static uintptr_t
ModuleBase(
    uintptr_t pc)
{
    HMODULE mod;

    if (!GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS
	    | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT, (void *) pc, &mod)) {
	return 0;
    }
    return (uintptr_t) mod;
}

static void
StackBounds(
    uintptr_t *lo,
    uintptr_t *hi)
{
    ULONG_PTR l, h;

    GetCurrentThreadStackLimits(&l, &h);
    *lo = (uintptr_t) l;
    *hi = (uintptr_t) h;
}

__attribute__((noinline)) int
TpCompatGetContext(
    unw_context_t *uc)
{
    CONTEXT *c = (CONTEXT *) uc;
    uintptr_t lo, hi;

    RtlCaptureContext(c);
    StackBounds(&lo, &hi);
    /* Step out of this function: the caller's frame comes first. */
    return TpWinStep(c, ModuleBase(c->Rip), lo, hi) ? 0 : -1;
}

int
TpCompatInitLocal(
    unw_cursor_t *cur,
    unw_context_t *uc)
{
    memcpy(&cur->ctx, uc, sizeof(CONTEXT));
    cur->valid = 1;
    return 0;
}

int
TpCompatGetReg(
    unw_cursor_t *cur,
    int reg,
    unw_word_t *v)
{
    uint64_t *p = TpCompatContextReg(&cur->ctx, reg);

    if (p == NULL || !cur->valid) {
	return -1;
    }
    *v = *p;
    return 0;
}

int
TpCompatStep(
    unw_cursor_t *cur)
{
    CONTEXT *c = (CONTEXT *) &cur->ctx;
    uintptr_t lo, hi;

    if (!cur->valid) {
	return 0;
    }
    StackBounds(&lo, &hi);
    if (!TpWinStep(c, ModuleBase(c->Rip), lo, hi)) {
	cur->valid = 0;
	return 0;
    }
    return 1;
}
