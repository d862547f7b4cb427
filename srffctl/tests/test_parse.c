// SPDX-License-Identifier: GPL-2.0
/*
 * Native unit tests of srffctl's parsers, settings, apply files and JSON
 * writer: no kernel, no netlink. Each failed check prints "not ok N
 * FILE:LINE COND"; the last line is "srffctl-unit: N passed, M failed";
 * exit 1 on any failure.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>

#include "srffctl.h"
#include "version.h"

#ifndef PYTHON
#define PYTHON "python3"
#endif

const char *prog = "srffctl-test";
void usage_error(const char *fmt, ...) { (void)fmt; abort(); }

static int passed, failed, n;

#define CHECK(cond) do {						\
	n++;								\
	if (cond) { passed++; }						\
	else { failed++; printf("not ok %d %s:%d %s\n", n, __FILE__, __LINE__, #cond); } \
} while (0)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Run a script that prints "ok - WHAT" or "not ok - WHAT" per check, and
 * count each line as a check of this suite (one summary line in the end,
 * which tests/run adds up). A script that fails without saying "not ok",
 * or says nothing, is one failure more.
 */
static void run_tap(const char *cmd)
{
	char line[1024];
	int bad = 0, seen = 0, status;
	FILE *p = popen(cmd, "r");

	if (!p) {
		CHECK(!"popen");
		return;
	}
	while (fgets(line, sizeof(line), p)) {
		if (!strncmp(line, "ok ", 3)) {
			n++;
			passed++;
			seen++;
		} else if (!strncmp(line, "not ok ", 7)) {
			n++;
			failed++;
			bad++;
			seen++;
			printf("not ok %d %s", n, line + 7);
		} else {
			fputs(line, stdout);	/* diagnostics */
		}
	}
	status = pclose(p);
	if ((status && !bad) || !seen) {
		printf("# %s: exit status %d, %d checks\n", cmd, status, seen);
		CHECK(!"the script finished cleanly");
	}
}

static void sizes(void)
{
	/* tc's get_size(): k, m, g (kb, mb, gb; any case) are powers of 1024 */
	static const struct { const char *s; uint64_t v; } ok[] = {
		{ "0", 0 }, { "1500", 1500 }, { "1.5k", 1536 }, { "5M", 5ULL << 20 },
		{ "4Mi", 4194304 }, { "1.5Ki", 1536 }, { "2G", 2ULL << 30 },
		{ "1Gi", 1ULL << 30 }, { "1GiB", 1ULL << 30 }, { "30000000", 30000000 },
		{ "0.5k", 512 }, { "1.25M", 1310720 }, { "18446744073709551615", UINT64_MAX },
		{ "16Ti", 16ULL << 40 }, { "1500B", 1500 }, { "1500b", 1500 }, { "2K", 2048 },
		{ "15Gi", 15ULL << 30 }, { "16k", 16384 }, { "128k", 131072 },
		{ "16kb", 16384 }, { "16Kb", 16384 }, { "16KB", 16384 }, { "16kB", 16384 },
		{ "1m", 1048576 }, { "1mb", 1048576 }, { "4Mb", 4194304 }, { "1gb", 1ULL << 30 },
		{ "1Gb", 1ULL << 30 }, { "1ki", 1024 }, { "1mi", 1048576 }, { "1t", 1ULL << 40 },
		{ "0.25k", 256 }, { "0.001953125m", 2048 },
		/* one trailing newline, as a module parameter written to sysfs */
		{ "16k\n", 16384 }, { "1500\n", 1500 },
	};
	static const char *const bad[] = {
		"", "k", "-1", "+1", "1.5q", "1,5k", "1.2345k", "1.", ".5k", "1 k", " 1",
		"1 ", "0x10", "1e3", "1.5kk", "abc", "1.5.5k", "k1", "1kbit", "1mbit",
		"1kibit", "1p", "1bb", "1Kbb",
		/* overflow */
		"18446744073709551616", "99999999999999999999", "20000000Ti",
		"18446744073709551615k", "17179869184Gi", "17179869184g",
		/* not whole bytes */
		"1.5", "0.3Ki", "1.0001k", "1.1k", "0.001M",
		"\n", "16k\n\n", "1\n5", "16\nk",
	};
	uint64_t v;

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		v = 42;
		CHECK(parse_size(ok[i].s, &v) == 0 && v == ok[i].v);
		if (v != ok[i].v)
			printf("# %s read as %llu\n", ok[i].s, (unsigned long long)v);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		v = 42;
		CHECK(parse_size(bad[i], &v) == -1 && v == 42);
		if (v != 42)
			printf("# %s accepted as %llu\n", bad[i], (unsigned long long)v);
	}
}

static void durations(void)
{
	static const struct { const char *s; uint32_t v; } ok[] = {
		{ "2500", 2500 }, { "2500ms", 2500 }, { "2.5s", 2500 }, { "1m", 60000 },
		{ "1h", 3600000 }, { "0.1s", 100 }, { "0", 0 }, { "1.5min", 90000 },
		{ "4294967295", UINT32_MAX }, { "100ms", 100 }, { "0.5m", 30000 },
		{ "2.5s\n", 2500 },
	};
	static const char *const bad[] = {
		"", "s", "ms", "2.5", "1.0005s", "-1s", "5d", "2 s", "2S", "2sec",
		"5000000h", "4294967296", "4294967296ms", "1.5.s", "off", "1e3ms",
		"\n", "2s\n\n",
	};
	uint32_t v;

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++)
		CHECK(parse_duration_ms(ok[i].s, &v) == 0 && v == ok[i].v);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		CHECK(parse_duration_ms(bad[i], &v) == -1);
}

static void lists_and_ids(void)
{
	uint32_t p[LIST_MAX];
	uint16_t ports[LIST_MAX], major;
	unsigned int cnt;

	CHECK(parse_list_priorities("6,0,2", p, LIST_MAX, &cnt) == 0 && cnt == 3 &&
	      p[0] == 6 && p[1] == 0 && p[2] == 2);
	CHECK(parse_list_priorities("10:1,10:2", p, LIST_MAX, &cnt) == 0 && cnt == 2 &&
	      p[1] == 0x100002);
	CHECK(parse_list_priorities("7", p, LIST_MAX, &cnt) == 0 && cnt == 1 && p[0] == 7);
	CHECK(parse_list_priorities("300", p, LIST_MAX, &cnt) == 0 && p[0] == 300);	/* kernel's call */
	CHECK(parse_list_priorities("6,,2", p, LIST_MAX, &cnt) == -1);
	CHECK(parse_list_priorities("6,", p, LIST_MAX, &cnt) == -1);
	CHECK(parse_list_priorities(",6", p, LIST_MAX, &cnt) == -1);
	CHECK(parse_list_priorities("6,x", p, LIST_MAX, &cnt) == -1);
	CHECK(parse_list_priorities("6 0", p, LIST_MAX, &cnt) == -1);
	CHECK(parse_list_priorities("", p, LIST_MAX, &cnt) == -1);
	CHECK(parse_list_priorities("1,2,3", p, 2, &cnt) == -2);
	CHECK(parse_list_priorities("4294967296", p, LIST_MAX, &cnt) == -1);

	CHECK(parse_list_ports("21,22,23", ports, LIST_MAX, &cnt) == 0 && cnt == 3 &&
	      ports[0] == 21 && ports[2] == 23);
	CHECK(parse_list_ports("65535", ports, LIST_MAX, &cnt) == 0 && ports[0] == 65535);
	CHECK(parse_list_ports("none", ports, LIST_MAX, &cnt) == 0 && cnt == 0);
	CHECK(parse_list_ports("65536", ports, LIST_MAX, &cnt) == -1);
	CHECK(parse_list_ports("22,", ports, LIST_MAX, &cnt) == -1);
	CHECK(parse_list_ports("ssh", ports, LIST_MAX, &cnt) == -1);
	CHECK(parse_list_ports("-1", ports, LIST_MAX, &cnt) == -1);
	CHECK(parse_list_ports("", ports, LIST_MAX, &cnt) == -1);
	CHECK(parse_list_ports("0", ports, LIST_MAX, &cnt) == 0 && ports[0] == 0);	/* kernel's call */
	CHECK(parse_list_ports("1,2,3", ports, 2, &cnt) == -2);

	CHECK(parse_classid("10:", &major) == 0 && major == 0x10);
	CHECK(parse_classid("1:", &major) == 0 && major == 1);
	CHECK(parse_classid("ffff:", &major) == 0 && major == 0xffff);
	CHECK(parse_classid("A:", &major) == 0 && major == 0xa);
	CHECK(parse_classid("none", &major) == 0 && major == 0);
	CHECK(parse_classid("10", &major) == -1);
	CHECK(parse_classid("10:1", &major) == -1);
	CHECK(parse_classid("0:", &major) == -1);
	CHECK(parse_classid(":", &major) == -1);
	CHECK(parse_classid("10000:", &major) == -1);
	CHECK(parse_classid("g:", &major) == -1);

	CHECK(parse_priority("7", &p[0]) == 0 && p[0] == 7);
	CHECK(parse_priority("1:a", &p[0]) == 0 && p[0] == 0x1000a);
	CHECK(parse_priority("1:g", &p[0]) == -1);
	CHECK(parse_priority("1:", &p[0]) == -1);
	CHECK(parse_priority("x", &p[0]) == -1);

	CHECK(parse_proto("tcp") == IPPROTO_TCP);
	CHECK(parse_proto("udp") == IPPROTO_UDP);
	CHECK(parse_proto("icmp") == IPPROTO_ICMP);
	CHECK(parse_proto("ipv6-icmp") == IPPROTO_ICMPV6);
	CHECK(parse_proto("132") == 132);
	CHECK(parse_proto("256") == -1);
	CHECK(parse_proto("sctp") == -1);
}

