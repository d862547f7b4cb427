# SPDX-License-Identifier: GPL-2.0
"""experiments/guest-lib.sh, sourced by bash as the guest scripts do, with a
stand-in for srffctl."""
import json
import os
import subprocess

import pytest

LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "guest-lib.sh")


def bash(script, env=None):
    return subprocess.run(["bash", "-c", '. "$LIB"; ' + script],
                          env=dict(os.environ, LIB=LIB, **(env or {})),
                          capture_output=True, text=True)


@pytest.mark.parametrize("k,want", [
    (0, "a b c d"), (1, "b c d a"), (3, "d a b c"), (4, "a b c d"), (6, "c d a b"),
])
def test_rotate(k, want):
    r = bash(f"rotate {k} a b c d")
    assert r.returncode == 0 and r.stdout.split() == want.split()


def test_rotate_every_policy_in_every_position():
    """Over N trials each of N policies runs once in each position."""
    pol = "alone unmarked fq_codel srff-orig srff srff-8".split()
    orders = [bash(f"rotate {k} " + " ".join(pol)).stdout.split() for k in range(len(pol))]
    for pos in range(len(pol)):
        assert sorted(o[pos] for o in orders) == sorted(pol)


def test_rotate_words_with_odd_characters():
    r = bash("rotate 1 'srff@0.6' '*' x")
    assert r.stdout.split() == ["*", "x", "srff@0.6"]


@pytest.fixture
def fake(tmp_path):
    """A srffctl that prints the stats in $STATS, and a parameters dir."""
    ctl = tmp_path / "srffctl"
    ctl.write_text('#!/bin/sh\n[ "$1 $2 $3 $4" = "-n SRV -j stats" ] || exit 9\ncat "$STATS"\n')
    ctl.chmod(0o755)
    params = tmp_path / "params"
    params.mkdir()
    (params / "auto_min_flows").write_text("1000\n")
    return tmp_path


@pytest.mark.parametrize("flows,changes,learnt", [
    (0, 0, False), (999, 0, False), (1000, 0, True), (12, 1, True), (5000, 3, True),
])
def test_srff_learnt(fake, flows, changes, learnt):
    (fake / "stats.json").write_text(json.dumps({"auto_flows": flows, "auto_changes": changes}))
    r = bash(f'srff_learnt "{fake}/srffctl" SRV',
             {"STATS": str(fake / "stats.json"), "SRFF_PARAMS": str(fake / "params")})
    assert (r.returncode == 0) is learnt, r.stderr


@pytest.mark.parametrize("flows,changes,learnt", [(999, 0, False), (1000, 0, True), (3, 2, True)])
def test_srff_learnt_pretty_and_other_keys(fake, flows, changes, learnt):
    """srffctl -j -p's layout, and keys that share a prefix, read alike."""
    stats = {"auto_changes_total": 99, "auto_changes": changes, "auto_flows_seen": 5000,
             "auto_flows": flows}
    (fake / "stats.json").write_text(json.dumps(stats, indent=2))
    r = bash(f'srff_learnt "{fake}/srffctl" SRV',
             {"STATS": str(fake / "stats.json"), "SRFF_PARAMS": str(fake / "params")})
    assert (r.returncode == 0) is learnt, r.stderr


def test_srff_learnt_no_module(fake):
    """No module parameters (srff not loaded): not learnt, and said why."""
    (fake / "stats.json").write_text(json.dumps({"auto_flows": 5000, "auto_changes": 3}))
    r = bash(f'srff_learnt "{fake}/srffctl" SRV',
             {"STATS": str(fake / "stats.json"), "SRFF_PARAMS": str(fake / "nowhere")})
    assert r.returncode != 0 and "auto_min_flows" in r.stderr


def test_srff_learnt_srffctl_fails(fake):
    (fake / "srffctl").write_text("#!/bin/sh\necho 'srffctl: no generic netlink family srff' >&2\nexit 1\n")
    r = bash(f'srff_learnt "{fake}/srffctl" SRV', {"SRFF_PARAMS": str(fake / "params")})
    assert r.returncode != 0


def logging_ctl(tmp_path):
    """A srffctl that logs its arguments to $LOG, and fails when FAIL=1."""
    log = tmp_path / "log"
    ctl = tmp_path / "srffctl"
    ctl.write_text('#!/bin/sh\necho "$*" >>"$LOG"\n[ "$FAIL" != 1 ]\n')
    ctl.chmod(0o755)
    return ctl, log


