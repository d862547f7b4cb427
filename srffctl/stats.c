// SPDX-License-Identifier: GPL-2.0
/* stats: the namespace's counters, and per band what went through it. */
#include <inttypes.h>
#include <string.h>
#include <netlink/attr.h>

#include "srffctl.h"

struct stats {
	struct nlattr *tb[SRFF_STATS_A_MAX + 1];
	uint64_t band_pkts[SRFF_MAX_BANDS], band_bytes[SRFF_MAX_BANDS];
	unsigned int nbands;
	uint64_t v[SRFF_STATS_A_MAX + 1];
};

/* Counters are u64 but for flows and max_flows (u32): either is read. */
static struct nla_policy stats_policy[SRFF_STATS_A_MAX + 1] = {
	[SRFF_STATS_A_FLOWS ... SRFF_STATS_A_GC_RUNS] = { .type = NLA_U32 },
	[SRFF_STATS_A_BANDS] = { .type = NLA_NESTED },
	[SRFF_STATS_A_GC_LAST_US ... SRFF_STATS_A_MAX] = { .type = NLA_U32 },
};

static struct nla_policy band_policy[SRFF_BAND_A_MAX + 1] = {
	[SRFF_BAND_A_INDEX] = { .type = NLA_U8 },
	[SRFF_BAND_A_PKTS] = { .type = NLA_U64 },
	[SRFF_BAND_A_BYTES] = { .type = NLA_U64 },
};

static int stats_cb(struct nlattr **tb, void *arg)
{
	struct stats *s = arg;
	struct nlattr *band;
	int rem;

	if (!tb[SRFF_A_STATS] ||
	    nla_parse_nested(s->tb, SRFF_STATS_A_MAX, tb[SRFF_A_STATS], stats_policy)) {
		fprintf(stderr, "%s: no statistics in the kernel's reply\n", prog);
		return EXIT_ERROR;
	}
	for (int i = SRFF_STATS_A_FLOWS; i <= SRFF_STATS_A_MAX; i++) {
		if (!s->tb[i] || i == SRFF_STATS_A_BANDS || i == SRFF_STATS_A_BAND)
			continue;
		s->v[i] = nla_len(s->tb[i]) >= 8 ? nla_get_u64(s->tb[i]) : nla_get_u32(s->tb[i]);
	}
	if (!s->tb[SRFF_STATS_A_BANDS])
		return 0;
	nla_for_each_nested(band, s->tb[SRFF_STATS_A_BANDS], rem) {
		struct nlattr *b[SRFF_BAND_A_MAX + 1];
		unsigned int i;

		if (nla_type(band) != SRFF_STATS_A_BAND ||
		    nla_parse_nested(b, SRFF_BAND_A_MAX, band, band_policy) ||
		    !b[SRFF_BAND_A_INDEX])
			continue;
		i = nla_get_u8(b[SRFF_BAND_A_INDEX]);
		if (i >= SRFF_MAX_BANDS)
			continue;
		s->band_pkts[i] = b[SRFF_BAND_A_PKTS] ? nla_get_u64(b[SRFF_BAND_A_PKTS]) : 0;
		s->band_bytes[i] = b[SRFF_BAND_A_BYTES] ? nla_get_u64(b[SRFF_BAND_A_BYTES]) : 0;
		if (i + 1 > s->nbands)
			s->nbands = i + 1;
	}
	return 0;
}

