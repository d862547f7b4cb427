/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * srff - shortest-remaining-flow-first marking for Linux egress.
 *
 * The one header shared by the kernel module (srff_nf/), the command-line
 * tool (srffctl/) and the tests. docs/srff.yaml describes the same family in
 * YNL form; keep the two in step.
 *
 * Generic netlink family "srff", version 1. Every command acts on the
 * network namespace of the requesting socket.
 *
 *   SRFF_CMD_GET_CONFIG   doit  -> reply carries every config attribute
 *   SRFF_CMD_SET_CONFIG   doit  (admin) any subset of config attributes;
 *                               all validated first, then swapped in at once;
 *                               outside the initial namespace, max_flows and
 *                               gc_interval_ms are bounded by the host's
 *                               module parameters
 *   SRFF_CMD_GET_STATS    doit  -> reply carries SRFF_A_STATS
 *   SRFF_CMD_GET_FLOWS    dump  (admin) one message per flow, SRFF_A_FLOW;
 *                               the request may carry SRFF_A_FILTER_*. Every
 *                               flow that exists for the whole dump is
 *                               listed once, whatever else changes; only a
 *                               hash bucket too long for one message is
 *                               split, and a dump that resumed one after it
 *                               changed is flagged NLM_F_DUMP_INTR
 *   SRFF_CMD_FLUSH_FLOWS  doit  (admin) forget every tracked flow
 *   SRFF_CMD_GET_SIZES    doit  -> reply carries SRFF_A_SIZES: the sizes of
 *                               the flows that ended (srff_nf/sizes.h)
 */
#ifndef _UAPI_LINUX_SRFF_H
#define _UAPI_LINUX_SRFF_H

#include <linux/types.h>

#define SRFF_GENL_NAME		"srff"
#define SRFF_GENL_VERSION	1

/* Up to 15 ascending byte thresholds split flows into up to 16 bands. */
#define SRFF_MAX_THRESHOLDS	15
#define SRFF_MAX_BANDS		(SRFF_MAX_THRESHOLDS + 1)
/* Ports that always get the top band (FTP control, SSH, telnet, ...). */
#define SRFF_MAX_TOP_PORTS	32

/* Bounds enforced on configuration, in milliseconds. */
#define SRFF_IDLE_TIMEOUT_MIN_MS	100
#define SRFF_IDLE_TIMEOUT_MAX_MS	3600000		/* 1 hour */
#define SRFF_GC_INTERVAL_MIN_MS		100
#define SRFF_GC_INTERVAL_MAX_MS		60000		/* 1 minute */
#define SRFF_IDLE_RESET_MAX_MS		3600000		/* 0 = off */
#define SRFF_MAX_FLOWS_MIN		16
#define SRFF_MAX_FLOWS_MAX		(1U << 24)

enum srff_cmd {
	SRFF_CMD_UNSPEC,
	SRFF_CMD_GET_CONFIG,
	SRFF_CMD_SET_CONFIG,
	SRFF_CMD_GET_STATS,
	SRFF_CMD_GET_FLOWS,
	SRFF_CMD_FLUSH_FLOWS,
	SRFF_CMD_GET_SIZES,
	__SRFF_CMD_MAX
};
#define SRFF_CMD_MAX (__SRFF_CMD_MAX - 1)

/* How UDP flows are treated. */
enum srff_udp_policy {
	SRFF_UDP_TRACK,		/* counted like TCP */
	SRFF_UDP_TOP,		/* always the top band */
	SRFF_UDP_IGNORE,	/* skb->priority left as the stack set it */
	__SRFF_UDP_MAX
};
#define SRFF_UDP_MAX (__SRFF_UDP_MAX - 1)

/* Whether a priority the application chose (SO_PRIORITY, IP_TOS) wins. */
enum srff_app_prio {
	SRFF_APP_PRIO_OVERRIDE,	/* srff's band always wins */
	SRFF_APP_PRIO_KEEP,	/* a non-zero skb->priority is left alone */
	__SRFF_APP_PRIO_MAX
};
#define SRFF_APP_PRIO_MAX (__SRFF_APP_PRIO_MAX - 1)

/* What srff writes besides skb->priority. */
enum srff_mark {
	SRFF_MARK_NONE,		/* skb->priority alone (the default) */
	SRFF_MARK_DSCP,		/* and a DSCP per band (SRFF_A_DSCP_MAP): for
				 * a bottleneck past this host whose queues
				 * order by DSCP */
	__SRFF_MARK_MAX
};
#define SRFF_MARK_MAX (__SRFF_MARK_MAX - 1)

/* In SRFF_A_DSCP_MAP: leave the packet's DSCP as it is. */
#define SRFF_DSCP_KEEP		0xff
/* Lower Effort (RFC 8622): the default for the lowest band. */
#define SRFF_DSCP_LE		1