static void formatting(void)
{
	char b[32];

	/* tc's sprint_size() forms, exact: 1536 is not rounded to 2Kb */
	CHECK(!strcmp(fmt_size(1500, b, sizeof(b)), "1500b"));
	CHECK(!strcmp(fmt_size(1536, b, sizeof(b)), "1536b"));
	CHECK(!strcmp(fmt_size(16384, b, sizeof(b)), "16Kb"));
	CHECK(!strcmp(fmt_size(131072, b, sizeof(b)), "128Kb"));
	CHECK(!strcmp(fmt_size(5000, b, sizeof(b)), "5000b"));
	CHECK(!strcmp(fmt_size(4194304, b, sizeof(b)), "4Mb"));
	CHECK(!strcmp(fmt_size(5000000, b, sizeof(b)), "5000000b"));
	CHECK(!strcmp(fmt_size(1310720, b, sizeof(b)), "1280Kb"));
	CHECK(!strcmp(fmt_size(1ULL << 30, b, sizeof(b)), "1Gb"));
	CHECK(!strcmp(fmt_size(16ULL << 40, b, sizeof(b)), "16384Gb"));
	CHECK(!strcmp(fmt_size(1501, b, sizeof(b)), "1501b"));
	CHECK(!strcmp(fmt_size(0, b, sizeof(b)), "0b"));
	CHECK(!strcmp(fmt_size(31898736, b, sizeof(b)), "31898736b"));
	CHECK(!strcmp(fmt_size(UINT64_MAX, b, sizeof(b)), "18446744073709551615b"));
	/* what tc users type comes back as they typed it (issue 14: 128k
	 * came back as 125Ki)
	 */
	{
		static const char *const typed[] = { "16k", "128k", "1m", "4m", "1g", "64k" };

		for (size_t i = 0; i < ARRAY_SIZE(typed); i++) {
			uint64_t v, back;
			char want[16];

			snprintf(want, sizeof(want), "%.*s%cb", (int)strlen(typed[i]) - 1, typed[i],
				 toupper((unsigned char)typed[i][strlen(typed[i]) - 1]));
			CHECK(parse_size(typed[i], &v) == 0 &&
			      !strcmp(fmt_size(v, b, sizeof(b)), want) &&
			      parse_size(b, &back) == 0 && back == v);
		}
	}
	CHECK(!strcmp(fmt_duration(2500, b, sizeof(b)), "2500ms"));
	CHECK(!strcmp(fmt_duration(60000, b, sizeof(b)), "1m"));
	CHECK(!strcmp(fmt_duration(3000, b, sizeof(b)), "3s"));
	CHECK(!strcmp(fmt_duration(3600000, b, sizeof(b)), "1h"));
	CHECK(!strcmp(fmt_duration(0, b, sizeof(b)), "0ms"));
	CHECK(!strcmp(fmt_priority(6, b, sizeof(b)), "6"));
	CHECK(!strcmp(fmt_priority(0x100003, b, sizeof(b)), "10:3"));
	/* What fmt_* print, parse_* read back. */
	for (uint64_t v = 1; v < UINT64_MAX / 4; v = v * 3 + 7) {
		uint64_t back;

		CHECK(parse_size(fmt_size(v, b, sizeof(b)), &back) == 0 && back == v);
		CHECK(parse_size(fmt_size(v << 10, b, sizeof(b)), &back) == 0 && back == v << 10);
	}
	for (uint64_t v = 1000; v <= 3600000 * 10ULL; v *= 10) {
		uint32_t back;

		CHECK(parse_duration_ms(fmt_duration(v, b, sizeof(b)), &back) == 0 && back == v);
	}
	for (uint32_t v = 0; v < 0x200000; v = v * 5 + 3) {
		uint32_t back;

		CHECK(parse_priority(fmt_priority(v, b, sizeof(b)), &back) == 0 && back == v);
	}
}

/* DSCPs: keep, numbers, names in any case; shown by name where they have one. */
static void dscp(void)
{
	static const struct { const char *s; uint8_t v; } ok[] = {
		{ "keep", SRFF_DSCP_KEEP }, { "KEEP", SRFF_DSCP_KEEP }, { "Keep", SRFF_DSCP_KEEP },
		{ "le", 1 }, { "LE", 1 }, { "ef", 46 }, { "EF", 46 }, { "va", 44 }, { "Va", 44 },
		{ "cs0", 0 }, { "cs1", 8 }, { "cs2", 16 }, { "cs3", 24 }, { "cs4", 32 },
		{ "cs5", 40 }, { "cs6", 48 }, { "CS7", 56 },
		/* RFC 2597: AFxy = 8x + 2y */
		{ "af11", 10 }, { "af12", 12 }, { "af13", 14 }, { "af21", 18 }, { "af22", 20 },
		{ "af23", 22 }, { "af31", 26 }, { "af32", 28 }, { "af33", 30 }, { "af41", 34 },
		{ "af42", 36 }, { "AF43", 38 },
		{ "0", 0 }, { "1", 1 }, { "46", 46 }, { "63", 63 }, { "046", 46 },
		{ "0x0", 0 }, { "0x2e", 46 }, { "0X2E", 46 }, { "0x3f", 63 }, { "0x003f", 63 },
	};
	static const struct { const char *s; int ret; } bad[] = {
		{ "", -1 }, { "64", -2 }, { "255", -2 }, { "99999999999999999999", -2 },
		{ "0x40", -2 }, { "0xff", -2 }, { "0xffffffffffffffff", -2 },
		{ "0x", -1 }, { "x1", -1 }, { "-1", -1 }, { "+1", -1 }, { " 1", -1 }, { "1 ", -1 },
		{ "1.5", -1 }, { "0x1g", -1 }, { "2e", -1 }, { "af44", -1 }, { "af10", -1 },
		{ "af51", -1 }, { "cs8", -1 }, { "cs", -1 }, { "af", -1 }, { "be", -1 },
		{ "lee", -1 }, { "keeps", -1 }, { "none", -1 }, { "le ", -1 },
	};
	static const struct { uint8_t v; const char *s; } names[] = {
		{ SRFF_DSCP_KEEP, "keep" }, { 1, "le" }, { 46, "ef" }, { 44, "va" },
		{ 10, "af11" }, { 38, "af43" }, { 26, "af31" }, { 0, "cs0" }, { 8, "cs1" },
		{ 56, "cs7" }, { 2, "2" }, { 45, "45" }, { 63, "63" }, { 64, "64" }, { 254, "254" },
	};
	char b[16];
	uint8_t v;

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		v = 200;
		CHECK(parse_dscp(ok[i].s, &v) == 0 && v == ok[i].v);
		if (v != ok[i].v)
			printf("# dscp %s read as %u\n", ok[i].s, v);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		v = 200;
		CHECK(parse_dscp(bad[i].s, &v) == bad[i].ret && v == 200);
		if (v != 200)
			printf("# dscp '%s' accepted as %u\n", bad[i].s, v);
	}
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		CHECK(!strcmp(fmt_dscp(names[i].v, b, sizeof(b)), names[i].s));
		if (strcmp(b, names[i].s))
			printf("# dscp %u shown as %s\n", names[i].v, b);
	}
	/* what fmt_dscp prints, parse_dscp reads back, for every DSCP */
	for (unsigned int d = 0; d < 64; d++)
		CHECK(parse_dscp(fmt_dscp(d, b, sizeof(b)), &v) == 0 && v == d);
	CHECK(parse_dscp(fmt_dscp(SRFF_DSCP_KEEP, b, sizeof(b)), &v) == 0 && v == SRFF_DSCP_KEEP);
}

