# all.tcl --
#
#	Runs every *.test file of tclprof's suite (each in its own tclsh
#	unless -singleproc 1) and exits non-zero if any test failed or any
#	test file could not run to its end: a test file that errors out, or
#	whose tclsh is killed by a signal, counts as one failure. Prints the
#	version and the file of the tclprof it tested, and as its last line
#	"N passed, M failed" (", K skipped" added when tests were skipped).
#
#	Usage: tclsh all.tcl ?tcltest options?, e.g. from the build
#	directory: make test TESTFLAGS="-file ctree.test -verbose bpe"
#
# Copyright (c) 2026 The tclprof authors. See the file LICENSE.

package prefer latest
package require Tcl 8.6-
package require tcltest 2.5
namespace import ::tcltest::*

configure {*}$argv -testdir [file dirname [file normalize [info script]]]

# Load what the test files will load, and say what it is: a suite that
# passes against a stale installed copy proves nothing.

loadTestedCommands
set tpVersion [package require tclprof]
set tpLibrary "(not found in \[info loaded\])"
foreach tpPair [info loaded] {
    if {[string equal -nocase [lindex $tpPair 1] tclprof]} {
	set tpLibrary [lindex $tpPair 0]
    }
}
puts [outputChannel] "tclprof $tpVersion loaded from $tpLibrary"
puts [outputChannel] "Tcl [info patchlevel] ([info nameofexecutable])"

# The totals. tcltest resets its counters inside [cleanupTests 1], after
# calling cleanupTestsHook: the hook keeps the last values it saw, which
# are the totals over all files when runAllTests makes that final call.

namespace eval ::tcltest {
    proc cleanupTestsHook {} {
	variable numTests
	set ::tpTotals [array get numTests]
    }
}
set tpTotals {Total 0 Passed 0 Skipped 0 Failed 0}

# Test files that did not run to their end. runAllTests reports each on
# the output channel as "Test file error: ..." (a child that exits
# abnormally or is killed by a signal, or a file that errors out in
# single-process mode) but only returns a boolean: a transformation on
# the output channel counts those lines as they go by, and notes each
# failed test for a recap above the last line.

namespace eval ::tpWatch {
    variable partial ""
    variable fileErrors 0
    variable failures {}
    variable pending ""
    variable label ""

    proc handler {op chan args} {
	variable partial
	variable fileErrors
	switch -- $op {
	    initialize {
		return {initialize finalize write flush}
	    }
	    write {
		set data [lindex $args 0]
		append partial $data
		set lines [split $partial \n]
		set partial [lindex $lines end]
		foreach line [lrange $lines 0 end-1] {
		    see $line
		}
		return $data
	    }
	    flush {
		return {}
	    }
	    finalize {
		return
	    }
	}
    }

    # see --
    #
    #	Notes a line of the output: a test file that did not run to its
    #	end, and each failed test with the line after its "Result was:"
    #	(or its error), which the recap repeats at the end: a log cut to
    #	its last lines still says what failed.

    proc see {line} {
	variable fileErrors
	variable failures
	variable pending
	variable label
	# The transformation sits below the end-of-line translation: on
	# Windows each line still ends in its carriage return.
	set line [string trimright $line \r]
	if {[string match "Test file error:*" $line]} {
	    incr fileErrors
	    lappend failures $line
	} elseif {[regexp {^==== (\S+) FAILED$} $line -> name]} {
	    if {$pending ne ""} {
		lappend failures $pending
	    }
	    set pending ""
	} elseif {[regexp {^==== (\S+) .+ FAILED$} $line -> name]} {
	    set pending $name
	    set label ""
	} elseif {$pending eq ""} {
	    return
	} elseif {[regexp {^---- (Result was|Test generated error|Test completed normally)} $line]} {
	    set label [string trim $line {- }]
	} elseif {$label ne "" && ![string match "---- *" $line]} {
	    lappend failures "$pending: $label [string range $line 0 199]"
	    set pending ""
	} elseif {$label ne "" && [string match "---- errorInfo:*" $line]} {
	    lappend failures "$pending: [string range $line 5 199]"
	    set pending ""
	}
    }
}
chan push [outputChannel] ::tpWatch::handler

set tpFailed [runAllTests]

flush [outputChannel]
chan pop [outputChannel]

set tpFailedCount [expr {[dict get $tpTotals Failed] + $::tpWatch::fileErrors}]
set tpSummary "[dict get $tpTotals Passed] passed, $tpFailedCount failed"
if {[dict get $tpTotals Skipped] > 0} {
    append tpSummary ", [dict get $tpTotals Skipped] skipped"
}
if {[llength $::tpWatch::failures] > 0} {
    puts [outputChannel] "Failures:"
    foreach tpLine $::tpWatch::failures {
	puts [outputChannel] "  $tpLine"
    }
}
if {$::tpWatch::fileErrors > 0} {
    puts [outputChannel] "$::tpWatch::fileErrors test file(s) did not run to\
	    their end (error or signal): each counted as one failure"
}
puts [outputChannel] $tpSummary
flush [outputChannel]

exit [expr {($tpFailed || $tpFailedCount > 0) ? 1 : 0}]
