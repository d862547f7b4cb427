// SPDX-License-Identifier: GPL-2.0
/*
 * Parsing and formatting of srffctl's values: sizes (1.5k, 5M, 4Mi),
 * durations (2500ms, 2.5s, 1m), lists, class ids, and the KEY VALUE
 * settings shared by `set` and apply files. No I/O, no netlink: unit-tested
 * natively by tests/test_parse.c. Semantic checks (ascending thresholds,
 * ranges) are the kernel's, so its message reaches the user.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "srffctl.h"

const char *const udp_policy_names[] = { "track", "top", "ignore", NULL };
const char *const app_prio_names[] = { "override", "keep", NULL };

int name_index(const char *const *names, const char *s)
{
	for (int i = 0; names[i]; i++)
		if (!strcmp(names[i], s))
			return i;
	return -1;
}

/*
 * A decimal number with an optional fraction, times a unit multiplier,
 * that must come out whole and fit in 64 bits. *end is set past the digits.
 */
static int scaled(const char *s, uint64_t mult, const char *end_of_number,
		  uint64_t *out)
{
	uint64_t ip = 0, frac = 0, div = 1;
	const char *p = s;

	if (p == end_of_number || !isdigit((unsigned char)*p))
		return -1;
	for (; p < end_of_number && isdigit((unsigned char)*p); p++) {
		unsigned int digit = *p - '0';

		if (ip > UINT64_MAX / 10 ||
		    (ip == UINT64_MAX / 10 && digit > UINT64_MAX % 10))
			return -1;
		ip = ip * 10 + digit;
	}
	if (p < end_of_number && *p == '.') {
		p++;
		if (p == end_of_number)
			return -1;
		for (; p < end_of_number && isdigit((unsigned char)*p); p++) {
			if (div > UINT64_MAX / 10 / 1000)
				return -1;	/* absurd precision */
			frac = frac * 10 + (*p - '0');
			div *= 10;
		}
	}
	if (p != end_of_number)
		return -1;
	if (ip && mult > UINT64_MAX / ip)
		return -1;
	/* frac/div * mult must be whole */
	if ((frac * mult) % div)
		return -1;
	if (ip * mult > UINT64_MAX - frac * mult / div)
		return -1;
	*out = ip * mult + frac * mult / div;
	return 0;
}

static const char *number_end(const char *s)
{
	while (isdigit((unsigned char)*s) || *s == '.')
		s++;
	return s;
}

int parse_size(const char *s, uint64_t *out)
{
	static const struct { const char *unit; uint64_t mult; } units[] = {
		{ "", 1 }, { "b", 1 }, { "B", 1 },
		{ "k", 1000 }, { "K", 1000 }, { "kB", 1000 },
		{ "M", 1000000 }, { "MB", 1000000 },
		{ "G", 1000000000 }, { "GB", 1000000000 },
		{ "T", 1000000000000ULL },
		{ "Ki", 1ULL << 10 }, { "KiB", 1ULL << 10 },
		{ "Mi", 1ULL << 20 }, { "MiB", 1ULL << 20 },
		{ "Gi", 1ULL << 30 }, { "GiB", 1ULL << 30 },
		{ "Ti", 1ULL << 40 },
	};
	const char *e = number_end(s);

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(e, units[i].unit))
			return scaled(s, units[i].mult, e, out);
	return -1;
}

int parse_duration_ms(const char *s, uint32_t *out)
{
	static const struct { const char *unit; uint64_t ms; } units[] = {
		{ "", 1 }, { "ms", 1 }, { "s", 1000 }, { "m", 60000 },
		{ "min", 60000 }, { "h", 3600000 },
	};
	const char *e = number_end(s);
	uint64_t v;

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(e, units[i].unit))
			continue;
		if (scaled(s, units[i].ms, e, &v) || v > UINT32_MAX)
			return -1;
		*out = v;
		return 0;
	}
	return -1;
}

