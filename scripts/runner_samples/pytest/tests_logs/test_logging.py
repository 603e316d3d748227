import logging

log = logging.getLogger(__name__)


def test_reports_errors_without_failing():
    print("ERROR: connection failed (simulated, expected by this test)")
    print("FAILED tests/test_fake.py::test_fake - simulated line")
    print("=== 1 failed, 2 passed in 0.10s ===")
    log.error("Traceback (most recent call last): simulated")
    assert True


def test_failure_path_is_handled():
    try:
        raise RuntimeError("failure")
    except RuntimeError as exc:
        assert str(exc) == "failure"
