# recursion.tcl --
#
#	Deep recursion: a recursive tree walk 400 levels deep, and naive
#	Fibonacci. argv: scale (work units; 1 is about 0.1 s here).

proc depth {n acc} {
    if {$n == 0} {
	return $acc
    }
    return [depth [expr {$n - 1}] [expr {($acc * 31 + $n) % 1000003}]]
}
proc fib {n} {
    if {$n < 2} {
	return $n
    }
    return [expr {[fib [expr {$n - 1}]] + [fib [expr {$n - 2}]]}]
}
set scale [expr {[llength $argv] ? [lindex $argv 0] : 25}]
set sum 0
for {set i 0} {$i < $scale} {incr i} {
    for {set j 0} {$j < 60} {incr j} {
	set sum [expr {($sum + [depth 400 $j]) % 1000003}]
    }
    incr sum [fib 16]
}
puts "recursion $sum"
