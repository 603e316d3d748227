#!/usr/bin/env bats
setup() { :; }
