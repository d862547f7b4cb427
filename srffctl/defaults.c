// SPDX-License-Identifier: GPL-2.0
/*
 * setconf: the module's load-time defaults, read from its parameters in
 * sysfs (all 0444), and a file's settings laid over them, so that every
 * setting the file does not name goes back to what a new namespace starts
 * with. No netlink here: unit-tested natively on a made-up directory.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "srffctl.h"

/* One parameter's value, without the newline the kernel ends it with. */
static int read_param(const char *dir, const char *name, char *buf, size_t len,
		      char *err, size_t errlen)
{
	char path[4096];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return errf(err, errlen, "%s: %s", path, strerror(errno));
	n = fread(buf, 1, len - 1, f);
	if (ferror(f)) {
		fclose(f);
		return errf(err, errlen, "%s: %s", path, strerror(errno));
	}
	fclose(f);
	buf[n] = '\0';
	if (n == len - 1)
		return errf(err, errlen, "%s: value too long", path);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/*
 * An array parameter as the kernel prints it: "6,0,2", or "" when none
 * were given. Each element goes through fn into v[i].
 */
static int parse_array(const char *s, void *v, unsigned int max, unsigned int *n,
		       int (*fn)(const char *s, void *v, unsigned int i))
{
	char elem[64];

	*n = 0;
	while (*s) {
		size_t len = strcspn(s, ",");

		if (!len || len >= sizeof(elem) || *n == max)
			return -1;
		memcpy(elem, s, len);
		elem[len] = '\0';
		if (fn(elem, v, *n))
			return -1;
		(*n)++;
		s += len;
		if (*s == ',' && !*++s)
			return -1;
	}
	return 0;
}

static int u64_elem(const char *s, void *v, unsigned int i)
{
	uint64_t x;

	if (parse_size(s, &x) || strspn(s, "0123456789") != strlen(s))
		return -1;
	((uint64_t *)v)[i] = x;
	return 0;
}

static int u32_elem(const char *s, void *v, unsigned int i)
{
	return parse_u32(s, &((uint32_t *)v)[i]);
}

static int u16_elem(const char *s, void *v, unsigned int i)
{
	uint32_t x;

	if (parse_u32(s, &x) || x > 65535)
		return -1;
	((uint16_t *)v)[i] = x;
	return 0;
}

int params_read(const char *dir, struct params *p, char *err, size_t errlen)
{
	static const struct { const char *name; size_t off; } u32s[] = {
		{ "max_flows", offsetof(struct params, max_flows) },
		{ "idle_timeout_ms", offsetof(struct params, idle_timeout_ms) },
		{ "gc_interval_ms", offsetof(struct params, gc_interval_ms) },
		{ "idle_reset_ms", offsetof(struct params, idle_reset_ms) },
		{ "untracked_priority", offsetof(struct params, untracked_priority) },
	};
	char v[4096];
	uint32_t x;
	int i;

	memset(p, 0, sizeof(*p));
#define READ(name) do {							\
		if (read_param(dir, name, v, sizeof(v), err, errlen))	\
			return -1;					\
	} while (0)
#define BAD(name) errf(err, errlen, "module parameter %s: cannot read '%s'", name, v)
	READ("thresholds");
	if (parse_array(v, p->thresholds, LIST_MAX, &p->nthresholds, u64_elem))
		return BAD("thresholds");
	READ("auto_thresholds");
	if (!strcmp(v, "-1"))
		p->auto_thresholds = -1;	/* not given */
	else if (parse_u32(v, &x) || x > 1)
		return BAD("auto_thresholds");
	else
		p->auto_thresholds = x;
	READ("priorities");
	if (parse_array(v, p->priorities, LIST_MAX, &p->npriorities, u32_elem))
		return BAD("priorities");
	READ("classid_major");
	if (parse_u32(v, &x) || x > 65535)
		return BAD("classid_major");
	p->classid_major = x;
	for (size_t k = 0; k < sizeof(u32s) / sizeof(u32s[0]); k++) {
		READ(u32s[k].name);
		if (parse_u32(v, (uint32_t *)((char *)p + u32s[k].off)))
			return BAD(u32s[k].name);
	}
	READ("udp_policy");
	i = name_index(udp_policy_names, v);
	if (i < 0)
		return BAD("udp_policy");
	p->udp_policy = i;
	READ("app_priority");
	i = name_index(app_prio_names, v);
	if (i < 0)
		return BAD("app_priority");
	p->app_priority = i;
	READ("top_ports");
	if (parse_array(v, p->top_ports, LIST_MAX, &p->ntop_ports, u16_elem))
		return BAD("top_ports");
#undef READ
#undef BAD
	return 0;
}

/*
 * What a namespace gets when max_flows is 0: one flow per 64 KiB of RAM,
 * 4096 to 1 Mi (srff_nf/config.c, default_max_flows()). @ram is what
 * sysinfo(2) says, totalram_pages() in bytes, as the kernel counts it.
 */
uint32_t default_max_flows(uint64_t ram)
{
	uint64_t n = ram / (64 << 10);

	return n < 4096 ? 4096 : n > (1U << 20) ? 1U << 20 : n;
}

/*
 * Learnt thresholds start, for n of them, at SRFF_AUTO_FLOOR (16 KiB) and
 * 8 times the previous one (srff_nf/config.c, srff_config_auto_default()).
 */
#define AUTO_FLOOR (16ULL << 10)

static void auto_default(struct config *c, unsigned int n)
{
	c->nthresholds = n;
	for (unsigned int i = 0; i < n && i < SRFF_MAX_THRESHOLDS; i++)
		c->thresholds[i] = AUTO_FLOOR << (3 * i);
}

