# stale.tcl --
#
#	How often trace mode files a sample under the wrong command because
#	its shadow stack is stale at a call boundary: between the moment Tcl
#	enters a command (numLevels already counts it) and the moment the
#	enter trace records it, the shadow entry at that level still names
#	the previous command run there.
#
#	The workload alternates two procs at one level, ::stA and ::stB,
#	which call ::stA1 and ::stB1 respectively (bodies compiled inline,
#	no further calls). A sample on a path "::stA ; ::stB1" or
#	"::stB ; ::stA1" is impossible, so wrong: the stale entry of the
#	other inner proc. (The same window at the outer level files the
#	entry of ::stB under ::stA's name; that cannot be told from a true
#	::stA sample, so the impossible paths measure one of the two
#	levels: the full rate is about twice.) Frames mode is measured too,
#	as a reference. Before trace mode checked each innermost entry's
#	call site: 10.6-10.9% of trace-mode samples at 250 us; since: 0.
#
#	Usage: tclsh stale.tcl ?-ms n? ?-rounds n? ?-interval us?
#		?-modes {trace frames}?
#
# Copyright (c) 2026 The tclprof authors. See the file LICENSE.

package require tclprof

array set opt {-ms 2000 -rounds 3 -interval 250 -modes {trace frames}}
array set opt $argv

proc ::stA {} { ::stA1 }
proc ::stB {} { ::stB1 }
proc ::stA1 {} {
    set s 0
    for {set i 0} {$i < 8} {incr i} { incr s $i }
    return $s
}
proc ::stB1 {} {
    set s 0
    for {set i 0} {$i < 8} {incr i} { incr s $i }
    return $s
}
proc ::stLoop {ms} {
    set end [expr {[clock milliseconds] + $ms}]
    while {[clock milliseconds] < $end} {
	for {set k 0} {$k < 200} {incr k} {
	    ::stA
	    ::stB
	}
    }
}

# wrongPaths --
#
#	Samples of the dict tree on an impossible path, and all samples.

proc wrongPaths {roots {parent {}}} {
    set wrong 0
    set all 0
    foreach node $roots {
	set name [dict get $node name]
	if {($parent eq "::stA" && $name eq "::stB1")
		|| ($parent eq "::stB" && $name eq "::stA1")} {
	    incr wrong [dict get $node total]
	} else {
	    incr wrong [lindex [wrongPaths [dict get $node children] $name] 0]
	}
	incr all [dict get $node total]
    }
    return [list $wrong $all]
}

foreach mode $opt(-modes) {
    for {set r 1} {$r <= $opt(-rounds)} {incr r} {
	profiler start -mode $mode -interval $opt(-interval)
	::stLoop $opt(-ms)
	profiler stop
	lassign [wrongPaths [profiler report -format dict]] wrong all
	profiler reset
	puts [format "%-6s round %d: %5d of %6d samples on an impossible path (%.2f%%)" \
	    $mode $r $wrong $all [expr {$all ? 100.0 * $wrong / $all : 0}]]
    }
}
