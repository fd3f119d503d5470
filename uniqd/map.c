// SPDX-License-Identifier: GPL-2.0
/*
 * uniqd: the pool mapped read-only into processes.
 *
 * A pool reserves one range of page offsets when it is created:
 *
 *   page 0                   struct uniqd_map_header
 *   entries region           __u64 entries[max_entries + 1]: record offsets
 *   index region             index arrays (index.c), never reused
 *   records region           struct uniqd_map_rec, 8-byte aligned
 *
 * Pages are allocated as the pool grows, each a zeroed page of its own
 * (GFP_KERNEL_ACCOUNT | __GFP_ZERO), entered in m->pages, and mapped into
 * processes lazily by uniqd_map_fault(). Multi-page areas (64 KiB record
 * chunks, records larger than 8 KiB, index arrays) are also vmap()ed so
 * that the kernel sees them contiguous. Records and entries[] are never
 * unmapped, moved or freed before the pool: a reader holding an offset
 * still reads what it read before. Only a retired index array is given
 * back (uniqd_map_free()): it is unmapped from every process, and a reader
 * that still goes there reads a page of zeroes, which is only a miss.
 *
 * Only uapi structures, content and zeroes are ever written to these pages:
 * no pointer, no kernel hash, no secret (Documentation/design.rst).
 */
#include <linux/err.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/nospec.h>
#include <linux/overflow.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "map.h"

/* A kernel mapping of a multi-page area, unmapped with the pool. */
struct uniqd_map_vm {
	struct uniqd_map_vm *next;
	void *addr;
	struct rcu_head rcu;		/* given back: freed after a grace period */
};

/* A given-back area, once no fault or kernel reader can hold it. */
static void uniqd_map_vm_free_rcu(struct rcu_head *rcu)
{
	struct uniqd_map_vm *vm = container_of(rcu, struct uniqd_map_vm, rcu);

	/* From softirq context vfree() defers itself to a worker. */
	vfree(vm->addr);
	kfree(vm);
}

#ifndef UNIQD_HAVE_VM_FLAGS_MOD
/* Before 6.3 (Debian's 6.1) the flags are written directly. */
static void vm_flags_mod(struct vm_area_struct *vma, unsigned long set,
			 unsigned long clear)
{
	vma->vm_flags = (vma->vm_flags | set) & ~clear;
}
#endif

/*
 * @n zeroed pages at @pg..@pg + @n - 1, contiguous in the kernel (vmap()ed
 * when @n > 1, and then freed by one vfree()): the kernel address, or NULL
 * on -ENOMEM. The page offsets are reserved first, so the fault handler
 * sees none of the pages (SIGBUS) until all exist; on failure nothing is
 * left behind and the offsets can be allocated again.
 */
void *uniqd_map_alloc(struct uniqd_map *m, pgoff_t pg, unsigned int n)
{
	struct uniqd_map_vm *vm = NULL;
	struct page **pages, *one;
	unsigned int i, got = 0, held = 0;
	void *addr;

	lockdep_assert_held(&m->lock);
	pages = n == 1 ? &one :
		kvmalloc_array(n, sizeof(*pages), GFP_KERNEL_ACCOUNT);
	if (!pages)
		return NULL;
	if (n > 1) {
		vm = kmalloc(sizeof(*vm), GFP_KERNEL_ACCOUNT);
		if (!vm)
			goto free_array;
	}
	for (held = 0; held < n; held++)
		if (xa_reserve(&m->pages, pg + held, GFP_KERNEL_ACCOUNT))
			goto release;
	for (got = 0; got < n; got++) {
		pages[got] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!pages[got])
			goto free_pages;
	}
	/* VM_MAP_PUT_PAGES: vfree() puts the pages and frees the array. */
	addr = n == 1 ? page_address(one) :
		vmap(pages, n, VM_MAP | VM_MAP_PUT_PAGES, PAGE_KERNEL);
	if (!addr)
		goto free_pages;
	/* Into reserved slots: allocates nothing, and nothing was there. */
	for (i = 0; i < n; i++)
		WARN_ON_ONCE(xa_store(&m->pages, pg + i, addr + i * PAGE_SIZE,
				      GFP_KERNEL_ACCOUNT));
	m->bytes += (u64)n << PAGE_SHIFT;
	if (vm) {
		vm->addr = addr;
		vm->next = m->vms;
		m->vms = vm;
	}
	return addr;

free_pages:
	while (got--)
		__free_page(pages[got]);
