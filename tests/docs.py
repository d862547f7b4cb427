#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""tests/docs.py: the documentation against the code it describes, so that
a change to one without the other fails. No kernel and no build needed.

 1. Module parameters (module_param* in srff_nf/*.c, the test build's
    test_* left out): each has a MODULE_PARM_DESC, and an entry in srff(8)
    whose "Default:" line starts with its default: MODULE_PARM_DESC's
    "(default ...)" or, without one, the variable's initializer (where both
    give a plain value, they agree); srff(8) has no entry for a parameter
    that does not exist. docs/operations.md points to srff(8) unless it
    lists the parameters, and a Markdown table of them in README.md or
    docs/*.md lists every one.
 2. srffctl's keys (config_keys[] in srffctl/settings.c): an entry each in
    srffctl(8), KEYS, and srff.conf(5), KEYS, and no entry for a key that
    does not exist; each in srffctl's help text (main.c) and in
    docs/interfaces.md's list of set keys.
 3. srffctl's JSON keys (the print calls of show, stats, sizes and flows):
    each named under its command in srffctl(8), JSON, and in
    docs/interfaces.md.
 4. Setup names: every `srff-qdisc install NAME` and `SETUP=NAME` in
    README.md, docs/, packaging/ and srff-check's advice names a setup that
    `srff-qdisc --help` lists.
 5. Man pages (docs/*.[1-9], and srff-qdisc.8 and srff-check.8, which
    packaging/man-from-header.sh makes from the scripts' headers, with the
    same summary in packaging/local.sh and debian/rules): each is
    installed by make install and removed by make uninstall
    (packaging/local.sh, srffctl/Makefile) and is in a Debian package
    (debian/*.manpages, or srffctl's make install in debian/rules); its .TH
    names the file, its section and dkms.conf's version; SEE ALSO names
    every other page; groff -ww and man --warnings say nothing.
 6. README's results table: each row names its committed sources and the
    policies it quotes, and every figure in it is one of theirs.

Ends in "docs: N passed, N failed"; exits 1 if any check failed.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.chdir(TOP)
passed = failed = 0


def check(what, ok, details=()):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok - {what}")
    else:
        failed += 1
        print(f"not ok - {what}")
        for d in details:
            print(f"#   {d}")


def read(path):
    """The file's text; "" if it is missing (the check below says so)."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def words_missing(text, names):
    """The names that do not occur in text as a whole word (- and _ are
    part of a word)."""
    return [n for n in names
            if not re.search(r"(?<![\w-])" + re.escape(n) + r"(?![\w-])", text)]


# --- roff --------------------------------------------------------------

ESCAPES = [(r"\(aq", "'"), (r"\(dq", '"'), (r"\(em", "-"), (r"\(ha", "^"),
           (r"\-", "-"), (r"\e", "\\"), (r"\&", ""), (r"\ ", " ")]


def roff_plain(s):
    s = re.sub(r"\\f(\[[A-Z]*\]|[BIRP])", "", s)
    for esc, plain in ESCAPES:
        s = s.replace(esc, plain)
    return s


def roff_args(s):
    return [a[1:-1] if a.startswith('"') else a
            for a in re.findall(r'"[^"]*"|\S+', s)]


def roff_lines(path, italic=lambda s: s):
    """The page as (macro, text) lines: a font macro's arguments joined as
    roff prints them, escapes taken out; macro None for plain text. Italic
    text (placeholders) goes through italic()."""
    out = []
    for line in read(path).splitlines():
        if line.startswith(".\\\""):
            continue
        line = re.sub(r"\\fI(.*?)(?=\\f|$)", lambda m: italic(m.group(1)), line)
        m = re.match(r"\.([A-Za-z]+)\s*(.*)", line)
        if not m:
            out.append((None, roff_plain(line)))
            continue
        mac, rest = m.group(1), m.group(2)
        args = roff_args(rest)
        if mac in ("B", "I", "SM"):
            out.append((None, roff_plain(" ".join(italic(a) if mac == "I" else a for a in args))))
        elif re.fullmatch(r"[BIR][BIR]", mac):
            out.append((None, roff_plain("".join(
                italic(a) if mac[i % 2] == "I" else a for i, a in enumerate(args)))))
        else:
            out.append((mac, roff_plain(" ".join(args))))
    return out


def sections(lines):
    """{".SH title": [lines]}, subsections (.SS) kept inside."""
    secs, cur = {}, None
    for mac, text in lines:
        if mac == "SH":
            cur = text.upper()
            secs[cur] = []
        elif cur is not None:
            secs[cur].append((mac, text))
    return secs


def entries(lines):
    """The .TP entries of a section: [(tag, body text)]."""
    out, tag, body, want_tag = [], None, [], False
    for mac, text in lines:
        if mac == "TP":
            if tag is not None:
                out.append((tag, " ".join(body)))
            tag, body, want_tag = None, [], True
        elif mac in ("SH", "SS"):
            if tag is not None:
                out.append((tag, " ".join(body)))
            tag, body, want_tag = None, [], False
        elif want_tag and mac is None:
            tag, want_tag = text, False
        elif tag is not None and mac is None:
            body.append(text)
    if tag is not None:
        out.append((tag, " ".join(body)))
    return out


def page_text(path, italic=lambda s: s):
    return "\n".join(t for _, t in roff_lines(path, italic))


PAGES = ["docs/srff.8", "docs/srff.conf.5", "docs/srffctl.8"]
missing = [p for p in PAGES + ["docs/interfaces.md", "docs/operations.md"] if not os.path.exists(p)]
check("the man pages and docs checked are there", not missing, missing)

# --- 1. module parameters ----------------------------------------------

def c_string_literals(s):
    return "".join(bytes(m, "utf-8").decode("unicode_escape")
                   for m in re.findall(r'"((?:[^"\\]|\\.)*)"', s))


def c_defines():
    d = {}
    for h in glob.glob("srff_nf/*.h") + glob.glob("include/**/*.h", recursive=True):
        for m in re.finditer(r"^#define\s+(\w+)\s+([^\s/]+)", read(h), re.M):
            d[m.group(1)] = m.group(2).strip("()")
    return d


def module_params():
    """{name: {"desc", "init", "array"}} of the parameters a server may set."""
    defines = c_defines()
    params = {}
    for path in sorted(glob.glob("srff_nf/*.c")):
        if path.endswith(".mod.c"):
            continue
        src = read(path)
        descs = {m.group(1): c_string_literals(m.group(2)) for m in re.finditer(
            r'MODULE_PARM_DESC\(\s*(\w+)\s*,\s*((?:"(?:[^"\\]|\\.)*"\s*)+)\)', src)}
        for m in re.finditer(r"\bmodule_param(_array|_named)?\(\s*(\w+)\s*,\s*(\w+)", src):
            kind, name = m.group(1), m.group(2)
            var = m.group(3) if kind == "_named" else name
            desc = descs.get(name)
            if name.startswith("test_") or (desc or "").startswith("TEST BUILD"):
                continue
            decl = re.search(r"^static\s+[\w\s\*]*?\b" + var +
                             r"\s*(\[[^\]]*\])?\s*(?:=\s*([^;]+))?;", src, re.M)
            init = None
            if decl and decl.group(2) is not None:
                init = decl.group(2).strip()
                if init.startswith("{"):
                    init = ",".join(x.strip() for x in init.strip("{} ").split(","))
                elif init.startswith('"'):
                    init = init.strip('"')
                else:
                    init = defines.get(init, init)
            params[name] = {"desc": desc, "init": init,
                            "array": kind == "_array" or bool(decl and decl.group(1))}
    return params


def same_value(a, b):
    try:
        return int(a, 0) == int(b.rstrip("UuLl"), 0)
    except ValueError:
        return a == b


def param_default(p):
    """(the default the docs must give, the source's disagreement or None):
    MODULE_PARM_DESC's "(default X...)", else the initializer."""
    desc_default = None
    m = re.search(r"\(default:?\s*([^)]*)\)", p["desc"] or "")
    if m:
        desc_default = re.split(r";|: |, ", m.group(1))[0].strip()
    init = p["init"] if p["init"] is not None else ("none" if p["array"] else "0")
    if desc_default is None:
        return init, None
    if p["init"] is not None and " " not in desc_default and not same_value(desc_default, p["init"]):
        return desc_default, f"MODULE_PARM_DESC says {desc_default}, the initializer {p['init']}"
    return desc_default, None


params = module_params()
check(f"srff_nf: {len(params)} module parameters found", len(params) >= 10)
no_desc = sorted(n for n, p in params.items() if not p["desc"])
check("every module parameter has a MODULE_PARM_DESC", not no_desc, no_desc)

srff8 = sections(roff_lines("docs/srff.8"))
param_entries = {}
for tag, body in entries(srff8.get("PARAMETERS", [])):
    param_entries[re.split(r"[=\s]", tag)[0]] = body
disagree = [f"{n}: {param_default(p)[1]}" for n, p in sorted(params.items()) if param_default(p)[1]]
check("srff_nf: MODULE_PARM_DESC and the initializers give the same defaults", not disagree, disagree)
for name in sorted(params):
    want = param_default(params[name])[0]
    body = param_entries.get(name)
    if body is None:
        check(f"srff(8) documents {name}", False, ["no .TP entry in PARAMETERS"])
        continue
    m = re.search(r"Default:\s*(.*)", body)
    got = re.sub(r"\s+", " ", m.group(1)) if m else ""
    ok = m is not None and re.match(re.escape(want) + r"(?![\w])", got, re.I) is not None
    check(f"srff(8) documents {name}, default {want}", ok,
          [f"its Default: line says: {got[:70] or '(none)'}"])
extra = sorted(set(param_entries) - set(params))
check("srff(8) documents no parameter the module lacks", not extra, extra)

ops = read("docs/operations.md")


def param_tables(text):
    """The Markdown tables whose rows name 3 or more module parameters:
    [set of parameter names in the first column]."""
    tables, rows = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            m = re.match(r"\|\s*`(\w+)`", line)
            if m:
                rows.append(m.group(1))
        elif rows:
            if len(set(rows) & set(params)) >= 3:
                tables.append(set(rows))
            rows = []
    return tables


for path in ["README.md"] + sorted(glob.glob("docs/*.md")):
    for t in param_tables(read(path)):
        missing = sorted(set(params) - t)
        unknown = sorted(t - set(params))
        check(f"{path}: its table of module parameters lists each, and no other", not missing and not unknown,
              [f"missing: {' '.join(missing)}"] * bool(missing) + [f"no such parameter: {' '.join(unknown)}"] * bool(unknown))
check("docs/operations.md points to srff(8) for the module parameters (or lists them)",
      bool(param_tables(ops)) or re.search(r"srff\(8\)|srff\.8", ops) is not None)

# --- 2. srffctl's keys -----------------------------------------------------

m = re.search(r"config_keys\[\]\s*=\s*\{(.*?)\};", read("srffctl/settings.c"), re.S)
keys = re.findall(r'"([a-z-]+)"', m.group(1)) if m else []
check(f"srffctl: {len(keys)} keys in config_keys[]", len(keys) >= 10)
for page, title in (("docs/srffctl.8", "srffctl(8)"), ("docs/srff.conf.5", "srff.conf(5)")):
    documented = [tag.split()[0] for tag, _ in entries(sections(roff_lines(page)).get("KEYS", []))]
    missing = [k for k in keys if k not in documented]
    unknown = [k for k in documented if k not in keys]
    check(f"{title}, KEYS: an entry for every key ({len(keys)}), none for another",
          not missing and not unknown,
          [f"missing: {' '.join(missing)}"] * bool(missing) + [f"no such key: {' '.join(unknown)}"] * bool(unknown))
usage = re.search(r"static void usage\(.*?\n\}", read("srffctl/main.c"), re.S)
help_text = c_string_literals(usage.group(0)) if usage else ""
help_keys = help_text[help_text.find("set keys:"):]
missing = words_missing(help_keys, keys)
check("srffctl help: names every key", help_keys != "" and not missing, missing)
iface = read("docs/interfaces.md")
m = re.search(r"^`set` keys.*?(?=\n\n|\nExit codes)", iface, re.S | re.M)
missing = [k for k in keys if not m or not re.search(r"`" + re.escape(k) + r"[ `]", m.group(0))]
check("docs/interfaces.md: its set keys name every key", m is not None and not missing, missing)

# --- 3. JSON keys ----------------------------------------------------------

JSON_SRC = {"show": "srffctl/settings.c", "stats": "srffctl/stats_print.c",
            "sizes": "srffctl/sizes.c", "flows": "srffctl/flows.c"}


def json_keys(path):
    src = read(path)
    found = []
    for m in re.finditer(r"\b(print_[a-z_]+|open_json_array|open_json_object)\(\s*(?:(\w+)\s*,\s*)?"
                         r'"([a-z][a-z0-9_]*)"', src):
        if m.group(1) == "print_text" or m.group(2) == "PRINT_FP":
            continue
        found.append(m.group(3))
    found += re.findall(r'\{\s*"(p\d+)",', src)		# sizes' quantiles
    return list(dict.fromkeys(found))


man_json = {tag.split()[0]: body for tag, body in
            entries(sections(roff_lines("docs/srffctl.8")).get("JSON", []))}
iface_json = dict(re.findall(r"\b(\w+) → (.*?)(?=\b\w+ → |\Z)", iface[iface.find("JSON (`-j`)"):], re.S))
for cmd, path in JSON_SRC.items():
    ks = json_keys(path)
    missing = words_missing(man_json.get(cmd, ""), ks)
    check(f"srffctl(8), JSON: {cmd} names every key {path} prints ({len(ks)})",
          cmd in man_json and not missing, missing)
    missing = words_missing(iface_json.get(cmd, ""), ks)
    check(f"docs/interfaces.md: {cmd} names every key {path} prints", cmd in iface_json and not missing, missing)

# --- 4. setup names --------------------------------------------------------

out = subprocess.run(["bash", "tc-scripts/srff-qdisc", "--help"], capture_output=True, text=True).stdout
setups = set(re.findall(r"srff-qdisc install ([a-z][\w-]*) DEV", out))
check(f"srff-qdisc --help lists its setups ({len(setups)})", len(setups) >= 5)
DEVICE = re.compile(r"^([A-Z]+|(eth|en[ops]|veth|wlan|bond|br|lo|dummy|s)\d[\w.@-]*)$")


def setup_mentions(text):
    for line in text.splitlines():
        for m in re.finditer(r"(?:srff-qdisc|\$QDISC_TOOL)\b", line):
            toks = line[m.end():].split()
            i = 0
            while i < len(toks) and toks[i].startswith("-"):
                i += 2 if toks[i] in ("-n", "--netns") else 1
            if i + 1 < len(toks) and toks[i] == "install":
                name = toks[i + 1].strip("`'\"(),.;:")
                # Not a setup: a variable, a device, a placeholder, a regex.
                if re.fullmatch(r"[a-z][\w-]*", name) and not DEVICE.match(name):
                    yield name
        for m in re.finditer(r"\bSETUP=([a-z][\w-]*)", line):
            yield m.group(1)


docs_files = (["README.md"] + sorted(glob.glob("docs/*.md")) + sorted(glob.glob("packaging/*"))
              + ["tc-scripts/srff-check"])
man_pages = sorted(p for p in glob.glob("docs/*.[1-9]"))
unknown = []
for path in docs_files + man_pages:
    # In a man page, italic words are placeholders (SETUP=\fIsetup\fR).
    text = page_text(path, str.upper) if path in man_pages else read(path)
    unknown += [f"{path}: {n}" for n in setup_mentions(text) if n not in setups]
check("every setup named in README.md, docs/, packaging/ and srff-check's advice is one of srff-qdisc's",
      not unknown, unknown)

# --- 6. README's figures ---------------------------------------------------

# Each row of README's results table names the committed files its figures
# come from and the policies it quotes (<!-- from: PATH ... rows: NAME,... -->);
# every decimal in the row but a size (5.8 MB) or QEMU's version (nor the
# tail of one, 10.0.2's 0.2) must be a number of those files' table lines
# whose policy cell is one of NAMEs, so a figure cannot outlive the data, be
# typed wrong, or be another policy's. A row without its sources fails.
readme = read("README.md")
m = re.search(r"^## What it does, measured\n(.*?)(?=^## )", readme, re.S | re.M)
rows = [l for l in (m.group(1) if m else "").splitlines()
        if l.startswith("|") and not re.match(r"\|[-| ]+\|$", l)][1:]
check("README: a results table under \"What it does, measured\"", len(rows) >= 3)
for row in rows:
    src = re.search(r"<!-- from: (.*?) -->", row)
    name = row.split("|")[1].strip()[:40]
    if not src:
        check(f"README results row \"{name}\": names its sources", False)
        continue
    spec = src.group(1).split(" rows: ")
    paths = spec[0].split()
    names = set(spec[1].split(",")) if len(spec) > 1 else set()
    missing = [p for p in paths if not os.path.isfile(p)]
    nums = set()
    for p in paths:
        if p in missing:
            continue
        for line in read(p).splitlines():
            if {c.strip() for c in line.split("|")} & names:
                nums |= set(re.findall(r"\d+\.\d+", line))
    text = row[:src.start()]
    figs = re.findall(r"(?<!QEMU )(?<![\d.])(\d+\.\d+)(?!\d)(?!\s*(?:[KMG]i?B|%))", text)
    wrong = [f for f in figs if f not in nums]
    check(f"README results row \"{name}\": its {len(figs)} figures are its sources' ({' '.join(paths)})",
          bool(names) and not missing and figs and not wrong,
          ["no \"rows: NAME,...\" in its from-comment"] * (not names)
          + [f"no such file: {p}" for p in missing] + [f"not in the sources: {' '.join(wrong)}"] * bool(wrong))

# --- 5. man pages ----------------------------------------------------------

local = read("packaging/local.sh")
local_install = re.search(r"^install_\(\) \{.*?^\}", local, re.S | re.M)
local_uninstall = re.search(r"^uninstall\(\) \{.*?^\}", local, re.S | re.M)
ctl_make = read("srffctl/Makefile")
ctl_install = re.search(r"^install:.*?(?=^\S)", ctl_make, re.S | re.M)
rules = read("debian/rules")
deb_pages = {os.path.basename(line.strip()) for f in glob.glob("debian/*.manpages")
             for line in read(f).splitlines() if line.strip()}
if re.search(r"\$\(MAKE\) -C srffctl install", rules) and ctl_install:
    deb_pages |= set(re.findall(r"[\w.-]+\.[1-9]\b", ctl_install.group(0)))

version = re.search(r'^PACKAGE_VERSION="(.*)"', read("dkms.conf"), re.M).group(1)
tmp = tempfile.mkdtemp(prefix="srff-docs.")
pages = {os.path.basename(p): p for p in man_pages}
for script in ("srff-qdisc", "srff-check"):
    # The summary the pages are made with, as make install gives it.
    m = re.search(r'man-from-header\.sh"\s+"[^"]*tc-scripts/' + script + r'"\s*\\?\s*"([^"]+)"', local)
    out = os.path.join(tmp, script + ".8")
    with open(out, "w") as f:
        rc = subprocess.run(["packaging/man-from-header.sh", "tc-scripts/" + script,
                             m.group(1) if m else "?", version], stdout=f).returncode
    check(f"man-from-header.sh makes {script}.8 (exit {rc})", rc == 0 and m is not None)
    pages[script + ".8"] = out
    m2 = re.search(r"man-from-header\.sh\s+tc-scripts/" + script + r"\s*\\?\s*\"([^\"]+)\"", rules)
    check(f"{script}.8: debian/rules gives it make install's summary",
          m is not None and m2 is not None and m.group(1) == m2.group(1))

have_groff = shutil.which("groff") is not None
have_man = shutil.which("man") is not None
for page, path in sorted(pages.items()):
    name, sec = page.rsplit(".", 1)
    where = f"man{sec}/{page}"
    installed = bool(local_install and where in local_install.group(0)) or \
        bool(ctl_install and where in ctl_install.group(0))
    check(f"{page}: make install installs it", installed)
    check(f"{page}: make uninstall removes it", bool(local_uninstall and where in local_uninstall.group(0)))
    check(f"{page}: a Debian package ships it", page in deb_pages)
    lines = roff_lines(path)
    th = next((roff_args(roff_plain(line[3:])) for line in read(path).splitlines()
               if line.startswith(".TH ")), [])
    ok = len(th) >= 4 and th[0] == name.upper() and th[1] == sec and th[3] == f"srff {version}"
    check(f"{page}: .TH {name.upper()} {sec} ... \"srff {version}\"", ok, [f".TH {' '.join(th)}"])
    secs = sections(lines)
    name_line = " ".join(t for _, t in secs.get("NAME", []))
    check(f"{page}: NAME is \"{name} - ...\"", name_line.startswith(name + " - "), [name_line])
    see = " ".join(t for _, t in secs.get("SEE ALSO", []))
    others = [p for p in pages if p != page]
    missing = [o for o in others if f"{o.rsplit('.', 1)[0]}({o.rsplit('.', 1)[1]})" not in see.replace(" (", "(")]
    check(f"{page}: SEE ALSO names every other srff page", not missing, missing)
    if have_groff:
        r = subprocess.run(["groff", "-man", "-ww", "-z", path], capture_output=True, text=True)
        check(f"{page}: groff -man -ww says nothing", r.returncode == 0 and not r.stderr,
              r.stderr.splitlines()[:5])
    if have_man:
        r = subprocess.run(["man", "--warnings", "-l", path], capture_output=True, text=True,
                           env=dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8"))
        check(f"{page}: man --warnings says nothing", r.returncode == 0 and not r.stderr,
              r.stderr.splitlines()[:5])
if not have_groff or not have_man:
    print("ok - groff and man warnings # SKIP groff or man not installed")
shutil.rmtree(tmp)

# .ci/run: every kernel test is named once in its comment, as staying on the
# second kernel or as left out there, and the exclusion matches exactly
# those left out (a test added later must be placed).
ci = read(".ci/run")
tests = [ln.split()[0] for ln in read("tests/kernel/TESTS").splitlines()
         if ln.strip() and not ln.startswith("#")]
excl = re.search(r"SRFF_SECOND_KERNEL_EXCLUDE='([^']*)'", ci)
block = re.search(r"# Both kernels run the kernel suite;(.*?)\n# Left out there(.*?)\n# And ", ci, re.S)
check(".ci/run: an exclusion for the second kernel, and its comment", bool(excl and block))
if excl and block:
    def named(text):
        globs = set(re.findall(r"\b([a-z][a-z0-9]*_[a-z0-9_]*\*?)", text))
        return {t for t in tests if any(t == g or (g.endswith("*") and t.startswith(g[:-1])) for g in globs)}
    stay, out = named(block.group(1)), named(block.group(2))
    left = {t for t in tests if re.match(excl.group(1), t)}
    check(".ci/run: every kernel test is named in the comment, once", not (set(tests) - stay - out) and not (stay & out),
          sorted((set(tests) - stay - out) | (stay & out)))
    check(".ci/run: the exclusion leaves out exactly the tests its comment lists", left == out,
          sorted(left ^ out))

print(f"docs: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
