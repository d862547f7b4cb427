// SPDX-License-Identifier: GPL-2.0
/*
 * sizes: the flow-size histogram, what the flows that ended had sent, with
 * cumulative flows and bytes and the flow-count quantiles, so an operator
 * sees what the server sends (srff_nf/sizes.h says what is recorded when).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <netlink/attr.h>

#include "srffctl.h"

#define MAX_BUCKETS 256		/* the kernel sends at most 128 */

struct bucket {
	uint64_t low, high, flows, bytes;
	bool bounded;		/* the last bucket has no high bound */
};

struct sizes {
	uint64_t fin, idle, msg;
	struct bucket b[MAX_BUCKETS];
	unsigned int n;
};

static struct nla_policy sizes_policy[SRFF_SIZES_A_MAX + 1] = {
	[SRFF_SIZES_A_FIN] = { .type = NLA_U64 },
	[SRFF_SIZES_A_IDLE] = { .type = NLA_U64 },
	[SRFF_SIZES_A_MSG] = { .type = NLA_U64 },
	[SRFF_SIZES_A_BUCKET] = { .type = NLA_NESTED },
};

static struct nla_policy bucket_policy[SRFF_BUCKET_A_MAX + 1] = {
	[SRFF_BUCKET_A_LOW] = { .type = NLA_U64 },
	[SRFF_BUCKET_A_HIGH] = { .type = NLA_U64 },
	[SRFF_BUCKET_A_FLOWS] = { .type = NLA_U64 },
	[SRFF_BUCKET_A_BYTES] = { .type = NLA_U64 },
};

static uint64_t get_u64(struct nlattr *a)
{
	return a ? nla_get_u64(a) : 0;
}

static int sizes_cb(struct nlattr **tb, void *arg)
{
	struct nlattr *t[SRFF_SIZES_A_MAX + 1], *a;
	struct sizes *s = arg;
	int rem;

	if (!tb[SRFF_A_SIZES] ||
	    nla_parse_nested(t, SRFF_SIZES_A_MAX, tb[SRFF_A_SIZES], sizes_policy)) {
		fprintf(stderr, "%s: no flow sizes in the kernel's reply\n", prog);
		return EXIT_ERROR;
	}
	s->fin = get_u64(t[SRFF_SIZES_A_FIN]);
	s->idle = get_u64(t[SRFF_SIZES_A_IDLE]);
	s->msg = get_u64(t[SRFF_SIZES_A_MSG]);
	nla_for_each_nested(a, tb[SRFF_A_SIZES], rem) {
		struct nlattr *b[SRFF_BUCKET_A_MAX + 1];
		struct bucket *k;

		if (nla_type(a) != SRFF_SIZES_A_BUCKET || s->n == MAX_BUCKETS ||
		    nla_parse_nested(b, SRFF_BUCKET_A_MAX, a, bucket_policy))
			continue;
		k = &s->b[s->n++];
		k->low = get_u64(b[SRFF_BUCKET_A_LOW]);
		k->bounded = b[SRFF_BUCKET_A_HIGH] != NULL;
		k->high = get_u64(b[SRFF_BUCKET_A_HIGH]);
		k->flows = get_u64(b[SRFF_BUCKET_A_FLOWS]);
		k->bytes = get_u64(b[SRFF_BUCKET_A_BYTES]);
	}
	return 0;
}

