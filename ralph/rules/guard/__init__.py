"""The push/merge guard: bash parsed, expanded and walked as bash would run it, each program judged by its model."""