static void settings(void)
{
	struct config c = { 0 };
	char err[256];
	char a1[] = "1.5k", a2[] = "5M", a3[] = "20k,1Mi", bad[] = "1.5q", empty[] = "1k,";
	char *args[] = { a1, a2, a3 };

	CHECK(config_set_key(&c, "idle-reset", "off", err, sizeof(err)) == 0 &&
	      (c.has & CF_IDLE_RESET) && c.idle_reset_ms == 0);
	CHECK(config_set_key(&c, "idle-reset", "1s", err, sizeof(err)) == 0 && c.idle_reset_ms == 1000);
	CHECK(config_set_key(&c, "enabled", "off", err, sizeof(err)) == 0 && c.enabled == 0 &&
	      (c.has & CF_ENABLED));
	CHECK(config_set_key(&c, "enabled", "on", err, sizeof(err)) == 0 && c.enabled == 1);
	CHECK(config_set_key(&c, "enabled", "yes", err, sizeof(err)) == -1 &&
	      !strcmp(err, "enabled: 'yes' is not on or off") && c.enabled == 1);
	CHECK(config_set_key(&c, "udp", "top", err, sizeof(err)) == 0 && c.udp_policy == SRFF_UDP_TOP);
	CHECK(config_set_key(&c, "udp", "ignore", err, sizeof(err)) == 0 && c.udp_policy == SRFF_UDP_IGNORE);
	CHECK(config_set_key(&c, "app-priority", "keep", err, sizeof(err)) == 0 &&
	      c.app_priority == SRFF_APP_PRIO_KEEP);
	CHECK(config_set_key(&c, "thresholds", "1.5k,20k", err, sizeof(err)) == 0 &&
	      c.nthresholds == 2 && c.thresholds[0] == 1536 && c.thresholds[1] == 20480);
	CHECK(config_set_key(&c, "thresholds", "1.5k,,20k", err, sizeof(err)) == -1);
	CHECK(config_set_key(&c, "classid", "none", err, sizeof(err)) == 0 &&
	      (c.has & CF_CLASSID) && c.classid_major == 0);
	CHECK(config_set_key(&c, "classid", "1:", err, sizeof(err)) == 0 && c.classid_major == 1);
	CHECK(config_set_key(&c, "top-ports", "none", err, sizeof(err)) == 0 &&
	      (c.has & CF_TOP_PORTS) && c.ntop_ports == 0);
	CHECK(config_set_key(&c, "colour", "blue", err, sizeof(err)) == -1 && strstr(err, "unknown setting"));
	CHECK(config_set_key(&c, "udp", "sometimes", err, sizeof(err)) == -1 && strstr(err, "udp"));
	CHECK(config_set_key(&c, "idle-timeout", "soon", err, sizeof(err)) == -1 && strstr(err, "duration"));
	CHECK(config_set_key(&c, "max-flows", "1Mi", err, sizeof(err)) == 0 && c.max_flows == 1048576);
	CHECK(config_set_key(&c, "max-flows", "5G", err, sizeof(err)) == -1);
	CHECK(config_set_key(&c, "untracked-priority", "10:4", err, sizeof(err)) == 0 &&
	      c.untracked_priority == 0x100004);
	CHECK(config_set_key(&c, "priorities", "6,0,2,1", err, sizeof(err)) == 0 && c.npriorities == 4);

	/* DSCP marking */
	CHECK(config_set_key(&c, "mark", "dscp", err, sizeof(err)) == 0 && c.mark == SRFF_MARK_DSCP &&
	      (c.has & CF_MARK));
	CHECK(config_set_key(&c, "mark", "none", err, sizeof(err)) == 0 && c.mark == SRFF_MARK_NONE);
	CHECK(config_set_key(&c, "mark", "tos", err, sizeof(err)) == -1 &&
	      !strcmp(err, "mark: 'tos' is not dscp or none"));
	CHECK(config_set_key(&c, "dscp-override", "on", err, sizeof(err)) == 0 &&
	      c.dscp_override == 1 && (c.has & CF_DSCP_OVERRIDE));
	CHECK(config_set_key(&c, "dscp-override", "off", err, sizeof(err)) == 0 && c.dscp_override == 0);
	CHECK(config_set_key(&c, "dscp-override", "1", err, sizeof(err)) == -1 &&
	      !strcmp(err, "dscp-override: '1' is not on or off"));
	CHECK(!(c.has & CF_DSCP_MAP));
	CHECK(config_set_key(&c, "dscp-map", "keep,AF21,0x0a,le", err, sizeof(err)) == 0 &&
	      (c.has & CF_DSCP_MAP) && c.ndscp_map == 4 && c.dscp_map[0] == SRFF_DSCP_KEEP &&
	      c.dscp_map[1] == 18 && c.dscp_map[2] == 10 && c.dscp_map[3] == SRFF_DSCP_LE);
	CHECK(config_set_key(&c, "dscp-map", "ef", err, sizeof(err)) == 0 && c.ndscp_map == 1 &&
	      c.dscp_map[0] == 46);
	CHECK(config_set_key(&c, "dscp-map", "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,63",
			     err, sizeof(err)) == 0 && c.ndscp_map == 16 && c.dscp_map[15] == 63);
	{
		/* Each error names its entry; the map before stays as it was. */
		static const struct { const char *v, *msg; } bad[] = {
			{ "le,,keep", "dscp-map: entry 2 of 'le,,keep' is empty" },
			{ "le,", "dscp-map: entry 2 of 'le,' is empty" },
			{ ",le", "dscp-map: entry 1 of ',le' is empty" },
			{ "", "dscp-map: entry 1 of '' is empty" },
			{ "keep,af44", "dscp-map: entry 2, 'af44', is not a DSCP "
				       "(keep, 0-63, le, ef, va, cs0-cs7 or af11-af43)" },
			{ "keep,keep,64", "dscp-map: entry 3, '64', is above 63, the largest DSCP" },
			{ "0x40", "dscp-map: entry 1, '0x40', is above 63, the largest DSCP" },
			{ "le,-1", "dscp-map: entry 2, '-1', is not a DSCP "
				   "(keep, 0-63, le, ef, va, cs0-cs7 or af11-af43)" },
			{ "keep le", "dscp-map: entry 1, 'keep le', is not a DSCP "
				     "(keep, 0-63, le, ef, va, cs0-cs7 or af11-af43)" },
			{ "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,le",
			  "dscp-map: entry 17, 'le', is one too many: one DSCP per band, at most 16" },
		};

		for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
			CHECK(config_set_key(&c, "dscp-map", bad[i].v, err, sizeof(err)) == -1 &&
			      !strcmp(err, bad[i].msg) && c.ndscp_map == 16 && c.dscp_map[0] == 0 &&
			      c.dscp_map[15] == 63);
			if (strcmp(err, bad[i].msg))
				printf("# dscp-map %s: %s\n", bad[i].v, err);
		}
	}

	/* set-thresholds: separate arguments, each possibly a comma list */
	memset(&c, 0, sizeof(c));
	CHECK(config_set_thresholds(&c, args, 3, err, sizeof(err)) == 0 && c.nthresholds == 4 &&
	      c.thresholds[0] == 1536 && c.thresholds[1] == 5242880 &&
	      c.thresholds[2] == 20480 && c.thresholds[3] == 1048576 && c.has == CF_THRESHOLDS);
	args[1] = bad;
	CHECK(config_set_thresholds(&c, args, 2, err, sizeof(err)) == -1 && strstr(err, "1.5q"));
	args[1] = empty;
	CHECK(config_set_thresholds(&c, args, 2, err, sizeof(err)) == -1);
	CHECK(config_set_thresholds(&c, args, 0, err, sizeof(err)) == -1);
	/* auto: learnt by the kernel; alone */
	memset(&c, 0, sizeof(c));
	{
		char autov[] = "auto", *auto_args[] = { autov, args[0] };

		CHECK(config_set_thresholds(&c, auto_args, 1, err, sizeof(err)) == 0 &&
		      c.auto_thresholds == 1 && c.has == CF_AUTO && c.nthresholds == 0);
		CHECK(config_set_thresholds(&c, auto_args, 2, err, sizeof(err)) == -1 &&
		      strstr(err, "auto"));
		memset(&c, 0, sizeof(c));
		CHECK(config_set_key(&c, "thresholds", "auto", err, sizeof(err)) == 0 &&
		      c.has == CF_AUTO && c.auto_thresholds == 1);
	}
	/* 16 thresholds go to the kernel, which says "too many" itself */
	CHECK(config_set_key(&c, "thresholds", "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16",
			     err, sizeof(err)) == 0 && c.nthresholds == 16);
}

