// SPDX-License-Identifier: GPL-2.0
/*
 * libnl-genl-3 plumbing: one socket to the "srff" family, requests with
 * their replies, acks and extended-ack errors, and dumps that are retried
 * when the kernel flags them inconsistent (NLM_F_DUMP_INTR).
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

#define DUMP_RETRIES 10

static struct nl_sock *sk;
static int family;

int srff_nl_open(void)
{
	int one = 1;

	sk = nl_socket_alloc();
	if (!sk) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return EXIT_ERROR;
	}
	if (genl_connect(sk)) {
		fprintf(stderr, "%s: cannot open a generic netlink socket\n", prog);
		return EXIT_ERROR;
	}
	/* The kernel's own words on a rejected request, without the echo. */
	setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	nl_socket_enable_msg_peek(sk);
	family = genl_ctrl_resolve(sk, SRFF_GENL_NAME);
	if (family < 0) {
		fprintf(stderr, "%s: srff kernel module not loaded (no generic netlink family '%s'): try 'modprobe srff'\n",
			prog, SRFF_GENL_NAME);
		return EXIT_NOMODULE;
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
	int err;		/* 1 while waiting, then 0 or -errno */
	int cb_err;		/* first non-zero return of cb */
	bool intr;		/* a message carried NLM_F_DUMP_INTR */
	char msg[256];		/* extended-ack message */
};

static int valid_cb(struct nl_msg *m, void *arg)
{
	struct req *r = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(m);
	struct nlattr *tb[SRFF_A_MAX + 1];

	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		r->intr = true;
	if (genlmsg_parse(nlh, 0, tb, SRFF_A_MAX, NULL) < 0) {
		r->cb_err = EXIT_ERROR;
		return NL_SKIP;
	}
	if (r->cb && !r->cb_err)
		r->cb_err = r->cb(tb, r->arg);
	return NL_OK;
}

static int error_cb(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct req *r = arg;
	struct nlmsghdr *nlh = (struct nlmsghdr *)e - 1;
	int ack_len = sizeof(*nlh) + sizeof(int) + sizeof(*nlh);
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];

	(void)nla;
	r->err = e->error;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return NL_STOP;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		ack_len += e->msg.nlmsg_len - sizeof(*nlh);
	if ((int)nlh->nlmsg_len <= ack_len)
		return NL_STOP;
	if (nla_parse(tb, NLMSGERR_ATTR_MAX, (struct nlattr *)((char *)nlh + ack_len),
		      nlh->nlmsg_len - ack_len, NULL))
		return NL_STOP;
	if (tb[NLMSGERR_ATTR_MSG])
		snprintf(r->msg, sizeof(r->msg), "%s", (char *)nla_data(tb[NLMSGERR_ATTR_MSG]));
	return NL_STOP;
}

static int finish_cb(struct nl_msg *m, void *arg)
{
	struct req *r = arg;

	(void)m;
	r->err = 0;
	return NL_SKIP;
}

static int ack_cb(struct nl_msg *m, void *arg)
{
	struct req *r = arg;

	(void)m;
	r->err = 0;
	return NL_STOP;
}

/* Exit code for a kernel error, with its message printed. */
static int report(const struct req *r)
{
	int e = -r->err;

	if (r->msg[0])
		fprintf(stderr, "%s: kernel: %s (%s)\n", prog, r->msg, strerror(e));
	else
		fprintf(stderr, "%s: kernel: %s\n", prog, strerror(e));
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
		return -ENOMEM;
	}
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, valid_cb, r);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, finish_cb, r);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, ack_cb, r);
	nl_cb_err(cb, NL_CB_CUSTOM, error_cb, r);

	r->err = 1;
	ret = nl_send_auto(sk, msg);
	nlmsg_free(msg);
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

int srff_dump(uint8_t cmd, int (*cb)(struct nlattr **tb, void *arg),
	      void (*reset)(void *arg), void *arg)
{
	for (int i = 0; i < DUMP_RETRIES; i++) {
		struct req r = { .cb = cb, .arg = arg };
		struct nl_msg *msg = srff_msg(cmd, NLM_F_DUMP);

		if (!msg) {
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
		reset(arg);	/* the table changed under the dump: again */
	}
	fprintf(stderr, "%s: the flow table kept changing during %d dumps; try again\n",
		prog, DUMP_RETRIES);
	return EXIT_ERROR;
}

static int list_get(struct nlattr *nest, void *out, size_t size, unsigned int max,
		    unsigned int *n)
{
	struct nlattr *a;
	int rem;

	*n = 0;
	nla_for_each_nested(a, nest, rem) {
		if (*n == max)
			return -1;
		if (size == 8)
			((uint64_t *)out)[*n] = nla_get_u64(a);
		else if (size == 4)
			((uint32_t *)out)[*n] = nla_get_u32(a);
		else
			((uint16_t *)out)[*n] = nla_get_u16(a);
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
	list_get(tb[SRFF_A_THRESHOLDS], c->thresholds, 8, SRFF_MAX_THRESHOLDS, &c->nthresholds);
	list_get(tb[SRFF_A_PRIORITIES], c->priorities, 4, SRFF_MAX_BANDS, &c->npriorities);
	if (tb[SRFF_A_TOP_PORTS])
		list_get(tb[SRFF_A_TOP_PORTS], c->top_ports, 2, SRFF_MAX_TOP_PORTS, &c->ntop_ports);
#define GET(attr, field, bits) if (tb[attr]) c->field = nla_get_u##bits(tb[attr])
	GET(SRFF_A_CLASSID_MAJOR, classid_major, 16);
	GET(SRFF_A_IDLE_TIMEOUT_MS, idle_timeout_ms, 32);
	GET(SRFF_A_GC_INTERVAL_MS, gc_interval_ms, 32);
	GET(SRFF_A_MAX_FLOWS, max_flows, 32);
	GET(SRFF_A_UDP_POLICY, udp_policy, 8);
	GET(SRFF_A_UNTRACKED_PRIORITY, untracked_priority, 32);
	GET(SRFF_A_APP_PRIORITY, app_priority, 8);
	GET(SRFF_A_IDLE_RESET_MS, idle_reset_ms, 32);
#undef GET
	return 0;
}

int srff_get_config(struct config *c)
{
	memset(c, 0, sizeof(*c));
	return srff_request(srff_msg(SRFF_CMD_GET_CONFIG, 0), config_cb, c);
}
