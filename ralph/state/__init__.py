"""What ralph keeps on disk: where (locations), how it writes (files: temp file + rename, O_APPEND lines), and the records both the hooks and the loop read."""
