-module(calc).
-export([add/2]).
-include_lib("eunit/include/eunit.hrl").

add(A, B) -> A + B.

add_test() -> ?assertEqual(5, add(2, 3)).
neg_test() -> ?assertEqual(-2, add(-1, -1)).
