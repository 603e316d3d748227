def handle(result):
    if result.failed:
        raise RuntimeError("FAILED: 1 failed, 2 passed")  # message format
    return "ok"