release:
	while (held--)
		xa_release(&m->pages, pg + held);
	kfree(vm);
free_array:
	if (n > 1)
		kvfree(pages);
	return NULL;
}

/*
 * Give back the @n pages at @pg, one area of uniqd_map_alloc() (@n > 1)
 * that no published word leads to any more. New faults there map the zero
 * page; what processes mapped is unmapped (in every address space a file
 * of the pool was opened in, which also drops other pools' pages at these
 * offsets: they only fault again); kernel readers and faults that loaded
 * the pages under RCU are done with them after a grace period, when
 * call_rcu() frees the area (not waited for: creators hold map->lock
 * here). A page a process faulted in just before the unmap keeps its
 * reference: it is freed when that mapping goes, and reads as the old,
 * consistent array.
 */
void uniqd_map_free(struct uniqd_map *m, pgoff_t pg, unsigned int n)
{
	struct uniqd_map_vm **pp, *vm;
	struct address_space *last = NULL;
	struct uniqd_map_user *u;
	unsigned int i;
	void *addr;

	lockdep_assert_held(&m->lock);
	addr = xa_load(&m->pages, pg);
	for (i = 0; i < n; i++)
		xa_erase(&m->pages, pg + i);
	mutex_lock(&m->users_lock);
	/* Files opened in one address space are kept next to each other. */
	list_for_each_entry(u, &m->users, node) {
		if (u->mapping == last)
			continue;
		last = u->mapping;
		unmap_mapping_range(u->mapping, (loff_t)pg << PAGE_SHIFT,
				    (loff_t)n << PAGE_SHIFT, 0);
	}
	mutex_unlock(&m->users_lock);
	for (pp = &m->vms; (vm = *pp); pp = &vm->next) {
		if (vm->addr == addr) {
			*pp = vm->next;
			break;
		}
	}
	if (WARN_ON_ONCE(!vm))
		return;
	call_rcu(&vm->rcu, uniqd_map_vm_free_rcu);
	m->bytes -= (u64)n << PAGE_SHIFT;
}

/* A file attached to the pool: its mappings are unmapped on give-back. */
void uniqd_map_user_add(struct uniqd_map *m, struct uniqd_map_user *u,
			struct address_space *mapping)
{
	struct uniqd_map_user *v;

	u->mapping = mapping;
	mutex_lock(&m->users_lock);
	list_for_each_entry(v, &m->users, node) {
		if (v->mapping == mapping) {
			list_add(&u->node, &v->node);
			goto unlock;
		}
	}
	list_add_tail(&u->node, &m->users);
unlock:
	mutex_unlock(&m->users_lock);
}

/* Its last reference is going: no VMA of it is left. */
void uniqd_map_user_del(struct uniqd_map *m, struct uniqd_map_user *u)
{
	mutex_lock(&m->users_lock);
	list_del(&u->node);
	mutex_unlock(&m->users_lock);
}

/* The page behind a kernel address of the mapping. */
static struct page *uniqd_map_addr_page(const void *addr)
{
	return is_vmalloc_addr(addr) ? vmalloc_to_page(addr) :
				       virt_to_page(addr);
}

/* A zeroed page at @pg of the mapping; NULL on -ENOMEM. */
static void *uniqd_map_page(struct uniqd_map *m, pgoff_t pg)
{
	return uniqd_map_alloc(m, pg, 1);
}

