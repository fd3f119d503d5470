// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON writer of uniqdctl (json.h): one escaper and one UTF-8 check
 * for every command.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>

#include "json.h"

size_t json_utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		len = 2, cp = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		len = 3, cp = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

bool json_is_utf8(const void *p, size_t n)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < n;) {
		size_t l = json_utf8_len(s + i, n - i);

		if (!l)
			return false;
		i += l;
	}
	return true;
}

void json_str(FILE *f, const void *p, size_t n)
{
	const unsigned char *s = p;

	fputc('"', f);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t l;

		if (c == '"' || c == '\\') {
			fprintf(f, "\\%c", c);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			switch (c) {
			case '\n': fputs("\\n", f); break;
			case '\t': fputs("\\t", f); break;
			case '\r': fputs("\\r", f); break;
			default: fprintf(f, "\\u%04x", c);
			}
			i++;
		} else if ((l = json_utf8_len(s + i, n - i)) != 0) {
			fwrite(s + i, 1, l, f);
			i += l;
		} else {
			fprintf(f, "\\u%04x", c);
			i++;
		}
	}
	fputc('"', f);
}

void json_cstr(FILE *f, const char *s)
{
	json_str(f, s, strlen(s));
}
