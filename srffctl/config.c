// SPDX-License-Identifier: GPL-2.0
/*
 * show, set, set-thresholds, save, apply, setconf. A change is always one
 * SET_CONFIG request carrying only what was given: the kernel checks the
 * result whole and swaps it in atomically, or changes nothing. Parsing and
 * printing of settings live in settings.c.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/sysinfo.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "srffctl.h"

/* A list as a nest of SRFF_A_ITEM; 0, or -1 if the message is full. */
static int put_list(struct nl_msg *msg, int type, const void *v, size_t size,
		    unsigned int n)
{
	struct nlattr *nest;
	int err = 0;

	/* An empty list (top-ports none) is an empty nest, which means
	 * "clear". nla_nest_end() would trim it away, so put it by hand.
	 */
	if (!n)
		return nla_put(msg, type | NLA_F_NESTED, 0, NULL) ? -1 : 0;
	nest = nla_nest_start(msg, type | NLA_F_NESTED);
	if (!nest)
		return -1;
	for (unsigned int i = 0; i < n && !err; i++) {
		if (size == 8)
			err = nla_put_u64(msg, SRFF_A_ITEM, ((const uint64_t *)v)[i]);
		else if (size == 4)
			err = nla_put_u32(msg, SRFF_A_ITEM, ((const uint32_t *)v)[i]);
		else if (size == 2)
			err = nla_put_u16(msg, SRFF_A_ITEM, ((const uint16_t *)v)[i]);
		else
			err = nla_put_u8(msg, SRFF_A_ITEM, ((const uint8_t *)v)[i]);
	}
	nla_nest_end(msg, nest);
	return err ? -1 : 0;
}

/* One SET_CONFIG with exactly the attributes the user gave. */
static int send_config(const struct config *c)
{
	struct nl_msg *msg = srff_msg(SRFF_CMD_SET_CONFIG, 0);
	int err = 0;

	if (!msg)
		return srff_request(NULL, NULL, NULL);
	if (c->has & CF_THRESHOLDS)
		err |= put_list(msg, SRFF_A_THRESHOLDS, c->thresholds, 8, c->nthresholds);
	if (c->has & CF_PRIORITIES)
		err |= put_list(msg, SRFF_A_PRIORITIES, c->priorities, 4, c->npriorities);
	if (c->has & CF_CLASSID)
		err |= nla_put_u16(msg, SRFF_A_CLASSID_MAJOR, c->classid_major);
	if (c->has & CF_IDLE_TIMEOUT)
		err |= nla_put_u32(msg, SRFF_A_IDLE_TIMEOUT_MS, c->idle_timeout_ms);
	if (c->has & CF_GC_INTERVAL)
		err |= nla_put_u32(msg, SRFF_A_GC_INTERVAL_MS, c->gc_interval_ms);
	if (c->has & CF_MAX_FLOWS)
		err |= nla_put_u32(msg, SRFF_A_MAX_FLOWS, c->max_flows);
	if (c->has & CF_UDP)
		err |= nla_put_u8(msg, SRFF_A_UDP_POLICY, c->udp_policy);
	if (c->has & CF_TOP_PORTS)
		err |= put_list(msg, SRFF_A_TOP_PORTS, c->top_ports, 2, c->ntop_ports);
	if (c->has & CF_UNTRACKED)
		err |= nla_put_u32(msg, SRFF_A_UNTRACKED_PRIORITY, c->untracked_priority);
	if (c->has & CF_APP_PRIO)
		err |= nla_put_u8(msg, SRFF_A_APP_PRIORITY, c->app_priority);
	if (c->has & CF_IDLE_RESET)
		err |= nla_put_u32(msg, SRFF_A_IDLE_RESET_MS, c->idle_reset_ms);
	if (c->has & CF_AUTO)
		err |= nla_put_u8(msg, SRFF_A_AUTO_THRESHOLDS, c->auto_thresholds);
	if (c->has & CF_ENABLED)
		err |= nla_put_u8(msg, SRFF_A_ENABLED, c->enabled);
	if (c->has & CF_MARK)
		err |= nla_put_u8(msg, SRFF_A_MARK, c->mark);
	if (c->has & CF_DSCP_MAP)
		err |= put_list(msg, SRFF_A_DSCP_MAP, c->dscp_map, 1, c->ndscp_map);
	if (c->has & CF_DSCP_OVERRIDE)
		err |= nla_put_u8(msg, SRFF_A_DSCP_OVERRIDE, c->dscp_override);
	if (err) {
		nlmsg_free(msg);
		fprintf(stderr, "%s: the request does not fit in one message\n", prog);
		return EXIT_ERROR;
	}
	return srff_request(msg, NULL, NULL);
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
		config_print(&c, false);
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
	if (!err)
		config_print(&c, true);	/* exactly what apply reads back */
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

/*
 * set-thresholds T1 [T2 ...] [KEY VALUE ...]: the sizes, then settings
 * that must change with them in the same atomic request, usually
 * "priorities P0,P1,..." (one per band) or "classid MAJOR:".
 */
int cmd_set_thresholds(int argc, char **argv)
{
	struct config c = { 0 };
	char err[256];
	int n = 1;

	if (argc > 1 && !strcmp(argv[1], "auto"))
		n = 2;
	while (n < argc && (isdigit((unsigned char)argv[n][0]) || argv[n][0] == '.'))
		n++;
	if (n == 1)
		usage_error("set-thresholds needs sizes: T1 [T2 ...] [priorities P0,P1,...]");
	for (int i = n; i < argc; i += 2) {
		if (name_index(config_keys, argv[i]) < 0)
			usage_error("set-thresholds: '%s' is neither a size nor a setting", argv[i]);
		if (i + 1 == argc)
			usage_error("set-thresholds: '%s' needs a value", argv[i]);
	}
	if (config_set_thresholds(&c, argv + 1, n - 1, err, sizeof(err)))
		usage_error("%s", err);
	for (int i = n; i < argc; i += 2) {
		if (!strcmp(argv[i], "thresholds"))
			usage_error("set-thresholds: thresholds given twice");
		if (config_set_key(&c, argv[i], argv[i + 1], err, sizeof(err)))
			usage_error("%s", err);
	}
	return send_config(&c);
}

/* Read FILE (or - for standard input) as an apply file into c: 0, or an
 * exit code with the message printed.
 */
static int read_file(const char *cmd, int argc, char **argv, struct config *c,
		     bool allow_empty)
{
	const char *name;
	char err[512];
	FILE *f;
	int ret;

	if (argc != 2)
		usage_error("%s needs a FILE (or - for standard input)", cmd);
	name = strcmp(argv[1], "-") ? argv[1] : "<stdin>";
	f = strcmp(argv[1], "-") ? fopen(argv[1], "r") : stdin;
	if (!f) {
		fprintf(stderr, "%s: %s: %s\n", prog, argv[1], strerror(errno));
		return EXIT_ERROR;
	}
	memset(c, 0, sizeof(*c));
	ret = config_parse_file(f, name, c, allow_empty, err, sizeof(err));
	if (f != stdin)
		fclose(f);
	if (ret) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return EXIT_USAGE;
	}
	return 0;
}

