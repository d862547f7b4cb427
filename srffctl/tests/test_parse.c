// SPDX-License-Identifier: GPL-2.0
/* Native unit tests of srffctl's parsers, formatters and JSON writer. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "srffctl.h"

const char *prog = "srffctl-test";
void usage_error(const char *fmt, ...) { (void)fmt; abort(); }

static int passed, failed, n;

#define CHECK(cond) do {						\
	n++;								\
	if (cond) { passed++; }						\
	else { failed++; printf("not ok %d %s:%d %s\n", n, __FILE__, __LINE__, #cond); } \
} while (0)

static void sizes(void)
{
	static const struct { const char *s; uint64_t v; } ok[] = {
		{ "0", 0 }, { "1500", 1500 }, { "1.5k", 1500 }, { "5M", 5000000 },
		{ "4Mi", 4194304 }, { "1.5Ki", 1536 }, { "2G", 2000000000ULL },
		{ "1GiB", 1ULL << 30 }, { "30000000", 30000000 }, { "0.5k", 500 },
		{ "1.25M", 1250000 }, { "18446744073709551615", UINT64_MAX },
		{ "16Ti", 16ULL << 40 },
	};
	static const char *const bad[] = {
		"", "k", "-1", "1.5q", "1,5k", "1.2345k", "1.", ".5k", "1 k", "0x10",
		"18446744073709551616", "20000000Ti", "1e3", "1.5kk", "abc",
	};
	uint64_t v;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		v = 42;
		CHECK(parse_size(ok[i].s, &v) == 0 && v == ok[i].v);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(parse_size(bad[i], &v) == -1);
}

static void durations(void)
{
	static const struct { const char *s; uint32_t v; } ok[] = {
		{ "2500", 2500 }, { "2500ms", 2500 }, { "2.5s", 2500 }, { "1m", 60000 },
		{ "1h", 3600000 }, { "0.1s", 100 }, { "0", 0 }, { "1.5min", 90000 },
	};
	static const char *const bad[] = { "", "s", "2.5", "1.0005s", "-1s", "5d", "2 s", "5000000h" };
	uint32_t v;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		CHECK(parse_duration_ms(ok[i].s, &v) == 0 && v == ok[i].v);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(parse_duration_ms(bad[i], &v) == -1);
}

static void lists_and_ids(void)
{
	uint32_t p[17];
	uint16_t ports[33], major;
	unsigned int cnt;

	CHECK(parse_list_priorities("6,0,2", p, 17, &cnt) == 0 && cnt == 3 && p[0] == 6 && p[2] == 2);
	CHECK(parse_list_priorities("10:1,10:2", p, 17, &cnt) == 0 && cnt == 2 && p[1] == 0x100002);
	CHECK(parse_list_priorities("6,,2", p, 17, &cnt) == 0 && cnt == 2);	/* strtok folds */
	CHECK(parse_list_priorities("6,x", p, 17, &cnt) == -1);
	CHECK(parse_list_priorities("", p, 17, &cnt) == -1);
	CHECK(parse_list_priorities("1,2,3", p, 2, &cnt) == -1);
	CHECK(parse_list_ports("21,22,23", ports, 33, &cnt) == 0 && cnt == 3 && ports[1] == 22);
	CHECK(parse_list_ports("none", ports, 33, &cnt) == 0 && cnt == 0);
	CHECK(parse_list_ports("65536", ports, 33, &cnt) == -1);
	CHECK(parse_list_ports("0", ports, 33, &cnt) == 0 && ports[0] == 0);	/* the kernel refuses */
	CHECK(parse_classid("10:", &major) == 0 && major == 0x10);
	CHECK(parse_classid("ffff:", &major) == 0 && major == 0xffff);
	CHECK(parse_classid("none", &major) == 0 && major == 0);
	CHECK(parse_classid("10", &major) == -1);
	CHECK(parse_classid("10:1", &major) == -1);
	CHECK(parse_classid("0:", &major) == -1);
	CHECK(parse_classid("10000:", &major) == -1);
	CHECK(parse_priority("7", &p[0]) == 0 && p[0] == 7);
	CHECK(parse_priority("1:a", &p[0]) == 0 && p[0] == 0x1000a);
	CHECK(parse_priority("1:g", &p[0]) == -1);
}

static void formatting(void)
{
	char b[32];

	CHECK(!strcmp(fmt_size(1500, b, sizeof(b)), "1.5k"));
	CHECK(!strcmp(fmt_size(5000, b, sizeof(b)), "5k"));
	CHECK(!strcmp(fmt_size(4194304, b, sizeof(b)), "4Mi"));
	CHECK(!strcmp(fmt_size(5000000, b, sizeof(b)), "5M"));
	CHECK(!strcmp(fmt_size(1501, b, sizeof(b)), "1501"));
	CHECK(!strcmp(fmt_size(0, b, sizeof(b)), "0"));
	CHECK(!strcmp(fmt_size(31898736, b, sizeof(b)), "31898736"));
	CHECK(!strcmp(fmt_duration(2500, b, sizeof(b)), "2500ms"));
	CHECK(!strcmp(fmt_duration(60000, b, sizeof(b)), "1m"));
	CHECK(!strcmp(fmt_duration(3000, b, sizeof(b)), "3s"));
	/* What fmt_size prints, parse_size reads back. */
	for (uint64_t v = 1; v < 20000000; v = v * 3 + 7) {
		uint64_t back;

		CHECK(parse_size(fmt_size(v, b, sizeof(b)), &back) == 0 && back == v);
	}
}

