#!/bin/sh
for f in $(ls *.txt); do echo $f; done
cd $1
