// SPDX-License-Identifier: GPL-2.0
/*
 * Parsing and formatting of srffctl's values: sizes (16k, 1.5m, 4Mb: tc's),
 * durations (2500ms, 2.5s, 1m), lists, class ids, protocols, DSCPs. No I/O, no
 * netlink: unit-tested natively by tests/test_parse.c. Only the form is
 * checked here; semantic checks (ascending thresholds, ranges) are the
 * kernel's, so its message reaches the user.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <netinet/in.h>

#include "srffctl.h"
#include "srff/units.h"

const char *const udp_policy_names[] = { "track", "top", "ignore", NULL };
const char *const app_prio_names[] = { "override", "keep", NULL };
const char *const mark_names[] = { "none", "dscp", NULL };

int name_index(const char *const *names, const char *s)
{
	for (int i = 0; names[i]; i++)
		if (!strcmp(names[i], s))
			return i;
	return -1;
}

/* Sizes and durations: include/srff/units.h, the module's own parser. */
int parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;

	if (srff_parse_size(s, &v))
		return -1;
	*out = v;
	return 0;
}

int parse_duration_ms(const char *s, uint32_t *out)
{
	unsigned int v;

	if (srff_parse_duration_ms(s, &v))
		return -1;
	*out = v;
	return 0;
}

int parse_u32(const char *s, uint32_t *out)
{
	unsigned long long v;

	if (srff_units_scaled(s, s + strlen(s), 1, &v) || v > UINT32_MAX)
		return -1;
	*out = v;
	return 0;
}

static int parse_hex16(const char *s, const char *end, uint16_t *out)
{
	unsigned long v = 0;

	if (s == end || end - s > 4)
		return -1;
	for (; s < end; s++) {
		if (!isxdigit((unsigned char)*s))
			return -1;
		v = v * 16 + (isdigit((unsigned char)*s) ? *s - '0' :
			      tolower((unsigned char)*s) - 'a' + 10);
	}
	*out = v;
	return 0;
}

/* A priority: a decimal number, or a class id MAJOR:MINOR in hex (tc). */
int parse_priority(const char *s, uint32_t *out)
{
	const char *colon = strchr(s, ':');
	uint16_t maj, min;

	if (!colon)
		return parse_u32(s, out);
	if (parse_hex16(s, colon, &maj) || parse_hex16(colon + 1, colon + strlen(colon), &min))
		return -1;
	*out = (uint32_t)maj << 16 | min;
	return 0;
}

/* "MAJOR:" (hex, as tc writes qdisc handles), or "none". */
int parse_classid(const char *s, uint16_t *major)
{
	const char *colon = strchr(s, ':');

	if (!strcmp(s, "none") || !strcmp(s, "off")) {
		*major = 0;
		return 0;
	}
	if (!colon || colon[1] || parse_hex16(s, colon, major) || !*major)
		return -1;
	return 0;
}

/*
 * Call fn on each element of "a,b,c". Empty elements ("6,,2", "6,") are
 * malformed, not skipped. Returns 0, fn's non-zero value, or -2 when there
 * are more than max.
 */
static int each_element(const char *s, unsigned int max, unsigned int *n,
			int (*fn)(const char *elem, unsigned int i, void *arg),
			void *arg)
{
	char elem[64];

	*n = 0;
	for (;;) {
		size_t len = strcspn(s, ",");
		int err;

		if (!len || len >= sizeof(elem))
			return -1;
		if (*n == max)
			return -2;
		memcpy(elem, s, len);
		elem[len] = '\0';
		err = fn(elem, *n, arg);
		if (err)
			return err;
		(*n)++;
		if (!s[len])
			return 0;
		s += len + 1;
	}
}

static int priority_elem(const char *elem, unsigned int i, void *arg)
{
	return parse_priority(elem, &((uint32_t *)arg)[i]);
}

int parse_list_priorities(const char *s, uint32_t *v, unsigned int max,
			  unsigned int *n)
{
	return each_element(s, max, n, priority_elem, v);
}

static int port_elem(const char *elem, unsigned int i, void *arg)
{
	uint32_t p;

	/* 0 is passed on: the kernel says why it is refused. */
	if (parse_u32(elem, &p) || p > 65535)
		return -1;
	((uint16_t *)arg)[i] = p;
	return 0;
}

int parse_list_ports(const char *s, uint16_t *v, unsigned int max,
		     unsigned int *n)
{
	if (!strcmp(s, "none")) {
		*n = 0;
		return 0;
	}
	return each_element(s, max, n, port_elem, v);
}

