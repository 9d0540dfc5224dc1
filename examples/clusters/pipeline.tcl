# pipeline.tcl --
#
#	A small record pipeline on tcllib, for `tclprof clusters`: CSV
#	lines are read (ingest), written as JSON (emit), signed (audit) and
#	parsed back (check). Each stage is a namespace; three of them share
#	one helper, ::normalize. Runs for the number of seconds given
#	(default 3).
#
#	    bin/tclprof record -o run.db -- examples/clusters/pipeline.tcl
#	    bin/tclprof clusters run.db
#	    bin/tclprof clusters run.db -directed
#
# Copyright (c) 2026 The tclprof authors. See the file LICENSE.

package require csv
package require json
package require json::write
package require md5
package require base64

proc normalize {s} { string trim [string tolower $s] }

namespace eval ingest {
    proc row {line} { lmap f [::csv::split $line] {::normalize $f} }
    proc batch {lines} { lmap l $lines {row $l} }
}
namespace eval emit {
    proc record {fields} {
	::json::write object {*}[concat {*}[lmap f $fields {
	    list [::normalize $f] [::json::write string $f]}]]
    }
    proc batch {rows} { lmap r $rows {record $r} }
}
namespace eval audit {
    proc sign {text} { ::base64::encode [::md5::md5 [::normalize $text]] }
    proc batch {texts} { lmap t $texts {sign $t} }
}
namespace eval check {
    proc parse {text} { ::json::json2dict $text }
    proc batch {texts} { lmap t $texts {parse $t} }
}

set lines {}
for {set i 0} {$i < 40} {incr i} {
    lappend lines "Alpha $i,\"Beta, $i\",Gamma,[expr {$i * 7}],Delta"
}
set seconds [expr {[llength $argv] ? [lindex $argv 0] : 3}]
set end [expr {[clock milliseconds] + int($seconds * 1000)}]
while {[clock milliseconds] < $end} {
    set rows [ingest::batch $lines]
    set docs [emit::batch $rows]
    audit::batch $docs
    check::batch $docs
}
