// SPDX-License-Identifier: GPL-2.0
/*
 * Configuration: module parameters (the defaults every namespace starts
 * with), the one validity check shared by load time and netlink, and the
 * RCU swap that publishes a namespace's new configuration.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mm.h>
#include <linux/string.h>
#include <linux/pkt_sched.h>

#include "srff.h"
#include "srff/units.h"

/*
 * Sizes and durations in module parameters read as srffctl reads them
 * (include/srff/units.h: thresholds=16k,1m idle_reset_ms=100ms), bare
 * numbers as before (bytes, ms). Each "type" below is usable with
 * module_param() and module_param_array().
 */
static int param_set_srff_size(const char *val, const struct kernel_param *kp)
{
	unsigned long long v;

	if (srff_parse_size(val, &v))
		return -EINVAL;
	*(unsigned long long *)kp->arg = v;
	return 0;
}

static const struct kernel_param_ops param_ops_srff_size = {
	.set = param_set_srff_size,
	.get = param_get_ullong,
};
#define param_check_srff_size(name, p) __param_check(name, p, unsigned long long)

/* A count of flows or buckets: a size that fits in 32 bits (1m, 64k). */
static int param_set_srff_count(const char *val, const struct kernel_param *kp)
{
	unsigned long long v;

	if (srff_parse_size(val, &v) || v > UINT_MAX)
		return -EINVAL;
	*(unsigned int *)kp->arg = v;
	return 0;
}

static const struct kernel_param_ops param_ops_srff_count = {
	.set = param_set_srff_count,
	.get = param_get_uint,
};
#define param_check_srff_count(name, p) __param_check(name, p, unsigned int)

/* Milliseconds: 2500, 2500ms, 2.5s, 1m; "off" (0) too where allowed. */
static int param_set_srff_ms(const char *val, const struct kernel_param *kp)
{
	unsigned int v;

	if (srff_parse_duration_ms(val, &v))
		return -EINVAL;
	*(unsigned int *)kp->arg = v;
	return 0;
}

static const struct kernel_param_ops param_ops_srff_ms = {
	.set = param_set_srff_ms,
	.get = param_get_uint,
};
#define param_check_srff_ms(name, p) __param_check(name, p, unsigned int)

static int param_set_srff_ms_off(const char *val, const struct kernel_param *kp)
{
	if (sysfs_streq(val, "off")) {
		*(unsigned int *)kp->arg = 0;
		return 0;
	}
	return param_set_srff_ms(val, kp);
}

static const struct kernel_param_ops param_ops_srff_ms_off = {
	.set = param_set_srff_ms_off,
	.get = param_get_uint,
};
#define param_check_srff_ms_off(name, p) __param_check(name, p, unsigned int)

static unsigned long long thresholds[SRFF_MAX_THRESHOLDS];
static unsigned int nthresholds;	/* 0: not given */
module_param_array(thresholds, srff_size, &nthresholds, 0444);
MODULE_PARM_DESC(thresholds, "ascending byte thresholds, at most 15, tc's units (16k,128k); giving them fixes them (default: learnt, starting at 16k,128k)");

static int auto_thresholds = -1;
module_param(auto_thresholds, int, 0444);
MODULE_PARM_DESC(auto_thresholds, "1: learn the thresholds from the sizes of finished flows, 0: keep them as set (default: 1 unless thresholds= is given)");

static unsigned int auto_min_flows = SRFF_AUTO_MIN_FLOWS;
module_param(auto_min_flows, srff_count, 0444);
MODULE_PARM_DESC(auto_min_flows, "learn thresholds only from at least this many recent flows (default 1000)");

static unsigned int priorities[SRFF_MAX_BANDS] = { 6, 0, 2 };
static unsigned int npriorities = 3;
module_param_array(priorities, uint, &npriorities, 0444);
MODULE_PARM_DESC(priorities, "skb->priority per band, one more than thresholds (default 6,0,2: pfifo_fast bands 0,1,2)");

