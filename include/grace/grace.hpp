/* SPDX-License-Identifier: MIT */
/*
 * C++ helpers for grace: scoped guards for read-side sections (default flavor, QSBR, srcu),
 * QSBR thread states and thread registration, lockable domain objects for the standard lock helpers, and a base class that
 * retires an object through call_rcu(). Header only, C++11; every call is one of the C API's
 * inline or exported functions, so a guard costs exactly what the C call costs.
 *
 *   {
 *       grace::rcu_read_guard g;              // rcu_read_lock()
 *       const cfg *c = rcu_dereference(cur);
 *       use(c);
 *   }                                         // rcu_read_unlock()
 *
 *   std::lock_guard<grace::rcu_domain> g(grace::rcu_default_domain());  // same thing
 *
 * Guards are neither copyable nor movable: a read-side section belongs to the thread that
 * opened it. Name the guard: `grace::rcu_read_guard{};` opens and closes a section at once.
 * Reference: docs/api.md, "C++ guards (grace.hpp)".
 */
#ifndef GRACE_GRACE_HPP
#define GRACE_GRACE_HPP

#ifndef __cplusplus
#error "grace/grace.hpp is the C++ interface; C code includes <grace/grace.h>"
#endif

#include <cstddef>
#include <memory>
#include <type_traits>

#include <grace/grace.h>
/* The srcu guard needs <grace/srcu.h>: compiled in whenever that header is available. */
#if defined(__has_include)
#if __has_include(<grace/srcu.h>)
#include <grace/srcu.h>
#define GRACE__HPP_HAVE_SRCU 1
#endif
#endif
#ifndef GRACE__HPP_HAVE_SRCU
#define GRACE__HPP_HAVE_SRCU 0
#endif

