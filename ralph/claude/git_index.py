"""Is a path in a git index? Read from the bytes of `.git/index` with no git
process (the guard asks before a redirection or `rm` replaces a project
file; ralph.claude.bash_guard loads this module only then)."""


def index_has(index: bytes, path: bytes) -> bool:
    """Is `path` an entry of this git index (bytes of .git/index)? Versions 2
    and 3 are searched for the path and checked at their entry's place; a
    version 4 index (paths compressed) is walked entry by entry."""
    version = int.from_bytes(index[4:8], "big")
    if version == 4:
        return path in _v4_paths(index)
    needle = path + b"\0"
    length = min(len(path), 0xFFF)
    at = index.find(needle, 12)
    while at >= 0:
        for offset in (62, 74):  # sha-1 and sha-256 entries: 40 bytes of stat data, the id, 2 bytes of flags
            for extended in (0, 2):
                start = at - offset - extended
                if start >= 12 and (start - 12) % 8 == 0:
                    flags = int.from_bytes(index[start + offset - 2:start + offset], "big")
                    if flags & 0xFFF == length and bool(flags & 0x4000) == bool(extended):
                        return True
        at = index.find(needle, at + 1)
    return False


def _v4_paths(index: bytes) -> set[bytes]:
    """Every path of a version 4 index (each entry's path is the previous
    one's with a number of bytes cut off its end, then a suffix)."""
    count = int.from_bytes(index[8:12], "big")
    paths: set[bytes] = set()
    position = 12
    previous = b""
    for _ in range(count):
        flags_at = position + 60
        if flags_at + 2 > len(index):
            break
        flags = int.from_bytes(index[flags_at:flags_at + 2], "big")
        position = flags_at + 2 + (2 if flags & 0x4000 else 0)
        cut = 0
        shift = 0
        while position < len(index):  # git's offset encoding: 7 bits a byte, high bit = more
            byte = index[position]
            position += 1
            cut = (cut << 7) | (byte & 0x7F) if shift == 0 else ((cut + 1) << 7) | (byte & 0x7F)
            shift += 1
            if not byte & 0x80:
                break
        end = index.find(b"\0", position)
        if end < 0:
            break
        previous = previous[:len(previous) - cut] + index[position:end]
        paths.add(previous)
        position = end + 1
    return paths