/* tcp, udp, icmp, ipv6-icmp (icmpv6), udplite, or a number 0-255. */
int parse_proto(const char *s)
{
	static const struct { const char *name; int proto; } names[] = {
		{ "tcp", IPPROTO_TCP }, { "udp", IPPROTO_UDP },
		{ "udplite", IPPROTO_UDPLITE }, { "icmp", IPPROTO_ICMP },
		{ "ipv6-icmp", IPPROTO_ICMPV6 }, { "icmpv6", IPPROTO_ICMPV6 },
	};
	uint32_t v;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i].name))
			return names[i].proto;
	if (parse_u32(s, &v) || v > 255)
		return -1;
	return v;
}

/* What parse_priority reads: 6, or a class id 10:3 in hex. */
const char *fmt_priority(uint32_t p, char *buf, size_t len)
{
	if (p >> 16)
		snprintf(buf, len, "%x:%x", p >> 16, p & 0xffff);
	else
		snprintf(buf, len, "%u", p);
	return buf;
}

/*
 * A size as tc prints it (sprint_size(): 1500b, 16Kb, 4Mb), in the largest
 * unit the value is a whole multiple of, so that it is exact where tc would
 * round: 1536b, not 2Kb. What it prints, parse_size() reads back.
 */
const char *fmt_size(uint64_t v, char *buf, size_t len)
{
	static const struct { const char *unit; unsigned int shift; } units[] = {
		{ "Gb", 30 }, { "Mb", 20 }, { "Kb", 10 },
	};

	for (size_t i = 0; v && i < sizeof(units) / sizeof(units[0]); i++) {
		uint64_t m = 1ULL << units[i].shift;

		if (v % m == 0) {
			snprintf(buf, len, "%" PRIu64 "%s", v / m, units[i].unit);
			return buf;
		}
	}
	snprintf(buf, len, "%" PRIu64 "b", v);
	return buf;
}

const char *fmt_duration(uint32_t ms, char *buf, size_t len)
{
	if (ms && ms % 3600000 == 0)
		snprintf(buf, len, "%uh", ms / 3600000);
	else if (ms && ms % 60000 == 0)
		snprintf(buf, len, "%um", ms / 60000);
	else if (ms && ms % 1000 == 0)
		snprintf(buf, len, "%us", ms / 1000);
	else
		snprintf(buf, len, "%ums", ms);
	return buf;
}


/*
 * DSCP names, in the order fmt_dscp() prefers them: LE (RFC 8622), EF
 * (RFC 3246), VOICE-ADMIT (RFC 5865), the assured-forwarding classes of
 * RFC 2597 (AFxy = 8x + 2y) and the class selectors (CSn = 8n, RFC 2474).
 */
static const struct { const char *name; uint8_t v; } dscp_names[] = {
	{ "le", SRFF_DSCP_LE }, { "ef", 46 }, { "va", 44 },
	{ "af11", 10 }, { "af12", 12 }, { "af13", 14 },
	{ "af21", 18 }, { "af22", 20 }, { "af23", 22 },
	{ "af31", 26 }, { "af32", 28 }, { "af33", 30 },
	{ "af41", 34 }, { "af42", 36 }, { "af43", 38 },
	{ "cs0", 0 }, { "cs1", 8 }, { "cs2", 16 }, { "cs3", 24 },
	{ "cs4", 32 }, { "cs5", 40 }, { "cs6", 48 }, { "cs7", 56 },
	{ "keep", SRFF_DSCP_KEEP },
};

int parse_dscp(const char *s, uint8_t *out)
{
	unsigned int v = 0, base = 10;
	const char *p = s;

	for (size_t i = 0; i < sizeof(dscp_names) / sizeof(dscp_names[0]); i++) {
		if (!strcasecmp(s, dscp_names[i].name)) {
			*out = dscp_names[i].v;
			return 0;
		}
	}
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	if (!*p)
		return -1;
	for (; *p; p++) {
		unsigned char ch = *p;
		unsigned int d;

		if (isdigit(ch))
			d = ch - '0';
		else if (base == 16 && isxdigit(ch))
			d = tolower(ch) - 'a' + 10;
		else
			return -1;
		v = v * base + d;
		if (v > 255)	/* out of range already: no overflow */
			v = 256;
	}
	if (v > 63)
		return -2;
	*out = v;
	return 0;
}

const char *fmt_dscp(uint8_t v, char *buf, size_t len)
{
	for (size_t i = 0; i < sizeof(dscp_names) / sizeof(dscp_names[0]); i++) {
		if (dscp_names[i].v == v) {
			snprintf(buf, len, "%s", dscp_names[i].name);
			return buf;
		}
	}
	snprintf(buf, len, "%u", v);
	return buf;
}