int uniqd_map_init(struct uniqd_map *m, u64 max_bytes, u64 max_entries)
{
	struct uniqd_map_header *h;
	u64 entries_pages, index_pages, records_pages, slots;

	mutex_init(&m->lock);
	mutex_init(&m->users_lock);
	INIT_LIST_HEAD(&m->users);
	xa_init(&m->pages);

	/*
	 * The index doubles while more than half full: its largest array has
	 * at most 4 * max_entries slots, and all arrays together less than
	 * twice that. The records max_bytes counts take at most 1.5 times
	 * their bytes (a chunk's tail is under 1/7 of what it holds, a record
	 * larger than 8 KiB wastes under a page): twice max_bytes is room
	 * enough, with one chunk being filled and one record's own pages
	 * given back by an error, waiting for reuse (m->spare).
	 */
	slots = roundup_pow_of_two(max(2 * max_entries,
				       1ULL << UNIQD_MAP_INDEX_MIN_LOG2));
	entries_pages = DIV_ROUND_UP((max_entries + 1) * sizeof(u64), PAGE_SIZE);
	index_pages = DIV_ROUND_UP(2 * slots * sizeof(u64), PAGE_SIZE);
	records_pages = DIV_ROUND_UP(2 * max_bytes, PAGE_SIZE) +
			UNIQD_MAP_CHUNK_PAGES +
			DIV_ROUND_UP(sizeof(struct uniqd_map_rec) + UNIQD_KEY_MAX,
				     PAGE_SIZE);
	m->entries_pg = 1;
	m->index_pg = m->entries_pg + entries_pages;
	m->records_pg = m->index_pg + index_pages;
	m->map_pages = m->records_pg + records_pages;
	m->index_pages = index_pages;
	m->records_pages = records_pages;
	m->entries_next = m->entries_pg;
	m->index_next = m->index_pg;
	m->records_next = m->records_pg;

	m->zero = (void *)get_zeroed_page(GFP_KERNEL_ACCOUNT);
	if (!m->zero)
		return -ENOMEM;
	m->bytes = PAGE_SIZE;
	mutex_lock(&m->lock);
	h = uniqd_map_page(m, 0);
	mutex_unlock(&m->lock);
	if (!h)
		return -ENOMEM;
	m->hdr = h;
	get_random_bytes(h->hash_seed, sizeof(h->hash_seed));
	h->magic = UNIQD_MAP_MAGIC;
	h->version = UNIQD_MAP_VERSION;
	h->header_size = sizeof(*h);
	h->page_size = PAGE_SIZE;
	h->probe = UNIQD_MAP_PROBE;
	h->map_size = (u64)m->map_pages << PAGE_SHIFT;
	h->handle_base = 0;	/* set once the pool has its id */
	h->entries_off = (u64)m->entries_pg << PAGE_SHIFT;
	h->entries_cap = max_entries + 1;
	h->index_off = (u64)m->index_pg << PAGE_SHIFT;
	h->index_size = index_pages << PAGE_SHIFT;
	h->records_off = (u64)m->records_pg << PAGE_SHIFT;
	h->records_size = records_pages << PAGE_SHIFT;
	h->entries_end = 0;
	h->index = 0;
	h->records_end = h->records_off;
	return 0;
}

/* Only when nothing maps the pool and no caller is left: it is being freed. */
void uniqd_map_destroy(struct uniqd_map *m)
{
	struct uniqd_map_vm *vm;
	unsigned long pg;
	void *addr;

	/*
	 * uniqd_map_init() never ran (an earlier step of the pool failed) or
	 * failed: nothing was stored, and the lock and xarray may not even be
	 * initialised (lockdep would complain about their keys).
	 */
	if (m->zero)
		free_page((unsigned long)m->zero);
	if (!m->hdr)
		return;
	WARN_ON_ONCE(!list_empty(&m->users));
	/*
	 * A page someone still pins (a read-only GUP) is freed by them:
	 * put_page() here, __free_page() in vfree(), drop only our reference.
	 */
	xa_for_each(&m->pages, pg, addr) {
		if (!is_vmalloc_addr(addr))
			put_page(virt_to_page(addr));
		cond_resched();
	}
	xa_destroy(&m->pages);
	while ((vm = m->vms)) {
		m->vms = vm->next;
		vfree(vm->addr);
		kfree(vm);
		cond_resched();
	}
	kvfree(m->spill);
	mutex_destroy(&m->users_lock);
	mutex_destroy(&m->lock);
}

/* Make entries[idx] readable: its page, and those before it. */
static u64 *uniqd_map_entry_slot(struct uniqd_map *m, u32 idx)
{
	pgoff_t pg = m->entries_pg + ((u64)idx * sizeof(u64) >> PAGE_SHIFT);
	u64 *page;

	lockdep_assert_held(&m->lock);
	while (m->entries_next <= pg) {
		if (!uniqd_map_page(m, m->entries_next))
			return NULL;
		m->entries_next++;
		/* Pairs with readers' acquire: entries below are in pages. */
		smp_store_release(&m->hdr->entries_end,
				  (u64)(m->entries_next - m->entries_pg) *
				  (PAGE_SIZE / sizeof(u64)));
	}
	page = xa_load(&m->pages, pg);
	return page + (idx & (PAGE_SIZE / sizeof(u64) - 1));
}

/*
 * The published record of entry @idx, kernel address, or NULL if @idx has
 * none (never created, or not yet published). No lock: entries[] and the
 * records only ever gain published words, and pages are never freed
 * before the pool.
 */
