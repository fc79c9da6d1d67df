/*****************************************************************************\
 *  topognn_telem.c - live fabric telemetry (Prometheus) for topology/topognn.
 *
 *  With TelemetryURL= in topognn.conf, slurmctld runs one small thread per
 *  loaded context (topo/telemetry_feed.h) that fetches leaf up-link
 *  utilisation at most every TelemetryIntervalSec and swaps it in under a
 *  mutex. The scheduling path never waits on Prometheus: an evaluation only
 *  applies the latest snapshot to the engine's state when a new one (or an
 *  outage) arrived. Prometheus down is logged once, and its recovery once;
 *  scheduling continues on the static graph meanwhile. The thread stops
 *  when the context is freed (reconfigure, fini).
\*****************************************************************************/

#include "src/common/slurm_xlator.h"

#include "src/common/log.h"

#include "topognn.h"

static void _log(void *arg, telemetry_feed_log_level level, const char *msg)
{
	if (level == TELEMETRY_FEED_ERROR)
		error("telemetry: %s", msg);
	else
		info("telemetry: %s", msg);
}

extern void topognn_telem_start(topognn_ctx_t *ctx)
{
	topognn_conf_t *conf = &ctx->conf;
	topo_error err;
	char msg[TOPO_ERROR_TEXT_LEN + TOPO_ERROR_SOURCE_LEN + 32];

	if (!conf->telem.url[0] || ctx->telem)
		return;
	if (!(ctx->telem = telemetry_feed_new(&conf->telem, ctx->graph,
					  conf->telemetry_interval_s, _log, NULL,
					  &err))) {
		error("%s: telemetry off: %s", conf->path,
		      topo_error_format(&err, msg, sizeof(msg)));
		return;
	}
	if (telemetry_feed_start(ctx->telem)) {
		error("telemetry off: cannot start its thread: %m");
		telemetry_feed_free(ctx->telem);
		ctx->telem = NULL;
		return;
	}
	info("telemetry from %s every %.0f s", conf->telem.url,
	     conf->telemetry_interval_s);
}

extern void topognn_telem_apply(topognn_ctx_t *ctx)
{
	if (ctx->telem && telemetry_feed_apply(ctx->telem, ctx->state))
		debug("telemetry: leaf utilisation updated in the engine state");
}
