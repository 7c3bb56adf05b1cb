/* SPDX-License-Identifier: MIT */
/*
 * C++ interface of grace: the C++26 <rcu> shape (P2545, [saferecl.rcu]) for every flavor, and
 * scoped guards. Header only, C++11 and later; every call is one of the C API's inline or
 * exported functions, so grace::rcu_domain::lock() is rcu_read_lock() itself (no fence, no
 * atomic read-modify-write, nothing out of line).
 *
 * The standard's names, in namespace grace:
 *   rcu_domain, rcu_default_domain()   the default flavor as a Lockable ([saferecl.rcu.domain])
 *   rcu_obj_base<T, D>                 base class with retire(d, dom) ([saferecl.rcu.base])
 *   rcu_synchronize(dom), rcu_barrier(dom), rcu_retire(p, d, dom)   ([saferecl.rcu.domain.func])
 * and two more domain types with the same interface: qsbr_domain (qsbr_default_domain()) and
 * srcu_domain (an srcu domain of its own, or a wrapper of a struct srcu_struct). Every function
 * that takes an rcu_domain& also takes a qsbr_domain& or an srcu_domain&.
 * And the C++26 <hazard_pointer> shape (P2530, [saferecl.hp]) over <grace/hazptr.h>:
 *   hazard_pointer_obj_base<T, D>      base class with retire(d) ([saferecl.hp.base])
 *   hazard_pointer, make_hazard_pointer()   ([saferecl.hp.holder])
 * plus make_hazard_pointer(n), grace's batch: a std::vector of n hazard pointers.
 *
 *   struct config : grace::rcu_obj_base<config> { int timeout; };
 *   std::atomic<config *> cur;
 *   int timeout() {
 *       std::scoped_lock l(grace::rcu_default_domain());      // rcu_read_lock()
 *       return cur.load(std::memory_order_acquire)->timeout;
 *   }                                                         // rcu_read_unlock()
 *   void set(config *n) { cur.exchange(n)->retire(); }        // delete after a grace period
 *
 * Code written for std::rcu switches to grace with using-declarations (using grace::rcu_domain;
 * using grace::rcu_barrier; ...) or a namespace alias. Guards (rcu_read_guard, ...) are neither
 * copyable nor movable: a read-side section belongs to the thread that opened it.
 * Reference: docs/api.md, "C++: <grace/grace.hpp>".
 */
#ifndef GRACE_GRACE_HPP
#define GRACE_GRACE_HPP

#ifndef __cplusplus
#error "grace/grace.hpp is the C++ interface; C code includes <grace/grace.h>"
#endif

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include <grace/grace.h>

/* grace.h includes <grace/srcu.h>; kept for headers older than the umbrella that did not. */
#define GRACE__HPP_HAVE_SRCU 1

