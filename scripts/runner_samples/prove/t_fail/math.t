use strict;
use warnings;
use Test::More tests => 3;

ok(1 + 1 == 2, 'adds');
is(2 * 2, 5, 'multiplies');
ok(1, 'third');
