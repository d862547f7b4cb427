// SPDX-License-Identifier: GPL-2.0
/*
 * srffctl: show and change srff, the flow-size prioritiser, in the current
 * network namespace or, with -n NAME, in the named one (as ip -n). See
 * docs/srffctl.8.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "srffctl.h"
#include "version.h"

const char *prog = "srffctl";
static char show_cmd[] = "show";
static char *show_argv[] = { show_cmd, NULL };

static const struct {
	const char *name;
	int (*handler)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "show", cmd_show, "show the configuration" },
	{ "stats", cmd_stats, "show counters, per band and per event" },
	{ "flows", cmd_flows, "list tracked flows [sort bytes|idle|age] [proto P] [family 4|6] [addr A] [port N] [band N] [min-bytes SIZE] [limit N]" },
	{ "flush", cmd_flush, "forget every tracked flow" },
	{ "sizes", cmd_sizes, "show the sizes of the flows that ended (histogram, quantiles)" },
	{ "set-thresholds", cmd_set_thresholds, "set the byte thresholds: T1 [T2 ...] [priorities P0,P1,... | classid MAJOR:]" },
	{ "set", cmd_set, "change settings: KEY VALUE [KEY VALUE ...]" },
	{ "save", cmd_save, "print the configuration as an apply file" },
	{ "apply", cmd_apply, "apply a saved configuration: FILE or -; other keys are kept" },
	{ "setconf", cmd_setconf, "set the configuration to FILE (or -): other keys back to the module's defaults" },
	{ "help", NULL, "this text" },
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: %s [-n NETNS] [-j [-p]] [COMMAND [ARGS]]\n"
		   "With no COMMAND, show the configuration.\n\n", prog);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-15s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nset keys: thresholds T1,T2,... | priorities P0,P1,... | classid MAJOR:|none | idle-timeout DUR |\n"
		   "  gc-interval DUR | max-flows N | udp track|top|ignore | top-ports P,P,...|none |\n"
		   "  untracked-priority P | app-priority keep|override | idle-reset DUR|off |\n"
		   "  enabled on|off (off: nothing marked, nothing allocated in this namespace) |\n"
		   "  mark none|dscp | dscp-map D0,D1,... (one per band) | dscp-override on|off\n"
		   "DSCP marking (mark dscp) is for a bottleneck past this host that queues by DSCP.\n"
		   "  A DSCP: keep, 0-63 (or 0x hex), le, ef, va, cs0-cs7, af11-af43 (any case).\n"
		   "  Default map: keep in every band but the lowest, le. An application's own\n"
		   "  non-zero DSCP is kept unless dscp-override on; the ECN bits always are.\n"
		   "Sizes as tc reads them: 1500, 16k, 1.5m, 4Mb (k/kb, m/mb, g/gb = 1024^n, any case;\n"
		   "  Ki, Mi, Gi too); shown as tc shows them: 1500b, 16Kb, 4Mb.\n"
		   "DUR: 2500ms, 2.5s, 1m (a bare number is ms).\n"
		   "Options: -n NETNS the named network namespace (ip netns; or a path such as\n"
		   "  /proc/PID/ns/net), -j JSON, -p pretty JSON, -V version.\n"
		   "Exit: 0 ok, 1 rejected by the kernel, 2 usage, 3 not permitted, 4 srff not loaded.\n");
}

/* The release (dkms.conf's PACKAGE_VERSION, and the commit a checkout was
 * built from), as the Makefile writes it to version.h.
 */
static void print_version(void)
{
	printf("srffctl %s, for the srff generic netlink family version %d\n",
	       SRFF_VERSION, SRFF_GENL_VERSION);
}

void usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s help'.\n", prog);
	exit(EXIT_USAGE);
}

/*
 * Enter network namespace @name before any netlink socket is opened, as
 * "ip -n NAME" does: a name from "ip netns add" (/run/netns/NAME), or a
 * path such as /proc/PID/ns/net.
 */
static void netns_enter(const char *name)
{
	char path[4096];
	int fd;

	if (!*name)
		usage_error("-n needs a network namespace name");
	if (strchr(name, '/'))
		snprintf(path, sizeof(path), "%s", name);
	else
		snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		fprintf(stderr, "%s: cannot open network namespace \"%s\": %s\n",
			prog, name, strerror(err));
		exit(err == EACCES || err == EPERM ? EXIT_PERM : EXIT_USAGE);
	}
	if (setns(fd, CLONE_NEWNET) < 0) {
		int err = errno;

		fprintf(stderr, "%s: cannot enter network namespace \"%s\": %s%s\n",
			prog, name, strerror(err),
			err == EPERM ? " (needs CAP_SYS_ADMIN)" : "");
		exit(err == EPERM ? EXIT_PERM : EXIT_USAGE);
	}
	close(fd);
}

int main(int argc, char **argv)
{
	bool json = false, pretty = false;
	const char *netns = NULL;
	int i, ret;

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		const char *o = argv[i];

		if (!strcmp(o, "-n") || !strcmp(o, "-netns") || !strcmp(o, "--netns")) {
			if (++i == argc)
				usage_error("%s needs a network namespace name", o);
			netns = argv[i];
		} else if (!strcmp(o, "--json") || !strcmp(o, "-json")) {
			json = true;
		} else if (!strcmp(o, "--pretty") || !strcmp(o, "-pretty")) {
			pretty = true;
		} else if (!strcmp(o, "--help")) {
			usage(stdout);
			return EXIT_OK;
		} else if (!strcmp(o, "--version")) {
			print_version();
			return EXIT_OK;
		} else if (o[1] != '-') {
			for (const char *c = o + 1; *c; c++) {	/* -j -p, or -jp */
				if (*c == 'j')
					json = true;
				else if (*c == 'p')
					pretty = true;
				else if (*c == 'h') {
					usage(stdout);
					return EXIT_OK;
				} else if (*c == 'V') {
					print_version();
					return EXIT_OK;
				} else
					usage_error("unknown option '%s'", o);
			}
		} else {
			usage_error("unknown option '%s'", o);
		}
	}
	if (pretty)
		json = true;
	/* No command: the configuration, as wg alone shows its own. */
	if (i == argc) {
		argc = 1;
		argv = show_argv;
		i = 0;
	}

	for (size_t c = 0; c < sizeof(commands) / sizeof(commands[0]); c++) {
		if (strcmp(argv[i], commands[c].name))
			continue;
		if (!commands[c].handler) {
			usage(stdout);
			return EXIT_OK;
		}
		if (netns)
			netns_enter(netns);
		/* -j on a command that prints nothing is accepted and moot. */
		print_init(json, pretty, stdout);
		ret = commands[c].handler(argc - i, argv + i);
		if (!ret)
			print_finish();
		srff_nl_close();
		return ret;
	}
	usage_error("unknown command '%s'", argv[i]);
}
