# text.tcl --
#
#	Text processing: generate lines, split into words, count them in a
#	dict, regexp and string map over every line, format a report.
#	argv: scale.

set words {alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu}
set scale [expr {[llength $argv] ? [lindex $argv 0] : 25}]
set counts [dict create]
set matched 0
for {set i 0} {$i < $scale} {incr i} {
    set lines {}
    for {set j 0} {$j < 400} {incr j} {
	set line {}
	for {set k 0} {$k < 12} {incr k} {
	    lappend line [lindex $words [expr {($i * 7 + $j * 3 + $k * $k) % 12}]]
	}
	lappend lines [join $line " "]
    }
    foreach line $lines {
	foreach w [split $line] {
	    dict incr counts $w
	}
	if {[regexp {(\w+) (eta|mu) (\w+)} $line -> a b c]} {
	    incr matched
	}
	set line [string map {alpha ALPHA beta BETA} $line]
	set line [string toupper [string range $line 0 20]]
    }
}
set out {}
dict for {w n} $counts {
    append out [format "%-10s %8d\n" $w $n]
}
puts "text [string length $out] $matched"