static unsigned short classid_major;
module_param(classid_major, ushort, 0444);
MODULE_PARM_DESC(classid_major, "if non-zero, write class id major:(band+1) of a prio qdisc instead of priorities");

static unsigned int max_flows;
module_param(max_flows, srff_count, 0444);
MODULE_PARM_DESC(max_flows, "flows tracked per namespace at most; other namespaces cannot raise theirs above it (default: from RAM, 1 per 64 KiB, 4096..1048576)");

static unsigned int max_flows_total;
module_param(max_flows_total, srff_count, 0444);
MODULE_PARM_DESC(max_flows_total, "flows tracked by all namespaces together at most (default: from RAM, 1 per 16 KiB, at least max_flows)");

static unsigned int max_flows_reserved;
module_param(max_flows_reserved, srff_count, 0444);
MODULE_PARM_DESC(max_flows_reserved, "flows of max_flows_total only the initial namespace may use (default: max_flows, at most half of max_flows_total)");

static unsigned int userns_idle_timeout_ms = 60000;
module_param(userns_idle_timeout_ms, srff_ms, 0444);
MODULE_PARM_DESC(userns_idle_timeout_ms, "the longest idle timeout a namespace owned by another user namespace may set, if longer than idle_timeout_ms (default 60000, 1m)");

static unsigned int hash_buckets;
module_param(hash_buckets, srff_count, 0444);
MODULE_PARM_DESC(hash_buckets, "hash buckets per namespace at most; the table grows to it with its flows, 1..16777216 (default: max_flows / 2, power of two)");

static unsigned int idle_timeout_ms = 2500;
module_param(idle_timeout_ms, srff_ms, 0444);
MODULE_PARM_DESC(idle_timeout_ms, "free a flow idle this long: ms, or 2.5s, 1m (default 2500)");

static unsigned int gc_interval_ms = 2500;
module_param(gc_interval_ms, srff_ms, 0444);
MODULE_PARM_DESC(gc_interval_ms, "garbage collection period: ms, or 2.5s; other namespaces cannot set a shorter one (default 2500)");

static unsigned int idle_reset_ms = 100;
module_param(idle_reset_ms, srff_ms_off, 0444);
MODULE_PARM_DESC(idle_reset_ms, "restart a flow's byte count after this idle time: ms, or 100ms, 0.1s; local TCP after its path's minimum RTT if shorter, and not while its socket still holds data (default 100; 0 or off: never)");

static unsigned int untracked_priority;
module_param(untracked_priority, uint, 0444);
MODULE_PARM_DESC(untracked_priority, "priority of packets no flow could hold, table full (default 0)");

static char *udp_policy = "track";
module_param(udp_policy, charp, 0444);
MODULE_PARM_DESC(udp_policy, "track, top or ignore (default track)");

static char *app_priority = "override";
module_param(app_priority, charp, 0444);
MODULE_PARM_DESC(app_priority, "override or keep a non-zero priority the application or the system set (default override; keep where priorities pick VLAN PCPs or DCB classes)");

static unsigned short top_ports[SRFF_MAX_TOP_PORTS];
static unsigned int ntop_ports;
module_param_array(top_ports, ushort, &ntop_ports, 0444);
MODULE_PARM_DESC(top_ports, "ports (either side) that always get the top band, e.g. 21,22,23");

static char *netns = "ask";
module_param(netns, charp, 0444);
MODULE_PARM_DESC(netns, "where srff is enabled: ask (the initial namespace; another one when its admin turns it on, the default), all (every namespace from its creation) or host (the initial namespace only)");

enum srff_netns_mode { SRFF_NETNS_ASK, SRFF_NETNS_ALL, SRFF_NETNS_HOST };

static const char *const netns_names[] = {
	[SRFF_NETNS_ASK] = "ask",
	[SRFF_NETNS_ALL] = "all",
	[SRFF_NETNS_HOST] = "host",
};

static const char *const udp_policy_names[] = {
	[SRFF_UDP_TRACK] = "track",
	[SRFF_UDP_TOP] = "top",
	[SRFF_UDP_IGNORE] = "ignore",
};

