import unittest


class BrokenCalcTest(unittest.TestCase):
    def test_adds(self):
        self.assertEqual(2 + 3, 5)

    def test_adds_wrongly(self):
        self.assertEqual(2 + 2, 5)
