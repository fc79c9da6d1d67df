/* Unit tests for job classification rules (place_classify). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "place_classify.h"

static const char *conf =
	"# topognn classes\n"
	"SchedulerHint=ignored-by-the-classifier\n"
	"ClassRule=partition=train class=heavy\n"
	"ClassRule=name=^nccl-.* class=heavy\n"
	"ClassRule=account=ops,infra class=light   # operators\n"
	"\n"
	"classrule=qos=debug minnodes=2 class=none\n"
	"DefaultMultiNodeGpuClass=heavy\n"
	"DefaultMultiNodeClass=none\n";

static place_job_info job(const char *part, const char *acct, const char *name, int nodes,
			  int gpus)
{
	place_job_info j = { part, acct, "normal", name, NULL, nodes, gpus };

	return j;
}

static void test_rules_in_order(void **st)
{
	topo_error err;
	place_classifier *k = place_classifier_load_mem(conf, "topognn.conf", &err);
	place_job_info j;
	const char *why;

	assert_non_null(k);
	assert_int_equal(place_classifier_nrules(k), 4);
	j = job("train", "ops", "x", 1, 0);
	assert_int_equal(place_classify(k, &j, &why), PLACE_COMM_HEAVY);
	assert_string_equal(why, "rule at topognn.conf:3");
	j = job("batch", "ops", "nccl-allreduce", 4, 32);
	assert_int_equal(place_classify(k, &j, &why), PLACE_COMM_HEAVY);
	assert_string_equal(why, "rule at topognn.conf:4");
	j = job("batch", "infra", "resnet", 4, 32);
	assert_int_equal(place_classify(k, &j, &why), PLACE_COMM_LIGHT);
	assert_string_equal(why, "rule at topognn.conf:5");
	j = job("batch", "research", "nccl", 4, 32); /* ^nccl- needs the dash */
	assert_int_equal(place_classify(k, &j, &why), PLACE_COMM_HEAVY);
	assert_string_equal(why, "default for multi-node GPU jobs");
	j = job("batch", "research", "mpi", 4, 0);
	assert_int_equal(place_classify(k, &j, &why), PLACE_COMM_NONE);
	assert_string_equal(why, "default for multi-node jobs");
	j = job("batch", "research", "one", 1, 8);
	assert_int_equal(place_classify(k, &j, &why), PLACE_COMM_NONE);
	assert_string_equal(why, "default for single-node jobs");
	/* qos rule needs 2 nodes */
	j = job("batch", "research", "dbg", 2, 8);
	j.qos = "debug";
	assert_int_equal(place_classify(k, &j, &why), PLACE_COMM_NONE);
	assert_string_equal(why, "rule at topognn.conf:7");
	j.nodes = 1;
	assert_int_equal(place_classify(k, &j, NULL), PLACE_COMM_NONE);
	place_classifier_free(k);
}

static void test_comment_tag_wins(void **st)
{
	topo_error err;
	place_classifier *k = place_classifier_load_mem(conf, "topognn.conf", &err);
	place_job_info j = job("train", "ops", "x", 8, 64);
	const char *why;

	assert_non_null(k);
	j.comment = "nightly comm=light run";
	assert_int_equal(place_classify(k, &j, &why), PLACE_COMM_LIGHT);
	assert_string_equal(why, "comment tag");
	j.comment = "comm=heavy";
	j.partition = "batch";
	j.account = "ops";
	assert_int_equal(place_classify(k, &j, &why), PLACE_COMM_HEAVY);
	/* not a tag: part of another word, or an unknown class */
	j.comment = "xcomm=heavy comm=heavyish";
	assert_int_equal(place_classify(k, &j, &why), PLACE_COMM_LIGHT);
	assert_string_equal(why, "rule at topognn.conf:5");
	place_classifier_free(k);
}

static void test_defaults(void **st)
{
	place_classifier *k = place_classifier_default();
	place_job_info j = { NULL, NULL, NULL, NULL, NULL, 2, 16 };

	assert_non_null(k);
	assert_int_equal(place_classify(k, &j, NULL), PLACE_COMM_HEAVY);
	j.gpus = 0;
	assert_int_equal(place_classify(k, &j, NULL), PLACE_COMM_LIGHT);
	j.nodes = 1;
	assert_int_equal(place_classify(k, &j, NULL), PLACE_COMM_NONE);
	place_classifier_free(k);
}

/* Patterns with brackets, classes, intervals and escapes are not mistaken
 * for costly ones, and match. */
