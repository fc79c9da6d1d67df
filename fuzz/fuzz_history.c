/*
 * fuzz_history: libFuzzer target of `placement-report history`: the
 * decision-record reader (report_log_load_mem) and the statistics computed
 * over what it read (report_stats_compute), over all time and over a window.
 * Nothing may crash, leak or trip a sanitizer.
 */
#include <stddef.h>
#include <stdint.h>

#include "report_history.h"
#include "report_log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	report_log log;
	report_stats st;
	topo_error err;

	if (report_log_load_mem((const char *)data, size, "fuzz", &log, &err) != 0)
		return 0;
	(void)report_stats_compute(&log, -1e300, 1e300, &st);
	(void)report_stats_compute(&log, 1700000000.0, 1700003600.0, &st);
	for (int i = 0; i < log.n; i++)
		(void)report_predicted_slowdown(&log.d[i]);
	report_log_free(&log);
	return 0;
}