static FILE *string_file(const char *s)
{
	return fmemopen((void *)s, strlen(s), "r");
}

static int parse_string(const char *text, struct config *c, char *err, size_t len)
{
	FILE *f = string_file(text);
	int ret;

	memset(c, 0, sizeof(*c));
	ret = config_parse_file(f, "cfg", c, false, err, len);
	fclose(f);
	return ret;
}

static void apply_file(void)
{
	struct config c;
	char err[256];

	CHECK(parse_string("# saved\nthresholds 1500 5000\npriorities 6,0,2\n\n"
			   "  idle-timeout\t2.5s # inline\nudp ignore\r\n", &c, err, sizeof(err)) == 0);
	CHECK(c.nthresholds == 2 && c.thresholds[1] == 5000 && c.npriorities == 3 &&
	      c.idle_timeout_ms == 2500 && c.udp_policy == SRFF_UDP_IGNORE &&
	      c.has == (CF_THRESHOLDS | CF_PRIORITIES | CF_IDLE_TIMEOUT | CF_UDP));
	/* the comma form of set is accepted in files too */
	CHECK(parse_string("thresholds 1.5k,20k 1M\n", &c, err, sizeof(err)) == 0 &&
	      c.nthresholds == 3 && c.thresholds[2] == 1048576);
	/* the first bad line is named, and nothing after it matters */
	CHECK(parse_string("thresholds 1500\nudp top\nidle-timeout soon\nbogus 1\n", &c, err, sizeof(err)) == -1 &&
	      !strncmp(err, "cfg:3: idle-timeout", 19));
	CHECK(parse_string("udp top ignore\n", &c, err, sizeof(err)) == -1 && !strncmp(err, "cfg:1:", 6));
	CHECK(parse_string("\n\n# x\nudp\n", &c, err, sizeof(err)) == -1 && !strncmp(err, "cfg:4:", 6));
	CHECK(parse_string("udp top\ncolour blue\n", &c, err, sizeof(err)) == -1 &&
	      !strncmp(err, "cfg:2:", 6) && strstr(err, "colour"));
	CHECK(parse_string("thresholds\n", &c, err, sizeof(err)) == -1 && !strncmp(err, "cfg:1:", 6));
	CHECK(parse_string("thresholds 1k 2x\n", &c, err, sizeof(err)) == -1 &&
	      !strncmp(err, "cfg:1:", 6) && strstr(err, "2x"));
	CHECK(parse_string("# nothing\n", &c, err, sizeof(err)) == -1 && strstr(err, "no settings"));
	CHECK(parse_string("", &c, err, sizeof(err)) == -1);
	CHECK(parse_string("mark dscp\ndscp-map CS1,keep,Le\ndscp-override on\n", &c, err, sizeof(err)) == 0 &&
	      c.has == (CF_MARK | CF_DSCP_MAP | CF_DSCP_OVERRIDE) && c.mark == SRFF_MARK_DSCP &&
	      c.ndscp_map == 3 && c.dscp_map[0] == 8 && c.dscp_map[1] == SRFF_DSCP_KEEP &&
	      c.dscp_map[2] == SRFF_DSCP_LE && c.dscp_override == 1);
	CHECK(parse_string("mark dscp\ndscp-map keep,lee\n", &c, err, sizeof(err)) == -1 &&
	      !strncmp(err, "cfg:2: dscp-map: entry 2, 'lee',", 32));
	CHECK(parse_string("dscp-map keep, le\n", &c, err, sizeof(err)) == -1 &&
	      !strncmp(err, "cfg:1: 'dscp-map' takes one value, not 2", 40));
	/* a last line without a newline still counts */
	CHECK(parse_string("max-flows 100", &c, err, sizeof(err)) == 0 && c.max_flows == 100);
}

/* Print c with config_print() (text) and read it back as an apply file. */
static int print_and_parse(const struct config *c, bool exact, struct config *back,
			   char *text, size_t textlen)
{
	char err[256];
	FILE *f = fmemopen(text, textlen, "w");
	int ret;

	print_init(false, false, f);
	config_print(c, exact);
	print_finish();
	fclose(f);
	f = string_file(text);
	memset(back, 0, sizeof(*back));
	ret = config_parse_file(f, "saved", back, false, err, sizeof(err));
	fclose(f);
	if (ret)
		printf("# %s\n", err);
	return ret;
}

static bool same_config(const struct config *a, const struct config *b)
{
	return a->nthresholds == b->nthresholds &&
	       !memcmp(a->thresholds, b->thresholds, a->nthresholds * sizeof(a->thresholds[0])) &&
	       a->npriorities == b->npriorities &&
	       !memcmp(a->priorities, b->priorities, a->npriorities * sizeof(a->priorities[0])) &&
	       a->classid_major == b->classid_major && a->idle_timeout_ms == b->idle_timeout_ms &&
	       a->gc_interval_ms == b->gc_interval_ms && a->max_flows == b->max_flows &&
	       a->udp_policy == b->udp_policy && a->ntop_ports == b->ntop_ports &&
	       !memcmp(a->top_ports, b->top_ports, a->ntop_ports * sizeof(a->top_ports[0])) &&
	       a->untracked_priority == b->untracked_priority &&
	       a->app_priority == b->app_priority && a->idle_reset_ms == b->idle_reset_ms &&
	       a->mark == b->mark && a->dscp_override == b->dscp_override &&
	       a->ndscp_map == b->ndscp_map &&
	       !memcmp(a->dscp_map, b->dscp_map, a->ndscp_map);
}

static const struct config defaults = {
	.thresholds = { 1500, 5000 }, .nthresholds = 2,
	.priorities = { 6, 0, 2 }, .npriorities = 3,
	.idle_timeout_ms = 2500, .gc_interval_ms = 2500, .max_flows = 131072,
	.udp_policy = SRFF_UDP_TRACK, .app_priority = SRFF_APP_PRIO_OVERRIDE,
	.enabled = 1,
	/* as a module with DSCP marking reports it: off, the default map */
	.mark = SRFF_MARK_NONE,
	.dscp_map = { SRFF_DSCP_KEEP, SRFF_DSCP_KEEP, SRFF_DSCP_LE }, .ndscp_map = 3,
};

