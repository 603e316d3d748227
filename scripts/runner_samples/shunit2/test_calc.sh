#!/bin/sh
add() { echo $(($1 + $2)); }
testAdds() { assertEquals 5 "$(add 2 3)"; }
testAddsNegatives() { assertEquals -2 "$(add -1 -1)"; }
. shunit2
