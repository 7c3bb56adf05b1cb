/* SPDX-License-Identifier: MIT */
/* Baseline: the measured loop with nothing in it (loop overhead per iteration). */
#include "readside.h"

static void nothing(void) {}

RS_DEFINE_LOOP(rs_loop_empty, , )

const struct rs_design rs_design_empty = {
	.name = "empty",
	.loop_symbol = "rs_loop_empty",
	.label = "empty loop (baseline)",
	.thread_init = nothing,
	.thread_fini = nothing,
	.loop = rs_loop_empty,
	.loop8 = rs_loop_empty_x8,
};
