import unittest

import not_installed_lib  # noqa: F401


class TestX(unittest.TestCase):
    def test_x(self):
        pass
