// SPDX-License-Identifier: GPL-2.0
/*
 * `uniqdctl symbols` without a kernel: replays the logs of MLIR plugin runs
 * (table=private, one log per mlir-opt process) into a pool that lives in
 * this process, and runs the checker's own code (symbols.c and json.c,
 * included) on it. Each log's handles are private to its process; the
 * replay maps each back to its entry and gives equal content one handle, as
 * a uniqd pool would, translating the handles that contents hold: all of an
 * mlir.symbol record, and each MK_REF'd handle of a key=handles type or
 * attribute. tools/testing/mlir-check.sh drives it.
 *
 *	symbols_replay [--json] LOG...    the report, its exit status
 *	symbols_replay --dump LOG...      HANDLE<TAB>CLASS<TAB>PRINTED per entry
 *	symbols_replay --bytes LOG...     ENTRIES CONTENT_BYTES of the pool
 *
 * --dump writes each entry's content with its MK_REF'd handles expanded to
 * their own printed form (so a key=handles pool dumps as MLIR prints), and
 * mlir.symbol records as their five handles.
 */
#include <stdbool.h>

#include "../../tools/uniqdctl/json.c"
#include "../../tools/uniqdctl/symbols.c"

#define RP_XREALLOC sym_xrealloc
#include "fake/replay_pool.h"

static uint32_t symbol_class;

/* ---- replaying a log ---------------------------------------------------------- */

static uint64_t translate(const struct map *local, uint64_t h, const char *path)
{
	uint64_t g;

	if (!h)
		return 0;
	g = map_get(local, h);
	if (!g) {
		fprintf(stderr, "symbols_replay: %s names 0x%016" PRIx64 " before its entry\n",
			path, h);
		exit(EXIT_ERROR);
	}
	return g;
}

/* "<handle hex 16>\t<class>\t<content hex>", in the order they were interned. */
static void replay(const char *path)
{
	FILE *f = fopen(path, "r");
	struct map local = { 0 };
	unsigned char *data = NULL;
	char *buf = NULL;
	size_t cap = 0;
	ssize_t len;

	if (!f) {
		fprintf(stderr, "symbols_replay: %s: %s\n", path, strerror(errno));
		exit(EXIT_ERROR);
	}
	while ((len = getline(&buf, &cap, f)) > 0) {
		char *t1 = strchr(buf, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
		uint32_t cls;
		size_t n;

		if (buf[len - 1] == '\n')
			buf[--len] = '\0';
		if (!t1 || !t2 || t1 - buf != 16) {
			fprintf(stderr, "symbols_replay: %s: not a log line: %s\n", path, buf);
			exit(EXIT_ERROR);
		}
		*t1 = *t2 = '\0';
		cls = uniqd_class_n(NULL, t1 + 1, strlen(t1 + 1), 0);
		n = strlen(t2 + 1) / 2;
		data = sym_xrealloc(data, n + 1);
		if (unhex(t2 + 1, strlen(t2 + 1), data)) {
			fprintf(stderr, "symbols_replay: %s: bad content: %s\n", path, t1 + 1);
			exit(EXIT_ERROR);
		}
		if (cls == symbol_class) {
			struct mk_symbol s;

			if (n != MK_SYMBOL_LEN) {
				fprintf(stderr, "symbols_replay: %s: a record of %zu bytes\n", path, n);
				exit(EXIT_ERROR);
			}
			mk_symbol_decode(&s, data);
			s.module = translate(&local, s.module, path);
			s.name = translate(&local, s.name, path);
			s.type = translate(&local, s.type, path);
			s.kind = translate(&local, s.kind, path);
			s.loc = translate(&local, s.loc, path);
			mk_symbol_encode(data, &s);
		} else {
			for (size_t i = 0; i + MK_REF_LEN <= n; i++)
				if (data[i] == MK_REF) {
					uq_le_put64(data + i + 1,
						    translate(&local, uq_le_get64(data + i + 1), path));
					i += MK_REF_LEN - 1;
				}
		}
		map_put(&local, strtoull(buf, NULL, 16), pool_intern(cls, data, n));
	}
	free(data);
	free(buf);
	free(local.k);
	free(local.v);
	fclose(f);
}

int main(int argc, char **argv)
{
	struct symbols_opts o = { .pool = "replay" };
	bool dump = false, bytes = false;
	int i = 1;

	symbol_class = uniqd_class_n(NULL, MK_CLASS_SYMBOL, strlen(MK_CLASS_SYMBOL), 0);
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--json"))
			o.json = true;
		else if (!strcmp(argv[i], "--dump"))
			dump = true;
		else if (!strcmp(argv[i], "--bytes"))
			bytes = true;
		else
			break;
	}
	if (i == argc) {
		fprintf(stderr, "usage: symbols_replay [--json] LOG...\n"
			"       symbols_replay --dump LOG...\n"
			"       symbols_replay --bytes LOG...\n");
		return EXIT_ERROR;
	}
	for (; i < argc; i++)
		replay(argv[i]);
	if (bytes) {
		size_t total = 0;

		for (size_t k = 0; k < pool_n; k++)
			total += pool_entries[k].len;
		printf("%zu %zu\n", pool_n, total);
		return 0;
	}
	if (!dump)
		return cmd_symbols(&o, 0, NULL);

	struct ctx c = { .o = &o, .pool = uniqd_open_ex(NULL, "replay", 6, 0, NULL) };

	for (size_t k = 0; k < pool_n; k++) {
		struct entry *e = &pool_entries[k];

		printf("%016" PRIx64 "\t%s\t", (uint64_t)(HANDLE_BASE | (k + 1)),
		       class_names[e->class_id]);
		if (e->class_id == symbol_class) {
			for (size_t b = 0; b < e->len; b += 8)
				printf("%s%016" PRIx64, b ? " " : "", uq_le_get64(e->data + b));
		} else {
			char *t = type_text(&c, HANDLE_BASE | (k + 1), 0);

			/* One line an entry: a newline in a string is printed escaped. */
			fputs(t, stdout);
			free(t);
		}
		putchar('\n');
	}
	return 0;
}
