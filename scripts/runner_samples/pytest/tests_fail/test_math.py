def add(a, b):
    return a - b  # bug


def test_add_zero():
    assert add(1, 0) == 1


def test_add():
    assert add(2, 3) == 5


def test_sub():
    assert 5 - 3 == 2
