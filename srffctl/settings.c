// SPDX-License-Identifier: GPL-2.0
/*
 * The KEY VALUE settings shared by `set`, `set-thresholds` and apply files,
 * and the one printer of a configuration: `show` (units), `save` (exact,
 * an apply file) and `show -j`. What `save` prints, config_parse_file()
 * reads back to the same configuration; tests/test_parse.c checks it.
 * No netlink here: unit-tested natively.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "srffctl.h"

/* Format a message into @err (@len bytes) and return -1: the parsers' error path. */
int errf(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

/* Sizes as separate arguments (set-thresholds 16k 1m, apply files), each
 * of which may also be a comma list (set thresholds 16k,1m); or "auto":
 * the kernel learns them, keeping their number (set thresholds auto).
 */
int config_set_thresholds(struct config *c, char **args, int n, char *err,
			  size_t errlen)
{
	unsigned int count = 0;

	if (n < 1)
		return errf(err, errlen, "thresholds: at least one size expected");
	if (!strcmp(args[0], "auto")) {
		if (n > 1)
			return errf(err, errlen, "thresholds: 'auto' takes no sizes");
		c->auto_thresholds = 1;
		c->has |= CF_AUTO;
		return 0;
	}
	for (int i = 0; i < n; i++) {
		const char *s = args[i];

		for (;;) {
			size_t len = strcspn(s, ",");
			char elem[64];

			if (!len || len >= sizeof(elem))
				return errf(err, errlen, "thresholds: '%s' is not a list of sizes", args[i]);
			if (count == LIST_MAX)
				return errf(err, errlen, "thresholds: more than %d values", LIST_MAX);
			memcpy(elem, s, len);
			elem[len] = '\0';
			if (parse_size(elem, &c->thresholds[count]))
				return errf(err, errlen, "thresholds: '%s' is not a size (e.g. 1500, 16k, 1.5m, 4Mb)", elem);
			count++;
			if (!s[len])
				break;
			s += len + 1;
		}
	}
	c->nthresholds = count;
	c->has |= CF_THRESHOLDS;
	return 0;
}

const char *const config_keys[] = {
	"thresholds", "priorities", "classid", "idle-timeout", "gc-interval",
	"max-flows", "udp", "top-ports", "untracked-priority", "app-priority",
	"idle-reset", "enabled", "mark", "dscp-map", "dscp-override", NULL,
};

/*
 * dscp-map D0,D1,...: one DSCP per band (parse_dscp()). Unlike the other
 * lists, more entries than bands can ever be is refused here, and each
 * error names its entry.
 */
/* KEY on|off into *out (1 or 0). */
static int on_off(const char *key, const char *v, uint8_t *out, char *err,
		  size_t errlen)
{
	if (!strcmp(v, "on"))
		*out = 1;
	else if (!strcmp(v, "off"))
		*out = 0;
	else
		return errf(err, errlen, "%s: '%s' is not on or off", key, v);
	return 0;
}

static int set_dscp_map(struct config *c, const char *v, char *err, size_t errlen)
{
	static const char what[] = "keep, 0-63, le, ef, va, cs0-cs7 or af11-af43";
	uint8_t map[SRFF_MAX_BANDS];
	const char *s = v;
	unsigned int n = 0;

	for (;;) {
		size_t len = strcspn(s, ",");
		char elem[64];
		int ret;

		if (!len)
			return errf(err, errlen, "dscp-map: entry %u of '%s' is empty", n + 1, v);
		if (len >= sizeof(elem))
			return errf(err, errlen, "dscp-map: entry %u, '%.*s', is not a DSCP (%s)",
				    n + 1, (int)len, s, what);
		memcpy(elem, s, len);
		elem[len] = '\0';
		if (n == SRFF_MAX_BANDS)
			return errf(err, errlen, "dscp-map: entry %u, '%s', is one too many: one DSCP per band, at most %d",
				    n + 1, elem, SRFF_MAX_BANDS);
		ret = parse_dscp(elem, &map[n]);
		if (ret == -2)
			return errf(err, errlen, "dscp-map: entry %u, '%s', is above 63, the largest DSCP",
				    n + 1, elem);
		if (ret)
			return errf(err, errlen, "dscp-map: entry %u, '%s', is not a DSCP (%s)",
				    n + 1, elem, what);
		n++;
		if (!s[len])
			break;
		s += len + 1;
	}
	memcpy(c->dscp_map, map, n);
	c->ndscp_map = n;
	c->has |= CF_DSCP_MAP;
	return 0;
}

static int list_err(int ret, const char *key, const char *v, const char *example,
		    char *err, size_t errlen)
{
	if (ret == -2)
		return errf(err, errlen, "%s: more than %d values", key, LIST_MAX);
	return errf(err, errlen, "%s: '%s' is not a list like %s", key, v, example);
}

int config_set_key(struct config *c, const char *key, const char *v,
		   char *err, size_t errlen)
{
	int i, ret;

	if (!strcmp(key, "thresholds")) {
		char *args[] = { (char *)v };

		return config_set_thresholds(c, args, 1, err, errlen);
	} else if (!strcmp(key, "priorities")) {
		ret = parse_list_priorities(v, c->priorities, LIST_MAX, &c->npriorities);
		if (ret)
			return list_err(ret, key, v, "6,0,2 (or 10:1,10:2)", err, errlen);
		c->has |= CF_PRIORITIES;
	} else if (!strcmp(key, "classid")) {
		if (parse_classid(v, &c->classid_major))
			return errf(err, errlen, "classid: '%s' is not a qdisc handle like 10: (or none)", v);
		c->has |= CF_CLASSID;
	} else if (!strcmp(key, "idle-timeout")) {
		if (parse_duration_ms(v, &c->idle_timeout_ms))
			return errf(err, errlen, "idle-timeout: '%s' is not a duration (e.g. 2500ms, 2.5s, 1m)", v);
		c->has |= CF_IDLE_TIMEOUT;
	} else if (!strcmp(key, "gc-interval")) {
		if (parse_duration_ms(v, &c->gc_interval_ms))
			return errf(err, errlen, "gc-interval: '%s' is not a duration (e.g. 2500ms, 2.5s, 1m)", v);
		c->has |= CF_GC_INTERVAL;
	} else if (!strcmp(key, "max-flows")) {
		uint64_t n;

		if (parse_size(v, &n) || n > UINT32_MAX)
			return errf(err, errlen, "max-flows: '%s' is not a count (e.g. 100000, 1m)", v);
		c->max_flows = n;
		c->has |= CF_MAX_FLOWS;
	} else if (!strcmp(key, "udp")) {
		i = name_index(udp_policy_names, v);
		if (i < 0)
			return errf(err, errlen, "udp: '%s' is not track, top or ignore", v);
		c->udp_policy = i;
		c->has |= CF_UDP;
	} else if (!strcmp(key, "top-ports")) {
		ret = parse_list_ports(v, c->top_ports, LIST_MAX, &c->ntop_ports);
		if (ret)
			return list_err(ret, key, v, "21,22,23 (or none)", err, errlen);
		c->has |= CF_TOP_PORTS;
	} else if (!strcmp(key, "untracked-priority")) {
		if (parse_priority(v, &c->untracked_priority))
			return errf(err, errlen, "untracked-priority: '%s' is not a priority (e.g. 0, or 10:3)", v);
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
			return errf(err, errlen, "idle-reset: '%s' is not a duration (e.g. 1s) or off", v);
		c->has |= CF_IDLE_RESET;
	} else if (!strcmp(key, "enabled")) {
		if (on_off(key, v, &c->enabled, err, errlen))
			return -1;
		c->has |= CF_ENABLED;
	} else if (!strcmp(key, "mark")) {
		i = name_index(mark_names, v);
		if (i < 0)
			return errf(err, errlen, "mark: '%s' is not dscp or none", v);
		c->mark = i;
		c->has |= CF_MARK;
	} else if (!strcmp(key, "dscp-map")) {
		return set_dscp_map(c, v, err, errlen);
	} else if (!strcmp(key, "dscp-override")) {
		if (on_off(key, v, &c->dscp_override, err, errlen))
			return -1;
		c->has |= CF_DSCP_OVERRIDE;
	} else {
		return errf(err, errlen, "unknown setting '%s' (see srffctl help)", key);
	}
	return 0;
}

/*
 * An apply file: one "KEY VALUE" per line, "thresholds T1 T2 ..." taking
 * several; blank lines and # comments are skipped. The whole file is read
 * before anything is sent, and the first error names FILE:LINE. Only
 * setconf takes a file without settings (everything back to defaults).
 */
int config_parse_file(FILE *f, const char *name, struct config *c,
		      bool allow_empty, char *err, size_t errlen)
{
	char line[4096], msg[256];
	unsigned int lineno = 0;

	while (fgets(line, sizeof(line), f)) {
		char *args[LIST_MAX + 2], *save = NULL, *tok, *hash;
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
			return errf(err, errlen, "%s:%u: '%s' takes one value, not %d",
				    name, lineno, args[0], n - 1);
		if (config_set_key(c, args[0], args[1], msg, sizeof(msg)))
			return errf(err, errlen, "%s:%u: %s", name, lineno, msg);
	}
	if (ferror(f))
		return errf(err, errlen, "%s: %s", name, strerror(errno));
	if (!c->has && !allow_empty)
		return errf(err, errlen, "%s: no settings", name);
	return 0;
}

static const char *exact_ms(uint32_t ms, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRIu32 "ms", ms);
	return buf;
}

