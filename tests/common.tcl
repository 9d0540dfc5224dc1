# common.tcl --
#
#	Shared by tclprof's test files (each sources it after the tcltest
#	preamble): the constraints, the loading of the test helper
#	extension, and procs that query the call tree of
#	[profiler report -format dict].
#
#	That tree is a list of root nodes; each node is a dict with the keys
#	name, kind (c, tcl or internal), self, total and children (a list of
#	nodes), and optionally file, line, type, module and calls. Names are
#	compared after removing one leading "::", so the pattern "a" matches
#	the proc "::a" and "*cburn" matches "tphelper::cburn" or
#	"::tphelper::cburn"; patterns are [string match] patterns.
#
# Copyright (c) 2026 The tclprof authors. See the file LICENSE.

namespace import -force ::tcltest::*

# Constraints.
#
#   signals	the test starts the sampler (SIGPROF, timers). On unless
#		valgrind is on: "make valgrind" passes -constraints valgrind
#		and so runs only the tests that send no signal. Setting
#		TCLPROF_VALGRIND in the environment has the same effect.
#   valgrind	the suite runs under valgrind (off unless asked for).
#   tclframes	the test needs Tcl frames merged into the C stacks (frames
#		or trace mode). On.
#   long	slow tests. Off unless -constraints long.
#   stress	stress tests. Off unless -constraints stress.
#
# A constraint named with -constraints on the command line keeps the value
# tcltest gave it.

proc tpConstraintDefault {name value} {
    if {$name ni [::tcltest::configure -constraints]} {
	testConstraint $name $value
    }
}
tpConstraintDefault valgrind [info exists ::env(TCLPROF_VALGRIND)]
tpConstraintDefault signals [expr {![testConstraint valgrind]}]
tpConstraintDefault tclframes 1
tpConstraintDefault long 0
tpConstraintDefault stress 0

# tpBuildDir --
#
#	The build directory: $env(TCLPROF_BUILDDIR) (make test sets it),
#	else the directory tclprof's shared library was loaded from.

proc tpBuildDir {} {
    if {[info exists ::env(TCLPROF_BUILDDIR)]} {
	return $::env(TCLPROF_BUILDDIR)
    }
    foreach pair [info loaded] {
	lassign $pair file prefix
	if {[string equal -nocase $prefix tclprof]} {
	    return [file dirname $file]
	}
    }
    return -code error "cannot find the build directory: set TCLPROF_BUILDDIR"
}

# tpLoadLib --
#
#	Loads one of the build's test libraries. A missing library is an
#	error, never a reason to skip: the test file fails loudly.

proc tpLoadLib {file prefix} {
    set path [file join [tpBuildDir] $file]
    if {![file exists $path]} {
	return -code error "$path is missing: build it with \"make\" first"
    }
    if {[list $path $prefix] in [info loaded {}]} {
	return
    }
    uplevel #0 [list load $path $prefix]
}

tpLoadLib libtphelper[info sharedlibextension] Tphelper

# tpCleanup --
#
#	Every test's -cleanup: stop the profiler if it runs, drop its data.

proc tpCleanup {} {
    catch {profiler stop}
    profiler reset
}

# tpEnvRestore --
#
#	Puts ::env back as saved (a list from [array get ::env]) without
#	unsetting the array: an unset array loses its link to the process's
#	environment, and a variable set after that no longer reaches the
#	processes exec starts.

proc tpEnvRestore {saved} {
    foreach name [array names ::env] {
	if {![dict exists $saved $name]} {
	    unset ::env($name)
	}
    }
    dict for {name value} $saved {
	if {![info exists ::env($name)] || $::env($name) ne $value} {
	    set ::env($name) $value
	}
    }
}

# tpErr --
#
#	Evaluates script in the caller; returns {code errorcode message} so a
#	test can check all three at once.

proc tpErr {script} {
    set code [catch {uplevel 1 $script} msg opts]
    set ec {}
    if {$code == 1} {
	set ec [dict get $opts -errorcode]
    }
    return [list $code $ec $msg]
}

# tpStatus --
#
#	One key of [profiler status].

proc tpStatus {key} {
    return [dict get [profiler status] $key]
}

# tpTree --
#
#	The dict report; extra arguments are passed to [profiler report].

proc tpTree {args} {
    return [profiler report -format dict {*}$args]
}

# tpScenario --
#
#	Profiles `script` in mode; returns the dict tree.

proc tpScenario {mode script {opts {}}} {
    profiler start -mode $mode {*}$opts
    try {
	uplevel #0 $script
    } finally {
	profiler stop
    }
    return [tpTree]
}

# tpNorm, tpMatch --
#
#	Name normalization and matching (see the file's header).