namespace grace
{

class rcu_domain;
class qsbr_domain;
class srcu_domain;

namespace detail
{

/* The message format of the library's misuse reports (docs/api.md, "Conventions"), then
 * abort: used where continuing would corrupt a domain's reader counts. */
[[noreturn]] inline void cxx_misuse(const char *call, const char *what) noexcept
{
	std::fprintf(stderr, "grace: misuse: %s: %s\n", call, what);
	std::abort();
}

/* The callback's link: an rcu_head alone in a standard-layout struct, so a pointer to the head
 * is a pointer to the link (they are pointer-interconvertible), and a static_cast from the link
 * reaches the object that derives from it, whatever that object's layout. */
struct rcu_link {
	struct rcu_head grace_rcu_head_;
};
inline rcu_link *link_of(struct rcu_head *h) noexcept
{
	return reinterpret_cast<rcu_link *>(h);
}

/* Which grace types are domains (for a readable error instead of an overload soup). */
template <class Dom> struct is_domain : std::false_type {
};
template <> struct is_domain<rcu_domain> : std::true_type {
};
template <> struct is_domain<qsbr_domain> : std::true_type {
};
template <> struct is_domain<srcu_domain> : std::true_type {
};

/* The deleter a rcu_obj_base holds: stored when it has state, not stored when it is empty
 * (then a value-initialised D runs). run() moves the stored deleter out before calling it: the
 * call usually destroys the object the deleter lives in. Only default construction and move
 * assignment are used, as [saferecl.rcu.base] requires of D. */
template <class T, class D, bool Empty = std::is_empty<D>::value> class obj_deleter
{
      protected:
	void grace_set_deleter_(D &&d) noexcept { grace_deleter_ = std::move(d); }
	void grace_run_deleter_(T *x) noexcept
	{
		D d;
		d = std::move(grace_deleter_);
		d(x);
	}

      private:
	D grace_deleter_;
};
template <class T, class D> class obj_deleter<T, D, true>
{
      protected:
	void grace_set_deleter_(D &&d) noexcept
	{
		D stored;
		stored = std::move(d); /* "evaluates deleter = std::move(d)"; nothing to keep */
		(void)stored;
	}
	void grace_run_deleter_(T *x) noexcept
	{
		D d;
		d(x);
	}
};

/* rcu_retire()'s record: the pointer and the deleter, allocated per call. */
template <class T, class D> struct retired : rcu_link {
	T *p;
	D d;
	retired(T *p_, D &&d_) : rcu_link(), p(p_), d(std::move(d_)) {}
	static void run(struct rcu_head *h) noexcept
	{
		retired *r = static_cast<retired *>(link_of(h));
		r->d(r->p);
		delete r;
	}
};

/* Per-thread open regions of srcu domains (srcu_domain::lock() must remember the index that
 * srcu_read_lock() returned; unlock() closes the most recent region of its domain). */
struct srcu_region {
	struct srcu_struct *ssp;
	int idx;
};
enum { srcu_max_regions = 64 };
struct srcu_regions {
	unsigned int n;
	srcu_region r[srcu_max_regions];
};
inline srcu_regions &srcu_thread_regions() noexcept
{
	static thread_local srcu_regions t; /* zero-initialised, no constructor: no TLS guard */
	return t;
}

} // namespace detail

/* ---- domains ---- */

/**
 * The default flavor as a C++26 rcu_domain: a Cpp17Lockable whose lock() and unlock() open and
 * close a read-side section (rcu_read_lock() / rcu_read_unlock(): the 13-instruction fast path,
 * no fence), so std::lock_guard, std::unique_lock and std::scoped_lock work with it. Sections
 * nest. try_lock() is lock() and returns true. There is one object: rcu_default_domain().
 */
class rcu_domain
{
	constexpr rcu_domain() noexcept {}
	friend rcu_domain &rcu_default_domain() noexcept;

      public:
	rcu_domain(const rcu_domain &) = delete;
	rcu_domain &operator=(const rcu_domain &) = delete;

	void lock() noexcept { grace_rcu_read_lock(); }
	bool try_lock() noexcept
	{
		grace_rcu_read_lock();
		return true;
	}
	void unlock() noexcept { grace_rcu_read_unlock(); }
	/** grace extension: synchronize_rcu(), as rcu_synchronize(*this). */
	void synchronize() noexcept { grace_rcu_synchronize(); }
	/** grace extension: rcu_barrier(*this): free_rcu_barrier(), which also waits for the
	 * evaluations that rcu_retire() left in threads' blocks, then rcu_barrier(). */
	void barrier() noexcept { grace_rcu_free_barrier(); }
};

/** The default-flavor domain: the same object on every call, in every shared object. */
inline GRACE_API rcu_domain &rcu_default_domain() noexcept
{
	static rcu_domain d; /* constant-initialised: no guard variable */
	return d;
}

/**
 * QSBR as a domain. lock()/unlock() are qsbr_read_lock()/qsbr_read_unlock(): no instruction in
 * release builds (debug builds check that the thread is registered and online). The regions
 * are QSBR's: a registered online thread is a reader between quiescent states.
 */
class qsbr_domain
{
	constexpr qsbr_domain() noexcept {}
	friend qsbr_domain &qsbr_default_domain() noexcept;

      public:
	qsbr_domain(const qsbr_domain &) = delete;
	qsbr_domain &operator=(const qsbr_domain &) = delete;

