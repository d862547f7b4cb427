// SPDX-License-Identifier: GPL-2.0
/*
 * srffctl: show and change srff, the flow-size prioritiser, in the current
 * network namespace. See docs/srffctl.8.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "srffctl.h"

const char *prog = "srffctl";

static const struct {
	const char *name;
	int (*handler)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "show", cmd_show, "show the configuration" },
	{ "stats", cmd_stats, "show counters, per band and per event" },
	{ "flows", cmd_flows, "list tracked flows [sort bytes|idle|age] [proto P] [family 4|6] [addr A] [port N] [limit N]" },
	{ "flush", cmd_flush, "forget every tracked flow" },
	{ "set-thresholds", cmd_set_thresholds, "set the byte thresholds: T1 [T2 ...] [priorities P0,P1,... | classid MAJOR:]" },
	{ "set", cmd_set, "change settings: KEY VALUE [KEY VALUE ...]" },
	{ "save", cmd_save, "print the configuration as an apply file" },
	{ "apply", cmd_apply, "apply a saved configuration: FILE or -" },
	{ "help", NULL, "this text" },
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: %s [-j [-p]] COMMAND [ARGS]\n\n", prog);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-15s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nset keys: thresholds T1,T2,... | priorities P0,P1,... | classid MAJOR:|none | idle-timeout DUR |\n"
		   "  gc-interval DUR | max-flows N | udp track|top|ignore | top-ports P,P,...|none |\n"
		   "  untracked-priority P | app-priority keep|override | idle-reset DUR|off\n"
		   "Sizes: 1500, 1.5k, 5M (k, M, G = 1000^n), 4Mi (Ki, Mi, Gi = 1024^n).\n"
		   "DUR: 2500ms, 2.5s, 1m (a bare number is ms). Options: -j JSON, -p pretty JSON, -V version.\n"
		   "Exit: 0 ok, 1 rejected by the kernel, 2 usage, 3 not permitted, 4 srff not loaded.\n");
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

int main(int argc, char **argv)
{
	bool json = false, pretty = false;
	int i, ret;

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		const char *o = argv[i];

		if (!strcmp(o, "--json") || !strcmp(o, "-json")) {
			json = true;
		} else if (!strcmp(o, "--pretty") || !strcmp(o, "-pretty")) {
			pretty = true;
		} else if (!strcmp(o, "--help")) {
			usage(stdout);
			return EXIT_OK;
		} else if (!strcmp(o, "--version")) {
			printf("srffctl, for the srff generic netlink family version %d\n", SRFF_GENL_VERSION);
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
					printf("srffctl, for the srff generic netlink family version %d\n",
					       SRFF_GENL_VERSION);
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
	if (i == argc)
		usage_error("no command given");

	for (size_t c = 0; c < sizeof(commands) / sizeof(commands[0]); c++) {
		if (strcmp(argv[i], commands[c].name))
			continue;
		if (!commands[c].handler) {
			usage(stdout);
			return EXIT_OK;
		}
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
