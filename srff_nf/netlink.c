// SPDX-License-Identifier: GPL-2.0
/*
 * The "srff" generic netlink family: srff's whole control surface.
 * include/uapi/linux/srff.h lists the commands; docs/srff.yaml describes
 * them in YNL form.
 *
 * Every request acts on the namespace of the socket it came on. Attributes
 * are validated strictly by per-command policies (unknown or malformed
 * attributes are refused by the core with an extended ack); what policies
 * cannot say (ascending thresholds, one priority per band) is checked by
 * srff_config_check(), whose complaint names the attribute. A rejected
 * SET_CONFIG changes nothing: the new configuration is built aside and
 * swapped in whole only once valid.
 */
#include <linux/kernel.h>
#include <linux/jiffies.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <net/sock.h>

#include "srff.h"
#include "band.h"

static struct genl_family srff_genl_family;

static const struct nla_policy srff_items_u64_policy[SRFF_A_ITEM_MAX + 1] = {
	[SRFF_A_ITEM] = { .type = NLA_U64 },
	[SRFF_A_ITEM_PAD] = { .type = NLA_REJECT },
};

static const struct nla_policy srff_items_u32_policy[SRFF_A_ITEM_MAX + 1] = {
	[SRFF_A_ITEM] = { .type = NLA_U32 },
};

static const struct nla_policy srff_items_u8_policy[SRFF_A_ITEM_MAX + 1] = {
	[SRFF_A_ITEM] = { .type = NLA_U8 },
	[SRFF_A_ITEM_PAD] = { .type = NLA_REJECT },
};

static const struct nla_policy srff_items_u16_policy[SRFF_A_ITEM_MAX + 1] = {
	[SRFF_A_ITEM] = NLA_POLICY_MIN(NLA_U16, 1),
};

static struct netlink_range_validation idle_timeout_range = {
	.min = SRFF_IDLE_TIMEOUT_MIN_MS, .max = SRFF_IDLE_TIMEOUT_MAX_MS,
};

static struct netlink_range_validation gc_interval_range = {
	.min = SRFF_GC_INTERVAL_MIN_MS, .max = SRFF_GC_INTERVAL_MAX_MS,
};

static struct netlink_range_validation idle_reset_range = {
	.min = 0, .max = SRFF_IDLE_RESET_MAX_MS,
};

static struct netlink_range_validation max_flows_range = {
	.min = SRFF_MAX_FLOWS_MIN, .max = SRFF_MAX_FLOWS_MAX,
};

static const struct nla_policy srff_set_policy[SRFF_A_MAX + 1] = {
	[SRFF_A_THRESHOLDS] = NLA_POLICY_NESTED(srff_items_u64_policy),
	[SRFF_A_PRIORITIES] = NLA_POLICY_NESTED(srff_items_u32_policy),
	[SRFF_A_CLASSID_MAJOR] = { .type = NLA_U16 },
	[SRFF_A_IDLE_TIMEOUT_MS] = NLA_POLICY_FULL_RANGE(NLA_U32, &idle_timeout_range),
	[SRFF_A_GC_INTERVAL_MS] = NLA_POLICY_FULL_RANGE(NLA_U32, &gc_interval_range),
	[SRFF_A_MAX_FLOWS] = NLA_POLICY_FULL_RANGE(NLA_U32, &max_flows_range),
	[SRFF_A_UDP_POLICY] = NLA_POLICY_MAX(NLA_U8, SRFF_UDP_MAX),
	[SRFF_A_TOP_PORTS] = NLA_POLICY_NESTED(srff_items_u16_policy),
	[SRFF_A_UNTRACKED_PRIORITY] = { .type = NLA_U32 },
	[SRFF_A_APP_PRIORITY] = NLA_POLICY_MAX(NLA_U8, SRFF_APP_PRIO_MAX),
	[SRFF_A_IDLE_RESET_MS] = NLA_POLICY_FULL_RANGE(NLA_U32, &idle_reset_range),
	[SRFF_A_STATS ... SRFF_A_SIZES] = { .type = NLA_REJECT },
	[SRFF_A_AUTO_THRESHOLDS] = NLA_POLICY_MAX(NLA_U8, 1),
	[SRFF_A_FILTER_BAND ... SRFF_A_FILTER_MIN_BYTES] = { .type = NLA_REJECT },
	[SRFF_A_ENABLED] = NLA_POLICY_MAX(NLA_U8, 1),
	[SRFF_A_MARK] = NLA_POLICY_MAX(NLA_U8, SRFF_MARK_MAX),
	/* Values (0-63 or keep) and their number: srff_config_check. */
	[SRFF_A_DSCP_MAP] = NLA_POLICY_NESTED(srff_items_u8_policy),
	[SRFF_A_DSCP_OVERRIDE] = NLA_POLICY_MAX(NLA_U8, 1),
};

