/*****************************************************************************\
 *  topognn_conf.c - read topognn.conf, the topology/topognn configuration
 *	file that sits beside slurm.conf (see topognn.conf(5)).
 *
 *  Like slurm.conf: one "Key=Value" per line, keys case-insensitive, '#'
 *  starts a comment. A ClassRule line carries further Key=Value options.
 *  Every problem is reported as "file:line: reason" so an admin can fix it.
 *  Relative paths are taken relative to the directory of topognn.conf.
\*****************************************************************************/

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/slurm_xlator.h"

#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "topognn.h"

#define MAX_LINE 4096

extern void topognn_conf_init(topognn_conf_t *conf)
{
	memset(conf, 0, sizeof(*conf));
	conf->mode = TOPOGNN_MODE_ENFORCE;
	conf->policy = PLACE_POLICY_MODEL;
	conf->candidates = 32;
	conf->frag_weight = 1.0;
	conf->fatal_on_error = false;
}

extern void topognn_conf_free(topognn_conf_t *conf)
{
	if (!conf)
		return;
	xfree(conf->path);
	xfree(conf->graph_file);
	xfree(conf->model_file);
	xfree(conf->decision_log);
	for (int i = 0; i < conf->rule_cnt; i++) {
		xfree(conf->rules[i].name_glob);
		xfree(conf->rules[i].partition);
	}
	xfree(conf->rules);
	conf->rule_cnt = 0;
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
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || end == v || *end || n < 0 || n > max)
		return -1;
	*out = n;
	return 0;
}

