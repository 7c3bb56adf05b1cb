/* SPDX-License-Identifier: MIT */
/*
 * <grace/list.h> and <grace/hlist.h> against a reference model: long random sequences of every
 * update call, plain and RCU (add, add_tail, del, del_init, replace, replace_init, move,
 * move_tail, the four splices and the two RCU splices on lists; add_head, add_before,
 * add_behind, del, del_init, move_list and the RCU adds, deletions and replacement on hlists),
 * each checked against two arrays of node numbers: the forward walk (plain and RCU, entries
 * and raw links), the reverse walk, the predicates (empty, is_singular, is_first, is_last,
 * unhashed) and the first/last/next helpers after every call. A node deleted by an RCU call
 * goes back to the pool only after a grace period (synchronize_rcu()), as the documents
 * require; a debug build's checks (double deletion, corrupt links) see every call.
 * GRACE_MODEL_SEEDS and GRACE_MODEL_OPS set the work.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grace/grace.h>
#include <grace/hlist.h>
#include <grace/list.h>
#include "gtest_lite.h"
#include "model.h"

enum { NODES = 48 };

struct ent {
	int id;
	struct grace_list_head l;
	struct grace_hlist_node hn;
};

static struct ent ents[NODES];
static struct gt_model_rng rng;
static struct gt_model_where w;
#define MCHECK(cond, ...) GT_MODEL_CHECK(&w, cond, __VA_ARGS__)

static unsigned below(unsigned n)
{
	return gt_model_below(&rng, n);
}

/* A model list: node numbers in order. where[n]: the list a node is on (-1 none). */
struct mlist {
	int v[NODES];
	int n;
};

static int where[NODES];
static bool cooling[NODES]; /* deleted by an RCU call: free again after a grace period */

static int m_index(const struct mlist *m, int id)
{
	for (int i = 0; i < m->n; i++)
		if (m->v[i] == id)
			return i;
	return -1;
}
static void m_insert(struct mlist *m, int at, int id)
{
	memmove(&m->v[at + 1], &m->v[at], (size_t)(m->n - at) * sizeof(int));
	m->v[at] = id;
	m->n++;
}
static void m_remove(struct mlist *m, int at)
{
	memmove(&m->v[at], &m->v[at + 1], (size_t)(m->n - at - 1) * sizeof(int));
	m->n--;
}

/* A node on no list and not cooling, or -1. */
static int free_node(void)
{
	int start = (int)below(NODES);
	for (int i = 0; i < NODES; i++) {
		int id = (start + i) % NODES;
		if (where[id] < 0 && !cooling[id])
			return id;
	}
	return -1;
}

/* A node on list li, or -1. */
static int node_on(const struct mlist *m)
{
	return m->n ? m->v[below((unsigned)m->n)] : -1;
}

static void after_grace_period(void)
{
	synchronize_rcu();
	memset(cooling, 0, sizeof(cooling));
}

/* ---- lists ---- */

static struct grace_list_head heads[2];
static struct mlist ml[2];

