# window.tcl --
#	Transition windows: a proc calls a C command that re-enters Tcl
#	(Tcl_EvalEx) for a very short proc, 100k times. Every sample's C
#	frames must sit under the right Tcl frame: PextEvalExCmd and
#	EvalExHelper only directly under pext::evalex, never under ::fa_q.
#	tclsh8.6 window.tcl mode interval ?oncpu?
#	Exits 1 if any sample is misplaced.
package require tclprof
load [expr {[info exists env(PEXT_LIB)] ? $env(PEXT_LIB)
	: [file join [file dirname [file normalize [info script]]] libpext.so]}] Pext
lassign $argv mode interval oncpu
if {$oncpu eq ""} {
    set oncpu tick
}
proc ::fa_q {} { pext::burn 0 }
proc ::fa_p {} { for {set i 0} {$i < 100} {incr i} { pext::evalex ::fa_q } }
profiler start -mode $mode -interval $interval -oncpu $oncpu
for {set j 0} {$j < 600} {incr j} { ::fa_p }
profiler stop
set oncpu [dict get [profiler status] oncpu]
set f /tmp/window-[pid].folded
profiler export -format folded -file $f
set ch [open $f]; set lines [split [string trim [read $ch]] \n]; close $ch
file delete $f
set total 0; set bad 0
array set kinds {}
foreach line $lines {
    regexp {^(.*) (\d+)$} $line -> stack c
    incr total $c
    set fr [split $stack \;]
    set i [lsearch -exact $fr ::fa_p]
    set seg [lrange $fr $i end]
    # Legal shapes: ::fa_p ?pext::evalex ?PextEvalExCmd ?EvalExHelper ?::fa_q ...
    set ok 1
    set e [lsearch -exact $seg EvalExHelper]
    set q [lsearch -exact $seg ::fa_q]
    set p [lsearch -exact $seg PextEvalExCmd]
    if {$q >= 0 && ($e > $q || $p > $q)} { set ok 0 }
    if {$p >= 0 && ![string match *pext::evalex [lindex $seg $p-1]]} { set ok 0 }
    if {[llength [lsearch -all -glob $seg *pext::evalex]] > 1} { set ok 0 }
    if {!$ok} {
	incr bad $c
	set k [join $seg { ; }]
	if {![info exists kinds($k)]} { set kinds($k) 0 }
	incr kinds($k) $c
    }
}
puts [format "window %-6s %4d us %-7s: %d samples, %d misplaced (%.2f%%)" $mode $interval $oncpu $total $bad [expr {100.0*$bad/$total}]]
foreach {k c} [lsort -stride 2 -index 1 -integer -decreasing [array get kinds]] { puts "   $c  $k" }
exit [expr {$bad > 0}]
