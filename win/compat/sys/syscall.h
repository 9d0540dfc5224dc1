/*
 * sys/syscall.h (Windows build) --
 *
 *	util.c's TpGetTid asks the kernel for the thread id with
 *	syscall(SYS_gettid); here it is GetCurrentThreadId.
 */

#ifndef TP_COMPAT_SYSCALL_H
#define TP_COMPAT_SYSCALL_H

#define SYS_gettid	186
MODULE_SCOPE long	TpCompatSyscall(long number);
#define syscall(n)	TpCompatSyscall(n)

#endif
