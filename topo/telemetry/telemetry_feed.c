/*
 * telemetry_feed: background telemetry fetcher with a mutex-swapped
 * snapshot (see telemetry_feed.h).
 *
 * The thread owns nothing the scheduler reads except `pending`, the newest
 * snapshot, which it hands over under the mutex; telemetry_feed_apply() moves
 * it out (no copy) and keeps it as `applied`, so it can clear exactly the
 * leaves it set when the next snapshot or an outage arrives. `seq` counts
 * hand-overs (a snapshot or an outage); apply compares it with the last
 * one it saw.
 */
#include "telemetry_feed.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "telemetry_place.h"

struct telemetry_feed {
	telemetry_feed_fetch_fn fetch;
	void *fetch_arg;
	telemetry_feed_log_fn log;
	void *log_arg;
	double interval_s;

	/* default fetcher */
	telemetry_client *client;
	const topo_graph *graph;

	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	int running;
	int stop;               /* under lock */
	uint64_t seq;           /* under lock: hand-overs */
	int have_pending;       /* under lock */
	int down;               /* under lock: the last hand-over was an outage */
	telemetry_snapshot pending; /* under lock */
	uint64_t snapshots, failures; /* under lock */

	telemetry_health health;    /* fetching thread only */

	/* caller of telemetry_feed_apply only */
	uint64_t applied_seq;
	int have_applied;
	telemetry_snapshot applied;
};

static int fetch_prometheus(void *arg, telemetry_snapshot *out, topo_error *err)
{
	telemetry_feed *f = arg;

	return telemetry_fetch_snapshot(f->client, f->graph, out, err);
}

telemetry_feed *telemetry_feed_new_custom(telemetry_feed_fetch_fn fetch, void *fetch_arg, double interval_s,
				  telemetry_feed_log_fn log, void *log_arg)
{
	telemetry_feed *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->fetch = fetch;
	f->fetch_arg = fetch_arg;
	f->log = log;
	f->log_arg = log_arg;
	f->interval_s = interval_s > 0 ? interval_s : 0;
	if (pthread_mutex_init(&f->lock, NULL)) {
		free(f);
		return NULL;
	}
	if (pthread_cond_init(&f->wake, NULL)) {
		pthread_mutex_destroy(&f->lock);
		free(f);
		return NULL;
	}
	return f;
}

telemetry_feed *telemetry_feed_new(const telemetry_config *cfg, const topo_graph *g, double interval_s,
			   telemetry_feed_log_fn log, void *log_arg, topo_error *err)
{
	telemetry_client *c = telemetry_client_new(cfg, err);
	telemetry_feed *f;

	if (!c)
		return NULL;
	if (!(f = telemetry_feed_new_custom(fetch_prometheus, NULL, interval_s, log, log_arg))) {
		telemetry_client_free(c);
		topo_error_set(err, cfg->url, 0, "out of memory");
		return NULL;
	}
	f->fetch_arg = f;
	f->client = c;
	f->graph = g;
	return f;
}

static void say(telemetry_feed *f, telemetry_feed_log_level level, const char *msg)
{
	if (f->log)
		f->log(f->log_arg, level, msg);
}

