# threadcpu.tcl --
#
#	bench.tcl's wrapper around a program: threadcpu.tcl program ?arg
#	...? sources the program with those arguments, then writes to the
#	file $env(TCLPROF_BENCH_CPU) the CPU time, in nanoseconds, that the
#	Tcl thread spent in it (Linux's /proc/thread-self/schedstat: it
#	counts the time the thread spends in the signal handler and in the
#	kernel delivering the signal, not the profiler's own threads, nor
#	start-up and export). That is the program's slowdown when it has a
#	core of its own, without the wall clock's noise from other jobs.
#
# Copyright (c) 2026 The tclprof authors. See the file LICENSE.

proc ::BenchThreadNs {} {
    set f [open /proc/thread-self/schedstat]
    set ns [lindex [gets $f] 0]
    close $f
    return $ns
}

set ::benchProg [lindex $argv 0]
set argv [lrange $argv 1 end]
set argc [llength $argv]
set argv0 $::benchProg
set ::benchT0 [::BenchThreadNs]
source $::benchProg
set ::benchT1 [::BenchThreadNs]
set ::benchF [open $env(TCLPROF_BENCH_CPU) w]
puts $::benchF [expr {$::benchT1 - $::benchT0}]
close $::benchF
