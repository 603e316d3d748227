-module(good_SUITE).
-export([all/0, adds/1, subtracts/1]).

all() -> [adds, subtracts].

adds(_Config) -> 5 = 2 + 3.
subtracts(_Config) -> 1 = 3 - 2.