static const char *const app_prio_names[] = {
	[SRFF_APP_PRIO_OVERRIDE] = "override",
	[SRFF_APP_PRIO_KEEP] = "keep",
};

/* Default cap: one flow per 64 KiB of RAM, 4096..1 Mi flows. At ~104 bytes
 * a flow, a full table uses ~0.16 % of RAM.
 */
#define SRFF_RAM_PER_FLOW	(64UL << 10)
#define SRFF_DEFAULT_FLOWS_MIN	4096U
#define SRFF_DEFAULT_FLOWS_MAX	(1U << 20)
/* All namespaces together: one flow per 16 KiB (~0.65 % of RAM). */
#define SRFF_RAM_PER_HOST_FLOW	(16UL << 10)

static unsigned int default_max_flows(void)
{
	unsigned long ram = totalram_pages() << PAGE_SHIFT;

	return clamp_t(unsigned long, ram / SRFF_RAM_PER_FLOW,
		       SRFF_DEFAULT_FLOWS_MIN, SRFF_DEFAULT_FLOWS_MAX);
}

/* The per-namespace cap every namespace starts with, and the most any
 * namespace but the initial one may set.
 */
static unsigned int host_max_flows(void)
{
	return max_flows ? max_flows : default_max_flows();
}

/* Flows of every namespace together, at most (srff_host_flows.max). */
unsigned int srff_config_max_flows_host(void)
{
	unsigned long ram = totalram_pages() << PAGE_SHIFT;

	if (max_flows_total)
		return max_flows_total;
	return clamp_t(unsigned long, ram / SRFF_RAM_PER_HOST_FLOW,
		       host_max_flows(), SRFF_MAX_FLOWS_MAX);
}

/* Flows of max_flows_total no namespace but the initial one may take. */
unsigned int srff_config_max_flows_reserved(void)
{
	unsigned int total = srff_config_max_flows_host();

	if (max_flows_reserved)
		return max_flows_reserved;
	return min(host_max_flows(), total / 2);
}

/* What all the namespaces owned by one user together may hold: one
 * namespace's cap, however many namespaces that user creates.
 */
unsigned int srff_config_max_flows_owner(void)
{
	return host_max_flows();
}

/* The most buckets a table grows to; 0: from its max_flows (table.c). */
unsigned int srff_config_hash_buckets(void)
{
	return hash_buckets;
}

/* A priority is a pfifo_fast/prio band priority 0..15 or a major:minor. */
static bool priority_ok(u32 prio)
{
	return prio <= TC_PRIO_MAX || (prio >> 16) != 0;
}

/*
 * Check @c and derive its jiffies fields. Returns 0, or the SRFF_A_*
 * attribute that is wrong, with *@msg saying why.
 */