	void lock() noexcept { grace_qsbr_read_lock(); }
	bool try_lock() noexcept
	{
		grace_qsbr_read_lock();
		return true;
	}
	void unlock() noexcept { grace_qsbr_read_unlock(); }
	void synchronize() noexcept { grace_qsbr_synchronize(); }
	void barrier() noexcept { grace_qsbr_free_barrier(); } /* as rcu_domain's */
	/** Report a quiescent state for the calling thread (qsbr_quiescent_state()). */
	void quiescent_state() noexcept { grace_qsbr_quiescent_state(); }
};

/** The QSBR domain. */
inline GRACE_API qsbr_domain &qsbr_default_domain() noexcept
{
	static qsbr_domain d;
	return d;
}

/**
 * An srcu domain: independent grace periods, readers that may sleep. Either owns its
 * struct srcu_struct (the default constructor: init_srcu_struct(), which may throw
 * std::bad_alloc; the destructor runs srcu_barrier() and cleanup_srcu_struct()), or wraps one
 * the program defined (DEFINE_SRCU(), init_srcu_struct()) and leaves it alone on destruction.
 * lock() is srcu_read_lock() plus a push of the index on a per-thread list (at most 64 regions
 * of srcu domains open in one thread); unlock() closes this domain's most recent region of the
 * calling thread. An unlock with no open region of the domain in the thread is reported and
 * aborts. Regions of different domains may interleave.
 */
class srcu_domain
{
      public:
	srcu_domain() : ssp_(&own_), owned_(true)
	{
		if (grace_srcu_init(&own_) != 0) {
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
			throw std::bad_alloc();
#else
			detail::cxx_misuse("grace::srcu_domain", "init_srcu_struct() failed");
#endif
		}
	}
	explicit srcu_domain(struct srcu_struct &ssp) noexcept : ssp_(&ssp), owned_(false) {}
	~srcu_domain()
	{
		if (owned_) {
			grace_srcu_barrier(&own_);
			grace_srcu_cleanup(&own_);
		}
	}
	srcu_domain(const srcu_domain &) = delete;
	srcu_domain &operator=(const srcu_domain &) = delete;

	void lock() noexcept
	{
		detail::srcu_regions &t = detail::srcu_thread_regions();
		int idx = grace_srcu_read_lock(ssp_);
		if (t.n == detail::srcu_max_regions) {
			grace_srcu_read_unlock(ssp_, idx);
			detail::cxx_misuse("grace::srcu_domain::lock",
					   "more than 64 srcu regions open in this thread");
		}
		t.r[t.n].ssp = ssp_;
		t.r[t.n].idx = idx;
		t.n++;
	}
	bool try_lock() noexcept
	{
		lock();
		return true;
	}
	void unlock() noexcept
	{
		detail::srcu_regions &t = detail::srcu_thread_regions();
		for (unsigned int i = t.n; i-- > 0;) {
			if (t.r[i].ssp != ssp_)
				continue;
			int idx = t.r[i].idx;
			for (unsigned int j = i + 1; j < t.n; j++)
				t.r[j - 1] = t.r[j];
			t.n--;
			grace_srcu_read_unlock(ssp_, idx);
			return;
		}
		detail::cxx_misuse("grace::srcu_domain::unlock",
				   "no region of this domain is open in this thread");
	}
	void synchronize() noexcept
	{
		grace_srcu_synchronize(ssp_);
	}
	void barrier() noexcept
	{
		grace_srcu_barrier(ssp_);
	}
	/** The C domain, for srcu_dereference() and the C API. */
	struct srcu_struct &native() noexcept
	{
		return *ssp_;
	}

