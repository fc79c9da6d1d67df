/*
 * fuzz_topognn_conf: libFuzzer target for the parts of topognn.conf that
 * are parsed without Slurm: the job classifier (ClassRule= and Default*Class=
 * lines, place_classifier_load_mem, including its POSIX regexes), and the
 * values the plugin hands to topo/ (Telemetry* keys through
 * telemetry_config_set, Policy= through place_policy_parse). The plugin's own
 * line reader (slurm-plugin/topognn_conf.c) logs through Slurm and is not
 * built here; its key dispatch is mirrored below so the same values reach
 * the same functions. What parses is then used: a few fixed jobs and one
 * whose name and comment are the input's last line are classified.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "place.h"
#include "place_classify.h"
#include "telemetry.h"

/* The plugin's reading of one line: '#' comment, first blank-separated
 * token as Key=Value; values of Telemetry* and Policy go to topo/. */
static void plugin_line(char *s, telemetry_config *cfg)
{
	char *hash = strchr(s, '#'), *end, *eq;
	topo_error err;

	if (hash)
		*hash = '\0';
	while (isspace((unsigned char)*s))
		s++;
	for (end = s; *end && !isspace((unsigned char)*end); end++)
		;
	*end = '\0';
	if (!(eq = strchr(s, '=')) || !eq[1])
		return;
	*eq = '\0';
	if (!strcasecmp(s, "Policy"))
		(void)place_policy_parse(eq + 1);
	else if (!strncasecmp(s, "Telemetry", 9) && strcasecmp(s, "TelemetryIntervalSec"))
		(void)telemetry_config_set(cfg, s, eq + 1, &err);
}

static void classify_some(const place_classifier *k, const char *last_line)
{
	const place_job_info jobs[] = {
		{"train", "ops", "normal", "nccl-allreduce", NULL, 8, 64},
		{"debug", "infra", "debug", "hello", "comm=light", 2, 0},
		{NULL, NULL, NULL, NULL, NULL, 1, 0},
		{"gpu", "a", "high", last_line, last_line, 4, 8},
	};
	const char *why;

	for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++)
		(void)place_classify(k, &jobs[i], &why);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *copy, *line, *save = NULL, *last;
	place_classifier *k;
	telemetry_config cfg;
	topo_error err;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	last = strrchr(text, '\n') ? strrchr(text, '\n') + 1 : text;
	if ((k = place_classifier_load_mem(text, "topognn.conf", &err))) {
		classify_some(k, last);
		place_classifier_free(k);
	}
	telemetry_config_init(&cfg);
	copy = strdup(text);
	for (line = copy ? strtok_r(copy, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save))
		plugin_line(line, &cfg);
	free(copy);
	free(text);
	return 0;
}