namespace grace
{

/* ---- default flavor ---- */

/** A default-flavor read-side section for the guard's scope (rcu_read_lock/rcu_read_unlock). */
class rcu_read_guard
{
      public:
	rcu_read_guard() noexcept { grace_rcu_read_lock(); }
	~rcu_read_guard() { grace_rcu_read_unlock(); }
	rcu_read_guard(const rcu_read_guard &) = delete;
	rcu_read_guard &operator=(const rcu_read_guard &) = delete;
};

/**
 * The default flavor as a Lockable object (the shape of C++26's std::rcu_domain): lock() and
 * unlock() open and close a read-side section, so std::lock_guard, std::unique_lock and
 * std::scoped_lock work with it. try_lock() always succeeds: readers never wait.
 */
class rcu_domain
{
      public:
	constexpr rcu_domain() noexcept {}
	void lock() noexcept { grace_rcu_read_lock(); }
	bool try_lock() noexcept
	{
		grace_rcu_read_lock();
		return true;
	}
	void unlock() noexcept { grace_rcu_read_unlock(); }
	/** Wait for a grace period (synchronize_rcu()). */
	void synchronize() noexcept { grace_rcu_synchronize(); }
	/** Wait for every callback queued before the call (rcu_barrier()). */
	void barrier() noexcept { grace_rcu_barrier(); }
};

/** The process-wide default-flavor domain. */
inline rcu_domain &rcu_default_domain() noexcept
{
	static rcu_domain d; /* constant-initialised: no guard variable */
	return d;
}

/** synchronize_rcu(). */
inline void rcu_synchronize() noexcept
{
	grace_rcu_synchronize();
}
/** rcu_barrier(). */
inline void rcu_barrier() noexcept
{
	grace_rcu_barrier();
}

/**
 * Explicit default-flavor registration for the guard's scope (rcu_register_thread() /
 * rcu_unregister_thread()). Optional: a thread is registered by its first read-side section
 * and unregistered when it exits; this guard makes the registry lock cost explicit and early.
 */
class rcu_thread_guard
{
      public:
	rcu_thread_guard() noexcept { grace_rcu_register_thread(); }
	~rcu_thread_guard() { grace_rcu_unregister_thread(); }
	rcu_thread_guard(const rcu_thread_guard &) = delete;
	rcu_thread_guard &operator=(const rcu_thread_guard &) = delete;
};

/**
 * Base class for objects retired through call_rcu(): derive T from rcu_obj_base<T> and call
 * obj->retire() after unpublishing obj; D()(obj) runs after a grace period, on a callback
 * worker (by default `delete obj`). The deleter must be stateless (it is not stored). Same
 * context rules as call_rcu(): may be called inside a read-side section and with locks held.
 */
template <class T, class D = std::default_delete<T>> class rcu_obj_base
{
      public:
	void retire() noexcept { grace_rcu_call(&grace_rcu_head_, &rcu_obj_base::invoke); }

      protected:
	rcu_obj_base() noexcept : grace_rcu_head_() {}
	rcu_obj_base(const rcu_obj_base &) noexcept : grace_rcu_head_() {}
	rcu_obj_base &operator=(const rcu_obj_base &) noexcept { return *this; }
	~rcu_obj_base() = default;

      private:
	static_assert(std::is_empty<D>::value,
		      "grace::rcu_obj_base: the deleter must be stateless");
	static void invoke(struct rcu_head *h) noexcept
	{
		rcu_obj_base *b = reinterpret_cast<rcu_obj_base *>(
			reinterpret_cast<char *>(h) - offsetof(rcu_obj_base, grace_rcu_head_));
		D()(static_cast<T *>(b));
	}
	struct rcu_head grace_rcu_head_;
};

/* ---- QSBR flavor ---- */

/**
 * Registers the calling thread with QSBR for the guard's scope (qsbr_register_thread() /
 * qsbr_unregister_thread()); the thread is online in between. Put one at the top of a QSBR
 * worker thread's function.
 */
class qsbr_thread_guard
{
      public:
	qsbr_thread_guard() noexcept { grace_qsbr_register_thread(); }
	~qsbr_thread_guard() { grace_qsbr_unregister_thread(); }
	qsbr_thread_guard(const qsbr_thread_guard &) = delete;
	qsbr_thread_guard &operator=(const qsbr_thread_guard &) = delete;
};

/**
 * Takes the calling (registered, online) QSBR thread offline for the guard's scope, and back
 * online at its end: wrap every blocking call (a condition wait, a read from a socket, a sleep)
 * so the thread does not stall grace periods while it waits. No QSBR-protected pointer may be
 * used inside the scope, nor one read before it after it.
 */
class qsbr_offline_guard
{
      public:
	qsbr_offline_guard() noexcept { grace_qsbr_thread_offline(); }
	~qsbr_offline_guard() { grace_qsbr_thread_online(); }
	qsbr_offline_guard(const qsbr_offline_guard &) = delete;
	qsbr_offline_guard &operator=(const qsbr_offline_guard &) = delete;
};

/** qsbr_read_lock()/qsbr_read_unlock() for the guard's scope (no code in release builds). */
class qsbr_read_guard
{
      public:
	qsbr_read_guard() noexcept { grace_qsbr_read_lock(); }
	~qsbr_read_guard() { grace_qsbr_read_unlock(); }
	qsbr_read_guard(const qsbr_read_guard &) = delete;
	qsbr_read_guard &operator=(const qsbr_read_guard &) = delete;
};

/** QSBR as a Lockable object; see rcu_domain. */
class qsbr_domain
{
      public:
	constexpr qsbr_domain() noexcept {}
	void lock() noexcept { grace_qsbr_read_lock(); }
	bool try_lock() noexcept
	{
		grace_qsbr_read_lock();
		return true;
	}
	void unlock() noexcept { grace_qsbr_read_unlock(); }
	void synchronize() noexcept { grace_qsbr_synchronize(); }
	void barrier() noexcept { grace_qsbr_barrier(); }
	/** Report a quiescent state for the calling thread (qsbr_quiescent_state()). */
	void quiescent_state() noexcept { grace_qsbr_quiescent_state(); }
};

inline qsbr_domain &qsbr_default_domain() noexcept
{
	static qsbr_domain d;
	return d;
}

/** The QSBR counterpart of rcu_obj_base: D()(obj) runs after a QSBR grace period. */
template <class T, class D = std::default_delete<T>> class qsbr_obj_base
{
      public:
	void retire() noexcept { grace_qsbr_call(&grace_rcu_head_, &qsbr_obj_base::invoke); }

      protected:
	qsbr_obj_base() noexcept : grace_rcu_head_() {}
	qsbr_obj_base(const qsbr_obj_base &) noexcept : grace_rcu_head_() {}
	qsbr_obj_base &operator=(const qsbr_obj_base &) noexcept { return *this; }
	~qsbr_obj_base() = default;

      private:
	static_assert(std::is_empty<D>::value,
		      "grace::qsbr_obj_base: the deleter must be stateless");
	static void invoke(struct rcu_head *h) noexcept
	{
		qsbr_obj_base *b = reinterpret_cast<qsbr_obj_base *>(
			reinterpret_cast<char *>(h) - offsetof(qsbr_obj_base, grace_rcu_head_));
		D()(static_cast<T *>(b));
	}
	struct rcu_head grace_rcu_head_;
};

#if GRACE__HPP_HAVE_SRCU
/* ---- srcu ---- */

/**
 * An srcu read-side section of domain d for the guard's scope (srcu_read_lock() and
 * srcu_read_unlock() with the index it returned). The section may sleep; it delays only the
 * grace periods of d. index() is the value srcu_read_lock() returned.
 */
class srcu_read_guard
{
      public:
	explicit srcu_read_guard(struct srcu_struct &d) noexcept
	    : d_(&d), idx_(grace_srcu_read_lock(&d))
	{
	}
	~srcu_read_guard() { grace_srcu_read_unlock(d_, idx_); }
	int index() const noexcept { return idx_; }
	srcu_read_guard(const srcu_read_guard &) = delete;
	srcu_read_guard &operator=(const srcu_read_guard &) = delete;

      private:
	struct srcu_struct *d_;
	int idx_;
};

/** synchronize_srcu(&d). */
inline void srcu_synchronize(struct srcu_struct &d) noexcept
{
	grace_srcu_synchronize(&d);
}
/** srcu_barrier(&d). */
inline void srcu_barrier(struct srcu_struct &d) noexcept
{
	grace_srcu_barrier(&d);
}
#endif

} // namespace grace

#endif // GRACE_GRACE_HPP
