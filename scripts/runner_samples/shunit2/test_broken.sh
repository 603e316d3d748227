#!/bin/sh
add() { echo $(($1 + $2)); }
testAdds() { assertEquals 5 "$(add 2 3)"; }
testAddsWrongly() { assertEquals "2 + 2" 5 "$(add 2 2)"; }
. shunit2
