/* SPDX-License-Identifier: MIT */
/*
 * The option table (src/core/options.def): the library's environment variables, each with its
 * default, range and unit, parsed by one function that warns once, naming the variable and
 * what it takes. Each option is read the first time it is asked for and kept: the parts of the
 * library ask when they start (membarrier and rseq at load time, a callback engine when its
 * flavor's first call starts it, the exit handler at exit), as the docs say of each.
 */
#ifndef GRACE_SRC_OPTIONS_H
#define GRACE_SRC_OPTIONS_H

#include <stdbool.h>

enum grace__opt_id {
#define GRACE_OPTION(name, kind, def, lo, hi, unit, doc) GRACE__OPT_##name,
#include "core/options.def"
#undef GRACE_OPTION
	GRACE__OPT_COUNT
};

/* The option's value (BOOL: 0 or 1; INT: the number; ENUM: the word's index); its default when
 * unset, empty or invalid (then one warning per variable). Thread-safe; never blocks. */
long long grace__opt(enum grace__opt_id id);
/* Was the variable set to a valid value (not the default because unset or invalid)? */
bool grace__opt_given(enum grace__opt_id id);
/* STRING options: the variable's text, or NULL when unset or empty. */
const char *grace__opt_str(enum grace__opt_id id);

#endif
