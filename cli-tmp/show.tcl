
proc alpha {n} { for {set i 0} {$i < $n} {incr i} {} }
proc beta {n} { for {set i 0} {$i < $n} {incr i} {} }
proc gamma {n} { for {set i 0} {$i < $n} {incr i} {} }
proc never {} {}
proc spin {cmd ms} {
    set end [expr {[clock milliseconds] + $ms}]
    while {[clock milliseconds] < $end} { $cmd 20000 }
}

puts "argv0=$argv0 argc=$argc script=[info script] level=[info level]"
foreach a $argv { puts "arg=<$a>" }
alpha 200000
puts -nonewline "no newline at the end"
