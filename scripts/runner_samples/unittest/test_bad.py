import unittest


class TestMath(unittest.TestCase):
    def test_add(self):
        self.assertEqual(1 + 1, 3)

    def test_div(self):
        self.assertEqual(1 / 0, 0)

    def test_ok(self):
        self.assertTrue(True)


if __name__ == "__main__":
    unittest.main()
