"""Save everything, then put the tree back at a checkpoint; bring saved work back.

Not on the hot path: imported only when a rollback or `ralph rollbacks`
runs (whether one runs now is ralph.state.rollback_lock, which PreToolUse asks).
The modules: git (the repository and the git that runs in it), capture (what
the work tree, index and untracked or ignored files hold, as objects; only
what changed is read), snapshots (the commits under refs/ralph/rollbacks/:
writing, listing, finding), restore (a rollback: save then reset to a
checkpoint; a restore: bring a snapshot back), lock (one rollback or restore
at a time, an flock the kernel releases when its holder dies), journal (the
intent of a rollback or restore under way: one killed half-way is finished by
the next call), git_locks (git's own lock files a killed git left) and
detached (a hook's rollback in a process of its own, so the hook answers
within its timeout).

A snapshot is a commit under `refs/ralph/rollbacks/<id>` (id: UTC time + short
sha, sortable). Its tree is the working tree byte for byte; its parents are
HEAD (when there is one) and a second commit whose tree is the index:

    W  (working tree: tracked + untracked non-ignored files, exec bits, symlinks)
    |\\
    | I  (the index as it was: what was staged)
    |/
    HEAD

When there is anything git's trees cannot hold, a third parent M (the
"extras" commit, `Ralph-Extras:`) holds it, so a restore puts back every
byte and mode:

    ignored/<path>   ignored files the reset would overwrite or delete: a
                     path tracked at the checkpoint that the agent untracked
                     and ignored (`git rm --cached f; echo f >> .gitignore`)
                     and then edited, or an ignored file or directory in the
                     way of a checkpoint path
    intent-to-add    NUL-separated paths added with `git add -N` (a tree
                     cannot hold such an index entry)
    modes            "<octal> <path>\0" for files whose permission bits are not
                     git's 0644 / 0755 (a 0600 secrets file); the rollback
                     keeps those bits on the files it rewrites too

The commit message names the story, iteration and trigger, plus `Ralph-*:`
trailers that `list_snapshots` reads back.

Byte for byte: files are hashed with `git hash-object --no-filters` and
written back by this module from the blobs, so no clean/smudge filter, eol or
autocrlf setting can alter them on the way in or out. The user's index and
working tree are not touched while saving: the index is read from a temporary
copy (GIT_INDEX_FILE) and the working tree tree is built in a second temporary
index, with GIT_OPTIONAL_LOCKS=0 so no git call even refreshes the real index.

Never touched, by rollback or restore: ignored files that the reset leaves
alone (the saved ones above are put back), the state dir `.ralph/`,
untracked nested repositories, and the contents of submodules. A rollback is
refused (nothing reset, nothing saved) when a submodule has uncommitted changes,
untracked files or a moved HEAD: resetting only the superproject would leave a
half-rolled-back tree, and a submodule's work lives in its own object store,
which a snapshot here cannot hold. Empty directories are not saved (git has no
tree entry for them). A conflicted index (mid-merge) cannot be written as a tree:
its staged state is then recorded as HEAD's and the message says so.
"""
