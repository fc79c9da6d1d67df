/*
 * place_request.h: the heavy ring request the placement tests start from
 * (n whole hosts, 1 GB per iteration, 0.1 s of compute); tests set the rest.
 */
#ifndef PLACE_REQUEST_H
#define PLACE_REQUEST_H

#include <string.h>

#include "place.h"

static inline place_request heavy_request(int n)
{
	place_request r;

	memset(&r, 0, sizeof(r));
	r.job_id = 100;
	r.min_hosts = n;
	r.exclusive = 1;
	r.comm.cls = PLACE_COMM_HEAVY;
	r.comm.pattern = PLACE_PATTERN_RING;
	r.comm.bytes_per_iter = 1e9;
	r.comm.compute_s_per_iter = 0.1;
	return r;
}

#endif
