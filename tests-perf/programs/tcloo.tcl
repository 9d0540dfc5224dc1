# tcloo.tcl --
#
#	TclOO: a class hierarchy with a mixin and a filter, methods calling
#	next through the chain. argv: scale.

oo::class create Counted {
    variable calls
    method count args {
	incr calls
	next {*}$args
    }
}
oo::class create Logged {
    method area {} {
	set a [next]
	return [expr {$a + 0}]
    }
}
oo::class create Shape {
    variable w h
    constructor {width height} {
	set w $width
	set h $height
    }
    method area {} {
	return [expr {$w * $h}]
    }
    method scale {k} {
	set w [expr {$w * $k}]
	set h [expr {$h * $k}]
	return [my area]
    }
}
oo::class create Square {
    superclass Shape
    constructor {side} {
	next $side $side
    }
    method area {} {
	return [expr {[next] + 1}]
    }
}
oo::define Shape mixin Logged
oo::define Shape {
    mixin -append Counted
    filter count
}
set scale [expr {[llength $argv] ? [lindex $argv 0] : 25}]
set sum 0
for {set i 0} {$i < $scale} {incr i} {
    for {set j 0} {$j < 400} {incr j} {
	set s [Square new [expr {$j % 7 + 1}]]
	incr sum [$s area]
	incr sum [$s scale 2]
	$s destroy
    }
}
puts "tcloo $sum"
