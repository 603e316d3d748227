"""Prints a summary of a results file (an earlier CI run); exits 1 when it had failures."""
import json
import sys

with open(sys.argv[1]) as f:
    data = json.load(f)
print(f"{data['passed']} passed, {data['failed']} failed")
print(f"Tests: {data['failed']} failed, {data['passed']} passed, {data['passed'] + data['failed']} total")
sys.exit(1 if data["failed"] else 0)
