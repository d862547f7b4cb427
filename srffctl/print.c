// SPDX-License-Identifier: GPL-2.0
/*
 * One print path for text and JSON, after iproute2's json_print: every
 * value is printed with a type saying whether it shows in text (PRINT_FP),
 * in JSON (PRINT_JSON) or both (PRINT_ANY), with its JSON key and its text
 * format. Commands never branch on the output mode for values.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "srffctl.h"

#define MAX_DEPTH 16

static struct {
	bool json, pretty;
	FILE *out;
	int depth;
	bool first[MAX_DEPTH];	/* no element yet at this depth */
} P = { .out = NULL };

void print_init(bool json, bool pretty, FILE *out)
{
	P.json = json;
	P.pretty = pretty;
	P.out = out;
	P.depth = 0;
	P.first[0] = true;
}

void print_finish(void)
{
	if (P.json && !P.first[0])	/* a document was written */
		fputc('\n', P.out);
	fflush(P.out);
}

bool is_json(void)
{
	return P.json;
}

void json_escape(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = *s;

		switch (ch) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			if (ch < 0x20)
				fprintf(f, "\\u%04x", ch);
			else
				fputc(ch, f);
		}
	}
	fputc('"', f);
}

static void indent(void)
{
	if (!P.pretty)
		return;
	fputc('\n', P.out);
	for (int i = 0; i < P.depth; i++)
		fputs("  ", P.out);
}

/* Separator and key before a JSON value. */
static void json_key(const char *key)
{
	if (!P.first[P.depth])
		fputc(',', P.out);
	P.first[P.depth] = false;
	if (P.depth)
		indent();
	if (key) {
		json_escape(P.out, key);
		fputs(P.pretty ? ": " : ":", P.out);
	}
}

static void json_open(const char *key, char ch)
{
	json_key(key);
	fputc(ch, P.out);
	if (P.depth + 1 < MAX_DEPTH)
		P.depth++;
	P.first[P.depth] = true;
}

static void json_close(char ch)
{
	bool empty = P.first[P.depth];

	if (P.depth)
		P.depth--;
	if (!empty)
		indent();
	fputc(ch, P.out);
}

void open_json_object(const char *key)
{
	if (P.json)
		json_open(key, '{');
}

void close_json_object(void)
{
	if (P.json)
		json_close('}');
}

void open_json_array(enum output_type t, const char *key)
{
	if (P.json && (t & PRINT_JSON))
		json_open(key, '[');
	else if (!P.json && (t & PRINT_FP) && key)
		fprintf(P.out, "%s", key);
}

void close_json_array(enum output_type t, const char *end)
{
	if (P.json && (t & PRINT_JSON))
		json_close(']');
	else if (!P.json && (t & PRINT_FP) && end)
		fputs(end, P.out);
}

void print_uint(enum output_type t, const char *key, const char *fmt, uint64_t v)
{
	if (P.json) {
		if (t & PRINT_JSON) {
			json_key(key);
			fprintf(P.out, "%" PRIu64, v);
		}
	} else if ((t & PRINT_FP) && fmt) {
		fprintf(P.out, fmt, v);
	}
}

void print_string(enum output_type t, const char *key, const char *fmt, const char *v)
{
	if (P.json) {
		if (t & PRINT_JSON) {
			json_key(key);
			json_escape(P.out, v);
		}
	} else if ((t & PRINT_FP) && fmt) {
		fprintf(P.out, fmt, v);
	}
}

void print_bool(enum output_type t, const char *key, const char *fmt, bool v)
{
	if (P.json) {
		if (t & PRINT_JSON) {
			json_key(key);
			fputs(v ? "true" : "false", P.out);
		}
	} else if ((t & PRINT_FP) && fmt && v) {
		fputs(fmt, P.out);
	}
}

void print_null(enum output_type t, const char *key, const char *fmt, const char *text)
{
	if (P.json) {
		if (t & PRINT_JSON) {
			json_key(key);
			fputs("null", P.out);
		}
	} else if ((t & PRINT_FP) && fmt) {
		fprintf(P.out, fmt, text);
	}
}

void print_text(const char *fmt, ...)
{
	va_list ap;

	if (P.json)
		return;
	va_start(ap, fmt);
	vfprintf(P.out, fmt, ap);
	va_end(ap);
}

/*
 * A priority as tc writes class ids: a plain priority (0-15) is a number,
 * a class id MAJOR:MINOR the string "10:3" in JSON; text gets fmt_priority()'s
 * form through fmt (a %s format) either way.
 */
void print_priority(enum output_type t, const char *key, const char *fmt, uint32_t p)
{
	char b[16];

	fmt_priority(p, b, sizeof(b));
	if (p >> 16)
		print_string(t, key, fmt, b);
	else {
		print_uint(t & PRINT_JSON, key, NULL, p);
		print_string(t & PRINT_FP, NULL, fmt, b);
	}
}
