#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""check_json.py MODE FILE: the JSON test_parse.c printed parses, with every
value intact; for `show`, the keys are exactly docs/interfaces.md's."""
import json
import sys

mode, path = sys.argv[1], sys.argv[2]
text = open(path).read()
assert text.endswith("\n") and text.count("\n") >= 1, repr(text[-20:])
d = json.loads(text)

SHOW_KEYS = ["thresholds", "priorities", "classid", "classid_major", "idle_timeout_ms",
             "gc_interval_ms", "max_flows", "udp_policy", "top_ports",
             "untracked_priority", "app_priority", "idle_reset_ms", "auto_thresholds",
             "enabled", "mark", "dscp_map", "dscp_override"]

STATS_KEYS = ["flows", "max_flows", "flows_host", "max_flows_host", "created", "gc_freed",
              "fin_retired", "flushed", "evicted", "table_full", "alloc_failed",
              "untracked_pkts", "untracked_bytes", "ignored_pkts", "top_port_pkts",
              "nodata_pkts", "encap_pkts", "loopback_pkts", "dscp_pkts", "dscp_failed", "gc_runs", "gc_early", "gc_last_us",
              "gc_last_chain", "auto_flows", "auto_changes", "buckets", "grown", "shrunk",
              "bands"]

if mode == "doc":
    assert d["s"] == 'quote" back\\ nl\n tab\t cr\r ctl\x01\x1f del\x7f', d["s"]
    assert d['k"ey'] == ""
    assert d["u"] == 2**64 - 1 and d["zero"] == 0
    assert d["t"] is True and d["b"] is False and d["n"] is None
    assert d["empty"] == [] and d["empty_obj"] == {}
    assert [x["i"] for x in d["a"]] == [0, 1, 2]
    assert [x["inner"] for x in d["a"]] == [[0], [0, 1], [0, 1, 2]]
    assert list(d) == ["s", 'k"ey', "u", "zero", "t", "b", "n", "empty", "empty_obj", "a"], list(d)
elif mode == "show-defaults":
    assert list(d) == SHOW_KEYS, list(d)
    assert d == {"thresholds": [1500, 5000], "priorities": [6, 0, 2], "classid": None,
                 "classid_major": 0,
                 "idle_timeout_ms": 2500, "gc_interval_ms": 2500, "max_flows": 131072,
                 "udp_policy": "track", "top_ports": [], "untracked_priority": 0,
                 "app_priority": "override", "idle_reset_ms": 0,
                 "auto_thresholds": False, "enabled": True,
                 "mark": "none", "dscp_map": [None, None, 1], "dscp_override": False}, d
elif mode == "show-auto":
    assert list(d) == SHOW_KEYS, list(d)
    assert d["thresholds"] == [1500, 5000] and d["auto_thresholds"] is True, d
elif mode == "show-busy":
    assert list(d) == SHOW_KEYS, list(d)
    assert d["thresholds"] == [1500, 20000, 1000000, 4194304, 1501]
    # class ids as tc writes them, plain priorities as numbers
    assert d["priorities"] == [6, 0, 1, "10:2", 3, 4], d["priorities"]
    assert d["classid"] == "10:" and d["classid_major"] == 16 and d["udp_policy"] == "top"
    assert d["top_ports"] == [21, 22, 23, 65535] and d["app_priority"] == "keep"
    assert d["untracked_priority"] == "10:f" and d["idle_reset_ms"] == 300
    assert d["auto_thresholds"] is False and d["enabled"] is False
    # DSCPs as numbers, keep as null
    assert d["mark"] == "dscp" and d["dscp_override"] is True, d
    assert d["dscp_map"] == [46, 26, None, 8, 45, 1], d["dscp_map"]
elif mode == "show-old-module":
    # a module without DSCP marking: the three keys are left out
    assert list(d) == SHOW_KEYS[:-3], list(d)
elif mode in ("stats", "stats-classid"):
    assert list(d) == STATS_KEYS, list(d)
    assert d["loopback_pkts"] == 9
    assert d["dscp_pkts"] == 5000 and d["dscp_failed"] == 2, d
    assert d["flows"] == 12 and d["untracked_bytes"] == 2**64 - 1 and d["gc_last_us"] == 1250
    for b in d["bands"]:
        assert list(b) == ["band", "priority", "from", "to", "pkts", "bytes"], list(b)
    # each band's priority (a class id as tc writes it) and byte range
    prios = ["10:1", "10:2", "10:3"] if mode == "stats-classid" else [6, 0, 2]
    assert d["bands"] == [
        {"band": 0, "priority": prios[0], "from": 0, "to": 16384, "pkts": 100, "bytes": 100000},
        {"band": 1, "priority": prios[1], "from": 16384, "to": 131072, "pkts": 200, "bytes": 200000},
        {"band": 2, "priority": prios[2], "from": 131072, "to": None, "pkts": 300, "bytes": 300000},
    ], d["bands"]
elif mode == "stats-no-dscp":
    # counted or not, the DSCP counters are always there
    assert list(d) == STATS_KEYS, list(d)
    assert d["dscp_pkts"] == 0 and d["dscp_failed"] == 0, d
elif mode == "empty-array":
    assert d == []
else:
    sys.exit("unknown mode " + mode)