void config_print(const struct config *c, bool exact)
{
	const char *(*dur)(uint32_t, char *, size_t) = exact ? exact_ms : fmt_duration;
	char b[64];
	unsigned int i;

	open_json_object(NULL);

	/* Whether srff runs here at all: show says it first. Not saved: an
	 * apply file tunes srff, and turning it on or off is `set enabled`.
	 */
	if (!exact)
		print_text(c->enabled ? "enabled on\n" : "enabled off\n");

	/* Learnt: "thresholds auto" (read back: learn them again), and the
	 * ones in force as a comment (show).
	 */
	print_text(c->auto_thresholds ? "thresholds auto" : "thresholds");
	if (c->auto_thresholds && !exact)
		print_text("  # now");
	open_json_array(PRINT_JSON, "thresholds");
	for (i = 0; i < c->nthresholds && !(c->auto_thresholds && exact); i++) {
		print_uint(PRINT_JSON, NULL, NULL, c->thresholds[i]);
		if (exact)
			print_uint(PRINT_FP, NULL, " %" PRIu64, c->thresholds[i]);
		else
			print_string(PRINT_FP, NULL, " %s", fmt_size(c->thresholds[i], b, sizeof(b)));
	}
	close_json_array(PRINT_JSON, NULL);
	print_text("\n");

	print_text("priorities");
	open_json_array(PRINT_JSON, "priorities");
	for (i = 0; i < c->npriorities; i++)
		print_priority(PRINT_ANY, NULL, i ? ",%s" : " %s", c->priorities[i]);
	close_json_array(PRINT_JSON, NULL);
	print_text("\n");

	/* JSON: "10:" as tc writes a qdisc handle, or null; classid_major is
	 * the same as a number, for scripts written before.
	 */
	if (c->classid_major) {
		snprintf(b, sizeof(b), "%x:", c->classid_major);
		print_string(PRINT_ANY, "classid", "classid %s\n", b);
	} else {
		print_null(PRINT_ANY, "classid", "classid %s\n", "none");
	}
	print_uint(PRINT_JSON, "classid_major", NULL, c->classid_major);

	print_uint(PRINT_JSON, "idle_timeout_ms", NULL, c->idle_timeout_ms);
	print_string(PRINT_FP, NULL, "idle-timeout %s\n", dur(c->idle_timeout_ms, b, sizeof(b)));
	print_uint(PRINT_JSON, "gc_interval_ms", NULL, c->gc_interval_ms);
	print_string(PRINT_FP, NULL, "gc-interval %s\n", dur(c->gc_interval_ms, b, sizeof(b)));
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

	print_priority(PRINT_ANY, "untracked_priority", "untracked-priority %s\n",
		       c->untracked_priority);
	print_string(PRINT_ANY, "app_priority", "app-priority %s\n",
		     c->app_priority <= SRFF_APP_PRIO_MAX ? app_prio_names[c->app_priority] : "?");
	print_uint(PRINT_JSON, "idle_reset_ms", NULL, c->idle_reset_ms);
	print_bool(PRINT_JSON, "auto_thresholds", NULL, c->auto_thresholds);
	if (c->idle_reset_ms)
		print_string(PRINT_FP, NULL, "idle-reset %s\n", dur(c->idle_reset_ms, b, sizeof(b)));
	else
		print_text("idle-reset off\n");
	print_bool(PRINT_JSON, "enabled", NULL, c->enabled);

	/* DSCP marking: whether, the DSCP per band (by name where it has
	 * one; JSON: numbers, null for keep), and whether an application's
	 * own DSCP is rewritten too. Left out for a module without it, so
	 * that what save writes there, it takes back.
	 */
	if (c->ndscp_map) {
		print_string(PRINT_ANY, "mark", "mark %s\n",
			     c->mark <= SRFF_MARK_MAX ? mark_names[c->mark] : "?");
		print_text("dscp-map");
		open_json_array(PRINT_JSON, "dscp_map");
		for (i = 0; i < c->ndscp_map; i++) {
			if (c->dscp_map[i] == SRFF_DSCP_KEEP)
				print_null(PRINT_JSON, NULL, NULL, NULL);
			else
				print_uint(PRINT_JSON, NULL, NULL, c->dscp_map[i]);
			print_string(PRINT_FP, NULL, i ? ",%s" : " %s",
				     fmt_dscp(c->dscp_map[i], b, sizeof(b)));
		}
		close_json_array(PRINT_JSON, NULL);
		print_text("\n");
		print_bool(PRINT_JSON, "dscp_override", NULL, c->dscp_override);
		print_text(c->dscp_override ? "dscp-override on\n" : "dscp-override off\n");
	}

	close_json_object();
}
