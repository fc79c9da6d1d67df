/*****************************************************************************\
 *  topognn_conf.c - read topognn.conf, the topology/topognn configuration
 *	file that sits beside slurm.conf (see topognn.conf(5)).
 *
 *  Like slurm.conf: one "Key=Value" per line, keys case-insensitive, '#'
 *  starts a comment. ClassRule= and Default*Class= lines belong to the
 *  engine's job classifier (topo/place_classify.h, docs/job-classes.md),
 *  which reads the same file after this reader: one parser for one syntax.
 *  Every problem is reported as "file:line: reason" so an admin can fix it.
 *  Relative paths are taken relative to the directory of topognn.conf.
\*****************************************************************************/

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/slurm_xlator.h"

#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "place_model_file.h"
#include "topognn.h"
#include "topo_io.h"
#include "topo_num.h"

#define MAX_LINE 4096
#define TOPOGNN_CONF_MAX_BYTES (1 << 20) /* a config file, not a data set */

extern void topognn_conf_init(topognn_conf_t *conf)
{
	memset(conf, 0, sizeof(*conf));
	conf->mode = TOPOGNN_MODE_ENFORCE;
	conf->policy = PLACE_POLICY_MODEL;
	place_config_init(&conf->place);
	conf->place.locality_wait_frac = PLACE_LOCALITY_WAIT_FRAC_DEFAULT;
	conf->place.locality_wait_cap_s = PLACE_LOCALITY_WAIT_CAP_S_DEFAULT;
	conf->fatal_on_error = false;
	conf->runtime_prediction = false;
	conf->heavy_bytes = 1e9;
	conf->light_bytes = 1e6;
	telemetry_config_init(&conf->telem);
	conf->telemetry_interval_s = 30;
}

extern void topognn_conf_free(topognn_conf_t *conf)
{
	if (!conf)
		return;
	xfree(conf->path);
	xfree(conf->graph_file);
	xfree(conf->model_file);
	xfree(conf->decision_log);
	place_classifier_free(conf->classifier);
	conf->classifier = NULL;
}

extern const char *topognn_mode_name(topognn_mode_t mode)
{
	switch (mode) {
	case TOPOGNN_MODE_OFF:
		return "off";
	case TOPOGNN_MODE_SHADOW:
		return "shadow";
	case TOPOGNN_MODE_ENFORCE:
		return "enforce";
	}
	return "?";
}

/* A path relative to the directory of the conf file. */
static char *_resolve_path(const char *conf_path, const char *value)
{
	const char *slash;

	if (value[0] == '/' || !(slash = strrchr(conf_path, '/')))
		return xstrdup(value);
	return xstrdup_printf("%.*s/%s", (int) (slash - conf_path), conf_path,
			      value);
}

static int _parse_bool(const char *v, bool *out)
{
	if (!xstrcasecmp(v, "yes") || !xstrcasecmp(v, "true") ||
	    !xstrcmp(v, "1")) {
		*out = true;
		return 0;
	}
	if (!xstrcasecmp(v, "no") || !xstrcasecmp(v, "false") ||
	    !xstrcmp(v, "0")) {
		*out = false;
		return 0;
	}
	return -1;
}

static int _parse_uint(const char *v, long max, long *out)
{
	return topo_parse_long(v, 0, max, out);
}

static int _parse_double(const char *v, double *out)
{
	return topo_parse_double(v, 0, HUGE_VAL, out);
}

/* Split "Key=Value" in place; NULL value when there is no '='. */
static void _split_kv(char *tok, char **key, char **val)
{
	char *eq = strchr(tok, '=');

	*key = tok;
	*val = NULL;
	if (eq) {
		*eq = '\0';
		*val = eq + 1;
	}
}

/* Keys of the job classifier (docs/job-classes.md). */
static bool _is_class_key(const char *key)
{
	return !xstrcasecmp(key, "ClassRule") ||
	       !xstrcasecmp(key, "DefaultMultiNodeGpuClass") ||
	       !xstrcasecmp(key, "DefaultMultiNodeClass") ||
	       !xstrcasecmp(key, "DefaultClass");
}