static void settings(void)
{
	struct config c = { 0 };
	char err[256];

	CHECK(config_set_key(&c, "idle-reset", "off", err, sizeof(err)) == 0 && (c.has & CF_IDLE_RESET));
	CHECK(config_set_key(&c, "udp", "top", err, sizeof(err)) == 0 && c.udp_policy == SRFF_UDP_TOP);
	CHECK(config_set_key(&c, "app-priority", "keep", err, sizeof(err)) == 0 && c.app_priority == SRFF_APP_PRIO_KEEP);
	CHECK(config_set_key(&c, "thresholds", "1.5k,20k", err, sizeof(err)) == 0 &&
	      c.nthresholds == 2 && c.thresholds[1] == 20000);
	CHECK(config_set_key(&c, "colour", "blue", err, sizeof(err)) == -1 && strstr(err, "unknown setting"));
	CHECK(config_set_key(&c, "udp", "sometimes", err, sizeof(err)) == -1 && strstr(err, "udp"));
	CHECK(config_set_key(&c, "max-flows", "1Mi", err, sizeof(err)) == 0 && c.max_flows == 1048576);
}

static void apply_file(void)
{
	const char *good = "# saved\nthresholds 1500 5000\npriorities 6,0,2\n\nidle-timeout 2.5s # inline\nudp ignore\n";
	const char *bad_line3 = "thresholds 1500\nudp top\nidle-timeout soon\n";
	const char *bad_arity = "udp top ignore\n";
	struct config c = { 0 };
	char err[256];
	FILE *f;

	f = fmemopen((void *)good, strlen(good), "r");
	CHECK(config_parse_file(f, "good", &c, err, sizeof(err)) == 0);
	fclose(f);
	CHECK(c.nthresholds == 2 && c.npriorities == 3 && c.idle_timeout_ms == 2500 &&
	      c.udp_policy == SRFF_UDP_IGNORE && !(c.has & CF_MAX_FLOWS));

	memset(&c, 0, sizeof(c));
	f = fmemopen((void *)bad_line3, strlen(bad_line3), "r");
	CHECK(config_parse_file(f, "cfg", &c, err, sizeof(err)) == -1 && !strncmp(err, "cfg:3:", 6));
	fclose(f);
	memset(&c, 0, sizeof(c));
	f = fmemopen((void *)bad_arity, strlen(bad_arity), "r");
	CHECK(config_parse_file(f, "cfg", &c, err, sizeof(err)) == -1 && strstr(err, "cfg:1:"));
	fclose(f);
	memset(&c, 0, sizeof(c));
	f = fmemopen((void *)"# nothing\n", 10, "r");
	CHECK(config_parse_file(f, "empty", &c, err, sizeof(err)) == -1);
	fclose(f);
}

/* The JSON writer's output must parse, compact and pretty, with values
 * intact: tests/check_json.py reads it back.
 */
static void write_doc(FILE *f, bool pretty)
{
	print_init(true, pretty, f);
	open_json_object(NULL);
	print_string(PRINT_ANY, "s", "%s", "quote\" back\\ nl\n tab\t ctl\x01");
	print_uint(PRINT_ANY, "u", "%llu", UINT64_MAX);
	print_bool(PRINT_ANY, "b", "b", false);
	print_null(PRINT_ANY, "n", "%s", "-");
	print_text("never in JSON");
	open_json_array(PRINT_JSON, "empty");
	close_json_array(PRINT_JSON, NULL);
	open_json_array(PRINT_ANY, "a");
	for (int i = 0; i < 3; i++) {
		open_json_object(NULL);
		print_uint(PRINT_ANY, "i", "%llu", i);
		close_json_object();
	}
	close_json_array(PRINT_ANY, NULL);
	close_json_object();
	print_finish();
}

static void json_output(void)
{
	for (int pretty = 0; pretty < 2; pretty++) {
		char path[] = "/tmp/srffctl-json-XXXXXX", cmd[256];
		FILE *f = fdopen(mkstemp(path), "w");

		write_doc(f, pretty);
		fclose(f);
		snprintf(cmd, sizeof(cmd), "python3 %s/check_json.py %s", TESTS_DIR, path);
		CHECK(system(cmd) == 0);
		unlink(path);
	}
}

int main(void)
{
	printf("TAP version 13\n");
	sizes();
	durations();
	lists_and_ids();
	formatting();
	settings();
	apply_file();
	json_output();
	printf("1..%d\n", n);
	printf("srffctl-unit: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
