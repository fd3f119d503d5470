// SPDX-License-Identifier: GPL-2.0
/*
 * `uniqdctl layouts` without a kernel: replays the logs of GCC plugin runs
 * (table=private, one log per compiler process) into a pool on the native
 * tests' fake device, through libuniqd, and runs the checker's own code
 * (layouts.c, included) on it. Each log's handles are private to its
 * process; the replay maps them back to their content and interns that,
 * which gives equal content one handle. tools/testing/plugin-check.sh drives it.
 *
 *	layouts_replay [--json|--format=FMT] [--strict] LOG...  the check's output (GCC's
 *	                                            form by default), its exit status
 *	layouts_replay --print LOG                  CLASS<TAB>CONTENT per line
 */
#include <stdbool.h>

#include "../../tools/uniqdctl/json.c"
#include "../../tools/uniqdctl/layouts.c"

#include "fake/replay_pool.h"

/* The plugin's classes, ids 1 to 5 in this order: a log may name no other. */
static const char *const gcc_classes[] = {
	GK_CLASS_IDENT, GK_CLASS_UNIT, GK_CLASS_TAG, GK_CLASS_LAYOUT, GK_CLASS_USE,
};
#define USE_CLASS	5	/* gcc.use's id */

/* ---- reading a log ----------------------------------------------------------- */

struct line {
	uint64_t handle;	/* the process's own */
	uint32_t class_id;
	unsigned char *data;
	size_t len;
};

/* "<handle hex 16>\t<class>\t<content hex>" */
static struct line *read_log(const char *path, size_t *count)
{
	FILE *f = fopen(path, "r");
	struct line *lines = NULL;
	char *buf = NULL;
	size_t cap = 0, n = 0;
	ssize_t len;

	if (!f) {
		fprintf(stderr, "layouts_replay: %s: %s\n", path, strerror(errno));
		exit(EXIT_ERROR);
	}
	while ((len = getline(&buf, &cap, f)) > 0) {
		char *t1 = strchr(buf, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
		struct line *l;

		if (buf[len - 1] == '\n')
			buf[--len] = '\0';
		if (!t1 || !t2 || t1 - buf != 16) {
			fprintf(stderr, "layouts_replay: %s: not a log line: %s\n", path, buf);
			exit(EXIT_ERROR);
		}
		*t1 = *t2 = '\0';
		lines = xrealloc(lines, (n + 1) * sizeof(*lines));
		l = &lines[n++];
		l->handle = strtoull(buf, NULL, 16);
		l->class_id = rp_class(t1 + 1, strlen(t1 + 1), false);
		l->len = strlen(t2 + 1) / 2;
		l->data = xrealloc(NULL, l->len + 1);
		if (!l->class_id || unhex(t2 + 1, strlen(t2 + 1), l->data)) {
			fprintf(stderr, "layouts_replay: %s: bad class or content: %s\n", path,
				t1 + 1);
			exit(EXIT_ERROR);
		}
		l->data[l->len] = '\0';
	}
	free(buf);
	fclose(f);
	*count = n;
	return lines;
}

static const struct line *find_line(const struct line *l, size_t n, uint64_t handle)
{
	for (size_t i = 0; i < n; i++)
		if (l[i].handle == handle && l[i].class_id != USE_CLASS)
			return &l[i];
	fprintf(stderr, "layouts_replay: a gcc.use record names 0x%016" PRIx64
		", which its log does not hold\n", handle);
	exit(EXIT_ERROR);
}

static void replay(const char *path)
{
	size_t n;
	struct line *l = read_log(path, &n);

	for (size_t i = 0; i < n; i++) {
		struct gk_use u;
		unsigned char rec[GK_USE_LEN];
		const struct line *x;

		if (l[i].class_id != USE_CLASS) {
			pool_intern(l[i].class_id, l[i].data, l[i].len);
			continue;
		}
		if (l[i].len != GK_USE_LEN) {
			fprintf(stderr, "layouts_replay: %s: a gcc.use record of %zu bytes\n",
				path, l[i].len);
			exit(EXIT_ERROR);
		}
		gk_use_decode(&u, l[i].data);
		x = find_line(l, n, u.unit);
		u.unit = pool_intern(x->class_id, x->data, x->len);
		x = find_line(l, n, u.tag);
		u.tag = pool_intern(x->class_id, x->data, x->len);
		x = find_line(l, n, u.layout);
		u.layout = pool_intern(x->class_id, x->data, x->len);
		gk_use_encode(rec, &u);
		pool_intern(USE_CLASS, rec, GK_USE_LEN);
	}
}

int main(int argc, char **argv)
{
	struct layouts_opts o = { .pool = "replay" };
	int i = 1;

	rp_open();
	for (size_t c = 0; c < sizeof(gcc_classes) / sizeof(gcc_classes[0]); c++)
		if (rp_class(gcc_classes[c], strlen(gcc_classes[c]), true) != c + 1) {
			fprintf(stderr, "layouts_replay: %s is not class %zu\n", gcc_classes[c], c + 1);
			return EXIT_ERROR;
		}

	if (argc == 3 && !strcmp(argv[1], "--print")) {
		size_t n;
		struct line *l = read_log(argv[2], &n);

		for (size_t k = 0; k < n; k++) {
			printf("%s\t", rp_class_name(l[k].class_id));
			if (l[k].class_id == USE_CLASS)
				for (size_t b = 0; b < l[k].len; b++)
					printf("%02x", l[k].data[b]);
			else
				fwrite(l[k].data, 1, l[k].len, stdout);
			putchar('\n');
		}
		return 0;
	}
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--json"))
			o.format = LAYOUTS_JSON;
		else if (!strncmp(argv[i], "--format=", 9) &&
			 !layouts_format_parse(argv[i] + 9, &o.format))
			;
		else if (!strcmp(argv[i], "--strict"))
			o.strict = true;
		else
			break;
	}
	if (i == argc) {
		fprintf(stderr, "usage: layouts_replay [--json] [--format=FMT] [--strict] LOG...\n"
			"       layouts_replay --print LOG\n");
		return EXIT_ERROR;
	}
	for (; i < argc; i++)
		replay(argv[i]);
	return cmd_layouts(&o, 0, NULL);
}
