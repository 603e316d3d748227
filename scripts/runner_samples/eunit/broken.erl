-module(broken).
-export([add/2]).
-include_lib("eunit/include/eunit.hrl").

add(A, B) -> A + B.

add_test() -> ?assertEqual(5, add(2, 3)).
wrong_test() -> ?assertEqual(5, add(2, 2)).
