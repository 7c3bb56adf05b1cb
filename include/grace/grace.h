/* SPDX-License-Identifier: MIT */
/* Umbrella header: every public part of grace. */
#ifndef GRACE_GRACE_H
#define GRACE_GRACE_H
#include <grace/version.h>
#include <grace/pointer.h>
#include <grace/diag.h>
#include <grace/engine.h>
#include <grace/flavor.h>
#include <grace/rcu.h>
#include <grace/qsbr.h>
#include <grace/srcu.h>
#include <grace/hazptr.h>
#include <grace/list.h>
#include <grace/hlist.h>
#include <grace/hash.h>
#include <grace/idr.h>
#endif