proc tpNorm {name} {
    if {[string match ::* $name]} {
	return [string range $name 2 end]
    }
    return $name
}

proc tpMatch {pattern name} {
    return [string match [tpNorm $pattern] [tpNorm $name]]
}

# tpSamples --
#
#	Samples in a tree: the sum of its roots' totals.

proc tpSamples {roots} {
    set sum 0
    foreach node $roots {
	incr sum [dict get $node total]
    }
    return $sum
}

# tpHotNodes, tpHotPath --
#
#	The hottest root-to-leaf path: start at the root with the largest
#	total and descend into the child with the largest total, as long as
#	that child's total exceeds the current node's self count (so a
#	function that burns in its own frame ends the path even if it has a
#	few cold callees). tpHotNodes returns the nodes, tpHotPath their
#	names.

proc tpHotNodes {roots} {
    set path {}
    set nodes $roots
    set floor -1
    while {[llength $nodes]} {
	set best {}
	set bestTotal -1
	foreach node $nodes {
	    if {[dict get $node total] > $bestTotal} {
		set best $node
		set bestTotal [dict get $node total]
	    }
	}
	if {$bestTotal <= $floor} {
	    break
	}
	lappend path $best
	set floor [dict get $best self]
	set nodes [dict get $best children]
    }
    return $path
}

proc tpHotPath {roots} {
    set names {}
    foreach node [tpHotNodes $roots] {
	lappend names [dict get $node name]
    }
    return $names
}

# tpSubseq --
#
#	1 if the patterns match elements of names in order (gaps allowed),
#	else 0.

proc tpSubseq {names patterns} {
    set i 0
    foreach name $names {
	if {$i < [llength $patterns] && [tpMatch [lindex $patterns $i] $name]} {
	    incr i
	}
    }
    return [expr {$i == [llength $patterns]}]
}

# tpHotHas --
#
#	1 if the hottest path holds the patterns as an ordered subsequence;
#	otherwise the hottest path itself, so a failing test shows it.

proc tpHotHas {roots patterns} {
    set path [tpHotPath $roots]
    if {[tpSubseq $path $patterns]} {
	return 1
    }
    return $path
}

# tpForEachNode --
#
#	Calls cmd with {node path} for every node of the tree, path being
#	the list of names from the root to the node included. Depth first.

proc tpForEachNode {roots cmd {path {}}} {
    foreach node $roots {
	set p [linsert $path end [dict get $node name]]
	{*}$cmd $node $p
	tpForEachNode [dict get $node children] $cmd $p
    }
}

# tpSumTotal --
#
#	Sum of total over the nodes whose name matches pattern, outermost
#	matches only (a recursive function is not counted twice).

proc tpSumTotal {roots pattern} {
    set sum 0
    foreach node $roots {
	if {[tpMatch $pattern [dict get $node name]]} {
	    incr sum [dict get $node total]
	} else {
	    incr sum [tpSumTotal [dict get $node children] $pattern]
	}
    }
    return $sum
}

# tpSumSelf --
#
#	Sum of self over all nodes whose name matches pattern.

proc tpSumSelf {roots pattern} {
    set sum 0
    foreach node $roots {
	if {[tpMatch $pattern [dict get $node name]]} {
	    incr sum [dict get $node self]
	}
	incr sum [tpSumSelf [dict get $node children] $pattern]
    }
    return $sum
}

# tpPathTotal --
#
#	Sum of total over the nodes at which the patterns, matched in order
#	along the path from the root, complete (the last pattern matches the
#	node itself). Outermost completions only. Gives "samples under
#	a > ... > z".

proc tpPathTotal {roots patterns {i 0}} {
    set sum 0
    set pattern [lindex $patterns $i]
    foreach node $roots {
	set j $i
	if {[tpMatch $pattern [dict get $node name]]} {
	    incr j
	    if {$j == [llength $patterns]} {
		incr sum [dict get $node total]
		continue
	    }
	}
	incr sum [tpPathTotal [dict get $node children] $patterns $j]
    }
    return $sum
}

# tpCount --
#
#	Number of nodes for which {*}cmd node returns true.

proc tpCount {roots cmd} {
    set n 0
    foreach node $roots {
	if {[{*}$cmd $node]} {
	    incr n
	}
	incr n [tpCount [dict get $node children] $cmd]
    }
    return $n
}

proc tpIsKind {kind node} {
    return [expr {[dict get $node kind] eq $kind}]
}

# tpDepth --
#
#	Depth of the tree (1 for a tree of roots only, 0 if empty).

proc tpDepth {roots} {
    set max 0
    foreach node $roots {
	set d [expr {1 + [tpDepth [dict get $node children]]}]
	if {$d > $max} {
	    set max $d
	}
    }
    return $max
}

