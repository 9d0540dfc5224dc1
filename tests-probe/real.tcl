# real.tcl --
#
#	Probe programs on real C extensions from Debian (sqlite3's Tcl
#	binding, tDOM, itcl 4, Thread) and on plain Tcl shapes of real
#	programs (deep coroutine chains, objects and commands in variables,
#	a child interp calling its parent). Sourced by harness.tcl after
#	scenarios.tcl. A missing extension is an error: the probe fails.

package require sqlite3
package require tdom
package require itcl
package require Thread

# 1. sqlite3 calling a [db function] written in Tcl.
sqlite3 ::rdb :memory:
::rdb eval {create table t(x integer, s text)}
::rdb transaction {
    for {set i 0} {$i < 200} {incr i} {
	::rdb eval {insert into t values($i, 'k' || ($i * 37 % 200))}
    }
}
proc ::sqf_f {x} { pext::burn 1; return $x }
::rdb function sqf_f ::sqf_f
proc ::sqf_p {} { ::rdb eval {select sum(sqf_f(x)) from t where x < 5} }
scenario sqlitefunc {} {rounds ::sqf_p} \
    {::sqf_p rdb ?libtclsqlite3* ?libtclsqlite3* sqlite3_step sqlite3VdbeExec
     ?libtclsqlite3* ::sqf_f pext::burn PextBurnCmd BurnA}

# 1b. The same with a callback that does almost nothing: most of its
#     samples fall while Tcl enters and leaves it, in the trampoline's
#     loop (a clang build's copy inlined into TclEvalObjEx).
proc ::sqt_f {x} { expr {$x * 2} }
::rdb function sqt_f ::sqt_f
proc ::sqt_p {} {
    for {set i 0} {$i < 20} {incr i} { ::rdb eval {select sum(sqt_f(x)) from t} }
}
scenario sqlitetiny {} {rounds ::sqt_p} \
    {::sqt_p rdb ?libtclsqlite3* ?libtclsqlite3* sqlite3_step sqlite3VdbeExec
     ?libtclsqlite3* ?Dispatch ::sqt_f}

# 2. sqlite3 calling a [db collate] comparison written in Tcl.
proc ::sqc_cmp {a b} { pext::burn 1; string compare $a $b }
::rdb collate sqc_coll ::sqc_cmp
proc ::sqc_p {} {
    ::rdb eval {select s from t where x < 4 order by s collate sqc_coll}
}
scenario sqlitecollate {} {rounds ::sqc_p} \
    {::sqc_p rdb ?libtclsqlite3* ?libtclsqlite3* sqlite3_step sqlite3VdbeExec
     ?sqlite3VdbeSorter* ?libsqlite3* ?libsqlite3* ?libsqlite3* ?libsqlite3*
     ?sqlite3VdbeRecordCompare* ?libtclsqlite3* ::sqc_cmp pext::burn PextBurnCmd BurnA}

# 3. tDOM's expat parser calling a Tcl element handler; the parser is
#    held in a variable.
proc ::td_start {name atts} { pext::burn 1 }
proc ::td_p {} {
    set p [expat -elementstartcommand ::td_start]
    $p parse {<a><b/><c/><d/><e/></a>}
    $p free
}
scenario tdomsax {} {rounds ::td_p} \
    {::td_p xmlparser* ?libtdom* ?libtdom* ?XML_Parse* ?libexpat* ?libexpat*
     ?libexpat* ?libexpat* ?libexpat* ?libexpat* ?libtdom* ?libtdom*
     ::td_start pext::burn PextBurnCmd BurnA}

# 4. tDOM documents: node objects held in variables, a Tcl proc called
#    per node.
proc ::td_node {n} { pext::burn 1 }
set ::tdDoc [dom parse {<r><i/><i/><i/><i/><i/></r>}]
proc ::tdw_p {} {
    set root [$::tdDoc documentElement]
    foreach n [$root childNodes] { ::td_node $n }
}
scenario tdomwalk {} {rounds ::tdw_p} \
    {::tdw_p ::td_node pext::burn PextBurnCmd BurnA}

