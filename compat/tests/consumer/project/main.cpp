// SPDX-License-Identifier: MIT
// The same headers from C++: read side, call_rcu, the polled API.
#include <cstdio>
#include <urcu.h>
#include <urcu/rculist.h>

static int called;
static void cb(struct rcu_head *)
{
	called++;
}

int main()
{
	static struct rcu_head h;
	CDS_LIST_HEAD(list);
	rcu_register_thread();
	rcu_read_lock();
	bool empty = cds_list_empty(&list);
	rcu_read_unlock();
	struct urcu_gp_poll_state s = start_poll_synchronize_rcu();
	call_rcu(&h, cb);
	synchronize_rcu();
	rcu_barrier();
	bool ok = empty && called == 1 && poll_state_synchronize_rcu(s);
	rcu_unregister_thread();
	std::printf("grace-urcu C++ consumer: %s\n", ok ? "ok" : "FAILED");
	return ok ? 0 : 1;
}
