#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Put generated tables into the docs: the figures a page shows are the files'.

  doc_tables.py [--check] [--top DIR] DOC.md...

Between the lines

    <!-- include: experiments/results/open-.../headline.md -->
    <!-- end include -->

(the path relative to the repository's top) the text is replaced with that
file's. experiments/report.sh runs it on docs/experiments.md after it has
regenerated the results' tables, so a published figure is always the one
the committed data give. --check changes nothing and exits 1 if a page is
not what its files say (CI can run it). A missing file is an error.
"""
import argparse
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOCK = re.compile(r"(<!-- include: (?P<path>\S+) -->\n)(?P<body>.*?)(<!-- end include -->)",
                   re.S)


def fill(text, top=TOP):
    """text with every include block refilled; raises on a missing file."""
    def sub(m):
        p = os.path.join(top, m.group("path"))
        if not os.path.isfile(p):
            raise FileNotFoundError("doc_tables: %s: no such file" % m.group("path"))
        body = open(p).read()
        if body and not body.endswith("\n"):
            body += "\n"
        return m.group(1) + body + m.group(4)
    return BLOCK.sub(sub, text)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true")
    p.add_argument("--top", default=TOP, help="where include paths start (the checkout)")
    p.add_argument("docs", nargs="+")
    a = p.parse_args(argv)
    stale = []
    for d in a.docs:
        old = open(d).read()
        try:
            new = fill(old, a.top)
        except FileNotFoundError as e:
            sys.exit(str(e))
        if new != old:
            if a.check:
                stale.append(d)
            else:
                with open(d, "w") as f:
                    f.write(new)
                print("doc_tables: updated %s" % d)
    if stale:
        sys.exit("doc_tables: out of date with the committed results: %s "
                 "(run experiments/report.sh)" % " ".join(stale))


if __name__ == "__main__":
    main()
