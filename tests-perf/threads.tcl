# threads.tcl --
#
#	The overhead of sampling every thread: 4 Thread package workers
#	run the same fixed work at once (fib, every call a proc call), bare
#	and under profiler start -threads all, in turn, several rounds.
#	Each worker times its own work with clock microseconds; each round
#	gives a ratio profiled/bare per worker, and the median ratio of each
#	worker is reported, with the samples its thread got. Never a
#	pass/fail test: on a machine with fewer cores than workers the
#	workers also wait for each other.
#
#	fib 28 (the default) is about 0.3 s of work per job: with shorter
#	jobs (fib 24, 40 ms) the ratios moved by up to 0.3 between runs.
#
#	-metric wall (the default) times each job by the wall clock; on a
#	machine with fewer cores than workers that counts the waits for a
#	core too. -metric thread times it by the worker thread's own CPU
#	time (Linux's /proc/thread-self/schedstat, which counts the time
#	in the signal handler and the kernel's delivery of the signal):
#	each worker's slowdown, whatever the others do.
#
#	Usage: tclsh threads.tcl ?-rounds n? ?-workers n? ?-n fib-arg?
#		?-interval us? ?-clock wall|cpu? ?-metric wall|thread?
#
# Copyright (c) 2026 The tclprof authors. See the file LICENSE.

package require Thread
package require tclprof

array set opt {-rounds 9 -workers 4 -n 28 -interval 1000 -clock wall
    -metric wall}
array set opt $argv
if {$opt(-metric) ni {wall thread}} {
    puts stderr "bad -metric \"$opt(-metric)\": must be wall or thread"
    exit 2
}

set pool {}
for {set w 0} {$w < $opt(-workers)} {incr w} {
    lappend pool [thread::create {
	proc fib {n} {
	    if {$n < 2} {
		return $n
	    }
	    return [expr {[fib [expr {$n - 1}]] + [fib [expr {$n - 2}]]}]
	}
	proc now {metric} {
	    if {$metric eq "wall"} {
		return [clock microseconds]
	    }
	    set f [open /proc/thread-self/schedstat]
	    set ns [lindex [gets $f] 0]
	    close $f
	    return [expr {$ns / 1000}]
	}
	proc job {n metric} {
	    set t0 [now $metric]
	    fib $n
	    return [expr {[now $metric] - $t0}]
	}
	thread::wait
    }]
}

# round --
#
#	Runs the job on every worker at once; returns their times (us).

proc round {n} {
    global pool done
    foreach t $pool {
	unset -nocomplain done($t)
	thread::send -async $t [list job $n $::opt(-metric)] done($t)
    }
    set times {}
    foreach t $pool {
	while {![info exists done($t)]} {
	    vwait done($t)
	}
	lappend times $done($t)
    }
    return $times
}

proc median {l} {
    set l [lsort -real $l]
    return [lindex $l [expr {[llength $l] / 2}]]
}

round $opt(-n)			;# warm up: byte-compile fib everywhere
array set ratios {}
for {set r 0} {$r < $opt(-rounds)} {incr r} {
    # Which goes first alternates: a machine getting busier or quieter
    # during a round favours neither.
    if {$r % 2} {
	set bare [round $opt(-n)]
    }
    profiler start -interval $opt(-interval) -clock $opt(-clock)
    set prof [round $opt(-n)]
    profiler stop
    if {$r % 2 == 0} {
	set bare [round $opt(-n)]
    }
    foreach t $pool b $bare p $prof {
	lappend ratios($t) [expr {double($p) / $b}]
    }
}
set samples {}
foreach row [profiler threads] {
    dict set samples [lindex $row 1] [lindex $row 2]
}
puts [format "threads: %d workers, fib %d, %d rounds, interval %d us, clock %s, %s time" \
	$opt(-workers) $opt(-n) $opt(-rounds) $opt(-interval) $opt(-clock) \
	$opt(-metric)]
foreach t $pool {
    puts [format "  %-20s median ratio %.3f  samples %s" $t \
	    [median $ratios($t)] \
	    [expr {[dict exists $samples $t] ? [dict get $samples $t] : 0}]]
}
foreach t $pool {
    thread::release $t
}
