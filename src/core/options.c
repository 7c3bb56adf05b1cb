/* SPDX-License-Identifier: MIT */
/*
 * The option table (options.h). One parser: an option is parsed the first time it is asked
 * for, by whichever thread asks; concurrent first readers compute the same value from the same
 * environment and store it before publishing the option as read (release store of `state`,
 * acquire load in grace__opt(): the value is seen whole). The warning of an invalid value is
 * printed once per variable, by the reader whose exchange of `warned` wins.
 */
#include "core/options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <grace/arch/atomic.h>

#include "core/diag.h"

enum kind { BOOL, INT, ENUM, STRING };

struct option {
	const char *name;
	enum kind kind;
	long long def, lo, hi;
	const char *unit;
};

static const struct option table[GRACE__OPT_COUNT] = {
#define GRACE_OPTION(name, kind, def, lo, hi, unit, doc) { #name, kind, def, lo, hi, unit },
#include "core/options.def"
#undef GRACE_OPTION
};

static long long value[GRACE__OPT_COUNT];
static uint32_t given[GRACE__OPT_COUNT];
static uint32_t state[GRACE__OPT_COUNT]; /* 0: not read yet; 1: read (value, given set) */
static uint32_t warned[GRACE__OPT_COUNT];

/* The index of word s in the '|'-separated list words, or -1. */
static long long enum_index(const char *words, const char *s)
{
	size_t n = strlen(s);
	long long i = 0;

	for (const char *w = words; *w; i++) {
		const char *e = strchr(w, '|');
		size_t len = e ? (size_t)(e - w) : strlen(w);
		if (len == n && strncmp(w, s, n) == 0)
			return i;
		if (!e)
			break;
		w = e + 1;
	}
	return -1;
}

static void warn_invalid(enum grace__opt_id id, const char *s)
{
	const struct option *o = &table[id];

	/* Relaxed exchange: only "warn once" hangs on it. */
	if (grace_xchg(&warned[id], 1u, __ATOMIC_RELAXED))
		return;
	switch (o->kind) {
	case BOOL:
		grace__warn("%s=%s: expected 0 or 1; using %lld", o->name, s, o->def);
		break;
	case ENUM:
		grace__warn("%s=%s: expected one of %s; using %s", o->name, s, o->unit,
			    o->def == 0 ? "the first" : "the default");
		break;
	default:
		if (o->def >= o->lo && o->def <= o->hi)
			grace__warn(
				"%s=%s: expected a whole number from %lld to %lld%s%s; using %lld",
				o->name, s, o->lo, o->hi, *o->unit ? " " : "", o->unit, o->def);
		else
			grace__warn(
				"%s=%s: expected a whole number from %lld to %lld%s%s; left unset",
				o->name, s, o->lo, o->hi, *o->unit ? " " : "", o->unit);
		break;
	}
}

static void parse(enum grace__opt_id id)
{
	const struct option *o = &table[id];
	const char *s = getenv(o->name);
	long long v = o->def;
	bool ok = false;

	if (s && *s && o->kind != STRING) {
		if (o->kind == ENUM) {
			long long k = enum_index(o->unit, s);
			ok = k >= 0;
			if (ok)
				v = k;
		} else {
			char *end;
			errno = 0;
			long long x = strtoll(s, &end, 10);
			ok = !errno && end != s && !*end && x >= o->lo && x <= o->hi;
			if (ok)
				v = x;
		}
		if (!ok)
			warn_invalid(id, s);
	} else if (s && *s) {
		ok = true;
	}
	grace_store_relaxed(&value[id], v);
	grace_store_relaxed(&given[id], ok ? 1u : 0u);
	/* Release: value and given before the option reads as parsed (pairs with the acquire
	 * load in grace__opt()). */
	grace_store_release(&state[id], 1u);
}

long long grace__opt(enum grace__opt_id id)
{
	if (!grace_load_acquire(&state[id]))
		parse(id);
	return grace_load_relaxed(&value[id]);
}

bool grace__opt_given(enum grace__opt_id id)
{
	if (!grace_load_acquire(&state[id]))
		parse(id);
	return grace_load_relaxed(&given[id]) != 0;
}

const char *grace__opt_str(enum grace__opt_id id)
{
	const char *s = getenv(table[id].name);

	return s && *s ? s : NULL;
}
