/*
 * telemetry_feed: live telemetry for a long-running scheduler without making
 * it wait. A background thread fetches a snapshot at most every interval
 * (telemetry.h: bounded timeouts and retries) and swaps it in under a
 * mutex; the scheduling path calls telemetry_feed_apply(), which only takes the
 * lock briefly and touches the engine's state only when a newer snapshot
 * (or a telemetry outage) arrived since the last call. A failure is
 * reported once through the log callback (telemetry_health), with the recovery,
 * and while telemetry is down the last overlay is cleared so stale numbers
 * do not steer placement. The feed never touches the state itself: only
 * the caller does, from the thread that owns it.
 *
 * Used by the Slurm plugin (slurm-plugin/topognn_telem.c); nothing here
 * knows Slurm. See docs/telemetry.md.
 */
#ifndef TELEMETRY_FEED_H
#define TELEMETRY_FEED_H

#include <stdint.h>

#include "place.h"
#include "telemetry.h"

/* Fetch one snapshot into out (initialised by the callee). 0, or -1 with
 * err filled. The default fetcher is telemetry_fetch_snapshot() on a client. */
typedef int (*telemetry_feed_fetch_fn)(void *arg, telemetry_snapshot *out, topo_error *err);

typedef enum telemetry_feed_log_level {
	TELEMETRY_FEED_INFO = 0,
	TELEMETRY_FEED_ERROR
} telemetry_feed_log_level;

/* One finished sentence, e.g. "http://prom:9090: Prometheus unreachable:
 * ...; scheduling continues without telemetry". Called from the feed's
 * thread (or from telemetry_feed_poll). */
typedef void (*telemetry_feed_log_fn)(void *arg, telemetry_feed_log_level level, const char *msg);

typedef struct telemetry_feed telemetry_feed;

/* A feed fetching from Prometheus with cfg for graph g (which must outlive
 * the feed). NULL with err filled when cfg is invalid or its credentials
 * file is refused. interval_s is the least time between fetch starts. */
telemetry_feed *telemetry_feed_new(const telemetry_config *cfg, const topo_graph *g, double interval_s,
			   telemetry_feed_log_fn log, void *log_arg, topo_error *err);
/* A feed with any fetcher (tests, other sources). */
telemetry_feed *telemetry_feed_new_custom(telemetry_feed_fetch_fn fetch, void *fetch_arg, double interval_s,
				  telemetry_feed_log_fn log, void *log_arg);
/* Stop and join the thread (waits for a fetch in progress, at most its
 * timeouts), free everything. */
void telemetry_feed_free(telemetry_feed *f);

/* Start the background thread. 0, or -1 when it cannot be created. */
int telemetry_feed_start(telemetry_feed *f);

/* One fetch now, in the calling thread (what the thread does each
 * interval). Returns 0 on success, -1 on failure (logged once). */
int telemetry_feed_poll(telemetry_feed *f);

/* Bring state up to date with the feed: if a newer snapshot arrived since
 * the last call, clear the leaves the previous one set and apply it; if
 * telemetry went down, clear them. Returns 1 when state changed, 0 when
 * nothing was new. Cheap when nothing is new (one mutex round trip). One
 * state per feed: the feed remembers what it applied. */
int telemetry_feed_apply(telemetry_feed *f, place_state *state);

/* Snapshots produced so far (successful fetches) and failed fetches. */
uint64_t telemetry_feed_snapshots(telemetry_feed *f);
uint64_t telemetry_feed_failures(telemetry_feed *f);

#endif
