/* SPDX-License-Identifier: MIT */
/*
 * grace circular doubly linked lists, with the RCU operations of the seed papers (FREENIX 2003
 * Fig. 5, Linux Journal 2003 Listing 2): readers traverse with no lock while one updater at a
 * time (the caller's lock) adds, deletes and replaces entries. Header-only.
 *
 * Memory ordering (OLS 2002 Appendix B, "memory ordering on insertion"):
 *  - Publication: the RCU add and replace operations fill in the new entry's links first, then
 *    store the one pointer that makes it reachable (prev->next) with rcu_assign_pointer(), a
 *    store-release. A reader that loads that pointer sees the entry initialised.
 *  - Traversal: the _rcu iterators load each ->next with rcu_dereference(), whose result the
 *    reader dereferences: the address dependency orders the loads of the entry's fields after
 *    the load of the pointer on every CPU grace supports (the paper's rmb()/read_barrier_depends
 *    is needed only on DEC Alpha). No fence, no store.
 *  - Deletion: grace_list_del_rcu() unlinks the entry but leaves its ->next intact, so a reader
 *    standing on it continues along the list; the caller frees it after a grace period
 *    (call_rcu()). Its ->prev is poisoned: a second deletion is caught (a clear message in debug
 *    builds, a fault at a poison address otherwise).
 *  - Readers follow ->next only: reverse traversal (->prev) is for the update side.
 *  - ->next is always written with a single atomic store-release (Linux uses WRITE_ONCE), even
 *    by the plain operations, so lockless grace_list_empty() checks and sanitizers see no torn
 *    stores, and a reader that reaches an entry through an unlinking store sees it initialised.
 *    ->prev is update-side only.
 *
 * Update-side operations (grace_list_add, grace_list_del, ...) are the plain list operations:
 * use them on lists no reader traverses concurrently, or on RCU lists with the update-side lock
 * held for operations that readers cannot observe half-done (none of the plain ones qualify
 * for a list that readers traverse: use the _rcu variants there).
 *
 * Debug builds (GRACE_DEBUG) check every add and delete for list corruption (neighbours that do
 * not point back, double deletion, adding an entry next to itself) and abort with a message
 * naming the call, like Linux's CONFIG_DEBUG_LIST.
 *
 * Kernel names: docs/ds.md maps each grace_list_* to its list_* counterpart.
 */
#ifndef GRACE_LIST_H
#define GRACE_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <grace/compiler.h>
#include <grace/arch/atomic.h>
#include <grace/pointer.h>

GRACE_BEGIN_DECLS

struct grace_list_head {
	struct grace_list_head *next, *prev;
};

/* Values stored in a deleted entry: dereferencing them faults. */
#define GRACE_LIST_POISON1 ((struct grace_list_head *)(uintptr_t)0x100) /* ->next, plain del */
#define GRACE_LIST_POISON2 ((struct grace_list_head *)(uintptr_t)0x122) /* ->prev, any del */

#define GRACE_LIST_HEAD_INIT(name) \
	{                          \
		&(name), &(name)   \
	}
#define GRACE_LIST_HEAD(name) struct grace_list_head name = GRACE_LIST_HEAD_INIT(name)

/*
 * ->next stores: one atomic store-release. Linux uses WRITE_ONCE (relaxed) where it unlinks,
 * since the new target was published before; a release costs the same on x86 and gives the
 * memory model (and TSan) the edge from the target's initialisation to a reader that reaches it
 * through the new link (pairs with rcu_dereference()).
 */
#define GRACE__LIST_SET_NEXT(e, v) grace_store_release(&(e)->next, (v))

/** Initialise an empty list (or an entry that is on no list). */
GRACE_INLINE void grace_list_init(struct grace_list_head *list)
{
	GRACE__LIST_SET_NEXT(list, list);
	list->prev = list;
}

GRACE_INLINE void grace__list_check_add(const char *call, struct grace_list_head *n,
					struct grace_list_head *prev, struct grace_list_head *next)
{
#if GRACE__DEBUG
	if (GRACE_UNLIKELY(next->prev != prev))
		grace__list_corrupt(call, n, "next->prev does not point to prev");
	if (GRACE_UNLIKELY(prev->next != next))
		grace__list_corrupt(call, n, "prev->next does not point to next");
	if (GRACE_UNLIKELY(n == prev || n == next))
		grace__list_corrupt(call, n, "entry added next to itself (already on this list?)");
#else
	(void)call;
	(void)n;
	(void)prev;
	(void)next;
#endif
}

