def add(a, b):
    """
    >>> add(2, 3)
    5
    >>> add(2, 2)
    5
    """
    return a + b