def test_srff_eight_bands(tmp_path):
    """Seven thresholds by class id with the extra settings, then auto; a
    refused first set stops there."""
    ctl, log = logging_ctl(tmp_path)
    r = bash(f'srff_eight_bands "{ctl}" SRV app-priority override', {"LOG": str(log)})
    assert r.returncode == 0, r.stderr
    assert log.read_text().splitlines() == [
        "-n SRV set thresholds 16k,128k,1m,8m,64m,512m,4g classid 10: app-priority override",
        "-n SRV set thresholds auto"]
    log.unlink()
    r = bash(f'srff_eight_bands "{ctl}" SRV', {"LOG": str(log), "FAIL": "1"})
    assert r.returncode != 0
    assert log.read_text().splitlines() == [
        "-n SRV set thresholds 16k,128k,1m,8m,64m,512m,4g classid 10:"]


def test_srff_sixteen_bands(tmp_path):
    """Fifteen thresholds twice apart from 16 KiB, by class id, with the
    extra settings, in one srffctl set: the ladder band_study.py simulates."""
    import band_study
    ctl, log = logging_ctl(tmp_path)
    r = bash(f'srff_sixteen_bands "{ctl}" SRV app-priority override', {"LOG": str(log)})
    assert r.returncode == 0, r.stderr
    ladder = ",".join(str(t) for t in band_study.ladder(15))
    assert log.read_text().splitlines() == [
        f"-n SRV set thresholds {ladder} classid 10: app-priority override"]


def test_shuffle_is_a_permutation_fixed_by_its_seed():
    pol = "fifo fq_codel fq cake nft srff-ets srff-ets-fixed srff-ets-8".split()
    a = bash("shuffle 1234 " + " ".join(pol)).stdout.split()
    assert sorted(a) == sorted(pol)
    assert bash("shuffle 1234 " + " ".join(pol)).stdout.split() == a
    assert bash("shuffle 1235 " + " ".join(pol)).stdout.split() != a


def test_shuffle_first_place_is_fair():
    """Over 400 consecutive seeds (a boot's rounds and loads are nearby
    seeds) each of 4 policies is first about a quarter of the time: the
    bias the rotation had (fq_codel first after every warm-up) is gone."""
    script = "for s in $(seq 1000 1399); do shuffle $s a b c d; echo; done"
    firsts = [line.split()[0] for line in bash(script).stdout.splitlines()]
    assert len(firsts) == 400
    for p in "abcd":
        assert 70 <= firsts.count(p) <= 130, (p, firsts.count(p))


def test_shuffle_odd_words_and_one_word():
    assert bash("shuffle 7 'srff@0.6' '*' x").stdout.split() != []
    assert sorted(bash("shuffle 7 'srff@0.6' '*' x").stdout.split()) == sorted(["srff@0.6", "*", "x"])
    assert bash("shuffle 3 only").stdout.split() == ["only"]


def stub_tools(tmp_path, fail_on=""):
    """ip (a device with MTU 1500) and tc (logs its arguments; fails when
    they contain FAIL_ON) on PATH."""
    log = tmp_path / "tc.log"
    (tmp_path / "ip").write_text(
        '#!/bin/sh\necho "2: s0@if3: <BROADCAST,UP> mtu 1500 qdisc tbf state UP"\n')
    (tmp_path / "tc").write_text(
        '#!/bin/sh\necho "$*" >>"$LOG"\n'
        'case "$*" in *"$FAIL_ON"*) [ -z "$FAIL_ON" ] || exit 2 ;; esac\n')
    for t in ("ip", "tc"):
        (tmp_path / t).chmod(0o755)
    return {"PATH": f"{tmp_path}:{os.environ['PATH']}", "LOG": str(log), "FAIL_ON": fail_on}, log