int parse_u32(const char *s, uint32_t *out)
{
	uint64_t v;

	if (scaled(s, 1, s + strlen(s), &v) || v > UINT32_MAX)
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

int parse_list_priorities(const char *s, uint32_t *v, unsigned int max,
			  unsigned int *n)
{
	char *copy = strdup(s), *tok, *save = NULL;
	int err = 0;

	*n = 0;
	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == max || parse_priority(tok, &v[*n])) {
			err = -1;
			break;
		}
		(*n)++;
	}
	if (!*n)
		err = -1;
	free(copy);
	return err;
}

int parse_list_ports(const char *s, uint16_t *v, unsigned int max,
		     unsigned int *n)
{
	char *copy, *tok, *save = NULL;
	uint32_t p;
	int err = 0;

	*n = 0;
	if (!strcmp(s, "none"))
		return 0;
	copy = strdup(s);
	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		/* 0 is passed on: the kernel says why it is refused. */
		if (*n == max || parse_u32(tok, &p) || p > 65535) {
			err = -1;
			break;
		}
		v[(*n)++] = p;
	}
	if (!*n)
		err = -1;
	free(copy);
	return err;
}

const char *fmt_size(uint64_t v, char *buf, size_t len)
{
	static const struct { const char *unit; uint64_t mult; } units[] = {
		{ "Ti", 1ULL << 40 }, { "T", 1000000000000ULL },
		{ "Gi", 1ULL << 30 }, { "G", 1000000000 },
		{ "Mi", 1ULL << 20 }, { "M", 1000000 },
		{ "Ki", 1ULL << 10 }, { "k", 1000 },
	};

	/* The largest unit the value is a multiple of to two decimals
	 * (1.5k, 1.25M, 4Mi); anything else (1501) is shown exactly.
	 */
	for (size_t i = 0; v && i < sizeof(units) / sizeof(units[0]); i++) {
		uint64_t m = units[i].mult;

		if (v >= m && v <= UINT64_MAX / 100 && (v * 100) % m == 0) {
			uint64_t ip = v / m, fr = (v % m) * 100 / m;

			if (!fr)
				snprintf(buf, len, "%" PRIu64 "%s", ip, units[i].unit);
			else if (fr % 10 == 0)
				snprintf(buf, len, "%" PRIu64 ".%" PRIu64 "%s", ip, fr / 10, units[i].unit);
			else
				snprintf(buf, len, "%" PRIu64 ".%02" PRIu64 "%s", ip, fr, units[i].unit);
			return buf;
		}
	}
	snprintf(buf, len, "%" PRIu64, v);
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

static int errf(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

int config_set_thresholds(struct config *c, char **args, int n, char *err,
			  size_t errlen)
{
	if (n < 1)
		return errf(err, errlen, "thresholds: at least one size expected");
	if (n > SRFF_MAX_THRESHOLDS + 1)
		n = SRFF_MAX_THRESHOLDS + 1;	/* the kernel says "too many" */
	for (int i = 0; i < n; i++)
		if (parse_size(args[i], &c->thresholds[i]))
			return errf(err, errlen, "thresholds: '%s' is not a size (e.g. 1500, 1.5k, 5M, 4Mi)", args[i]);
	c->nthresholds = n;
	c->has |= CF_THRESHOLDS;
	return 0;
}

int config_set_key(struct config *c, const char *key, const char *v,
		   char *err, size_t errlen)
{
	int i;

	if (!strcmp(key, "thresholds")) {
		char *copy = strdup(v), *args[SRFF_MAX_THRESHOLDS + 1], *save = NULL, *tok;
		int n = 0, ret;

		if (!copy)
			return errf(err, errlen, "out of memory");
		for (tok = strtok_r(copy, ",", &save); tok && n < SRFF_MAX_THRESHOLDS + 1;
		     tok = strtok_r(NULL, ",", &save))
			args[n++] = tok;
		ret = config_set_thresholds(c, args, n, err, errlen);
		free(copy);
		return ret;
	} else if (!strcmp(key, "priorities")) {
		if (parse_list_priorities(v, c->priorities, SRFF_MAX_BANDS + 1, &c->npriorities))
			return errf(err, errlen, "priorities: '%s' is not a list like 6,0,2 (or 10:1,10:2)", v);
		c->has |= CF_PRIORITIES;
	} else if (!strcmp(key, "classid")) {
		if (parse_classid(v, &c->classid_major))
			return errf(err, errlen, "classid: '%s' is not a qdisc handle like 10: (or none)", v);
		c->has |= CF_CLASSID;
	} else if (!strcmp(key, "idle-timeout")) {
		if (parse_duration_ms(v, &c->idle_timeout_ms))
			return errf(err, errlen, "idle-timeout: '%s' is not a duration (e.g. 2500ms, 2.5s)", v);
		c->has |= CF_IDLE_TIMEOUT;
	} else if (!strcmp(key, "gc-interval")) {
		if (parse_duration_ms(v, &c->gc_interval_ms))
			return errf(err, errlen, "gc-interval: '%s' is not a duration (e.g. 2500ms, 2.5s)", v);
		c->has |= CF_GC_INTERVAL;
	} else if (!strcmp(key, "max-flows")) {
		uint64_t n;

		if (parse_size(v, &n) || n > UINT32_MAX)
			return errf(err, errlen, "max-flows: '%s' is not a count (e.g. 100000, 1Mi)", v);
		c->max_flows = n;
		c->has |= CF_MAX_FLOWS;
	} else if (!strcmp(key, "udp")) {
		i = name_index(udp_policy_names, v);
		if (i < 0)
			return errf(err, errlen, "udp: '%s' is not track, top or ignore", v);
		c->udp_policy = i;
		c->has |= CF_UDP;
	} else if (!strcmp(key, "top-ports")) {
		if (parse_list_ports(v, c->top_ports, SRFF_MAX_TOP_PORTS + 1, &c->ntop_ports))
			return errf(err, errlen, "top-ports: '%s' is not a list like 21,22,23 (or none)", v);
		c->has |= CF_TOP_PORTS;
	} else if (!strcmp(key, "untracked-priority")) {
		if (parse_priority(v, &c->untracked_priority))
			return errf(err, errlen, "untracked-priority: '%s' is not a priority", v);
		c->has |= CF_UNTRACKED;
	} else if (!strcmp(key, "app-priority")) {
		i = name_index(app_prio_names, v);
		if (i < 0)
			return errf(err, errlen, "app-priority: '%s' is not keep or override", v);
		c->app_priority = i;
		c->has |= CF_APP_PRIO;
	} else if (!strcmp(key, "idle-reset")) {
		if (!strcmp(v, "off"))
			c->idle_reset_ms = 0;
		else if (parse_duration_ms(v, &c->idle_reset_ms))
			return errf(err, errlen, "idle-reset: '%s' is not a duration or off", v);
		c->has |= CF_IDLE_RESET;
	} else {
		return errf(err, errlen, "unknown setting '%s' (see srffctl help)", key);
	}
	return 0;
}

int config_parse_file(FILE *f, const char *name, struct config *c, char *err,
		      size_t errlen)
{
	char line[1024], msg[256];
	unsigned int lineno = 0;

	while (fgets(line, sizeof(line), f)) {
		char *args[SRFF_MAX_THRESHOLDS + 3], *save = NULL, *tok, *hash;
		int n = 0;

		lineno++;
		if (!strchr(line, '\n') && !feof(f))
			return errf(err, errlen, "%s:%u: line too long", name, lineno);
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		for (tok = strtok_r(line, " \t\r\n", &save); tok;
		     tok = strtok_r(NULL, " \t\r\n", &save)) {
			if (n == (int)(sizeof(args) / sizeof(args[0])))
				return errf(err, errlen, "%s:%u: too many values", name, lineno);
			args[n++] = tok;
		}
		if (!n)
			continue;
		if (!strcmp(args[0], "thresholds")) {
			if (config_set_thresholds(c, args + 1, n - 1, msg, sizeof(msg)))
				return errf(err, errlen, "%s:%u: %s", name, lineno, msg);
			continue;
		}
		if (n != 2)
			return errf(err, errlen, "%s:%u: '%s' takes one value", name, lineno, args[0]);
		if (config_set_key(c, args[0], args[1], msg, sizeof(msg)))
			return errf(err, errlen, "%s:%u: %s", name, lineno, msg);
	}
	if (ferror(f))
		return errf(err, errlen, "%s: %s", name, strerror(errno));
	if (!c->has)
		return errf(err, errlen, "%s: no settings", name);
	return 0;
}
