#!/bin/sh
# matrix.sh --
#
#	Builds Tcl from Debian's source packages in several ways (compiler,
#	optimisation, shared or static libtcl) and runs tclprof's checks
#	against each: `make test`, `make probe` (in both modes), and the demo's
#	Figure 6 order, and on static builds an embedding executable
#	(tools/embed-check.tcl). Prints one line per build and a final
#	"N passed, M failed"; exits non-zero if any build failed.
#
#	tools/matrix.sh [--ci] [BUILD ...]
#
#	BUILD is VERSION-COMPILER-OPT-LINK, for example 8.6.13-clang-O2-shared
#	or 8.6.16-gcc-O0-static (O0 is Tcl's --enable-symbols: -O0 -g; O1,
#	O2, O3 and Os are those flags; O1fp, O2fp and O3fp add
#	-fno-omit-frame-pointer), or "system" (the Debian tcl8.6-dev this
#	machine has). Without BUILD
#	every combination of the versions below is run; --ci adds the builds
#	CI runs besides the system's (clang -O3, which inlines the most
#	copies of the trampoline's loop, and a static build with frame
#	pointers).
#
#	Tcl builds are cached in $TCLPROF_MATRIX_DIR (default
#	~/.cache/tclprof-matrix): a second run only rebuilds tclprof.
#	Set MATRIX_SKIP_PROBE=1 to run only `make test` and the demo, and
#	PROBE_SCALE to shorten the probe's programs (1.0: about 1.5 s each).
#	MATRIX_BENCH=1 adds each build's overhead (tests-perf/overhead.tcl
#	-metric thread, a benchmark: printed, never a verdict).
#
#	The sources come from Debian's archive through apt-get source with a
#	deb-src list of our own (the machine's apt configuration is left as
#	it is). Debian's bullseye source of 8.6.11 is no longer served; the
#	default set is bookworm's 8.6.13, trixie's 8.6.16 and sid's 8.6.18.

set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cache=${TCLPROF_MATRIX_DIR:-$HOME/.cache/tclprof-matrix}
jobs=$(nproc 2>/dev/null || echo 2)
versions="8.6.13 8.6.16 8.6.18"

builds=""
if [ "${1:-}" = "--ci" ]; then
    shift
    builds="8.6.13-clang-O3-shared 8.6.16-gcc-O2fp-static"
fi
builds="$builds $*"
if [ -z "$(echo $builds)" ]; then
    builds="system"
    for v in $versions; do
	for cc in gcc clang; do
	    for opt in O2 O0; do
		for link in shared static; do
		    builds="$builds $v-$cc-$opt-$link"
		done
	    done
	done
    done
fi

mkdir -p "$cache/src" "$cache/inst" "$cache/logs" "$cache/apt/lists/partial"

# fetch VERSION: the upstream tarball of tcl8.6 VERSION, via apt-get source.
fetch() {
    v=$1
    tarball="$cache/src/tcl8.6_$v+dfsg.orig.tar.gz"
    [ -f "$tarball" ] && return 0
    list="$cache/apt/sources.list"
    if [ ! -f "$list" ]; then
	for suite in bookworm trixie sid; do
	    echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main"
	done >"$list"
    fi
    apt="-o Dir::Etc::SourceList=$list -o Dir::Etc::SourceParts=/dev/null"
    apt="$apt -o Dir::State::Lists=$cache/apt/lists -o APT::Sandbox::User=root"
    if [ ! -f "$cache/apt/updated" ]; then
	apt-get $apt update >"$cache/logs/apt-update.log" 2>&1
	touch "$cache/apt/updated"
    fi
    # The .debian.tar.xz of some versions is no longer served: only the
    # upstream tarball is needed, so a partial download is enough.
    ver=$(apt-cache $apt showsrc tcl8.6 2>/dev/null \
	| sed -n "s/^Version: \($v+dfsg-.*\)/\1/p" | head -n 1)
    if [ -n "$ver" ]; then
	(cd "$cache/src" && apt-get $apt source --download-only "tcl8.6=$ver" \
	    >"$cache/logs/fetch-$v.log" 2>&1) || true
    fi
    [ -f "$tarball" ]
}

