"""ralph.toml: the one schema that validates it, and reading it.

- schema: the typed kinds, Key and Table (what a table declares), and the one
  validator (check_table, validate_table). Every error reads
  `<file>:<line>: [table] key: what is wrong; how to fix`.
- tables: every table's declaration, one module per top-level table (its
  keys, defaults, kinds, limits and help); their owners import them.
- registry: every table ralph.toml may hold, as `name -> "module:NAME"` of
  its declaration in tables; tables() lists them all with their keys,
  defaults and help.
- reading: the file, its cached parse, and one table's checked values (what
  the hooks call: it loads no `re`, `tomllib`, `json` or `enum`).
- parse (tomllib), locate (the `file:line` of a key), unknown (the message
  for an unknown table, with difflib) and patterns (regular expressions and
  host names, with `re`): imported by name, only when a file is parsed, a
  message is written, or a table sets such a key.
- value: ValueProblem and the list-of-strings check, which the schema and
  patterns share.

This package imports nothing above it (the declarations take a pure rule's
defaults from ralph.rules): the owners import their tables' declarations,
and check themselves what only they can tell. Checking a whole file, which
needs those owners, is ralph.loop.config_check.
"""
