dnl tp_tcl.m4 --
dnl
dnl	The project's own autoconf macros: locate tclConfig.sh, read the
dnl	variables an extension needs from it, and check for libunwind.
dnl	Debian ships no tcl.m4, and tclConfig.sh already says everything
dnl	about how Tcl was built, so these macros only find and source it.

dnl TP_PATH_TCLCONFIG --
dnl
dnl	Finds tclConfig.sh. --with-tcl=DIR names the directory holding it;
dnl	without it the usual system places are searched, the multiarch
dnl	directory first because Debian's /usr/lib/tcl8.6/tclConfig.sh only
dnl	sources that one.
dnl
dnl Results:
dnl	Sets and substitutes TCL_BIN_DIR.

AC_DEFUN([TP_PATH_TCLCONFIG], [
    AC_ARG_WITH([tcl],
	[AS_HELP_STRING([--with-tcl=DIR],
	    [directory containing tclConfig.sh (default: search system places)])],
	[tp_with_tcl=$withval], [tp_with_tcl=""])
    AC_MSG_CHECKING([for tclConfig.sh])
    TCL_BIN_DIR=""
    if test "x$tp_with_tcl" != "x" ; then
	if test -f "$tp_with_tcl/tclConfig.sh" ; then
	    TCL_BIN_DIR=`cd "$tp_with_tcl"; pwd`
	else
	    AC_MSG_ERROR([--with-tcl=$tp_with_tcl: no tclConfig.sh in that directory])
	fi
    else
	tp_multiarch=`dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null`
	for tp_dir in \
		${tp_multiarch:+/usr/lib/$tp_multiarch/tcl8.6} \
		/usr/local/lib /usr/local/lib/tcl8.6 /usr/lib/tcl8.6 \
		/usr/lib64 /usr/lib /usr/lib64/tcl8.6 ; do
	    if test -f "$tp_dir/tclConfig.sh" ; then
		TCL_BIN_DIR=$tp_dir
		break
	    fi
	done
    fi
    if test "x$TCL_BIN_DIR" = "x" ; then
	AC_MSG_RESULT([not found])
	AC_MSG_ERROR([cannot find tclConfig.sh: install the Debian package tcl8.6-dev (apt-get install tcl8.6-dev) or give --with-tcl=DIR])
    fi
    AC_MSG_RESULT([$TCL_BIN_DIR/tclConfig.sh])
    AC_SUBST([TCL_BIN_DIR])
])