# tpCheckTree --
#
#	Checks the invariants of a dict report: each node has the required
#	keys, a known kind, non-negative integer counts, and total == self +
#	the children's totals. Returns {} if all hold, else the first
#	problem found.

proc tpCheckTree {roots {where {}}} {
    foreach node $roots {
	if {[catch {dict size $node}]} {
	    return "$where: node is not a dict: $node"
	}
	foreach key {name kind self total children} {
	    if {![dict exists $node $key]} {
		return "$where: node lacks \"$key\": [dict remove $node children]"
	    }
	}
	set here [linsert $where end [dict get $node name]]
	if {[dict get $node kind] ni {c tcl internal}} {
	    return "$here: bad kind \"[dict get $node kind]\""
	}
	set self [dict get $node self]
	set total [dict get $node total]
	if {![string is wideinteger -strict $self] || $self < 0
		|| ![string is wideinteger -strict $total] || $total < 0} {
	    return "$here: bad counts self=$self total=$total"
	}
	set sum $self
	foreach child [dict get $node children] {
	    incr sum [dict get $child total]
	}
	if {$sum != $total} {
	    return "$here: total $total != self + children $sum"
	}
	set problem [tpCheckTree [dict get $node children] $here]
	if {$problem ne ""} {
	    return $problem
	}
    }
    return {}
}

# tpRatio --
#
#	part / whole as a double, 0 if whole is 0.

proc tpRatio {part whole} {
    if {$whole == 0} {
	return 0.0
    }
    return [expr {double($part) / $whole}]
}

# tpTicks --
#
#	Wall clock: whether every tick of the run in status dict st was
#	sampled or counted as missed (on a busy machine the sampler thread
#	wakes late; sampled plus missed is the elapsed time over the
#	interval whatever the load), and at least min sampled: 1, or a
#	message.

proc tpTicks {st {min 100}} {
    set min [tpFloor $min]
    set expect [expr {double([dict get $st elapsedUs]) / [dict get $st intervalUs]}]
    set ticks [expr {[dict get $st samples] + [dict get $st missed]}]
    if {[dict get $st samples] < $min} {
	return "[dict get $st samples] samples, fewer than $min"
    }
    return [tpWithin $ticks [expr {0.9 * $expect - 5}] [expr {1.02 * $expect + 5}]]
}

# tpFloor --
#
#	A floor on the samples a run of known length takes, n on Linux.
#	Under wine (the Windows job) one sample costs the program about a
#	millisecond and a loaded machine delivers a fifth of the ticks or
#	fewer: there the floor is a tenth of n. Tests that bound counts by
#	the ticks (tpTicks) or by CPU time keep their bounds everywhere.

proc tpFloor {n} {
    if {$::tcl_platform(platform) eq "windows"} {
	return [expr {$n / 10}]
    }
    return $n
}

# tpUnwindErrorsOk --
#
#	1 if the unwind errors of status dict st are none (Linux), or on
#	Windows at most 3% of the samples, and at least 1 allowed: under
#	wine a suspended thread's context now and then holds a return
#	address in no image, where the walk stops (win/platform.c); 11 of
#	1022 were seen beside a busy loop, under 1% on an idle machine. A
#	walk that failed for a reason of ours would fail most samples. Else
#	a message with the counts.

proc tpUnwindErrorsOk {st} {
    set unw [dict get $st unwindErrors]
    set max 0
    if {$::tcl_platform(platform) eq "windows"} {
	set max [expr {max(1, 3 * [dict get $st samples] / 100)}]
    }
    if {$unw <= $max} {
	return 1
    }
    return "$unw unwind errors of [dict get $st samples] samples"
}

# tpSamplePaths --
#
#	The samples of a dict tree as {path count} pairs, path being the
#	names from the root to the frame the sample ended in.

proc tpSamplePaths {roots {path {}}} {
    set out {}
    foreach node $roots {
	set p [linsert $path end [dict get $node name]]
	if {[dict get $node self] > 0} {
	    lappend out $p [dict get $node self]
	}
	lappend out {*}[tpSamplePaths [dict get $node children] $p]
    }
    return $out
}

# tpCpus --
#
#	The number of CPUs online (1 if it cannot be known).

proc tpCpus {} {
    if {[catch {exec getconf _NPROCESSORS_ONLN} n] || ![string is integer -strict $n] || $n < 1} {
	return 1
    }
    return $n
}

# tpWithin --
#
#	1 if value lies in [lo, hi]; else "value not in [lo, hi]", so a
#	failing test shows the number.

proc tpWithin {value lo hi} {
    if {$value >= $lo && $value <= $hi} {
	return 1
    }
    return "$value not in \[$lo, $hi\]"
}