GRACE_INLINE void grace__list_check_del(const char *call, struct grace_list_head *entry)
{
#if GRACE__DEBUG
	if (GRACE_UNLIKELY(entry->prev == GRACE_LIST_POISON2))
		grace__list_corrupt(call, entry, "entry already deleted (double deletion)");
	if (GRACE_UNLIKELY(entry->next == GRACE_LIST_POISON1))
		grace__list_corrupt(call, entry, "entry already deleted by grace_list_del()");
	if (GRACE_UNLIKELY(entry->prev->next != entry))
		grace__list_corrupt(call, entry, "prev->next does not point to the entry");
	if (GRACE_UNLIKELY(entry->next->prev != entry))
		grace__list_corrupt(call, entry, "next->prev does not point to the entry");
#else
	(void)call;
	(void)entry;
#endif
}

/* ---- update side, plain (no concurrent readers) ---- */

GRACE_INLINE void grace__list_add(struct grace_list_head *n, struct grace_list_head *prev,
				  struct grace_list_head *next)
{
	next->prev = n;
	n->next = next;
	n->prev = prev;
	GRACE__LIST_SET_NEXT(prev, n);
}

/** Add @n after @head (at the front: a stack). */
GRACE_INLINE void grace_list_add(struct grace_list_head *n, struct grace_list_head *head)
{
	grace__list_check_add("grace_list_add", n, head, head->next);
	grace__list_add(n, head, head->next);
}

/** Add @n before @head (at the back: a queue). */
GRACE_INLINE void grace_list_add_tail(struct grace_list_head *n, struct grace_list_head *head)
{
	grace__list_check_add("grace_list_add_tail", n, head->prev, head);
	grace__list_add(n, head->prev, head);
}

GRACE_INLINE void grace__list_del(struct grace_list_head *prev, struct grace_list_head *next)
{
	next->prev = prev;
	GRACE__LIST_SET_NEXT(prev, next);
}

/** Unlink @entry and poison both its links. */
GRACE_INLINE void grace_list_del(struct grace_list_head *entry)
{
	grace__list_check_del("grace_list_del", entry);
	grace__list_del(entry->prev, entry->next);
	GRACE__LIST_SET_NEXT(entry, GRACE_LIST_POISON1);
	entry->prev = GRACE_LIST_POISON2;
}

/** Unlink @entry and make it an empty list (it may be deleted or added again). */
GRACE_INLINE void grace_list_del_init(struct grace_list_head *entry)
{
	grace__list_check_del("grace_list_del_init", entry);
	grace__list_del(entry->prev, entry->next);
	grace_list_init(entry);
}

/** Put @n in the place of @old (old's links are left as they were). */
GRACE_INLINE void grace_list_replace(struct grace_list_head *old, struct grace_list_head *n)
{
	n->next = old->next;
	n->next->prev = n;
	n->prev = old->prev;
	GRACE__LIST_SET_NEXT(n->prev, n);
}

/** grace_list_replace(), then make @old an empty list. */
GRACE_INLINE void grace_list_replace_init(struct grace_list_head *old, struct grace_list_head *n)
{
	grace_list_replace(old, n);
	grace_list_init(old);
}

/** Move @entry from its list to the front of @head. */
GRACE_INLINE void grace_list_move(struct grace_list_head *entry, struct grace_list_head *head)
{
	grace__list_check_del("grace_list_move", entry);
	grace__list_del(entry->prev, entry->next);
	grace_list_add(entry, head);
}

/** Move @entry from its list to the back of @head. */
GRACE_INLINE void grace_list_move_tail(struct grace_list_head *entry, struct grace_list_head *head)
{
	grace__list_check_del("grace_list_move_tail", entry);
	grace__list_del(entry->prev, entry->next);
	grace_list_add_tail(entry, head);
}

/**
 * Is @head empty? One relaxed load of head->next: usable without a lock and under RCU (the
 * answer may be stale by the time the caller acts on it).
 */
GRACE_INLINE bool grace_list_empty(const struct grace_list_head *head)
{
	return grace_load_relaxed(&head->next) == head;
}

