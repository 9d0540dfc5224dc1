# demo.tcl --
#
#	tclprof's demo: the Figure 6 program of the paper "Integrated Tcl/C call stacks" (doWork calls doWork2,
#	which calls the C command tok2column, whose C function asks the Tcl
#	procs ::MtiFS::IsVHDLLanguage and ::MtiFS::IsVerilogLanguage which
#	language "Verilog" is), profiled. The report shows Tcl procs and C
#	functions interleaved in their calling order, the shape of the
#	paper's Figure 9:
#
#	    ::doWork > ::doWork2 > tok2column > tclprim_tok2column >
#		lang2lang_type > ::MtiFS::IsVerilogLanguage ...
#
# Usage:
#	tclsh demo.tcl ?-n iterations? ?-mode frames|trace? ?-html file? ?-check 1?
#
#	With -check 1 the demo exits with status 1 unless the Figure 6 order
#	holds: at least 95% of the samples in ::MtiFS::IsVerilogLanguage have
#	the path above (the others are listed; the build matrix runs it on
#	every Tcl build).
#
#	The flame graph goes to demo-flamegraph.html unless -html "" is given.
#
#	Without -n, the number of iterations is chosen so the profiled run
#	takes about 3 seconds. libtok2column.so is looked for in
#	$env(TCLPROF_BUILDDIR), else in the directory above this script's.
#
# Copyright (c) 2026 The tclprof authors. See the file LICENSE.

package require Tcl 8.6-

proc usage {} {
    puts stderr "usage: [file tail $::argv0] ?-n iterations? ?-mode frames|trace? ?-html file|\"\"? ?-check 1?"
    exit 2
}

set n {}
set mode {}
set html demo-flamegraph.html
set check 0
if {[llength $argv] % 2} usage
foreach {opt value} $argv {
    switch -- $opt {
	-n {
	    if {![string is integer -strict $value] || $value < 1} usage
	    set n $value
	}
	-mode {
	    if {$value ni {frames trace}} usage
	    set mode $value
	}
	-html {
	    set html $value
	}
	-check {
	    if {![string is boolean -strict $value]} usage
	    set check $value
	}
	default usage
    }
}

# Find the build directory: it holds the demo's extension and, when the
# package is not installed, tclprof itself.

if {[info exists env(TCLPROF_BUILDDIR)]} {
    set buildDir $env(TCLPROF_BUILDDIR)
} else {
    set buildDir [file dirname [file dirname [file normalize [info script]]]]
}
set lib [file join $buildDir libtok2column[info sharedlibextension]]
if {![file exists $lib]} {
    puts stderr "demo: $lib not found: build it with \"make\" (or set TCLPROF_BUILDDIR)"
    exit 1
}
load $lib Tok2column
if {$buildDir ni $auto_path} {
    lappend auto_path $buildDir
}
package require tclprof

# The program of Figure 6 of "Integrated Tcl/C call stacks" ...

proc doWork {howMany} {
    set l [list]
    for {set i 0} {$i < $howMany} {incr i} {
	set l [doWork2 $i]
    }
    puts $l
}

proc doWork2 {i} {
    set line "The quick brown fox jumps over the lazy dog."
    set l [tok2column Verilog 23 $line]
    return $l
}

# ... and the procs of its Figure 10, which tok2column's C code calls.

namespace eval MtiFS {}

proc MtiFS::VHDLLanguage {} {
    return "vhdl"
}

proc MtiFS::VerilogLanguage {} {
    return "verilog"
}

proc MtiFS::IsVHDLLanguage {type} {
    if {[string compare -nocase $type [VHDLLanguage]] == 0} {return 1}
    return 0
}

proc MtiFS::IsVerilogLanguage {type} {
    if {[string compare -nocase $type [VerilogLanguage]] == 0} {return 1}
    return 0
}

# Choose the number of iterations for about 3 seconds of work.

proc calibrate {} {
    set t0 [clock microseconds]
    for {set i 0} {[clock microseconds] - $t0 < 300000} {incr i} {
	doWork2 $i
    }
    return [expr {([clock microseconds] - $t0) / double($i)}]
}

if {$n eq ""} {
    set n [expr {max(1000, int(3e6 / max([calibrate], 0.01)))}]
}

set startArgs {}
if {$mode ne ""} {
    lappend startArgs -mode $mode
}
# Under `tclprof record` the profiler already runs, from the first line:
# the command line writes that profile; the demo only does its work.
if {[dict get [profiler status] running]} {
    set elapsed [time {doWork $n}]
    puts [format "demo: %d iterations, %.2f s (profiled by tclprof record)" \
	    $n [expr {[lindex $elapsed 0] / 1e6}]]
    return
}
profiler start {*}$startArgs
set elapsed [time {doWork $n}]
profiler stop

# The tree, without the frames below 0.5% of the samples (all of them are in
# [profiler report -format dict] and in the flame graph).
puts [profiler report -threshold 0.5]
set st [profiler status]
puts [format "demo: %d iterations, %.2f s, %d samples, mode %s, %d dropped, %d merge mismatches" \
	$n [expr {[lindex $elapsed 0] / 1e6}] [dict get $st samples] \
	[dict get $st mode] [dict get $st dropped] [dict get $st mergeMismatches]]
if {$html ne ""} {
    profiler export -format html -file $html
    puts "demo: flame graph written to [file normalize $html]"
}

# The Figure 6 order, checked on the folded stacks (visible frames only).

if {$check} {
    set want [list ::doWork ::doWork2 tok2column tclprim_tok2column \
	lang2lang_type ::MtiFS::IsVerilogLanguage]
    set folded [file tempfile tmp demo.folded]
    close $folded
    profiler export -format folded -file $tmp
    set f [open $tmp]
    set right 0
    set wrong 0
    while {[gets $f line] >= 0} {
	regexp {^(.*) (\d+)$} $line -> path count
	set frames [lmap fr [split $path ";"] {regsub {^(\S+).*$} $fr {\1}}]
	set at [lsearch -exact $frames ::MtiFS::IsVerilogLanguage]
	if {$at < 0} {
	    continue
	}
	set from [lsearch -exact $frames ::doWork]
	if {$from >= 0 && [lrange $frames $from $at] eq $want} {
	    incr right $count
	} else {
	    incr wrong $count
	    puts "demo check: wrong path ($count): $path"
	}
    }
    close $f
    file delete $tmp
    set all [expr {$right + $wrong}]
    puts "demo check: $right of $all samples in ::MtiFS::IsVerilogLanguage\
	    in the Figure 6 order"
    if {$all == 0 || $right < 0.95 * $all} {
	exit 1
    }
}
