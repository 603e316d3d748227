-module(calc_SUITE).
-export([all/0, adds/1, adds_wrongly/1]).

all() -> [adds, adds_wrongly].

adds(_Config) -> 5 = 2 + 3.
adds_wrongly(_Config) -> 5 = 2 + list_to_integer("2").
