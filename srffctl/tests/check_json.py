#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check test_parse.c's JSON document: it parses, and every value is intact."""
import json
import sys

d = json.load(open(sys.argv[1]))
assert d["s"] == 'quote" back\\ nl\n tab\t ctl\x01', d["s"]
assert d["u"] == 2**64 - 1
assert d["b"] is False and d["n"] is None
assert d["empty"] == []
assert [x["i"] for x in d["a"]] == [0, 1, 2]
assert set(d) == {"s", "u", "b", "n", "empty", "a"}, d
