from ward import test


@test("adds")
def _():
    assert 2 + 3 == 5


@test("adds negatives")
def _():
    assert -1 + -1 == -2