/* ---- replies ---------------------------------------------------------- */

/* A list nest of @n entries of @size bytes each (get_list's mirror). */
static int put_list(struct sk_buff *skb, int type, const void *v,
		    unsigned int size, unsigned int n)
{
	struct nlattr *nest = nla_nest_start(skb, type);
	unsigned int i;
	int err = 0;

	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < n && !err; i++) {
		switch (size) {
		case sizeof(u64):
			err = nla_put_u64_64bit(skb, SRFF_A_ITEM, ((const u64 *)v)[i],
						SRFF_A_ITEM_PAD);
			break;
		case sizeof(u32):
			err = nla_put_u32(skb, SRFF_A_ITEM, ((const u32 *)v)[i]);
			break;
		case sizeof(u16):
			err = nla_put_u16(skb, SRFF_A_ITEM, ((const u16 *)v)[i]);
			break;
		case sizeof(u8):
			err = nla_put_u8(skb, SRFF_A_ITEM, ((const u8 *)v)[i]);
			break;
		}
	}
	if (err)
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static int fill_config(struct sk_buff *skb, const struct srff_config *c)
{
	if (put_list(skb, SRFF_A_THRESHOLDS, c->thresholds, sizeof(u64), c->nthresholds) ||
	    put_list(skb, SRFF_A_PRIORITIES, c->priorities, sizeof(u32), c->npriorities) ||
	    nla_put_u16(skb, SRFF_A_CLASSID_MAJOR, c->classid_major) ||
	    nla_put_u32(skb, SRFF_A_IDLE_TIMEOUT_MS, c->idle_timeout_ms) ||
	    nla_put_u32(skb, SRFF_A_GC_INTERVAL_MS, c->gc_interval_ms) ||
	    nla_put_u32(skb, SRFF_A_MAX_FLOWS, c->max_flows) ||
	    nla_put_u8(skb, SRFF_A_UDP_POLICY, c->udp_policy) ||
	    put_list(skb, SRFF_A_TOP_PORTS, c->top_ports, sizeof(u16), c->ntop_ports) ||
	    nla_put_u32(skb, SRFF_A_UNTRACKED_PRIORITY, c->untracked_priority) ||
	    nla_put_u8(skb, SRFF_A_APP_PRIORITY, c->app_priority) ||
	    nla_put_u32(skb, SRFF_A_IDLE_RESET_MS, c->idle_reset_ms) ||
	    nla_put_u8(skb, SRFF_A_AUTO_THRESHOLDS, c->auto_thresholds) ||
	    nla_put_u8(skb, SRFF_A_ENABLED, c->enabled) ||
	    nla_put_u8(skb, SRFF_A_MARK, c->mark) ||
	    put_list(skb, SRFF_A_DSCP_MAP, c->dscp, sizeof(u8), c->ndscp) ||
	    nla_put_u8(skb, SRFF_A_DSCP_OVERRIDE, c->dscp_override))
		return -EMSGSIZE;
	return 0;
}

static int put_u64(struct sk_buff *skb, int type, u64 v, int pad)
{
	return nla_put_u64_64bit(skb, type, v, pad);
}

