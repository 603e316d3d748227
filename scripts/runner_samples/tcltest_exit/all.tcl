# runAllTests, then exit non-zero when a test failed (tcltest itself exits 0)
package require tcltest
namespace import ::tcltest::*
configure -testdir [file dirname [file normalize [info script]]] {*}$argv
set failed [runAllTests]
exit [expr {$failed ? 1 : 0}]
