/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Dependency-aware replay (--order): which recorded I/Os must wait for which, inferred from the
 * recording, and the replayed state of each. The scheduler adds events in recorded issue order
 * once they are due, asks whether each may go, holds those that may not, and reports every
 * issue and completion. Dependencies only point backwards, so a window of recent events
 * suffices: memory is bounded by the window (RP_ORDER_WINDOW events).
 *
 * Modes are levels; each includes the rules of the ones before it:
 *   conflict: an I/O waits for every earlier, unfinished I/O on the same device whose sector
 *             range overlaps its own when either of the two writes (write, discard, write
 *             zeroes). Same-block accesses keep their recorded order.
 *   barrier:  + a flush, FUA or preflush I/O waits for every earlier write on its device that
 *             completed, in the recording, before it was issued; and any I/O waits for every
 *             earlier flush / FUA / preflush I/O on its device that completed, in the
 *             recording, before it was issued.
 *   causal:   + B depends on A, the same thread's (tid; else pid) I/O with the latest recorded
 *             completion at or before B's recorded issue (of two that completed together, the
 *             one issued later), when that gap (the think time) is at most think_ns. B's
 *             anchor is A's replayed completion + think time / speed: earlier than its deadline
 *             when A completed sooner than recorded, later when A took longer. The thread
 *             waited on A; on other storage it goes on when A completes there.
 *             A threaded I/O without a source (its thread's first, or after a think time
 *             longer than think_ns) has no replayed anchor: its thread's timeline shifts as a
 *             whole. Its anchor is its deadline + the offset of its thread's previous I/O in
 *             recorded order (that one's eligible time - its deadline; it waits until that
 *             one is released), never before the replay start; the thread's first I/O keeps
 *             its deadline. An I/O without tid and pid keeps its deadline as anchor.
 *             Thread depth: a threaded I/O also waits while more of its thread's earlier I/Os
 *             are unfinished (held or in flight) than the most that were in flight, in the
 *             recording, at one of its thread's issues up to its own (one without
 *             complete_ns counts as completing at its issue; those in the window): a thread
 *             that never had 4 others in flight never has 5 I/Os. Counted as a causal hold.
 *             Conflict, barrier and depth rules then only delay: an I/O goes at the later of
 *             its anchor and the completion of what they make it wait for.
 *             An event without complete_ns cannot be a source; one without tid and pid has no
 *             thread: neither source nor dependant.
 *   cross-thread sources (causal, xthread not RP_XTHREAD_OFF): B's source may also be an I/O
 *             A of another thread (which has a thread) on B's device, a barrier (flush, FUA,
 *             preflush) unless xthread is RP_XTHREAD_ANY, when B's thread was visibly
 *             waiting for it: every earlier I/O of B's thread completed, in the recording, at
 *             or before A's issue (one without complete_ns counts as completing at its issue),
 *             and B's thread has an earlier I/O. A too must have completed within think_ns
 *             before B's issue. B's source is then the latest completion of all candidates,
 *             its own thread's and these (a cross-thread one always completed later than any
 *             of its thread's). That is an fdatasync waiting on a journal thread's commit
 *             (jbd2: journal writes, then a preflush/FUA commit block), seen from the block
 *             layer: the application thread's next I/O follows the commit's completion.
 *   wake sources (causal, xthread RP_XTHREAD_WAKE; a trace recorded with --waits): the
 *             recording says when B's thread last woke from a sleep (wake_ns, slept_ns,
 *             BTAPE_HAS_WAKE) if that was after its previous I/O. B's source is then the I/O
 *             A (any thread, or none; any device) with the latest recorded completion in
 *             [wake - slept, wake]: the completion the sleeping thread was woken for,
 *             directly or through another thread (an fsync woken by jbd2 after its commit
 *             block completed; on a loaded host that wake may come milliseconds later). No think
 *             window: B goes at A's replayed completion + (B's submission - A's completion) /
 *             speed, whatever the thread did after waking; B's submission is its insert_ns
 *             when that came after the wake (its queueing behind a flush is the device's
 *             time, which the target replays for itself), else its issue. A B without a wake (its thread
 *             did not sleep since its previous I/O: it was running or runnable), or whose
 *             sleep saw no completion near its end (a timer, a lock, the network), has no
 *             source: its thread's timeline offset, as above. The same-thread think-window
 *             rule does not apply: the wakes say what the thread waited for.
 *
 * A rule apart from the modes, with any of them (and the only one under none):
 *   flushes apart (--flushes-apart): the block layer keeps one flush in flight per queue and
 *             folds every flush pending behind it into the next, so a flush sent while the one
 *             before is out may never reach the device of its own. A flush (BTAPE_OP_FLUSH)
 *             waits for every earlier, unfinished flush on its device when the recording had
 *             it apart from the flush before it (that one completed at or before its issue,
 *             or its completion is unknown), or when that flush was held by this rule when
 *             this one was added (a flush behind a waiting one waits too). Flushes that
 *             overlapped in the recording still overlap. Under none only flushes need be
 *             added; the scheduler uses it in every timing (deadline 0 outside original),
 *             and with --scale a device is a copy's lane.
 *
 * Under causal an I/O may go before its deadline, so the scheduler must add events ahead of
 * their deadlines: rp_order__horizon() says how far. An I/O not yet added cannot become
 * eligible earlier than its deadline - horizon (a source is always added before its dependant;
 * a dependant gains on its deadline at most its source's recorded latency over the source's
 * own offset; a sourceless one takes a released offset). Added ahead, events are held and count
 * in the window: a thread runs at most RP_ORDER_WINDOW events ahead of the oldest unfinished.
 */