      private:
	struct srcu_struct own_ = GRACE_SRCU_INITIALIZER;
	struct srcu_struct *ssp_;
	bool owned_;
};

namespace detail
{
inline void dom_call(rcu_domain &, struct rcu_head *h, rcu_callback_t f) noexcept
{
	grace_rcu_call(h, f);
}
inline void dom_call(qsbr_domain &, struct rcu_head *h, rcu_callback_t f) noexcept
{
	grace_qsbr_call(h, f);
}
inline void dom_call(srcu_domain &d, struct rcu_head *h, rcu_callback_t f) noexcept
{
	grace_srcu_call(&d.native(), h, f);
}
inline void dom_retire_fn(rcu_domain &, void (*fn)(void *), void *p) noexcept
{
	grace_rcu_retire_fn(fn, p);
}
inline void dom_retire_fn(qsbr_domain &, void (*fn)(void *), void *p) noexcept
{
	grace_qsbr_retire_fn(fn, p);
}
inline void dom_retire_fn(srcu_domain &d, void (*fn)(void *), void *p) noexcept
{
	grace_srcu_retire_fn(&d.native(), fn, p);
}

/* A deleter with no state (std::default_delete, a function object that frees to a pool):
 * rcu_retire() needs no record for it, the per-thread blocks of rcu_retire_fn() hold the
 * pointer and this function, which evaluates D()(p). */
template <class D>
struct stateless_deleter
    : std::integral_constant<bool, std::is_empty<D>::value &&
					   std::is_trivially_default_constructible<D>::value &&
					   std::is_trivially_destructible<D>::value> {
};
template <class T, class D> struct stateless_run {
	static void run(void *p) noexcept
	{
		D d;
		d(static_cast<typename std::remove_cv<T>::type *>(p));
	}
};
template <class T, class D, class Dom>
inline void retire_any(T *p, D &&, Dom &dom, std::true_type) noexcept
{
	dom_retire_fn(dom, &stateless_run<T, D>::run,
		      static_cast<void *>(const_cast<typename std::remove_cv<T>::type *>(p)));
}
template <class T, class D, class Dom>
inline void retire_any(T *p, D &&d, Dom &dom, std::false_type)
{
	retired<T, D> *r = new retired<T, D>(p, std::move(d));
	dom_call(dom, &r->grace_rcu_head_, &retired<T, D>::run);
}
} // namespace detail

/* ---- [saferecl.rcu.domain.func] ---- */

/**
 * rcu_synchronize(dom): wait until every region of dom that began before the call has ended
 * (synchronize_rcu(), synchronize_qsbr() from an online thread takes it offline for the wait,
 * synchronize_srcu()). Inside a region of the same domain it would wait for itself: reported,
 * abort.
 */
inline void rcu_synchronize(rcu_domain &dom = rcu_default_domain()) noexcept
{
	dom.synchronize();
}
inline void rcu_synchronize(qsbr_domain &dom) noexcept
{
	dom.synchronize();
}
inline void rcu_synchronize(srcu_domain &dom) noexcept
{
	dom.synchronize();
}

/**
 * rcu_barrier(dom): wait until every evaluation scheduled in dom (retire(), rcu_retire())
 * before the call has run (rcu_barrier(), qsbr_barrier(), srcu_barrier()).
 * A template so that, after `using namespace grace;`, the call rcu_barrier() with no argument
 * picks the C function of <grace/rcu.h> (a non-template is preferred), which does the same
 * thing, instead of being ambiguous.
 */
template <class Domain = rcu_domain>
inline void rcu_barrier(Domain &dom = rcu_default_domain()) noexcept
{
	static_assert(detail::is_domain<Domain>::value,
		      "grace::rcu_barrier: the argument must be a grace domain");
	dom.barrier();
}

/**
 * rcu_retire(p, d, dom): evaluate d1(p) after a grace period of dom, d1 initialised from
 * std::move(d) (default: delete p). May be called inside a read-side section.
 * A deleter with no state (empty, trivially constructible and destructible: the default
 * std::default_delete, a function object that returns the object to a pool) needs no record:
 * the pointer goes into the calling thread's blocks (rcu_retire_fn() of the C API, inline for
 * the default flavor and QSBR), and D()(p) runs on this thread, a few at each of its later
 * retires, into its allocator's warm cache; it never throws. Any other deleter is moved into a
 * record allocated with new (throws std::bad_alloc or what D's move constructor throws, and
 * then schedules nothing) and runs on a callback worker of the library. Either way the
 * evaluation must not throw (it is noexcept: std::terminate) nor wait for a grace period.
 */
template <class T, class D = std::default_delete<T>>
inline void rcu_retire(T *p, D d = D(), rcu_domain &dom = rcu_default_domain())
{
	detail::retire_any(p, std::move(d), dom, detail::stateless_deleter<D>());
}
template <class T, class D> inline void rcu_retire(T *p, D d, qsbr_domain &dom)
{
	detail::retire_any(p, std::move(d), dom, detail::stateless_deleter<D>());
}
template <class T, class D> inline void rcu_retire(T *p, D d, srcu_domain &dom)
{
	detail::retire_any(p, std::move(d), dom, detail::stateless_deleter<D>());
}

/* ---- [saferecl.rcu.base] ---- */

/**
 * Base class of an rcu-protectable T (struct T : grace::rcu_obj_base<T, D>): x.retire(d, dom)
 * stores d in x (empty deleters are not stored) and, after a grace period of dom, runs it on x
 * (default: delete x) on a callback worker. No allocation: the callback link lives in the
 * base (16 bytes, plus D when it has state). retire() may be called inside a read-side section
 * and with locks held, once per object. T may be incomplete where the base is named, and must
 * be complete where retire() is used. D must be default-constructible and move-assignable.
 * Trivially copyable when D is.
 */
template <class T, class D = std::default_delete<T>>
class rcu_obj_base : private detail::rcu_link, private detail::obj_deleter<T, D>
{
      public:
	void retire(D d = D(), rcu_domain &dom = rcu_default_domain()) noexcept
	{
		retire_in(std::move(d), dom);
	}
	void retire(D d, qsbr_domain &dom) noexcept { retire_in(std::move(d), dom); }
	void retire(D d, srcu_domain &dom) noexcept { retire_in(std::move(d), dom); }