static void test_patterns_accepted(void **st)
{
	topo_error err;
	place_classifier *k = place_classifier_load_mem(
		"ClassRule=name=^(train|ft)-[[:alnum:]+]+-[0-9]{1,4}$ class=heavy\n"
		"ClassRule=comment=[+{]\\+{2}x[]+]+ class=light\n"
		"ClassRule=name=^(train|pretrain)-[a-z0-9]{1,32}-n[0-9]{1,4}$ class=heavy\n"
		"ClassRule=name=((.*)+){1,150} class=heavy\n", "c.conf", &err);
	place_job_info j = {0};

	(void)st;
	assert_non_null(k);
	j.nodes = 1;
	j.name = "ft-llama+7b-0042";
	assert_int_equal(place_classify(k, &j, NULL), PLACE_COMM_HEAVY);
	j.name = "ft-llama-12345";
	j.comment = "{++x]";
	assert_int_equal(place_classify(k, &j, NULL), PLACE_COMM_LIGHT);
	place_classifier_free(k);
}

static void expect_error(const char *text, int line, const char *fragment)
{
	topo_error err;
	place_classifier *k = place_classifier_load_mem(text, "c.conf", &err);

	assert_null(k);
	assert_string_equal(err.source, "c.conf");
	assert_int_equal(err.line, line);
	if (!strstr(err.text, fragment))
		fail_msg("'%s' lacks '%s'", err.text, fragment);
}

static void test_errors_with_lines(void **st)
{
	topo_error err;
	char buf[600];

	expect_error("# ok\nClassRule=partition=train\n", 2, "has no class");
	expect_error("\n\nClassRule=colour=red class=heavy\n", 3, "unknown ClassRule key 'colour'");
	expect_error("ClassRule=partition=a class=huge\n", 1, "unknown class 'huge'");
	expect_error("ClassRule=name=([ class=heavy\n", 1, "bad name pattern");
	expect_error("x=1\njust words\n", 2, "expected key=value");
	expect_error("ClassRule=class=heavy\n", 1, "has no condition");
	expect_error("ClassRule=minnodes=two class=heavy\n", 1, "minnodes needs a count");
	expect_error("ClassRule=partition class=heavy\n", 1, "is not key=value");
	expect_error("ClassRule=qos=a qos=b class=light\n", 1, "gives qos twice");
	expect_error("DefaultMultiNodeGpuClass=maybe\n", 1, "must be heavy, light or none");
	/* regcomp would copy the operand of each stacked '+': 2^40 pieces
	 * (fuzz_topognn_conf held regcomp for minutes on such a rule) */
	expect_error("ClassRule=name=^x+++++++++++++++++++++++++++++++++++++++++ class=heavy\n", 1,
		     "bad name pattern '^x+++"
		     "++++++++++++++++++++++++++++++++++++++': too complex: its repetitions "
		     "('+', '{m,n}') make regcomp copy it into more than 2000 pieces");
	/* 12 stacked '+' on ".*": 12,293 pieces, 11 s in regcomp's epsilon
	 * closures (fuzz_topognn_conf, a timeout) */
	expect_error("ClassRule=name=^nccl-.*++++++++++++ class=heavy\n", 1, "too complex");
	expect_error("ClassRule=name=((.*)+){1,250} class=heavy\n", 1, "too complex");
	/* stacked '?' and '*': small, yet regcomp ran for minutes on a 274-byte
	 * pattern of them (fuzz_topognn_conf, a timeout) */
	expect_error("ClassRule=name=^nccl-.*? class=heavy\n", 1,
		     "bad name pattern '^nccl-.*?': a repetition operator follows another");
	expect_error("ClassRule=comment=x{2}{3} class=heavy\n", 1, "a repetition operator follows another");
	expect_error("ClassRule=comment=((a{99}){99}){99} class=heavy\n", 1,
		     "bad comment pattern '((a{99}){99}){99}': too complex");
	expect_error("ClassRule=name=^(a*)\\1$ class=heavy\n", 1,
		     "bad name pattern '^(a*)\\1$': back-references are not allowed");
	assert_null(place_classifier_load("/nonexistent/topognn.conf", &err));
	assert_non_null(strstr(topo_error_format(&err, buf, sizeof(buf)),
			       "/nonexistent/topognn.conf: cannot open"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules_in_order),
		cmocka_unit_test(test_comment_tag_wins),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_errors_with_lines),
		cmocka_unit_test(test_patterns_accepted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