/* apply merges: keys not in the file stay as they are. */
int cmd_apply(int argc, char **argv)
{
	struct config c;
	int ret = read_file("apply", argc, argv, &c, false);

	return ret ? ret : send_config(&c);
}

/*
 * setconf replaces, as wg setconf does: keys not in the file go back to
 * the module's load-time defaults (its parameters in sysfs), all of it in
 * one SET_CONFIG that carries every key, so nothing of the old
 * configuration survives and nothing changes if the kernel refuses.
 */
int cmd_setconf(int argc, char **argv)
{
	struct config file, c, now;
	struct params p;
	struct sysinfo si;
	char err[512];
	int ret = read_file("setconf", argc, argv, &file, true);

	if (ret)
		return ret;
	if (access(SRFF_PARAMS_DIR, F_OK)) {
		fprintf(stderr, "%s: srff: kernel module not loaded (no %s)\n",
			prog, SRFF_PARAMS_DIR);
		return EXIT_NOMODULE;
	}
	if (params_read(SRFF_PARAMS_DIR, &p, err, sizeof(err))) {
		fprintf(stderr, "%s: setconf: the module's defaults: %s\n", prog, err);
		return EXIT_ERROR;
	}
	if (sysinfo(&si)) {
		fprintf(stderr, "%s: sysinfo: %s\n", prog, strerror(errno));
		return EXIT_ERROR;
	}
	/* DSCP marking goes back to its defaults too, where the module has
	 * it: one that predates it would refuse the whole request.
	 */
	ret = srff_get_config(&now);
	if (ret)
		return ret;
	config_setconf(&file, &p, (uint64_t)si.totalram * si.mem_unit,
		       now.ndscp_map > 0, &c);
	return send_config(&c);
}