/** Does @head hold exactly one entry? Update side. */
GRACE_INLINE bool grace_list_is_singular(const struct grace_list_head *head)
{
	return !grace_list_empty(head) && head->next == head->prev;
}

GRACE_INLINE bool grace_list_is_first(const struct grace_list_head *entry,
				      const struct grace_list_head *head)
{
	return entry->prev == head;
}

GRACE_INLINE bool grace_list_is_last(const struct grace_list_head *entry,
				     const struct grace_list_head *head)
{
	return entry->next == head;
}

GRACE_INLINE void grace__list_splice(const struct grace_list_head *list,
				     struct grace_list_head *prev, struct grace_list_head *next)
{
	struct grace_list_head *first = list->next, *last = list->prev;

	first->prev = prev;
	GRACE__LIST_SET_NEXT(last, next);
	next->prev = last;
	GRACE__LIST_SET_NEXT(prev, first);
}

/** Insert the entries of @list at the front of @head (@list is left stale: reinitialise it). */
GRACE_INLINE void grace_list_splice(const struct grace_list_head *list,
				    struct grace_list_head *head)
{
	if (!grace_list_empty(list))
		grace__list_splice(list, head, head->next);
}

/** Insert the entries of @list at the back of @head (@list is left stale). */
GRACE_INLINE void grace_list_splice_tail(struct grace_list_head *list, struct grace_list_head *head)
{
	if (!grace_list_empty(list))
		grace__list_splice(list, head->prev, head);
}

/** grace_list_splice(), then make @list empty. */
GRACE_INLINE void grace_list_splice_init(struct grace_list_head *list, struct grace_list_head *head)
{
	if (!grace_list_empty(list)) {
		grace__list_splice(list, head, head->next);
		grace_list_init(list);
	}
}

/** grace_list_splice_tail(), then make @list empty. */
GRACE_INLINE void grace_list_splice_tail_init(struct grace_list_head *list,
					      struct grace_list_head *head)
{
	if (!grace_list_empty(list)) {
		grace__list_splice(list, head->prev, head);
		grace_list_init(list);
	}
}

/* ---- update side, RCU: concurrent readers traverse with the _rcu iterators ---- */

GRACE_INLINE void grace__list_add_rcu(struct grace_list_head *n, struct grace_list_head *prev,
				      struct grace_list_head *next)
{
	/* The entry is not reachable yet: its links can be plain stores. */
	n->next = next;
	n->prev = prev;
	/* Publish: store-release, so a reader that loads prev->next == n sees n's links and the
	 * fields the caller initialised. Pairs with rcu_dereference() in the _rcu iterators. */
	rcu_assign_pointer(prev->next, n);
	next->prev = n; /* update side only */
}

/**
 * grace_list_add_rcu() (the kernel's list_add_rcu): add @n after @head, publishing it to readers.
 * The caller holds the update-side lock and has initialised @n's fields.
 */
GRACE_INLINE void grace_list_add_rcu(struct grace_list_head *n, struct grace_list_head *head)
{
	grace__list_check_add("grace_list_add_rcu", n, head, head->next);
	grace__list_add_rcu(n, head, head->next);
}

/** grace_list_add_tail_rcu() (the kernel's list_add_tail_rcu): add @n before @head (last). */
GRACE_INLINE void grace_list_add_tail_rcu(struct grace_list_head *n, struct grace_list_head *head)
{
	grace__list_check_add("grace_list_add_tail_rcu", n, head->prev, head);
	grace__list_add_rcu(n, head->prev, head);
}

/**
 * grace_list_del_rcu() (the kernel's list_del_rcu): unlink @entry from readers' view. Its ->next
 * is kept
 * (readers on it continue); its ->prev is poisoned. Free it after a grace period, and do not
 * add it to a list before that grace period ends either (readers may still be on it).
 */
GRACE_INLINE void grace_list_del_rcu(struct grace_list_head *entry)
{
	grace__list_check_del("grace_list_del_rcu", entry);
	grace__list_del(entry->prev, entry->next);
	entry->prev = GRACE_LIST_POISON2;
}

/**
 * grace_list_replace_rcu() (the kernel's list_replace_rcu): put @n in the place of @old atomically
 * for
 * readers: each sees either @old or @n, never neither. Free @old after a grace period.
 */
