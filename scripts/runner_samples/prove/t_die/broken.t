use strict;
use warnings;
use Test::More tests => 2;
use Some::Missing::Module;
ok(1);
ok(1);
