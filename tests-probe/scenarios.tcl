# scenarios.tcl --
#
#	Mixed C/Tcl programs for tclprof, each with its true call path.
#	Sourced by harness.tcl (which loads libpext.so). $::R is the
#	number of 5 ms rounds of each scenario (about 1.5 s at scale 1).

set ::R [expr {int(300 * $scale)}]

# Simple wrappers so one scenario = one proc call.
proc ::rounds {script} {
    for {set i 0} {$i < $::R} {incr i} { uplevel #0 $script }
}

# 1. Tcl_EvalEx from a C command.
proc ::ex_q {ms} { pext::burn $ms }
proc ::ex_p {ms} { pext::evalex "::ex_q $ms" }
scenario evalex {} {rounds {::ex_p 5}} \
    {::ex_p pext::evalex PextEvalExCmd EvalExHelper ::ex_q pext::burn PextBurnCmd BurnA}

# 2. Tcl_EvalObjv from a C command.
proc ::ov_q {ms} { pext::burn $ms }
proc ::ov_p {ms} { pext::evalobjv ::ov_q $ms }
scenario evalobjv {} {rounds {::ov_p 5}} \
    {::ov_p pext::evalobjv PextEvalObjvCmd EvalObjvHelper ::ov_q pext::burn PextBurnCmd BurnA}

# 3. Tcl_GlobalEval.
proc ::gl_q {ms} { pext::burn $ms }
proc ::gl_p {ms} { pext::global "::gl_q $ms" }
scenario globaleval {} {rounds {::gl_p 5}} \
    {::gl_p pext::global PextGlobalCmd GlobalHelper ::gl_q pext::burn PextBurnCmd BurnA}

# 4. Tcl_EvalObjEx(TCL_EVAL_DIRECT).
proc ::ed_q {ms} { pext::burn $ms }
proc ::ed_p {ms} { pext::evaldirect [list ::ed_q $ms] }
scenario evaldirect {} {rounds {::ed_p 5}} \
    {::ed_p pext::evaldirect PextEvalDirectCmd DirectEvalHelper ::ed_q pext::burn PextBurnCmd BurnA}

# 4b. The same with a proc that does almost nothing: most of its samples
#     fall while Tcl enters and leaves it.
proc ::edt_q {} { set x 1 }
proc ::edt_p {} {
    set cmd [list ::edt_q]
    for {set i 0} {$i < 5000} {incr i} { pext::evaldirect $cmd }
}
# (?Dispatch: a static build names libtcl's static functions that lie
# outside the code its stub tables locate as application C.)
scenario evaldirecttiny {} {rounds ::edt_p} \
    {::edt_p pext::evaldirect PextEvalDirectCmd DirectEvalHelper ?Dispatch ::edt_q}

# 5. C burns before and after evaluating Tcl: no stale Tcl frame may
#    stay under BurnBetween once the script returned.
proc ::bw_q {ms} { pext::burn $ms }
proc ::bw_p {ms} { pext::between $ms [list ::bw_q $ms] $ms }
scenario between {} {rounds {::bw_p 2}} \
    {::bw_p pext::between PextBetweenCmd BetweenHelper BurnBetween} \
    {::bw_p pext::between PextBetweenCmd BetweenHelper ::bw_q pext::burn PextBurnCmd BurnA}

# 6. C -> Tcl -> C -> Tcl ... 6 levels deep.
proc ::lev {n ms} { pext::down $n $ms }
proc ::dn_p {ms} { ::lev 6 $ms }
set ::dnpath {::dn_p}
for {set k 0} {$k < 6} {incr k} { lappend ::dnpath ::lev pext::down PextDownCmd DownHelper }
lappend ::dnpath ::lev pext::down PextDownCmd BurnBottom
scenario down6 {} {rounds {::dn_p 5}} $::dnpath

# 7. NR command evaluating a script with Tcl_NREvalObj (no new trampoline).
proc ::nr_q {ms} { pext::burn $ms }
proc ::nr_p {ms} { pext::nreval [list ::nr_q $ms] }
scenario nreval {} {rounds {::nr_p 5}} \
    {::nr_p pext::nreval ::nr_q pext::burn PextBurnCmd BurnA}

# 8. NR command with a post callback burning in C after its script.
proc ::np_q {ms} { pext::burn $ms }
proc ::np_p {ms} { pext::nrpost $ms [list ::np_q $ms] }
scenario nrpost {} {rounds {::np_p 2}} \
    {::np_p pext::nrpost NrPostCallback BurnPost} \
    {::np_p pext::nrpost ::np_q pext::burn PextBurnCmd BurnA}

# 9. An NR command's objProc called directly from C (Tcl_NRCallObjProc
#    makes a trampoline; Tcl never dispatched a command).
proc ::dnr_q {ms} { pext::burn $ms }
proc ::dnr_p {ms} { pext::direct pext::nreval [list ::dnr_q $ms] }
scenario directnr {} {rounds {::dnr_p 5}} \
    {::dnr_p pext::direct PextDirectCmd DirectHelper ?pext::nreval NrEvalObjProc ::dnr_q pext::burn PextBurnCmd BurnA}

# 10. A proc's objProc called directly from C.
proc ::dp_q {ms} { pext::burn $ms }
proc ::dp_p {ms} { pext::direct ::dp_q $ms }
scenario directproc {} {rounds {::dp_p 5}} \
    {::dp_p pext::direct PextDirectCmd DirectHelper ::dp_q pext::burn PextBurnCmd BurnA}

# 11. Tcl_CreateObjTrace callback burning in C before ::tracedLeaf runs.
proc ::tracedLeaf {} {}
proc ::ot_q {} { ::tracedLeaf }
proc ::ot_p {ms} { pext::objtrace $ms ::ot_q }
scenario objtrace {} {rounds {::ot_p 5}} \
    {::ot_p pext::objtrace PextObjTraceCmd ::ot_q ?::tracedLeaf ObjTraceProc BurnTrace}

# 12. C variable trace burning in C, fired by a compiled set.
proc ::vt_set {} { set ::vtv 1 }
proc ::vt_p {} { ::vt_set }
scenario cvartrace {pext::vtrace ::vtv 5} {rounds ::vt_p} \
    {::vt_p ::vt_set ?set VarTraceBurn BurnVT}

# 13. C variable trace evaluating Tcl (global level) that calls C.
proc ::ve_q {ms} { pext::burn $ms }
proc ::ve_set {} { set ::vev 1 }
proc ::ve_p {} { ::ve_set }
scenario cvartraceeval {pext::vtraceeval ::vev {::ve_q 5}} {rounds ::ve_p} \
    {::ve_p ::ve_set ?set VarTraceEval VarTraceEvalHelper ::ve_q pext::burn PextBurnCmd BurnA}

# 14. C timer handler run by vwait.
proc ::tm_p {ms} { pext::timer $ms ::tmdone; vwait ::tmdone }
scenario ctimer {} {rounds {::tm_p 5}} \
    {::tm_p vwait TimerBurnProc BurnTimer}

# 15. Tcl_DoOneEvent loop in C running an after event (Tcl proc -> C).
proc ::pu_cb {ms} { pext::burn $ms; set ::pudone 1 }
proc ::pu_p {ms} {
    unset -nocomplain ::pudone
    after 0 [list ::pu_cb $ms]
    pext::pump ::pudone
}
scenario pump {} {rounds {::pu_p 5}} \
    {::pu_p pext::pump PextPumpCmd PumpLoop ::pu_cb pext::burn PextBurnCmd BurnA}

# 16. Channel readable handler (chan pipe) -> proc -> C.
proc ::ch_read {r ms} { gets $r; pext::burn $ms; set ::chdone 1 }
proc ::ch_p {ms} {
    lassign [chan pipe] r w
    chan event $r readable [list ::ch_read $r $ms]
    puts $w x; flush $w
    vwait ::chdone
    close $r; close $w
}
scenario chanevent {} {rounds {::ch_p 5}} \
    {::ch_p vwait ::ch_read pext::burn PextBurnCmd BurnA}

# 17. TclOO: Tcl method calling [next] into a method written in C.
oo::class create ::CB {}
pext::cmethod ::CB work 5
oo::class create ::CD { superclass ::CB; method work {} { next } }
proc ::oo_p {o} { $o work }
scenario oocnext {set ::ooobj [::CD new]} {rounds {::oo_p $::ooobj}} \
    {::oo_p {::CD work} ?*next {::CB work} CMethodBurnCall BurnMethod}

# 18. TclOO: method in C evaluating Tcl.
oo::class create ::CE {}
pext::cmethodeval ::CE run {::oe_q 5}
proc ::oe_q {ms} { pext::burn $ms }
proc ::oe_p {o} { $o run }
scenario oocevel {set ::oeobj [::CE new]} {rounds {::oe_p $::oeobj}} \
    {::oe_p {::CE run} CMethodEvalCall CMethodEvalHelper ::oe_q pext::burn PextBurnCmd BurnA}

# 19. TclOO constructor (Tcl) calling C.
oo::class create ::CK { constructor {ms} { pext::burn $ms } }
proc ::ok_p {ms} { [::CK new $ms] destroy }
scenario ooctor {} {rounds {::ok_p 5}} \
    {::ok_p ?new {::CK*} pext::burn PextBurnCmd BurnA}

# 20. Ensemble whose subcommand maps to a C command.
proc ::pens_tb {ms} { pext::burn $ms }
namespace ensemble create -command ::pens -map {cb ::pext::burn tb ::pens_tb}
proc ::en_p {ms} { ::pens cb $ms }
scenario ensc {} {rounds {::en_p 5}} \
    {::en_p ?::pens* *pext::burn PextBurnCmd BurnA}

# 21. interp alias to a C command (with a prefix argument).
interp alias {} ::burnAl {} ::pext::burn
proc ::al_p {ms} { ::burnAl $ms }
scenario aliasc {} {rounds {::al_p 5}} \
    {::al_p ?::burnAl *pext::burn PextBurnCmd BurnA}

# 22. tailcall into a C command.
proc ::tc_m {ms} { tailcall pext::burn $ms }
proc ::tc_p {ms} { ::tc_m $ms }
scenario tailcallc {} {rounds {::tc_p 5}} \
    {::tc_p pext::burn PextBurnCmd BurnA}

# 23. tailcall in a proc called from C.
proc ::tc2_p {ms} { pext::evalobjv ::tc_m $ms }
scenario tailcallfromc {} {rounds {::tc2_p 5}} \
    {::tc2_p pext::evalobjv PextEvalObjvCmd EvalObjvHelper pext::burn PextBurnCmd BurnA}

# 24. Coroutine resumed from C (Tcl_EvalObjv).
proc ::co_work {ms} { pext::burn $ms }
proc ::co_body {ms} { yield; while 1 { ::co_work $ms; yield } }
proc ::cr_p {} { pext::evalobjv ::cor1 }
scenario corofromc {coroutine ::cor1 ::co_body 5} {rounds ::cr_p} \
    {::cr_p pext::evalobjv PextEvalObjvCmd EvalObjvHelper {?coroutine ::cor1} ::co_body ::co_work pext::burn PextBurnCmd BurnA}

# 25. Coroutine suspended inside an NR C command's script, resumed from
#     two different procs.
proc ::cn_work {ms} { pext::burn $ms }
proc ::cn_body {ms} { yield; while 1 { pext::nreval {yield; ::cn_work 5} } }
proc ::cn_r1 {} { ::cor2 }
proc ::cn_r2 {} { ::cn_r3 }
proc ::cn_r3 {} { ::cor2 }
proc ::cn_p {} { ::cn_r1; ::cn_r2 }
scenario coronr {coroutine ::cor2 ::cn_body 5} {rounds ::cn_p} \
    {::cn_r? ?::cn_r3 {?coroutine ::cor2} ::cn_body pext::nreval ::cn_work pext::burn PextBurnCmd BurnA}

# 26. Yield across a C boundary (an error), caught; then C work.
proc ::cy_work {ms} { pext::burn $ms }
proc ::cy_body {} { yield; while 1 { catch {pext::evalex yield}; ::cy_work 5; yield } }
proc ::cy_p {} { ::cor3 }
scenario coroyieldc {coroutine ::cor3 ::cy_body} {rounds ::cy_p} \
    {::cy_p {?coroutine ::cor3} ::cy_body ::cy_work pext::burn PextBurnCmd BurnA}

# 27. Child interp: child proc -> C -> alias to parent proc -> C.
interp create ::pch
load [expr {[info exists ::env(PEXT_LIB)] ? $::env(PEXT_LIB)
	: [file join $dir libpext.so]}] Pext ::pch
interp alias ::pch ::toParent {} ::par_q
proc ::par_q {ms} { pext::burn $ms }
::pch eval { proc ::ci_c {ms} { pext::evalex "::toParent $ms" } }
proc ::ci_p {ms} { ::pch eval [list ::ci_c $ms] }
scenario childalias {} {rounds {::ci_p 5}} \
    {::ci_p ?::pch ::ci_c pext::evalex PextEvalExCmd EvalExHelper ?::toParent ::par_q pext::burn PextBurnCmd BurnA}

# 28. catch of an error thrown from C.
proc ::ce_p {ms} { catch {pext::burnerr $ms} }
scenario catchcerr {} {rounds {::ce_p 5}} \
    {::ce_p pext::burnerr PextBurnErrCmd BurnErr}

# 29. try/finally: C error, then C work in the finally clause.
proc ::ct_m {ms} { try { pext::burnerr $ms } finally { pext::burn $ms } }
proc ::ct_p {ms} { catch {::ct_m $ms} }
scenario tryfinally {} {rounds {::ct_p 2}} \
    {::ct_p ::ct_m pext::burnerr PextBurnErrCmd BurnErr} \
    {::ct_p ::ct_m pext::burn PextBurnCmd BurnA}

# 30. C catches an error of the Tcl it evaluated, then burns.
proc ::cc_q {ms} { pext::burn $ms; error boom }
proc ::cc_p {ms} { pext::catcheval [list ::cc_q $ms] $ms }
scenario ccatch {} {rounds {::cc_p 2}} \
    {::cc_p pext::catcheval PextCatchEvalCmd CatchEvalHelper BurnAfterCatch} \
    {::cc_p pext::catcheval PextCatchEvalCmd CatchEvalHelper ::cc_q pext::burn PextBurnCmd BurnA}

# 31. lmap / dict for / foreach in a script evaluated by C (not compiled
#     into a proc: they are commands there).
proc ::lm_p {ms} { pext::evalex "lmap x {1 2 3 4 5} {pext::burn 1}" }
scenario lmapfromc {} {rounds {::lm_p 5}} \
    {::lm_p pext::evalex PextEvalExCmd EvalExHelper lmap pext::burn PextBurnCmd BurnA}
proc ::df_p {ms} { pext::evalex "dict for {k v} {a 1 b 2 c 3 d 4 e 5} {pext::burn \$v}" }
scenario dictforfromc {} {rounds {::df_p 5}} \
    {::df_p pext::evalex PextEvalExCmd EvalExHelper dict ?::tcl::dict::for pext::burn PextBurnCmd BurnA}
proc ::fe_q {} { foreach x {1 2 3} { dict for {k v} {a 1} { lmap y {1} { pext::burn 1 } } } }
proc ::fe_p {} { pext::evalobjv ::fe_q }
scenario loopsinproc {} {rounds ::fe_p} \
    {::fe_p pext::evalobjv PextEvalObjvCmd EvalObjvHelper ::fe_q pext::burn PextBurnCmd BurnA}

# 32. uplevel from a proc called from C, to a scope above the C frame.
proc ::uc_q {ms} { uplevel 2 [list pext::burn $ms] }
proc ::uc_m {ms} { pext::evalobjv ::uc_q $ms }
proc ::uc_p {ms} { ::uc_m $ms }
scenario uplevelpastc {} {rounds {::uc_p 5}} \
    {::uc_p ::uc_m pext::evalobjv PextEvalObjvCmd EvalObjvHelper ::uc_q ?uplevel pext::burn PextBurnCmd BurnA}

# 33. upvar-heavy Tcl leaf (no C leaf) reached through C.
proc ::tw_leaf {} {
    upvar 2 acc acc
    for {set i 0} {$i < 20000} {incr i} { append acc [string index "abcdef" [expr {$i % 6}]] }
    set acc [string range $acc 0 10]
}
proc ::tw_mid {} { set acc x; pext::evalobjv ::tw_leaf2 }
proc ::tw_leaf2 {} { ::tw_leaf }
proc ::tw_p {} { ::tw_mid }
scenario tclleaf {} {rounds ::tw_p} \
    {::tw_p ::tw_mid pext::evalobjv PextEvalObjvCmd EvalObjvHelper ::tw_leaf2 ::tw_leaf}

# 34. apply lambda called from C.
proc ::ap_p {ms} { pext::evalobjv apply {{ms} {pext::burn $ms}} $ms }
scenario applyfromc {} {rounds {::ap_p 5}} \
    {::ap_p pext::evalobjv PextEvalObjvCmd EvalObjvHelper {apply *} pext::burn PextBurnCmd BurnA}

# 35. A proc that redefines itself while running, then calls C.
proc ::rd_q {ms} { proc ::rd_q {ms} [info body ::rd_q]; pext::burn $ms }
proc ::rd_p {ms} { ::rd_q $ms }
scenario redefine {} {rounds {::rd_p 5}} \
    {::rd_p ::rd_q pext::burn PextBurnCmd BurnA}
proc ::rd2_q {ms} { rename ::rd2_q {}; pext::burn $ms }
proc ::rd2_p {ms} {
    proc ::rd2_q {ms} { rename ::rd2_q {}; pext::burn $ms }
    ::rd2_q $ms
}
scenario deleteself {} {rounds {::rd2_p 5}} \
    {::rd2_p ::rd2_q pext::burn PextBurnCmd BurnA}

# 36. namespace unknown handler -> C.
namespace eval ::nu {
    proc handler {args} { pext::burn 5 }
    namespace unknown ::nu::handler
    proc p {} { nosuchcmd 5 }
}
scenario nsunknown {} {rounds ::nu::p} \
    {::nu::p ?nosuchcmd ::nu::handler pext::burn PextBurnCmd BurnA}

# 37. Tcl execution trace (enter) running a proc that calls C.
proc ::et_target {} {}
proc ::et_cb {args} { pext::burn 5 }
trace add execution ::et_target enter ::et_cb
proc ::et_p {} { ::et_target }
scenario exectrace {} {rounds ::et_p} \
    {::et_p ?::et_target ::et_cb pext::burn PextBurnCmd BurnA}

# 38. update inside a proc called from C.
proc ::ud_cb {ms} { pext::burn $ms }
proc ::ud_m {ms} { after 0 [list ::ud_cb $ms]; update }
proc ::ud_p {ms} { pext::evalex "::ud_m $ms" }
scenario updatefromc {} {rounds {::ud_p 5}} \
    {::ud_p pext::evalex PextEvalExCmd EvalExHelper ::ud_m update ::ud_cb pext::burn PextBurnCmd BurnA}

# 39. Many very short C<->Tcl round trips (transition windows).
proc ::fa_q {} { pext::burn 0 }
proc ::fa_p {} { for {set i 0} {$i < 100} {incr i} { pext::evalex ::fa_q } }
scenario fastswitch {} {rounds ::fa_p} \
    {::fa_p pext::evalex PextEvalExCmd EvalExHelper ::fa_q pext::burn PextBurnCmd BurnA}

# 40. Deep mixed recursion: 14 C<->Tcl levels.
proc ::dd_p {ms} { ::lev 14 $ms }
set ::ddpath {::dd_p}
for {set k 0} {$k < 14} {incr k} { lappend ::ddpath ::lev pext::down PextDownCmd DownHelper }
lappend ::ddpath ::lev pext::down PextDownCmd BurnBottom
scenario down14 {} {rounds {::dd_p 5}} $::ddpath

# 41. Child interp evaluating a C command directly (no proc in child).
proc ::cx_q {ms} { pext::burn $ms }
interp alias ::pch ::cx_q {} ::cx_q
proc ::cx_p {ms} { ::pch eval [list pext::evalobjv ::cx_q $ms] }
scenario childc {} {rounds {::cx_p 5}} \
    {::cx_p ?::pch pext::evalobjv PextEvalObjvCmd EvalObjvHelper ?::cx_q ::cx_q pext::burn PextBurnCmd BurnA}

# 42. Method of an object (Tcl) calling a C method via [my].
oo::class create ::CM {
    method outer {} { my inner }
}
pext::cmethod ::CM inner 5
proc ::om_p {o} { $o outer }
scenario oomy {set ::omobj [::CM new]} {rounds {::om_p $::omobj}} \
    {::om_p {::CM outer} ?my {::CM inner} CMethodBurnCall BurnMethod}

# 43. Command word from a variable / expansion: the name must be the
#     command's, not the source text.
proc ::vc_p {ms} { set c pext::burn; $c $ms }
scenario varcmdword {} {rounds {::vc_p 5}} \
    {::vc_p pext::burn PextBurnCmd BurnA}
proc ::vx_p {ms} { set c [list pext::evalobjv ::vx_q]; {*}$c $ms }
proc ::vx_q {ms} { pext::burn $ms }
scenario expandword {} {rounds {::vx_p 5}} \
    {::vx_p pext::evalobjv PextEvalObjvCmd EvalObjvHelper ::vx_q pext::burn PextBurnCmd BurnA}
proc ::vy_q {ms} { pext::burn $ms }
proc ::vy_p {ms} { [::vy_which] $ms }
proc ::vy_which {} { return ::vy_q }
scenario substword {} {rounds {::vy_p 5}} \
    {::vy_p ::vy_q pext::burn PextBurnCmd BurnA}

# 44. C recursion (5 C frames of one function) between two Tcl levels.
proc ::cq_q {ms} { pext::burn $ms }
proc ::cq_p {ms} { pext::crec 4 [list ::cq_q $ms] }
scenario crecurse {} {rounds {::cq_p 5}} \
    {::cq_p pext::crec PextCRecCmd CRecurse CRecurse CRecurse CRecurse CRecurse ::cq_q pext::burn PextBurnCmd BurnA}

# 45. Coroutine created inside the profiled region, then resumed from C
#     (trace mode saw the body's entry).
proc ::ci2_p {} {
    coroutine ::cor4 ::co_body 5
    for {set i 0} {$i < 10} {incr i} { pext::evalobjv ::cor4 }
    rename ::cor4 {}
}
scenario corocreatedin {} {for {set j 0} {$j < $::R / 10} {incr j} ::ci2_p} \
    {::ci2_p pext::evalobjv PextEvalObjvCmd EvalObjvHelper {?coroutine ::cor4} ::co_body ::co_work pext::burn PextBurnCmd BurnA}

# 46. vwait inside a coroutine; the event handler calls C.
proc ::cw_cb {ms} { pext::burn $ms; set ::cwdone 1 }
proc ::cw_body {} {
    yield
    while 1 { after 0 {::cw_cb 5}; vwait ::cwdone; yield }
}
proc ::cw_p {} { ::cor5 }
scenario corovwait {coroutine ::cor5 ::cw_body} {rounds ::cw_p} \
    {::cw_p {?coroutine ::cor5} ::cw_body vwait ::cw_cb pext::burn PextBurnCmd BurnA}

# 47. yieldto a C command: it runs in the resumer's context.
proc ::yt_body {} { yield; while 1 { yieldto pext::burn 5 } }
proc ::yt_p {} { ::cor6 }
scenario yieldtoc {coroutine ::cor6 ::yt_body} {rounds ::yt_p} \
    {::yt_p pext::burn PextBurnCmd BurnA}

# 48. Coroutine whose body command is a C command.
proc ::cbq {ms} { pext::burn $ms }
proc ::cb_p {ms} { coroutine ::cor7 pext::evalex "::cbq $ms" }
scenario corocbody {} {rounds {::cb_p 5}} \
    {::cb_p ?coroutine* pext::evalex PextEvalExCmd EvalExHelper ::cbq pext::burn PextBurnCmd BurnA}

# 49. TclOO filter (Tcl) around a C method.
oo::class create ::CF {
    method flt {args} { next {*}$args }
    filter flt
}
pext::cmethod ::CF work 5
proc ::of_p {o} { $o work }
scenario oofilter {set ::ofobj [::CF new]} {rounds {::of_p $::ofobj}} \
    {::of_p {::CF flt} ?*next {::CF work} CMethodBurnCall BurnMethod}

# 50. TclOO forward to a C command.
oo::class create ::CW { forward fw pext::burn }
proc ::ow_p {o ms} { $o fw $ms }
scenario ooforward {set ::owobj [::CW new]} {rounds {::ow_p $::owobj 5}} \
    {::ow_p {?::CW fw} pext::burn PextBurnCmd BurnA}

# 51. Per-object method (oo::objdefine) in Tcl calling C.
proc ::oj_p {ms} { ::ojobj m $ms }
scenario ooobjdefine {oo::object create ::ojobj; oo::objdefine ::ojobj method m {ms} { pext::burn $ms }} \
    {rounds {::oj_p 5}} \
    {::oj_p {::ojobj m} pext::burn PextBurnCmd BurnA}

# 52. Command delete callback (C) evaluating Tcl, fired by rename.
proc ::dl_q {ms} { pext::burn $ms }
proc ::dl_p {ms} { pext::mkdel ::dlcmd [list ::dl_q $ms]; rename ::dlcmd {} }
scenario deleteproc {} {rounds {::dl_p 5}} \
    {::dl_p ?rename DelProc DeleteEvalHelper ::dl_q pext::burn PextBurnCmd BurnA}

# 53. Async handler burning in C, and one evaluating Tcl.
proc ::as_p {ms} { pext::async $ms; set x 1; incr x }
scenario asyncc {} {rounds {::as_p 5}} \
    {::as_p ?pext::async AsyncProc BurnAsync}
proc ::as2_q {ms} { pext::burn $ms }
proc ::as2_p {ms} { pext::asynceval [list ::as2_q $ms]; set x 1; incr x }
scenario asynceval {} {rounds {::as2_p 5}} \
    {::as2_p ?pext::asynceval AsyncProc AsyncEvalHelper ::as2_q pext::burn PextBurnCmd BurnA}

# 54. Tcl_ExprObj from C calling a math function written in Tcl; and a
#     compiled expr calling a math function written in C.
proc ::tcl::mathfunc::tburn {ms} { pext::burn $ms; return 0 }
proc ::mf_p {ms} { pext::expr "tburn($ms) + 1" }
scenario exprfromc {} {rounds {::mf_p 5}} \
    {::mf_p pext::expr PextExprCmd ExprHelper ::tcl::mathfunc::tburn pext::burn PextBurnCmd BurnA}
proc ::mc_p {ms} { catch {expr {cburn($ms)}} }
scenario cmathfunc {} {rounds {::mc_p 5}} \
    {::mc_p *tcl::mathfunc::cburn PextBurnCmd BurnA}

# 55. Background error handler calling C.
proc ::bg_h {msg opts} { pext::burn 5; set ::bgdone 1 }
proc ::bg_p {} { after 0 {error oops}; vwait ::bgdone }
scenario bgerror {interp bgerror {} ::bg_h} {rounds ::bg_p} \
    {::bg_p vwait ?bgerror ::bg_h pext::burn PextBurnCmd BurnA}

# 56. NR command whose post callback re-enters Tcl with Tcl_EvalObjEx.
proc ::pe_a {ms} { pext::down 0 $ms }
proc ::pe_b {ms} { pext::burn $ms }
proc ::pe_p {ms} { pext::nrposteval [list ::pe_a $ms] [list ::pe_b $ms] }
scenario nrposteval {} {rounds {::pe_p 2}} \
    {::pe_p pext::nrposteval NrPostEvalCallback PostEvalHelper ::pe_b pext::burn PextBurnCmd BurnA} \
    {::pe_p pext::nrposteval ::pe_a pext::down PextDownCmd BurnBottom}

# 57. C in a child interp evaluating a script in the parent interp.
proc ::pv_q {ms} { pext::burn $ms }
::pch eval { proc ::pv_c {ms} { pext::parenteval "::pv_q $ms" } }
proc ::pv_p {ms} { ::pch eval [list ::pv_c $ms] }
scenario parenteval {} {rounds {::pv_p 5}} \
    {::pv_p ?::pch ::pv_c pext::parenteval PextParentEvalCmd ParentEvalHelper ::pv_q pext::burn PextBurnCmd BurnA}

# 58. Tcl_EvalFile from C; the file's top level calls a proc.
proc ::sf_q {ms} { pext::burn $ms }
proc ::sf_p {ms} { set ::sfMs $ms; pext::evalfile [file join $::dir sfile.tcl] }
scenario evalfile {} {rounds {::sf_p 5}} \
    {::sf_p pext::evalfile PextEvalFileCmd EvalFileHelper ::sf_q pext::burn PextBurnCmd BurnA}

# 59. eval of a built string inside a proc.
proc ::es_p {ms} { eval "pext::burn $ms" }
scenario evalstring {} {rounds {::es_p 5}} \
    {::es_p ?eval pext::burn PextBurnCmd BurnA}

# 60. Error thrown from C inside a coroutine, caught by the resumer.
proc ::ke_body {} { yield; while 1 { pext::burnerr 5 } }
proc ::ke_p {} { coroutine ::cor8 ::ke_body; catch ::cor8 }
scenario coroerror {} {rounds ::ke_p} \
    {::ke_p ?*cor8 ::ke_body pext::burnerr PextBurnErrCmd BurnErr}

# 61. Reflected channel: the channel layer (C) calls the handler's
#     write method with Tcl_EvalObjv on each puts.
namespace eval ::rch {
    proc initialize {ch mode} { return {initialize finalize watch write} }
    proc finalize {ch} {}
    proc watch {ch events} {}
    proc write {ch data} { pext::burn 5; return [string length $data] }
    namespace export *
    namespace ensemble create
}
proc ::rc_p {} {
    set ch [chan create write ::rch]
    chan configure $ch -buffering none
    puts -nonewline $ch x
    close $ch
}
scenario reflchan {} {rounds ::rc_p} \
    {::rc_p puts ?::rch ::rch::write pext::burn PextBurnCmd BurnA}

# 62. Channel transform (chan push): its write runs on flush.
namespace eval ::tfh {
    proc initialize {ch mode} { return {initialize finalize write} }
    proc finalize {ch} {}
    proc write {ch data} { pext::burn 5; return $data }
    namespace export *
    namespace ensemble create
}
proc ::tf_p {} {
    set ch [open /dev/null w]
    chan push $ch ::tfh
    puts -nonewline $ch x
    flush $ch
    close $ch
}
scenario transform {} {rounds ::tf_p} \
    {::tf_p flush ?::tfh ::tfh::write pext::burn PextBurnCmd BurnA}

# 63. A chain of aliases ending in a proc.
proc ::ac_q {ms} { pext::burn $ms }
interp alias {} ::ac1 {} ::ac2
interp alias {} ::ac2 {} ::ac_q
proc ::ac_p {ms} { ::ac1 $ms }
scenario aliaschain {} {rounds {::ac_p 5}} \
    {::ac_p ?::ac1 ?::ac2 ::ac_q pext::burn PextBurnCmd BurnA}

# 64. namespace code callback from the event loop.
namespace eval ::ncn { proc cb {ms} { pext::burn $ms; set ::ncdone 1 } }
proc ::nc_p {} {
    after 0 [namespace eval ::ncn {namespace code {cb 5}}]
    vwait ::ncdone
}
scenario nscode {} {rounds ::nc_p} \
    {::nc_p vwait ?namespace ?*namespace* ::ncn::cb pext::burn PextBurnCmd BurnA}

# 65. A hidden command invoked with interp invokehidden.
proc ::ih_p {ms} { interp invokehidden {} pextHiddenBurn $ms }
scenario invokehidden {interp alias {} ::pextHiddenBurn {} pext::burn; interp hide {} pextHiddenBurn} \
    {rounds {::ih_p 5}} \
    {::ih_p interp ?pextHiddenBurn ?pext::burn PextBurnCmd BurnA}

# 66. A class-level (self) method and a method of a superclass reached
#     through a mixin.
oo::class create ::CS { self method sm {ms} { pext::burn $ms } }
proc ::cs_p {ms} { ::CS sm $ms }
scenario selfmethod {} {rounds {::cs_p 5}} \
    {::cs_p {::CS sm} pext::burn PextBurnCmd BurnA}
oo::class create ::MX { method mw {ms} { pext::burn $ms } }
oo::class create ::CX { mixin ::MX }
proc ::mx_p {o ms} { $o mw $ms }
scenario mixin {set ::mxobj [::CX new]} {rounds {::mx_p $::mxobj 5}} \
    {::mx_p {::MX mw} pext::burn PextBurnCmd BurnA}

# 67. package require running an ifneeded script that calls a proc.
proc ::pk_load {ms} { pext::burn $ms; package provide pkProbe 1.0 }
proc ::pk_p {} {
    package forget pkProbe
    package ifneeded pkProbe 1.0 {::pk_load 5}
    package require pkProbe
}
scenario pkgrequire {} {rounds ::pk_p} \
    {::pk_p package ::pk_load pext::burn PextBurnCmd BurnA}

# 68. A proc renamed while profiling keeps the name it is called by.
proc ::rn_orig {ms} { pext::burn $ms }
rename ::rn_orig ::rn_new
proc ::rn_p {ms} { ::rn_new $ms }
scenario renamed {} {rounds {::rn_p 5}} \
    {::rn_p ::rn_new pext::burn PextBurnCmd BurnA}

# 69. A command imported from a namespace.
namespace eval ::imp { proc ib {ms} { pext::burn $ms }; namespace export ib }
namespace eval ::impuser { namespace import ::imp::ib; proc p {ms} { ib $ms } }
scenario imported {} {rounds {::impuser::p 5}} \
    {::impuser::p ?*ib ::imp::ib pext::burn PextBurnCmd BurnA}
proc ::im_p {ms} { ::impuser::ib $ms }