int srff_config_check(struct srff_config *c, const char **msg)
{
	unsigned int i;

	if (c->nthresholds < 1 || c->nthresholds > SRFF_MAX_THRESHOLDS) {
		*msg = "need 1 to 15 thresholds";
		return SRFF_A_THRESHOLDS;
	}
	if (c->thresholds[0] == 0) {
		*msg = "thresholds must be above 0 bytes";
		return SRFF_A_THRESHOLDS;
	}
	for (i = 1; i < c->nthresholds; i++) {
		if (c->thresholds[i] <= c->thresholds[i - 1]) {
			*msg = "thresholds must be strictly ascending";
			return SRFF_A_THRESHOLDS;
		}
	}
	if (!c->classid_major && c->npriorities != c->nthresholds + 1) {
		*msg = "need one priority per band (thresholds + 1), or classid steering";
		return SRFF_A_PRIORITIES;
	}
	for (i = 0; i < c->npriorities; i++) {
		if (!priority_ok(c->priorities[i])) {
			*msg = "priority must be 0-15 or a class id major:minor";
			return SRFF_A_PRIORITIES;
		}
	}
	if (!priority_ok(c->untracked_priority)) {
		*msg = "priority must be 0-15 or a class id major:minor";
		return SRFF_A_UNTRACKED_PRIORITY;
	}
	if (c->idle_timeout_ms < SRFF_IDLE_TIMEOUT_MIN_MS ||
	    c->idle_timeout_ms > SRFF_IDLE_TIMEOUT_MAX_MS) {
		*msg = "idle timeout must be 100 ms to 1 hour";
		return SRFF_A_IDLE_TIMEOUT_MS;
	}
	if (c->gc_interval_ms < SRFF_GC_INTERVAL_MIN_MS ||
	    c->gc_interval_ms > SRFF_GC_INTERVAL_MAX_MS) {
		*msg = "GC interval must be 100 ms to 1 minute";
		return SRFF_A_GC_INTERVAL_MS;
	}
	if (c->idle_reset_ms > SRFF_IDLE_RESET_MAX_MS) {
		*msg = "idle reset must be 0 (off) to 1 hour";
		return SRFF_A_IDLE_RESET_MS;
	}
	/* GC forgets a flow idle for idle_timeout: a reset after as long or
	 * longer could never happen.
	 */
	if (c->idle_reset_ms && c->idle_reset_ms >= c->idle_timeout_ms) {
		*msg = "idle reset must be shorter than the idle timeout";
		return SRFF_A_IDLE_RESET_MS;
	}
	if (c->max_flows < SRFF_MAX_FLOWS_MIN || c->max_flows > SRFF_MAX_FLOWS_MAX) {
		*msg = "max flows must be 16 to 16777216";
		return SRFF_A_MAX_FLOWS;
	}
	if (c->udp_policy > SRFF_UDP_MAX) {
		*msg = "UDP policy must be track, top or ignore";
		return SRFF_A_UDP_POLICY;
	}
	if (c->app_priority > SRFF_APP_PRIO_MAX) {
		*msg = "app priority must be override or keep";
		return SRFF_A_APP_PRIORITY;
	}
	if (c->auto_thresholds > 1) {
		*msg = "auto thresholds must be 0 (as set) or 1 (learnt)";
		return SRFF_A_AUTO_THRESHOLDS;
	}
	if (c->enabled > 1) {
		*msg = "enabled must be 0 (off) or 1 (on)";
		return SRFF_A_ENABLED;
	}
	if (c->mark > SRFF_MARK_MAX) {
		*msg = "mark must be none or dscp";
		return SRFF_A_MARK;
	}
	if (c->dscp_override > 1) {
		*msg = "DSCP override must be 0 (off) or 1 (on)";
		return SRFF_A_DSCP_OVERRIDE;
	}
	/* A map that is the default for its length is the default: a saved
	 * configuration read back keeps following the number of bands.
	 */
	if (c->dscp_map_set && c->ndscp >= 1 && c->ndscp <= SRFF_MAX_BANDS &&
	    c->dscp[c->ndscp - 1] == SRFF_DSCP_LE &&
	    memchr_inv(c->dscp, SRFF_DSCP_KEEP, c->ndscp - 1) == NULL)
		c->dscp_map_set = 0;
	if (!c->dscp_map_set) {
		/* The default: every band keeps the packet's DSCP but the
		 * lowest (there are two or more), Lower Effort (RFC 8622).
		 */
		c->ndscp = c->nthresholds + 1;
		memset(c->dscp, SRFF_DSCP_KEEP, sizeof(c->dscp));
		c->dscp[c->nthresholds] = SRFF_DSCP_LE;
	} else if (c->ndscp != c->nthresholds + 1) {
		*msg = "need one DSCP per band (thresholds + 1)";
		return SRFF_A_DSCP_MAP;
	}
	for (i = 0; i < c->ndscp; i++) {
		if (c->dscp[i] > 63 && c->dscp[i] != SRFF_DSCP_KEEP) {
			*msg = "DSCP must be 0-63 or keep";
			return SRFF_A_DSCP_MAP;
		}
	}
	if (c->ntop_ports > SRFF_MAX_TOP_PORTS) {
		*msg = "at most 32 top ports";
		return SRFF_A_TOP_PORTS;
	}
	for (i = 0; i < c->ntop_ports; i++) {
		if (!c->top_ports[i]) {
			*msg = "port 0 cannot be a top port";
			return SRFF_A_TOP_PORTS;
		}
	}
	c->idle_timeout = msecs_to_jiffies(c->idle_timeout_ms);
	c->idle_reset = msecs_to_jiffies(c->idle_reset_ms);
	return 0;
}