#ifndef RP_ORDER_H
#define RP_ORDER_H

#include <stdbool.h>
#include <stdint.h>

struct btape_event;

enum rp_order_mode { RP_ORDER_NONE, RP_ORDER_CONFLICT, RP_ORDER_BARRIER, RP_ORDER_CAUSAL };
/* What held an I/O back (the last rule that did). */
/*
 * RP_DEP_XTHREAD: a causal hold whose source is another thread's I/O. RP_DEP_FLUSHES (flushes
 * apart) is counted by the scheduler as flush_waited, not among the RP_DEP__COUNT others.
 */
enum rp_dep {
	RP_DEP_CONFLICT,
	RP_DEP_BARRIER,
	RP_DEP_CAUSAL,
	RP_DEP_XTHREAD,
	RP_DEP__COUNT,
	RP_DEP_FLUSHES = RP_DEP__COUNT
};
/* Cross-thread sources (causal): none, barriers only, any I/O; the recorded wakes instead. */
enum rp_xthread { RP_XTHREAD_OFF, RP_XTHREAD_BARRIER, RP_XTHREAD_ANY, RP_XTHREAD_WAKE };

#define RP_ORDER_WINDOW 4096	      /* events tracked between the oldest unfinished and newest */
#define RP_THINK_WINDOW_NS 1000000ull /* default causal think-time window: 1 ms */
#define RP_XTHREAD_DEFAULT RP_XTHREAD_OFF /* --cross-thread default without wakes */
#define RP_XTHREAD_DEFAULT_WAKES RP_XTHREAD_WAKE /* ... of a trace recorded with --waits */

struct rp_order;

/* Mode names: "none", "conflict", "barrier", "causal"; the name's mode or -1. */
int rp_order_mode_parse(const char *name);
const char *rp_order_mode_name(enum rp_order_mode m);
const char *rp_dep_name(enum rp_dep d);
/* Cross-thread rule names: "off", "barrier", "any", "wake"; the name's value or -1. */
int rp_xthread_parse(const char *name);
const char *rp_xthread_name(enum rp_xthread x);
/*
 * The cross-thread rule a trace gets by default, from its capture settings (btape_meta):
 * RP_XTHREAD_DEFAULT_WAKES when it was recorded with --waits (before the command's " -- "),
 * else RP_XTHREAD_DEFAULT.
 */
enum rp_xthread rp_xthread_default(const char *capture);

struct rp_order_cfg {
	enum rp_order_mode mode;
	uint64_t think_ns;	 /* causal: the think-time window */
	enum rp_xthread xthread; /* causal: cross-thread sources */
	bool flushes_apart;	 /* the flushes-apart rule */
	unsigned int window;	 /* events tracked (a power of two is used, at least 2) */
	double speed;		 /* --speed */
	uint64_t start_ns;	 /* the replay's start, before which no I/O goes (causal) */
};

/* Returns 0 or -ENOMEM/-EINVAL. */
int rp_order__new(struct rp_order **op, const struct rp_order_cfg *cfg);
void rp_order__free(struct rp_order *o);

/*
 * Adds the next due event (in recorded issue order; rec_off is added to its recorded times, the
 * loop offset) with its deadline. Returns its id (>= 0), or -EBUSY when the window is full: the
 * event window places back is still unfinished; add it again after a completion.
 */
int64_t rp_order__add(struct rp_order *o, const struct btape_event *ev, uint64_t rec_off,
		      uint64_t deadline);
/*
 * May id go at now? 1: yes, *eligible is when it could have (its deadline, or when what held it
 * finished). 0: it must wait; *wake is when it may go if nothing else holds it (0: only a
 * completion can release it), *kind what holds it.
 */
int rp_order__check(struct rp_order *o, uint64_t id, uint64_t now, uint64_t *eligible,
		    uint64_t *wake, int *kind);
/* Holds id (after a check said 0, with its wake): rp_order__next_ready() releases it. */
void rp_order__hold(struct rp_order *o, uint64_t id, uint64_t wake);
unsigned int rp_order__held(const struct rp_order *o);
/*
 * Walks the held I/Os from *pos (start at 0) in recorded order; returns 1 with the first that
 * may go now (taken off the held list; *pos stays where it was), its event, deadline, eligible
 * time and the last rule that held it; 0 at the end, *wake the earliest timed release (or left
 * as it was).
 */
int rp_order__next_ready(struct rp_order *o, uint64_t now, unsigned int *pos, uint64_t *id,
			 const struct btape_event **ev, uint64_t *deadline, uint64_t *eligible,
			 int *kind, uint64_t *wake);
/*
 * How long before its deadline an event not yet added may become eligible: add the next event
 * once now >= its deadline - horizon. 0 but in causal mode; it only grows.
 */
uint64_t rp_order__horizon(const struct rp_order *o);
/* id was completed at t (replayed). */
void rp_order__done(struct rp_order *o, uint64_t id, uint64_t t);
/* Causal: the threads it keeps (at most 2^18: the I/Os of threads past that have no link). */
unsigned int rp_order__threads(const struct rp_order *o);

#endif
