/*
 * fuzz_report_log: libFuzzer target for placement-report's readers of
 * untrusted text: the decision log (engine records, plugin lines, end
 * events) and slurmrestd's /jobs and /nodes replies. The first byte picks
 * the reader; nothing may crash, leak or read out of bounds.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "report_log.h"
#include "report_rest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	topo_error err;

	if (size == 0)
		return 0;
	if (data[0] % 3 == 0) {
		report_log log;

		if (report_log_load_mem((const char *)data + 1, size - 1, "fuzz", &log, &err) == 0) {
			int n, *run = report_log_running(&log, 1e300, &n);

			for (int i = 0; i < log.n; i++)
				(void)report_choice_same_hosts(&log.d[i].chosen, &log.d[i].baseline);
			free(run);
			report_log_free(&log);
		}
	} else {
		report_rest_snapshot s = {0};

		if (data[0] % 3 == 1)
			(void)report_rest_parse_jobs((const char *)data + 1, size - 1, "fuzz", &s, &err);
		else
			(void)report_rest_parse_nodes((const char *)data + 1, size - 1, "fuzz", &s, &err);
		report_rest_free(&s);
	}
	return 0;
}
