"""The tally the Python end-to-end checks share: check(cond, what) prints each failure as it happens and
finish() prints the count and returns the exit status (1 when anything failed)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

failures, passed = 0, 0


def check(cond, what):
    global failures, passed
    if cond:
        passed += 1
    else:
        failures += 1
        print("FAIL:", what)
    return cond


def finish():
    print(f"{passed} passed, {failures} failed")
    return 1 if failures else 0
