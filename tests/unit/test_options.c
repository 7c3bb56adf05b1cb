/* SPDX-License-Identifier: MIT */
/*
 * The option table (src/core/options.def, options.c): for every variable of the table, in a
 * child process each (an option is read once per process): unset gives the default; a valid
 * value gives that value; an invalid one (not a number, out of range, not a listed word) gives
 * the default and exactly one warning that names the variable and what it takes, however many
 * times the option is read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/options.h"
#include "gtest_lite.h"

enum kind { BOOL, INT, ENUM, STRING };
struct opt {
	const char *name;
	enum kind kind;
	long long def, lo, hi;
	const char *unit;
};
static const struct opt opts[GRACE__OPT_COUNT] = {
#define GRACE_OPTION(name, kind, def, lo, hi, unit, doc) { #name, kind, def, lo, hi, unit },
#include "core/options.def"
#undef GRACE_OPTION
};

static int cur;
static const char *cur_value;

/* Child: set the variable (NULL: unset), read the option three times, print what it read. */
static void child(void *arg)
{
	(void)arg;
	if (cur_value)
		setenv(opts[cur].name, cur_value, 1);
	else
		unsetenv(opts[cur].name);
	long long a = grace__opt((enum grace__opt_id)cur);
	long long b = grace__opt((enum grace__opt_id)cur);
	long long c = grace__opt((enum grace__opt_id)cur);
	fprintf(stderr, "VALUE %lld %lld %lld GIVEN %d\n", a, b, c,
		(int)grace__opt_given((enum grace__opt_id)cur));
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

/* Run one case; returns the value read (checks it was the same all three times). */
static long long run(int i, const char *value, char *out, size_t outsz, int *given)
{
	long long a = -1, b = -2, c = -3;
	cur = i;
	cur_value = value;
	int st = gt_run_child(child, NULL, out, outsz);
	REQUIRE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	const char *v = strstr(out, "VALUE ");
	REQUIRE(v && sscanf(v, "VALUE %lld %lld %lld GIVEN %d", &a, &b, &c, given) == 4);
	REQUIRE(a == b && b == c);
	return a;
}

TEST(every_option_unset_valid_and_invalid)
{
	char out[4096], valid[64];
	int given;

	for (int i = 0; i < GRACE__OPT_COUNT; i++) {
		const struct opt *o = &opts[i];
		if (o->kind == STRING)
			continue; /* parsed by its module (GRACE_TEST_PAUSE: core/debug.c) */
		/* Unset, and empty: the default, silently. */
		long long v = run(i, NULL, out, sizeof(out), &given);
		CHECK_MSG(v == o->def && !given && !strstr(out, "warning"), "%s unset: %lld",
			  o->name, v);
		v = run(i, "", out, sizeof(out), &given);
		CHECK_MSG(v == o->def && !strstr(out, "warning"), "%s empty: %lld", o->name, v);
		/* Valid: the top of the range, or the last word. */
		if (o->kind == ENUM)
			snprintf(valid, sizeof(valid), "%s", strrchr(o->unit, '|') + 1);
		else
			snprintf(valid, sizeof(valid), "%lld", o->hi);
		v = run(i, valid, out, sizeof(out), &given);
		CHECK_MSG(v == o->hi && given && !strstr(out, "warning"), "%s=%s read %lld",
			  o->name, valid, v);
		/* Invalid: garbage, and one past the range. */
		const char *bad[3] = { "garbage", NULL, NULL };
		char past[64];
		if (o->kind != ENUM) {
			snprintf(past, sizeof(past), "%lld", o->hi + 1);
			bad[1] = past;
			bad[2] = "12abc";
		}
		for (int k = 0; k < 3 && bad[k]; k++) {
			v = run(i, bad[k], out, sizeof(out), &given);
			CHECK_MSG(v == o->def && !given, "%s=%s read %lld, want the default %lld",
				  o->name, bad[k], v, o->def);
			CHECK_MSG(count(out, "warning") == 1 && strstr(out, o->name) &&
					  strstr(out, "expected"),
				  "%s=%s: want one warning naming it and its range, got:\n%s",
				  o->name, bad[k], out);
		}
	}
}

GT_MAIN()