static int fill_stats(struct sk_buff *skb, const struct srff_stats *st,
		      unsigned int nbands)
{
	const struct srff_pcpu_stats *s = &st->sum;
	struct nlattr *nest, *bands, *band;
	unsigned int i;

	nest = nla_nest_start(skb, SRFF_A_STATS);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, SRFF_STATS_A_FLOWS, st->flows) ||
	    nla_put_u32(skb, SRFF_STATS_A_MAX_FLOWS, st->max_flows) ||
	    put_u64(skb, SRFF_STATS_A_CREATED, s->created, SRFF_STATS_A_PAD) ||
	    put_u64(skb, SRFF_STATS_A_GC_FREED, st->gc_freed, SRFF_STATS_A_PAD) ||
	    put_u64(skb, SRFF_STATS_A_FIN_RETIRED, st->fin_retired, SRFF_STATS_A_PAD) ||
	    put_u64(skb, SRFF_STATS_A_FLUSHED, st->flushed, SRFF_STATS_A_PAD) ||
	    put_u64(skb, SRFF_STATS_A_TABLE_FULL, s->table_full, SRFF_STATS_A_PAD) ||
	    put_u64(skb, SRFF_STATS_A_ALLOC_FAILED, s->alloc_failed, SRFF_STATS_A_PAD) ||
	    put_u64(skb, SRFF_STATS_A_UNTRACKED_PKTS, s->untracked_pkts, SRFF_STATS_A_PAD) ||
	    put_u64(skb, SRFF_STATS_A_UNTRACKED_BYTES, s->untracked_bytes, SRFF_STATS_A_PAD) ||
	    put_u64(skb, SRFF_STATS_A_IGNORED_PKTS, s->ignored_pkts, SRFF_STATS_A_PAD) ||
	    put_u64(skb, SRFF_STATS_A_TOP_PORT_PKTS, s->top_port_pkts, SRFF_STATS_A_PAD) ||
	    put_u64(skb, SRFF_STATS_A_GC_RUNS, st->gc_runs, SRFF_STATS_A_PAD) ||
	    put_u64(skb, SRFF_STATS_A_GC_LAST_US, st->gc_last_us, SRFF_STATS_A_PAD) ||
	    nla_put_u32(skb, SRFF_STATS_A_GC_LAST_CHAIN, st->gc_last_chain) ||
	    put_u64(skb, SRFF_STATS_A_EVICTED, st->evicted, SRFF_STATS_A_PAD) ||
	    put_u64(skb, SRFF_STATS_A_NODATA_PKTS, s->nodata_pkts, SRFF_STATS_A_PAD) ||
	    put_u64(skb, SRFF_STATS_A_ENCAP_PKTS, s->encap_pkts, SRFF_STATS_A_PAD) ||
	    put_u64(skb, SRFF_STATS_A_GC_EARLY, st->gc_early, SRFF_STATS_A_PAD) ||
	    put_u64(skb, SRFF_STATS_A_AUTO_FLOWS, st->auto_flows, SRFF_STATS_A_PAD) ||
	    put_u64(skb, SRFF_STATS_A_AUTO_CHANGES, st->auto_changes, SRFF_STATS_A_PAD) ||
	    nla_put_u32(skb, SRFF_STATS_A_BUCKETS, st->buckets) ||
	    put_u64(skb, SRFF_STATS_A_GROWN, st->grown, SRFF_STATS_A_PAD) ||
	    put_u64(skb, SRFF_STATS_A_SHRUNK, st->shrunk, SRFF_STATS_A_PAD) ||
	    put_u64(skb, SRFF_STATS_A_LOOPBACK_PKTS, s->loopback_pkts, SRFF_STATS_A_PAD) ||
	    put_u64(skb, SRFF_STATS_A_DSCP_PKTS, s->dscp_pkts, SRFF_STATS_A_PAD) ||
	    put_u64(skb, SRFF_STATS_A_DSCP_FAILED, s->dscp_failed, SRFF_STATS_A_PAD))
		return -EMSGSIZE;
	/* The host-wide count moves with every other tenant's flows: only
	 * the initial namespace's replies carry it.
	 */
	if (st->host &&
	    (nla_put_u32(skb, SRFF_STATS_A_FLOWS_HOST, st->flows_host) ||
	     nla_put_u32(skb, SRFF_STATS_A_MAX_FLOWS_HOST, st->max_flows_host)))
		return -EMSGSIZE;

	bands = nla_nest_start(skb, SRFF_STATS_A_BANDS);
	if (!bands)
		return -EMSGSIZE;
	for (i = 0; i < nbands; i++) {
		band = nla_nest_start(skb, SRFF_STATS_A_BAND);
		if (!band ||
		    nla_put_u8(skb, SRFF_BAND_A_INDEX, i) ||
		    put_u64(skb, SRFF_BAND_A_PKTS, s->band_pkts[i], SRFF_BAND_A_PAD) ||
		    put_u64(skb, SRFF_BAND_A_BYTES, s->band_bytes[i], SRFF_BAND_A_PAD))
			return -EMSGSIZE;
		nla_nest_end(skb, band);
	}
	nla_nest_end(skb, bands);
	nla_nest_end(skb, nest);
	return 0;
}

/* A reply to @info of up to @size bytes, built by @fill. */
static int reply(struct genl_info *info, u8 cmd, size_t size,
		 int (*fill)(struct sk_buff *skb, struct srff_net *sn),
		 struct srff_net *sn)
{
	struct sk_buff *msg;
	void *hdr;
	int err;