GRACE_INLINE void grace_list_replace_rcu(struct grace_list_head *old, struct grace_list_head *n)
{
	grace__list_check_del("grace_list_replace_rcu", old);
	n->next = old->next;
	n->prev = old->prev;
	/* Publish @n: store-release, pairs with rcu_dereference() in the iterators. */
	rcu_assign_pointer(n->prev->next, n);
	n->next->prev = n;
	old->prev = GRACE_LIST_POISON2;
}

/*
 * grace_list_splice_init_rcu() (the kernel's list_splice_init_rcu): move the entries of the RCU
 * list
 * @list to the front of @head, which readers may be traversing. @list is emptied first, then
 * @sync (synchronize_rcu, or the flavor's equivalent) waits for readers still in @list's
 * entries (they would otherwise run from @list's last entry into @head and never reach @list's
 * head again), then the entries are published in @head. The caller holds the update-side lock
 * of both lists; @sync blocks.
 */
GRACE_INLINE void grace__list_splice_rcu(struct grace_list_head *list, struct grace_list_head *prev,
					 struct grace_list_head *next, void (*sync)(void))
{
	struct grace_list_head *first = list->next, *last = list->prev;

	if (first == list)
		return;
	grace_list_init(list);
	sync();
	/* The spliced entries are reachable only from @list's old head, which no reader uses
	 * any more: plain stores, then one publication. */
	GRACE__LIST_SET_NEXT(last, next);
	first->prev = prev;
	/* Publish: store-release (pairs with rcu_dereference() in the iterators). */
	rcu_assign_pointer(prev->next, first);
	next->prev = last;
}

GRACE_INLINE void grace_list_splice_init_rcu(struct grace_list_head *list,
					     struct grace_list_head *head, void (*sync)(void))
{
	grace__list_splice_rcu(list, head, head->next, sync);
}

/** As grace_list_splice_init_rcu(), at the back of @head. */
GRACE_INLINE void grace_list_splice_tail_init_rcu(struct grace_list_head *list,
						  struct grace_list_head *head, void (*sync)(void))
{
	grace__list_splice_rcu(list, head->prev, head, sync);
}

GRACE_END_DECLS

/* ---- entries and iterators ---- */

#define grace_list_entry(ptr, type, member) grace_container_of(ptr, type, member)
#define grace_list_first_entry(head, type, member) grace_list_entry((head)->next, type, member)
#define grace_list_last_entry(head, type, member) grace_list_entry((head)->prev, type, member)
#define grace_list_next_entry(pos, member) \
	grace_list_entry((pos)->member.next, __typeof__(*(pos)), member)
#define grace_list_prev_entry(pos, member) \
	grace_list_entry((pos)->member.prev, __typeof__(*(pos)), member)
/* The first entry, or NULL if the list is empty (update side). */
#define grace_list_first_entry_or_null(head, type, member)                                      \
	__extension__({                                                                         \
		struct grace_list_head *grace__h = (head);                                      \
		struct grace_list_head *grace__n = grace__h->next;                              \
		grace__n != grace__h ? grace_list_entry(grace__n, type, member) : (type *)NULL; \
	})

/* Update side (or no concurrent updaters). */
#define grace_list_for_each(pos, head) \
	for ((pos) = (head)->next; (pos) != (head); (pos) = (pos)->next)
#define grace_list_for_each_safe(pos, n, head)                         \
	for ((pos) = (head)->next, (n) = (pos)->next; (pos) != (head); \
	     (pos) = (n), (n) = (pos)->next)
#define grace_list_for_each_entry(pos, head, member)                           \
	for ((pos) = grace_list_first_entry(head, __typeof__(*(pos)), member); \
	     &(pos)->member != (head); (pos) = grace_list_next_entry(pos, member))
#define grace_list_for_each_entry_reverse(pos, head, member)                  \
	for ((pos) = grace_list_last_entry(head, __typeof__(*(pos)), member); \
	     &(pos)->member != (head); (pos) = grace_list_prev_entry(pos, member))
/* Continue after @pos (which must be an entry of the list, or its head as an entry). */
#define grace_list_for_each_entry_continue(pos, head, member)                      \
	for ((pos) = grace_list_next_entry(pos, member); &(pos)->member != (head); \
	     (pos) = grace_list_next_entry(pos, member))
/* Start at @pos itself. */
#define grace_list_for_each_entry_from(pos, head, member) \
	for (; &(pos)->member != (head); (pos) = grace_list_next_entry(pos, member))
