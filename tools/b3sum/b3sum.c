// SPDX-License-Identifier: GPL-2.0
/*
 * b3sum-compatible command line tool on top of uniqd/blake3/blake3.c (userspace
 * build: the full 54-entry CV stack, so streaming has no practical bound).
 *
 *   b3sum [--keyed | --derive-key CONTEXT] [-l|--length N] [--seek N]
 *	   [--no-names] [--raw] [FILE]...
 *
 * Output lines are "<hex>  <name>", as the official b3sum prints them; a
 * name containing a backslash or newline is escaped ("\\", "\n") and the
 * line then starts with a backslash. No FILE, or "-", reads stdin; with
 * --keyed the 32 raw key bytes come from stdin, so FILEs are required.
 *
 * Build: make b3sum (build/bin/b3sum; UNIQD_VERSION comes from VERSION).
 * Installed as uniqd-b3sum.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blake3.h"

#define READ_BUF (64 * 1024)

enum mode { MODE_HASH, MODE_KEYED, MODE_DERIVE };

struct opts {
	enum mode mode;
	const char *context;
	u8 key[UNIQD_BLAKE3_KEY_LEN];
	unsigned long long length;
	unsigned long long seek;
	int no_names;
	int raw;
};

static const char *prog = "b3sum";

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [OPTIONS] [FILE]...\n"
		"Print BLAKE3 checksums. With no FILE, or when FILE is -, read standard input.\n"
		"\n"
		"      --keyed                 Use the keyed mode, reading the 32-byte key from stdin\n"
		"      --derive-key <CONTEXT>  Use the key derivation mode, with the given context string\n"
		"  -l, --length <LEN>          The number of output bytes, before hex encoding [default: 32]\n"
		"      --seek <SEEK>           The starting output byte offset, before hex encoding [default: 0]\n"
		"      --no-names              Omit filenames in the output\n"
		"      --raw                   Write raw output bytes to stdout, rather than hex.\n"
		"                              --no-names is implied. Only a single input is allowed.\n"
		"  -h, --help                  Print help\n"
		"  -V, --version               Print version\n",
		prog);
}

static int parse_u64(const char *s, unsigned long long *out)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return (errno || *end) ? -1 : 0;
}

static int read_key(u8 key[UNIQD_BLAKE3_KEY_LEN])
{
	u8 buf[UNIQD_BLAKE3_KEY_LEN + 1];
	size_t n = 0;
	ssize_t r;

	while (n < sizeof(buf)) {
		r = read(STDIN_FILENO, buf + n, sizeof(buf) - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fprintf(stderr, "%s: reading the key from stdin: %s\n",
				prog, strerror(errno));
			return -1;
		}
		if (!r)
			break;
		n += r;
	}
	if (n < UNIQD_BLAKE3_KEY_LEN) {
		fprintf(stderr,
			"%s: expected %d key bytes from stdin, found %zu\n",
			prog, UNIQD_BLAKE3_KEY_LEN, n);
		return -1;
	}
	if (n > UNIQD_BLAKE3_KEY_LEN) {
		fprintf(stderr, "%s: read more than %d key bytes from stdin\n",
			prog, UNIQD_BLAKE3_KEY_LEN);
		return -1;
	}
	memcpy(key, buf, UNIQD_BLAKE3_KEY_LEN);
	return 0;
}

static int hasher_start(struct uniqd_blake3_hasher *h, const struct opts *o)
{
	switch (o->mode) {
	case MODE_KEYED:
		uniqd_blake3_init_keyed(h, o->key);
		return 0;
	case MODE_DERIVE:
		return uniqd_blake3_init_derive_key(h, o->context,
						    strlen(o->context));
	default:
		uniqd_blake3_init(h);
		return 0;
	}
}

/* Hash one input; returns 0 or an errno value (message printed by caller). */
static int hash_fd(int fd, struct uniqd_blake3_hasher *h, u8 *buf)
{
	ssize_t r;
	int ret;

	for (;;) {
		r = read(fd, buf, READ_BUF);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return errno;
		if (!r)
			return 0;
		ret = uniqd_blake3_update(h, buf, r);
		if (ret)
			return -ret;
	}
}

static int write_all(const u8 *p, size_t n)
{
	size_t done = 0;

	while (done < n) {
		size_t w = fwrite(p + done, 1, n - done, stdout);

		if (!w)
			return -1;
		done += w;
	}
	return 0;
}

/* Write o->length bytes of output from o->seek, hex or raw. */
static int emit_output(const struct uniqd_blake3_hasher *h,
		       const struct opts *o)
{
	static const char digits[] = "0123456789abcdef";
	unsigned long long left = o->length, pos = o->seek;
	u8 out[4096];
	char hex[2 * sizeof(out)];
	size_t n, i;

	while (left) {
		n = left < sizeof(out) ? left : sizeof(out);
		if (uniqd_blake3_final_seek(h, pos, out, n))
			return -1;
		if (o->raw) {
			if (write_all(out, n))
				return -1;
		} else {
			for (i = 0; i < n; i++) {
				hex[2 * i] = digits[out[i] >> 4];
				hex[2 * i + 1] = digits[out[i] & 15];
			}
			if (write_all((const u8 *)hex, 2 * n))
				return -1;
		}
		left -= n;
		pos += n;
	}
	return 0;
}

