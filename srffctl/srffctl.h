/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srffctl: the command-line tool of srff. One header for its parts:
 *   main.c     options, the command table, exit codes
 *   nl.c       libnl-genl plumbing: family, requests, extended acks, dumps
 *   parse.c    sizes, durations, lists, class ids (pure; unit-tested natively)
 *   settings.c KEY VALUE settings, apply files, printing a configuration
 *              (pure; unit-tested natively)
 *   print.c    one print path for text and JSON (iproute2 style)
 *   config.c   show, set, set-thresholds, save, apply, setconf
 *   defaults.c setconf's defaults: the module parameters in sysfs
 *              (unit-tested natively)
 *   stats.c    stats: the counters and the configuration they go with
 *   stats_print.c  stats, printed: per band its priority and byte range
 *              (pure; unit-tested natively)
 *   flows.c    flows, flush
 *   sizes.c    sizes (the flow-size histogram)
 */
#ifndef SRFFCTL_H
#define SRFFCTL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/srff.h>

/* Exit codes. */
enum {
	EXIT_OK = 0,
	EXIT_ERROR = 1,		/* the kernel rejected the request, or other */
	EXIT_USAGE = 2,
	EXIT_PERM = 3,		/* EPERM: needs CAP_NET_ADMIN */
	EXIT_NOMODULE = 4,	/* no generic netlink family "srff" */
};

/* ---- parse.c ---- */
int parse_size(const char *s, uint64_t *out);
int parse_duration_ms(const char *s, uint32_t *out);
int parse_u32(const char *s, uint32_t *out);
int parse_priority(const char *s, uint32_t *out);
int parse_classid(const char *s, uint16_t *major);
/* Lists "a,b,c": 0, or -1 if malformed (an empty element too), or -2 if
 * longer than max.
 */
int parse_list_priorities(const char *s, uint32_t *v, unsigned int max, unsigned int *n);
int parse_list_ports(const char *s, uint16_t *v, unsigned int max, unsigned int *n);
int parse_proto(const char *s);
const char *fmt_priority(uint32_t p, char *buf, size_t len);
const char *fmt_size(uint64_t v, char *buf, size_t len);
const char *fmt_duration(uint32_t ms, char *buf, size_t len);
extern const char *const udp_policy_names[];
extern const char *const app_prio_names[];
extern const char *const mark_names[];
int name_index(const char *const *names, const char *s);
/* A DSCP: keep (SRFF_DSCP_KEEP), 0-63 in decimal or 0x hex, or a name (le,
 * ef, va, af11-af43, cs0-cs7), in any case. 0, -1 if it is none of these,
 * or -2 for a number above 63.
 */
int parse_dscp(const char *s, uint8_t *out);
/* Its name if it has one (le, ef, va, afXY, csN, keep), else the number. */
const char *fmt_dscp(uint8_t v, char *buf, size_t len);

/*
 * A configuration as the tool holds it; `has` marks what a SET carries.
 * Lists hold more than the kernel takes (LIST_MAX), so that "too many" is
 * the kernel's to say, with its own message.
 */
#define LIST_MAX 64

enum {
	CF_THRESHOLDS = 1 << 0, CF_PRIORITIES = 1 << 1, CF_CLASSID = 1 << 2,
	CF_IDLE_TIMEOUT = 1 << 3, CF_GC_INTERVAL = 1 << 4, CF_MAX_FLOWS = 1 << 5,
	CF_UDP = 1 << 6, CF_TOP_PORTS = 1 << 7, CF_UNTRACKED = 1 << 8,
	CF_APP_PRIO = 1 << 9, CF_IDLE_RESET = 1 << 10, CF_AUTO = 1 << 11,
	CF_ENABLED = 1 << 12, CF_MARK = 1 << 13, CF_DSCP_MAP = 1 << 14,
	CF_DSCP_OVERRIDE = 1 << 15,
};

struct config {
	unsigned int has;
	uint64_t thresholds[LIST_MAX];
	unsigned int nthresholds;
	uint32_t priorities[LIST_MAX];
	unsigned int npriorities;
	uint16_t classid_major;
	uint32_t idle_timeout_ms, gc_interval_ms, max_flows;
	uint8_t udp_policy, app_priority;
	uint16_t top_ports[LIST_MAX];
	unsigned int ntop_ports;
	uint32_t untracked_priority, idle_reset_ms;
	uint8_t auto_thresholds;	/* 1: learnt by the kernel */
	uint8_t enabled;		/* 1: srff marks this namespace's packets */
	uint8_t mark;			/* enum srff_mark */
	uint8_t dscp_override;		/* 1: rewrite an application's DSCP too */
	/* Per band: a DSCP or SRFF_DSCP_KEEP. From the kernel, none (0) only
	 * from a module that predates DSCP marking: show and save leave the
	 * three settings out then.
	 */
	uint8_t dscp_map[SRFF_MAX_BANDS];
	unsigned int ndscp_map;
};