/* Top-level attributes. */
enum srff_attr {
	SRFF_A_UNSPEC,
	SRFF_A_PAD,
	SRFF_A_THRESHOLDS,	/* nest of SRFF_A_ITEM u64, bytes, ascending */
	SRFF_A_PRIORITIES,	/* nest of SRFF_A_ITEM u32, one per band */
	SRFF_A_CLASSID_MAJOR,	/* u16: 0 = write SRFF_A_PRIORITIES; else
				 * write major:(band + 1) for a prio qdisc */
	SRFF_A_IDLE_TIMEOUT_MS,	/* u32 */
	SRFF_A_GC_INTERVAL_MS,	/* u32 */
	SRFF_A_MAX_FLOWS,	/* u32 */
	SRFF_A_UDP_POLICY,	/* u8, enum srff_udp_policy */
	SRFF_A_TOP_PORTS,	/* nest of SRFF_A_ITEM u16 (host order) */
	SRFF_A_UNTRACKED_PRIORITY, /* u32: for packets no flow could hold */
	SRFF_A_APP_PRIORITY,	/* u8, enum srff_app_prio */
	SRFF_A_IDLE_RESET_MS,	/* u32: 0 = off */
	SRFF_A_STATS,		/* nest, enum srff_stats_attr */
	SRFF_A_FLOW,		/* nest, enum srff_flow_attr */
	SRFF_A_SIZES,		/* nest, enum srff_sizes_attr */
	SRFF_A_AUTO_THRESHOLDS,	/* u8: 1 = thresholds learnt from the flow
				 * sizes (their number stays as set), 0 = as
				 * set. SRFF_A_THRESHOLDS alone sets 0. */
	SRFF_A_FILTER_BAND,	/* u8, GET_FLOWS request: only this band */
	SRFF_A_FILTER_MIN_BYTES, /* u64, GET_FLOWS request: only flows that
				  * sent at least this many bytes */
	SRFF_A_ENABLED,		/* u8: 1 = srff marks this namespace's
				 * packets (its flow table allocated), 0 =
				 * off, nothing allocated. Module parameter
				 * netns says where it starts on. */
	SRFF_A_MARK,		/* u8, enum srff_mark */
	SRFF_A_DSCP_MAP,	/* nest of SRFF_A_ITEM u8, one per band: a
				 * DSCP (0..63) or SRFF_DSCP_KEEP. The
				 * default (every band keeps, the lowest
				 * gets LE) follows the number of bands; an
				 * empty nest, or a map equal to the default
				 * for its length, sets the default */
	SRFF_A_DSCP_OVERRIDE,	/* u8: 0 (default) = rewrite only packets
				 * whose DSCP is 0, so an application's own
				 * (EF, AF) is never changed; 1 = any */
	__SRFF_A_MAX
};
#define SRFF_A_MAX (__SRFF_A_MAX - 1)

/* Entries of list nests (thresholds, priorities, ports). */
enum srff_item_attr {
	SRFF_A_ITEM_UNSPEC,
	SRFF_A_ITEM,
	SRFF_A_ITEM_PAD,	/* alignment padding before a u64 item */
	__SRFF_A_ITEM_MAX
};
#define SRFF_A_ITEM_MAX (__SRFF_A_ITEM_MAX - 1)

enum srff_stats_attr {
	SRFF_STATS_A_UNSPEC,
	SRFF_STATS_A_PAD,
	SRFF_STATS_A_FLOWS,		/* u32: flows tracked now */
	SRFF_STATS_A_MAX_FLOWS,		/* u32: the cap in force */
	SRFF_STATS_A_CREATED,		/* u64 */
	SRFF_STATS_A_GC_FREED,		/* u64: freed after idle_timeout */
	SRFF_STATS_A_FIN_RETIRED,	/* u64: freed after FIN/RST */
	SRFF_STATS_A_FLUSHED,		/* u64: freed by FLUSH_FLOWS */
	SRFF_STATS_A_TABLE_FULL,	/* u64: a new flow met the cap */
	SRFF_STATS_A_ALLOC_FAILED,	/* u64: GFP_ATOMIC allocation failed */
	SRFF_STATS_A_UNTRACKED_PKTS,	/* u64 */
	SRFF_STATS_A_UNTRACKED_BYTES,	/* u64 */
	SRFF_STATS_A_IGNORED_PKTS,	/* u64: left alone by policy */
	SRFF_STATS_A_TOP_PORT_PKTS,	/* u64: sent top band by port */
	SRFF_STATS_A_GC_RUNS,		/* u64 */
	SRFF_STATS_A_BANDS,		/* nest of SRFF_STATS_A_BAND */
	SRFF_STATS_A_BAND,		/* nest, enum srff_band_attr */
	SRFF_STATS_A_GC_LAST_US,	/* u64: how long the latest GC sweep took */
	SRFF_STATS_A_GC_LAST_CHAIN,	/* u32: most flows it examined under one
					 * bucket lock (between reschedules) */
	SRFF_STATS_A_EVICTED,		/* u64: idle or closed flows unlinked to
					 * make room in a full table */
	SRFF_STATS_A_NODATA_PKTS,	/* u64: TCP segments without data of
					 * untracked flows: top band, no flow */
	SRFF_STATS_A_ENCAP_PKTS,	/* u64: passes left to another pass of
					 * the same packet (tunnel, VRF) */
	SRFF_STATS_A_GC_EARLY,		/* u64: sweeps started early (filling) */
	SRFF_STATS_A_FLOWS_HOST,	/* u32: flows of every namespace (the
					 * initial namespace's replies only) */
	SRFF_STATS_A_MAX_FLOWS_HOST,	/* u32: the host-wide cap (likewise) */
	SRFF_STATS_A_AUTO_FLOWS,	/* u64: flows in the recent (decayed)
					 * histogram automatic thresholds use */
	SRFF_STATS_A_AUTO_CHANGES,	/* u64: times they installed new ones */
	SRFF_STATS_A_BUCKETS,		/* u32: the flow table's hash buckets now */
	SRFF_STATS_A_GROWN,		/* u64: times the table grew */
	SRFF_STATS_A_SHRUNK,		/* u64: times it shrank */
	SRFF_STATS_A_LOOPBACK_PKTS,	/* u64: sent through a loopback device:
					 * left alone, before any lookup */
	SRFF_STATS_A_DSCP_PKTS,		/* u64: packets whose DSCP srff wrote */
	SRFF_STATS_A_DSCP_FAILED,	/* u64: ... that it could not (no memory
					 * to make the header writable) */
	__SRFF_STATS_A_MAX
};
#define SRFF_STATS_A_MAX (__SRFF_STATS_A_MAX - 1)

