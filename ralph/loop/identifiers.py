"""The `[A-Za-z_][A-Za-z0-9_]*` names of prompt placeholders, hook templates
and `when` conditions, read by hand: their readers run on `ralph-loop
--dry-run`, where importing `re` would cost more than the reading."""
NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
NAME_CHARS = NAME_START | frozenset("0123456789")


def name_end(text: str, index: int) -> int:
    """The end of the name starting at index; index when none starts there."""
    if index >= len(text) or text[index] not in NAME_START:
        return index
    index += 1
    while index < len(text) and text[index] in NAME_CHARS:
        index += 1
    return index
