# bench.tcl --
#
#	The profiler's cost on six realistic programs (programs/*.tcl: deep
#	recursion, text processing, tcllib json and struct::graph, an event
#	loop on sockets and pipes, coroutine pipelines, TclOO with mixins
#	and filters), each run as its own process the way a user runs it:
#	bare (tclsh prog.tcl) and under `tclprof record` in each mode,
#	writing a pprof export at the end. Rounds interleave the runs
#	(the order rotates each round); each round gives ratios profiled/bare
#	of wall time, of CPU time (user + system, the profiler's threads,
#	start-up and export included) and of the Tcl thread's CPU time in
#	the program alone (threadcpu.tcl: on a machine shared with other
#	work, the steadiest measure of the program's own slowdown), and the
#	median ratios are reported with the median peak resident memory
#	(VmHWM, everything included) of each, then how far the rounds spread
#	(quartiles of the bare times and wall ratios). The program's output
#	must be the same profiled and bare. Never a pass/fail test: these machines
#	are noisy; read ratios, not times.
#
#	Usage: tclsh bench.tcl ?-rounds n? ?-modes {frames trace}?
#		(a mode may say how running time is sampled: frames:sampler;
#		flight is frames mode at 100 Hz with --keep 60)
#		?-programs {recursion ...}? ?-interval us? ?-scale factor?
#
# Copyright (c) 2026 The tclprof authors. See the file LICENSE.

set here [file dirname [file normalize [info script]]]
set top [file dirname $here]
array set opt {-rounds 5 -modes {frames trace} -interval 1000 -scale 1.0}
# Work units per program: about 2-3 s each on a quiet 2-core VM (the
# event loop's time is its round trips' latency, not CPU: 2.2 s, but
# 11.5 s in one run).
set scales {recursion 300 text 144 tcllib 200 events 120 coroutines 350 tcloo 600}
set opt(-programs) [dict keys $scales]
array set opt $argv

set tmp [file join [expr {[info exists env(TMPDIR)] ? $env(TMPDIR) : "/tmp"}] \
	tclprof-bench-[pid]]
file mkdir $tmp
set timeCmd [auto_execok time]
if {[file executable /usr/bin/time]} {
    set timeCmd /usr/bin/time
}

# run --
#
#	Runs one program in mode (bare or a profiler mode), through
#	threadcpu.tcl; returns {wallSeconds cpuSeconds maxRssKb stdout
#	threadSeconds}.

proc run {prog mode} {
    global opt here top tmp scales timeCmd
    set scale [expr {max(1, int([dict get $scales $prog] * $opt(-scale)))}]
    set script [file join $here programs $prog.tcl]
    set wrap [file join $here threadcpu.tcl]
    set tclsh [info nameofexecutable]
    if {$mode eq "bare"} {
	set cmd [list $tclsh $wrap $script $scale]
    } else {
	# A mode may name how running time is sampled: frames:sampler.
	# flight: the flight recorder as left on in production (frames
	# mode at 100 Hz keeping the last minute), its window written at
	# exit.
	set outFile [file join $tmp $prog.[string map {: -} $mode].pb.gz]
	lassign [split $mode :] mode oncpu
	set extra [expr {$oncpu eq "" ? {} : [list --oncpu $oncpu]}]
	set interval $opt(-interval)
	if {$mode eq "flight"} {
	    set mode frames
	    set interval 10000
	    lappend extra --keep 60
	}
	set cmd [list $tclsh [file join $top bin tclprof] record -mode $mode \
		{*}$extra -interval $interval -f pprof -o $outFile \
		-- $wrap $script $scale]
    }
    set rss [file join $tmp rss]
    set cpuFile [file join $tmp cpu]
    file delete $cpuFile
    set ::env(TCLPROF_BENCH_CPU) $cpuFile
    set t0 [clock microseconds]
    set out [exec $timeCmd -f "%U %S %M" -o $rss {*}$cmd 2>/dev/null]
    set secs [expr {([clock microseconds] - $t0) / 1e6}]
    set f [open $rss]
    lassign [lindex [split [string trim [read $f]] \n] end] user sys kb
    close $f
    set f [open $cpuFile]
    set thread [expr {[string trim [read $f]] / 1e9}]
    close $f
    return [list $secs [expr {$user + $sys}] $kb $out $thread]
}

