/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The JSON writer of uniqdctl's commands (uniqdctl.c, layouts.c, the
 * snapshot commands): strings of arbitrary bytes, and the UTF-8 check the
 * text output uses to decide between quoting and hexadecimal.
 */
#ifndef UNIQDCTL_JSON_H
#define UNIQDCTL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence at S (of N bytes; N > 0), or 0: no
 * overlong forms, no surrogates, nothing above U+10FFFF. */
size_t json_utf8_len(const unsigned char *s, size_t n);

/* Whether the N bytes at P are valid UTF-8. */
bool json_is_utf8(const void *p, size_t n);

/* A JSON string of N arbitrary bytes to F: valid UTF-8 as it is, control
 * characters escaped, and each byte that is not part of valid UTF-8 as
 * U+0080..U+00FF (\u00XX), so the output is always valid JSON. */
void json_str(FILE *f, const void *p, size_t n);
void json_cstr(FILE *f, const char *s);

#endif /* UNIQDCTL_JSON_H */
