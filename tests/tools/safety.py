#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Traffic for tests/kernel/safety.sh (hostile and odd senders).

  safety.py udp-flood HOST COUNT [--base-port B] [--seconds S]
        one 1-byte datagram to each of COUNT ports (distinct flows), stopping
        early after S seconds; prints how many were sent
  safety.py udp-busy HOST COUNT INTERVAL SECONDS [--base-port B] [--ready F]
                     [--log L]
        every INTERVAL seconds one datagram to each of COUNT ports, for
        SECONDS; touches F after the first round, appends each round's
        time (epoch seconds) to L; prints the longest gap between rounds
  safety.py newcomers HOST UDP_PORT TCP_PORT
        3 datagrams to UDP_PORT 0.3 s apart, then 10 KB over TCP to
        TCP_PORT; prints its start and end time (epoch seconds)
  safety.py syn-flood SRC_IF DST DPORT SECONDS [--net 198.18.0.0/15] [--rate PPS]
        spoofed SYNs (random source address in NET, random source port)
        through a raw socket, until SIGTERM; prints how many were sent
  safety.py serve PORT SIZE
        TCP server: to every client SIZE bytes; closes when the client does
  safety.py fetch HOST PORT N SIZE [--hold F]
        N connections one after the other, SIZE bytes read from each; prints
        the local ports used (non-zero exit on a short read), then keeps
        them all open until F exists
  safety.py shorts HOST PORT N SIZE
        N connections one after the other, each sending SIZE bytes and
        waiting until the sink has read them all
  safety.py stream HOST PORT --stop FILE [--max BYTES] [--seconds S]
        one TCP connection sending until FILE exists (at most BYTES, S
        seconds), then closing once the sink has read it all; prints the
        bytes sent
  safety.py close-sink PORT SIZE
        TCP server: reads SIZE bytes from each client, then closes first
        (the server takes TIME_WAIT, the client's 4-tuple is free at once)
  safety.py reuse-client HOST PORT LPORT SIZE [--first N --go FILE] [--hold FILE]
        connect from local port LPORT (SO_REUSEADDR), send SIZE bytes, wait
        for the server to close, close; with --first, send N bytes, print
        "first", wait for FILE to exist, then send the rest; with --hold,
        print "sent" once all is sent and keep the socket open (no FIN:
        srff's GC does not retire an open flow) until that FILE exists
  safety.py abort-server PORT SIZE COUNT DIR
        (root, nftables table ip srff_test with chain out in place) COUNT
        clients one after the other: SIZE bytes to each, then, once the
        client has them all (it sends "k"), an abortive close (SO_LINGER 0)
        whose RST a rule in srff_test/out drops before POST_ROUTING, so the
        client's side stays open; touches DIR/closed-I after each
  safety.py poke-client HOST PORT SIZE COUNT DIR
        COUNT connections: read SIZE bytes, send "k", wait for
        DIR/closed-I, send 100 bytes: the server's kernel answers with a RST
        from its control socket; prints how many such resets came
  safety.py watch NETNS_PATH... --stop FILE [--seconds S] [--ready F]
        (root) GET_STATS in each network namespace and /proc/slabinfo's
        srff_flow line, over and over until FILE exists (touches F after
        the first round); prints JSON maxima:
        per namespace flows and its cap, flows_host, and slab objects
  safety.py flushwatch X_NETNS OTHER_NETNS --ready F
        (root) while X is flushed by another process: stats of X and the
        configuration of X and OTHER, asked over and over until X is empty;
        prints JSON: how many replies came while X was half flushed
All of them are bounded: every socket has a timeout, every loop a deadline.
"""
import argparse
import ipaddress
import os
import random
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

# Every socket's timeout, stretched as the shell side's waits are
# (SRFF_TIMEOUT_SCALE; make test-debug sets 5): under the debug kernel a
# client's 20 KB during a SYN flood once took longer than 60 s.
TIMEOUT = 60 * max(1, int(os.environ.get("SRFF_TIMEOUT_SCALE") or 1))


def udp_flood(a):
    s = socket.socket(socket.AF_INET6 if ":" in a.host else socket.AF_INET,
                      socket.SOCK_DGRAM)
    end = time.monotonic() + a.seconds
    n = 0
    for i in range(a.count):
        if (i & 255) == 0 and time.monotonic() > end:
            break
        # ports wrap past 65535 (a flood longer than the port range)
        s.sendto(b"f", (a.host, a.base_port + i % (65536 - a.base_port)))
        n += 1
    print(n)


def udp_busy(a):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    end = time.monotonic() + a.seconds
    gap = [0.0]
    log = open(a.log, "a") if a.log else None
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        last = None
        while time.monotonic() < end:
            t = time.monotonic()
            if last is not None:
                gap[0] = max(gap[0], t - last)
            last = t
            for i in range(a.count):
                s.sendto(b"b", (a.host, a.base_port + i))
            if log:
                log.write("%.6f\n" % time.time())
                log.flush()
            if last == t and a.ready and not os.path.exists(a.ready):
                open(a.ready, "w").close()
            time.sleep(max(0.0, a.interval - (time.monotonic() - t)))
    finally:
        # The longest time between two rounds: how long a flow was idle.
        print("%.3f" % gap[0], flush=True)


def newcomers(a):
    t0 = time.time()
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for i in range(3):
        if i:
            time.sleep(0.3)
        u.sendto(b"n" * 100, (a.host, a.udp_port))
    s = socket.create_connection((a.host, a.tcp_port), timeout=TIMEOUT)
    s.sendall(b"n" * 10000)
    finish(s)
    print("%.6f %.6f" % (t0, time.time()))


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def syn_flood(a):
    net = ipaddress.ip_network(a.net)
    base, size = int(net.network_address), net.num_addresses
    dst = socket.inet_aton(a.dst)
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, a.src_if.encode())
    end = time.monotonic() + a.seconds
    rnd = random.Random(1)
    n = 0
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    t0 = time.monotonic()
    while not stop:
        if (n & 63) == 0:
            now = time.monotonic()
            if now > end:
                break
            if a.rate:	# hold the rate: the guest must stay usable
                time.sleep(max(0.0, t0 + n / a.rate - now))
        src = struct.pack("!I", base + rnd.randrange(1, size - 1))
        sport = rnd.randrange(1024, 65535)
        seq = rnd.getrandbits(32)
        # TCP header with an MSS option, then its checksum over the
        # pseudo-header (the receiver checks it: veth does not).
        opts = b"\x02\x04\x05\xb4"
        tcp = struct.pack("!HHIIBBHHH", sport, a.dport, seq, 0, (6 << 4), 0x02,
                          64240, 0, 0) + opts
        ph = src + dst + struct.pack("!BBH", 0, socket.IPPROTO_TCP, len(tcp))
        tcp = tcp[:16] + struct.pack("!H", csum(ph + tcp)) + tcp[18:]
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), n & 0xFFFF, 0,
                         64, socket.IPPROTO_TCP, 0, src, dst)
        s.sendto(ip + tcp, (a.dst, 0))
        n += 1
    print(n)


def listener(port):
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.bind(("::", port))
    s.listen(1024)
    return s


def serve(a):
    s = listener(a.port)
    buf = b"s" * a.size

    def one(c):
        with c:
            c.settimeout(TIMEOUT)
            c.sendall(buf)
            # the client closes first: until then the flow stays open
            while c.recv(4096):
                pass

    while True:
        c, _ = s.accept()
        threading.Thread(target=one, args=(c,), daemon=True).start()


def connect_read(a, i, who):
    """A new connection to a.host:a.port, after reading a.size bytes."""
    s = socket.create_connection((a.host, a.port), timeout=TIMEOUT)
    got = 0
    while got < a.size:
        d = s.recv(1 << 16)
        if not d:
            break
        got += len(d)
    if got < a.size:
        sys.exit("%s: connection %d got %d of %d bytes" % (who, i, got, a.size))
    return s


def fetch(a):
    conns = [connect_read(a, i, "fetch") for i in range(a.n)]
    print(" ".join(str(s.getsockname()[1]) for s in conns), flush=True)
    if a.hold:
        end = time.monotonic() + TIMEOUT
        while not os.path.exists(a.hold) and time.monotonic() < end:
            time.sleep(0.05)
    for s in conns:
        s.close()


def finish(s):
    s.shutdown(socket.SHUT_WR)
    while s.recv(4096):
        pass
    s.close()


def shorts(a):
    for i in range(a.n):
        s = socket.create_connection((a.host, a.port), timeout=TIMEOUT)
        s.sendall(b"h" * a.size)
        finish(s)


def stream(a):
    s = socket.create_connection((a.host, a.port), timeout=TIMEOUT)
    buf = b"L" * 65536
    sent = 0
    end = time.monotonic() + a.seconds
    while sent < a.max and time.monotonic() < end and not os.path.exists(a.stop):
        sent += s.send(buf)
    finish(s)
    print(sent)


def close_sink(a):
    s = listener(a.port)

    def one(c):
        with c:
            c.settimeout(TIMEOUT)
            left = a.size
            while left > 0:
                d = c.recv(min(left, 1 << 16))
                if not d:
                    break
                left -= len(d)
        # leaving the with block closes first: the server takes TIME_WAIT

    while True:
        c, _ = s.accept()
        threading.Thread(target=one, args=(c,), daemon=True).start()


def reuse_client(a):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.settimeout(TIMEOUT)
    s.bind(("0.0.0.0", a.lport))
    s.connect((a.host, a.port))
    left = a.size
    if a.first:
        s.sendall(b"r" * a.first)
        left -= a.first
        print("first", flush=True)
        wait_file(a.go)
    s.sendall(b"r" * left)
    # The server closes once it has everything: wait for its FIN.
    while s.recv(4096):
        pass
    if a.hold:
        print("sent", flush=True)
        wait_file(a.hold)
    s.close()


def wait_file(path):
    end = time.monotonic() + TIMEOUT
    while not os.path.exists(path):
        if time.monotonic() > end:
            sys.exit("%s never appeared" % path)
        time.sleep(0.02)


def abort_server(a):
    s = listener(a.port)
    s.settimeout(TIMEOUT)
    drop = ["nft", "add", "rule", "ip", "srff_test", "out",
            "tcp", "sport", str(a.port), "tcp", "flags", "&", "rst", "==", "rst", "drop"]
    for i in range(a.count):
        c, _ = s.accept()
        c.settimeout(TIMEOUT)
        c.sendall(b"a" * a.size)
        if c.recv(1) != b"k":
            sys.exit("abort-server: client %d did not confirm" % i)
        subprocess.run(drop, check=True)
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        c.close()       # the RST leaves (and is dropped) before close returns
        subprocess.run(["nft", "flush", "chain", "ip", "srff_test", "out"], check=True)
        open(os.path.join(a.dir, "closed-%d" % i), "w").close()


def poke_client(a):
    resets = 0
    for i in range(a.count):
        s = connect_read(a, i, "poke-client")
        s.sendall(b"k")
        wait_file(os.path.join(a.dir, "closed-%d" % i))
        s.sendall(b"p" * 100)
        try:
            d = s.recv(1)
        except ConnectionResetError:
            resets += 1
        else:
            sys.exit("poke-client: connection %d: no reset (read %r)" % (i, d))
        s.close()
    print(resets)


def slab():
    """(active objects, objects per slab, slabs cached per CPU) of srff_flow.

    SLUB's active count is every object minus the free ones on the node
    partial lists: free objects in the per-CPU slabs (cpu_slabs: the CPU
    slab and CPU-partial slabs, each of objs_per_slab objects) count as
    active. So active - cpu_slabs * objs_per_slab <= in use <= active.
    """
    active = per = None
    with open("/proc/slabinfo") as f:
        for line in f:
            w = line.split()
            if w and w[0] == "srff_flow":
                active, per = int(w[1]), int(w[4])
    try:
        with open("/sys/kernel/slab/srff_flow/cpu_slabs") as f:
            cpu = int(f.read().split()[0])
    except OSError:
        cpu = None
    return active, per, cpu


def genl_in(paths):
    """A generic netlink socket (and srff's family id) in each namespace."""
    import ctypes
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import genl

    libc = ctypes.CDLL(None, use_errno=True)
    CLONE_NEWNET = 0x40000000
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    socks = []
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        if libc.setns(fd, CLONE_NEWNET):
            sys.exit("setns %s: %s" % (path, os.strerror(ctypes.get_errno())))
        g = genl.Genl()
        socks.append((path, g, g.family("srff")))
        os.close(fd)
    libc.setns(home, CLONE_NEWNET)
    os.close(home)
    return genl, socks


STATS_NAMES = {}


def get_stats(genl, g, fam):
    """GET_STATS as {SRFF_STATS_A_NAME: value}."""
    if not STATS_NAMES:
        STATS_NAMES.update({v: k for k, v in genl.uapi_enum("srff_stats_attr").items()})
        STATS_NAMES["top"] = genl.uapi_enum("srff_attr")["SRFF_A_STATS"]
    names, a_stats = STATS_NAMES, STATS_NAMES["top"]
    (code, ext), rep = g.request(fam, genl.CMDS["get-stats"], b"")
    if code:
        sys.exit("get-stats: %d %s" % (code, ext))
    out = {}
    for t, v in genl.parse_attrs(rep[0]):
        if t & 0x3FFF != a_stats:
            continue
        for t2, v2 in genl.parse_attrs(v):
            n = names.get(t2 & 0x3FFF, "")
            if len(v2) == 4:
                out[n] = struct.unpack("=I", v2)[0]
            elif len(v2) == 8:
                out[n] = struct.unpack("=Q", v2)[0]
    return out


def watch(a):
    """Each namespace's flows, and the host's (the initial namespace's
    replies carry them: this runs there)."""
    import json
    genl, socks = genl_in(a.netns)
    hg = genl.Genl()
    hfam = hg.family("srff")
    res = {"samples": 0, "ns": [{"path": p, "flows_max": 0, "cap": 0} for p, _, _ in socks],
           "flows_host_max": 0, "max_flows_host": 0, "slab_active_max": 0,
           "slab_cpu_cached_max": 0, "slab_excess_max": 0}
    end = time.monotonic() + a.seconds
    while not os.path.exists(a.stop) and time.monotonic() < end:
        for i, (p, g, fam) in enumerate(socks):
            st = get_stats(genl, g, fam)
            r = res["ns"][i]
            r["flows_max"] = max(r["flows_max"], st["SRFF_STATS_A_FLOWS"])
            r["cap"] = st["SRFF_STATS_A_MAX_FLOWS"]
            r["over"] = r.get("over", 0) + (st["SRFF_STATS_A_FLOWS"] > r["cap"])
            r["host_shown"] = r.get("host_shown", 0) + ("SRFF_STATS_A_FLOWS_HOST" in st)
        st = get_stats(genl, hg, hfam)
        host = st["SRFF_STATS_A_FLOWS_HOST"]
        res["max_flows_host"] = st["SRFF_STATS_A_MAX_FLOWS_HOST"]
        res["host_over"] = res.get("host_over", 0) + (host > res["max_flows_host"])
        res["flows_host_max"] = max(res["flows_host_max"], host)
        active, per, cpu = slab()
        if active is not None:
            cached = (cpu or 0) * per
            res["slab_active_max"] = max(res["slab_active_max"], active)
            res["slab_cpu_cached_max"] = max(res["slab_cpu_cached_max"], cached)
            # Objects surely in use beyond the flows linked or reserved
            # (host-wide) at about the same moment: RCU-pending frees.
            res["slab_excess_max"] = max(res["slab_excess_max"], active - cached - host)
        res["samples"] += 1
        if a.ready and res["samples"] == 1:
            open(a.ready, "w").close()
    print(json.dumps(res))


def flushwatch(a):
    """While another process flushes namespace X, ask X for its stats and
    X and OTHER for their configuration, over and over. Under a family
    without parallel_ops every request waits for the flush (genl_mutex):
    a stats reply showing X half flushed, or a configuration reply
    between two such, can only come from a request served during it."""
    import json
    genl, socks = genl_in([a.x, a.other])
    (_, gx, fx), (_, go, fo) = socks
    flows = lambda: get_stats(genl, gx, fx)["SRFF_STATS_A_FLOWS"]
    config = lambda g, f: g.request(f, genl.CMDS["get-config"], b"")[0][0]
    f0 = flows()
    res = {"f0": f0, "samples": 0, "stats_mid": 0, "config_other_mid": 0,
           "config_same_mid": 0, "mid_values": []}
    mid = lambda f: 0 < f < f0
    open(a.ready, "w").close()
    end = time.monotonic() + a.seconds
    while time.monotonic() < end:
        s1 = flows()
        if config(go, fo):
            sys.exit("get-config failed")
        s2 = flows()
        if config(gx, fx):
            sys.exit("get-config failed")
        s3 = flows()
        res["samples"] += 1
        for s in (s1, s2, s3):
            if mid(s):
                res["stats_mid"] += 1
                if len(res["mid_values"]) < 10:
                    res["mid_values"].append(s)
        if mid(s1) and mid(s2):
            res["config_other_mid"] += 1
        if mid(s2) and mid(s3):
            res["config_same_mid"] += 1
        if s3 == 0:
            break
    print(json.dumps(res))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("udp-flood"); q.add_argument("host"); q.add_argument("count", type=int)
    q.add_argument("--base-port", type=int, default=10000)
    q.add_argument("--seconds", type=float, default=60)
    q = sub.add_parser("udp-busy"); q.add_argument("host"); q.add_argument("count", type=int)
    q.add_argument("interval", type=float); q.add_argument("seconds", type=float)
    q.add_argument("--base-port", type=int, default=20000); q.add_argument("--ready")
    q.add_argument("--log")
    q = sub.add_parser("newcomers"); q.add_argument("host"); q.add_argument("udp_port", type=int)
    q.add_argument("tcp_port", type=int)
    q = sub.add_parser("syn-flood"); q.add_argument("src_if"); q.add_argument("dst")
    q.add_argument("dport", type=int); q.add_argument("seconds", type=float)
    q.add_argument("--net", default="198.18.0.0/15"); q.add_argument("--rate", type=float, default=0)
    q = sub.add_parser("serve"); q.add_argument("port", type=int); q.add_argument("size", type=int)
    q = sub.add_parser("fetch"); q.add_argument("host"); q.add_argument("port", type=int)
    q.add_argument("n", type=int); q.add_argument("size", type=int); q.add_argument("--hold")
    q = sub.add_parser("shorts"); q.add_argument("host"); q.add_argument("port", type=int)
    q.add_argument("n", type=int); q.add_argument("size", type=int)
    q = sub.add_parser("stream"); q.add_argument("host"); q.add_argument("port", type=int)
    q.add_argument("--stop", required=True); q.add_argument("--max", type=int, default=64 << 20)
    q.add_argument("--seconds", type=float, default=120)
    q = sub.add_parser("close-sink"); q.add_argument("port", type=int); q.add_argument("size", type=int)
    q = sub.add_parser("reuse-client"); q.add_argument("host"); q.add_argument("port", type=int)
    q.add_argument("lport", type=int); q.add_argument("size", type=int)
    q.add_argument("--first", type=int, default=0); q.add_argument("--go")
    q.add_argument("--hold")
    for cmd in ("abort-server", "poke-client"):
        q = sub.add_parser(cmd)
        if cmd == "poke-client":
            q.add_argument("host")
        q.add_argument("port", type=int); q.add_argument("size", type=int)
        q.add_argument("count", type=int); q.add_argument("dir")
    q = sub.add_parser("watch"); q.add_argument("netns", nargs="+")
    q.add_argument("--stop", required=True); q.add_argument("--seconds", type=float, default=120)
    q.add_argument("--ready")
    q = sub.add_parser("flushwatch"); q.add_argument("x"); q.add_argument("other")
    q.add_argument("--ready", required=True); q.add_argument("--seconds", type=float, default=60)
    a = p.parse_args()
    {"udp-flood": udp_flood, "udp-busy": udp_busy, "newcomers": newcomers, "syn-flood": syn_flood,
     "serve": serve, "fetch": fetch, "shorts": shorts, "stream": stream, "close-sink": close_sink,
     "reuse-client": reuse_client, "abort-server": abort_server, "poke-client": poke_client,
     "watch": watch, "flushwatch": flushwatch}[a.cmd](a)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
