use strict;
use warnings;
use Test::More tests => 4;

ok(1 + 1 == 2, 'adds');
is('failed', 'failed', 'a test about failure');
TODO: {
    local $TODO = 'not implemented';
    ok(0, 'future feature');
}
SKIP: {
    skip 'no network', 1;
    ok(0, 'network test');
}