int telemetry_feed_poll(telemetry_feed *f)
{
	telemetry_snapshot snap;
	topo_error err;
	char buf[TOPO_ERROR_TEXT_LEN + TOPO_ERROR_SOURCE_LEN + 32];
	int ok;

	memset(&snap, 0, sizeof(snap));
	topo_error_clear(&err);
	ok = f->fetch(f->fetch_arg, &snap, &err) == 0;

	pthread_mutex_lock(&f->lock);
	if (ok) {
		if (f->have_pending)
			telemetry_snapshot_free(&f->pending);
		f->pending = snap;
		f->have_pending = 1;
		f->down = 0;
		f->snapshots++;
		f->seq++;
	} else {
		telemetry_snapshot_free(&snap);
		if (f->have_pending)
			telemetry_snapshot_free(&f->pending);
		f->have_pending = 0;
		f->failures++;
		if (!f->down) {	/* an outage is one hand-over, not one per fetch */
			f->down = 1;
			f->seq++;
		}
	}
	pthread_mutex_unlock(&f->lock);

	switch (telemetry_health_update(&f->health, ok)) {
	case TELEMETRY_LOG_DOWN:
		/* the client's errors already say scheduling continues */
		say(f, TELEMETRY_FEED_ERROR, topo_error_format(&err, buf, sizeof(buf)));
		break;
	case TELEMETRY_LOG_RECOVERED:
		say(f, TELEMETRY_FEED_INFO, "telemetry is back: placement sees measured link utilisation again");
		break;
	case TELEMETRY_LOG_NONE:
		break;
	}
	return ok ? 0 : -1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *feed_thread(void *arg)
{
	telemetry_feed *f = arg;

	for (;;) {
		double next = now_s() + f->interval_s;
		struct timespec until;
		int stop;

		pthread_mutex_lock(&f->lock);
		stop = f->stop;
		pthread_mutex_unlock(&f->lock);
		if (stop)
			break;
		(void)telemetry_feed_poll(f);

		/* Sleep until the next fetch is due, or until told to stop. The
		 * condition uses CLOCK_REALTIME; the deadline comes from it. */
		clock_gettime(CLOCK_REALTIME, &until);
		{
			double wait = next - now_s();
			double t;

			if (wait < 0)
				wait = 0;
			t = (double)until.tv_sec + until.tv_nsec / 1e9 + wait;
			until.tv_sec = (time_t)t;
			until.tv_nsec = (long)((t - (double)until.tv_sec) * 1e9);
		}
		pthread_mutex_lock(&f->lock);
		while (!f->stop) {
			if (pthread_cond_timedwait(&f->wake, &f->lock, &until) == ETIMEDOUT)
				break;
		}
		pthread_mutex_unlock(&f->lock);
	}
	return NULL;
}

int telemetry_feed_start(telemetry_feed *f)
{
	if (f->running)
		return 0;
	f->stop = 0;
	if (pthread_create(&f->thread, NULL, feed_thread, f))
		return -1;
	f->running = 1;
	return 0;
}

void telemetry_feed_free(telemetry_feed *f)
{
	if (!f)
		return;
	if (f->running) {
		pthread_mutex_lock(&f->lock);
		f->stop = 1;
		pthread_cond_broadcast(&f->wake);
		pthread_mutex_unlock(&f->lock);
		pthread_join(f->thread, NULL);
	}
	if (f->have_pending)
		telemetry_snapshot_free(&f->pending);
	if (f->have_applied)
		telemetry_snapshot_free(&f->applied);
	telemetry_client_free(f->client);
	pthread_cond_destroy(&f->wake);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

int telemetry_feed_apply(telemetry_feed *f, place_state *state)
{
	telemetry_snapshot next;
	int have_next, changed = 0;

	pthread_mutex_lock(&f->lock);
	if (f->seq == f->applied_seq) {
		pthread_mutex_unlock(&f->lock);
		return 0;
	}
	f->applied_seq = f->seq;
	have_next = f->have_pending;
	if (have_next) {
		next = f->pending;	/* moved out: the thread makes a new one */
		memset(&f->pending, 0, sizeof(f->pending));
		f->have_pending = 0;
	}
	pthread_mutex_unlock(&f->lock);

	if (f->have_applied) {
		changed |= telemetry_clear_from_state(&f->applied, state) > 0;
		telemetry_snapshot_free(&f->applied);
		f->have_applied = 0;
	}
	if (have_next) {
		changed |= telemetry_apply_to_state(&next, state, NULL) > 0;
		f->applied = next;
		f->have_applied = 1;
	}
	return changed;
}

/* One of f's counters, read under its lock (the thread writes them). */
static uint64_t locked_count(telemetry_feed *f, const uint64_t *counter)
{
	uint64_t n;

	pthread_mutex_lock(&f->lock);
	n = *counter;
	pthread_mutex_unlock(&f->lock);
	return n;
}

uint64_t telemetry_feed_snapshots(telemetry_feed *f)
{
	return locked_count(f, &f->snapshots);
}

uint64_t telemetry_feed_failures(telemetry_feed *f)
{
	return locked_count(f, &f->failures);
}
