// SPDX-License-Identifier: GPL-2.0
/*
 * show, set, set-thresholds, save, apply. A change is always one
 * SET_CONFIG request carrying only what was given: the kernel checks the
 * result whole and swaps it in atomically, or changes nothing.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "srffctl.h"

static void put_list(struct nl_msg *msg, int type, const void *v, size_t size,
		     unsigned int n)
{
	struct nlattr *nest;

	/* An empty list (top-ports none) is an empty nest, which means
	 * "clear". nla_nest_end() would trim it away, so put it by hand.
	 */
	if (!n) {
		nla_put(msg, type | NLA_F_NESTED, 0, NULL);
		return;
	}
	nest = nla_nest_start(msg, type | NLA_F_NESTED);

	for (unsigned int i = 0; i < n; i++) {
		if (size == 8)
			nla_put_u64(msg, SRFF_A_ITEM, ((const uint64_t *)v)[i]);
		else if (size == 4)
			nla_put_u32(msg, SRFF_A_ITEM, ((const uint32_t *)v)[i]);
		else
			nla_put_u16(msg, SRFF_A_ITEM, ((const uint16_t *)v)[i]);
	}
	nla_nest_end(msg, nest);
}

static int send_config(const struct config *c)
{
	struct nl_msg *msg = srff_msg(SRFF_CMD_SET_CONFIG, 0);

	if (!msg)
		return srff_request(NULL, NULL, NULL);
	if (c->has & CF_THRESHOLDS)
		put_list(msg, SRFF_A_THRESHOLDS, c->thresholds, 8, c->nthresholds);
	if (c->has & CF_PRIORITIES)
		put_list(msg, SRFF_A_PRIORITIES, c->priorities, 4, c->npriorities);
	if (c->has & CF_TOP_PORTS)
		put_list(msg, SRFF_A_TOP_PORTS, c->top_ports, 2, c->ntop_ports);
	if (c->has & CF_CLASSID)
		nla_put_u16(msg, SRFF_A_CLASSID_MAJOR, c->classid_major);
	if (c->has & CF_IDLE_TIMEOUT)
		nla_put_u32(msg, SRFF_A_IDLE_TIMEOUT_MS, c->idle_timeout_ms);
	if (c->has & CF_GC_INTERVAL)
		nla_put_u32(msg, SRFF_A_GC_INTERVAL_MS, c->gc_interval_ms);
	if (c->has & CF_MAX_FLOWS)
		nla_put_u32(msg, SRFF_A_MAX_FLOWS, c->max_flows);
	if (c->has & CF_UDP)
		nla_put_u8(msg, SRFF_A_UDP_POLICY, c->udp_policy);
	if (c->has & CF_UNTRACKED)
		nla_put_u32(msg, SRFF_A_UNTRACKED_PRIORITY, c->untracked_priority);
	if (c->has & CF_APP_PRIO)
		nla_put_u8(msg, SRFF_A_APP_PRIORITY, c->app_priority);
	if (c->has & CF_IDLE_RESET)
		nla_put_u32(msg, SRFF_A_IDLE_RESET_MS, c->idle_reset_ms);
	return srff_request(msg, NULL, NULL);
}

static const char *prio_str(uint32_t p, char *buf, size_t len)
{
	if (p >> 16)
		snprintf(buf, len, "%x:%x", p >> 16, p & 0xffff);
	else
		snprintf(buf, len, "%u", p);
	return buf;
}

/*
 * The configuration as KEY VALUE lines: `show` with units for people,
 * `save` (exact) for `apply`. Both parse back with apply.
 */