static int name_index(const char *const *names, unsigned int n, const char *s)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (sysfs_streq(names[i], s))
			return i;
	return -1;
}

static int netns_mode(void)
{
	return name_index(netns_names, ARRAY_SIZE(netns_names), netns);
}

/* Whether a new namespace starts with srff enabled (@host: the initial). */
bool srff_config_enabled_at_init(bool host)
{
	return host || netns_mode() == SRFF_NETNS_ALL;
}

unsigned int srff_config_auto_min_flows(void)
{
	return auto_min_flows;
}

/*
 * @n thresholds for automatic mode before it has learnt any (and when the
 * number of bands changes): SRFF_AUTO_FLOOR, then 8 times the previous one
 * (16 KiB, 128 KiB, 1 MiB, ...).
 */
void srff_config_auto_default(struct srff_config *c, unsigned int n)
{
	unsigned int i;

	c->nthresholds = n;
	for (i = 0; i < n && i < SRFF_MAX_THRESHOLDS; i++)
		c->thresholds[i] = SRFF_AUTO_FLOOR << (3 * i);
}

/* A new configuration from the module parameters, unchecked; charged,
 * as everything a namespace allocates in process context, to the caller's
 * memory cgroup.
 */
struct srff_config *srff_config_from_params(void)
{
	struct srff_config *c = kzalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);
	unsigned int i;
	int idx;

	if (!c)
		return NULL;
	if (nthresholds) {
		c->nthresholds = nthresholds;
		for (i = 0; i < nthresholds && i < SRFF_MAX_THRESHOLDS; i++)
			c->thresholds[i] = thresholds[i];
		c->auto_thresholds = auto_thresholds == 1;
	} else {
		/* One band per priority, or 3 under classid steering. */
		srff_config_auto_default(c, classid_major || npriorities < 2 ?
					 2 : npriorities - 1);
		c->auto_thresholds = auto_thresholds != 0;
	}
	/* Out of range: srff_config_check refuses it. */
	if (auto_thresholds < -1 || auto_thresholds > 1)
		c->auto_thresholds = U8_MAX;
	c->npriorities = npriorities;
	for (i = 0; i < npriorities && i < SRFF_MAX_BANDS; i++)
		c->priorities[i] = priorities[i];
	c->classid_major = classid_major;
	c->idle_timeout_ms = idle_timeout_ms;
	c->gc_interval_ms = gc_interval_ms;
	c->idle_reset_ms = idle_reset_ms;
	c->max_flows = host_max_flows();
	c->untracked_priority = untracked_priority;
	idx = name_index(udp_policy_names, ARRAY_SIZE(udp_policy_names), udp_policy);
	c->udp_policy = idx < 0 ? U8_MAX : idx;
	idx = name_index(app_prio_names, ARRAY_SIZE(app_prio_names), app_priority);
	c->app_priority = idx < 0 ? U8_MAX : idx;
	c->ntop_ports = ntop_ports;
	for (i = 0; i < ntop_ports && i < SRFF_MAX_TOP_PORTS; i++)
		c->top_ports[i] = top_ports[i];
	return c;
}

