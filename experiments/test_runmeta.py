# SPDX-License-Identifier: GPL-2.0
"""experiments/runmeta.py in a scratch git repository."""
import hashlib
import json
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import runmeta  # noqa: E402


def git(repo, *args):
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
                   + list(args), check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path):
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q")
    (r / "a.txt").write_text("one\n")
    git(r, "add", "a.txt")
    git(r, "commit", "-q", "-m", "one")
    return r


def test_clean_then_dirty(repo, tmp_path):
    g = runmeta.git_state(str(repo))
    assert len(g["commit"]) == 40 and g["dirty"] is False and g["changed"] == []
    (repo / "results").mkdir()
    (repo / "results" / "new.csv").write_text("x\n")  # untracked: still clean
    assert runmeta.git_state(str(repo))["dirty"] is False
    (repo / "a.txt").write_text("two\n")
    g = runmeta.git_state(str(repo))
    assert g["dirty"] is True and g["changed"] == ["a.txt"]
    assert g["describe"].endswith("-dirty")


def test_no_repository_is_not_an_error(tmp_path):
    g = runmeta.git_state(str(tmp_path))
    assert g["commit"] is None and g["why"]


def test_cli(repo, tmp_path):
    ko = tmp_path / "srff.ko"
    ko.write_bytes(b"\x7fELF module")
    params = tmp_path / "p.json"
    params.write_text(json.dumps({"rate": "20mbit", "rounds": 3}))
    out = tmp_path / "meta.json"
    runmeta.main([str(out), "--repo", str(repo), "--ko", str(ko), "--params", str(params),
                  "--set", "rounds=5", "--set", "load=0.5", "--set", "dist=websearch",
                  "--set", "policies=[\"fq_codel\", \"srff\"]", "--seed", "base=7",
                  "--pkg", "no-such-package-srff"])
    m = json.load(open(out))
    assert m["params"] == {"rate": "20mbit", "rounds": 5, "load": 0.5, "dist": "websearch",
                           "policies": ["fq_codel", "srff"]}
    assert m["seeds"] == {"base": 7}
    assert m["srff_ko"]["sha256"] == hashlib.sha256(b"\x7fELF module").hexdigest()
    assert m["srff_ko"]["size"] == 11
    assert m["git"]["dirty"] is False
    assert m["machine"]["kernel"] == os.uname().release and m["machine"]["cpus"] >= 1
    assert m["machine"]["mem_kib"] > 0
    # What was asked for, then the emulator, asked for or not (its version
    # where it is installed, None with no dpkg entry).
    assert list(m["packages"]) == ["no-such-package-srff", "qemu-system-x86"]
    assert m["packages"]["no-such-package-srff"] is None
    assert m["date"].endswith("Z")


def test_missing_module_is_recorded(tmp_path):
    m = runmeta.collect(str(tmp_path), str(tmp_path / "nope.ko"))
    assert m["srff_ko"]["sha256"] is None and m["srff_ko"]["why"]


def test_bad_setting(tmp_path):
    with pytest.raises(SystemExit):
        runmeta.main([str(tmp_path / "m.json"), "--set", "novalue"])
