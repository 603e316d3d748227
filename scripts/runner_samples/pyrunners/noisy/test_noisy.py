def test_prints_a_lot():
    for i in range(70000):
        print(f"line {i:06d} of a chatty test: some log text to make the output large ........")


def test_fails_at_the_end():
    assert 2 + 2 == 5