	msg = genlmsg_new(size, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &srff_genl_family, 0, cmd);
	if (!hdr) {
		err = -EMSGSIZE;
		goto err;
	}
	err = fill(msg, sn);
	if (err)
		goto err;
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
err:
	nlmsg_free(msg);
	return err;
}

static int fill_config_reply(struct sk_buff *msg, struct srff_net *sn)
{
	int err;

	rcu_read_lock();
	err = fill_config(msg, rcu_dereference(sn->config));
	rcu_read_unlock();
	return err;
}

static int fill_stats_reply(struct sk_buff *msg, struct srff_net *sn)
{
	struct srff_stats st;
	unsigned int nbands;

	rcu_read_lock();
	nbands = rcu_dereference(sn->config)->nthresholds + 1;
	srff_stats_read(rcu_dereference(sn->tracker),
			net_eq(sn->net, &init_net), &st);
	rcu_read_unlock();
	return fill_stats(msg, &st, nbands);
}

static int srff_nl_get_config(struct sk_buff *skb, struct genl_info *info)
{
	return reply(info, SRFF_CMD_GET_CONFIG, NLMSG_GOODSIZE, fill_config_reply,
		     srff_pernet(genl_info_net(info)));
}

static int srff_nl_get_stats(struct sk_buff *skb, struct genl_info *info)
{
	return reply(info, SRFF_CMD_GET_STATS, NLMSG_GOODSIZE, fill_stats_reply,
		     srff_pernet(genl_info_net(info)));
}

/* ---- sizes ------------------------------------------------------------ */

/* Every bucket non-empty, each u64 with its padding attribute. */
#define SIZES_REPLY_SIZE						\
	(3 * nla_total_size_64bit(sizeof(u64)) +			\
	 SRFF_SIZES_BUCKETS * (nla_total_size(0) +			\
			       4 * nla_total_size_64bit(sizeof(u64))))

static int fill_sizes(struct sk_buff *skb, const struct srff_sizes *h)
{
	struct nlattr *nest, *bucket;
	unsigned int b;

	nest = nla_nest_start(skb, SRFF_A_SIZES);
	if (!nest ||
	    put_u64(skb, SRFF_SIZES_A_FIN, h->reason[SRFF_SIZE_FIN], SRFF_SIZES_A_PAD) ||
	    put_u64(skb, SRFF_SIZES_A_IDLE, h->reason[SRFF_SIZE_IDLE], SRFF_SIZES_A_PAD) ||
	    put_u64(skb, SRFF_SIZES_A_MSG, h->reason[SRFF_SIZE_MSG], SRFF_SIZES_A_PAD))
		return -EMSGSIZE;
	for (b = 0; b < SRFF_SIZES_BUCKETS; b++) {
		if (!h->flows[b])
			continue;
		bucket = nla_nest_start(skb, SRFF_SIZES_A_BUCKET);
		if (!bucket ||
		    put_u64(skb, SRFF_BUCKET_A_LOW, srff_sizes_low(b), SRFF_BUCKET_A_PAD) ||
		    (b + 1 < SRFF_SIZES_BUCKETS &&
		     put_u64(skb, SRFF_BUCKET_A_HIGH, srff_sizes_low(b + 1), SRFF_BUCKET_A_PAD)) ||
		    put_u64(skb, SRFF_BUCKET_A_FLOWS, h->flows[b], SRFF_BUCKET_A_PAD) ||
		    put_u64(skb, SRFF_BUCKET_A_BYTES, h->bytes[b], SRFF_BUCKET_A_PAD))
			return -EMSGSIZE;
		nla_nest_end(skb, bucket);
	}
	nla_nest_end(skb, nest);
	return 0;
}

static int fill_sizes_reply(struct sk_buff *msg, struct srff_net *sn)
{
	struct srff_tracker *tr;
	struct srff_sizes *h;
	int err;

	h = kmalloc(sizeof(*h), GFP_KERNEL);	/* 2 KiB: not on the stack */
	if (!h)
		return -ENOMEM;
	rcu_read_lock();
	tr = rcu_dereference(sn->tracker);
	if (tr)
		srff_table_sizes_read(&tr->table, h);
	else
		memset(h, 0, sizeof(*h));	/* disabled: nothing counted */
	rcu_read_unlock();
	err = fill_sizes(msg, h);
	kfree(h);
	return err;
}

static int srff_nl_get_sizes(struct sk_buff *skb, struct genl_info *info)
{
	return reply(info, SRFF_CMD_GET_SIZES, SIZES_REPLY_SIZE, fill_sizes_reply,
		     srff_pernet(genl_info_net(info)));
}