# 5. itcl 4: a method of an object held in a variable, calling a method
#    of another object.
itcl::class ::ItShape {
    method area {} { pext::burn 1 }
    method twice {other} { $other area; $other area }
}
set ::itA [::ItShape #auto]
set ::itB [::ItShape #auto]
proc ::it_p {} { $::itA twice $::itB }
scenario itclmethod {} {rounds ::it_p} \
    {::it_p *twice *area pext::burn PextBurnCmd BurnA}

# 6. Thread: a script sent to this thread's own interp, and a shared
#    variable's lock around a Tcl call.
proc ::th_q {} { pext::burn 1 }
proc ::th_p {} { thread::send [thread::id] ::th_q }
scenario threadsend {} {rounds ::th_p} \
    {::th_p thread::send ?libthread* ?libthread* ::th_q pext::burn PextBurnCmd BurnA}
proc ::tl_q {} { pext::burn 1 }
proc ::tl_p {} { tsv::lock rth { ::tl_q } }
scenario tsvlock {} {rounds ::tl_p} \
    {::tl_p tsv::lock ?libthread* ::tl_q pext::burn PextBurnCmd BurnA}

# 7. A chain of 100 coroutines, each resuming the next; the innermost
#    burns.
namespace eval ::rco {}
proc ::rco::body {next} {
    yield
    while 1 {
	if {$next eq ""} { pext::burn 5 } else { $next }
	yield
    }
}
set ::rcoNext ""
for {set i 0} {$i < 100} {incr i} {
    coroutine ::rco::c$i ::rco::body $::rcoNext
    set ::rcoNext ::rco::c$i
}
proc ::rco_p {} { $::rcoNext }
set ::rcoPath {::rco_p}
for {set i 99} {$i >= 0} {incr i -1} {
    lappend ::rcoPath "coroutine ::rco::c$i" ::rco::body
}
lappend ::rcoPath pext::burn PextBurnCmd BurnA
scenario corochain {} {rounds ::rco_p} $::rcoPath

# 8. TclOO objects and a command held in variables.
oo::class create ::RShape {
    method area {} { pext::burn 1 }
    method twice {} { my area; my area }
}
oo::class create ::RSquare { superclass ::RShape }
set ::rsq [::RSquare new]
proc ::roo_p {} { $::rsq twice }
scenario oovar {} {rounds ::roo_p} \
    {::roo_p {::RShape twice} {::RShape area} pext::burn PextBurnCmd BurnA}
proc ::rcv_q {} { pext::burn 1 }
proc ::rcv_p {} { set c ::rcv_q; $c; $c }
scenario cmdvar {} {rounds ::rcv_p} {::rcv_p ::rcv_q pext::burn PextBurnCmd BurnA}

# 9. A child interp held in a variable, calling its parent through an
#    alias.
proc ::rch_parent {} { pext::burn 1 }
set ::rchChild [interp create]
interp alias $::rchChild up {} ::rch_parent
$::rchChild eval { proc work {} { up; up } }
proc ::rch_p {} { $::rchChild eval work }
scenario childvar {} {rounds ::rch_p} \
    {::rch_p interp* ::work up ::rch_parent pext::burn PextBurnCmd BurnA}

# 10. Event loop: a handler run by vwait, an alias, lsort -command into
#     a method, a lambda.
proc ::rev_h {} { pext::burn 2; set ::revDone 1 }
proc ::rev_p {} { after 0 ::rev_h; vwait ::revDone }
scenario vwaithandler {} {rounds ::rev_p} \
    {::rev_p vwait ::rev_h pext::burn PextBurnCmd BurnA}
proc ::ral_q {x} { pext::burn 1 }
interp alias {} ::ral_twice {} ::ral_q
proc ::ral_p {} { ::ral_twice 1; ::ral_twice 2 }
scenario aliasproc {} {rounds ::ral_p} {::ral_p ?ral_twice ::ral_q pext::burn PextBurnCmd BurnA}
oo::class create ::RCmp { method cmp {a b} { pext::burn 1; expr {$a - $b} } }
set ::rcmp [::RCmp new]
proc ::rls_p {} { lsort -command [list $::rcmp cmp] {3 1 2} }
scenario lsortmethod {} {rounds ::rls_p} \
    {::rls_p lsort {::RCmp cmp} pext::burn PextBurnCmd BurnA}
proc ::rap_p {} { apply {{} { pext::burn 2 }} }
scenario applyburn {} {rounds ::rap_p} {::rap_p {apply *} pext::burn PextBurnCmd BurnA}
