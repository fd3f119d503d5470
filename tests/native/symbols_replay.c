// SPDX-License-Identifier: GPL-2.0
/*
 * `uniqdctl symbols` without a kernel: replays the logs of MLIR plugin runs
 * (table=private, one log per mlir-opt process) into a pool on the native
 * tests' fake device, through libuniqd, and runs the checker's own code
 * (symbols.c and json.c, included) on it. Each log's handles are private
 * to its process; the replay maps each back to its entry and interns that,
 * which gives equal content one handle, translating the handles that
 * contents hold: all of an mlir.symbol record, and each MK_REF'd handle of
 * a key=handles type or attribute. tools/testing/mlir-check.sh drives it.
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

#include "fake/replay_pool.h"

/* ---- a small u64 -> u64 hash map (open addressing) ------------------------ */

struct map {
	uint64_t *k, *v;
	size_t cap, n;
};

static void map_put(struct map *m, uint64_t k, uint64_t v);

static void map_grow(struct map *m)
{
	struct map b = { 0 };

	b.cap = m->cap ? 2 * m->cap : 1024;
	b.k = sym_xrealloc(NULL, b.cap * sizeof(*b.k));
	b.v = sym_xrealloc(NULL, b.cap * sizeof(*b.v));
	memset(b.k, 0, b.cap * sizeof(*b.k));
	memset(b.v, 0, b.cap * sizeof(*b.v));
	for (size_t i = 0; i < m->cap; i++)
		if (m->k[i])
			map_put(&b, m->k[i], m->v[i]);
	free(m->k);
	free(m->v);
	*m = b;
}

static void map_put(struct map *m, uint64_t k, uint64_t v)
{
	if (2 * (m->n + 1) > m->cap)
		map_grow(m);
	for (size_t i = (k * 0x9e3779b97f4a7c15ULL) >> 7 & (m->cap - 1);; i = (i + 1) & (m->cap - 1))
		if (!m->k[i] || m->k[i] == k) {
			m->n += !m->k[i];
			m->k[i] = k;
			m->v[i] = v;
			return;
		}
}

static uint64_t map_get(const struct map *m, uint64_t k)
{
	if (!m->cap)
		return 0;
	for (size_t i = (k * 0x9e3779b97f4a7c15ULL) >> 7 & (m->cap - 1); m->k[i];
	     i = (i + 1) & (m->cap - 1))
		if (m->k[i] == k)
			return m->v[i];
	return 0;
}

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
		cls = rp_class(t1 + 1, strlen(t1 + 1), true);
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

/* --dump's entries, in the pool's order, copied out of the walk. */
struct dump_list {
	struct dump_ent {
		uint64_t handle;
		uint32_t class_id;
		size_t len;
		unsigned char *data;
	} *e;
	size_t n;
};

static int dump_collect(void *arg, uint64_t handle, uint32_t class_id, const void *data,
			size_t len)
{
	struct dump_list *l = arg;
	struct dump_ent *e;

	l->e = sym_xrealloc(l->e, (l->n + 1) * sizeof(*l->e));
	e = &l->e[l->n++];
	e->handle = handle;
	e->class_id = class_id;
	e->len = len;
	e->data = sym_xrealloc(NULL, len + 1);
	memcpy(e->data, data, len);
	return 0;
}

int main(int argc, char **argv)
{
	struct symbols_opts o = { .pool = "replay" };
	bool dump = false, bytes = false;
	int i = 1;

	rp_open();
	symbol_class = rp_class(MK_CLASS_SYMBOL, strlen(MK_CLASS_SYMBOL), true);
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
		struct uniqd_pool_stats st;

		if (uniqd_stats(rp_pool, &st) < 0) {
			fprintf(stderr, "symbols_replay: stats: %s\n", uniqd_last_error());
			return EXIT_ERROR;
		}
		printf("%" PRIu64 " %" PRIu64 "\n", st.entries, st.bytes);
		return 0;
	}
	if (!dump)
		return cmd_symbols(&o, 0, NULL);

	struct ctx c = { .o = &o, .pool = rp_pool };
	struct dump_list l = { 0 };

	if (uniqd_foreach(rp_pool, 0, 0, dump_collect, &l) < 0) {
		fprintf(stderr, "symbols_replay: foreach: %s\n", uniqd_last_error());
		return EXIT_ERROR;
	}
	for (size_t k = 0; k < l.n; k++) {
		struct dump_ent *e = &l.e[k];

		printf("%016" PRIx64 "\t%s\t", e->handle, rp_class_name(e->class_id));
		if (e->class_id == symbol_class) {
			for (size_t b = 0; b < e->len; b += 8)
				printf("%s%016" PRIx64, b ? " " : "", uq_le_get64(e->data + b));
		} else {
			char *t = type_text(&c, e->handle, 0);

			/* One line an entry: a newline in a string is printed escaped. */
			fputs(t, stdout);
			free(t);
		}
		putchar('\n');
	}
	return 0;
}