/* The body may delete (and free) @pos: @n holds the next entry. */
#define grace_list_for_each_entry_safe(pos, n, head, member)                   \
	for ((pos) = grace_list_first_entry(head, __typeof__(*(pos)), member), \
	    (n) = grace_list_next_entry(pos, member);                          \
	     &(pos)->member != (head); (pos) = (n), (n) = grace_list_next_entry(n, member))
/* "pos" of a list head: start a continue/from iteration at the beginning. */
#define grace_list_prepare_entry(pos, head, member) \
	((pos) ? (pos) : grace_list_entry(head, __typeof__(*(pos)), member))

/* Readers (inside a read-side section): dependency-ordered loads of ->next. */

/* grace_list_entry_rcu() (the kernel's list_entry_rcu): container of the pointer loaded from @ptr
 * (an lvalue such as p->next). */
#define grace_list_entry_rcu(ptr, type, member) \
	grace_container_of(rcu_dereference(ptr), type, member)
/* The first entry, or NULL: one load of head->next. */
#define grace_list_first_or_null_rcu(head, type, member)                                        \
	__extension__({                                                                         \
		struct grace_list_head *grace__h = (head);                                      \
		struct grace_list_head *grace__n = rcu_dereference(grace__h->next);             \
		grace__n != grace__h ? grace_list_entry(grace__n, type, member) : (type *)NULL; \
	})
/* The entry after @pos, or NULL at the end of the list. */
#define grace_list_next_or_null_rcu(head, pos, member)                                        \
	__extension__({                                                                       \
		struct grace_list_head *grace__h = (head);                                    \
		struct grace_list_head *grace__n = rcu_dereference((pos)->member.next);       \
		grace__n != grace__h ? grace_list_entry(grace__n, __typeof__(*(pos)), member) \
				     : (__typeof__(pos))NULL;                                 \
	})
/* grace_list_for_each_rcu() (the kernel's list_for_each_rcu): iterate over the struct
 * grace_list_head links. */
#define grace_list_for_each_rcu(pos, head)                           \
	for ((pos) = rcu_dereference((head)->next); (pos) != (head); \
	     (pos) = rcu_dereference((pos)->next))
/* grace_list_for_each_entry_rcu() (the kernel's list_for_each_entry_rcu): every entry present
 * during the whole traversal is visited once. */
#define grace_list_for_each_entry_rcu(pos, head, member)                             \
	for ((pos) = grace_list_entry_rcu((head)->next, __typeof__(*(pos)), member); \
	     &(pos)->member != (head);                                               \
	     (pos) = grace_list_entry_rcu((pos)->member.next, __typeof__(*(pos)), member))
/* grace_list_for_each_entry_continue_rcu() (the kernel's list_for_each_entry_continue_rcu):
 * continue after @pos, found in the same section. */
#define grace_list_for_each_entry_continue_rcu(pos, head, member)                          \
	for ((pos) = grace_list_entry_rcu((pos)->member.next, __typeof__(*(pos)), member); \
	     &(pos)->member != (head);                                                     \
	     (pos) = grace_list_entry_rcu((pos)->member.next, __typeof__(*(pos)), member))
/* grace_list_for_each_entry_from_rcu() (the kernel's list_for_each_entry_from_rcu): start at @pos
 * itself. */
#define grace_list_for_each_entry_from_rcu(pos, head, member) \
	for (; &(pos)->member != (head);                      \
	     (pos) = grace_list_entry_rcu((pos)->member.next, __typeof__(*(pos)), member))
/*
 * grace_list_for_each_entry_safe_rcu() (the FREENIX paper's list_for_each_safe_rcu, Fig. 5):
 * @n is loaded before the body runs, so the body may unlink @pos (grace_list_del_rcu() plus
 * call_rcu()) or move it to another list and the
 * traversal still continues along this list.
 */
#define grace_list_for_each_entry_safe_rcu(pos, n, head, member)                        \
	for ((pos) = grace_list_entry_rcu((head)->next, __typeof__(*(pos)), member),    \
	    (n) = grace_list_entry_rcu((pos)->member.next, __typeof__(*(pos)), member); \
	     &(pos)->member != (head); (pos) = (n),                                     \
	    (n) = grace_list_entry_rcu((pos)->member.next, __typeof__(*(pos)), member))

#endif /* GRACE_LIST_H */
