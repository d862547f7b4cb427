// SPDX-License-Identifier: GPL-2.0
/*
 * libnl-genl-3 plumbing: one socket to the "srff" family, requests with
 * their replies, acks and extended-ack errors, and dumps that are retried
 * when the kernel flags them inconsistent (NLM_F_DUMP_INTR), then given
 * with iproute2's warning.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netlink.h>
#include <netlink/netlink.h>
#include <netlink/genl/genl.h>
#include <netlink/genl/ctrl.h>
#include <netlink/msg.h>
#include <netlink/attr.h>

#include "srffctl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

#define DUMP_RETRIES 3

static struct nl_sock *sk;
static int family;

int srff_nl_open(void)
{
	int one = 1, err;

	sk = nl_socket_alloc();
	if (!sk) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return EXIT_ERROR;
	}
	err = genl_connect(sk);
	if (err) {
		fprintf(stderr, "%s: cannot open a generic netlink socket: %s\n",
			prog, nl_geterror(err));
		return EXIT_ERROR;
	}
	/* The kernel's own words on a rejected request, without the echo. */
	setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	nl_socket_enable_msg_peek(sk);
	family = genl_ctrl_resolve(sk, SRFF_GENL_NAME);
	if (family == -NLE_OBJ_NOTFOUND) {
		fprintf(stderr, "%s: srff: kernel module not loaded (no generic netlink family '%s')\n",
			prog, SRFF_GENL_NAME);
		return EXIT_NOMODULE;
	}
	if (family < 0) {
		fprintf(stderr, "%s: resolving the generic netlink family '%s': %s\n",
			prog, SRFF_GENL_NAME, nl_geterror(family));
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

void srff_nl_close(void)
{
	if (sk)
		nl_socket_free(sk);
	sk = NULL;
}

struct nl_msg *srff_msg(uint8_t cmd, int flags)
{
	struct nl_msg *msg;
	int err;

	/* Opened on first use, so usage errors come first. */
	if (!sk) {
		err = srff_nl_open();
		if (err)
			exit(err);
	}
	msg = nlmsg_alloc();

	if (msg && !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0,
				flags, cmd, SRFF_GENL_VERSION)) {
		nlmsg_free(msg);
		msg = NULL;
	}
	return msg;
}

struct req {
	int (*cb)(struct nlattr **tb, void *arg);
	void *arg;
	const struct nlmsghdr *sent;	/* the request, to place OFFS in */
	int err;		/* 1 while waiting, then 0 or -errno */
	int cb_err;		/* first non-zero return of cb */
	bool intr;		/* a message carried NLM_F_DUMP_INTR */
	char msg[256];		/* extended-ack message */
	char where[64];		/* the setting it is about, if known */
};

/* Lengths checked before any nla_get_*() reads a reply. */
static struct nla_policy reply_policy[SRFF_A_MAX + 1] = {
	[SRFF_A_THRESHOLDS] = { .type = NLA_NESTED },
	[SRFF_A_PRIORITIES] = { .type = NLA_NESTED },
	[SRFF_A_CLASSID_MAJOR] = { .type = NLA_U16 },
	[SRFF_A_IDLE_TIMEOUT_MS] = { .type = NLA_U32 },
	[SRFF_A_GC_INTERVAL_MS] = { .type = NLA_U32 },
	[SRFF_A_MAX_FLOWS] = { .type = NLA_U32 },
	[SRFF_A_UDP_POLICY] = { .type = NLA_U8 },
	[SRFF_A_TOP_PORTS] = { .type = NLA_NESTED },
	[SRFF_A_UNTRACKED_PRIORITY] = { .type = NLA_U32 },
	[SRFF_A_APP_PRIORITY] = { .type = NLA_U8 },
	[SRFF_A_IDLE_RESET_MS] = { .type = NLA_U32 },
	[SRFF_A_STATS] = { .type = NLA_NESTED },
	[SRFF_A_FLOW] = { .type = NLA_NESTED },
	[SRFF_A_SIZES] = { .type = NLA_NESTED },
	[SRFF_A_AUTO_THRESHOLDS] = { .type = NLA_U8 },
	[SRFF_A_ENABLED] = { .type = NLA_U8 },
	[SRFF_A_MARK] = { .type = NLA_U8 },
	[SRFF_A_DSCP_MAP] = { .type = NLA_NESTED },
	[SRFF_A_DSCP_OVERRIDE] = { .type = NLA_U8 },
};

