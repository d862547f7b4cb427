// SPDX-License-Identifier: GPL-2.0
/* stats: the namespace's counters, and per band what went through it. */
#include <inttypes.h>
#include <string.h>
#include <netlink/attr.h>

#include "srffctl.h"

/* The reply's attributes, while it is parsed. */
struct stats_reply {
	struct nlattr *tb[SRFF_STATS_A_MAX + 1];
	struct stats *s;
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
	struct stats_reply *r = arg;
	struct stats *s = r->s;
	struct nlattr *band;
	int rem;

	if (!tb[SRFF_A_STATS] ||
	    nla_parse_nested(r->tb, SRFF_STATS_A_MAX, tb[SRFF_A_STATS], stats_policy)) {
		fprintf(stderr, "%s: no statistics in the kernel's reply\n", prog);
		return EXIT_ERROR;
	}
	for (int i = SRFF_STATS_A_FLOWS; i <= SRFF_STATS_A_MAX; i++) {
		if (!r->tb[i] || i == SRFF_STATS_A_BANDS || i == SRFF_STATS_A_BAND)
			continue;
		s->v[i] = nla_len(r->tb[i]) >= 8 ? nla_get_u64(r->tb[i]) : nla_get_u32(r->tb[i]);
	}
	s->have_host = r->tb[SRFF_STATS_A_FLOWS_HOST] != NULL;
	if (!r->tb[SRFF_STATS_A_BANDS])
		return 0;
	nla_for_each_nested(band, r->tb[SRFF_STATS_A_BANDS], rem) {
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

/* Tries at a configuration and counters that agree on the bands. */
#define STATS_TRIES 5

/*
 * The counters come from GET_STATS, each band's priority and byte range
 * from GET_CONFIG: two requests, between which the thresholds may change
 * (learnt ones at any GC). The configuration is read before and after the
 * counters, again until both reads agree, so bands and ranges match.
 */
int cmd_stats(int argc, char **argv)
{
	struct config before, after;
	struct stats s;
	int err;

	(void)argv;
	if (argc > 1)
		usage_error("stats takes no arguments");
	err = srff_get_config(&before);
	for (int i = 0; !err && i < STATS_TRIES; i++) {
		struct stats_reply r = { .s = &s };

		memset(&s, 0, sizeof(s));
		err = srff_request(srff_msg(SRFF_CMD_GET_STATS, 0), stats_cb, &r);
		if (!err)
			err = srff_get_config(&after);
		if (err || (config_same_bands(&before, &after) &&
			    s.nbands == after.nthresholds + 1))
			break;
		before = after;
	}
	if (err)
		return err;
	/* If the thresholds kept changing, the last configuration read. */
	stats_print(&s, &after);
	return 0;
}