static int _parse_double(const char *v, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (errno || end == v || *end || d < 0)
		return -1;
	*out = d;
	return 0;
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

/* ClassRule=<none|light|heavy> [Pattern=ring|alltoall|pipeline]
 *	[Name=<glob>] [Partition=<name>] [MinNodes=N] [MaxNodes=N] [Bytes=B] */
static int _parse_class_rule(topognn_conf_t *conf, const char *file,
			     int line, const char *cls, char *rest)
{
	topognn_class_rule_t rule = { 0 };
	char *save = NULL, *tok, *key, *val;
	int c;
	long n;

	if ((c = place_comm_class_parse(cls)) < 0) {
		error("%s:%d: unknown job class \"%s\" (want none, light or heavy)",
		      file, line, cls);
		return -1;
	}
	rule.cls = c;
	rule.pattern = PLACE_PATTERN_RING;
	rule.bytes_per_iter = (c == PLACE_COMM_HEAVY) ? 1e9 :
			      (c == PLACE_COMM_LIGHT) ? 1e6 : 0;

	for (tok = strtok_r(rest, " \t", &save); tok;
	     tok = strtok_r(NULL, " \t", &save)) {
		_split_kv(tok, &key, &val);
		if (!val || !val[0]) {
			error("%s:%d: ClassRule option \"%s\" needs a value",
			      file, line, key);
			goto fail;
		}
		if (!xstrcasecmp(key, "Name")) {
			xfree(rule.name_glob);
			rule.name_glob = xstrdup(val);
		} else if (!xstrcasecmp(key, "Partition")) {
			xfree(rule.partition);
			rule.partition = xstrdup(val);
		} else if (!xstrcasecmp(key, "MinNodes") &&
			   !_parse_uint(val, 1000000, &n)) {
			rule.min_nodes = n;
		} else if (!xstrcasecmp(key, "MaxNodes") &&
			   !_parse_uint(val, 1000000, &n)) {
			rule.max_nodes = n;
		} else if (!xstrcasecmp(key, "Bytes") &&
			   !_parse_double(val, &rule.bytes_per_iter)) {
			;
		} else if (!xstrcasecmp(key, "Pattern")) {
			if (!xstrcasecmp(val, "ring"))
				rule.pattern = PLACE_PATTERN_RING;
			else if (!xstrcasecmp(val, "alltoall"))
				rule.pattern = PLACE_PATTERN_ALLTOALL;
			else if (!xstrcasecmp(val, "pipeline"))
				rule.pattern = PLACE_PATTERN_PIPELINE;
			else {
				error("%s:%d: unknown Pattern \"%s\" (want ring, alltoall or pipeline)",
				      file, line, val);
				goto fail;
			}
		} else {
			error("%s:%d: bad ClassRule option \"%s=%s\"",
			      file, line, key, val);
			goto fail;
		}
	}
	xrecalloc(conf->rules, conf->rule_cnt + 1, sizeof(*conf->rules));
	conf->rules[conf->rule_cnt++] = rule;
	return 0;

fail:
	xfree(rule.name_glob);
	xfree(rule.partition);
	return -1;
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
	if (xstrcasecmp(key, "ClassRule")) {
		while (isspace((unsigned char) *rest))
			rest++;
		if (*rest) {
			error("%s:%d: unexpected text after %s=%s: \"%s\"",
			      file, line, key, val, rest);
			return -1;
		}
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
	} else if (!xstrcasecmp(key, "Candidates")) {
		if (_parse_uint(val, 4096, &n) || n < 1) {
			error("%s:%d: Candidates must be 1..4096, not \"%s\"",
			      file, line, val);
			return -1;
		}
		conf->candidates = n;
	} else if (!xstrcasecmp(key, "FragWeight")) {
		if (_parse_double(val, &conf->frag_weight)) {
			error("%s:%d: FragWeight must be a number >= 0, not \"%s\"",
			      file, line, val);
			return -1;
		}
	} else if (!xstrcasecmp(key, "FatalOnError")) {
		if (_parse_bool(val, &b)) {
			error("%s:%d: FatalOnError must be yes or no, not \"%s\"",
			      file, line, val);
			return -1;
		}
		conf->fatal_on_error = b;
	} else if (!xstrcasecmp(key, "ClassRule")) {
		return _parse_class_rule(conf, file, line, val, rest);
	} else {
		error("%s:%d: unknown key \"%s\"", file, line,
		      key);
		return -1;
	}
	return 0;
}

extern int topognn_conf_read(const char *path, topognn_conf_t *conf)
{
	char buf[MAX_LINE];
	FILE *fp;
	int line = 0, rc = SLURM_SUCCESS;

	topognn_conf_init(conf);
	conf->path = xstrdup(path);
	if (!(fp = fopen(path, "r"))) {
		error("%s: cannot open: %m", path);
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
	if (rc == SLURM_SUCCESS && !conf->graph_file &&
	    conf->mode != TOPOGNN_MODE_OFF) {
		error("%s: no GraphFile= line", path);
		rc = SLURM_ERROR;
	}
	if (rc == SLURM_SUCCESS && conf->model_file &&
	    conf->policy == PLACE_POLICY_MODEL)
		conf->policy = PLACE_POLICY_GNN;
	return rc;
}

static bool _rule_matches(const topognn_class_rule_t *r, job_record_t *job_ptr,
			  uint32_t nodes)
{
	if (r->min_nodes && nodes < r->min_nodes)
		return false;
	if (r->max_nodes && nodes > r->max_nodes)
		return false;
	if (r->name_glob &&
	    fnmatch(r->name_glob, job_ptr->name ? job_ptr->name : "", 0))
		return false;
	if (r->partition && xstrcmp(r->partition, job_ptr->partition))
		return false;
	return true;
}

extern void topognn_classify(const topognn_conf_t *conf, job_record_t *job_ptr,
			     uint32_t nodes, place_comm *comm)
{
	memset(comm, 0, sizeof(*comm));
	comm->compute_s_per_iter = 0.1;
	for (int i = 0; i < conf->rule_cnt; i++) {
		const topognn_class_rule_t *r = &conf->rules[i];

		if (!_rule_matches(r, job_ptr, nodes))
			continue;
		comm->cls = r->cls;
		comm->pattern = r->pattern;
		comm->bytes_per_iter = r->bytes_per_iter;
		return;
	}
	comm->pattern = PLACE_PATTERN_RING;
	if (nodes >= 2) {
		comm->cls = PLACE_COMM_HEAVY;
		comm->bytes_per_iter = 1e9;
	} else {
		comm->cls = PLACE_COMM_LIGHT;
		comm->bytes_per_iter = 0;
	}
}