/* ---- set -------------------------------------------------------------- */

/* Copy a validated list nest into @out, at most @max entries of @size. */
static int get_list(const struct nlattr *nest, void *out, unsigned int size,
		    unsigned int max, u32 *n, struct netlink_ext_ack *extack)
{
	const struct nlattr *item;
	unsigned int i = 0;
	int rem;

	nla_for_each_nested(item, nest, rem) {
		if (i == max) {
			NL_SET_ERR_MSG_ATTR(extack, nest, "too many entries");
			return -EINVAL;
		}
		switch (size) {
		case sizeof(u64):
			((u64 *)out)[i] = nla_get_u64(item);
			break;
		case sizeof(u32):
			((u32 *)out)[i] = nla_get_u32(item);
			break;
		case sizeof(u16):
			((u16 *)out)[i] = nla_get_u16(item);
			break;
		case sizeof(u8):
			((u8 *)out)[i] = nla_get_u8(item);
			break;
		}
		i++;
	}
	*n = i;
	return 0;
}

static int parse_config(struct genl_info *info, struct srff_config *c)
{
	struct nlattr **a = info->attrs;
	struct netlink_ext_ack *extack = info->extack;
	int err;

	if (a[SRFF_A_THRESHOLDS]) {
		err = get_list(a[SRFF_A_THRESHOLDS], c->thresholds, sizeof(u64),
			       SRFF_MAX_THRESHOLDS, &c->nthresholds, extack);
		if (err)
			return err;
	}
	if (a[SRFF_A_PRIORITIES]) {
		err = get_list(a[SRFF_A_PRIORITIES], c->priorities, sizeof(u32),
			       SRFF_MAX_BANDS, &c->npriorities, extack);
		if (err)
			return err;
	}
	if (a[SRFF_A_TOP_PORTS]) {
		err = get_list(a[SRFF_A_TOP_PORTS], c->top_ports, sizeof(u16),
			       SRFF_MAX_TOP_PORTS, &c->ntop_ports, extack);
		if (err)
			return err;
	}
	if (a[SRFF_A_CLASSID_MAJOR])
		c->classid_major = nla_get_u16(a[SRFF_A_CLASSID_MAJOR]);
	if (a[SRFF_A_IDLE_TIMEOUT_MS])
		c->idle_timeout_ms = nla_get_u32(a[SRFF_A_IDLE_TIMEOUT_MS]);
	if (a[SRFF_A_GC_INTERVAL_MS])
		c->gc_interval_ms = nla_get_u32(a[SRFF_A_GC_INTERVAL_MS]);
	if (a[SRFF_A_MAX_FLOWS])
		c->max_flows = nla_get_u32(a[SRFF_A_MAX_FLOWS]);
	if (a[SRFF_A_UDP_POLICY])
		c->udp_policy = nla_get_u8(a[SRFF_A_UDP_POLICY]);
	if (a[SRFF_A_UNTRACKED_PRIORITY])
		c->untracked_priority = nla_get_u32(a[SRFF_A_UNTRACKED_PRIORITY]);
	if (a[SRFF_A_APP_PRIORITY])
		c->app_priority = nla_get_u8(a[SRFF_A_APP_PRIORITY]);
	if (a[SRFF_A_IDLE_RESET_MS])
		c->idle_reset_ms = nla_get_u32(a[SRFF_A_IDLE_RESET_MS]);
	if (a[SRFF_A_ENABLED])
		c->enabled = nla_get_u8(a[SRFF_A_ENABLED]);
	if (a[SRFF_A_MARK])
		c->mark = nla_get_u8(a[SRFF_A_MARK]);
	if (a[SRFF_A_DSCP_OVERRIDE])
		c->dscp_override = nla_get_u8(a[SRFF_A_DSCP_OVERRIDE]);
	/* A map, or an empty nest: the default map again. */
	if (a[SRFF_A_DSCP_MAP]) {
		err = get_list(a[SRFF_A_DSCP_MAP], c->dscp, sizeof(u8),
			       SRFF_MAX_BANDS, &c->ndscp, extack);
		if (err)
			return err;
		c->dscp_map_set = c->ndscp > 0;
	}
	/* Thresholds set by hand are fixed, unless the same request asks to
	 * learn from them on. Learning with another number of bands (new
	 * priorities, no thresholds) starts from the defaults for it.
	 */
	if (a[SRFF_A_AUTO_THRESHOLDS])
		c->auto_thresholds = nla_get_u8(a[SRFF_A_AUTO_THRESHOLDS]);
	else if (a[SRFF_A_THRESHOLDS])
		c->auto_thresholds = 0;
	if (c->auto_thresholds && !a[SRFF_A_THRESHOLDS] && !c->classid_major &&
	    c->npriorities >= 2 && c->npriorities != c->nthresholds + 1)
		srff_config_auto_default(c, c->npriorities - 1);
	return 0;
}