static int valid_cb(struct nl_msg *m, void *arg)
{
	struct req *r = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(m);
	struct nlattr *tb[SRFF_A_MAX + 1];

	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		r->intr = true;
	if (genlmsg_parse(nlh, 0, tb, SRFF_A_MAX, reply_policy) < 0) {
		if (!r->cb_err)
			fprintf(stderr, "%s: malformed reply from the kernel\n", prog);
		r->cb_err = EXIT_ERROR;
		return NL_SKIP;
	}
	if (r->cb && !r->cb_err)
		r->cb_err = r->cb(tb, r->arg);
	return NL_OK;
}

/*
 * Extended-ack TLVs (NLMSGERR_ATTR_*) are numbered here rather than taken
 * from <linux/netlink.h>, which may predate MISS_TYPE/MISS_NEST (6.0).
 */
enum {
	EXTACK_MSG = 1,
	EXTACK_OFFS = 2,
	EXTACK_MISS_TYPE = 5,
	EXTACK_MISS_NEST = 6,
	EXTACK_MAX = 6,
};

/* The `set` key each top-level attribute comes from. */
static const char *const attr_keys[SRFF_A_MAX + 1] = {
	[SRFF_A_THRESHOLDS] = "thresholds",
	[SRFF_A_PRIORITIES] = "priorities",
	[SRFF_A_CLASSID_MAJOR] = "classid",
	[SRFF_A_IDLE_TIMEOUT_MS] = "idle-timeout",
	[SRFF_A_GC_INTERVAL_MS] = "gc-interval",
	[SRFF_A_MAX_FLOWS] = "max-flows",
	[SRFF_A_UDP_POLICY] = "udp",
	[SRFF_A_TOP_PORTS] = "top-ports",
	[SRFF_A_UNTRACKED_PRIORITY] = "untracked-priority",
	[SRFF_A_APP_PRIORITY] = "app-priority",
	[SRFF_A_IDLE_RESET_MS] = "idle-reset",
	[SRFF_A_AUTO_THRESHOLDS] = "thresholds",
	[SRFF_A_ENABLED] = "enabled",
	[SRFF_A_MARK] = "mark",
	[SRFF_A_DSCP_MAP] = "dscp-map",
	[SRFF_A_DSCP_OVERRIDE] = "dscp-override",
};

static const char *attr_key(int type)
{
	if (type > 0 && type <= SRFF_A_MAX && attr_keys[type])
		return attr_keys[type];
	return NULL;
}

/*
 * Name what NLMSGERR_ATTR_OFFS points at in our request: a setting
 * ("idle-timeout") or one entry of a list ("top-ports, entry 2").
 */
static void describe_offset(const struct nlmsghdr *req, uint32_t offs,
			    char *buf, size_t len)
{
	const size_t hdr = NLMSG_HDRLEN + GENL_HDRLEN;
	struct nlattr *a, *item;
	int rem, irem;

	if (!req || offs < hdr || offs >= req->nlmsg_len)
		return;
	nla_for_each_attr(a, (struct nlattr *)((char *)req + hdr),
			  req->nlmsg_len - hdr, rem) {
		uint32_t at = (char *)a - (char *)req;
		const char *key = attr_key(nla_type(a));
		unsigned int i = 0;

		if (offs < at || offs >= at + NLA_ALIGN(a->nla_len))
			continue;
		if (!key)
			return;
		if (offs == at || !(a->nla_type & NLA_F_NESTED)) {
			snprintf(buf, len, "%s", key);
			return;
		}
		nla_for_each_nested(item, a, irem) {
			i++;
			if ((uint32_t)((char *)item - (char *)req) == offs) {
				snprintf(buf, len, "%s, entry %u", key, i);
				return;
			}
		}
		snprintf(buf, len, "%s", key);
		return;
	}
}

/*
 * Parse the TLVs after a struct nlmsgerr (NETLINK_EXT_ACK): the message,
 * and where in our request the problem is. With NETLINK_CAP_ACK the
 * request is not echoed back (NLM_F_CAPPED); without it, it is skipped.
 */
static void parse_ext_ack(const struct nlmsghdr *nlh, struct req *r)
{
	const struct nlmsgerr *e = (const struct nlmsgerr *)((const char *)nlh + NLMSG_HDRLEN);
	struct nlattr *tb[EXTACK_MAX + 1];
	uint32_t ack_len = NLMSG_HDRLEN + sizeof(*e);

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS) || nlh->nlmsg_len < ack_len)
		return;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		ack_len += e->msg.nlmsg_len - NLMSG_HDRLEN;
	if (nlh->nlmsg_len <= ack_len)
		return;
	if (nla_parse(tb, EXTACK_MAX, (struct nlattr *)((char *)nlh + ack_len),
		      nlh->nlmsg_len - ack_len, NULL))
		return;
	if (tb[EXTACK_MSG])
		snprintf(r->msg, sizeof(r->msg), "%.*s", nla_len(tb[EXTACK_MSG]),
			 (char *)nla_data(tb[EXTACK_MSG]));
	if (tb[EXTACK_OFFS] && nla_len(tb[EXTACK_OFFS]) == 4)
		describe_offset(r->sent, nla_get_u32(tb[EXTACK_OFFS]),
				r->where, sizeof(r->where));
	if (tb[EXTACK_MISS_TYPE] && nla_len(tb[EXTACK_MISS_TYPE]) == 4) {
		int type = nla_get_u32(tb[EXTACK_MISS_TYPE]);

		if (attr_key(type))
			snprintf(r->where, sizeof(r->where), "missing %s", attr_key(type));
		else
			snprintf(r->where, sizeof(r->where), "missing attribute %d", type);
	}
}

