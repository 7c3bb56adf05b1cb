/* SPDX-License-Identifier: MIT */
/*
 * Probe for tests/unit/rseq_cppcheck.sh (never compiled): cppcheck must analyse the code that
 * the rseq primitives guard. The deliberate out-of-bounds write below sits where only an
 * analysis that sees GRACE__RSEQ_OPS == 1 reaches it; the script expects cppcheck to report it,
 * and nothing that says a file could not be parsed.
 */
#include <grace/srcu.h>
#include <grace/internal/rseq.h>

int grace__probe_reader(struct srcu_struct *ssp);

int grace__probe_reader(struct srcu_struct *ssp)
{
	uint64_t ctr[4] = { 0, 0, 0, 0 };
	int idx = srcu_read_lock(ssp);
	int cpu = grace__rseq_percpu_add(ctr, sizeof(uint64_t), 4, 1);

	srcu_read_unlock(ssp, idx);
#if GRACE__RSEQ_OPS
	{
		int probe[2];

		probe[2] = cpu; /* the expected finding (arrayIndexOutOfBounds) */
		return probe[0] + probe[1];
	}
#else
	return cpu;
#endif
}