static const struct config busy = {
	.thresholds = { 1500, 20000, 1000000, 4194304, 1501 }, .nthresholds = 5,
	.priorities = { 6, 0, 1, 0x100002, 3, 4 }, .npriorities = 6,
	.classid_major = 0x10, .idle_timeout_ms = 60000, .gc_interval_ms = 750,
	.max_flows = 5000, .udp_policy = SRFF_UDP_TOP,
	.top_ports = { 21, 22, 23, 65535 }, .ntop_ports = 4,
	.untracked_priority = 0x10000f, .app_priority = SRFF_APP_PRIO_KEEP,
	.idle_reset_ms = 300,
	.mark = SRFF_MARK_DSCP, .dscp_override = 1,
	.dscp_map = { 46, 26, SRFF_DSCP_KEEP, 8, 45, SRFF_DSCP_LE }, .ndscp_map = 6,
};

static void round_trip(void)
{
	static const char *const saved_defaults =
		      "thresholds 1500 5000\n"
		      "priorities 6,0,2\n"
		      "classid none\n"
		      "idle-timeout 2500ms\n"
		      "gc-interval 2500ms\n"
		      "max-flows 131072\n"
		      "udp track\n"
		      "top-ports none\n"
		      "untracked-priority 0\n"
		      "app-priority override\n"
		      "idle-reset off\n"
		      "mark none\n"
		      "dscp-map keep,keep,le\n"
		      "dscp-override off\n";
	char text[4096];
	struct config back;

	/* save prints exactly the lines of the issue for the defaults */
	CHECK(print_and_parse(&defaults, true, &back, text, sizeof(text)) == 0);
	CHECK(!strcmp(text, saved_defaults));
	if (strcmp(text, saved_defaults))
		printf("# save printed:\n%s", text);
	CHECK(same_config(&defaults, &back));
	/* every key is set by a saved file, so apply restores all of it */
	CHECK(back.has == (CF_THRESHOLDS | CF_PRIORITIES | CF_CLASSID | CF_IDLE_TIMEOUT |
			   CF_GC_INTERVAL | CF_MAX_FLOWS | CF_UDP | CF_TOP_PORTS |
			   CF_UNTRACKED | CF_APP_PRIO | CF_IDLE_RESET | CF_MARK | CF_DSCP_MAP |
			   CF_DSCP_OVERRIDE));
	CHECK(print_and_parse(&busy, true, &back, text, sizeof(text)) == 0 && same_config(&busy, &back));
	/* DSCPs by name where they have one, else the number; keep as keep */
	CHECK(strstr(text, "\nidle-reset 300ms\nmark dscp\ndscp-map ef,af31,keep,cs1,45,le\n"
			   "dscp-override on\n") != NULL);
	CHECK(strstr(text, "classid 10:\n") && strstr(text, "idle-reset 300ms\n") &&
	      strstr(text, "priorities 6,0,1,10:2,3,4\n") && strstr(text, "top-ports 21,22,23,65535\n"));
	/* save leaves out whether srff is on: an apply file tunes it */
	CHECK(!strstr(text, "enabled"));
	/* show's human units read back too */
	CHECK(print_and_parse(&busy, false, &back, text, sizeof(text)) == 0 && same_config(&busy, &back));
	/* show says first whether srff runs here, and that reads back */
	CHECK(!strncmp(text, "enabled off\n", 12) && (back.has & CF_ENABLED) && back.enabled == 0);
	CHECK(strstr(text, "thresholds 1500b 20000b 1000000b 4Mb 1501b\n") && strstr(text, "idle-timeout 1m\n"));
	CHECK(print_and_parse(&defaults, false, &back, text, sizeof(text)) == 0 &&
	      same_config(&defaults, &back));
	CHECK(!strncmp(text, "enabled on\n", 11) && back.enabled == 1);
	CHECK(strstr(text, "\nmark none\ndscp-map keep,keep,le\ndscp-override off\n") != NULL);
	/* every DSCP, and keep, reads back as it was saved */
	{
		struct config all = busy;

		all.nthresholds = 15;
		all.npriorities = 16;
		all.ndscp_map = 16;
		for (unsigned int round = 0; round < 5; round++) {
			for (unsigned int i = 0; i < 16; i++) {
				all.thresholds[i] = 1000 * (i + 1);
				all.priorities[i] = i;
				all.dscp_map[i] = round * 16 + i > 63 ? SRFF_DSCP_KEEP : round * 16 + i;
			}
			CHECK(print_and_parse(&all, true, &back, text, sizeof(text)) == 0 &&
			      same_config(&all, &back));
		}
	}
	/* A module without DSCP marking reports none of it: nothing shown or
	 * saved, so that it takes back what save wrote.
	 */
	{
		struct config old = defaults;

		old.ndscp_map = 0;
		CHECK(print_and_parse(&old, true, &back, text, sizeof(text)) == 0 &&
		      !strstr(text, "mark") && !strstr(text, "dscp") &&
		      !(back.has & (CF_MARK | CF_DSCP_MAP | CF_DSCP_OVERRIDE)));
		CHECK(print_and_parse(&old, false, &back, text, sizeof(text)) == 0 &&
		      !strstr(text, "mark") && !strstr(text, "dscp"));
	}
}

/* A made-up /sys/module/srff/parameters: name=value pairs, as the kernel
 * prints them (a newline after each value; an array without values is
 * empty, not even a newline).
 */
static void make_params(const char *dir, const char *const *kv)
{
	char path[512];

	for (; *kv; kv += 2) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", dir, kv[0]);
		f = fopen(path, "w");
		fputs(kv[1], f);
		fclose(f);
	}
}

static void clean_params(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

static const char *const stock_params[] = {
	"thresholds", "", "auto_thresholds", "-1\n", "auto_min_flows", "1000\n",
	"priorities", "6,0,2\n", "classid_major", "0\n", "max_flows", "0\n",
	"max_flows_total", "0\n", "hash_buckets", "0\n",
	"idle_timeout_ms", "2500\n", "gc_interval_ms", "2500\n", "idle_reset_ms", "100\n",
	"untracked_priority", "0\n", "udp_policy", "track\n", "app_priority", "override\n",
	"top_ports", "", NULL,
};

/* Whether the module setconf_string() talks to has DSCP marking. */
static bool setconf_dscp = true;

/* setconf of text over the parameters in dir, into c. */
static int setconf_string(const char *dir, const char *text, struct config *c)
{
	struct config file;
	struct params p;
	char err[256];
	FILE *f = string_file(text);
	int ret;

	memset(&file, 0, sizeof(file));
	ret = config_parse_file(f, "cfg", &file, true, err, sizeof(err));
	fclose(f);
	if (!ret)
		ret = params_read(dir, &p, err, sizeof(err));
	if (ret) {
		printf("# %s\n", err);
		return ret;
	}
	config_setconf(&file, &p, 8ULL << 30, setconf_dscp, c);
	return 0;
}

#define ALL_KEYS (CF_THRESHOLDS | CF_PRIORITIES | CF_CLASSID | CF_IDLE_TIMEOUT | \
		  CF_GC_INTERVAL | CF_MAX_FLOWS | CF_UDP | CF_TOP_PORTS | CF_UNTRACKED | \
		  CF_APP_PRIO | CF_IDLE_RESET | CF_AUTO | CF_MARK | CF_DSCP_MAP | CF_DSCP_OVERRIDE)

/* Whether the dscp map of c is dscp_default_map()'s for n bands. */
static bool default_map(const struct config *c, unsigned int n)
{
	if (c->ndscp_map != n || c->dscp_map[n - 1] != SRFF_DSCP_LE)
		return false;
	for (unsigned int i = 0; i + 1 < n; i++)
		if (c->dscp_map[i] != SRFF_DSCP_KEEP)
			return false;
	return true;
}

