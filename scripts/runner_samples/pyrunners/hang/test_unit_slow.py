import time
import unittest


class SlowTest(unittest.TestCase):
    def test_a_quick(self):
        self.assertTrue(True)

    def test_b_waits(self):
        time.sleep(600)
