# SPDX-License-Identifier: GPL-2.0
"""The files a results folder commits: text compressed with xz, and plots.

xz (preset 6, extreme) takes about 30 % less than gzip -9 on these tables,
and the same text gives the same bytes (no name or time in the header), so
a table made again is not a change in git. Readers take what older runs
committed too: NAME.gz or NAME itself.

    write(path, text)   path ends in .xz
    write_csv(path, columns, rows)
                        rows (dicts) as CSV with a header, through write()
    read_csv(path)      the rows of a CSV file of any of the three kinds
    open_text(path)     a text stream of an .xz, .gz or plain file
    find(d, name)       d/name.xz, else d/name.gz, else d/name; None if
                        none is there
    save_png(fig, path, dpi)
                        a matplotlib figure as a PNG of 256 colours at most
"""
import csv
import gzip
import io
import lzma
import os

PRESET = 6 | lzma.PRESET_EXTREME


def write(path, text):
    assert path.endswith(".xz"), path
    with open(path, "wb") as f:
        f.write(lzma.compress(text.encode(), format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64,
                              preset=PRESET))


def write_csv(path, columns, rows):
    buf = io.StringIO()
    w = csv.DictWriter(buf, columns, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    write(path, buf.getvalue())


def read_csv(path):
    with open_text(path) as f:
        return list(csv.DictReader(f))


def open_text(path):
    if path.endswith(".xz"):
        return lzma.open(path, "rt", newline="")
    if path.endswith(".gz"):
        return gzip.open(path, "rt", newline="")
    return open(path, newline="")


def find(d, name):
    for p in (name + ".xz", name + ".gz", name):
        p = os.path.join(d, p)
        if os.path.exists(p):
            return p
    return None


def read(path):
    with open_text(path) as f:
        return f.read()



def save_png(fig, path, dpi):
    """fig.savefig(path, dpi=dpi), as a palette of 256 colours at most
    (Pillow's median cut; matplotlib needs Pillow): the line plots here look
    the same and take a third of the bytes of matplotlib's RGBA."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    try:
        from PIL import Image
    except ImportError:
        with open(path, "wb") as f:
            f.write(buf.getvalue())
        return
    buf.seek(0)
    with Image.open(buf) as im:
        im.convert("RGB").quantize(256).save(path, "PNG", optimize=True)
