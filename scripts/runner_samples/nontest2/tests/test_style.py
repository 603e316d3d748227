import os
def test_adds():
  assert 1+1==2
