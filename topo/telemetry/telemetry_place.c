/*
 * telemetry_place: telemetry snapshot -> place_state leaf overlay (see
 * telemetry_place.h).
 */
#include "telemetry_place.h"

int telemetry_apply_to_state(const telemetry_snapshot *snap, place_state *state, int *unknown)
{
	int applied = 0, missing = 0;

	for (size_t i = 0; i < snap->nleaves; i++) {
		const telemetry_leaf *l = &snap->leaves[i];

		if (l->util < 0)
			continue;
		if (place_state_set_leaf_uplink_util(state, l->name, l->util) == 0)
			applied++;
		else
			missing++;
	}
	if (unknown)
		*unknown = missing;
	return applied;
}

int telemetry_clear_from_state(const telemetry_snapshot *prev, place_state *state)
{
	int n = 0;

	for (size_t i = 0; i < prev->nleaves; i++)
		if (prev->leaves[i].util >= 0 && place_state_set_leaf_uplink_util(state, prev->leaves[i].name, 0) == 0)
			n++;
	return n;
}