const struct uniqd_map_rec *uniqd_map_entry(struct uniqd_map *m, u32 idx)
{
	pgoff_t pg = m->entries_pg + ((u64)idx * sizeof(u64) >> PAGE_SHIFT);
	const u64 *page;
	const u8 *rec;
	u64 off;

	if (!idx || idx >= m->hdr->entries_cap)
		return NULL;
	page = xa_load(&m->pages, pg);
	if (!page)
		return NULL;
	/* Pairs with uniqd_map_entry_publish(): the record is whole. */
	off = smp_load_acquire(&page[idx & (PAGE_SIZE / sizeof(u64) - 1)]);
	if (!off)
		return NULL;
	/* The record's area is contiguous in the kernel from its first page. */
	rec = xa_load(&m->pages, off >> PAGE_SHIFT);
	if (WARN_ON_ONCE(!rec))
		return NULL;
	return (const struct uniqd_map_rec *)(rec + offset_in_page(off));
}

/*
 * Space for a record of @s->size bytes: its kernel address (@s->off and
 * @s->pages are set), ERR_PTR(-EDQUOT) if the records region is full, or
 * ERR_PTR(-ENOMEM). A record of any size goes into the current chunk if it
 * fits there; one that does not and is over 1/8 of a chunk gets pages of
 * its own (the given-back ones if they are as many), a smaller one starts
 * a new chunk.
 */
static void *uniqd_map_rec_space(struct uniqd_map *m, struct uniqd_map_slot *s)
{
	u32 chunk = UNIQD_MAP_CHUNK_PAGES << PAGE_SHIFT, size = s->size;
	unsigned int n;
	void *p;

	lockdep_assert_held(&m->lock);
	s->pages = 0;
	if (m->chunk && chunk - m->chunk_used >= size) {
		p = m->chunk + m->chunk_used;
		s->off = m->chunk_off + m->chunk_used;
		m->chunk_used += size;
		return p;
	}
	n = size > chunk / 8 ? DIV_ROUND_UP(size, PAGE_SIZE) :
			       UNIQD_MAP_CHUNK_PAGES;
	if (m->spare && size > chunk / 8 && m->spare_pages == n) {
		p = m->spare;
		s->off = m->spare_off;
		s->pages = n;
		m->spare = NULL;
		return p;
	}
	if (n > m->records_pg + m->records_pages - m->records_next)
		return ERR_PTR(-EDQUOT);
	p = uniqd_map_alloc(m, m->records_next, n);
	if (!p)
		return ERR_PTR(-ENOMEM);
	s->off = (u64)m->records_next << PAGE_SHIFT;
	m->records_next += n;
	WRITE_ONCE(m->hdr->records_end, (u64)m->records_next << PAGE_SHIFT);
	if (size > chunk / 8) {
		s->pages = n;
	} else {
		/* The old chunk's tail stays zero and unused. */
		m->chunk = p;
		m->chunk_off = s->off;
		m->chunk_used = size;
	}
	return p;
}

/*
 * Write the record of a new entry @idx and make entries[idx] writable; it
 * is visible to readers only after uniqd_map_entry_publish(). Errors:
 * -ENOMEM; -EDQUOT if the records region is full, which max_bytes keeps
 * from happening (uniqd_map_init() sizes the region, and every record that
 * still takes space there stays counted against max_bytes).
 */
int uniqd_map_entry_new(struct uniqd_map *m, u32 idx, u32 class_id,
			const void *data, u32 len, struct uniqd_map_slot *s)
{
	struct uniqd_map_rec *rec;

	lockdep_assert_held(&m->lock);
	s->size = ALIGN(sizeof(*rec) + len, 8);
	s->entry = uniqd_map_entry_slot(m, idx);
	if (!s->entry)
		return -ENOMEM;
	rec = uniqd_map_rec_space(m, s);
	if (IS_ERR(rec))
		return PTR_ERR(rec);
	/* The space is zero: the padding after the content stays so. */
	rec->class_id = class_id;
	rec->len = len;
	memcpy(rec->data, data, len);
	s->rec = rec;
	return 0;
}

/*
 * The record of uniqd_map_entry_new() under the same hold of the lock, which
 * is not to be published after all (an error): zero it, and give its space
 * back. In a chunk it is the chunk's latest record; pages of its own are
 * kept for the next record of as many pages (they are not freed: a reader
 * may have faulted them in), unless such pages already wait. Returns
 * whether it was given back; if not, the space stays used until the pool
 * dies.
 */
