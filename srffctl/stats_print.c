// SPDX-License-Identifier: GPL-2.0
/*
 * stats, printed: the namespace's counters and, per band, its priority (or
 * class id) and the byte range it stands for, from the configuration in
 * force. No netlink here (stats.c reads both): unit-tested natively.
 */
#include <inttypes.h>
#include <string.h>

#include "srffctl.h"

uint32_t config_band_priority(const struct config *c, unsigned int band)
{
	if (c->classid_major)
		return (uint32_t)c->classid_major << 16 | (band + 1);
	return band < c->npriorities ? c->priorities[band] : 0;
}

/*
 * A packet goes to band b when the bytes its flow sent before it reach b
 * thresholds: band b is [thresholds[b-1], thresholds[b]), band 0 starts at
 * 0 and the last has no end. Returns 0 with *bounded false for the last
 * band, or -1 for a band the configuration does not have.
 */
int config_band_range(const struct config *c, unsigned int band,
		      uint64_t *from, uint64_t *to, bool *bounded)
{
	if (band > c->nthresholds)
		return -1;
	*from = band ? c->thresholds[band - 1] : 0;
	*bounded = band < c->nthresholds;
	*to = *bounded ? c->thresholds[band] : 0;
	return 0;
}

/* Whether a and b split flows into the same bands with the same marks. */
bool config_same_bands(const struct config *a, const struct config *b)
{
	return a->nthresholds == b->nthresholds &&
	       !memcmp(a->thresholds, b->thresholds, a->nthresholds * sizeof(a->thresholds[0])) &&
	       a->classid_major == b->classid_major &&
	       a->npriorities == b->npriorities &&
	       !memcmp(a->priorities, b->priorities, a->npriorities * sizeof(a->priorities[0]));
}

