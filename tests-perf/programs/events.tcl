# events.tcl --
#
#	An event loop on sockets and pipes: a server on 127.0.0.1 echoes
#	lines back to a client, and a cat child process echoes lines through
#	a pipe, all driven by fileevents and vwait. argv: scale.

set scale [expr {[llength $argv] ? [lindex $argv 0] : 25}]
set rounds [expr {$scale * 400}]

proc accept {chan addr port} {
    fconfigure $chan -buffering line -blocking 0
    fileevent $chan readable [list serve $chan]
}
proc serve {chan} {
    if {[gets $chan line] >= 0} {
	puts $chan [string toupper $line]
    } elseif {[eof $chan]} {
	close $chan
    }
}
proc fromServer {chan} {
    global got rounds
    if {[gets $chan line] >= 0} {
	if {[incr got(sock)] < $rounds} {
	    puts $chan "message $got(sock) [string repeat x 40]"
	} else {
	    set ::done(sock) 1
	}
    }
}
proc fromPipe {chan} {
    global got rounds
    if {[gets $chan line] >= 0} {
	if {[incr got(pipe)] < $rounds} {
	    puts $chan "line $got(pipe) [string repeat y 40]"
	} else {
	    set ::done(pipe) 1
	}
    }
}
set got(sock) 0
set got(pipe) 0
set server [socket -server accept -myaddr 127.0.0.1 0]
set port [lindex [fconfigure $server -sockname] 2]
set client [socket 127.0.0.1 $port]
fconfigure $client -buffering line -blocking 0
fileevent $client readable [list fromServer $client]
set pipe [open |cat r+]
fconfigure $pipe -buffering line -blocking 0
fileevent $pipe readable [list fromPipe $pipe]
puts $client "message 0"
puts $pipe "line 0"
vwait done(sock)
if {![info exists done(pipe)]} {
    vwait done(pipe)
}
close $client
close $pipe
close $server
puts "events $got(sock) $got(pipe)"
