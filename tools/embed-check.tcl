# embed-check.tcl --
#
#	Run by tools/matrix.sh through the embedding example (make embed)
#	on static builds of Tcl: an application that links libtcl8.6.a and
#	exports no symbol. Checks, while the profiler the example started
#	runs, that frames mode was chosen and that the script's procs sit
#	right under the application's main(), libtcl's code hidden.
#	Exits 1 otherwise.
#
# Copyright (c) 2026 The tclprof authors. See the file LICENSE.

proc embedA {} {embedB}
proc embedB {} {
    set t0 [clock milliseconds]
    while {[clock milliseconds] - $t0 < 500} {
	set x [string repeat a 100]
    }
}
embedA

set mode [dict get [profiler status] mode]
set tmp [file join [file dirname [info script]] embed-check-[pid].folded]
profiler export -format folded -file $tmp
set f [open $tmp]
set right 0
set all 0
while {[gets $f line] >= 0} {
    if {![regexp {^(.*) (\d+)$} $line -> path count]} continue
    if {[string first ::embedB $path] < 0} continue
    incr all $count
    if {[string match "main;::embedA;::embedB*" $path]
	    || [string match "*;main;::embedA;::embedB*" $path]} {
	incr right $count
    } else {
	puts "embed check: wrong path ($count): $path"
    }
}
close $f
file delete $tmp
puts "embed check: mode $mode, $right of $all samples in ::embedB under main ; ::embedA"
if {$mode ne "frames" || $all == 0 || $right < 0.95 * $all} {
    exit 1
}