void stats_print(const struct stats *s, const struct config *c)
{
	const uint64_t *v = s->v;

	/* The keys and their order are docs/interfaces.md's. */
	open_json_object(NULL);
	print_uint(PRINT_ANY, "flows", "flows %" PRIu64, v[SRFF_STATS_A_FLOWS]);
	print_uint(PRINT_ANY, "max_flows", " of max %" PRIu64, v[SRFF_STATS_A_MAX_FLOWS]);
	/* The host's figures: in the initial namespace only. */
	if (s->have_host) {
		print_uint(PRINT_ANY, "flows_host", "  host %" PRIu64, v[SRFF_STATS_A_FLOWS_HOST]);
		print_uint(PRINT_ANY, "max_flows_host", " of max %" PRIu64, v[SRFF_STATS_A_MAX_FLOWS_HOST]);
	}
	print_text("\n");
	print_uint(PRINT_ANY, "created", "  created %" PRIu64, v[SRFF_STATS_A_CREATED]);
	print_uint(PRINT_ANY, "gc_freed", "  freed idle %" PRIu64, v[SRFF_STATS_A_GC_FREED]);
	print_uint(PRINT_ANY, "fin_retired", "  retired after FIN/RST %" PRIu64, v[SRFF_STATS_A_FIN_RETIRED]);
	print_uint(PRINT_ANY, "flushed", "  flushed %" PRIu64 "\n", v[SRFF_STATS_A_FLUSHED]);
	print_uint(PRINT_ANY, "evicted", "  evicted to make room %" PRIu64, v[SRFF_STATS_A_EVICTED]);
	print_uint(PRINT_ANY, "table_full", "  refused, table full %" PRIu64, v[SRFF_STATS_A_TABLE_FULL]);
	print_uint(PRINT_ANY, "alloc_failed", "  allocation failed %" PRIu64 "\n", v[SRFF_STATS_A_ALLOC_FAILED]);
	print_uint(PRINT_ANY, "untracked_pkts", "packets untracked %" PRIu64, v[SRFF_STATS_A_UNTRACKED_PKTS]);
	print_uint(PRINT_ANY, "untracked_bytes", " (%" PRIu64 " bytes)", v[SRFF_STATS_A_UNTRACKED_BYTES]);
	print_uint(PRINT_ANY, "ignored_pkts", "  ignored by policy %" PRIu64, v[SRFF_STATS_A_IGNORED_PKTS]);
	print_uint(PRINT_ANY, "top_port_pkts", "  top band by port %" PRIu64 "\n", v[SRFF_STATS_A_TOP_PORT_PKTS]);
	print_uint(PRINT_ANY, "nodata_pkts", "packets without data, no flow %" PRIu64, v[SRFF_STATS_A_NODATA_PKTS]);
	print_uint(PRINT_ANY, "encap_pkts", "  left to another pass (tunnel, VRF) %" PRIu64, v[SRFF_STATS_A_ENCAP_PKTS]);
	print_uint(PRINT_ANY, "loopback_pkts", "  loopback %" PRIu64 "\n", v[SRFF_STATS_A_LOOPBACK_PKTS]);
	/* DSCP marking: in text where it is on, or has been (JSON: always). */
	{
		enum output_type t = c->mark == SRFF_MARK_DSCP || v[SRFF_STATS_A_DSCP_PKTS] ||
				     v[SRFF_STATS_A_DSCP_FAILED] ? PRINT_ANY : PRINT_JSON;

		print_uint(t, "dscp_pkts", "packets DSCP marked %" PRIu64, v[SRFF_STATS_A_DSCP_PKTS]);
		print_uint(t, "dscp_failed", "  failed, no memory %" PRIu64 "\n",
			   v[SRFF_STATS_A_DSCP_FAILED]);
	}
	print_uint(PRINT_ANY, "gc_runs", "gc runs %" PRIu64, v[SRFF_STATS_A_GC_RUNS]);
	print_uint(PRINT_ANY, "gc_early", " (early %" PRIu64 ")", v[SRFF_STATS_A_GC_EARLY]);
	print_uint(PRINT_ANY, "gc_last_us", "  last sweep %" PRIu64 " us", v[SRFF_STATS_A_GC_LAST_US]);
	print_uint(PRINT_ANY, "gc_last_chain", "  longest chain %" PRIu64 "\n", v[SRFF_STATS_A_GC_LAST_CHAIN]);
	print_uint(PRINT_ANY, "auto_flows", "auto thresholds: recent flows %" PRIu64, v[SRFF_STATS_A_AUTO_FLOWS]);
	print_uint(PRINT_ANY, "auto_changes", "  changes %" PRIu64 "\n", v[SRFF_STATS_A_AUTO_CHANGES]);
	print_uint(PRINT_ANY, "buckets", "hash buckets %" PRIu64, v[SRFF_STATS_A_BUCKETS]);
	print_uint(PRINT_ANY, "grown", "  grown %" PRIu64, v[SRFF_STATS_A_GROWN]);
	print_uint(PRINT_ANY, "shrunk", "  shrunk %" PRIu64 "\n", v[SRFF_STATS_A_SHRUNK]);

	/* Per band: its mark and the bytes a flow has sent before a packet
	 * that goes there, from the thresholds in force (the counters count
	 * since srff started, under whatever thresholds were in force then).
	 */
	print_text("%-5s %-9s %-10s %-10s %14s %18s\n",
		   "band", "priority", "from", "to", "packets", "bytes");
	open_json_array(PRINT_JSON, "bands");
	for (unsigned int i = 0; i < s->nbands; i++) {
		uint64_t from, to;
		bool bounded;
		char b[32];

		open_json_object(NULL);
		print_uint(PRINT_ANY, "band", "%-5" PRIu64, i);
		if (config_band_range(c, i, &from, &to, &bounded)) {
			/* a band the configuration read with it lacks */
			print_null(PRINT_ANY, "priority", " %-9s", "?");
			print_null(PRINT_ANY, "from", " %-10s", "?");
			print_null(PRINT_ANY, "to", " %-10s", "?");
		} else {
			print_priority(PRINT_ANY, "priority", " %-9s", config_band_priority(c, i));
			print_uint(PRINT_JSON, "from", NULL, from);
			print_string(PRINT_FP, NULL, " %-10s", fmt_size(from, b, sizeof(b)));
			if (bounded) {
				print_uint(PRINT_JSON, "to", NULL, to);
				print_string(PRINT_FP, NULL, " %-10s", fmt_size(to, b, sizeof(b)));
			} else {
				print_null(PRINT_ANY, "to", " %-10s", "-");
			}
		}
		print_uint(PRINT_ANY, "pkts", " %14" PRIu64, s->band_pkts[i]);
		print_uint(PRINT_ANY, "bytes", " %18" PRIu64 "\n", s->band_bytes[i]);
		close_json_object();
	}
	close_json_array(PRINT_JSON, NULL);
	close_json_object();
}