/* One non-empty line. Returns 0 or -1 (logged). */
static int _parse_line(topognn_conf_t *conf, const char *file, int line,
		       char *text)
{
	char *rest = text, *key, *val, *tok;
	long n;
	bool b;
	int p;

	while (*rest && !isspace((unsigned char) *rest))
		rest++;
	if (*rest)
		*rest++ = '\0';
	tok = text;
	_split_kv(tok, &key, &val);
	if (!val || !val[0]) {
		error("%s:%d: \"%s\" is not Key=Value",
		      file, line, key);
		return -1;
	}
	if (_is_class_key(key))
		return 0;	/* place_classifier_load() parses these */
	while (isspace((unsigned char) *rest))
		rest++;
	if (*rest) {
		error("%s:%d: unexpected text after %s=%s: \"%s\"",
		      file, line, key, val, rest);
		return -1;
	}

	if (!xstrcasecmp(key, "GraphFile")) {
		xfree(conf->graph_file);
		conf->graph_file = _resolve_path(file, val);
	} else if (!xstrcasecmp(key, "ModelFile")) {
		xfree(conf->model_file);
		conf->model_file = _resolve_path(file, val);
	} else if (!xstrcasecmp(key, "DecisionLog")) {
		xfree(conf->decision_log);
		conf->decision_log = _resolve_path(file, val);
	} else if (!xstrcasecmp(key, "Mode")) {
		if (!xstrcasecmp(val, "enforce"))
			conf->mode = TOPOGNN_MODE_ENFORCE;
		else if (!xstrcasecmp(val, "shadow"))
			conf->mode = TOPOGNN_MODE_SHADOW;
		else if (!xstrcasecmp(val, "off"))
			conf->mode = TOPOGNN_MODE_OFF;
		else {
			error("%s:%d: Mode must be enforce, shadow or off, not \"%s\"",
			      file, line, val);
			return -1;
		}
	} else if (!xstrcasecmp(key, "Policy")) {
		if ((p = place_policy_parse(val)) < 0) {
			error("%s:%d: unknown Policy \"%s\"",
			      file, line, val);
			return -1;
		}
		conf->policy = p;
		conf->policy_set = true;
	} else if (!xstrcasecmp(key, "Candidates")) {
		if (_parse_uint(val, 4096, &n) || n < 1) {
			error("%s:%d: Candidates must be 1..4096, not \"%s\"",
			      file, line, val);
			return -1;
		}
		conf->place.candidates = n;
	} else if (!xstrcasecmp(key, "FragWeight")) {
		if (_parse_double(val, &conf->place.frag_weight)) {
			error("%s:%d: FragWeight must be a number >= 0, not \"%s\"",
			      file, line, val);
			return -1;
		}
	} else if (!xstrcasecmp(key, "LocalityWait")) {
		char why[256];

		if (place_locality_wait_parse(val, &conf->place.locality_wait_frac,
					      &conf->place.locality_wait_cap_s, why,
					      sizeof(why))) {
			error("%s:%d: %s", file, line, why);
			return -1;
		}
	} else if (!xstrcasecmp(key, "RuntimePrediction")) {
		if (_parse_bool(val, &b)) {
			error("%s:%d: RuntimePrediction must be yes or no, not \"%s\"",
			      file, line, val);
			return -1;
		}
		conf->runtime_prediction = b;
	} else if (!xstrcasecmp(key, "FatalOnError")) {
		if (_parse_bool(val, &b)) {
			error("%s:%d: FatalOnError must be yes or no, not \"%s\"",
			      file, line, val);
			return -1;
		}
		conf->fatal_on_error = b;
	} else if (!xstrcasecmp(key, "TelemetryIntervalSec")) {
		if (_parse_double(val, &conf->telemetry_interval_s) ||
		    conf->telemetry_interval_s < 1 ||
		    conf->telemetry_interval_s > 86400) {
			error("%s:%d: TelemetryIntervalSec must be 1..86400, not \"%s\"",
			      file, line, val);
			return -1;
		}
	} else if (!xstrncasecmp(key, "Telemetry", 9)) {
		/* The client parses its own keys (telemetry_config_set). */
		topo_error err;
		char *v = xstrcasecmp(key, "TelemetryCredentialsFile") ?
			  xstrdup(val) : _resolve_path(file, val);
		int bad = telemetry_config_set(&conf->telem, key, v, &err);

		xfree(v);
		if (bad) {
			error("%s:%d: %s", file, line, err.text);
			return -1;
		}
	} else if (!xstrcasecmp(key, "HeavyBytesPerIter")) {
		if (_parse_double(val, &conf->heavy_bytes)) {
			error("%s:%d: HeavyBytesPerIter must be a number >= 0, not \"%s\"",
			      file, line, val);
			return -1;
		}
	} else if (!xstrcasecmp(key, "LightBytesPerIter")) {
		if (_parse_double(val, &conf->light_bytes)) {
			error("%s:%d: LightBytesPerIter must be a number >= 0, not \"%s\"",
			      file, line, val);
			return -1;
		}
	} else {
		error("%s:%d: unknown key \"%s\"", file, line,
		      key);
		return -1;
	}
	return 0;
}

