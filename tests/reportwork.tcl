# reportwork.tcl --
#
#	The workload of report.test, export.test and html.test: procs whose
#	share of the samples is known by construction, a recursive proc, a
#	proc never called, and procs whose names need escaping in the folded
#	format. Each proc burns for a given CPU time, in C (tphelper::cburn)
#	or in Tcl bytecode, so margins hold on a loaded machine. Sourced by the
#	tests, and read back by the "lines" report (keep the line numbers of
#	::rw::top and ::rw::never in sync with report.test).
#
# Copyright (c) 2026 The tclprof authors. See the file LICENSE.

namespace eval ::rw {}

proc ::rw::top {ms} {
    ::rw::cpart [expr {$ms * 4 / 10}]
    ::rw::tclpart [expr {$ms * 3 / 10}]
    ::rw::rec 4 [expr {$ms / 10}]
    ::rw::odd [expr {$ms / 10}]
}
proc ::rw::cpart {ms} {
    tphelper::cburn $ms
}
proc ::rw::tclpart {ms} {
    set end [expr {[tphelper::cpuus] + $ms * 1000}]
    while {[tphelper::cpuus] < $end} {
	for {set i 0} {$i < 1000} {incr i} {}
    }
}
proc ::rw::rec {n ms} {
    if {$n > 0} {
	return [::rw::rec [expr {$n - 1}] $ms]
    }
    ::rw::tclpart $ms
}
proc ::rw::odd {ms} {
    "::rw::semi;colon" [expr {$ms / 3}]
    "::rw::new\nline" [expr {$ms / 3}]
    "::rw::leaf 42" [expr {$ms / 3}]
}
proc "::rw::semi;colon" {ms} { ::rw::spin $ms }
proc "::rw::new\nline" {ms} { ::rw::spin $ms }
proc "::rw::leaf 42" {ms} {
    set end [expr {[tphelper::cpuus] + $ms * 1000}]
    while {[tphelper::cpuus] < $end} {
	for {set i 0} {$i < 1000} {incr i} {}
    }
}
proc ::rw::spin {ms} {
    set end [expr {[tphelper::cpuus] + $ms * 1000}]
    while {[tphelper::cpuus] < $end} {
	for {set i 0} {$i < 1000} {incr i} {}
    }
}
proc ::rw::never {} {
    return "never called"
}

# Windows' thread CPU clock advances by the scheduler's tick (10-15 ms):
# too coarse for the short parts. There the parts burn wall time.
if {$tcl_platform(platform) eq "windows"} {
    proc ::tphelper::cpuus {} { clock microseconds }
}
