#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What a results folder needs to be reproduced: write it as JSON.

  runmeta.py OUT.json [--repo DIR] [--ko srff_nf/srff.ko] [--params FILE.json]
             [--set KEY=VALUE ...] [--seed NAME=N ...] [--pkg NAME ...]

Records the date (UTC), the git commit of --repo (default: this checkout)
with a dirty flag and the modified files (tracked ones: an untracked
results folder does not make a run dirty), the sha256 and size of the
module that was loaded (--ko), the kernel (uname), the machine's CPUs and
memory and whether it is a VM, the Python version, Debian package
versions (--pkg nginx-light, and always qemu-system-x86: virtme-ng's
guest runs on the host's root, so its dpkg knows which QEMU emulated it,
and timings depend on it), every parameter (--params, a JSON object,
then --set KEY=VALUE, VALUE read as JSON when it parses: 3, 0.5, "x",
[1,2]) and the seeds (--seed NAME=N). A guest script calls it once per run:

  python3 experiments/runmeta.py "$OUT/meta.json" --ko srff_nf/srff.ko \\
      --set rate="$RATE" --set rounds=$ROUNDS --seed base=$SEED --pkg nginx-light

What cannot be found is null with a "why" beside it, never an error: a
run inside the guest must not fail for want of git.
"""
import argparse
import datetime
import hashlib
import json
import os
import platform
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# What every run records, asked for or not: the emulator times everything.
ALWAYS = ("qemu-system-x86",)


def _run(cmd, cwd=None):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=30)
    if r.returncode:
        raise RuntimeError((r.stderr or r.stdout).strip() or "exit %d" % r.returncode)
    return r.stdout.rstrip()


def git_state(repo):
    # The guest mounts the checkout with another owner: without
    # safe.directory git refuses it ("dubious ownership").
    g = ["git", "-c", "safe.directory=*", "-C", repo]
    try:
        commit = _run(g + ["rev-parse", "HEAD"])
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
        return {"commit": None, "why": str(e)}
    out = {"commit": commit}
    try:
        out["branch"] = _run(g + ["rev-parse", "--abbrev-ref", "HEAD"])
        # One status, not two (describe --dirty runs another): in the
        # guest, every file of the checkout is a stat over 9p.
        changed = _run(g + ["status", "--porcelain", "--untracked-files=no"]).splitlines()
        out["describe"] = _run(g + ["describe", "--always"]) + ("-dirty" if changed else "")
        out["dirty"] = bool(changed)
        out["changed"] = [c[3:] for c in changed[:50]]
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
        out["dirty"], out["why"] = None, str(e)
    return out


def file_hash(path):
    try:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for b in iter(lambda: f.read(1 << 20), b""):
                h.update(b)
        return {"path": path, "sha256": h.hexdigest(), "size": os.path.getsize(path)}
    except OSError as e:
        return {"path": path, "sha256": None, "why": str(e)}


def machine():
    u = platform.uname()
    out = {"kernel": u.release, "kernel_version": u.version, "arch": u.machine,
           "cpus": os.cpu_count(), "python": platform.python_version()}
    try:
        out["cpus_usable"] = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        pass
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal:"):
                out["mem_kib"] = int(line.split()[1])
    except OSError:
        pass
    try:
        out["model"] = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                            if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        out["virt"] = _run(["systemd-detect-virt"])
    except (OSError, RuntimeError, subprocess.TimeoutExpired):
        try:
            out["virt"] = open("/sys/class/dmi/id/product_name").read().strip()
        except OSError:
            out["virt"] = None
    return out


def pkg_version(name):
    try:
        return _run(["dpkg-query", "-W", "-f=${Version}", name]) or None
    except (OSError, RuntimeError, subprocess.TimeoutExpired):
        return None


def parse_kv(items, what):
    out = {}
    for s in items:
        if "=" not in s:
            raise SystemExit("runmeta: %s %r: want KEY=VALUE" % (what, s))
        k, v = s.split("=", 1)
        try:
            out[k] = json.loads(v)
        except ValueError:
            out[k] = v
    return out


def collect(repo=None, ko=None, params=None, seeds=None, pkgs=()):
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "git": git_state(repo or os.path.dirname(HERE)),
        "srff_ko": file_hash(ko) if ko else None,
        "machine": machine(),
        "packages": {p: pkg_version(p) for p in dict.fromkeys((*pkgs, *ALWAYS))},
        "params": params or {},
        "seeds": seeds or {},
        "argv": sys.argv,
    }


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--repo")
    p.add_argument("--ko")
    p.add_argument("--params", help="a JSON object of parameters")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--seed", action="append", default=[], metavar="NAME=N")
    p.add_argument("--pkg", action="append", default=[])
    a = p.parse_args(argv)
    params = json.load(open(a.params)) if a.params else {}
    params.update(parse_kv(a.set, "--set"))
    meta = collect(a.repo, a.ko, params, parse_kv(a.seed, "--seed"), a.pkg)
    with open(a.out, "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
