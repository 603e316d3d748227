import unittest


class TestStrings(unittest.TestCase):
    def test_upper(self):
        self.assertEqual("foo".upper(), "FOO")

    def test_error_message_is_kept(self):
        err = ValueError("FAILED: bad input")
        self.assertIn("FAILED", str(err))

    @unittest.skip("demonstrating skipping")
    def test_skipped(self):
        self.fail("should not run")

    @unittest.expectedFailure
    def test_known_broken(self):
        self.assertEqual(1, 0)


if __name__ == "__main__":
    unittest.main()
