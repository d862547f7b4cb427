#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Deterministic traffic for srff's kernel tests.

  traffic.py tcp-sink PORT                  accept and discard, forever
  traffic.py tcp-send HOST PORT BYTES [--hold S] [--sndbuf BYTES]
                                            send BYTES, optionally keep the
                                            connection open S seconds after;
                                            returns once the sink has it all
  traffic.py tcp-responses HOST PORT N SIZE GAP [--dev DEV]
                                            one connection, N bursts of SIZE
                                            bytes GAP seconds apart; bound
                                            to DEV (a VRF) if given
  traffic.py tcp-churn HOST PORT SECONDS [--on S] [--off S]
                                            short connections (100 bytes
                                            each) for ON seconds, none for
                                            OFF seconds, over and over
  traffic.py tcp-mix HOST PORT COUNT SIZES [--parallel P]
                                            COUNT connections, each sending
                                            the next size of the comma list
                                            SIZES (cycling), P at a time
  traffic.py udp-send HOST PORT COUNT SIZE [--sport P] [--interval S]
                                            [--priority P] (SO_PRIORITY)
                                            [--tos T] (IP_TOS, IPV6_TCLASS)
  traffic.py udp-flows HOST COUNT [--base-port B]
                                            one datagram to each of COUNT ports
  traffic.py sentinel DEV TAG               one raw frame out of DEV, for the
                                            capture on DEV's veth peer (below)
  traffic.py sentinel DEV -                 one per line of stdin (its TAG),
                                            each acknowledged on stdout: one
                                            process for a run's captures
