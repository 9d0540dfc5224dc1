/*
 * tpWinCompat.h --
 *
 *	Included first in every file of the Windows build (the compiler's
 *	-include): the few POSIX names generic/ uses that mingw-w64 lacks.
 *	The POSIX headers generic/ includes and Windows has no equivalent of
 *	(dlfcn.h, link.h, sys/mman.h, sys/syscall.h, libunwind.h) are small
 *	headers of win/compat/ that map onto win/compat.c, so that generic/
 *	builds unchanged on both platforms.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#ifndef TP_WIN_COMPAT_H
#define TP_WIN_COMPAT_H

/*
 * Tcl_StatBuf is struct __stat64 on Windows: tcl.h only names it, so
 * <sys/stat.h> must come first for Tcl_AllocStatBuf's users.
 */

#define _POSIX_THREAD_SAFE_FUNCTIONS 200112L
#include <sys/types.h>
#include <sys/stat.h>
#include <signal.h>
#include <pthread.h>

/*
 * -dumpsignal: Windows has no user signals. The numbers only let the
 * option parse; TpDumpSignalInstall (win/platform.c) refuses them.
 */

#ifndef SIGUSR1
#  define SIGUSR1 10
#endif
#ifndef SIGUSR2
#  define SIGUSR2 12
#endif
#ifndef SIGPROF
#  define SIGPROF 27
#endif
/*
 * save.c's -atexit: the signals that end a process on Unix. On Windows
 * only SIGINT, SIGTERM and SIGABRT exist (the C runtime's signal()); the
 * others are given numbers that never arrive, and sigaction maps onto
 * signal() (win/compat.c).
 */

#ifndef SIGHUP
#  define SIGHUP 1
#endif
#ifndef SIGQUIT
#  define SIGQUIT 3
#endif
#ifndef SIGALRM
#  define SIGALRM 14
#endif
#ifndef SIGXCPU
#  define SIGXCPU 24
#endif
#ifndef SIGVTALRM
#  define SIGVTALRM 26
#endif
#undef NSIG
#define NSIG 32
#define SA_RESTART 0x10000000
#define SA_SIGINFO 4
typedef unsigned long tp_sigset_t;
#define sigset_t tp_sigset_t
struct sigaction {
    void (*sa_handler)(int);
    sigset_t sa_mask;
    int sa_flags;
};
MODULE_SCOPE int	TpCompatSigaction(int sig, const struct sigaction *sa,
			    struct sigaction *old);
#define sigaction(sig, sa, old)	TpCompatSigaction((sig), (sa), (old))
static inline int sigemptyset(sigset_t *set) { *set = 0; return 0; }
static inline int sigfillset(sigset_t *set) { *set = ~0ul; return 0; }
static inline int sigaddset(sigset_t *set, int sig)
	{ *set |= 1ul << sig; return 0; }

/*
 * Others: gmtime_r and localtime_r (mingw-w64 has them when asked),
 * gethostname (Winsock's needs WSAStartup: the computer name instead),
 * pipe (the C runtime's, binary).
 */

#include <time.h>
#include <io.h>
MODULE_SCOPE struct tm *TpCompatGmtime(const time_t *t, struct tm *tm);
#define gmtime_r(t, tm)		TpCompatGmtime((t), (tm))
#include <fcntl.h>
int	TpCompatGethostname(char *name, int namelen);
#define gethostname		TpCompatGethostname
#define pipe(fds)		_pipe((fds), 65536, _O_BINARY)

/*
 * rename over an existing file: POSIX replaces it (save.c's temporary
 * file renamed over the target), the C runtime refuses (EEXIST).
 */

#include <stdio.h>
MODULE_SCOPE int	TpCompatRename(const char *from, const char *to);
#define rename(from, to)	TpCompatRename((from), (to))

#ifndef S_ISDIR
#  define S_ISDIR(m) (((m) & S_IFMT) == S_IFDIR)
#endif

#endif /* TP_WIN_COMPAT_H */