/* Called once at module load: refuse to load with bad parameters. */
int srff_config_params_check(void)
{
	struct srff_config *c = srff_config_from_params();
	const char *msg = NULL;
	int bad;

	if (!c)
		return -ENOMEM;
	bad = srff_config_check(c, &msg);
	kfree(c);
	if (!bad && netns_mode() < 0) {
		msg = "netns must be ask, all or host";
		bad = 1;
	}
	if (!bad && hash_buckets > SRFF_TABLE_MAX_BUCKETS) {
		msg = "hash_buckets must be 0 (from max_flows) to 16777216";
		bad = 1;
	}
	if (!bad && max_flows_total &&
	    (max_flows_total < host_max_flows() || max_flows_total > SRFF_MAX_FLOWS_MAX)) {
		msg = "max_flows_total must be at least max_flows and at most 16777216";
		bad = 1;
	}
	if (!bad && max_flows_reserved >= srff_config_max_flows_host()) {
		msg = "max_flows_reserved must be below max_flows_total";
		bad = 1;
	}
	if (!bad && (userns_idle_timeout_ms < SRFF_IDLE_TIMEOUT_MIN_MS ||
		     userns_idle_timeout_ms > SRFF_IDLE_TIMEOUT_MAX_MS)) {
		msg = "userns_idle_timeout_ms out of range (as idle_timeout_ms)";
		bad = 1;
	}
	if (bad) {
		pr_err("srff: bad module parameter: %s\n", msg);
		return -EINVAL;
	}
	return 0;
}

/*
 * What only the host's administrator may do (as conntrack keeps
 * nf_conntrack_max read-only outside init_net): in any namespace but the
 * initial one (!@host), max_flows may not exceed the module's max_flows
 * and gc_interval may not be shorter than the module's gc_interval_ms, so
 * the root of a user namespace gets no more memory or GC work than the
 * host allowed; under netns=host, srff may not be enabled there at all.
 * A namespace owned by another user namespace (@userns) may not keep idle
 * flows longer than userns_idle_timeout_ms (or idle_timeout_ms, if longer):
 * its flows hold slots of the pools it shares with others (main.c).
 * Returns 0, or the attribute that is over the limit.
 */
int srff_config_check_limits(const struct srff_config *c, bool host,
			     bool userns, const char **msg)
{
	if (host)
		return 0;
	if (userns &&
	    c->idle_timeout_ms > max(userns_idle_timeout_ms, idle_timeout_ms)) {
		*msg = "idle timeout above the host's limit for user namespaces (module parameter userns_idle_timeout_ms)";
		return SRFF_A_IDLE_TIMEOUT_MS;
	}
	if (c->enabled && netns_mode() == SRFF_NETNS_HOST) {
		*msg = "srff runs in the initial namespace only (module parameter netns=host)";
		return SRFF_A_ENABLED;
	}
	if (c->max_flows > host_max_flows()) {
		*msg = "max flows above the host's limit (module parameter max_flows)";
		return SRFF_A_MAX_FLOWS;
	}
	if (c->gc_interval_ms < gc_interval_ms) {
		*msg = "GC interval below the host's limit (module parameter gc_interval_ms)";
		return SRFF_A_GC_INTERVAL_MS;
	}
	return 0;
}

struct srff_config *srff_config_get_locked(struct srff_net *sn)
{
	return rcu_dereference_protected(sn->config,
					 lockdep_is_held(&sn->config_lock));
}

/* Publish @c (checked) as @sn's configuration; the old one is freed after
 * every packet that may still read it has left the hook. The caller must
 * not touch the old configuration after this: outside an RCU read section
 * the grace period may already have ended. Test builds free it at once,
 * after the readers, so that such a use is a KASAN report under make
 * test-debug every time, not a race that the grace period hides.
 */
void srff_config_swap(struct srff_net *sn, struct srff_config *c)
{
	struct srff_tracker *tr;
	struct srff_config *old;

	lockdep_assert_held(&sn->config_lock);
	old = rcu_replace_pointer(sn->config, c,
				  lockdep_is_held(&sn->config_lock));
	tr = srff_tracker_locked(sn);
	if (tr)
		srff_table_set_max_flows(&tr->table, c->max_flows);
	if (!old)
		return;
#ifdef SRFF_TEST_HOOKS
	synchronize_rcu();
	kfree(old);
#else
	kfree_rcu(old, rcu);
#endif
}