/* Policy=gnn (or a baseline that needs it) without ModelFile=: the shipped
 * model, or a startup error naming the key. */
static int _default_model(topognn_conf_t *conf)
{
	char model[4096];

	if (conf->model_file || conf->policy != PLACE_POLICY_GNN ||
	    conf->mode == TOPOGNN_MODE_OFF)
		return SLURM_SUCCESS;
	if (place_default_model_path(model, sizeof(model))) {
		error("%s: Policy=gnn needs a model: no ModelFile= line, and the shipped model %s cannot be read: %m",
		      conf->path, model);
		return SLURM_ERROR;
	}
	conf->model_file = xstrdup(model);
	conf->model_default = true;
	return SLURM_SUCCESS;
}

extern int topognn_conf_read(const char *path, topognn_conf_t *conf)
{
	char buf[MAX_LINE];
	topo_error err;
	FILE *fp;
	int line = 0, rc = SLURM_SUCCESS;

	topognn_conf_init(conf);
	conf->path = xstrdup(path);
	if (!(fp = topo_fopen_input(path, 0, TOPOGNN_CONF_MAX_BYTES, &err))) {
		error("%s: %s", path, err.text);
		return SLURM_ERROR;
	}
	while (fgets(buf, sizeof(buf), fp)) {
		char *s = buf, *hash, *end;

		line++;
		if (!strchr(buf, '\n') && !feof(fp)) {
			error("%s:%d: line longer than %d characters",
			      path, line, MAX_LINE - 1);
			rc = SLURM_ERROR;
			break;
		}
		if ((hash = strchr(s, '#')))
			*hash = '\0';
		while (isspace((unsigned char) *s))
			s++;
		end = s + strlen(s);
		while (end > s && isspace((unsigned char) end[-1]))
			*--end = '\0';
		if (!*s)
			continue;
		if (_parse_line(conf, path, line, s))
			rc = SLURM_ERROR;
	}
	fclose(fp);
	if (rc == SLURM_SUCCESS) {
		topo_error err;
		char msg[TOPO_ERROR_TEXT_LEN + 512];

		if (!(conf->classifier = place_classifier_load(path, &err))) {
			error("%s", topo_error_format(&err, msg, sizeof(msg)));
			rc = SLURM_ERROR;
		}
	}
	if (rc == SLURM_SUCCESS && !conf->graph_file &&
	    conf->mode != TOPOGNN_MODE_OFF) {
		error("%s: no GraphFile= line", path);
		rc = SLURM_ERROR;
	}
	if (rc == SLURM_SUCCESS && conf->model_file && !conf->policy_set)
		conf->policy = PLACE_POLICY_GNN;
	if (rc == SLURM_SUCCESS)
		rc = _default_model(conf);
	return rc;
}