static void print_config(const struct config *c, bool exact)
{
	char b[64];
	unsigned int i;

	open_json_object(NULL);
	print_text("thresholds");
	open_json_array(PRINT_JSON, "thresholds");
	for (i = 0; i < c->nthresholds; i++) {
		print_uint(PRINT_JSON, NULL, NULL, c->thresholds[i]);
		print_string(PRINT_FP, NULL, " %s", exact ?
			     (snprintf(b, sizeof(b), "%" PRIu64, c->thresholds[i]), b) :
			     fmt_size(c->thresholds[i], b, sizeof(b)));
	}
	close_json_array(PRINT_JSON, NULL);
	print_text("\n");

	print_text("priorities");
	open_json_array(PRINT_JSON, "priorities");
	for (i = 0; i < c->npriorities; i++) {
		print_uint(PRINT_JSON, NULL, NULL, c->priorities[i]);
		print_string(PRINT_FP, NULL, i ? ",%s" : " %s", prio_str(c->priorities[i], b, sizeof(b)));
	}
	close_json_array(PRINT_JSON, NULL);
	print_text("\n");

	print_uint(PRINT_JSON, "classid_major", NULL, c->classid_major);
	if (c->classid_major)
		print_uint(PRINT_FP, NULL, "classid %" PRIx64 ":\n", c->classid_major);
	else
		print_text("classid none\n");

	print_uint(PRINT_JSON, "idle_timeout_ms", NULL, c->idle_timeout_ms);
	print_string(PRINT_FP, NULL, "idle-timeout %s\n", exact ?
		     (snprintf(b, sizeof(b), "%ums", c->idle_timeout_ms), b) :
		     fmt_duration(c->idle_timeout_ms, b, sizeof(b)));
	print_uint(PRINT_JSON, "gc_interval_ms", NULL, c->gc_interval_ms);
	print_string(PRINT_FP, NULL, "gc-interval %s\n", exact ?
		     (snprintf(b, sizeof(b), "%ums", c->gc_interval_ms), b) :
		     fmt_duration(c->gc_interval_ms, b, sizeof(b)));
	print_uint(PRINT_ANY, "max_flows", "max-flows %" PRIu64 "\n", c->max_flows);
	print_string(PRINT_ANY, "udp_policy", "udp %s\n",
		     c->udp_policy <= SRFF_UDP_MAX ? udp_policy_names[c->udp_policy] : "?");

	print_text("top-ports");
	open_json_array(PRINT_JSON, "top_ports");
	if (!c->ntop_ports)
		print_text(" none");
	for (i = 0; i < c->ntop_ports; i++)
		print_uint(PRINT_ANY, NULL, i ? ",%" PRIu64 : " %" PRIu64, c->top_ports[i]);
	close_json_array(PRINT_JSON, NULL);
	print_text("\n");

	print_uint(PRINT_JSON, "untracked_priority", NULL, c->untracked_priority);
	print_string(PRINT_FP, NULL, "untracked-priority %s\n",
		     prio_str(c->untracked_priority, b, sizeof(b)));
	print_string(PRINT_ANY, "app_priority", "app-priority %s\n",
		     c->app_priority <= SRFF_APP_PRIO_MAX ? app_prio_names[c->app_priority] : "?");
	print_uint(PRINT_JSON, "idle_reset_ms", NULL, c->idle_reset_ms);
	if (c->idle_reset_ms)
		print_string(PRINT_FP, NULL, "idle-reset %s\n", exact ?
			     (snprintf(b, sizeof(b), "%ums", c->idle_reset_ms), b) :
			     fmt_duration(c->idle_reset_ms, b, sizeof(b)));
	else
		print_text("idle-reset off\n");
	close_json_object();
}

int cmd_show(int argc, char **argv)
{
	struct config c;
	int err;

	(void)argv;
	if (argc > 1)
		usage_error("show takes no arguments");
	err = srff_get_config(&c);
	if (!err)
		print_config(&c, false);
	return err;
}

int cmd_save(int argc, char **argv)
{
	struct config c;
	int err;

	(void)argv;
	if (argc > 1)
		usage_error("save takes no arguments");
	if (is_json())
		usage_error("save writes an apply file; use 'show -j' for JSON");
	err = srff_get_config(&c);
	if (!err) {
		print_text("# srff configuration, for 'srffctl apply'\n");
		print_config(&c, true);
	}
	return err;
}

int cmd_set(int argc, char **argv)
{
	struct config c = { 0 };
	char err[256];

	if (argc < 3 || argc % 2 == 0)
		usage_error("set needs KEY VALUE pairs");
	for (int i = 1; i < argc; i += 2) {
		if (config_set_key(&c, argv[i], argv[i + 1], err, sizeof(err)))
			usage_error("%s", err);
	}
	return send_config(&c);
}

int cmd_set_thresholds(int argc, char **argv)
{
	struct config c = { 0 };
	char err[256];
	int n = argc - 1;

	/* set-thresholds T... [priorities P,P,... | classid MAJOR:]: a new
	 * number of bands needs its priorities in the same atomic request.
	 */
	if (n >= 2 && (!strcmp(argv[argc - 2], "priorities") || !strcmp(argv[argc - 2], "classid"))) {
		if (config_set_key(&c, argv[argc - 2], argv[argc - 1], err, sizeof(err)))
			usage_error("%s", err);
		n -= 2;
	}
	if (config_set_thresholds(&c, argv + 1, n, err, sizeof(err)))
		usage_error("%s", err);
	return send_config(&c);
}

int cmd_apply(int argc, char **argv)
{
	struct config c = { 0 };
	char err[512];
	FILE *f;
	int ret;

	if (argc != 2)
		usage_error("apply needs a FILE (or - for standard input)");
	f = strcmp(argv[1], "-") ? fopen(argv[1], "r") : stdin;
	if (!f) {
		fprintf(stderr, "%s: %s: %s\n", prog, argv[1], strerror(errno));
		return EXIT_ERROR;
	}
	ret = config_parse_file(f, strcmp(argv[1], "-") ? argv[1] : "<stdin>", &c,
				err, sizeof(err));
	if (f != stdin)
		fclose(f);
	if (ret) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return EXIT_USAGE;
	}
	return send_config(&c);
}