static void check_list(int li)
{
	struct grace_list_head *h = &heads[li];
	const struct mlist *m = &ml[li];
	struct ent *e;
	struct grace_list_head *pos;
	int i = 0;

	grace_list_for_each_entry(e, h, l) {
		MCHECK(i < m->n && e->id == m->v[i], "list %d: entry %d is %d, the model's %d", li,
		       i, e->id, i < m->n ? m->v[i] : -1);
		if (++i > NODES)
			break;
	}
	MCHECK(i == m->n, "list %d: the walk found %d entries, the model holds %d", li, i, m->n);
	i = m->n;
	grace_list_for_each_entry_reverse(e, h, l) {
		i--;
		MCHECK(i >= 0 && e->id == m->v[i], "list %d: reverse entry %d is %d", li, i, e->id);
		if (i < 0)
			break;
	}
	MCHECK(i == 0, "list %d: the reverse walk ended %d short", li, i);
	i = 0;
	rcu_read_lock();
	grace_list_for_each_entry_rcu(e, h, l) {
		MCHECK(i < m->n && e->id == m->v[i], "list %d: RCU entry %d is %d", li, i, e->id);
		if (++i > NODES)
			break;
	}
	MCHECK(i == m->n, "list %d: the RCU walk found %d entries, the model %d", li, i, m->n);
	struct ent *f = grace_list_first_or_null_rcu(h, struct ent, l);
	MCHECK(m->n ? f && f->id == m->v[0] : f == NULL, "list %d: first_or_null_rcu", li);
	rcu_read_unlock();
	i = 0;
	grace_list_for_each(pos, h) {
		MCHECK(pos->next->prev == pos && pos->prev->next == pos,
		       "list %d: links broken at %d", li, i);
		if (++i > NODES)
			break;
	}
	MCHECK(grace_list_empty(h) == (m->n == 0), "list %d: empty() says %d with %d entries", li,
	       grace_list_empty(h), m->n);
	MCHECK(grace_list_is_singular(h) == (m->n == 1), "list %d: is_singular()", li);
	if (m->n) {
		MCHECK(grace_list_first_entry(h, struct ent, l)->id == m->v[0], "list %d: first",
		       li);
		MCHECK(grace_list_last_entry(h, struct ent, l)->id == m->v[m->n - 1],
		       "list %d: last", li);
		int k = (int)below((unsigned)m->n);
		struct grace_list_head *x = &ents[m->v[k]].l;
		MCHECK(grace_list_is_first(x, h) == (k == 0), "list %d: is_first of entry %d", li,
		       k);
		MCHECK(grace_list_is_last(x, h) == (k == m->n - 1), "list %d: is_last of entry %d",
		       li, k);
		if (k + 1 < m->n)
			MCHECK(grace_list_next_entry(&ents[m->v[k]], l)->id == m->v[k + 1],
			       "list %d: next_entry of entry %d", li, k);
	}
}

static void list_step(void)
{
	int li = (int)below(2), other = 1 - li;
	struct mlist *m = &ml[li], *mo = &ml[other];
	struct grace_list_head *h = &heads[li], *ho = &heads[other];
	unsigned what = below(17);
	int id;

	switch (what) {
	case 0: /* add, add_rcu */
	case 1:
		if ((id = free_node()) < 0)
			break;
		if (what == 0)
			grace_list_add(&ents[id].l, h);
		else
			grace_list_add_rcu(&ents[id].l, h);
		m_insert(m, 0, id);
		where[id] = li;
		break;
	case 2: /* add_tail, add_tail_rcu */
	case 3:
		if ((id = free_node()) < 0)
			break;
		if (what == 2)
			grace_list_add_tail(&ents[id].l, h);
		else
			grace_list_add_tail_rcu(&ents[id].l, h);
		m_insert(m, m->n, id);
		where[id] = li;
		break;
	case 4: /* del, del_init, del_rcu */
	case 5:
	case 6:
		if ((id = node_on(m)) < 0)
			break;
		if (what == 4) {
			grace_list_del(&ents[id].l);
		} else if (what == 5) {
			grace_list_del_init(&ents[id].l);
			MCHECK(grace_list_empty(&ents[id].l), "del_init left the entry non-empty");
		} else {
			grace_list_del_rcu(&ents[id].l);
			cooling[id] = true;
		}
		m_remove(m, m_index(m, id));
		where[id] = -1;
		break;
	case 7: /* replace, replace_init, replace_rcu */
	case 8:
	case 9: {
		int nid;
		if ((id = node_on(m)) < 0 || (nid = free_node()) < 0)
			break;
		if (what == 7) {
			grace_list_replace(&ents[id].l, &ents[nid].l);
		} else if (what == 8) {
			grace_list_replace_init(&ents[id].l, &ents[nid].l);
			MCHECK(grace_list_empty(&ents[id].l),
			       "replace_init left the old entry non-empty");
		} else {
			grace_list_replace_rcu(&ents[id].l, &ents[nid].l);
			cooling[id] = true;
		}
		m->v[m_index(m, id)] = nid;
		where[id] = -1;
		where[nid] = li;
		break;
	}
	case 10: /* move, move_tail: to either list */
	case 11: {
		int to = (int)below(2);
		if ((id = node_on(m)) < 0)
			break;
		m_remove(m, m_index(m, id));
		if (what == 10) {
			grace_list_move(&ents[id].l, &heads[to]);
			m_insert(&ml[to], 0, id);
		} else {
			grace_list_move_tail(&ents[id].l, &heads[to]);
			m_insert(&ml[to], ml[to].n, id);
		}
		where[id] = to;
		break;
	}
	case 12: /* splice_init, splice_tail_init: other into this */
	case 13:
		if (what == 12) {
			grace_list_splice_init(ho, h);
			for (int i = mo->n - 1; i >= 0; i--)
				m_insert(m, 0, mo->v[i]);
		} else {
			grace_list_splice_tail_init(ho, h);
			for (int i = 0; i < mo->n; i++)
				m_insert(m, m->n, mo->v[i]);
		}
		for (int i = 0; i < mo->n; i++)
			where[mo->v[i]] = li;
		mo->n = 0;
		MCHECK(grace_list_empty(ho), "splice_init left the source non-empty");
		break;
	case 14: /* splice, splice_tail (then the source is re-initialised by hand) */
	case 15:
		if (what == 14) {
			grace_list_splice(ho, h);
			for (int i = mo->n - 1; i >= 0; i--)
				m_insert(m, 0, mo->v[i]);
		} else {
			grace_list_splice_tail(ho, h);
			for (int i = 0; i < mo->n; i++)
				m_insert(m, m->n, mo->v[i]);
		}
		for (int i = 0; i < mo->n; i++)
			where[mo->v[i]] = li;
		mo->n = 0;
		grace_list_init(ho);
		break;
	case 16: /* the RCU splices: they wait for readers of the source themselves */
		if (below(2)) {
			grace_list_splice_init_rcu(ho, h, synchronize_rcu);
			for (int i = mo->n - 1; i >= 0; i--)
				m_insert(m, 0, mo->v[i]);
		} else {
			grace_list_splice_tail_init_rcu(ho, h, synchronize_rcu);
			for (int i = 0; i < mo->n; i++)
				m_insert(m, m->n, mo->v[i]);
		}
		for (int i = 0; i < mo->n; i++)
			where[mo->v[i]] = li;
		mo->n = 0;
		MCHECK(grace_list_empty(ho), "splice_init_rcu left the source non-empty");
		break;
	}
}

