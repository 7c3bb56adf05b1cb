/* SPDX-License-Identifier: MIT */
/* grace-urcu <urcu/cds.h>: every concurrent data structure header, as liburcu's. */
#ifndef GRACE_URCU_CDS_H
#define GRACE_URCU_CDS_H

#include <urcu/hlist.h>
#include <urcu/list.h>
#include <urcu/rcuhlist.h>
#include <urcu/rculist.h>
#include <urcu/rculfqueue.h>
#include <urcu/rculfstack.h>
#include <urcu/rculfhash.h>
#include <urcu/wfqueue.h>
#include <urcu/wfcqueue.h>
#include <urcu/wfstack.h>
#include <urcu/lfstack.h>

#endif
