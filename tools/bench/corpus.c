// SPDX-License-Identifier: GPL-2.0
/*
 * The token corpus, read: see corpus.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "corpus.h"
#include "ubench.h"

void ub_corpus_load(struct ub_corpus *c, const char *path)
{
	struct stat st;
	uint8_t *buf, *p, *end;
	uint64_t t = 0;
	uint32_t f;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st))
		ub_die("%s: %s", path, strerror(errno));
	buf = ub_alloc(st.st_size);
	for (off_t off = 0; off < st.st_size;) {
		ssize_t n = read(fd, buf + off, st.st_size - off);

		if (n <= 0)
			ub_die("%s: short read", path);
		off += n;
	}
	close(fd);
	if (st.st_size < 32 || memcmp(buf, "UBCORP01", 8))
		ub_die("%s: not a corpus", path);
	memcpy(&c->nunits, buf + 8, 4);
	memcpy(&c->ntoks, buf + 16, 8);
	memcpy(&c->bytes, buf + 24, 8);
	c->toks = ub_alloc(c->ntoks * sizeof(*c->toks));
	c->unit_first = ub_alloc(((size_t)c->nunits + 1) * sizeof(*c->unit_first));
	p = buf + 32;
	end = buf + st.st_size;
	for (f = 0; f < c->nunits; f++) {
		uint32_t n, i;

		if (p + 4 > end)
			ub_die("%s: truncated", path);
		memcpy(&n, p, 4);
		p += 4;
		c->unit_first[f] = t;
		for (i = 0; i < n; i++) {
			uint16_t len;

			if (p + 4 > end || t >= c->ntoks)
				ub_die("%s: truncated", path);
			memcpy(&len, p + 2, 2);
			c->toks[t].cls = p[0];
			c->toks[t].len = len;
			c->toks[t].data = p + 4;
			p += 4 + len;
			if (p > end)
				ub_die("%s: truncated", path);
			t++;
		}
	}
	c->unit_first[c->nunits] = t;
	if (t != c->ntoks)
		ub_die("%s: %llu tokens, header says %llu", path,
		       (unsigned long long)t, (unsigned long long)c->ntoks);
}
