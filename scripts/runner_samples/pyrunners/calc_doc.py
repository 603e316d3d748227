def add(a, b):
    """
    >>> add(2, 3)
    5
    >>> add(-1, -1)
    -2
    """
    return a + b