static void setconf(void)
{
	char dir[] = "/tmp/srffctl-params-XXXXXX", text[4096], err[256];
	struct config c, back;
	struct params p;

	/* the default from RAM when max_flows is 0 (srff_nf/config.c) */
	CHECK(default_max_flows(8ULL << 30) == 131072);
	CHECK(default_max_flows(1ULL << 30) == 16384);
	CHECK(default_max_flows(100ULL << 20) == 4096);
	CHECK(default_max_flows(1ULL << 40) == 1048576);
	CHECK(default_max_flows(0) == 4096);

	/* A module loaded without parameters */
	CHECK(mkdtemp(dir) != NULL);
	make_params(dir, stock_params);
	CHECK(params_read(dir, &p, err, sizeof(err)) == 0 && p.nthresholds == 0 &&
	      p.auto_thresholds == -1 && p.npriorities == 3 && p.priorities[0] == 6 &&
	      p.max_flows == 0 && p.idle_reset_ms == 100 && p.ntop_ports == 0 &&
	      p.udp_policy == SRFF_UDP_TRACK && p.app_priority == SRFF_APP_PRIO_OVERRIDE);
	/* one key named: every other one is sent, at its default */
	CHECK(setconf_string(dir, "udp top\n", &c) == 0 && c.has == ALL_KEYS &&
	      c.udp_policy == SRFF_UDP_TOP && c.nthresholds == 2 && c.thresholds[0] == 16384 &&
	      c.thresholds[1] == 131072 && c.auto_thresholds == 1 && c.npriorities == 3 &&
	      c.priorities[2] == 2 && c.classid_major == 0 && c.idle_timeout_ms == 2500 &&
	      c.gc_interval_ms == 2500 && c.idle_reset_ms == 100 && c.max_flows == 131072 &&
	      c.untracked_priority == 0 && c.app_priority == SRFF_APP_PRIO_OVERRIDE &&
	      c.ntop_ports == 0);
	/* an empty file: everything back to the defaults */
	CHECK(setconf_string(dir, "# nothing\n", &c) == 0 && c.has == ALL_KEYS &&
	      c.udp_policy == SRFF_UDP_TRACK && c.auto_thresholds == 1 && c.nthresholds == 2);
	/* five bands: learning starts from 4 thresholds, as at load time */
	CHECK(setconf_string(dir, "priorities 6,0,1,2,3\n", &c) == 0 && c.nthresholds == 4 &&
	      c.thresholds[2] == 1048576 && c.thresholds[3] == 8388608 && c.auto_thresholds == 1);
	CHECK(setconf_string(dir, "thresholds auto\npriorities 6,0,1,2\n", &c) == 0 &&
	      c.nthresholds == 3 && c.auto_thresholds == 1);
	/* class-id steering: 3 bands */
	CHECK(setconf_string(dir, "classid 10:\n", &c) == 0 && c.classid_major == 0x10 &&
	      c.nthresholds == 2 && c.auto_thresholds == 1);
	/* thresholds given: fixed */
	CHECK(setconf_string(dir, "thresholds 1500 5000\ntop-ports 22\n", &c) == 0 &&
	      c.nthresholds == 2 && c.thresholds[1] == 5000 && c.auto_thresholds == 0 &&
	      c.ntop_ports == 1 && c.top_ports[0] == 22);
	/* DSCP marking: off, never overriding, the default map for the
	 * bands setconf makes, all sent; or as the file says
	 */
	CHECK(setconf_string(dir, "udp top\n", &c) == 0 && c.mark == SRFF_MARK_NONE &&
	      c.dscp_override == 0 && default_map(&c, 3));
	CHECK(setconf_string(dir, "priorities 6,0,1,2,3\n", &c) == 0 && default_map(&c, 5));
	CHECK(setconf_string(dir, "thresholds 1k 2k 3k 4k 5k 6k 7k 8k 9k 10k 11k 12k 13k 14k 15k\n",
			     &c) == 0 && default_map(&c, 16));
	CHECK(setconf_string(dir, "classid 10:\nthresholds 1k 2k 3k\n", &c) == 0 && default_map(&c, 4));
	CHECK(setconf_string(dir, "mark dscp\n", &c) == 0 && c.has == ALL_KEYS &&
	      c.mark == SRFF_MARK_DSCP && c.dscp_override == 0 && default_map(&c, 3));
	CHECK(setconf_string(dir, "mark dscp\ndscp-map ef,af11,le\ndscp-override on\n", &c) == 0 &&
	      c.has == ALL_KEYS && c.mark == SRFF_MARK_DSCP && c.dscp_override == 1 &&
	      c.ndscp_map == 3 && c.dscp_map[0] == 46 && c.dscp_map[1] == 10 && c.dscp_map[2] == 1);
	/* a map that does not fit the bands: the kernel's to refuse */
	CHECK(setconf_string(dir, "dscp-map ef,le\n", &c) == 0 && c.ndscp_map == 2 &&
	      c.nthresholds == 2);
	/* a module without DSCP marking: only what the file names is sent */
	setconf_dscp = false;
	CHECK(setconf_string(dir, "udp top\n", &c) == 0 &&
	      c.has == (ALL_KEYS & ~(CF_MARK | CF_DSCP_MAP | CF_DSCP_OVERRIDE)));
	CHECK(setconf_string(dir, "dscp-override on\n", &c) == 0 &&
	      c.has == (ALL_KEYS & ~(CF_MARK | CF_DSCP_MAP)) && c.dscp_override == 1);
	setconf_dscp = true;
	memset(c.dscp_map, 7, sizeof(c.dscp_map));
	dscp_default_map(c.dscp_map, 2);
	CHECK(c.dscp_map[0] == SRFF_DSCP_KEEP && c.dscp_map[1] == SRFF_DSCP_LE && c.dscp_map[2] == 7);
	/* one band (no thresholds: the kernel refuses it) keeps */
	dscp_default_map(c.dscp_map, 1);
	CHECK(c.dscp_map[0] == SRFF_DSCP_KEEP && c.dscp_map[1] == SRFF_DSCP_LE);
	/* setconf leaves srff on or off as it is, unless the file says */
	CHECK(setconf_string(dir, "", &c) == 0 && !(c.has & CF_ENABLED));
	CHECK(setconf_string(dir, "enabled off\n", &c) == 0 && (c.has & CF_ENABLED) &&
	      c.enabled == 0);
	/* what save writes, setconf restores as it was */
	CHECK(print_and_parse(&busy, true, &back, text, sizeof(text)) == 0);
	CHECK(setconf_string(dir, text, &c) == 0 && same_config(&busy, &c) &&
	      c.auto_thresholds == 0 && c.has == ALL_KEYS);
	/* and the defaults, as save wrote them */
	CHECK(print_and_parse(&defaults, true, &back, text, sizeof(text)) == 0);
	CHECK(setconf_string(dir, text, &c) == 0 && same_config(&defaults, &c));

	/* A module loaded with parameters */
	{
		static const char *const given[] = {
			"thresholds", "1500,5000\n", "max_flows", "5000\n", "top_ports", "21,22\n",
			"udp_policy", "ignore\n", "untracked_priority", "1048577\n",
			"app_priority", "keep\n", "idle_reset_ms", "0\n", NULL,
		};

		make_params(dir, given);
	}
	CHECK(params_read(dir, &p, err, sizeof(err)) == 0 && p.nthresholds == 2 &&
	      p.thresholds[1] == 5000 && p.ntop_ports == 2 && p.top_ports[1] == 22);
	CHECK(setconf_string(dir, "", &c) == 0 && c.nthresholds == 2 && c.thresholds[0] == 1500 &&
	      c.auto_thresholds == 0 && c.max_flows == 5000 && c.ntop_ports == 2 &&
	      c.udp_policy == SRFF_UDP_IGNORE && c.untracked_priority == 0x100001 &&
	      c.app_priority == SRFF_APP_PRIO_KEEP && c.idle_reset_ms == 0);
	/* learn, from the module's thresholds while the bands fit */
	CHECK(setconf_string(dir, "thresholds auto\n", &c) == 0 && c.nthresholds == 2 &&
	      c.thresholds[0] == 1500 && c.auto_thresholds == 1);
	CHECK(setconf_string(dir, "thresholds auto\npriorities 6,0,1,2\n", &c) == 0 &&
	      c.nthresholds == 3 && c.thresholds[0] == 16384 && c.auto_thresholds == 1);
	/* fixed ones that do not fit the new priorities: the kernel refuses */
	CHECK(setconf_string(dir, "priorities 6,0,1,2\n", &c) == 0 && c.nthresholds == 2 &&
	      c.npriorities == 4 && c.auto_thresholds == 0);
	/* the file wins over every parameter */
	CHECK(setconf_string(dir, "max-flows 100\ntop-ports none\nudp track\n", &c) == 0 &&
	      c.max_flows == 100 && c.ntop_ports == 0 && c.udp_policy == SRFF_UDP_TRACK);
	{
		static const char *const learning_given[] = { "auto_thresholds", "1\n", NULL };

		make_params(dir, learning_given);
		CHECK(setconf_string(dir, "", &c) == 0 && c.thresholds[0] == 1500 &&
		      c.auto_thresholds == 1);
	}
	{
		static const char *const fixed_default[] = {
			"thresholds", "", "auto_thresholds", "0\n", NULL,
		};

		make_params(dir, fixed_default);
		CHECK(setconf_string(dir, "", &c) == 0 && c.thresholds[0] == 16384 &&
		      c.auto_thresholds == 0);
	}

	/* What cannot be read is named */
	{
		static const struct { const char *name, *value; } bad[] = {
			{ "udp_policy", "sometimes\n" }, { "thresholds", "1500,,5000\n" },
			{ "priorities", "6,0,\n" }, { "top_ports", "65536\n" },
			{ "auto_thresholds", "2\n" }, { "thresholds", "1k\n" },
			{ "classid_major", "65536\n" }, { "max_flows", "-1\n" },
		};

		for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
			const char *kv[] = { bad[i].name, bad[i].value, NULL };

			make_params(dir, stock_params);
			make_params(dir, kv);
			CHECK(params_read(dir, &p, err, sizeof(err)) == -1 && strstr(err, bad[i].name));
		}
		make_params(dir, stock_params);
		snprintf(text, sizeof(text), "%s/app_priority", dir);
		unlink(text);
		CHECK(params_read(dir, &p, err, sizeof(err)) == -1 && strstr(err, "app_priority") &&
		      strstr(err, "No such file"));
	}
	clean_params(dir);
}