/* b3sum's escaping: backslash and newline; returns whether it escaped. */
static int needs_escape(const char *name)
{
	return strchr(name, '\\') || strchr(name, '\n');
}

static void print_name(const char *name)
{
	for (; *name; name++) {
		if (*name == '\\')
			fputs("\\\\", stdout);
		else if (*name == '\n')
			fputs("\\n", stdout);
		else
			putchar(*name);
	}
}

static int do_one(const char *name, const struct opts *o, u8 *buf)
{
	struct uniqd_blake3_hasher h;
	int fd, err, ret = 0;

	if (!strcmp(name, "-")) {
		if (o->mode == MODE_KEYED) {
			fprintf(stderr, "%s: -: Cannot open `-` in keyed mode\n",
				prog);
			return 1;
		}
		fd = STDIN_FILENO;
	} else {
		fd = open(name, O_RDONLY);
		if (fd < 0) {
			fprintf(stderr, "%s: %s: %s\n", prog, name,
				strerror(errno));
			return 1;
		}
	}

	err = hasher_start(&h, o);
	if (!err)
		err = hash_fd(fd, &h, buf);
	else
		err = -err;
	if (fd != STDIN_FILENO)
		close(fd);
	if (err) {
		fprintf(stderr, "%s: %s: %s\n", prog, name, strerror(err));
		return 1;
	}

	if (!o->raw && !o->no_names && needs_escape(name))
		putchar('\\');
	if (emit_output(&h, o))
		ret = 1;
	if (!o->raw) {
		if (!o->no_names) {
			fputs("  ", stdout);
			print_name(name);
		}
		putchar('\n');
	}
	if (fflush(stdout) || ret) {
		fprintf(stderr, "%s: writing output: %s\n", prog,
			strerror(errno));
		ret = 1;
	}
	memset(&h, 0, sizeof(h));
	return ret;
}

int main(int argc, char **argv)
{
	enum { OPT_KEYED = 256, OPT_DERIVE, OPT_SEEK, OPT_NO_NAMES, OPT_RAW };
	static const struct option longopts[] = {
		{ "keyed", no_argument, NULL, OPT_KEYED },
		{ "derive-key", required_argument, NULL, OPT_DERIVE },
		{ "length", required_argument, NULL, 'l' },
		{ "seek", required_argument, NULL, OPT_SEEK },
		{ "no-names", no_argument, NULL, OPT_NO_NAMES },
		{ "raw", no_argument, NULL, OPT_RAW },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .mode = MODE_HASH, .length = UNIQD_BLAKE3_OUT_LEN };
	int keyed = 0, c, i, status = 0;
	static const char *const stdin_only[] = { "-" };
	const char *const *files;
	int nfiles;
	u8 *buf;

	while ((c = getopt_long(argc, argv, "l:hV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_KEYED:
			keyed = 1;
			break;
		case OPT_DERIVE:
			o.context = optarg;
			break;
		case 'l':
			if (parse_u64(optarg, &o.length)) {
				fprintf(stderr, "%s: invalid length: %s\n",
					prog, optarg);
				return 2;
			}
			break;
		case OPT_SEEK:
			if (parse_u64(optarg, &o.seek)) {
				fprintf(stderr, "%s: invalid seek: %s\n", prog,
					optarg);
				return 2;
			}
			break;
		case OPT_NO_NAMES:
			o.no_names = 1;
			break;
		case OPT_RAW:
			o.raw = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("%s (uniqd) %s\n", prog, UNIQD_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}

	files = (const char *const *)argv + optind;
	nfiles = argc - optind;
	if (keyed && o.context) {
		fprintf(stderr, "%s: --derive-key cannot be used with --keyed\n",
			prog);
		return 2;
	}
	if (keyed && !nfiles) {
		fprintf(stderr,
			"%s: --keyed reads the key from stdin, so FILEs are required\n",
			prog);
		return 2;
	}
	if (!nfiles) {
		files = stdin_only;
		nfiles = 1;
	}
	if (o.raw && nfiles > 1) {
		fprintf(stderr,
			"%s: Only one filename can be provided when using --raw\n",
			prog);
		return 2;
	}
	if (keyed) {
		o.mode = MODE_KEYED;
		if (read_key(o.key))
			return 1;
	} else if (o.context) {
		o.mode = MODE_DERIVE;
	}

	buf = malloc(READ_BUF);
	if (!buf) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}
	for (i = 0; i < nfiles; i++)
		status |= do_one(files[i], &o, buf);
	free(buf);
	memset(o.key, 0, sizeof(o.key));
	return status;
}