      protected:
	rcu_obj_base() = default;
	rcu_obj_base(const rcu_obj_base &) = default;
	rcu_obj_base(rcu_obj_base &&) = default;
	rcu_obj_base &operator=(const rcu_obj_base &) = default;
	rcu_obj_base &operator=(rcu_obj_base &&) = default;
	~rcu_obj_base() = default;

      private:
	template <class Dom> void retire_in(D &&d, Dom &dom) noexcept
	{
		static_assert(std::is_base_of<rcu_obj_base, T>::value,
			      "grace::rcu_obj_base<T, D>: T must derive from rcu_obj_base<T, D>");
		this->grace_set_deleter_(std::move(d));
		detail::dom_call(dom, &this->grace_rcu_head_, &rcu_obj_base::invoke);
	}
	static void invoke(struct rcu_head *h) noexcept
	{
		rcu_obj_base *b = static_cast<rcu_obj_base *>(detail::link_of(h));
		b->grace_run_deleter_(static_cast<T *>(b));
	}
};

/** retire() always in the QSBR domain: obj->retire() is obj->retire(D(), qsbr_default_domain())
 * of rcu_obj_base. Kept from grace 0.1. */
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
		      "grace::qsbr_obj_base: the deleter must be stateless (use rcu_obj_base)");
	static void invoke(struct rcu_head *h) noexcept
	{
		qsbr_obj_base *b = reinterpret_cast<qsbr_obj_base *>(
			reinterpret_cast<char *>(h) - offsetof(qsbr_obj_base, grace_rcu_head_));
		D()(static_cast<T *>(b));
	}
	struct rcu_head grace_rcu_head_;
};

/* ---- guards ---- */

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

/* ---- hazard pointers: C++26 <hazard_pointer> ([saferecl.hp]) over <grace/hazptr.h> ---- */

template <class T, class D> class hazard_pointer_obj_base;

namespace detail
{
/* T is hazard-protectable: derived from hazard_pointer_obj_base<T, D> for some D (the standard
 * also asks for exactly one such base, public and non-virtual; the conversion below checks
 * public and unambiguous). */
template <class T> struct hp_base_of {
	template <class D> static std::true_type test(const hazard_pointer_obj_base<T, D> *);
	static std::false_type test(...);
	static constexpr bool value = decltype(test(static_cast<const T *>(nullptr)))::value;
};
} // namespace detail

/**
 * Base class of a hazard-protectable type T ([saferecl.hp.base]): retire(d) stores d and hands
 * the object to hazptr_retire_fn(): d(static_cast<T *>(this)) runs on the retiring thread once
 * no hazard pointer protects the object (a few objects per later retire, in a barrier, at the
 * thread's exit). The object must be unlinked first and retired once. D must be
 * default-constructible and move-assignable. Never blocks; noexcept.
 */
template <class T, class D = std::default_delete<T>>
class hazard_pointer_obj_base : private detail::obj_deleter<T, D>
{
      public:
	void retire(D d = D()) noexcept
	{
		static_assert(std::is_base_of<hazard_pointer_obj_base, T>::value,
			      "grace::hazard_pointer_obj_base<T, D>: T must derive from it");
		this->grace_set_deleter_(std::move(d));
		grace_hazptr_retire_fn(nullptr, &hazard_pointer_obj_base::invoke,
				       static_cast<T *>(this));
	}

      protected:
	hazard_pointer_obj_base() = default;
	hazard_pointer_obj_base(const hazard_pointer_obj_base &) = default;
	hazard_pointer_obj_base(hazard_pointer_obj_base &&) = default;
	hazard_pointer_obj_base &operator=(const hazard_pointer_obj_base &) = default;
	hazard_pointer_obj_base &operator=(hazard_pointer_obj_base &&) = default;
	~hazard_pointer_obj_base() = default;

