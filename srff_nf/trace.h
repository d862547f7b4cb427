/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints: a flow created and a flow retired (with what it sent), so
 * that an operator can watch srff work without a dump:
 *
 *   echo 1 > /sys/kernel/tracing/events/srff/enable
 *   cat /sys/kernel/tracing/trace_pipe
 *
 * Addresses are printed as IPv6 (IPv4 as ::ffff:a.b.c.d), ports in host
 * order, netns as the namespace's inode number (as `ls -l /proc/PID/ns/net`
 * and `lsns` show it). Free when disabled (static keys). When enabled they
 * run in the packet path (srff_flow_create after the bucket lock is
 * dropped, srff_flow_retire under it or from GC): a ring-buffer consumer
 * costs a few words' copy, but a BPF program attached to them runs there
 * too, for as long as it takes.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM srff

#if !defined(_SRFF_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _SRFF_TRACE_H

#include <linux/tracepoint.h>
#include <linux/jiffies.h>
#include <net/ipv6.h>
#include "table.h"

/* Why a flow left the table (srff_flow_retire's reason). */
#define SRFF_RETIRE_REASONS				\
	EM(SRFF_RETIRE_FIN, "fin")			\
	EM(SRFF_RETIRE_IDLE, "idle")			\
	EM(SRFF_RETIRE_EVICTED, "evicted")		\
	EM(SRFF_RETIRE_FLUSHED, "flushed")		\
	EMe(SRFF_RETIRE_TEARDOWN, "teardown")

#undef EM
#undef EMe
#define EM(a, b)	TRACE_DEFINE_ENUM(a);
#define EMe(a, b)	TRACE_DEFINE_ENUM(a);
SRFF_RETIRE_REASONS
#undef EM
#undef EMe
#define EM(a, b)	{ a, b },
#define EMe(a, b)	{ a, b }

/* The key as both tracepoints record it. */
#define SRFF_TP_KEY_FIELDS						\
	__field(u32, netns)						\
	__array(u8, saddr, 16)						\
	__array(u8, daddr, 16)						\
	__field(u16, sport)						\
	__field(u16, dport)						\
	__field(u16, inner)						\
	__field(u8, proto)

#define SRFF_TP_KEY_ASSIGN(t, k) do {					\
	struct in6_addr *s6 = (struct in6_addr *)__entry->saddr;	\
	struct in6_addr *d6 = (struct in6_addr *)__entry->daddr;	\
									\
	__entry->netns = (t)->netns_ino;				\
	if ((k)->family == AF_INET) {					\
		ipv6_addr_set_v4mapped((k)->saddr.ip, s6);		\
		ipv6_addr_set_v4mapped((k)->daddr.ip, d6);		\
	} else {							\
		*s6 = (k)->saddr.ip6;					\
		*d6 = (k)->daddr.ip6;					\
	}								\
	__entry->sport = ntohs((k)->sport);				\
	__entry->dport = ntohs((k)->dport);				\
	__entry->inner = (k)->inner;					\
	__entry->proto = (k)->proto;					\
} while (0)

#define SRFF_TP_PROTO(p)						\
	__print_symbolic(p, { IPPROTO_TCP, "tcp" }, { IPPROTO_UDP, "udp" }, \
			 { IPPROTO_UDPLITE, "udplite" }, { IPPROTO_ICMP, "icmp" }, \
			 { IPPROTO_ICMPV6, "ipv6-icmp" })

TRACE_EVENT(srff_flow_create,
	TP_PROTO(const struct srff_table *t, const struct srff_key *key),
	TP_ARGS(t, key),
	TP_STRUCT__entry(
		SRFF_TP_KEY_FIELDS
	),
	TP_fast_assign(
		SRFF_TP_KEY_ASSIGN(t, key);
	),
	TP_printk("netns=%u %s [%pI6c]:%u -> [%pI6c]:%u inner=%u",
		  __entry->netns, SRFF_TP_PROTO(__entry->proto),
		  __entry->saddr, __entry->sport, __entry->daddr,
		  __entry->dport, __entry->inner)
);

TRACE_EVENT(srff_flow_retire,
	TP_PROTO(const struct srff_table *t, const struct srff_flow *f,
		 u64 bytes, unsigned long now, int reason),
	TP_ARGS(t, f, bytes, now, reason),
	TP_STRUCT__entry(
		SRFF_TP_KEY_FIELDS
		__field(u64, bytes)
		__field(u64, age_ms)
		__field(int, reason)
	),
	TP_fast_assign(
		SRFF_TP_KEY_ASSIGN(t, &f->key);
		__entry->bytes = bytes;	/* as the size histogram has it */
		__entry->age_ms = srff_ms_since(READ_ONCE(f->created), now);
		__entry->reason = reason;
	),
	TP_printk("netns=%u %s [%pI6c]:%u -> [%pI6c]:%u inner=%u bytes=%llu age_ms=%llu reason=%s",
		  __entry->netns, SRFF_TP_PROTO(__entry->proto),
		  __entry->saddr, __entry->sport, __entry->daddr,
		  __entry->dport, __entry->inner, __entry->bytes,
		  __entry->age_ms,
		  __print_symbolic(__entry->reason, SRFF_RETIRE_REASONS))
);

#endif /* _SRFF_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