/* Run tests/check_json.py MODE on what write() printed, compact and pretty. */
static void check_json(const char *mode, void (*write)(void))
{
	for (int pretty = 0; pretty < 2; pretty++) {
		char path[] = "/tmp/srffctl-json-XXXXXX", cmd[512];
		int fd = mkstemp(path);
		FILE *f = fdopen(fd, "w");

		print_init(true, pretty, f);
		write();
		print_finish();
		fclose(f);
		snprintf(cmd, sizeof(cmd), "%s -m json.tool %s >/dev/null && %s %s/check_json.py %s %s",
			 PYTHON, path, PYTHON, TESTS_DIR, mode, path);
		CHECK(system(cmd) == 0);
		unlink(path);
	}
}

static void write_doc(void)
{
	open_json_object(NULL);
	print_string(PRINT_ANY, "s", "%s", "quote\" back\\ nl\n tab\t cr\r ctl\x01\x1f del\x7f");
	print_string(PRINT_ANY, "k\"ey", "%s", "");
	print_uint(PRINT_ANY, "u", "%llu", UINT64_MAX);
	print_uint(PRINT_ANY, "zero", "%llu", 0);
	print_bool(PRINT_ANY, "t", "t", true);
	print_bool(PRINT_ANY, "b", "b", false);
	print_null(PRINT_ANY, "n", "%s", "-");
	print_text("never in JSON");
	print_uint(PRINT_FP, "text_only", "%llu", 5);
	open_json_array(PRINT_JSON, "empty");
	close_json_array(PRINT_JSON, NULL);
	open_json_object("empty_obj");
	close_json_object();
	open_json_array(PRINT_ANY, "a");
	for (int i = 0; i < 3; i++) {
		open_json_object(NULL);
		print_uint(PRINT_ANY, "i", "%llu", i);
		open_json_array(PRINT_JSON, "inner");
		for (int j = 0; j <= i; j++)
			print_uint(PRINT_JSON, NULL, NULL, j);
		close_json_array(PRINT_JSON, NULL);
		close_json_object();
	}
	close_json_array(PRINT_ANY, NULL);
	close_json_object();
}

/* Learnt thresholds: show prints those in force, save "thresholds auto",
 * which reads back as a request to learn them (and nothing more).
 */
static void auto_round_trip(void)
{
	struct config a = defaults, back;
	char text[4096];

	a.auto_thresholds = 1;
	CHECK(print_and_parse(&a, false, &back, text, sizeof(text)) == 0);
	CHECK(strstr(text, "thresholds auto  # now 1500b 5000b\n") != NULL);
	CHECK(back.has & CF_AUTO && back.auto_thresholds == 1 && !(back.has & CF_THRESHOLDS));
	CHECK(print_and_parse(&a, true, &back, text, sizeof(text)) == 0);
	CHECK(!strncmp(text, "thresholds auto\npriorities 6,0,2\n", 33));
	CHECK(back.has & CF_AUTO && back.auto_thresholds == 1 && back.nthresholds == 0);
	CHECK(back.npriorities == 3);
	/* the module's learnt defaults, as tc would show them */
	a.thresholds[0] = 16384;
	a.thresholds[1] = 131072;
	CHECK(print_and_parse(&a, false, &back, text, sizeof(text)) == 0);
	CHECK(strstr(text, "thresholds auto  # now 16Kb 128Kb\n") != NULL);
	/* fixed: show's tc units and save's plain bytes both read back */
	a.auto_thresholds = 0;
	CHECK(print_and_parse(&a, false, &back, text, sizeof(text)) == 0 &&
	      strstr(text, "thresholds 16Kb 128Kb\n") && same_config(&a, &back));
	CHECK(print_and_parse(&a, true, &back, text, sizeof(text)) == 0 &&
	      strstr(text, "thresholds 16384 131072\n") && same_config(&a, &back));
}

/* Counters as the kernel might report them: 3 bands. */
static struct stats counters(void)
{
	struct stats s = { .nbands = 3, .have_host = true };

	s.v[SRFF_STATS_A_FLOWS] = 12;
	s.v[SRFF_STATS_A_MAX_FLOWS] = 131072;
	s.v[SRFF_STATS_A_FLOWS_HOST] = 40;
	s.v[SRFF_STATS_A_MAX_FLOWS_HOST] = 524288;
	s.v[SRFF_STATS_A_CREATED] = 1000;
	s.v[SRFF_STATS_A_GC_FREED] = 900;
	s.v[SRFF_STATS_A_FIN_RETIRED] = 80;
	s.v[SRFF_STATS_A_GC_RUNS] = 77;
	s.v[SRFF_STATS_A_GC_LAST_US] = 1250;
	s.v[SRFF_STATS_A_UNTRACKED_BYTES] = UINT64_MAX;
	s.v[SRFF_STATS_A_AUTO_CHANGES] = 3;
	s.v[SRFF_STATS_A_LOOPBACK_PKTS] = 9;
	s.v[SRFF_STATS_A_DSCP_PKTS] = 5000;
	s.v[SRFF_STATS_A_DSCP_FAILED] = 2;
	for (unsigned int i = 0; i < 3; i++) {
		s.band_pkts[i] = 100 * (i + 1);
		s.band_bytes[i] = 100000 * (i + 1);
	}
	return s;
}

static const struct config learnt = {
	.thresholds = { 16384, 131072 }, .nthresholds = 2,
	.priorities = { 6, 0, 2 }, .npriorities = 3, .auto_thresholds = 1,
	.idle_timeout_ms = 2500, .gc_interval_ms = 2500, .max_flows = 131072,
};

