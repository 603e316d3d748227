"""ralph.toml: the one schema that validates it, and reading it.

- schema: the typed kinds, Key and Table (what a table declares), and the one
  validator (check_table, validate_table). Every error reads
  `<file>:<line>: [table] key: what is wrong; how to fix`.
- registry: every table ralph.toml may hold, as `name -> "module:NAME"` of
  its declaration, which lives beside the code that uses the table; tables()
  lists them all with their keys, defaults and help.
- reading: the file, its cached parse, and one table's checked values (what
  the hooks call: it loads no `re`, `tomllib`, `json` or `enum`).
- whole_file: every table of a file at once, unknown tables included
  (ralph-loop at start, `ralph doctor`).
- parse (tomllib), locate (the `file:line` of a key), unknown (the message
  for an unknown table, with difflib) and patterns (regular expressions and
  host names, with `re`): imported by name, only when a file is parsed, a
  message is written, or a table sets such a key.

This package imports nothing above it: a table's owner imports the schema to
declare its keys, and the registry names the owners without importing them.
"""
