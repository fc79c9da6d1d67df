/*
 * fuzz_dir_input.h: for the fuzz targets whose reader takes a directory
 * (the LLDP and nvidia-smi loaders read DIR/HOST.json, DIR/HOST.txt): one
 * scratch directory per process, made once (under $TMPDIR, else /dev/shm,
 * else /tmp), into which each input is written as the file NAME (the same
 * NAME on every call); both go at exit.
 * Returns the directory, or NULL (the target then skips the input).
 */
#ifndef FUZZ_DIR_INPUT_H
#define FUZZ_DIR_INPUT_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char fuzz_dir[512], fuzz_dir_file[700];

/* At exit: the file and the directory go. */
static void fuzz_dir_remove(void)
{
	unlink(fuzz_dir_file);
	rmdir(fuzz_dir);
}

static const char *fuzz_dir_input(const char *name, const uint8_t *data, size_t size)
{
	char *path = fuzz_dir_file;
	FILE *f;

	if (!fuzz_dir[0]) {
		const char *t = getenv("TMPDIR");

		snprintf(fuzz_dir, sizeof(fuzz_dir), "%s/fuzz_dir.XXXXXX",
			 t && *t ? t : access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
		if (!mkdtemp(fuzz_dir)) {
			fuzz_dir[0] = '\0';
			return NULL;
		}
		snprintf(fuzz_dir_file, sizeof(fuzz_dir_file), "%s/%s", fuzz_dir, name);
		atexit(fuzz_dir_remove);
	}
	if (!(f = fopen(path, "wb")))
		return NULL;
	if (size && fwrite(data, 1, size, f) != size) {
		fclose(f);
		return NULL;
	}
	fclose(f);
	return fuzz_dir;
}

#endif
