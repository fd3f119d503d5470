// SPDX-License-Identifier: GPL-2.0
/*
 * Build the corpus of the "real workload" benchmark: every C identifier and
 * string literal of a tree of C headers (Debian's linux-headers package
 * installs /usr/src/linux-headers-*-common/include), in file order.
 *
 *   tokenize OUT DIR...
 *
 * The tokenizer is small but does what a C lexer does for these two kinds:
 * comments (block and line) are skipped, string literals are one token
 * each (the bytes between the quotes, escapes kept as written, an encoding
 * prefix u8/u/U/L is not part of the identifiers), character literals and
 * numbers (pp-numbers, so 0x1fUL yields no "UL") are skipped, and every
 * other [A-Za-z_][A-Za-z0-9_]* is an identifier, keywords and directive
 * names included (a compiler interns them too). Files are taken in sorted
 * path order, *.h only.
 *
 *   tokenize --cpp OUT FILE...
 *   tokenize --cpp OUT --list LISTFILE	(one path a line)
 *
 * The "parallel build" corpus (tools/bench/mkcorpus-build.sh): each FILE is
 * one translation unit after the preprocessor (`gcc -E`), taken in the
 * order given; the lines the preprocessor leaves starting with '#'
 * (line markers `# 12 "file.h" 3`, #pragma, #ident) are skipped, since a
 * compiler does not intern their file names as string literals.
 *
 *   tokenize --pick N IN OUT
 *
 * Copies N units of the corpus IN to OUT, spread evenly over it (unit
 * k * units / N for k < N), in order: a smaller build of the same project.
 *
 * Output, little-endian (read by corpus.c, the one reader):
 *   "UBCORP01" u32 files u32 0 u64 tokens u64 token_bytes
 *   per file: u32 tokens, then per token: u8 class (1 ident, 2 string),
 *             u8 0, u16 length, the bytes
 * Strings longer than 65535 bytes are skipped (there are none).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { TOK_IDENT = 1, TOK_STRING = 2 };

static char **paths;
static size_t npaths, cappaths;

static void add_path(const char *p)
{
	if (npaths == cappaths) {
		cappaths = cappaths ? cappaths * 2 : 1024;
		paths = realloc(paths, cappaths * sizeof(*paths));
		if (!paths)
			exit(1);
	}
	paths[npaths++] = strdup(p);
}

static void walk(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d) {
		fprintf(stderr, "tokenize: %s: %s\n", dir, strerror(errno));
		exit(1);
	}
	while ((e = readdir(d))) {
		char p[4096];
		struct stat st;
		size_t l;

		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		/* Symlinks are not followed: they would only repeat files. */
		if (lstat(p, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			walk(p);
			continue;
		}
		l = strlen(e->d_name);
		if (S_ISREG(st.st_mode) && l > 2 && !strcmp(e->d_name + l - 2, ".h"))
			add_path(p);
	}
	closedir(d);
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static FILE *out;
static uint64_t ntok, nbytes;
static uint32_t file_tokens;
static char *fbuf;
static size_t flen, fcap;

static void emit(int cls, const char *p, size_t len)
{
	uint8_t hdr[4] = { (uint8_t)cls, 0, (uint8_t)len, (uint8_t)(len >> 8) };

	if (len > 65535)
		return;
	if (flen + 4 + len > fcap) {
		fcap = (flen + 4 + len) * 2;
		fbuf = realloc(fbuf, fcap);
		if (!fbuf)
			exit(1);
	}
	memcpy(fbuf + flen, hdr, 4);
	memcpy(fbuf + flen + 4, p, len);
	flen += 4 + len;
	file_tokens++;
	ntok++;
	nbytes += len;
}

static int ident_start(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int ident_char(int c)
{
	return ident_start(c) || (c >= '0' && c <= '9');
}

static int cpp_mode;

/* Only blanks between the start of the line and s[i]? */
static int line_start(const char *s, size_t i)
{
	while (i > 0 && (s[i - 1] == ' ' || s[i - 1] == '\t'))
		i--;
	return i == 0 || s[i - 1] == '\n';
}

static void lex(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		char c = s[i];

		if (cpp_mode && c == '#' && line_start(s, i)) {
			while (i < n && s[i] != '\n')
				i++;
		} else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
			const char *e = memmem(s + i + 2, n - i - 2, "*/", 2);

			i = e ? (size_t)(e - s) + 2 : n;
		} else if (c == '/' && i + 1 < n && s[i + 1] == '/') {
			while (i < n && s[i] != '\n')
				i++;
		} else if (c == '"' || c == '\'') {
			size_t j = i + 1;

			while (j < n && s[j] != c && s[j] != '\n') {
				if (s[j] == '\\' && j + 1 < n)
					j++;
				j++;
			}
			if (c == '"')
				emit(TOK_STRING, s + i + 1, (j < n ? j : n) - i - 1);
			i = j < n ? j + 1 : n;
		} else if (c >= '0' && c <= '9') {
			/* pp-number: digits, letters, _, ., and e+ e- p+ p- */
			i++;
			while (i < n) {
				char d = s[i];

				if ((d == '+' || d == '-') &&
				    strchr("eEpP", s[i - 1]))
					i++;
				else if (ident_char(d) || d == '.')
					i++;
				else
					break;
			}
		} else if (c == '.' && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '9') {
			i++;	/* .5: the number follows */
		} else if (ident_start(c)) {
			size_t j = i;

			while (j < n && ident_char(s[j]))
				j++;
			/* u8"x", u"x", U"x", L"x", L'x': a prefix, not a name */
			if (j < n && (s[j] == '"' || s[j] == '\'') &&
			    ((j - i == 1 && strchr("uUL", c)) ||
			     (j - i == 2 && c == 'u' && s[i + 1] == '8'))) {
				i = j;
				continue;
			}
			emit(TOK_IDENT, s + i, j - i);
			i = j;
		} else {
			i++;
		}
	}
}