static int error_cb(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct req *r = arg;

	(void)nla;
	r->err = e->error;
	parse_ext_ack((struct nlmsghdr *)e - 1, r);
	return NL_STOP;
}

/*
 * NLMSG_DONE ends a dump; a dump that failed part-way says so in it: a
 * negative errno, then (NLM_F_ACK_TLVS) extended-ack attributes.
 */
static int finish_cb(struct nl_msg *m, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(m);
	struct req *r = arg;
	int error = 0;

	if (nlmsg_datalen(nlh) >= (int)sizeof(error))
		memcpy(&error, nlmsg_data(nlh), sizeof(error));
	r->err = error < 0 ? error : 0;
	if (error < 0 && (nlh->nlmsg_flags & NLM_F_ACK_TLVS) &&
	    nlmsg_datalen(nlh) > (int)sizeof(error)) {
		struct nlattr *tb[EXTACK_MAX + 1];

		if (!nla_parse(tb, EXTACK_MAX, (struct nlattr *)((char *)nlmsg_data(nlh) + sizeof(error)),
			       nlmsg_datalen(nlh) - sizeof(error), NULL) && tb[EXTACK_MSG])
			snprintf(r->msg, sizeof(r->msg), "%.*s", nla_len(tb[EXTACK_MSG]),
				 (char *)nla_data(tb[EXTACK_MSG]));
	}
	return NL_SKIP;
}

/* A success ack may still carry a warning from the kernel. */
static int ack_cb(struct nl_msg *m, void *arg)
{
	struct req *r = arg;

	r->err = 0;
	parse_ext_ack(nlmsg_hdr(m), r);
	if (r->msg[0])
		fprintf(stderr, "%s: kernel: warning: %s%s%s\n", prog, r->msg,
			r->where[0] ? " at " : "", r->where);
	return NL_STOP;
}

/* Exit code for a kernel error, with its message printed. */
static int report(const struct req *r)
{
	int e = -r->err;

	if (r->msg[0])
		fprintf(stderr, "%s: kernel: %s (%s)", prog, r->msg, strerror(e));
	else
		fprintf(stderr, "%s: kernel: %s", prog, strerror(e));
	if (r->where[0])
		fprintf(stderr, " at %s", r->where);
	fputc('\n', stderr);
	if (e == EPERM)
		fprintf(stderr, "%s: changing srff, or listing its flows, needs CAP_NET_ADMIN\n", prog);
	return e == EPERM ? EXIT_PERM : EXIT_ERROR;
}

static int run(struct nl_msg *msg, struct req *r)
{
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int ret;

	if (!cb) {
		nlmsg_free(msg);
		fprintf(stderr, "%s: out of memory\n", prog);
		return -ENOMEM;
	}
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, valid_cb, r);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, finish_cb, r);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, ack_cb, r);
	nl_cb_err(cb, NL_CB_CUSTOM, error_cb, r);

	r->err = 1;
	r->sent = nlmsg_hdr(msg);
	ret = nl_send_auto(sk, msg);
	while (ret >= 0 && r->err > 0) {
		ret = nl_recvmsgs(sk, cb);
		/* An inconsistent dump is read to its end all the same: a
		 * retry must not meet the rest of this one in the socket.
		 */
		if (ret == -NLE_DUMP_INTR) {
			r->intr = true;
			ret = 0;
		}
	}
	nl_cb_put(cb);
	r->sent = NULL;
	nlmsg_free(msg);
	if (ret < 0 && r->err > 0) {
		fprintf(stderr, "%s: netlink: %s\n", prog, nl_geterror(ret));
		return -EIO;
	}
	return 0;
}

int srff_request(struct nl_msg *msg, int (*cb)(struct nlattr **tb, void *arg),
		 void *arg)
{
	struct req r = { .cb = cb, .arg = arg };

	if (!msg) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return EXIT_ERROR;
	}
	nlmsg_hdr(msg)->nlmsg_flags |= NLM_F_ACK;
	if (run(msg, &r))
		return EXIT_ERROR;
	if (r.err < 0)
		return report(&r);
	return r.cb_err;
}

