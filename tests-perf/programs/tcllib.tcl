# tcllib.tcl --
#
#	tcllib: build JSON documents with json::write, parse them with
#	json::json2dict, and build and walk a struct::graph. argv: scale.

package require json
package require json::write
package require struct::graph

set scale [expr {[llength $argv] ? [lindex $argv 0] : 25}]
set total 0
for {set i 0} {$i < $scale} {incr i} {
    set items {}
    for {set j 0} {$j < 60} {incr j} {
	lappend items [json::write object id $j name [json::write string item$j] \
	    tags [json::write array [json::write string a] [json::write string b]]]
    }
    set doc [json::write array {*}$items]
    set d [json::json2dict $doc]
    incr total [llength $d]

    set g [struct::graph]
    for {set j 0} {$j < 60} {incr j} {
	$g node insert n$j
	$g node set n$j weight $j
    }
    for {set j 1} {$j < 60} {incr j} {
	$g arc insert n[expr {$j / 2}] n$j a$j
    }
    $g walk n0 -order pre -type dfs -command [list apply {{args} {
	incr ::total
    }}]
    foreach n [$g nodes] {
	incr total [llength [$g nodes -out $n]]
    }
    $g destroy
}
puts "tcllib $total"