static bool any_attr(struct nlattr **a)
{
	int i;

	for (i = 0; i <= SRFF_A_MAX; i++)
		if (a[i])	/* the policy rejects what is not configuration */
			return true;
	return false;
}

static int srff_nl_set_config(struct sk_buff *skb, struct genl_info *info)
{
	struct net *net = genl_info_net(info);
	struct srff_net *sn = srff_pernet(net);
	struct srff_config *old, *c;
	struct srff_tracker *tr;
	const char *msg = NULL;
	bool new_gc_interval, disable;
	int bad, err;

	if (!any_attr(info->attrs)) {
		NL_SET_ERR_MSG(info->extack, "no configuration attribute given");
		return -EINVAL;
	}

	mutex_lock(&sn->config_lock);
	old = srff_config_get_locked(sn);
	c = kmemdup(old, sizeof(*c), GFP_KERNEL_ACCOUNT);
	if (!c) {
		err = -ENOMEM;
		goto out;
	}
	err = parse_config(info, c);
	if (err)
		goto out_free;
	bad = srff_config_check(c, &msg);
	if (!bad)
		bad = srff_config_check_limits(c, net_eq(net, &init_net),
					       net->user_ns != &init_user_ns,
					       &msg);
	if (bad) {
		/* Point at the attribute, or at the one that made it wrong
		 * (new thresholds with the old number of priorities).
		 */
		const struct nlattr *attr = info->attrs[bad];

		if (!attr && bad == SRFF_A_PRIORITIES)
			attr = info->attrs[SRFF_A_THRESHOLDS] ?:
			       info->attrs[SRFF_A_CLASSID_MAJOR];
		if (!attr && bad == SRFF_A_DSCP_MAP)
			attr = info->attrs[SRFF_A_THRESHOLDS] ?:
			       info->attrs[SRFF_A_PRIORITIES];
		/* msg is a static string from srff_config_check(), not a
		 * literal, so NL_SET_ERR_MSG_ATTR() cannot take it (6.1 and
		 * 6.12 alike: the macro copies its argument into a static
		 * array); the message is set, and traced, as that macro does.
		 */
		do_trace_netlink_extack(msg);
		NL_SET_BAD_ATTR(info->extack, attr);
		if (info->extack)
			info->extack->_msg = msg;
		err = -EINVAL;
		goto out_free;
	}
	/* Turned on: the tracker first, so that a failure changes nothing.
	 * Turned off: the tracker goes after the swap (its packets may read
	 * either configuration). The old config is freed by kfree_rcu() in
	 * the swap, and this is not an RCU read section: compare before.
	 */
	if (c->enabled && !old->enabled) {
		err = srff_tracker_start(sn, c);
		if (err) {
			if (err == -ENOMEM)
				NL_SET_ERR_MSG(info->extack, "no memory for the flow table");
			else if (err == -E2BIG)
				NL_SET_ERR_MSG(info->extack, "cannot hook: too many netfilter hooks at postrouting in this namespace");
			else
				NL_SET_ERR_MSG(info->extack, "cannot register the netfilter hooks");
			goto out_free;
		}
	}
	disable = !c->enabled && old->enabled;
	new_gc_interval = c->gc_interval_ms != old->gc_interval_ms;
	tr = srff_tracker_locked(sn);
	if (tr && c->auto_thresholds)	/* learn at the next GC, not later */
		set_bit(SRFF_AUTO_DIRTY_BIT, &tr->gc_flags);
	srff_config_swap(sn, c);
	if (disable)
		srff_tracker_stop(sn);
	else if (tr && new_gc_interval)
		srff_gc_reschedule(tr);
	mutex_unlock(&sn->config_lock);
	return 0;

out_free:
	kfree(c);
out:
	mutex_unlock(&sn->config_lock);
	return err;
}

static int srff_nl_flush(struct sk_buff *skb, struct genl_info *info)
{
	struct srff_net *sn = srff_pernet(genl_info_net(info));
	struct srff_tracker *tr;

	/* The sweep sleeps (cond_resched): hold off a stop with the lock,
	 * not with RCU.
	 */
	mutex_lock(&sn->config_lock);
	tr = srff_tracker_locked(sn);
	if (tr)
		srff_table_sweep(&tr->table, SRFF_SWEEP_FLUSH, jiffies, 0);
	mutex_unlock(&sn->config_lock);
	return 0;
}