int srff_dump(uint8_t cmd, int (*fill)(struct nl_msg *msg, void *arg),
	      void *fill_arg, int (*cb)(struct nlattr **tb, void *arg),
	      void (*reset)(void *arg), void *arg)
{
	for (int i = 0; ; i++) {
		struct req r = { .cb = cb, .arg = arg };
		struct nl_msg *msg = srff_msg(cmd, NLM_F_DUMP);

		if (!msg || (fill && fill(msg, fill_arg))) {
			nlmsg_free(msg);
			fprintf(stderr, "%s: out of memory\n", prog);
			return EXIT_ERROR;
		}
		if (run(msg, &r))
			return EXIT_ERROR;
		if (r.err < 0)
			return report(&r);
		if (r.cb_err)
			return r.cb_err;
		if (!r.intr)
			return EXIT_OK;
		/* Only a hash bucket too long for one message, changed while
		 * it was being listed, flags a dump: rare, so try again, then
		 * give what was read, as ip and tc do.
		 */
		if (i + 1 == DUMP_RETRIES) {
			fprintf(stderr, "Dump was interrupted and may be inconsistent.\n");
			return EXIT_OK;
		}
		reset(arg);
	}
}

static int list_get(struct nlattr *nest, void *out, size_t size, unsigned int max,
		    unsigned int *n)
{
	struct nlattr *a;
	int rem;

	*n = 0;
	nla_for_each_nested(a, nest, rem) {
		if (nla_type(a) != SRFF_A_ITEM)
			continue;	/* e.g. padding before a u64 */
		if (*n == max || nla_len(a) != (int)size)
			return -1;
		if (size == 8)
			((uint64_t *)out)[*n] = nla_get_u64(a);
		else if (size == 4)
			((uint32_t *)out)[*n] = nla_get_u32(a);
		else if (size == 2)
			((uint16_t *)out)[*n] = nla_get_u16(a);
		else
			((uint8_t *)out)[*n] = nla_get_u8(a);
		(*n)++;
	}
	return 0;
}

static int config_cb(struct nlattr **tb, void *arg)
{
	struct config *c = arg;

	if (!tb[SRFF_A_THRESHOLDS] || !tb[SRFF_A_PRIORITIES] || !tb[SRFF_A_MAX_FLOWS]) {
		fprintf(stderr, "%s: incomplete configuration from the kernel\n", prog);
		return EXIT_ERROR;
	}
	if (list_get(tb[SRFF_A_THRESHOLDS], c->thresholds, 8, LIST_MAX, &c->nthresholds) ||
	    list_get(tb[SRFF_A_PRIORITIES], c->priorities, 4, LIST_MAX, &c->npriorities) ||
	    (tb[SRFF_A_TOP_PORTS] &&
	     list_get(tb[SRFF_A_TOP_PORTS], c->top_ports, 2, LIST_MAX, &c->ntop_ports)) ||
	    (tb[SRFF_A_DSCP_MAP] &&
	     list_get(tb[SRFF_A_DSCP_MAP], c->dscp_map, 1, SRFF_MAX_BANDS, &c->ndscp_map))) {
		fprintf(stderr, "%s: malformed list in the kernel's configuration\n", prog);
		return EXIT_ERROR;
	}
#define GET(attr, field, bits) if (tb[attr]) c->field = nla_get_u##bits(tb[attr])
	GET(SRFF_A_CLASSID_MAJOR, classid_major, 16);
	GET(SRFF_A_IDLE_TIMEOUT_MS, idle_timeout_ms, 32);
	GET(SRFF_A_GC_INTERVAL_MS, gc_interval_ms, 32);
	GET(SRFF_A_MAX_FLOWS, max_flows, 32);
	GET(SRFF_A_UDP_POLICY, udp_policy, 8);
	GET(SRFF_A_UNTRACKED_PRIORITY, untracked_priority, 32);
	GET(SRFF_A_APP_PRIORITY, app_priority, 8);
	GET(SRFF_A_IDLE_RESET_MS, idle_reset_ms, 32);
	GET(SRFF_A_AUTO_THRESHOLDS, auto_thresholds, 8);
	c->enabled = 1;		/* a module without the attribute: always on */
	GET(SRFF_A_ENABLED, enabled, 8);
	/* A module without DSCP marking sends none of these: ndscp_map 0. */
	GET(SRFF_A_MARK, mark, 8);
	GET(SRFF_A_DSCP_OVERRIDE, dscp_override, 8);
#undef GET
	return 0;
}

int srff_get_config(struct config *c)
{
	memset(c, 0, sizeof(*c));
	return srff_request(srff_msg(SRFF_CMD_GET_CONFIG, 0), config_cb, c);
}