static void run_lists(unsigned long long seed, unsigned long nops)
{
	w.seed = seed;
	gt_model_seed(&rng, seed, 11);
	for (int i = 0; i < NODES; i++) {
		ents[i].id = i;
		where[i] = -1;
	}
	memset(cooling, 0, sizeof(cooling));
	for (int li = 0; li < 2; li++) {
		grace_list_init(&heads[li]);
		ml[li].n = 0;
	}
	for (w.op = 0; w.op < nops && !gt_model_failed(); w.op++) {
		list_step();
		check_list(0);
		check_list(1);
		if (below(64) == 0)
			after_grace_period();
	}
	after_grace_period();
}

/* ---- hlists ---- */

static struct grace_hlist_head hheads[2];
static struct mlist mh[2];

static void check_hlist(int li)
{
	struct grace_hlist_head *h = &hheads[li];
	const struct mlist *m = &mh[li];
	struct ent *e;
	int i = 0;

	grace_hlist_for_each_entry(e, h, hn) {
		MCHECK(i < m->n && e->id == m->v[i], "hlist %d: entry %d is %d, the model's %d", li,
		       i, e->id, i < m->n ? m->v[i] : -1);
		MCHECK(e->hn.pprev && *e->hn.pprev == &e->hn, "hlist %d: pprev of entry %d", li, i);
		MCHECK(!grace_hlist_unhashed(&e->hn), "hlist %d: entry %d unhashed", li, i);
		if (++i > NODES)
			break;
	}
	MCHECK(i == m->n, "hlist %d: the walk found %d entries, the model holds %d", li, i, m->n);
	i = 0;
	rcu_read_lock();
	grace_hlist_for_each_entry_rcu(e, h, hn) {
		MCHECK(i < m->n && e->id == m->v[i], "hlist %d: RCU entry %d is %d", li, i, e->id);
		if (++i > NODES)
			break;
	}
	rcu_read_unlock();
	MCHECK(i == m->n, "hlist %d: the RCU walk found %d entries, the model %d", li, i, m->n);
	MCHECK(grace_hlist_empty(h) == (m->n == 0), "hlist %d: empty()", li);
}

