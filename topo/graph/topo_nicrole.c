/*
 * topo_nicrole: NIC roles and the rules that set them (see topo_nicrole.h).
 */
#include "topo_nicrole.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_regex.h"

static const char *const role_names[] = { "compute", "storage", "management" };

const char *topo_nic_role_name(topo_nic_role r)
{
	return (unsigned)r < 3 ? role_names[r] : "compute";
}

int topo_nic_role_parse(const char *s)
{
	for (int i = 0; i < 3; i++)
		if (s && strcmp(s, role_names[i]) == 0)
			return i;
	return -1;
}

struct topo_nic_rules {
	int n;
	topo_nic_role *role;
	regex_t *re;
};

void topo_nic_rules_free(topo_nic_rules *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->n; i++)
		regfree(&r->re[i]);
	free(r->re);
	free(r->role);
	free(r);
}

topo_nic_rules *topo_nic_rules_new(const char *const *rules, int n, topo_error *err)
{
	topo_nic_rules *r = calloc(1, sizeof(*r));

	if (!r || !(r->re = calloc((size_t)n + 1, sizeof(*r->re))) ||
	    !(r->role = calloc((size_t)n + 1, sizeof(*r->role)))) {
		topo_nic_rules_free(r);
		topo_error_set(err, "", 0, "out of memory");
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		const char *eq = strchr(rules[i], '=');
		char role[32], msg[200];
		int k;

		if (!eq || eq == rules[i] || (size_t)(eq - rules[i]) >= sizeof(role))
			goto bad;
		snprintf(role, sizeof(role), "%.*s", (int)(eq - rules[i]), rules[i]);
		if ((k = topo_nic_role_parse(role)) < 0)
			goto bad;
		if (topo_regex_compile(&r->re[i], eq + 1, REG_NOSUB, msg, sizeof(msg)) < 0) {
			topo_error_set(err, "", 0, "NIC role rule \"%.80s%s\": bad regular expression: %s",
				       rules[i], strlen(rules[i]) > 80 ? "..." : "", msg);
			topo_nic_rules_free(r);
			return NULL;
		}
		r->role[i] = (topo_nic_role)k;
		r->n = i + 1;
		continue;
bad:
		topo_error_set(err, "", 0,
			       "NIC role rule \"%s\" is not ROLE=REGEX with ROLE compute, storage "
			       "or management",
			       rules[i]);
		topo_nic_rules_free(r);
		return NULL;
	}
	return r;
}

topo_nic_role topo_nic_rules_role(const topo_nic_rules *r, const char *netdev,
				  const char *switch_port)
{
	for (int i = 0; r && i < r->n; i++)
		if ((netdev && regexec(&r->re[i], netdev, 0, NULL, 0) == 0) ||
		    (switch_port && regexec(&r->re[i], switch_port, 0, NULL, 0) == 0))
			return r->role[i];
	return TOPO_NIC_COMPUTE;
}

topo_nic_role topo_nic_role_of(const topo_graph *g, int v)
{
	int r = topo_nic_role_parse(topo_graph_get_attr(g, v, TOPO_NIC_ROLE_ATTR));

	return r < 0 ? TOPO_NIC_COMPUTE : (topo_nic_role)r;
}

int topo_nic_rules_apply(topo_graph *g, const topo_nic_rules *r)
{
	int tagged = 0;

	for (size_t i = 0; r && i < topo_graph_nvertices(g); i++) {
		const topo_vertex *v = topo_graph_vertex(g, (int)i);
		topo_nic_role role;

		if (v->kind != TOPO_V_HCA || topo_graph_get_attr(g, (int)i, TOPO_NIC_ROLE_ATTR))
			continue;
		role = topo_nic_rules_role(r, v->netdev,
					   topo_graph_get_attr(g, (int)i, "switch_port"));
		if (role == TOPO_NIC_COMPUTE && v->device)
			role = topo_nic_rules_role(r, v->device, NULL);
		if (topo_graph_set_attr(g, (int)i, TOPO_NIC_ROLE_ATTR, topo_nic_role_name(role)) < 0)
			return -1;
		tagged += role != TOPO_NIC_COMPUTE;
	}
	return tagged;
}
