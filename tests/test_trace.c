/* Unit tests for the trace parsers (SWF, Alibaba GPU CSV), format detection,
 * gzip input, the processor->host mapping, and the astra-sim comm profiles:
 * exact job counts and fields from the real fixtures, and malformed lines
 * reported with their line number. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_comm_profile.h"
#include "trace.h"
#include "test_tmp.h"

#define KTH FIXTURES_DIR "/traces/kth-sp2-head100.swf"
#define ALI FIXTURES_DIR "/traces/alibaba-pods-head50.csv"
#define FIT_DROPPED 1

/* Write text to a temporary file; returns its path (static buffer). */
static const char *tmpfile_with(const char *text)
{
	static char path[512];
	int fd;

	fd = test_mkstemp(path, sizeof(path), "test_trace_XXXXXX");
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

/* Load text, expect failure, return the formatted error. */
static const char *load_error(const char *text)
{
	static char msg[1024];
	topo_trace t;
	topo_error err;
	const char *p = tmpfile_with(text);

	trace_init(&t);
	assert_int_equal(trace_load(&t, p, &err), -1);
	assert_int_equal(t.njobs, 0);
	unlink(p);
	snprintf(msg, sizeof(msg), "line %d: %s", err.line, err.text);
	return msg;
}

static void test_swf_kth(void **state)
{
	topo_trace t;
	topo_error err;

	trace_init(&t);
	assert_int_equal(trace_load(&t, KTH, &err), 0);
	assert_int_equal(t.njobs, 100);
	assert_int_equal(t.skipped, 0);
	assert_int_equal(t.jobs[0].id, 15);
	assert_true(t.jobs[0].submit == 0.0); /* 599850 shifted to 0 */
	assert_true(t.jobs[0].runtime == 3477.0);
	assert_true(t.jobs[0].requested == 53940.0);
	assert_int_equal(t.jobs[0].procs, 4);
	assert_int_equal(t.jobs[0].user, 12);
	assert_int_equal(t.jobs[0].line, 25);
	assert_string_equal(t.jobs[0].name, "job15");
	assert_int_equal(t.jobs[99].id, 114);
	assert_true(t.jobs[99].submit == 673536.0 - 599850.0);
	assert_int_equal(t.jobs[99].procs, 5);
	trace_free(&t);
}

static void test_swf_gzip(void **state)
{
	topo_trace t;
	topo_error err;
	char cmd[2048], gz[512];
	int fd = test_mkstemp(gz, sizeof(gz), "test_trace_kth_XXXXXX");

	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "gzip -c '%s' > '%s'", KTH, gz);
	assert_int_equal(system(cmd), 0);
	trace_init(&t);
	assert_int_equal(trace_load(&t, gz, &err), 0);
	assert_int_equal(t.njobs, 100);
	assert_int_equal(t.jobs[99].id, 114);
	trace_free(&t);
	/* a corrupt gzip stream is an error, not a short trace */
	snprintf(cmd, sizeof(cmd), "head -c 200 '%s' > '%s.cut'", gz, gz);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s.cut", gz);
	assert_int_equal(trace_load(&t, cmd, &err), -1);
	unlink(cmd);
	unlink(gz);
}

static void test_swf_malformed(void **state)
{
	const char *hdr = "; Version: 2.2\n;\n";
	char text[512];

	snprintf(text, sizeof(text), "%s1 0 0 10 4 -1 -1 4 60 -1 1 1 1 -1 -1 -1 -1 -1\n"
		 "2 5 0 10 4 -1 -1 4 60 -1 1 1 1\n", hdr);
	assert_string_equal(load_error(text),
			    "line 4: has 13 fields; a Standard Workload Format job line has exactly 18");
	snprintf(text, sizeof(text), "%s\n1 0 0 1O 4 -1 -1 4 60 -1 1 1 1 -1 -1 -1 -1 -1\n", hdr);
	assert_string_equal(load_error(text),
			    "line 4: field 4 (run time) is \"1O\", not a number");
	snprintf(text, sizeof(text),
		 "1 0 0 10 4 -1 -1 4 60 -1 1 1 1 -1 -1 -1 -1 -1 7\n");
	assert_string_equal(load_error(text),
			    "line 1: has more than 18 fields; a Standard Workload Format job line has exactly 18");
	assert_string_equal(load_error("1 -5 0 10 4 -1 -1 4 60 -1 1 1 1 -1 -1 -1 -1 -1\n"),
			    "line 1: field 2 (submit time) is negative");
	/* found by fuzz_trace: a huge count must not overflow an int */
	assert_string_equal(load_error("1 0 0 10 1e66 -1 -1 4 60 -1 1 1 1 -1 -1 -1 -1 -1\n"),
			    "line 1: field 5 (allocated processors) is 1e+66, out of range");
	assert_string_equal(load_error("hello\n"),
			    "line 1: is neither a Standard Workload Format log nor the Alibaba GPU CSV");
	assert_string_equal(load_error(""),
			    "line 1: is neither a Standard Workload Format log nor the Alibaba GPU CSV");
}

