#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Raw generic netlink requests to the srff family, for validation tests.

Builds requests byte by byte (so they can be malformed on purpose), sends
them with NETLINK_EXT_ACK on, and prints one JSON line: the error (0 or
-errno), the extended-ack message and bad-attribute offset, and for a
GET_CONFIG the raw attribute payload in hex (to compare configurations).

  genl.py [--dump] CMD [ATTR...]   CMD: get-config set-config get-stats flush
                                   get-flows (with --dump: a dump request)
  ATTR: TYPE:u8:V TYPE:u16:V TYPE:u32:V TYPE:u64:V TYPE:hex:BYTES
        TYPE:nest[:flag]=ATTR,ATTR...   (nest of attrs; "flag" sets NLA_F_NESTED)
  Example: genl.py set-config 6:u32:500  99:u32:1  2:nest:flag=1:u64:10,1:u64:5

  genl.py --batch: one request a line on stdin, written as above, and a JSON
  line for each, which adds "config_after": the raw GET_CONFIG payload in
  hex right after that request (one Python start for many requests: a start
  costs a second or two in the emulated guest).
"""
import json
import os
import re
import socket
import struct
import sys

NETLINK_GENERIC = 16
GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY = 3
CTRL_ATTR_FAMILY_ID = 1
CTRL_ATTR_FAMILY_NAME = 2
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 1, 4, 0x300
NLM_F_DUMP_INTR = 0x10
NLMSG_ERROR, NLMSG_DONE = 2, 3
SOL_NETLINK = 270
NETLINK_EXT_ACK = 11
NLMSGERR_ATTR_MSG, NLMSGERR_ATTR_OFFS = 1, 2
NLA_F_NESTED = 0x8000
CMDS = {"get-config": 1, "set-config": 2, "get-stats": 3, "get-flows": 4, "flush": 5,
        "get-sizes": 6}


def uapi_enum(name):
    """{member: value} of enum NAME in include/uapi/linux/srff.h, read from
    the header itself so that attribute numbers cannot drift."""
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    text = open(os.path.join(top, "include/uapi/linux/srff.h")).read()
    body = re.search(r"enum %s \{(.*?)\};" % name, text, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    names = [x.strip() for x in body.split(",") if x.strip()]
    return {n: i for i, n in enumerate(names)}


def attr(t, payload):
    hdr = struct.pack("=HH", 4 + len(payload), t)
    pad = b"\0" * ((4 - len(payload) % 4) % 4)
    return hdr + payload + pad


def parse_attrs(buf):
    out = []
    while len(buf) >= 4:
        ln, t = struct.unpack_from("=HH", buf)
        if ln < 4:
            break
        out.append((t, buf[4:ln]))
        buf = buf[(ln + 3) & ~3:]
    return out


def build(spec):
    """TYPE:kind:value or TYPE:nest[:flag]=a,b,c"""
    head, _, inner = spec.partition("=")
    parts = head.split(":")
    t = int(parts[0])
    if parts[1] == "nest":
        if "flag" in parts[2:]:
            t |= NLA_F_NESTED
        payload = b"".join(build(s) for s in inner.split(",") if s)
        return attr(t, payload)
    kind, val = parts[1], parts[2]
    fmt = {"u8": "=B", "u16": "=H", "u32": "=I", "u64": "=Q"}
    if kind == "hex":
        return attr(t, bytes.fromhex(val))
    return attr(t, struct.pack(fmt[kind], int(val, 0)))


class Genl:
    def __init__(self):
        self.s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
        self.s.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
        self.s.bind((0, 0))
        self.seq = 0

    def request(self, family, cmd, payload, flags=NLM_F_REQUEST | NLM_F_ACK):
        self.seq += 1
        genl = struct.pack("=BBH", cmd, 1, 0)
        msg = struct.pack("=IHHII", 16 + 4 + len(payload), family, flags, self.seq, 0) + genl + payload
        self.s.send(msg)
        replies, err = [], None
        while err is None:
            data = self.s.recv(65536)
            while data:
                ln, typ, fl, seq, pid = struct.unpack_from("=IHHII", data)
                body = data[16:ln]
                if typ == NLMSG_DONE:     # a dump that was accepted
                    err = (0, {})
                    break
                if typ == NLMSG_ERROR:
                    code = struct.unpack_from("=i", body)[0]
                    ext = {}
                    # The original request is echoed unless capped; skip it.
                    inner_len = struct.unpack_from("=I", body, 4)[0]
                    off = 4 + (16 if fl & 0x100 else max(16, inner_len))  # NLM_F_CAPPED
                    off = (off + 3) & ~3
                    for t, v in parse_attrs(body[off:]):
                        if t == NLMSGERR_ATTR_MSG:
                            ext["msg"] = v.rstrip(b"\0").decode()
                        elif t == NLMSGERR_ATTR_OFFS:
                            ext["offs"] = struct.unpack("=I", v)[0]
                    err = (code, ext)
                    break
                replies.append(body[4:])
                data = data[(ln + 3) & ~3:]
        return err, replies

    def dump(self, family, cmd):
        """One dump: (error, [(nlmsg_flags, genl payload)...], intr), where
        intr says whether any message, NLMSG_DONE included, carried
        NLM_F_DUMP_INTR."""
        self.seq += 1
        msg = struct.pack("=IHHII", 20, family, NLM_F_REQUEST | NLM_F_DUMP,
                          self.seq, 0) + struct.pack("=BBH", cmd, 1, 0)
        self.s.send(msg)
        out, intr = [], False
        while True:
            data = self.s.recv(1 << 20)
            while data:
                ln, typ, fl, seq, pid = struct.unpack_from("=IHHII", data)
                intr |= bool(fl & NLM_F_DUMP_INTR)
                if typ == NLMSG_DONE:
                    return 0, out, intr
                if typ == NLMSG_ERROR:
                    return struct.unpack_from("=i", data, 16)[0], out, intr
                out.append((fl, data[20:ln]))
                data = data[(ln + 3) & ~3:]

    def family(self, name):
        err, rep = self.request(GENL_ID_CTRL, CTRL_CMD_GETFAMILY,
                                attr(CTRL_ATTR_FAMILY_NAME, name.encode() + b"\0"))
        if err[0]:
            return None
        for t, v in parse_attrs(rep[0]):
            if t == CTRL_ATTR_FAMILY_ID:
                return struct.unpack("=H", v)[0]


def main():
    g = Genl()
    fam = g.family("srff")
    if fam is None:
        print(json.dumps({"error": "no srff family"}))
        sys.exit(4)
    if sys.argv[1:] == ["--batch"]:
        for line in sys.stdin:
            if line.split():
                out = one(g, fam, line.split())
                out["config_after"] = one(g, fam, ["get-config"]).get("reply")
                print(json.dumps(out), flush=True)
    else:
        print(json.dumps(one(g, fam, sys.argv[1:])))


def one(g, fam, args):
    """One request, ARGS as on the command line: its error, extended ack and
    reply."""
    flags = NLM_F_REQUEST | NLM_F_ACK
    if args[0] == "--dump":
        flags |= NLM_F_DUMP
        args = args[1:]
    payload = b"".join(build(s) for s in args[1:])
    (code, ext), replies = g.request(fam, CMDS[args[0]], payload, flags)
    out = {"error": code, "msg": ext.get("msg"), "offs": ext.get("offs")}
    if replies:
        out["reply"] = replies[0].hex()
    return out


if __name__ == "__main__":
    main()