static void put32(uint32_t v)
{
	fwrite(&v, 4, 1, out);
}

static void put64(uint64_t v)
{
	fwrite(&v, 8, 1, out);
}

/* tokenize --pick N IN OUT */
static int pick(uint32_t n, const char *in, const char *outp)
{
	uint8_t hdr[32], *buf = NULL;
	uint64_t toks = 0, bytes = 0, k = 0;
	uint32_t files, f;
	size_t cap = 0;
	FILE *fi = fopen(in, "rb");

	if (!fi || fread(hdr, 1, 32, fi) != 32 || memcmp(hdr, "UBCORP01", 8)) {
		fprintf(stderr, "tokenize: %s: not a corpus\n", in);
		return 1;
	}
	memcpy(&files, hdr + 8, 4);
	if (!n || n > files)
		n = files;
	out = fopen(outp, "wb");
	if (!out) {
		fprintf(stderr, "tokenize: %s: %s\n", outp, strerror(errno));
		return 1;
	}
	fwrite(hdr, 1, 32, out);
	for (f = 0; f < files; f++) {
		uint32_t nt, t;
		size_t len = 0;
		int want = k < n && f == (uint32_t)(k * files / n);

		if (fread(&nt, 4, 1, fi) != 1)
			goto bad;
		for (t = 0; t < nt; t++) {
			uint16_t l;

			if (len + 4 > cap) {
				cap = (len + 4 + 65536) * 2;
				buf = realloc(buf, cap);
				if (!buf)
					exit(1);
			}
			if (fread(buf + len, 1, 4, fi) != 4)
				goto bad;
			memcpy(&l, buf + len + 2, 2);
			if (len + 4 + l > cap) {
				cap = (len + 4 + l) * 2;
				buf = realloc(buf, cap);
				if (!buf)
					exit(1);
			}
			if (fread(buf + len + 4, 1, l, fi) != l)
				goto bad;
			len += 4 + l;
			bytes += want ? l : 0;
		}
		if (!want)
			continue;
		put32(nt);
		fwrite(buf, 1, len, out);
		toks += nt;
		k++;
	}
	fclose(fi);
	fseek(out, 8, SEEK_SET);
	put32((uint32_t)k);
	put32(0);
	put64(toks);
	put64(bytes);
	if (fclose(out)) {
		fprintf(stderr, "tokenize: writing %s failed\n", outp);
		return 1;
	}
	printf("tokenize: %llu of %u units, %llu tokens, %llu token bytes\n",
	       (unsigned long long)k, files, (unsigned long long)toks,
	       (unsigned long long)bytes);
	free(buf);
	return 0;
bad:
	fprintf(stderr, "tokenize: %s: truncated\n", in);
	return 1;
}

int main(int argc, char **argv)
{
	uint32_t files = 0;
	size_t i;
	int a;

	if (argc == 5 && !strcmp(argv[1], "--pick"))
		return pick((uint32_t)strtoul(argv[2], NULL, 10), argv[3], argv[4]);
	if (argc > 1 && !strcmp(argv[1], "--cpp")) {
		cpp_mode = 1;
		argv++;
		argc--;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: tokenize OUT DIR... | tokenize --cpp OUT FILE... |\n"
				"       tokenize --pick N IN OUT\n");
		return 2;
	}
	if (cpp_mode && argc == 4 && !strcmp(argv[2], "--list")) {
		FILE *l = fopen(argv[3], "r");
		char line[4096];

		if (!l) {
			fprintf(stderr, "tokenize: %s: %s\n", argv[3], strerror(errno));
			return 1;
		}
		while (fgets(line, sizeof(line), l)) {
			line[strcspn(line, "\n")] = 0;
			if (*line)
				add_path(line);
		}
		fclose(l);
		argc = 2;
	}
	for (a = 2; a < argc; a++) {
		if (cpp_mode)
			add_path(argv[a]);
		else
			walk(argv[a]);
	}
	if (!cpp_mode)
		qsort(paths, npaths, sizeof(*paths), cmp);
	out = fopen(argv[1], "wb");
	if (!out) {
		fprintf(stderr, "tokenize: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	fwrite("UBCORP01", 8, 1, out);
	put32(0);
	put32(0);
	put64(0);
	put64(0);
	for (i = 0; i < npaths; i++) {
		FILE *f = fopen(paths[i], "rb");
		char *buf;
		long n;

		if (!f) {
			if (cpp_mode) {
				fprintf(stderr, "tokenize: %s: %s\n", paths[i], strerror(errno));
				return 1;
			}
			continue;
		}
		fseek(f, 0, SEEK_END);
		n = ftell(f);
		fseek(f, 0, SEEK_SET);
		buf = malloc(n + 1);
		if (!buf || fread(buf, 1, n, f) != (size_t)n) {
			fprintf(stderr, "tokenize: cannot read %s\n", paths[i]);
			return 1;
		}
		fclose(f);
		flen = 0;
		file_tokens = 0;
		lex(buf, n);
		free(buf);
		put32(file_tokens);
		fwrite(fbuf, 1, flen, out);
		files++;
	}
	fseek(out, 8, SEEK_SET);
	put32(files);
	put32(0);
	put64(ntok);
	put64(nbytes);
	if (fclose(out)) {
		fprintf(stderr, "tokenize: writing %s failed\n", argv[1]);
		return 1;
	}
	printf("tokenize: %u %s, %llu tokens, %llu token bytes\n", files,
	       cpp_mode ? "units" : "files", (unsigned long long)ntok,
	       (unsigned long long)nbytes);
	return 0;
}
