/* SPDX-License-Identifier: MIT */
/* The functions of tests/fault/plugin.c, found by its loaders with dlsym(). */
#ifndef GRACE_TEST_FAULT_PLUGIN_H
#define GRACE_TEST_FAULT_PLUGIN_H

int plugin_read_rcu(void);
int plugin_read_srcu(void);
void plugin_update(int n);
unsigned long plugin_freed(void);
void plugin_fini(void);

#endif