static void hlist_step(void)
{
	int li = (int)below(2), other = 1 - li;
	struct mlist *m = &mh[li], *mo = &mh[other];
	struct grace_hlist_head *h = &hheads[li];
	unsigned what = below(14);
	int id, nid, at;

	switch (what) {
	case 0: /* add_head, add_head_rcu */
	case 1:
		if ((id = free_node()) < 0)
			break;
		if (what == 0)
			grace_hlist_add_head(&ents[id].hn, h);
		else
			grace_hlist_add_head_rcu(&ents[id].hn, h);
		m_insert(m, 0, id);
		where[id] = li;
		break;
	case 2: /* add_tail_rcu */
		if ((id = free_node()) < 0)
			break;
		grace_hlist_add_tail_rcu(&ents[id].hn, h);
		m_insert(m, m->n, id);
		where[id] = li;
		break;
	case 3: /* add_before, add_before_rcu */
	case 4:
		if ((nid = node_on(m)) < 0 || (id = free_node()) < 0)
			break;
		at = m_index(m, nid);
		if (what == 3)
			grace_hlist_add_before(&ents[id].hn, &ents[nid].hn);
		else
			grace_hlist_add_before_rcu(&ents[id].hn, &ents[nid].hn);
		m_insert(m, at, id);
		where[id] = li;
		break;
	case 5: /* add_behind, add_behind_rcu */
	case 6:
		if ((nid = node_on(m)) < 0 || (id = free_node()) < 0)
			break;
		at = m_index(m, nid);
		if (what == 5)
			grace_hlist_add_behind(&ents[id].hn, &ents[nid].hn);
		else
			grace_hlist_add_behind_rcu(&ents[id].hn, &ents[nid].hn);
		m_insert(m, at + 1, id);
		where[id] = li;
		break;
	case 7: /* del, del_init, del_rcu, del_init_rcu */
	case 8:
	case 9:
	case 10:
		if ((id = node_on(m)) < 0)
			break;
		if (what == 7) {
			grace_hlist_del(&ents[id].hn);
		} else if (what == 8) {
			grace_hlist_del_init(&ents[id].hn);
			MCHECK(grace_hlist_unhashed(&ents[id].hn), "del_init left the node hashed");
		} else if (what == 9) {
			grace_hlist_del_rcu(&ents[id].hn);
			cooling[id] = true;
		} else {
			grace_hlist_del_init_rcu(&ents[id].hn);
			MCHECK(grace_hlist_unhashed(&ents[id].hn),
			       "del_init_rcu left the node hashed");
			cooling[id] = true;
		}
		m_remove(m, m_index(m, id));
		where[id] = -1;
		break;
	case 11: /* replace_rcu */
		if ((id = node_on(m)) < 0 || (nid = free_node()) < 0)
			break;
		grace_hlist_replace_rcu(&ents[id].hn, &ents[nid].hn);
		cooling[id] = true;
		m->v[m_index(m, id)] = nid;
		where[id] = -1;
		where[nid] = li;
		break;
	case 12: /* move_list: the other list's entries move here, this one's must be empty */
		if (m->n)
			break;
		grace_hlist_move_list(&hheads[other], h);
		*m = *mo;
		for (int i = 0; i < m->n; i++)
			where[m->v[i]] = li;
		mo->n = 0;
		MCHECK(grace_hlist_empty(&hheads[other]), "move_list left the source non-empty");
		break;
	case 13:
		after_grace_period();
		break;
	}
}

static void run_hlists(unsigned long long seed, unsigned long nops)
{
	w.seed = seed;
	gt_model_seed(&rng, seed, 13);
	for (int i = 0; i < NODES; i++) {
		ents[i].id = i;
		where[i] = -1;
		grace_hlist_node_init(&ents[i].hn);
	}
	memset(cooling, 0, sizeof(cooling));
	for (int li = 0; li < 2; li++) {
		grace_hlist_head_init(&hheads[li]);
		mh[li].n = 0;
	}
	for (w.op = 0; w.op < nops && !gt_model_failed(); w.op++) {
		hlist_step();
		check_hlist(0);
		check_hlist(1);
	}
	after_grace_period();
}

TEST(list_calls_match_the_model)
{
	gt_model_run_seeds(run_lists, 24, 6000, 1, 0);
}

TEST(hlist_calls_match_the_model)
{
	gt_model_run_seeds(run_hlists, 24, 6000, 1, 0);
}

GT_MAIN()