bool uniqd_map_entry_unnew(struct uniqd_map *m, struct uniqd_map_slot *s)
{
	lockdep_assert_held(&m->lock);
	memset(s->rec, 0, s->size);
	if (s->pages) {
		if (m->spare)
			return false;
		m->spare = s->rec;
		m->spare_off = s->off;
		m->spare_pages = s->pages;
		return true;
	}
	if (WARN_ON_ONCE(s->off + s->size != m->chunk_off + m->chunk_used))
		return false;
	m->chunk_used -= s->size;
	return true;
}

/*
 * entries[idx] = the record's offset. The record is complete; its reader
 * loads the entry with acquire. May run under a table spinlock.
 */
void uniqd_map_entry_publish(struct uniqd_map_slot *s)
{
	/* Pairs with readers' acquire of entries[idx]: the record is whole. */
	smp_store_release(s->entry, s->off);
}

void uniqd_map_stats(struct uniqd_map *m, struct uniqd_stats *st)
{
	mutex_lock(&m->lock);
	st->map_bytes = m->bytes;
	st->map_size = (u64)m->map_pages << PAGE_SHIFT;
	st->map_indexed = m->indexed;
	st->map_overflow = m->overflow;
	st->index_slots = m->slots ? 1ULL << m->log2 : 0;
	st->index_bytes = m->index_bytes;
	/* The list of entries to place again is kernel memory too. */
	st->kernel_bytes += (u64)m->spill_cap * sizeof(*m->spill);
	mutex_unlock(&m->lock);
}

/*
 * Any page of the pool that exists, else SIGBUS: a reader that follows the
 * published words never meets a missing page.
 */
static vm_fault_t uniqd_map_fault(struct vm_fault *vmf)
{
	struct uniqd_map *m = vmf->vma->vm_private_data;
	struct page *page;
	pgoff_t pg = vmf->pgoff;
	void *addr;

	if (pg >= m->map_pages)
		return VM_FAULT_SIGBUS;
	pg = array_index_nospec(pg, m->map_pages);
	/* Until the page is held: uniqd_map_free() waits for a grace period. */
	rcu_read_lock();
	addr = xa_load(&m->pages, pg);
	/* A retired index array reads as empty. */
	if (!addr && pg >= m->index_pg && pg < READ_ONCE(m->index_next))
		addr = m->zero;
	if (!addr) {
		rcu_read_unlock();
		return VM_FAULT_SIGBUS;
	}
	page = uniqd_map_addr_page(addr);
	get_page(page);
	rcu_read_unlock();
	vmf->page = page;
	return 0;
}

/* A VMA copied (fork) or split, and one gone: the count POOLS reports. */
static void uniqd_map_vm_open(struct vm_area_struct *vma)
{
	struct uniqd_map *m = vma->vm_private_data;

	atomic_inc(&m->vmas);
}

static void uniqd_map_vm_close(struct vm_area_struct *vma)
{
	struct uniqd_map *m = vma->vm_private_data;

	atomic_dec(&m->vmas);
}

static const struct vm_operations_struct uniqd_map_vm_ops = {
	.open = uniqd_map_vm_open,
	.close = uniqd_map_vm_close,
	.fault = uniqd_map_fault,
};

/*
 * The pool's side of mmap() (main.c finds the pool): read-only for good.
 * VM_MAYWRITE and VM_MAYEXEC are cleared, so neither mprotect() nor a
 * forced write (/proc/pid/mem, ptrace, process_vm_writev) can add them,
 * and a MAP_PRIVATE mapping is no COW mapping. The VMA holds the file, so
 * the pool (and the module) live until it is unmapped.
 */
int uniqd_map_mmap(struct uniqd_map *m, struct vm_area_struct *vma)
{
	unsigned long pages = vma_pages(vma);

	if (vma->vm_flags & (VM_WRITE | VM_EXEC))
		return -EPERM;
	if (vma->vm_pgoff >= m->map_pages ||
	    pages > m->map_pages - vma->vm_pgoff)
		return -EINVAL;
	vm_flags_mod(vma, VM_DONTEXPAND | VM_DONTDUMP, VM_MAYWRITE | VM_MAYEXEC);
	vma->vm_ops = &uniqd_map_vm_ops;
	vma->vm_private_data = m;
	/* mmap() itself calls no ->open(). */
	atomic_inc(&m->vmas);
	return 0;
}
