"""What programs do with their arguments: the facts table, the fast path for plain commands, and the models the guard runs."""