enum srff_band_attr {
	SRFF_BAND_A_UNSPEC,
	SRFF_BAND_A_PAD,
	SRFF_BAND_A_INDEX,	/* u8 */
	SRFF_BAND_A_PKTS,	/* u64 */
	SRFF_BAND_A_BYTES,	/* u64 */
	__SRFF_BAND_A_MAX
};
#define SRFF_BAND_A_MAX (__SRFF_BAND_A_MAX - 1)

enum srff_flow_attr {
	SRFF_FLOW_A_UNSPEC,
	SRFF_FLOW_A_PAD,
	SRFF_FLOW_A_FAMILY,	/* u8: AF_INET or AF_INET6 */
	SRFF_FLOW_A_PROTO,	/* u8: IPPROTO_* */
	SRFF_FLOW_A_SADDR,	/* binary: 4 or 16 bytes, network order */
	SRFF_FLOW_A_DADDR,	/* binary: 4 or 16 bytes, network order */
	SRFF_FLOW_A_SPORT,	/* u16, host order; 0 for port-less flows */
	SRFF_FLOW_A_DPORT,	/* u16, host order */
	SRFF_FLOW_A_BYTES,	/* u64: bytes sent so far (since idle reset) */
	SRFF_FLOW_A_BAND,	/* u8: band of the flow's next packet */
	SRFF_FLOW_A_AGE_MS,	/* u64 */
	SRFF_FLOW_A_IDLE_MS,	/* u64 */
	SRFF_FLOW_A_FLAGS,	/* u32, SRFF_FLOW_F_* */
	SRFF_FLOW_A_INNER,	/* u16: inner-flow tag of a UDP tunnel's outer
				 * packets (absent: 0, an ordinary flow) */
	__SRFF_FLOW_A_MAX
};
#define SRFF_FLOW_A_MAX (__SRFF_FLOW_A_MAX - 1)

/*
 * The flow-size histogram: every flow that ended since the namespace's
 * srff started, counted once with what it sent (headers included).
 */
enum srff_sizes_attr {
	SRFF_SIZES_A_UNSPEC,
	SRFF_SIZES_A_PAD,
	SRFF_SIZES_A_FIN,	/* u64: flows that ended with FIN or RST */
	SRFF_SIZES_A_IDLE,	/* u64: flows that ended idle */
	SRFF_SIZES_A_MSG,	/* u64: responses on kept-alive connections,
				 * ended by an idle gap of idle_reset_ms */
	SRFF_SIZES_A_BUCKET,	/* nest, enum srff_bucket_attr: one per
				 * non-empty bucket, in ascending order */
	__SRFF_SIZES_A_MAX
};
#define SRFF_SIZES_A_MAX (__SRFF_SIZES_A_MAX - 1)

enum srff_bucket_attr {
	SRFF_BUCKET_A_UNSPEC,
	SRFF_BUCKET_A_PAD,
	SRFF_BUCKET_A_LOW,	/* u64: the smallest size it counts, bytes */
	SRFF_BUCKET_A_HIGH,	/* u64: the smallest it does not (absent for
				 * the last bucket, which has no bound) */
	SRFF_BUCKET_A_FLOWS,	/* u64 */
	SRFF_BUCKET_A_BYTES,	/* u64: their sizes, summed */
	__SRFF_BUCKET_A_MAX
};
#define SRFF_BUCKET_A_MAX (__SRFF_BUCKET_A_MAX - 1)

#define SRFF_FLOW_F_CLOSED	(1U << 0)	/* FIN or RST was sent */

#endif /* _UAPI_LINUX_SRFF_H */