void dscp_default_map(uint8_t *map, unsigned int nbands)
{
	if (nbands > SRFF_MAX_BANDS)
		nbands = SRFF_MAX_BANDS;
	memset(map, SRFF_DSCP_KEEP, nbands);
	if (nbands >= 2)
		map[nbands - 1] = SRFF_DSCP_LE;
}

void config_setconf(const struct config *file, const struct params *p,
		    uint64_t ram, bool dscp, struct config *c)
{
	unsigned int has = file->has;

	/* The defaults, as srff_config_from_params() makes them... */
	memset(c, 0, sizeof(*c));
	memcpy(c->priorities, p->priorities, sizeof(c->priorities));
	c->npriorities = p->npriorities;
	c->classid_major = p->classid_major;
	c->idle_timeout_ms = p->idle_timeout_ms;
	c->gc_interval_ms = p->gc_interval_ms;
	c->idle_reset_ms = p->idle_reset_ms;
	c->max_flows = p->max_flows ? p->max_flows : default_max_flows(ram);
	c->untracked_priority = p->untracked_priority;
	c->udp_policy = p->udp_policy;
	c->app_priority = p->app_priority;
	memcpy(c->top_ports, p->top_ports, sizeof(c->top_ports));
	c->ntop_ports = p->ntop_ports;

	/* ...with what the file names over them... */
	if (has & CF_PRIORITIES) {
		memcpy(c->priorities, file->priorities, sizeof(c->priorities));
		c->npriorities = file->npriorities;
	}
	if (has & CF_CLASSID)
		c->classid_major = file->classid_major;
	if (has & CF_IDLE_TIMEOUT)
		c->idle_timeout_ms = file->idle_timeout_ms;
	if (has & CF_GC_INTERVAL)
		c->gc_interval_ms = file->gc_interval_ms;
	if (has & CF_IDLE_RESET)
		c->idle_reset_ms = file->idle_reset_ms;
	if (has & CF_MAX_FLOWS)
		c->max_flows = file->max_flows;
	if (has & CF_UNTRACKED)
		c->untracked_priority = file->untracked_priority;
	if (has & CF_UDP)
		c->udp_policy = file->udp_policy;
	if (has & CF_APP_PRIO)
		c->app_priority = file->app_priority;
	if (has & CF_TOP_PORTS) {
		memcpy(c->top_ports, file->top_ports, sizeof(c->top_ports));
		c->ntop_ports = file->ntop_ports;
	}
	if (has & CF_ENABLED)	/* else on or off as it is: not sent */
		c->enabled = file->enabled;
	/* DSCP marking has no module parameters: off, never overriding. */
	if (has & CF_MARK)
		c->mark = file->mark;
	if (has & CF_DSCP_OVERRIDE)
		c->dscp_override = file->dscp_override;

	/*
	 * ...and thresholds that go with the bands that makes: the file's;
	 * else the module's, if given and, when learnt, as many as the bands
	 * need (a fixed number that does not fit is the kernel's to refuse);
	 * else the ones learning starts from, for as many bands as the
	 * priorities make (3 under class-id steering), as at load time.
	 * Always sent, with whether they are learnt, so that nothing of the
	 * current thresholds survives.
	 */
	if (has & CF_THRESHOLDS) {
		memcpy(c->thresholds, file->thresholds, sizeof(c->thresholds));
		c->nthresholds = file->nthresholds;
		c->auto_thresholds = (has & CF_AUTO) ? file->auto_thresholds : 0;
	} else {
		bool learn = (has & CF_AUTO) ? file->auto_thresholds :
			     p->nthresholds ? p->auto_thresholds == 1 : p->auto_thresholds != 0;
		bool fits = c->classid_major || c->npriorities == p->nthresholds + 1;

		if (p->nthresholds && (fits || !learn)) {
			memcpy(c->thresholds, p->thresholds, sizeof(c->thresholds));
			c->nthresholds = p->nthresholds;
		} else {
			auto_default(c, c->classid_major || c->npriorities < 2 ?
				     2 : c->npriorities - 1);
		}
		c->auto_thresholds = learn;
	}

	/*
	 * The file's DSCP map (one that does not fit the bands is the
	 * kernel's to refuse), else the default for as many bands as the
	 * thresholds above make, sent as well: a map in force that fits
	 * them would otherwise survive. A module without DSCP marking gets
	 * what the file names and nothing more (it refuses that itself).
	 */
	if (has & CF_DSCP_MAP) {
		memcpy(c->dscp_map, file->dscp_map, sizeof(c->dscp_map));
		c->ndscp_map = file->ndscp_map;
	} else {
		c->ndscp_map = c->nthresholds + 1 > SRFF_MAX_BANDS ?
			       SRFF_MAX_BANDS : c->nthresholds + 1;
		dscp_default_map(c->dscp_map, c->ndscp_map);
	}
	c->has = CF_THRESHOLDS | CF_PRIORITIES | CF_CLASSID | CF_IDLE_TIMEOUT |
		 CF_GC_INTERVAL | CF_MAX_FLOWS | CF_UDP | CF_TOP_PORTS |
		 CF_UNTRACKED | CF_APP_PRIO | CF_IDLE_RESET | CF_AUTO |
		 (has & (CF_ENABLED | CF_MARK | CF_DSCP_MAP | CF_DSCP_OVERRIDE)) |
		 (dscp ? CF_MARK | CF_DSCP_MAP | CF_DSCP_OVERRIDE : 0);
}