/* ---- flow dump -------------------------------------------------------- */

/* Kept in cb->ctx between the messages of a dump. */
struct srff_dump_ctx {
	struct srff_walk walk;
};

struct dump_arg {
	struct sk_buff *skb;
	struct netlink_callback *cb;
	const struct srff_config *config;
	const struct srff_walk *walk;
	unsigned int mark;	/* skb->len where the current bucket began */
	int band;		/* filter: -1 = every band */
	u64 min_bytes;		/* filter */
};

static const struct nla_policy srff_dump_policy[SRFF_A_FILTER_MIN_BYTES + 1] = {
	[SRFF_A_FILTER_BAND] = NLA_POLICY_MAX(NLA_U8, SRFF_MAX_BANDS - 1),
	[SRFF_A_FILTER_MIN_BYTES] = { .type = NLA_U64 },
};

static int put_addr(struct sk_buff *skb, int type, u8 family,
		    const union srff_addr *a)
{
	if (family == AF_INET)
		return nla_put_in_addr(skb, type, a->ip);
	return nla_put_in6_addr(skb, type, &a->ip6);
}

/* The dump's generation for nl_dump_check_consistent(): 1, or 2 once the
 * walk saw the table resized or a split bucket changed between two calls
 * (it never goes back). 0 is not a generation.
 */
static void dump_seq(struct netlink_callback *cb, const struct srff_walk *w)
{
	cb->seq = w->changed ? 2 : 1;
}

static int dump_flow(const struct srff_flow *f, void *arg)
{
	struct dump_arg *d = arg;
	const struct srff_config *c = d->config;
	u64 bytes = atomic64_read(&f->bytes);
	unsigned long last = READ_ONCE(f->last_seen);
	unsigned long created = READ_ONCE(f->created);
	unsigned long now = jiffies;	/* after last_seen: per flow, not per dump */
	u8 band = srff_band(c->thresholds, c->nthresholds, bytes);
	struct nlattr *nest;
	void *hdr;

	if ((d->band >= 0 && band != d->band) || bytes < d->min_bytes)
		return 0;
	hdr = genlmsg_put(d->skb, NETLINK_CB(d->cb->skb).portid,
			  d->cb->nlh->nlmsg_seq, &srff_genl_family,
			  NLM_F_MULTI, SRFF_CMD_GET_FLOWS);
	if (!hdr)
		return -EMSGSIZE;
	dump_seq(d->cb, d->walk);
	nl_dump_check_consistent(d->cb, genlmsg_nlhdr(hdr));
	nest = nla_nest_start(d->skb, SRFF_A_FLOW);
	if (!nest ||
	    nla_put_u8(d->skb, SRFF_FLOW_A_FAMILY, f->key.family) ||
	    nla_put_u8(d->skb, SRFF_FLOW_A_PROTO, f->key.proto) ||
	    put_addr(d->skb, SRFF_FLOW_A_SADDR, f->key.family, &f->key.saddr) ||
	    put_addr(d->skb, SRFF_FLOW_A_DADDR, f->key.family, &f->key.daddr) ||
	    nla_put_u16(d->skb, SRFF_FLOW_A_SPORT, ntohs(f->key.sport)) ||
	    nla_put_u16(d->skb, SRFF_FLOW_A_DPORT, ntohs(f->key.dport)) ||
	    put_u64(d->skb, SRFF_FLOW_A_BYTES, bytes, SRFF_FLOW_A_PAD) ||
	    nla_put_u8(d->skb, SRFF_FLOW_A_BAND, band) ||
	    put_u64(d->skb, SRFF_FLOW_A_AGE_MS, srff_ms_since(created, now),
		    SRFF_FLOW_A_PAD) ||
	    put_u64(d->skb, SRFF_FLOW_A_IDLE_MS, srff_ms_since(last, now),
		    SRFF_FLOW_A_PAD) ||
	    nla_put_u32(d->skb, SRFF_FLOW_A_FLAGS,
			test_bit(SRFF_FLOW_CLOSED_BIT, &f->flags) ?
			SRFF_FLOW_F_CLOSED : 0) ||
	    (f->key.inner &&
	     nla_put_u16(d->skb, SRFF_FLOW_A_INNER, f->key.inner))) {
		genlmsg_cancel(d->skb, hdr);
		return -EMSGSIZE;
	}
	nla_nest_end(d->skb, nest);
	genlmsg_end(d->skb, hdr);
	return 0;
}