static void test_swf_skips_and_fallbacks(void **state)
{
	topo_trace t;
	topo_error err;
	const char *p = tmpfile_with("; c\n"
				     "1 100 0 10 -1 -1 -1 3 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"
				     "2 50 0 0 4 -1 -1 4 60 -1 5 1 1 -1 -1 -1 -1 -1\n"
				     "3 70 0 20 2 -1 -1 2 60 -1 1 1 1 -1 -1 -1 -1 -1\n");

	trace_init(&t);
	assert_int_equal(trace_load(&t, p, &err), 0);
	unlink(p);
	assert_int_equal(t.njobs, 2);
	assert_int_equal(t.skipped, 1); /* job 2 never ran */
	assert_int_equal(t.jobs[0].id, 3); /* sorted by submit */
	assert_true(t.jobs[0].submit == 0.0);
	assert_true(t.jobs[1].submit == 30.0);
	assert_int_equal(t.jobs[1].procs, 3);       /* requested, allocated unknown */
	assert_true(t.jobs[1].requested == 10.0); /* run time, requested unknown */
	trace_free(&t);
}

static void test_alibaba(void **state)
{
	topo_trace t;
	topo_error err;

	trace_init(&t);
	assert_int_equal(trace_load(&t, ALI, &err), 0);
	assert_int_equal(t.njobs, 50);
	assert_int_equal(t.skipped, 0);
	assert_string_equal(t.jobs[0].name, "openb-pod-0000");
	assert_true(t.jobs[0].runtime == 12537496.0);
	assert_int_equal(t.jobs[0].gpus_per_host, 1);
	assert_int_equal(t.jobs[0].cores_per_host, 12);
	assert_int_equal(t.jobs[0].hosts, 1);
	assert_string_equal(t.jobs[1].name, "openb-pod-0001");
	assert_true(t.jobs[1].submit == 427061.0);
	assert_true(t.jobs[1].runtime == 12902960.0 - 427061.0);
	assert_int_equal(t.jobs[1].cores_per_host, 6);
	assert_int_equal(t.jobs[0].line, 2);
	trace_free(&t);
}

static void test_alibaba_malformed(void **state)
{
	const char *h = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
			"creation_time,deletion_time,scheduled_time\n";
	char text[1024];

	snprintf(text, sizeof(text), "%sp0,1000,1,1,1000,,LS,Running,0,10,0\np1,1000,1,1,1000\n", h);
	assert_string_equal(load_error(text), "line 3: has 5 columns; the header has 11");
	snprintf(text, sizeof(text), "%sp0,1000,1,x,1000,,LS,Running,0,10,0\n", h);
	assert_string_equal(load_error(text), "line 2: column num_gpu is \"x\", not a number");
	snprintf(text, sizeof(text), "%sp0,1000,1,1,1000,,LS,Running,,10,0\n", h);
	assert_string_equal(load_error(text),
			    "line 2: column creation_time is \"\", not a number");
	snprintf(text, sizeof(text), "%sp0,1000,1,99,1000,,LS,Running,0,10,0\n", h);
	assert_string_equal(load_error(text),
			    "line 2: asks for 99 GPUs and 1000 milli-CPUs, out of range");
	/* found by fuzz_trace: a huge CPU request must not overflow an int */
	snprintf(text, sizeof(text), "%sp0,6e117,1,1,1000,,LS,Running,0,10,0\n", h);
	assert_string_equal(load_error(text),
			    "line 2: asks for 1 GPUs and 6e+117 milli-CPUs, out of range");
	assert_string_equal(load_error("name,cpu_milli,num_gpu,creation_time\n"),
			    "line 1: the header has no \"deletion_time\" column");
}

static void test_alibaba_pending_skipped(void **state)
{
	topo_trace t;
	topo_error err;
	const char *p = tmpfile_with(
		"name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
		"creation_time,deletion_time,scheduled_time\n"
		"p0,1500,1,0,0,,BE,Pending,100,200,\n"
		"p1,1500,1,2,1000,,LS,Running,300,900,400\n");

	trace_init(&t);
	assert_int_equal(trace_load(&t, p, &err), 0);
	unlink(p);
	assert_int_equal(t.njobs, 1);
	assert_int_equal(t.skipped, 1);
	assert_true(t.jobs[0].runtime == 500.0);
	assert_int_equal(t.jobs[0].cores_per_host, 2);
	assert_int_equal(t.jobs[0].gpus_per_host, 2);
	trace_free(&t);
}

