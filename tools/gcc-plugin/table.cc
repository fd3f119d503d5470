// SPDX-License-Identifier: GPL-2.0
/*
 * table=private: the same work as table=uniqd with the pool swapped for a
 * table of this process alone, the baseline uniqd is measured against. An
 * open-addressing table (linear probing, at most half full) over copies of
 * the keys, hashed with libuniqd's own cache hash so that the two differ
 * in where the keys live, not in how they are hashed. Ids are dense from 1.
 */
#include <cstring>

#include <linux/uniqd.h>	/* uniqd_maphash() */

#include "plugin.h"

namespace {

struct slot {
	uint64_t hash;		/* 0: empty */
	uint64_t id;
};

struct entry {
	size_t off;		/* into bytes */
	size_t len;
	uint32_t class_id;
};

struct table {
	std::vector<slot> slots = std::vector<slot>(1024);
	std::vector<entry> entries = std::vector<entry>(1);	/* id 0 unused */
	std::vector<char> bytes;

	bool same(const entry &e, uint32_t cls, const void *data, size_t len) const
	{
		return e.class_id == cls && e.len == len &&
		       (len == 0 || !memcmp(bytes.data() + e.off, data, len));
	}

	void grow()
	{
		std::vector<slot> old;

		old.swap(slots);
		slots.assign(old.size() * 2, slot{});
		for (const slot &s : old)
			if (s.hash)
				place(s);
	}

	void place(const slot &s)
	{
		size_t mask = slots.size() - 1;

		for (size_t i = s.hash & mask;; i = (i + 1) & mask)
			if (!slots[i].hash) {
				slots[i] = s;
				return;
			}
	}
};

table tab;

} // namespace

uint64_t uq_private_intern(uint32_t class_id, const void *data, size_t len,
			   bool *created)
{
	/* The class is hashed too: equal bytes of two classes differ. */
	uint64_t h = uniqd_maphash(0, 0, class_id, data, (uint32_t)len) | 1;
	size_t mask = tab.slots.size() - 1;

	*created = false;
	for (size_t i = h & mask; tab.slots[i].hash; i = (i + 1) & mask) {
		const slot &s = tab.slots[i];

		if (s.hash == h && tab.same(tab.entries[s.id], class_id, data, len))
			return s.id;
	}
	if (2 * tab.entries.size() >= tab.slots.size())
		tab.grow();
	entry e = { tab.bytes.size(), len, class_id };
	tab.bytes.insert(tab.bytes.end(), (const char *)data, (const char *)data + len);
	tab.entries.push_back(e);
	tab.place(slot{ h, tab.entries.size() - 1 });
	*created = true;
	return tab.entries.size() - 1;
}

uint64_t uq_private_bytes()
{
	return tab.slots.capacity() * sizeof(slot) +
	       tab.entries.capacity() * sizeof(entry) + tab.bytes.capacity();
}
