from ward import test


@test("adds")
def _():
    assert 2 + 3 == 5


@test("adds wrongly")
def _():
    assert 2 + 2 == 5
