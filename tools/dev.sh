#!/bin/sh
# dev.sh --
#
#	One entry point for a fresh Debian 12 machine: installs the system
#	packages the build and the tests need (when run as root; otherwise
#	prints the apt-get line and stops), configures, builds, then runs
#	the requested job.
#
#	tools/dev.sh demo	profile the bundled demo and print the report
#	tools/dev.sh test	the whole test suite: plain, under ASan+UBSan,
#				the non-signal part under valgrind, the probe,
#				the suite against clang -O3 and a static
#				frame-pointer Tcl (matrix.sh --ci), and the
#				Windows job below
#	tools/dev.sh build	configure and build only
#	tools/dev.sh test-windows
#				cross-build for Windows with mingw-w64
#				(tools/wintcl.sh builds Tcl and SQLite once)
#				and run the tests that are not Unix-specific
#				and the demo's check under wine64

set -eu
cd "$(dirname "$0")/.."

job=${1:-demo}
case $job in
    demo|test|build|test-windows) ;;
    *) echo "usage: tools/dev.sh demo|test|build|test-windows" >&2; exit 2 ;;
esac

# Packages: compiler, Tcl with its private headers and static library,
# nongnu libunwind, SQLite (saved profiles; the sqlite3 shell for the
# tests), tcltest's companions, the tools the tests drive, and the real
# C extensions the probe programs profile (sqlite3's Tcl binding, tDOM,
# itcl 4, Thread).
packages="gcc make tcl8.6 tcl8.6-dev libunwind-dev libsqlite3-dev sqlite3 tcllib valgrind golang-go chromium graphviz tmux linux-perf libsqlite3-tcl tdom tcl-itcl4 tcl-thread"
# clang and zlib's headers: the build matrix compiles Tcl from source.
packages="$packages clang zlib1g-dev"
# Node.js for the browser test, from Debian unless the machine has one.
command -v npm >/dev/null 2>&1 || packages="$packages nodejs npm"
# The Windows job: the cross compiler, wine, and dpkg-dev (apt-get source
# unpacks Debian's tcl8.6 and sqlite3 sources with it), and tcllib (its
# pure-Tcl json serves the Windows tclsh in export.test).
if [ "$job" = test-windows ]; then
    packages="gcc make tcl8.6 mingw-w64 wine64 dpkg-dev tcllib"
fi

missing=""
for p in $packages; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
	missing="$missing $p"
    fi
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" -eq 0 ]; then
	echo "dev.sh: installing:$missing"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
    else
	echo "dev.sh: missing packages; run as root:"
	echo "    apt-get update && apt-get install -y$missing"
	exit 1
    fi
fi

if [ "$job" = test-windows ]; then
    # apt-get source needs deb-src entries: the binary sources' twins.
    if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ \
	    && [ "$(id -u)" -eq 0 ] && [ -f /etc/apt/sources.list.d/debian.sources ]; then
	sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
	    > /etc/apt/sources.list.d/debian-src.sources
	apt-get update -qq
    fi
    deps=$(tools/wintcl.sh)
    make -s -f win/Makefile WINDEPS="$deps" all
    make -s -f win/Makefile WINDEPS="$deps" test
    # The probe's strict path checks, both modes, under wine.
    make -s -f win/Makefile WINDEPS="$deps" probe
    exit 0
fi

if [ ! -f Makefile ] || [ configure -nt Makefile ] || [ Makefile.in -nt Makefile ]; then
    ./configure >/dev/null
fi
make -s binaries
if [ "$job" = test ] && [ ! -d tests/html/node_modules/playwright-core ]; then
    # The flame graph is tested in headless Chromium driven by playwright-core.
    (cd tests/html && npm ci --no-audit --no-fund >/dev/null)
fi

case $job in
    demo)
	make -s demo
	;;
    test)
	# CI=true: the browser test fails, rather than skips, when Chromium
	# or its driver is missing.
	CI=${CI:-true}
	export CI
	make -s test
	make -s sanitize
	make -s valgrind
	# The probe's programs at half length, so that the whole job, two
	# builds of Tcl and their checks included, fits CI's 90 minutes.
	make -s probe PROBE_SCALE=0.5
	PROBE_SCALE=0.3 tools/matrix.sh --ci
	# The Windows build, its tests and the demo's check under wine.
	tools/dev.sh test-windows
	;;
esac
