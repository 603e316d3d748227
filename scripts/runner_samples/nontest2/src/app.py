import os, sys
def add(a,b):
  return a+b
def unused(x):
    y = 1
    return undefined_name
