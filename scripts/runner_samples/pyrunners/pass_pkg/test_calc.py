import unittest


class CalcTest(unittest.TestCase):
    def test_adds(self):
        self.assertEqual(2 + 3, 5)

    def test_adds_negatives(self):
        self.assertEqual(-1 + -1, -2)