Every sender exits non-zero if a send fails.
"""
import argparse
import socket
import sys
import time


def family(host):
    return socket.AF_INET6 if ":" in host else socket.AF_INET


IPPROTO_MPTCP = 262    # <linux/in.h>; Python's socket module lacks it before 3.10


def tcp_sink(a):
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM, IPPROTO_MPTCP if a.mptcp else 0)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.bind(("::", a.port))
    s.listen(128)
    import threading

    def drain(c):
        with c:
            while c.recv(1 << 16):
                pass

    while True:
        c, _ = s.accept()
        threading.Thread(target=drain, args=(c,), daemon=True).start()


def finish(s):
    """Close s once the sink has read every byte (it closes on our FIN).

    Then every data packet has left this host's qdisc and a test may read the
    tc counters at once; close() alone returns with data still queued.
    """
    s.shutdown(socket.SHUT_WR)
    while s.recv(4096):
        pass
    s.close()


SO_SNDBUFFORCE = 32     # <asm-generic/socket.h>; Python's socket module lacks it


def tcp_send(a):
    if a.sndbuf:
        # The whole transfer written into the socket at once: the sender is
        # never application-limited, so every pause is TCP's own (waiting for
        # ACKs), however slowly this process is scheduled. FORCE (root) is
        # not capped by net.core.wmem_max.
        s = socket.socket(socket.AF_INET6 if ":" in a.host else socket.AF_INET,
                          socket.SOCK_STREAM, IPPROTO_MPTCP if a.mptcp else 0)
        s.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, a.sndbuf)
        s.settimeout(60)
        s.connect((a.host, a.port))
    else:
        s = socket.create_connection((a.host, a.port), timeout=60)
    buf = b"x" * 65536
    left = a.bytes
    while left:
        n = s.send(buf[: min(left, len(buf))])
        left -= n
    if a.hold:
        time.sleep(a.hold)
    finish(s)


def tcp_responses(a):
    if a.dev:
        s = socket.socket(family(a.host), socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, a.dev.encode())
        s.settimeout(60)
        s.connect((a.host, a.port))
    else:
        s = socket.create_connection((a.host, a.port), timeout=60)
    for i in range(a.n):
        if i:
            time.sleep(a.gap)
        s.sendall(b"r" * a.size)
    finish(s)


def tcp_churn(a):
    end = time.monotonic() + a.seconds
    n = 0
    while time.monotonic() < end:
        burst = time.monotonic() + a.on
        while time.monotonic() < min(burst, end):
            s = socket.create_connection((a.host, a.port), timeout=60)
            s.sendall(b"c" * 100)
            finish(s)
            n += 1
        time.sleep(max(0, min(a.off, end - time.monotonic())))
    print("tcp-churn: %d connections" % n, file=sys.stderr)


def tcp_mix(a):
    import threading
    sizes = [int(x) for x in a.sizes.split(",")]
    buf = b"m" * 65536
    lock = threading.Lock()
    todo = iter(range(a.count))
    errors = []

    def worker():
        while True:
            with lock:
                i = next(todo, None)
            if i is None:
                return
            try:
                s = socket.create_connection((a.host, a.port), timeout=60)
                left = sizes[i % len(sizes)]
                while left:
                    left -= s.send(buf[: min(left, len(buf))])
                finish(s)
            except OSError as e:
                errors.append(e)
                return

    threads = [threading.Thread(target=worker) for _ in range(a.parallel)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        sys.exit("tcp-mix: %s" % errors[0])


def udp_send(a):
    s = socket.socket(family(a.host), socket.SOCK_DGRAM)
    if a.priority:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_PRIORITY, a.priority)
    if a.tos:
        if family(a.host) == socket.AF_INET6:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_TCLASS, a.tos)
        else:
            s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, a.tos)
    if a.sport:
        s.bind(("::" if family(a.host) == socket.AF_INET6 else "0.0.0.0", a.sport))
    payload = b"u" * a.size
    for i in range(a.count):
        s.sendto(payload, (a.host, a.port))
        if a.interval:
            time.sleep(a.interval)


def udp_flows(a):
    s = socket.socket(family(a.host), socket.SOCK_DGRAM)
    for i in range(a.count):
        s.sendto(b"f", (a.host, a.base_port + i))


# A capture is complete up to a point once a frame sent after that point is in
# it. The sentinel is an Ethernet frame of the local experimental EtherType
# 0x88B5 from a made-up MAC, sent by the capturing device's veth *peer* with
# PACKET_QDISC_BYPASS: it passes neither netfilter nor a qdisc, so neither
# srff's nor tc's counters see it, it reaches the capture as an incoming
# frame after everything the device sent or received before, and the tools
# that read captures skip it as a foreign non-IP frame. (A frame sent with
# the bypass is invisible to taps on its own device: hence the peer.)
SENTINEL_TYPE = 0x88B5
SENTINEL_SRC = bytes.fromhex("025e00000001")
PACKET_QDISC_BYPASS = 20
SOL_PACKET = 263


def sentinel(a):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.setsockopt(SOL_PACKET, PACKET_QDISC_BYPASS, 1)
    s.bind((a.dev, 0))

    def send(tag):
        payload = b"srff-sentinel " + tag.encode()
        frame = b"\xff" * 6 + SENTINEL_SRC + SENTINEL_TYPE.to_bytes(2, "big") + payload
        s.send(frame + b"\0" * max(0, 60 - len(frame)))

    if a.tag != "-":
        send(a.tag)
        return
    # A shell script's captures, one after another: python starts once
    # (a second or two under emulation), not for every capture.
    for line in sys.stdin:
        tag = line.strip()
        if tag:
            send(tag)
            print("sent", tag, flush=True)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("tcp-sink"); q.add_argument("port", type=int)
    q.add_argument("--mptcp", action="store_true", help="an MPTCP socket (IPPROTO_MPTCP)")
    q = sub.add_parser("tcp-send"); q.add_argument("host"); q.add_argument("port", type=int)
    q.add_argument("bytes", type=int); q.add_argument("--hold", type=float, default=0)
    q.add_argument("--sndbuf", type=int, default=0, help="SO_SNDBUFFORCE bytes (root)")
    q.add_argument("--mptcp", action="store_true", help="an MPTCP socket (with --sndbuf)")
    q = sub.add_parser("tcp-responses"); q.add_argument("host"); q.add_argument("port", type=int)
    q.add_argument("n", type=int); q.add_argument("size", type=int); q.add_argument("gap", type=float)
    q.add_argument("--dev", help="SO_BINDTODEVICE (a VRF device)")
    q = sub.add_parser("tcp-churn"); q.add_argument("host"); q.add_argument("port", type=int)
    q.add_argument("seconds", type=float); q.add_argument("--on", type=float, default=0.5)
    q.add_argument("--off", type=float, default=1.5)
    q = sub.add_parser("tcp-mix"); q.add_argument("host"); q.add_argument("port", type=int)
    q.add_argument("count", type=int); q.add_argument("sizes")
    q.add_argument("--parallel", type=int, default=4)
    q = sub.add_parser("udp-send"); q.add_argument("host"); q.add_argument("port", type=int)
    q.add_argument("count", type=int); q.add_argument("size", type=int)
    q.add_argument("--sport", type=int, default=0); q.add_argument("--interval", type=float, default=0)
    q.add_argument("--priority", type=int, default=0)
    q.add_argument("--tos", type=lambda v: int(v, 0), default=0,
                   help="IP_TOS / IPV6_TCLASS byte (DSCP << 2 | ECN)")
    q = sub.add_parser("udp-flows"); q.add_argument("host"); q.add_argument("count", type=int)
    q.add_argument("--base-port", type=int, default=20000)
    q = sub.add_parser("sentinel"); q.add_argument("dev"); q.add_argument("tag")
    a = p.parse_args()
    {"tcp-sink": tcp_sink, "tcp-send": tcp_send, "tcp-responses": tcp_responses,
     "tcp-churn": tcp_churn, "tcp-mix": tcp_mix, "udp-send": udp_send, "udp-flows": udp_flows,
     "sentinel": sentinel}[a.cmd](a)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
