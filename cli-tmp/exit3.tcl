
proc alpha {n} { for {set i 0} {$i < $n} {incr i} {} }
proc beta {n} { for {set i 0} {$i < $n} {incr i} {} }
proc gamma {n} { for {set i 0} {$i < $n} {incr i} {} }
proc never {} {}
proc spin {cmd ms} {
    set end [expr {[clock milliseconds] + $ms}]
    while {[clock milliseconds] < $end} { $cmd 20000 }
}

alpha 1500000
exit 3
puts unreachable
