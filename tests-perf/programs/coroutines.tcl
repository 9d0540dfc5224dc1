# coroutines.tcl --
#
#	Coroutine pipelines: a generator, two filters and a sink, each a
#	coroutine handing values on with yield. argv: scale.

proc generator {n} {
    yield [info coroutine]
    for {set i 0} {$i < $n} {incr i} {
	yield $i
    }
    return -1
}
proc squares {src} {
    yield [info coroutine]
    while 1 {
	set v [$src]
	if {$v < 0} {
	    return -1
	}
	yield [expr {$v * $v % 1009}]
    }
}
proc odds {src} {
    yield [info coroutine]
    while 1 {
	set v [$src]
	if {$v < 0} {
	    return -1
	}
	if {$v % 2} {
	    yield [format %05d $v]
	}
    }
}
set scale [expr {[llength $argv] ? [lindex $argv 0] : 25}]
set sum 0
for {set r 0} {$r < $scale} {incr r} {
    coroutine gen$r generator 4000
    coroutine sq$r squares gen$r
    coroutine od$r odds sq$r
    while 1 {
	set v [od$r]
	if {$v eq -1} {
	    break
	}
	incr sum [scan $v %d]
    }
}
puts "coroutines $sum"