/* ---- settings.c ---- */
extern const char *const config_keys[];	/* NULL-terminated */
/* set KEY VALUE: returns 0, or -1 with a message in err. */
int config_set_key(struct config *c, const char *key, const char *value,
		   char *err, size_t errlen);
int config_set_thresholds(struct config *c, char **args, int n,
			  char *err, size_t errlen);
/* Parse an apply file; errors name FILE:LINE. */
int config_parse_file(FILE *f, const char *name, struct config *c,
		      bool allow_empty, char *err, size_t errlen);
/* Through print.c: KEY VALUE lines with units (show), exact values for an
 * apply file (save), or the JSON object of docs/interfaces.md.
 */
void config_print(const struct config *c, bool exact);

/* ---- stats_print.c ---- */
struct stats {
	uint64_t v[SRFF_STATS_A_MAX + 1];	/* counters, by attribute */
	bool have_host;		/* flows_host sent (the initial namespace) */
	uint64_t band_pkts[SRFF_MAX_BANDS], band_bytes[SRFF_MAX_BANDS];
	unsigned int nbands;
};
/* Band b's skb->priority, or class id major:(b + 1) under classid steering. */
uint32_t config_band_priority(const struct config *c, unsigned int band);
/* Band b's bytes-sent range [from, to) (*bounded false: no end); -1 if the
 * configuration has no band b.
 */
int config_band_range(const struct config *c, unsigned int band,
		      uint64_t *from, uint64_t *to, bool *bounded);
bool config_same_bands(const struct config *a, const struct config *b);
void stats_print(const struct stats *s, const struct config *c);

/* ---- defaults.c ---- */
/* The module parameters in sysfs: what every namespace starts with. */
#define SRFF_PARAMS_DIR "/sys/module/srff/parameters"
struct params {
	uint64_t thresholds[LIST_MAX];
	unsigned int nthresholds;		/* 0: not given, learnt */
	int auto_thresholds;			/* -1: not given */
	uint32_t priorities[LIST_MAX];
	unsigned int npriorities;
	uint16_t classid_major;
	uint32_t max_flows;			/* 0: from RAM */
	uint32_t idle_timeout_ms, gc_interval_ms, idle_reset_ms;
	uint32_t untracked_priority;
	uint8_t udp_policy, app_priority;
	uint16_t top_ports[LIST_MAX];
	unsigned int ntop_ports;
};
/* Read them from dir; 0, or -1 with a message in err (errno kept). */
int params_read(const char *dir, struct params *p, char *err, size_t errlen);
uint32_t default_max_flows(uint64_t ram);
/* The map a namespace starts with: every band keeps, the lowest of two or
 * more gets LE (RFC 8622).
 */
void dscp_default_map(uint8_t *map, unsigned int nbands);
/* setconf: file's settings over the defaults p, every key set in c; the
 * DSCP keys the file does not name only if the module knows them (dscp).
 */
void config_setconf(const struct config *file, const struct params *p,
		    uint64_t ram, bool dscp, struct config *c);

/* ---- print.c ---- */
enum output_type { PRINT_FP = 1, PRINT_JSON = 2, PRINT_ANY = 3 };
void print_init(bool json, bool pretty, FILE *out);
void print_finish(void);
bool is_json(void);
void open_json_object(const char *key);
void close_json_object(void);
void open_json_array(enum output_type t, const char *key);
void close_json_array(enum output_type t, const char *end);
void print_uint(enum output_type t, const char *key, const char *fmt, uint64_t v);
void print_string(enum output_type t, const char *key, const char *fmt, const char *v);
void print_bool(enum output_type t, const char *key, const char *fmt, bool v);
void print_null(enum output_type t, const char *key, const char *fmt, const char *text);
void print_text(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void print_priority(enum output_type t, const char *key, const char *fmt, uint32_t p);
void json_escape(FILE *f, const char *s);

/* ---- nl.c ---- */
struct nl_msg;
struct nlattr;
int srff_nl_open(void);
void srff_nl_close(void);
struct nl_msg *srff_msg(uint8_t cmd, int flags);
/* Send msg (consumed), call cb on each reply; returns an exit code. */
int srff_request(struct nl_msg *msg, int (*cb)(struct nlattr **tb, void *arg),
		 void *arg);
/* A dump: fill (may be NULL) adds the request's attributes; reset empties
 * what cb gathered before a retry. Returns an exit code.
 */
int srff_dump(uint8_t cmd, int (*fill)(struct nl_msg *msg, void *arg),
	      void *fill_arg, int (*cb)(struct nlattr **tb, void *arg),
	      void (*reset)(void *arg), void *arg);
int srff_get_config(struct config *c);

/* ---- commands ---- */
int cmd_show(int argc, char **argv);
int cmd_set(int argc, char **argv);
int cmd_set_thresholds(int argc, char **argv);
int cmd_save(int argc, char **argv);
int cmd_apply(int argc, char **argv);
int cmd_setconf(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_flows(int argc, char **argv);
int cmd_flush(int argc, char **argv);
int cmd_sizes(int argc, char **argv);

extern const char *prog;
void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int errf(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