dnl TP_LOAD_TCLCONFIG --
dnl
dnl	Sources tclConfig.sh and checks that it describes Tcl 8.6 (or 9.0)
dnl	with stubs.
dnl	TCL_DEFS is kept: the private headers (tclInt.h) must be compiled
dnl	with the same definitions Tcl was built with, or structure layouts
dnl	differ.
dnl
dnl Results:
dnl	Substitutes TCL_VERSION, TCL_PATCH_LEVEL, TCL_INCLUDE_SPEC,
dnl	TCL_PRIVATE_INCLUDE_SPEC, TCL_STUB_LIB_SPEC, TCL_LIB_SPEC, TCL_DEFS,
dnl	TCL_LIBS, TCL_SHLIB_CFLAGS, TCL_SHLIB_SUFFIX, TCL_EXEC_PREFIX, TCLSH_PROG,
dnl	TCL_PACKAGE_PATH and TCL_STATIC_LIB (libtcl built with local symbols,
dnl	when present; used to name Tcl's static functions).

AC_DEFUN([TP_LOAD_TCLCONFIG], [
    . "$TCL_BIN_DIR/tclConfig.sh"
    case "$TCL_MAJOR_VERSION.$TCL_MINOR_VERSION" in
	8.6|9.0) ;;
	*) AC_MSG_ERROR([tclprof needs Tcl 8.6 or 9.0; $TCL_BIN_DIR/tclConfig.sh describes $TCL_VERSION]) ;;
    esac
    if test "x$TCL_SUPPORTS_STUBS" != "x1" ; then
	AC_MSG_ERROR([the Tcl in $TCL_BIN_DIR was built without stubs])
    fi
    AC_MSG_CHECKING([for Tcl's private headers])
    TCL_PRIVATE_INCLUDE_SPEC=""
    for tp_dir in "$TCL_SRC_DIR/generic" "$TCL_SRC_DIR" \
	    "$TCL_PREFIX/include/tcl$TCL_VERSION/tcl-private/generic" \
	    "$TCL_PREFIX/include" ; do
	if test -f "$tp_dir/tclInt.h" ; then
	    TCL_PRIVATE_INCLUDE_SPEC="-I$tp_dir"
	    if test -d "$tp_dir/../unix" ; then
		TCL_PRIVATE_INCLUDE_SPEC="$TCL_PRIVATE_INCLUDE_SPEC -I$tp_dir/../unix"
	    fi
	    break
	fi
    done
    if test "x$TCL_PRIVATE_INCLUDE_SPEC" = "x" ; then
	AC_MSG_RESULT([not found])
	AC_MSG_ERROR([cannot find tclInt.h: install the Debian package tcl8.6-dev])
    fi
    AC_MSG_RESULT([$TCL_PRIVATE_INCLUDE_SPEC])

    TCL_STATIC_LIB=""
    for tp_dir in `echo "$TCL_LIB_SPEC" | sed -n 's/.*-L\([[^ ]]*\).*/\1/p'` "$TCL_EXEC_PREFIX/lib" ; do
	if test -f "$tp_dir/libtcl$TCL_VERSION.a" ; then
	    TCL_STATIC_LIB="$tp_dir/libtcl$TCL_VERSION.a"
	    break
	fi
    done

    AC_PATH_PROGS([TCLSH_PROG], [tclsh$TCL_VERSION tclsh], [],
	[$TCL_EXEC_PREFIX/bin:$PATH])
    if test "x$TCLSH_PROG" = "x" ; then
	AC_MSG_ERROR([cannot find tclsh$TCL_VERSION: install the Debian package tcl8.6])
    fi
    eval "TCL_INCLUDE_SPEC=\"$TCL_INCLUDE_SPEC\""
    eval "TCL_STUB_LIB_SPEC=\"$TCL_STUB_LIB_SPEC\""
    AC_SUBST([TCL_VERSION])
    AC_SUBST([TCL_PATCH_LEVEL])
    AC_SUBST([TCL_INCLUDE_SPEC])
    AC_SUBST([TCL_PRIVATE_INCLUDE_SPEC])
    AC_SUBST([TCL_STUB_LIB_SPEC])
    AC_SUBST([TCL_LIB_SPEC])
    AC_SUBST([TCL_DEFS])
    AC_SUBST([TCL_LIBS])
    AC_SUBST([TCL_SHLIB_CFLAGS])
    AC_SUBST([TCL_SHLIB_SUFFIX])
    AC_SUBST([TCL_EXEC_PREFIX])
    AC_SUBST([TCL_STATIC_LIB])
    AC_SUBST([TCL_PACKAGE_PATH])
])

dnl TP_CHECK_LIBUNWIND --
dnl
dnl	Checks for the nongnu libunwind (the one with unw_init_local2). LLVM's
dnl	libunwind has a libunwind.h too but lacks that entry point, so the
dnl	check links against it rather than only looking for the header.
dnl
dnl Results:
dnl	Substitutes UNWIND_LIBS; stops configure with the package name when
dnl	the library is missing.

AC_DEFUN([TP_CHECK_LIBUNWIND], [
    AC_MSG_CHECKING([for libunwind with unw_init_local2])
    tp_save_LIBS=$LIBS
    LIBS="-lunwind $LIBS"
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[
#define UNW_LOCAL_ONLY
#include <libunwind.h>
]], [[
	unw_context_t uc; unw_cursor_t c;
	unw_getcontext(&uc);
	return unw_init_local2(&c, &uc, UNW_INIT_SIGNAL_FRAME);
]])], [AC_MSG_RESULT([yes])], [
	AC_MSG_RESULT([no])
	AC_MSG_ERROR([libunwind (nongnu, 1.6 or later) not found: install the Debian package libunwind-dev (apt-get install libunwind-dev)])
    ])
    LIBS=$tp_save_LIBS
    UNWIND_LIBS="-lunwind"
    AC_SUBST([UNWIND_LIBS])
])

dnl TP_CHECK_SQLITE3 --
dnl
dnl	Checks for the SQLite library: saved profiles (profiler save/load,
dnl	the tclprof command) are SQLite databases written through its C API.
dnl	The library is loaded on first use (save.c), not linked: the header
dnl	and the library must be there to build, and the shared library must
dnl	open by its soname.
dnl
dnl Results:
dnl	Substitutes SQLITE_DEFS (-DTP_SQLITE_SONAME=...); stops configure
dnl	with the package name when the header or the library is missing.

AC_DEFUN([TP_CHECK_SQLITE3], [
    AC_MSG_CHECKING([for sqlite3 (header and library)])
    tp_save_LIBS=$LIBS
    LIBS="-lsqlite3 $LIBS"
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[
#include <sqlite3.h>
]], [[
	sqlite3 *db;
	return sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, 0);
]])], [AC_MSG_RESULT([yes])], [
	AC_MSG_RESULT([no])
	AC_MSG_ERROR([SQLite 3 not found: install the Debian package libsqlite3-dev (apt-get install libsqlite3-dev)])
    ])
    LIBS=$tp_save_LIBS
    tp_sqlite_soname=libsqlite3.so.0
    AC_MSG_CHECKING([whether $tp_sqlite_soname opens at run time])
    LIBS="-ldl $LIBS"
    AC_RUN_IFELSE([AC_LANG_PROGRAM([[
#include <dlfcn.h>
]], [[
	void *lib = dlopen("$tp_sqlite_soname", RTLD_NOW | RTLD_LOCAL);
	return lib == 0 || dlsym(lib, "sqlite3_open_v2") == 0;
]])], [AC_MSG_RESULT([yes])], [
	AC_MSG_RESULT([no])
	AC_MSG_ERROR([$tp_sqlite_soname cannot be opened: install the Debian package libsqlite3-0])
    ], [AC_MSG_RESULT([cross-compiling: assumed])])
    LIBS=$tp_save_LIBS
    SQLITE_DEFS="-DTP_SQLITE_SONAME=\\\"$tp_sqlite_soname\\\""
    AC_SUBST([SQLITE_DEFS])
])
