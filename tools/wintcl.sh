#!/bin/sh
# wintcl.sh --
#
#	Builds, once, what the Windows build of tclprof needs from other
#	projects, cross-compiled with mingw-w64 from Debian's own sources:
#	Tcl 8.6 for Windows (the win/ directory of Debian's tcl8.6 source
#	package) and SQLite's amalgamation (Debian's sqlite3 source). The
#	results go to a cache directory that is reused as long as it holds
#	a finished build:
#
#	    $TCLPROF_WIN_CACHE (default ~/.cache/tclprof-win)
#		tcl/		  Tcl installed for Windows (bin/tclsh86.exe,
#				  lib/tclConfig.sh, include/) and its source
#				  tree (src/), whose private headers the
#				  build of tclprof reads
#		sqlite/sqlite3.c  the amalgamation, compiled into tclprof.dll
#
#	Needs deb-src entries in apt's sources (tools/dev.sh adds them) and
#	the packages mingw-w64, wine64, tcl8.6, gcc, make.
#
#	tools/wintcl.sh		build what is missing, print the cache path

set -eu
cache=${TCLPROF_WIN_CACHE:-$HOME/.cache/tclprof-win}
host=x86_64-w64-mingw32
mkdir -p "$cache"

# One source package, unpacked (with Debian's patches) under $cache/src.
fetch() {
    mkdir -p "$cache/src"
    d=$(ls -d "$cache/src/$1"-*/ 2>/dev/null | head -n 1 || true)
    if [ -z "$d" ]; then
	(cd "$cache/src" && apt-get source -q "$1" >/dev/null 2>&1) || {
	    echo "wintcl.sh: apt-get source $1 failed (deb-src missing?)" >&2
	    exit 1
	}
	d=$(ls -d "$cache/src/$1"-*/ | head -n 1)
    fi
    echo "${d%/}"
}

if [ ! -f "$cache/tcl/.done" ]; then
    src=$(fetch tcl8.6)
    rm -rf "$cache/tcl" "$cache/tcl-build"
    mkdir -p "$cache/tcl-build"
    echo "wintcl.sh: building Tcl for Windows (a few minutes)" >&2
    (cd "$cache/tcl-build" &&
	"$src/win/configure" --host=$host --enable-64bit --enable-threads \
	    --prefix="$cache/tcl" >build.log 2>&1 &&
	make -j2 >>build.log 2>&1 && make install >>build.log 2>&1) || {
	echo "wintcl.sh: Tcl build failed; see $cache/tcl-build/build.log" >&2
	exit 1
    }
    # The private headers (tclInt.h & co.) and tclConfig.sh's paths.
    ln -sfn "$src" "$cache/tcl/src"
    cp "$cache/tcl-build/tclConfig.sh" "$cache/tcl/lib/tclConfig.sh" 2>/dev/null || true
    touch "$cache/tcl/.done"
fi

if [ ! -f "$cache/sqlite/.done" ]; then
    src=$(fetch sqlite3)
    rm -rf "$cache/sqlite" "$cache/sqlite-build"
    mkdir -p "$cache/sqlite-build" "$cache/sqlite"
    echo "wintcl.sh: making SQLite's amalgamation" >&2
    (cd "$cache/sqlite-build" && "$src/configure" >build.log 2>&1 &&
	make sqlite3.c >>build.log 2>&1) || {
	echo "wintcl.sh: SQLite amalgamation failed; see $cache/sqlite-build/build.log" >&2
	exit 1
    }
    cp "$cache/sqlite-build/sqlite3.c" "$cache/sqlite-build/sqlite3.h" "$cache/sqlite/"
    touch "$cache/sqlite/.done"
fi
echo "$cache"