proc median {values} {
    set s [lsort -real $values]
    set n [llength $s]
    if {$n % 2} {
	return [lindex $s [expr {$n / 2}]]
    }
    return [expr {([lindex $s [expr {$n / 2 - 1}]] + [lindex $s [expr {$n / 2}]]) / 2.0}]
}

# quartiles --
#
#	The lowest, first quartile, third quartile and highest of values
#	(the quartiles by the nearest rank): how far the rounds spread.

proc quartiles {values} {
    set s [lsort -real $values]
    set n [llength $s]
    return [list [lindex $s 0] [lindex $s [expr {int(ceil($n / 4.0)) - 1}]] \
	    [lindex $s [expr {int(ceil(3 * $n / 4.0)) - 1}]] [lindex $s end]]
}

set modes [list bare {*}$opt(-modes)]
puts "tclprof bench: Tcl [info patchlevel], $opt(-rounds) rounds, interval\
	$opt(-interval) us, wall clock, pprof export included"
foreach prog $opt(-programs) {
    foreach m $modes {
	set times($prog,$m) {}
	set rss($prog,$m) {}
    }
}
for {set r 0} {$r < $opt(-rounds)} {incr r} {
    foreach prog $opt(-programs) {
	set order [concat [lrange $modes [expr {$r % [llength $modes]}] end] \
		[lrange $modes 0 [expr {$r % [llength $modes] - 1}]]]
	set round {}
	set cpuRound {}
	set thrRound {}
	foreach m $order {
	    lassign [run $prog $m] secs cpu kb out thread
	    dict set round $m $secs
	    dict set cpuRound $m $cpu
	    dict set thrRound $m $thread
	    lappend rss($prog,$m) $kb
	    if {$m eq "bare"} {
		set expected($prog) $out
	    } else {
		set got($prog,$m) $out
	    }
	}
	foreach m $modes {
	    lappend times($prog,$m) [dict get $round $m]
	    if {$m ne "bare"} {
		lappend ratios($prog,$m) \
			[expr {[dict get $round $m] / [dict get $round bare]}]
		lappend cpuRatios($prog,$m) [expr {[dict get $cpuRound $m]
			/ max(0.01, [dict get $cpuRound bare])}]
		lappend thrRatios($prog,$m) [expr {[dict get $thrRound $m]
			/ max(0.001, [dict get $thrRound bare])}]
	    }
	}
    }
    puts stderr "round [expr {$r + 1}] of $opt(-rounds) done"
}
set hdr [format "%-11s %7s %8s" program "bare s" "bare MB"]
foreach m $opt(-modes) {
    append hdr [format " %8s %8s %8s %8s" "$m" "cpu" "thread" "+MB"]
}
puts $hdr
foreach prog $opt(-programs) {
    set line [format "%-11s %7.2f %8.1f" $prog [median $times($prog,bare)] \
	    [expr {[median $rss($prog,bare)] / 1024.0}]]
    foreach m $opt(-modes) {
	append line [format " %8.3f %8.3f %8.3f %+8.1f" [median $ratios($prog,$m)] \
		[median $cpuRatios($prog,$m)] [median $thrRatios($prog,$m)] \
		[expr {([median $rss($prog,$m)] - [median $rss($prog,bare)]) / 1024.0}]]
	if {$got($prog,$m) ne $expected($prog)} {
	    append line "  OUTPUT DIFFERS ($m)"
	}
    }
    puts $line
}

# The spread says how far to trust a median: on a shared machine the
# bare run's own time moves by tens of percent between rounds, and a
# ratio's quartiles a few percent around its median.
puts "spread over the rounds (lowest, quartiles, highest): bare seconds; wall ratios"
foreach prog $opt(-programs) {
    set line [format "%-11s %5.2f %5.2f-%5.2f %5.2f" $prog \
	    {*}[quartiles $times($prog,bare)]]
    foreach m $opt(-modes) {
	append line [format "   %s %5.3f %5.3f-%5.3f %5.3f" $m \
		{*}[quartiles $ratios($prog,$m)]]
    }
    puts $line
}
file delete -force $tmp
