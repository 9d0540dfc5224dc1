# overhead.tcl --
#
#	The profiler's overhead, measured the way TIP 527 asks: with
#	::tcl::unsupported::timerate (calibrated, compiled, time-bounded),
#	side by side in one run. For each workload the bare run and the
#	profiled runs (frames mode, trace mode) alternate, several rounds;
#	each round gives a ratio profiled/bare, and the median ratio is
#	reported. Never a pass/fail test: these machines are noisy.
#
#	Usage: tclsh overhead.tcl ?-rounds n? ?-ms per-measure? ?-interval us?
#		?-clock wall|cpu? ?-unwind tables|libunwind? ?-metric wall|thread?
#		?-keep seconds?
#
#	-keep runs the profiler as a flight recorder (profiler start -keep):
#	with -interval 10000, its cost when left on at 100 Hz.
#
#	-metric wall (the default) times each measure by the wall clock
#	(timerate). -metric thread runs a fixed number of iterations and
#	times them by the Tcl thread's own CPU time (the test helper's
#	tphelper::cpuus: CLOCK_THREAD_CPUTIME_ID, which counts the time the
#	thread spends in the signal handler and in the kernel delivering
#	the signal): the program's slowdown when it has a core of its own,
#	without the wall clock's noise from other jobs on a busy machine.
#	The profiler's sampler and drain threads are not counted; they run
#	on another core.
#
# Copyright (c) 2026 The tclprof authors. See the file LICENSE.

package require tclprof

array set opt {-rounds 21 -ms 150 -interval 1000 -clock wall -unwind tables
    -metric wall -keep 0}
array set opt $argv
if {$opt(-metric) ni {wall thread}} {
    puts stderr "bad -metric \"$opt(-metric)\": must be wall or thread"
    exit 2
}
if {$opt(-metric) eq "thread"} {
    # The test helper library of the build (make bench sets
    # TCLPROF_BUILDDIR): its cpuus reads the thread's CPU clock.
    if {![info exists env(TCLPROF_BUILDDIR)]} {
	puts stderr "-metric thread needs TCLPROF_BUILDDIR (make bench sets it)"
	exit 2
    }
    load [file join $env(TCLPROF_BUILDDIR) \
	    libtphelper[info sharedlibextension]] Tphelper
}

# A proc-call-heavy workload (every call is a proc call: the worst case
# for trace mode's per-command cost) and a loop-heavy string/list one.

proc fib {n} {
    if {$n < 2} {
	return $n
    }
    return [expr {[fib [expr {$n - 1}]] + [fib [expr {$n - 2}]]}]
}

proc loopwork {} {
    set s ""
    set l {}
    for {set i 0} {$i < 2000} {incr i} {
	append s [string index "abcdefgh" [expr {$i % 8}]]
	lappend l [string length $s]
	if {[string first "hab" $s] < 0} {
	    set l [lrange $l 0 end]
	}
    }
    return [llength [lsort -integer $l]]
}

set workloads {
    fib	{fib 18}
    loop {loopwork}
}

# measure --
#
#	Microseconds per iteration of script under mode (bare: no profiler).

proc measure {mode script} {
    global opt
    if {$mode ne "bare"} {
	set keep [expr {$opt(-keep) > 0 ? [list -keep $opt(-keep)] : {}}]
	profiler start -mode $mode -interval $opt(-interval) -clock $opt(-clock) \
		-unwind $opt(-unwind) {*}$keep
    }
    if {$opt(-metric) eq "thread"} {
	global count
	set t0 [::tphelper::cpuus]
	time $script $count($script)
	set us [expr {double([::tphelper::cpuus] - $t0) / $count($script)}]
    } else {
	set us [lindex [::tcl::unsupported::timerate $script $opt(-ms)] 0]
    }
    if {$mode ne "bare"} {
	profiler stop
	profiler reset
    }
    return $us
}

proc median {values} {
    set s [lsort -real $values]
    set n [llength $s]
    if {$n % 2} {
	return [lindex $s [expr {$n / 2}]]
    }
    return [expr {([lindex $s [expr {$n / 2 - 1}]] + [lindex $s [expr {$n / 2}]]) / 2.0}]
}

puts "tclprof [package require tclprof] overhead, Tcl [info patchlevel],\
	$opt(-rounds) rounds of $opt(-ms) ms, sampling every $opt(-interval) us\
	of $opt(-clock) time[expr {$opt(-keep) > 0 ? ", keeping the last\
	$opt(-keep) s" : ""}], unwinder $opt(-unwind), timed by\
	[expr {$opt(-metric) eq "wall" ? "the wall clock"
	    : "the thread's CPU time"}]"
puts [format "%-8s %12s %14s %14s %10s %10s" workload "bare us/it" \
	"frames us/it" "trace us/it" frames/bare trace/bare]
foreach {name script} $workloads {
    # -metric thread: iterations for about -ms of the bare run.
    set count($script) [expr {max(1, int($opt(-ms) * 1000.0
	    / [lindex [::tcl::unsupported::timerate $script 100] 0]))}]
    # Warm up: compile the procs, fault in the profiler's memory.
    measure bare $script
    measure frames $script
    measure trace $script
    set rf {}
    set rt {}
    set bare {}
    set fr {}
    set tr {}
    for {set r 0} {$r < $opt(-rounds)} {incr r} {
	# Alternate the order so drift does not favour one mode.
	set order [expr {$r % 2 ? {trace frames bare} : {bare frames trace}}]
	foreach mode $order {
	    set t($mode) [measure $mode $script]
	}
	lappend bare $t(bare)
	lappend fr $t(frames)
	lappend tr $t(trace)
	lappend rf [expr {$t(frames) / $t(bare)}]
	lappend rt [expr {$t(trace) / $t(bare)}]
    }
    puts [format "%-8s %12.3f %14.3f %14.3f %10.3f %10.3f" $name \
	    [median $bare] [median $fr] [median $tr] [median $rf] [median $rt]]
}