static void test_map_and_merge(void **state)
{
	topo_trace a, b;
	topo_error err;

	trace_init(&a);
	trace_init(&b);
	assert_int_equal(trace_load(&a, KTH, &err), 0);
	assert_int_equal(trace_load(&b, ALI, &err), 0);
	/* 4 procs x scale 16 = 64 hosts; the 64-proc job (1024 hosts) is dropped at 1000 */
	assert_int_equal(trace_map_hosts(&a, 1, 16, 1000, 1), 1);
	assert_int_equal(a.njobs, 99);
	assert_int_equal(a.jobs[0].hosts, 64);
	assert_int_equal(trace_map_hosts(&b, 1, 16, 1000, 1), 0);
	assert_int_equal(b.jobs[0].hosts, 1); /* pods are not scaled */
	assert_int_equal(trace_merge(&a, &b, 73686.0), 0);
	assert_true(a.njobs > 99 && a.njobs < 149);
	for (int i = 1; i < a.njobs; i++)
		assert_true(a.jobs[i - 1].submit <= a.jobs[i].submit);
	trace_truncate(&a, 10);
	/* fitting pods into a 1000 s window: submissions spread over [0, 1000],
	 * pods running longer than 12,500,000 s left out */
	trace_free(&b);
	assert_int_equal(trace_load(&b, ALI, &err), 0);
	assert_int_equal(trace_fit_window(&b, 1000.0, 12500000.0), FIT_DROPPED);
	assert_int_equal(b.njobs, 50 - FIT_DROPPED);
	assert_string_equal(b.jobs[0].name, "openb-pod-0001"); /* pod 0 ran 12,537,496 s */
	assert_float_equal(b.jobs[b.njobs - 1].submit, 1000.0, 1e-9);
	assert_int_equal(a.njobs, 10);
	trace_free(&a);
	trace_free(&b);
}

static void test_comm_profiles(void **state)
{
	sim_comm_profile p;
	topo_error err;

	assert_int_equal(sim_comm_profile_load(&p, FIXTURES_DIR
						"/comm/astra-sim_Resnet50_DataParallel.txt", &err), 0);
	assert_string_equal(p.name, "Resnet50_DataParallel");
	assert_string_equal(p.parallelism, "DATA");
	assert_int_equal(p.layers, 54);
	assert_true(p.comm.bytes_per_iter == 102011648.0);
	assert_true(p.compute_cycles == 1095314.0);
	assert_int_equal(p.comm.cls, PLACE_COMM_HEAVY);
	assert_int_equal(p.comm.pattern, PLACE_PATTERN_RING);
	assert_int_equal(sim_comm_profile_load(&p, FIXTURES_DIR
						"/comm/astra-sim_Transformer_HybridParallel.txt", &err), 0);
	assert_string_equal(p.parallelism, "HYBRID_TRANSFORMER");
	assert_int_equal(p.layers, 57);
	assert_true(p.compute_cycles == 548942542.0);
	assert_true(p.local_bytes == 182779904.0 + 914358272.0);
	/* the same (seed, job) always draws the same profile */
	assert_int_equal(sim_comm_profile_draw(2, 7, 42), sim_comm_profile_draw(2, 7, 42));
	int ones = 0;
	for (int j = 0; j < 1000; j++)
		ones += sim_comm_profile_draw(2, 7, (uint64_t)j);
	assert_true(ones > 400 && ones < 600);
}

static void test_comm_malformed(void **state)
{
	sim_comm_profile p;
	topo_error err;
	const char *path = tmpfile_with("DATA\n2\nconv1\t-1\t10\tNONE\t0\t10\tNONE\t0\t10\tALLREDUCE\t64\t1\n"
					"fc\t-1\t10\tNONE\t0\t10\tNONE\t0\tx\tALLREDUCE\t64\t1\n");

	assert_int_equal(sim_comm_profile_load(&p, path, &err), -1);
	assert_int_equal(err.line, 4);
	assert_string_equal(err.text, "field 9 is \"x\", not a count");
	unlink(path);
	path = tmpfile_with("DATA\n3\nconv1\t-1\t10\tNONE\t0\t10\tNONE\t0\t10\tALLREDUCE\t64\t1\n");
	assert_int_equal(sim_comm_profile_load(&p, path, &err), -1);
	assert_string_equal(err.text, "has 1 layers; line 2 announces 3");
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_swf_kth),
		cmocka_unit_test(test_swf_gzip),
		cmocka_unit_test(test_swf_malformed),
		cmocka_unit_test(test_swf_skips_and_fallbacks),
		cmocka_unit_test(test_alibaba),
		cmocka_unit_test(test_alibaba_malformed),
		cmocka_unit_test(test_alibaba_pending_skipped),
		cmocka_unit_test(test_map_and_merge),
		cmocka_unit_test(test_comm_profiles),
		cmocka_unit_test(test_comm_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
