/*
 * test_tmp.h: unique temporary files and directories for the unit tests,
 * under $TMPDIR (else /tmp), so parallel runs and sandboxes with their own
 * TMPDIR work. `name` is a mkstemp pattern ending in XXXXXX; the full path
 * is written into buf (len bytes).
 */
#ifndef TEST_TMP_H
#define TEST_TMP_H

#include <stdio.h>
#include <stdlib.h>

static inline char *test_tmp_path(char *buf, size_t len, const char *name)
{
	const char *dir = getenv("TMPDIR");

	snprintf(buf, len, "%s/%s", dir && *dir ? dir : "/tmp", name);
	return buf;
}

/* mkstemp under $TMPDIR: the open descriptor, or -1. */
static inline int test_mkstemp(char *buf, size_t len, const char *name)
{
	return mkstemp(test_tmp_path(buf, len, name));
}

/* mkdtemp under $TMPDIR: buf, or NULL. */
static inline char *test_mkdtemp(char *buf, size_t len, const char *name)
{
	return mkdtemp(test_tmp_path(buf, len, name));
}

#endif