      private:
	static void invoke(void *p) noexcept
	{
		T *x = static_cast<T *>(p);
		static_cast<hazard_pointer_obj_base *>(x)->grace_run_deleter_(x);
	}
};

/**
 * A hazard pointer holder ([saferecl.hp.holder]): empty, or owns one struct grace_hazptr.
 * Move-only; the destructor ends the protection and gives the hazard pointer back. protect()
 * is hazptr_protect() over a std::atomic<T *> (a store, a compiler barrier, an acquire reload:
 * no fence, no atomic read-modify-write on x86-64); reset_protection() is hazptr_reset() or
 * hazptr_set(). The holder may move between threads; a protection belongs to whoever holds it.
 */
class hazard_pointer
{
      public:
	hazard_pointer() noexcept : h_(nullptr) {}
	hazard_pointer(hazard_pointer &&o) noexcept : h_(o.h_) { o.h_ = nullptr; }
	hazard_pointer &operator=(hazard_pointer &&o) noexcept
	{
		if (this != &o) {
			grace_hazptr_free(h_);
			h_ = o.h_;
			o.h_ = nullptr;
		}
		return *this;
	}
	~hazard_pointer() { grace_hazptr_free(h_); }
	hazard_pointer(const hazard_pointer &) = delete;
	hazard_pointer &operator=(const hazard_pointer &) = delete;

	bool empty() const noexcept { return h_ == nullptr; }

	template <class T> T *protect(const std::atomic<T *> &src) noexcept
	{
		T *ptr = src.load(std::memory_order_relaxed);
		while (!try_protect(ptr, src)) {
		}
		return ptr;
	}

	template <class T> bool try_protect(T *&ptr, const std::atomic<T *> &src) noexcept
	{
		static_assert(detail::hp_base_of<T>::value,
			      "grace::hazard_pointer: T must be hazard-protectable");
		T *old = ptr;
		reset_protection(old);
		/* Acquire, as the standard says (a plain load on x86-64): the validating reload
		 * after barrier P of the publication (include/grace/hazptr.h). */
		ptr = src.load(std::memory_order_acquire);
		if (old != ptr) {
			reset_protection();
			return false;
		}
		return true;
	}

	template <class T> void reset_protection(const T *ptr) noexcept
	{
		static_assert(detail::hp_base_of<T>::value,
			      "grace::hazard_pointer: T must be hazard-protectable");
		grace__hazptr_publish(h_, const_cast<T *>(ptr), "hazard_pointer::reset_protection");
	}
	void reset_protection(std::nullptr_t = nullptr) noexcept { grace_hazptr_reset(h_); }

	void swap(hazard_pointer &o) noexcept { std::swap(h_, o.h_); }

	/** grace: the C hazard pointer it owns (NULL when empty), for the C API. */
	struct grace_hazptr *native_handle() const noexcept { return h_; }

      private:
	friend hazard_pointer make_hazard_pointer();
	explicit hazard_pointer(struct grace_hazptr *h) noexcept : h_(h) {}
	struct grace_hazptr *h_;
};

/** A hazard_pointer that owns an unassociated hazard pointer; std::bad_alloc when no memory is
 * left (without exceptions: reported, abort). */
inline hazard_pointer make_hazard_pointer()
{
	struct grace_hazptr *h = grace_hazptr_alloc();

	if (!h) {
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
		throw std::bad_alloc();
#else
		detail::cxx_misuse("grace::make_hazard_pointer", "out of memory");
#endif
	}
	return hazard_pointer(h);
}

/** grace's batch (issue 34): n non-empty hazard pointers, for a traversal that holds several
 * (hand over hand). Not P2530's; see docs/api.md for what of the batch proposals is offered. */
inline std::vector<hazard_pointer> make_hazard_pointer(std::size_t n)
{
	std::vector<hazard_pointer> v;

	v.reserve(n);
	for (std::size_t i = 0; i < n; i++)
		v.push_back(make_hazard_pointer());
	return v;
}

inline void swap(hazard_pointer &a, hazard_pointer &b) noexcept
{
	a.swap(b);
}

} // namespace grace

#endif // GRACE_GRACE_HPP
