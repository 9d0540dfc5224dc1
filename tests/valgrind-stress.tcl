# valgrind-stress.tcl --
#
#	The signal path under valgrind (make valgrind runs it after the
#	non-signal suite): a short hostile workload (recursion, C re-entering
#	Tcl, a coroutine, the event loop, lsort -command) sampled in each mode.
#	Memcheck must report no error; the script checks that samples came.
#
# Copyright (c) 2026 The tclprof authors. See the file LICENSE.

set auto_path [linsert $auto_path 0 $env(TCLPROF_BUILDDIR)]
package require tclprof
load [file join $env(TCLPROF_BUILDDIR) libtphelper[info sharedlibextension]] Tphelper
proc rec {n} { if {$n > 0} { rec [expr {$n-1}] } else { tphelper::cburn 5 } }
proc a {} { tphelper::ceval {rec 50} }
coroutine co apply {{} { while 1 { rec 10; yield } }}
foreach mode {frames trace} {
    profiler start -mode $mode -interval 2000
    set end [expr {[clock milliseconds] + 3000}]
    while {[clock milliseconds] < $end} { a; co; after 1; lsort -command {apply {{x y} {rec 3; expr {$x-$y}}}} {3 1 2} }
    profiler stop
    set n [dict get [profiler status] samples]
    puts "valgrind-stress: $mode mode, $n samples"
    if {$n < 20} {
	puts stderr "valgrind-stress: too few samples in $mode mode"
	exit 1
    }
    profiler reset
}
