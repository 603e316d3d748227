"""Every table ralph.toml may hold, declared with the schema: one module per
top-level table (loop, guard, rollback, tests, sandbox, hooks, handoff),
each with its keys (ralph.config.schema.Key: default, kind, limits, help),
its Table, and the small constants the keys need. ralph.config.registry
names them; their owners import them.

A declaration imports the schema and, for defaults a pure rule holds (the
guard's families, the rollback policies), ralph.rules: nothing above this
package. What only an owner can check (the loop's stages, the hook tables
inside [hooks], the event patterns of [[hooks.event]]) its owner checks.
"""