static void bands(void)
{
	struct config c = learnt, d;
	uint64_t from, to;
	bool bounded;

	/* band b: bytes sent before the packet in [thresholds[b-1], thresholds[b]) */
	CHECK(config_band_range(&c, 0, &from, &to, &bounded) == 0 && from == 0 && to == 16384 && bounded);
	CHECK(config_band_range(&c, 1, &from, &to, &bounded) == 0 && from == 16384 && to == 131072 && bounded);
	CHECK(config_band_range(&c, 2, &from, &to, &bounded) == 0 && from == 131072 && !bounded);
	CHECK(config_band_range(&c, 3, &from, &to, &bounded) == -1);
	CHECK(config_band_priority(&c, 0) == 6 && config_band_priority(&c, 1) == 0 &&
	      config_band_priority(&c, 2) == 2);
	/* classid steering: major:(band+1), whatever the priorities say */
	c.classid_major = 0x10;
	CHECK(config_band_priority(&c, 0) == 0x100001 && config_band_priority(&c, 2) == 0x100003);
	/* configurations read before and after the counters must agree */
	d = c;
	CHECK(config_same_bands(&c, &d));
	d.thresholds[1]++;
	CHECK(!config_same_bands(&c, &d));
	d = c;
	d.nthresholds = 1;
	CHECK(!config_same_bands(&c, &d));
	d = c;
	d.classid_major = 0;
	CHECK(!config_same_bands(&c, &d));
	d = c;
	d.priorities[2] = 1;
	CHECK(!config_same_bands(&c, &d));
	d = c;
	d.idle_timeout_ms = 1000;	/* not about bands */
	CHECK(config_same_bands(&c, &d));
}

/* What stats prints as text for s under c, in buf. */
static void stats_text(const struct stats *s, const struct config *c, char *buf, size_t len)
{
	FILE *f = fmemopen(buf, len, "w");

	print_init(false, false, f);
	stats_print(s, c);
	print_finish();
	fclose(f);
}

static void stats_output(void)
{
	struct stats s = counters();
	struct config c = learnt;
	char text[4096];

	stats_text(&s, &c, text, sizeof(text));
	CHECK(strstr(text, "band  priority  from       to                packets              bytes\n") != NULL);
	CHECK(strstr(text, "\n0     6         0b         16Kb                  100             100000\n") != NULL);
	CHECK(strstr(text, "\n1     0         16Kb       128Kb                 200             200000\n") != NULL);
	CHECK(strstr(text, "\n2     2         128Kb      -                     300             300000\n") != NULL);
	CHECK(strstr(text, "flows 12 of max 131072  host 40 of max 524288\n") != NULL);
	CHECK(strstr(text, "  loopback 9\n") != NULL);
	/* DSCP counters: after the other packet counters, in text where
	 * marking is on or they counted something
	 */
	CHECK(strstr(text, "  loopback 9\npackets DSCP marked 5000  failed, no memory 2\ngc runs") != NULL);
	s.v[SRFF_STATS_A_DSCP_PKTS] = s.v[SRFF_STATS_A_DSCP_FAILED] = 0;
	stats_text(&s, &c, text, sizeof(text));
	CHECK(strstr(text, "  loopback 9\ngc runs") != NULL && !strstr(text, "DSCP"));
	s.v[SRFF_STATS_A_DSCP_FAILED] = 1;
	stats_text(&s, &c, text, sizeof(text));
	CHECK(strstr(text, "packets DSCP marked 0  failed, no memory 1\n") != NULL);
	s.v[SRFF_STATS_A_DSCP_FAILED] = 0;
	c.mark = SRFF_MARK_DSCP;
	stats_text(&s, &c, text, sizeof(text));
	CHECK(strstr(text, "  loopback 9\npackets DSCP marked 0  failed, no memory 0\ngc runs") != NULL);
	c.mark = SRFF_MARK_NONE;
	s = counters();
	/* Another namespace's reply has no host figures. */
	s.have_host = false;
	stats_text(&s, &c, text, sizeof(text));
	CHECK(strstr(text, "flows 12 of max 131072\n") != NULL && !strstr(text, "host"));
	s.have_host = true;
	c.classid_major = 0x10;
	stats_text(&s, &c, text, sizeof(text));
	CHECK(strstr(text, "\n2     10:3      128Kb      -") != NULL);
	/* a band the configuration does not have (it changed in between) */
	c = learnt;
	c.nthresholds = 1;
	stats_text(&s, &c, text, sizeof(text));
	CHECK(strstr(text, "\n2     ?         ?          ?                     300") != NULL);
	if (!strstr(text, "\n2     ?"))
		printf("# stats printed:\n%s", text);
}

static struct config learning;
static void write_stats(void)
{
	struct stats s = counters();

	stats_print(&s, &learnt);
}

static void write_stats_classid(void)
{
	struct stats s = counters();
	struct config c = learnt;

	c.classid_major = 0x10;
	stats_print(&s, &c);
}

static void write_show_defaults(void) { config_print(&defaults, false); }
static void write_show_auto(void) { learning = defaults; learning.auto_thresholds = 1; config_print(&learning, false); }
static void write_show_busy(void) { config_print(&busy, false); }
static void write_show_old_module(void)
{
	learning = defaults;
	learning.ndscp_map = 0;
	config_print(&learning, false);
}

static void write_stats_no_dscp(void)
{
	struct stats s = counters();

	s.v[SRFF_STATS_A_DSCP_PKTS] = s.v[SRFF_STATS_A_DSCP_FAILED] = 0;
	stats_print(&s, &learnt);
}

static void write_empty_array(void)
{
	open_json_array(PRINT_JSON, NULL);
	close_json_array(PRINT_JSON, NULL);
}

static void json_output(void)
{
	check_json("doc", write_doc);
	check_json("show-defaults", write_show_defaults);
	check_json("show-busy", write_show_busy);
	check_json("show-auto", write_show_auto);
	check_json("show-old-module", write_show_old_module);
	check_json("stats-no-dscp", write_stats_no_dscp);
	check_json("empty-array", write_empty_array);
	check_json("stats", write_stats);
	check_json("stats-classid", write_stats_classid);
}

static void version(void)
{
	run_tap("sh " TESTS_DIR "/check_version.sh " TESTS_DIR "/../.. '" SRFF_VERSION "'");
}

/* The completion offers the keys and values srffctl takes. */
static void completion(void)
{
	char cmd[2048];
	size_t len = 0;

	len += snprintf(cmd + len, sizeof(cmd) - len, "SRFF_KEYS='");
	for (int i = 0; config_keys[i]; i++)
		len += snprintf(cmd + len, sizeof(cmd) - len, "%s ", config_keys[i]);
	len += snprintf(cmd + len, sizeof(cmd) - len, "' SRFF_UDP='");
	for (int i = 0; udp_policy_names[i]; i++)
		len += snprintf(cmd + len, sizeof(cmd) - len, "%s ", udp_policy_names[i]);
	len += snprintf(cmd + len, sizeof(cmd) - len, "' SRFF_APP='");
	for (int i = 0; app_prio_names[i]; i++)
		len += snprintf(cmd + len, sizeof(cmd) - len, "%s ", app_prio_names[i]);
	len += snprintf(cmd + len, sizeof(cmd) - len, "' SRFF_MARK='");
	for (int i = 0; mark_names[i]; i++)
		len += snprintf(cmd + len, sizeof(cmd) - len, "%s ", mark_names[i]);
	snprintf(cmd + len, sizeof(cmd) - len, "' bash %s/check_completion.sh", TESTS_DIR);
	run_tap(cmd);
}

/* What write() prints as JSON, in a new file at path (a mkstemp pattern). */
static void write_json_file(char *path, void (*write)(void))
{
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	print_init(true, false, f);
	write();
	print_finish();
	fclose(f);
}

/* contrib/srff-prometheus on canned JSON and on what stats -j prints. */
static void prometheus(void)
{
	char plain[] = "/tmp/srffctl-stats-XXXXXX", classid[] = "/tmp/srffctl-stats-XXXXXX";
	char cmd[512];

	write_json_file(plain, write_stats);
	write_json_file(classid, write_stats_classid);
	snprintf(cmd, sizeof(cmd), "%s %s/check_prometheus.py %s %s", PYTHON, TESTS_DIR,
		 plain, classid);
	run_tap(cmd);
	unlink(plain);
	unlink(classid);
}

int main(void)
{
	sizes();
	durations();
	lists_and_ids();
	formatting();
	dscp();
	settings();
	apply_file();
	round_trip();
	auto_round_trip();
	setconf();
	bands();
	stats_output();
	json_output();
	version();
	completion();
	prometheus();
	printf("srffctl-unit: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
