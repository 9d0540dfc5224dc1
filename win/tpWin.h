/*
 * tpWin.h --
 *
 *	What the files of win/ share: PE images, the lock-free unwind step,
 *	the per-thread states the sampler thread reaches.
 *
 * Copyright (c) 2026 The tclprof authors. See the file LICENSE.
 */

#ifndef TP_WIN_H
#define TP_WIN_H

#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <psapi.h>
#include <mmsystem.h>

#define TP_WIN_MAX_MODULES	1024

MODULE_SCOPE const char *TpWinModulePath(HMODULE base);
MODULE_SCOPE uintptr_t	TpWinImageSize(const void *base);
MODULE_SCOPE const RUNTIME_FUNCTION *TpWinFunctionEntry(const void *base,
			    uintptr_t rva, int primary);
MODULE_SCOPE int	TpWinModules(HMODULE *mods, int max);
MODULE_SCOPE int	TpWinStep(CONTEXT *c, uintptr_t modBase,
			    uintptr_t stackLo, uintptr_t stackHi);
MODULE_SCOPE TpThreadState *TpWinThreadState(uint32_t tid);

#endif /* TP_WIN_H */