static bool dump_mark(void *arg)
{
	struct dump_arg *d = arg;

	d->mark = d->skb->len;
	return d->mark;
}

static void dump_undo(void *arg)
{
	struct dump_arg *d = arg;

	skb_trim(d->skb, d->mark);
}

static const struct srff_walk_ops srff_dump_ops = {
	.flow = dump_flow,
	.mark = dump_mark,
	.undo = dump_undo,
};

/*
 * Each message holds whole hash buckets (srff_table_walk), so a busy table
 * does not make the dump inconsistent; a resize between two messages, or a
 * change in a bucket split between two, does, and the dump says so
 * (NLM_F_DUMP_INTR: srffctl dumps again). The filters were validated and
 * parsed by the core against srff_dump_policy before the first call.
 */
static int srff_nl_dump_flows(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct srff_dump_ctx *ctx = (struct srff_dump_ctx *)cb->ctx;
	struct srff_net *sn = srff_pernet(sock_net(skb->sk));
	struct dump_arg d = { .skb = skb, .cb = cb, .band = -1,
			      .walk = &ctx->walk };
	struct srff_tracker *tr;
	struct nlattr **attrs = srff_dumpit_attrs(cb);
	int err;

	BUILD_BUG_ON(sizeof(*ctx) > sizeof(cb->ctx));

	if (attrs[SRFF_A_FILTER_BAND])
		d.band = nla_get_u8(attrs[SRFF_A_FILTER_BAND]);
	if (attrs[SRFF_A_FILTER_MIN_BYTES])
		d.min_bytes = nla_get_u64(attrs[SRFF_A_FILTER_MIN_BYTES]);

	rcu_read_lock();
	/* Disabled: no flows (and a dump that saw srff switched off and on
	 * again walks the new table from where it was).
	 */
	tr = rcu_dereference(sn->tracker);
	if (!tr) {
		rcu_read_unlock();
		return 0;
	}
	d.config = rcu_dereference(sn->config);
	err = srff_table_walk(&tr->table, &ctx->walk, &srff_dump_ops, &d);
	rcu_read_unlock();
	/* The table was resized, or a split bucket changed, since the dump
	 * began: its last message, even NLMSG_DONE alone, says so too (the
	 * core calls nl_dump_check_consistent() on it).
	 */
	dump_seq(cb, &ctx->walk);

	if (err == -EMSGSIZE && skb->len)
		return skb->len;	/* full: resume at the cursor */
	if (err)
		return err;
	return skb->len;		/* 0 when done ends the dump */
}

/* ---- family ----------------------------------------------------------- */

static const struct genl_ops srff_genl_ops[] = {
	{
		.cmd = SRFF_CMD_GET_CONFIG,
		.doit = srff_nl_get_config,
	},
	{
		.cmd = SRFF_CMD_SET_CONFIG,
		.doit = srff_nl_set_config,
		.policy = srff_set_policy,
		.maxattr = ARRAY_SIZE(srff_set_policy) - 1,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = SRFF_CMD_GET_STATS,
		.doit = srff_nl_get_stats,
	},
	{
		.cmd = SRFF_CMD_GET_FLOWS,
		.dumpit = srff_nl_dump_flows,
		.policy = srff_dump_policy,
		.maxattr = ARRAY_SIZE(srff_dump_policy) - 1,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = SRFF_CMD_FLUSH_FLOWS,
		.doit = srff_nl_flush,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = SRFF_CMD_GET_SIZES,
		.doit = srff_nl_get_sizes,
	},
};

static struct genl_family srff_genl_family __ro_after_init = {
	.name = SRFF_GENL_NAME,
	.version = SRFF_GENL_VERSION,
	.netnsok = true,
	/* No genl_mutex around requests: a flush of a million flows must not
	 * stall every other generic netlink family. srff's handlers take
	 * only their own locks (config_lock, bucket locks) or RCU.
	 */
	.parallel_ops = true,
	.module = THIS_MODULE,
	.ops = srff_genl_ops,
	.n_ops = ARRAY_SIZE(srff_genl_ops),
	/* resv_start_op 0: every command strictly validated, and commands
	 * without a policy refuse every attribute.
	 */
};

int __init srff_genl_init(void)
{
	return genl_register_family(&srff_genl_family);
}

void srff_genl_uninit(void)
{
	genl_unregister_family(&srff_genl_family);
}
