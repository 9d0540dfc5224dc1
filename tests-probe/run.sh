#!/bin/sh
# run.sh -- builds the probe extension and runs every probe scenario in
# both modes at 1 kHz and 5 kHz; prints the failures (and FEW/ERR) with
# their wrong paths, and a total per run. Exits 1 if any sample was
# wrong, any scenario raised an error, or a profiled process crashed.
#   probe/run.sh [scenario-glob] [scale]      (scale 1.0: ~1.5 s each)
#   PROBE_ALL=1 probe/run.sh                  also print the passes
#   PROBE_VERBOSE=1 ...                       also print matching paths
# Needs the tclprof build in the parent directory (make).
set -e
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
glob=${1:-*}
scale=${2:-1.0}
# TCLSH, TCL_CFLAGS, TCL_STUB_LIB: the Tcl to run against (make probe
# sets them from tclConfig.sh; the defaults are Debian's tcl8.6-dev).
# The probe extension is built in the build tree (PROBE_BUILDDIR, which
# make probe sets): probes of several builds may run at once, and reports
# read the library's symbols from the file.
tclsh=${TCLSH:-tclsh8.6}
PEXT_LIB=${PROBE_BUILDDIR:-$here}/libpext.so
export PEXT_LIB
gcc -O2 -g -Wall -shared -fPIC -DUSE_TCL_STUBS ${TCL_CFLAGS:--I/usr/include/tcl8.6} \
    "$here/pext.c" -o "$PEXT_LIB" ${TCL_STUB_LIB:--ltclstub8.6}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
for mode in frames trace; do
    # The default (-oncpu tick: running time sampled at the kernel's tick)
    # at 1 kHz, and every interval signalled by the sampler thread at
    # 5 kHz, the rate that puts the most samples in transitions.
    for spec in 1000:tick 200:sampler; do
	interval=${spec%%:*}
	oncpu=${spec##*:}
	# No pipe: the exit status of each run must be seen (a crash is a
	# failure, not a shorter listing).
	rc=0
	TCLLIBPATH="${PROBE_BUILDDIR:-$top} ${PROBE_LIBPATH:-}" "$tclsh" "$here/harness.tcl" $mode $interval "$glob" $scale $oncpu \
	    >"$out" 2>&1 || rc=$?
	if [ -n "$PROBE_ALL" ]; then
	    cat "$out"
	else
	    awk '/^(PASS)/{p=0} /^(FAIL|FEW|ERR)/{p=1} /^TOTAL/{p=0; print} p' "$out"
	fi
	if [ $rc -ne 0 ]; then
	    [ $rc -gt 1 ] && echo "CRASH harness $mode $interval $oncpu: exit status $rc"
	    tail -n 5 "$out"	# An error of the harness itself shows too.
	    status=1
	fi
	rc=0
	TCLLIBPATH="${PROBE_BUILDDIR:-$top} ${PROBE_LIBPATH:-}" "$tclsh" "$here/window.tcl" $mode $interval $oncpu || rc=$?
	if [ $rc -ne 0 ]; then
	    [ $rc -gt 1 ] && echo "CRASH window $mode $interval $oncpu: exit status $rc"
	    status=1
	fi
    done
done
exit $status
