def add(a, b):
    return a + b


def test_add():
    assert add(2, 3) == 5


def test_add_handles_failure_message():
    # a test whose name mentions failure, and passes
    assert "failed" in "the build failed"


def test_error_is_raised_for_bad_input():
    import pytest
    with pytest.raises(ValueError):
        int("not a number")
