"""zope.testrunner / stestr sample: CALC_BROKEN=1 makes one test fail."""
import os
import unittest


def add(a, b):
    return a - b if os.environ.get("CALC_BROKEN") else a + b


class CalcTest(unittest.TestCase):
    def test_adds(self):
        self.assertEqual(add(2, 3), 5)

    def test_adds_zero(self):
        self.assertEqual(add(0, 0), 0)