@pytest.mark.parametrize("pct,hi", [(10, 13626), (5, 28766), (20, 6056)])
def test_floor_tree(tmp_path, pct, hi):
    """Bands 0-2 under strict prio in ets's first DRR band, class ids above
    10:3 in one fq_codel in its second, quanta (100 - P):P of a full-sized
    frame; CoDel relaxed in every queue but 10:1 with lax."""
    env, log = stub_tools(tmp_path)
    r = bash(f"floor_tree NS s0 {pct} lax", env)
    assert r.returncode == 0, r.stderr
    lines = log.read_text().splitlines()
    assert lines[0] == (f"-n NS qdisc replace dev s0 parent 1:1 handle 2: ets bands 2 "
                        f"quanta {hi} 1514 priomap " + " ".join(["0"] * 16))
    assert lines[1].startswith("-n NS qdisc add dev s0 parent 2:1 handle 10: prio bands 3 ")
    assert lines[2] == "-n NS qdisc add dev s0 parent 10:1 handle 101: fq_codel"
    for b in (2, 3):
        assert lines[b + 1] == (f"-n NS qdisc add dev s0 parent 10:{b} handle 10{b}: fq_codel "
                                "target 50ms interval 500ms")
    assert lines[5] == "-n NS qdisc add dev s0 parent 2:2 handle 20: fq_codel target 50ms interval 500ms"
    assert lines[6] == ("-n NS filter add dev s0 parent 2: prio 1 basic match "
                        "meta(priority gt 1048579) classid 2:2")
    assert len(lines) == 7


def test_floor_tree_default_codel_and_refusal(tmp_path):
    """Without lax every queue has fq_codel's defaults; a refused command
    stops the tree there with a failure."""
    env, log = stub_tools(tmp_path)
    assert bash("floor_tree NS s0 10", env).returncode == 0
    assert [l for l in log.read_text().splitlines() if "fq_codel" in l and "target" in l] == []
    log.unlink()
    env, log = stub_tools(tmp_path, fail_on="handle 10:")
    assert bash("floor_tree NS s0 10", env).returncode != 0
    assert len(log.read_text().splitlines()) == 2


@pytest.mark.parametrize("name,pre,suf,want", [
    ("srff-htb-8", "srff-htb", "-8", "10 -"),
    ("srff-htb40-8-lax", "srff-htb", "-8", "40 lax"),
    ("srff-pias-htb40-8-lax", "srff-pias-htb", "-8", "40 lax"),
    ("srff-span-htb40-8-lax", "srff-span-htb", "-8", "40 lax"),
    ("srff-floor5-8", "srff-floor", "-8", "5 -"),
    ("srff-8-htb", "srff-8-htb", "", "10 -"),
    ("srff-8-htb99-lax", "srff-8-htb", "", "99 lax"),
    ("srff-8-floor-lax", "srff-8-floor", "", "10 lax"),
    ("srff-htb0-8", "srff-htb", "-8", None),
    ("srff-htb100-8", "srff-htb", "-8", None),
    ("srff-htb40-9", "srff-htb", "-8", None),
    ("srff-htbx-8", "srff-htb", "-8", None),
    ("srff-8-htb-lax-lax", "srff-8-htb", "", None),
    ("srff-8-htb40lax", "srff-8-htb", "", None),
    ("srff-8-floor40", "srff-8-htb", "", None),
])
def test_pct_policy(name, pre, suf, want):
    """The percent-family policy names of both experiments, one parser:
    PREFIX, 1-99 or nothing (10), SUFFIX, -lax or nothing."""
    r = bash(f"pct_policy '{name}' '{pre}' '{suf}'")
    if want is None:
        assert r.returncode != 0 and r.stdout == ""
    else:
        assert r.returncode == 0 and r.stdout.split() == want.split()


def test_codel_lax(tmp_path):
    """CoDel at 50 ms / 500 ms in the leaves of bands 1-7 of 8, band 0's
    untouched; a refused change stops there with a failure."""
    env, log = stub_tools(tmp_path)
    assert bash("codel_lax NS s0", env).returncode == 0
    assert log.read_text().splitlines() == [
        f"-n NS qdisc change dev s0 parent 10:{b} handle 10{b}: fq_codel target 50ms interval 500ms"
        for b in range(2, 9)]
    log.unlink()
    env, log = stub_tools(tmp_path, fail_on="parent 10:4 ")
    assert bash("codel_lax NS s0", env).returncode != 0
    assert len(log.read_text().splitlines()) == 3


def test_codel_lax_bands(tmp_path):
    """With a band count: bands 1 to N-1 only (3 bands: classes 10:2 and
    10:3), in tc's hexadecimal past 9 (16 bands: 10:10, handle 110:)."""
    env, log = stub_tools(tmp_path)
    assert bash("codel_lax NS s0 3", env).returncode == 0
    assert [l.split()[6:10] for l in log.read_text().splitlines()] == [
        ["parent", "10:2", "handle", "102:"], ["parent", "10:3", "handle", "103:"]]
    log.unlink()
    assert bash("codel_lax NS s0 16", env).returncode == 0
    lines = log.read_text().splitlines()
    assert len(lines) == 15 and lines[-1].split()[6:10] == ["parent", "10:10", "handle", "110:"]
