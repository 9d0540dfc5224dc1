# Sourced by pext::evalfile in scenario "evalfile": top-level code of a
# file calling a proc that calls C.
::sf_q $::sfMs