# build_tcl SPEC: configure, build and install Tcl under $cache/inst/SPEC.
build_tcl() {
    spec=$1
    inst="$cache/inst/$spec"
    [ -f "$inst/.done" ] && return 0
    v=${spec%%-*}
    rest=${spec#*-}
    cc=${rest%%-*}; rest=${rest#*-}
    opt=${rest%%-*}; link=${rest#*-}
    fetch "$v" || { echo "cannot fetch the tcl8.6 $v source" >&2; return 1; }
    src="$cache/src/$spec"
    rm -rf "$src" "$inst"
    mkdir -p "$src"
    tar -xzf "$cache/src/tcl8.6_$v+dfsg.orig.tar.gz" -C "$src" --strip-components=1
    flags="--prefix=$inst"
    case $opt in
	O0) flags="$flags --enable-symbols"; cflags="-O0 -g" ;;
	O1|O2|O3|Os) cflags="-$opt" ;;
	O1fp|O2fp|O3fp) cflags="-${opt%fp} -fno-omit-frame-pointer" ;;
	*) echo "unknown optimisation $opt in $spec" >&2; return 1 ;;
    esac
    if [ "$link" = static ]; then
	flags="$flags --disable-shared"
    fi
    (cd "$src/unix" && CC=$cc CFLAGS="$cflags" ./configure $flags \
	&& make -j"$jobs" && make install && make install-private-headers) \
	>"$cache/logs/tcl-$spec.log" 2>&1 || return 1
    touch "$inst/.done"
}

# check SPEC: build tclprof against it, run the checks; prints the verdict.
check() {
    spec=$1
    log="$cache/logs/check-$spec.log"
    bld="$cache/tclprof/$spec"
    if [ "$spec" = system ]; then
	cfgflags=""
    else
	if ! build_tcl "$spec"; then
	    echo "FAIL $spec: Tcl did not build (see $cache/logs/tcl-$spec.log)"
	    return 1
	fi
	cfgflags="--with-tcl=$cache/inst/$spec/lib"
    fi
    rm -rf "$bld"
    mkdir -p "$bld"
    verdict=""
    if ! (cd "$bld" && "$top/configure" $cfgflags && make binaries) >"$log" 2>&1; then
	echo "FAIL $spec: tclprof did not build (see $log)"
	return 1
    fi
    # Debian's package directories (tcllib, sqlite3's binding, tDOM, itcl,
    # Thread: stubs-enabled, so any Tcl 8.6 loads them).
    libpath="/usr/share/tcltk /usr/lib/tcltk /usr/lib/tcltk/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)"
    # itcl looks for its itcl.tcl beside the Tcl that loads it.
    itcl=$(ls -d /usr/lib/tcltk/*/itcl4* /usr/share/tcltk/itcl4* 2>/dev/null | head -n 1)
    if [ -n "$itcl" ] && [ "$spec" != system ]; then
	ITCL_LIBRARY=$itcl
	export ITCL_LIBRARY
    fi
    if ! (cd "$bld" && make test TEST_LIBPATH="$libpath") >>"$log" 2>&1; then
	verdict="$verdict test"
    fi
    if [ -z "${MATRIX_SKIP_PROBE:-}" ] \
	    && ! (cd "$bld" && make probe PROBE_SCALE="${PROBE_SCALE:-1.0}" \
		TEST_LIBPATH="$libpath") >>"$log" 2>&1; then
	verdict="$verdict probe"
    fi
    for mode in frames trace; do
	if ! (cd "$bld" && make demo-check DEMOFLAGS="-mode $mode") >>"$log" 2>&1; then
	    verdict="$verdict demo-$mode"
	fi
    done
    case $spec in
    *-static)
	# An application linking libtcl8.6.a that exports no symbol.
	if ! (cd "$bld" && make embed \
		&& TCLLIBPATH="$bld" ./embed "$top/tools/embed-check.tcl" embed.db) \
		>>"$log" 2>&1; then
	    verdict="$verdict embed"
	fi
	;;
    esac
    summary=$(grep -E '^all.tcl:' "$log" | tail -n 1 || true)
    if [ -n "${MATRIX_BENCH:-}" ]; then
	# The overhead on this build (a benchmark, never a verdict): the
	# Tcl thread's CPU time, profiled / bare, median of 11 rounds.
	bench="$cache/logs/bench-$spec.log"
	(cd "$bld" && make -s overhead \
	    OVERHEADFLAGS="-metric thread -rounds 11 -ms 300") >"$bench" 2>&1 || true
	summary="$summary; overhead $(awk '$1 == "fib" || $1 == "loop" {
	    printf "%s%s frames %s trace %s", sep, $1, $5, $6; sep = ", " }' "$bench")"
    fi
    if [ -n "$verdict" ]; then
	echo "FAIL $spec:$verdict ($summary; see $log)"
	# The log stays on the machine that ran the matrix: show what failed.
	grep -E '^==== .* FAILED$|[1-9][0-9]* wrong \(|FAIL' "$log" \
	    | head -n 40 | sed 's/^/    /'
	grep -A 12 -E '^---- Result was:' "$log" | head -n 60 | sed 's/^/    /'
	return 1
    fi
    echo "PASS $spec ($summary)"
}

passed=0
failed=0
for spec in $builds; do
    if check "$spec"; then
	passed=$((passed + 1))
    else
	failed=$((failed + 1))
    fi
done
echo "matrix: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
