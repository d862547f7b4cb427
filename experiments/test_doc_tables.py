# SPDX-License-Identifier: GPL-2.0
"""experiments/doc_tables.py: include blocks are refilled from their files."""
import glob
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import doc_tables  # noqa: E402


def test_fill_replaces_only_the_blocks(tmp_path):
    (tmp_path / "a.md").write_text("| x | 1 |\n")
    (tmp_path / "b.md").write_text("two")
    text = ("intro\n<!-- include: a.md -->\nstale\nlines\n<!-- end include -->\nmiddle\n"
            "<!-- include: b.md -->\n<!-- end include -->\nend\n")
    out = doc_tables.fill(text, str(tmp_path))
    assert out == ("intro\n<!-- include: a.md -->\n| x | 1 |\n<!-- end include -->\nmiddle\n"
                   "<!-- include: b.md -->\ntwo\n<!-- end include -->\nend\n")
    assert doc_tables.fill(out, str(tmp_path)) == out


def test_missing_file_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        doc_tables.fill("<!-- include: nope.md -->\n<!-- end include -->\n", str(tmp_path))


def test_check_mode(tmp_path):
    (tmp_path / "t.md").write_text("new\n")
    doc = tmp_path / "doc.md"
    doc.write_text("<!-- include: t.md -->\nold\n<!-- end include -->\n")
    top = ["--top", str(tmp_path)]
    with pytest.raises(SystemExit):
        doc_tables.main(top + ["--check", str(doc)])
    assert "old" in doc.read_text()
    doc_tables.main(top + [str(doc)])
    assert doc.read_text() == "<!-- include: t.md -->\nnew\n<!-- end include -->\n"
    doc_tables.main(top + ["--check", str(doc)])


def test_the_docs_are_up_to_date():
    # The committed pages show what the committed results say.
    # README.md and every page of docs/ (performance.md shows the kept
    # benchmark runs', thresholds.md the studies').
    pages = [os.path.join(doc_tables.TOP, "README.md")] + sorted(
        glob.glob(os.path.join(doc_tables.TOP, "docs", "*.md")))
    for doc in pages:
        assert doc_tables.fill(open(doc).read()) == open(doc).read(), doc