int cmd_stats(int argc, char **argv)
{
	struct stats s;
	struct config c = { 0 };
	int err;

	(void)argv;
	if (argc > 1)
		usage_error("stats takes no arguments");
	memset(&s, 0, sizeof(s));
	err = srff_request(srff_msg(SRFF_CMD_GET_STATS, 0), stats_cb, &s);
	if (err)
		return err;
	if (!is_json()) {
		err = srff_get_config(&c);	/* each band's priority */
		if (err)
			return err;
	}

	/* The keys and their order are docs/interfaces.md's. */
	open_json_object(NULL);
	print_uint(PRINT_ANY, "flows", "flows %" PRIu64, s.v[SRFF_STATS_A_FLOWS]);
	print_uint(PRINT_ANY, "max_flows", " of max %" PRIu64, s.v[SRFF_STATS_A_MAX_FLOWS]);
	print_uint(PRINT_ANY, "flows_host", "  host %" PRIu64, s.v[SRFF_STATS_A_FLOWS_HOST]);
	print_uint(PRINT_ANY, "max_flows_host", " of max %" PRIu64 "\n", s.v[SRFF_STATS_A_MAX_FLOWS_HOST]);
	print_uint(PRINT_ANY, "created", "  created %" PRIu64, s.v[SRFF_STATS_A_CREATED]);
	print_uint(PRINT_ANY, "gc_freed", "  freed idle %" PRIu64, s.v[SRFF_STATS_A_GC_FREED]);
	print_uint(PRINT_ANY, "fin_retired", "  retired after FIN/RST %" PRIu64, s.v[SRFF_STATS_A_FIN_RETIRED]);
	print_uint(PRINT_ANY, "flushed", "  flushed %" PRIu64 "\n", s.v[SRFF_STATS_A_FLUSHED]);
	print_uint(PRINT_ANY, "evicted", "  evicted to make room %" PRIu64, s.v[SRFF_STATS_A_EVICTED]);
	print_uint(PRINT_ANY, "table_full", "  refused, table full %" PRIu64, s.v[SRFF_STATS_A_TABLE_FULL]);
	print_uint(PRINT_ANY, "alloc_failed", "  allocation failed %" PRIu64 "\n", s.v[SRFF_STATS_A_ALLOC_FAILED]);
	print_uint(PRINT_ANY, "untracked_pkts", "packets untracked %" PRIu64, s.v[SRFF_STATS_A_UNTRACKED_PKTS]);
	print_uint(PRINT_ANY, "untracked_bytes", " (%" PRIu64 " bytes)", s.v[SRFF_STATS_A_UNTRACKED_BYTES]);
	print_uint(PRINT_ANY, "ignored_pkts", "  ignored by policy %" PRIu64, s.v[SRFF_STATS_A_IGNORED_PKTS]);
	print_uint(PRINT_ANY, "top_port_pkts", "  top band by port %" PRIu64 "\n", s.v[SRFF_STATS_A_TOP_PORT_PKTS]);
	print_uint(PRINT_ANY, "nodata_pkts", "packets without data, no flow %" PRIu64, s.v[SRFF_STATS_A_NODATA_PKTS]);
	print_uint(PRINT_ANY, "encap_pkts", "  left to another pass (tunnel, VRF) %" PRIu64 "\n", s.v[SRFF_STATS_A_ENCAP_PKTS]);
	print_uint(PRINT_ANY, "gc_runs", "gc runs %" PRIu64, s.v[SRFF_STATS_A_GC_RUNS]);
	print_uint(PRINT_ANY, "gc_early", " (early %" PRIu64 ")", s.v[SRFF_STATS_A_GC_EARLY]);
	print_uint(PRINT_ANY, "gc_last_us", "  last sweep %" PRIu64 " us", s.v[SRFF_STATS_A_GC_LAST_US]);
	print_uint(PRINT_ANY, "gc_last_chain", "  longest chain %" PRIu64 "\n", s.v[SRFF_STATS_A_GC_LAST_CHAIN]);
	print_uint(PRINT_ANY, "auto_flows", "auto thresholds: recent flows %" PRIu64, s.v[SRFF_STATS_A_AUTO_FLOWS]);
	print_uint(PRINT_ANY, "auto_changes", "  changes %" PRIu64 "\n", s.v[SRFF_STATS_A_AUTO_CHANGES]);

	print_text("%-5s %-9s %14s %18s\n", "band", "priority", "packets", "bytes");
	open_json_array(PRINT_JSON, "bands");
	for (unsigned int i = 0; i < s.nbands; i++) {
		uint32_t p = c.classid_major ? ((uint32_t)c.classid_major << 16 | (i + 1)) :
			     i < c.npriorities ? c.priorities[i] : 0;
		char pb[16];

		open_json_object(NULL);
		print_uint(PRINT_ANY, "band", "%-5" PRIu64, i);
		print_string(PRINT_FP, NULL, " %-9s", fmt_priority(p, pb, sizeof(pb)));
		print_uint(PRINT_ANY, "pkts", " %14" PRIu64, s.band_pkts[i]);
		print_uint(PRINT_ANY, "bytes", " %18" PRIu64 "\n", s.band_bytes[i]);
		close_json_object();
	}
	close_json_array(PRINT_JSON, NULL);
	close_json_object();
	return 0;
}
