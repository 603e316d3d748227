from mypackage.missing_module import helper  # noqa: F401


def test_helper():
    assert True