/* The bucket holding the @q-quantile (0 < q <= 1) of flows, or NULL. */
static const struct bucket *quantile(const struct sizes *s, uint64_t total, double q)
{
	uint64_t cum = 0;

	for (unsigned int i = 0; i < s->n; i++) {
		cum += s->b[i].flows;
		if ((double)cum >= q * (double)total)
			return &s->b[i];
	}
	return NULL;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void print_bound(const char *key, const struct bucket *k, bool high)
{
	char buf[32];

	if (high && !k->bounded) {
		print_null(PRINT_JSON, key, NULL, NULL);
		print_string(PRINT_FP, NULL, " %-10s", "-");
		return;
	}
	print_uint(PRINT_JSON, key, NULL, high ? k->high : k->low);
	print_string(PRINT_FP, NULL, high ? " %-10s" : "%-10s",
		     fmt_size(high ? k->high : k->low, buf, sizeof(buf)));
}

int cmd_sizes(int argc, char **argv)
{
	static const struct { const char *key; double q; } qs[] = {
		{ "p50", 0.50 }, { "p90", 0.90 }, { "p99", 0.99 },
	};
	uint64_t flows = 0, bytes = 0, cf = 0, cb = 0;
	struct sizes *s;
	char buf[32];
	int err;

	(void)argv;
	if (argc > 1)
		usage_error("sizes takes no arguments");
	s = calloc(1, sizeof(*s));
	if (!s) {
		perror(prog);
		return EXIT_ERROR;
	}
	err = srff_request(srff_msg(SRFF_CMD_GET_SIZES, 0), sizes_cb, s);
	if (err) {
		free(s);
		return err;
	}
	for (unsigned int i = 0; i < s->n; i++) {
		flows += s->b[i].flows;
		bytes += s->b[i].bytes;
	}

	/* The keys and their order are docs/interfaces.md's. */
	open_json_object(NULL);
	print_uint(PRINT_ANY, "flows", "flows ended %" PRIu64, flows);
	print_uint(PRINT_ANY, "fin", " (FIN/RST %" PRIu64, s->fin);
	print_uint(PRINT_ANY, "idle", ", idle %" PRIu64, s->idle);
	print_uint(PRINT_ANY, "msg", ", kept-alive responses %" PRIu64 ")", s->msg);
	print_uint(PRINT_ANY, "bytes", ", %" PRIu64 " bytes\n", bytes);
	/* Quantiles of flows: the upper bound of the bucket each falls in. */
	open_json_object("quantiles");
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		const struct bucket *k = flows ? quantile(s, flows, qs[i].q) : NULL;

		print_string(PRINT_FP, NULL, i ? "  %s" : "%s", qs[i].key);
		if (!k) {
			print_null(PRINT_JSON, qs[i].key, NULL, NULL);
			print_string(PRINT_FP, NULL, " %s", "-");
		} else if (!k->bounded) {
			print_uint(PRINT_JSON, qs[i].key, NULL, k->low);
			print_string(PRINT_FP, NULL, " >= %s", fmt_size(k->low, buf, sizeof(buf)));
		} else {
			print_uint(PRINT_JSON, qs[i].key, NULL, k->high);
			print_string(PRINT_FP, NULL, " < %s", fmt_size(k->high, buf, sizeof(buf)));
		}
	}
	close_json_object();
	print_text("  (flows; a bucket's upper bound)\n");

	print_text("%-10s %-10s %12s %7s %16s %7s\n",
		   "size from", "to", "flows", "cum%", "bytes", "cum%");
	open_json_array(PRINT_JSON, "buckets");
	for (unsigned int i = 0; i < s->n; i++) {
		const struct bucket *k = &s->b[i];

		cf += k->flows;
		cb += k->bytes;
		open_json_object(NULL);
		print_bound("low", k, false);
		print_bound("high", k, true);
		print_uint(PRINT_ANY, "flows", " %12" PRIu64, k->flows);
		print_text(" %6.1f%%", pct(cf, flows));
		print_uint(PRINT_ANY, "bytes", " %16" PRIu64, k->bytes);
		print_text(" %6.1f%%\n", pct(cb, bytes));
		print_uint(PRINT_JSON, "cum_flows", NULL, cf);
		print_uint(PRINT_JSON, "cum_bytes", NULL, cb);
		close_json_object();
	}
	close_json_array(PRINT_JSON, NULL);
	close_json_object();
	free(s);
	return 0;
}
