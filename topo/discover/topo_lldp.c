/*
 * topo_lldp: lldpcli's JSON -> topo_ethfabric (see topo_lldp.h).
 *
 * Two passes: every machine's output is read into neighbor records first,
 * since whether a machine is a switch is only known from what its neighbors
 * say about it; then the cables are declared to the builder.
 *
 * lldpcli's "json" format turns one interface into an object keyed by its
 * name and several into an array of such objects; a chassis is keyed by its
 * system name (or, with none, holds its "id" directly); one capability is an
 * object and several an array. All of these shapes are accepted.
 */
#define _GNU_SOURCE /* strndup */
#include "topo_lldp.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "topo_alloc.h"
#include "topo_hostdir.h"
#include "topo_io.h"
#include "topo_num.h"

#define LLDP_MAX_BYTES (32u << 20)
#define LLDPCLI_TIMEOUT_MS 10000


typedef struct nbr {
	char *local_if, *chassis, *port;
	char speed[8];
	int is_switch;
} nbr;

typedef struct machine {
	char *name, *source;
	nbr *n;
	int nn;
	size_t cap;
	int is_switch;
} machine;

typedef struct lctx {
	machine *m;
	int nm;
	const char *sysfs_dir; /* per-host copies (dir mode) */
	const char *sysfs_root; /* this machine's (live mode) */
	topo_graph *g;
	topo_error *err;
} lctx;

/* ---- MAU types ------------------------------------------------------------ */

void topo_lldp_mau_speed(const char *mau, char *out, size_t len)
{
	const char *end;
	double v;

	out[0] = '\0';
	if (!mau || topo_parse_double_prefix(mau, 0, HUGE_VAL, &v, &end) || v <= 0)
		return;
	if (*end == 'G' || *end == 'g')
		end++;
	else if (strncasecmp(end, "base", 4) == 0)
		v /= 1000; /* "1000BaseTFD", "100BaseTXFD": Mb/s */
	else
		return;
	if (strncasecmp(end, "base", 4) != 0)
		return;
	snprintf(out, len, "%gG", v);
}

/* ---- reading one machine's output ---------------------------------------- */

static const char *jstr(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static int cap_is_switch(json_t *cap)
{
	size_t i;
	json_t *c;

	if (json_is_object(cap))
		return json_is_true(json_object_get(cap, "enabled")) &&
		       (strcmp(jstr(cap, "type") ? jstr(cap, "type") : "", "Bridge") == 0 ||
			strcmp(jstr(cap, "type") ? jstr(cap, "type") : "", "Router") == 0);
	json_array_foreach(cap, i, c)
		if (cap_is_switch(c))
			return 1;
	return 0;
}

/* The chassis' name and its capabilities object. */
static const char *chassis_of(json_t *ch, json_t **body)
{
	const char *key;
	json_t *v, *id;

	if (json_is_object(ch) && (id = json_object_get(ch, "id")) && json_is_object(id)) {
		*body = ch; /* no system name: known by its id */
		return jstr(id, "value");
	}
	if (!json_is_object(ch) || json_object_size(ch) != 1)
		return NULL;
	json_object_foreach(ch, key, v) {
		*body = v;
		return json_is_object(v) ? key : NULL;
	}
	return NULL;
}

static const char *port_of(json_t *port)
{
	json_t *id = json_object_get(port, "id");
	const char *type = jstr(id, "type"), *descr = jstr(port, "descr");

	if (type && strcmp(type, "ifname") == 0 && jstr(id, "value"))
		return jstr(id, "value");
	if (descr && *descr)
		return descr;
	return jstr(id, "value");
}

static int add_nbr(machine *m, const char *ifname, json_t *iface, topo_error *err)
{
	json_t *body = NULL, *port = json_object_get(iface, "port");
	const char *chassis = chassis_of(json_object_get(iface, "chassis"), &body);
	const char *pname = port_of(port);
	json_t *an = json_object_get(port, "auto-negotiation");
	nbr *n;

	if (!chassis || !pname) {
		topo_error_set(err, m->source, 0,
			       "interface %s: a neighbor without a chassis name or id, or without a "
			       "port id: is this `lldpcli -f json show neighbors details`?",
			       ifname);
		return -1;
	}
	if (topo_grow(&m->n, &m->cap, (size_t)m->nn + 1, sizeof(*m->n), 8) < 0)
		goto oom;
	n = &m->n[m->nn];
	memset(n, 0, sizeof(*n));
	n->local_if = strdup(ifname);
	n->chassis = strdup(chassis);
	n->port = strdup(pname);
	if (!n->local_if || !n->chassis || !n->port) {
		free(n->local_if);
		free(n->chassis);
		free(n->port);
		goto oom;
	}
	n->is_switch = cap_is_switch(json_object_get(body, "capability"));
	topo_lldp_mau_speed(jstr(an, "current"), n->speed, sizeof(n->speed));
	m->nn++;
	return 0;
oom:
	topo_error_set(err, m->source, 0, "out of memory");
	return -1;
}

/* "interface": {"IF": {...}} or [{"IF": {...}}, ...]. */
static int read_interfaces(machine *m, json_t *ifs, topo_error *err)
{
	const char *key;
	json_t *v, *el;
	size_t i;

	if (json_is_object(ifs)) {
		json_object_foreach(ifs, key, v)
			if (!json_is_object(v) || add_nbr(m, key, v, err) < 0)
				goto bad;
		return 0;
	}
	json_array_foreach(ifs, i, el) {
		if (!json_is_object(el) || json_object_size(el) != 1)
			goto bad;
		json_object_foreach(el, key, v)
			if (!json_is_object(v) || add_nbr(m, key, v, err) < 0)
				goto bad;
	}
	return 0;
bad:
	if (!err || !err->text[0])
		topo_error_set(err, m->source, 0,
			       "\"lldp.interface\" is not what `lldpcli -f json` prints (json0 "
			       "and keyvalue formats are not read)");
	return -1;
}

static int read_machine(machine *m, const char *text, size_t len, topo_error *err)
{
	json_error_t jerr;
	json_t *root = json_loadb(text, len, 0, &jerr), *lldp, *ifs;
	int rc = 0;

	if (!root) {
		topo_error_set(err, m->source, jerr.line > 0 ? jerr.line : 0, "%s", jerr.text);
		return -1;
	}
	lldp = json_object_get(root, "lldp");
	if (!json_is_object(lldp)) {
		topo_error_set(err, m->source, 0,
			       "no \"lldp\" object: not `lldpcli -f json show neighbors details` output");
		rc = -1;
	} else if ((ifs = json_object_get(lldp, "interface"))) {
		rc = read_interfaces(m, ifs, err); /* absent: no neighbors */
	}
	json_decref(root);
	return rc;
}

static void machines_free(lctx *c)
{
	for (int i = 0; i < c->nm; i++) {
		for (int k = 0; k < c->m[i].nn; k++) {
			free(c->m[i].n[k].local_if);
			free(c->m[i].n[k].chassis);
			free(c->m[i].n[k].port);
		}
		free(c->m[i].n);
		free(c->m[i].name);
		free(c->m[i].source);
	}
	free(c->m);
}

/* ---- building ------------------------------------------------------------- */

/* The machine a neighbor name stands for: exact, or up to its first dot. */
static int machine_of(const lctx *c, const char *name)
{
	size_t dot = strcspn(name, ".");

	for (int i = 0; i < c->nm; i++)
		if (strcmp(c->m[i].name, name) == 0)
			return i;
	for (int i = 0; name[dot] && i < c->nm; i++)
		if (strlen(c->m[i].name) == dot && strncmp(c->m[i].name, name, dot) == 0)
			return i;
	return -1;
}

static const char *node_name(const lctx *c, const char *chassis)
{
	int i = machine_of(c, chassis);

	return i >= 0 ? c->m[i].name : chassis;
}

/* A machine is a switch when any neighbor says so. */
static void mark_switches(lctx *c)
{
	for (int i = 0; i < c->nm; i++)
		for (int k = 0; k < c->m[i].nn; k++) {
			int j = machine_of(c, c->m[i].n[k].chassis);

			if (j >= 0 && c->m[i].n[k].is_switch)
				c->m[j].is_switch = 1;
		}
}

/* ROOT/class/net/IF/...: the RDMA device and the speed (Mb/s, -1 unknown). */
static void sysfs_nic(const char *root, const char *ifname, char *rdma, size_t len, long *mbps)
{
	char path[4096], *text;
	struct dirent *de;
	size_t n;
	DIR *d;

	rdma[0] = '\0';
	*mbps = -1;
	if ((size_t)snprintf(path, sizeof(path), "%s/class/net/%s/device/infiniband", root,
			     ifname) < sizeof(path) &&
	    (d = opendir(path))) {
		while ((de = readdir(d)))
			if (de->d_name[0] != '.' && strlen(de->d_name) < len &&
			    (!rdma[0] || strcmp(de->d_name, rdma) < 0))
				memcpy(rdma, de->d_name, strlen(de->d_name) + 1);
		closedir(d);
	}
	/* a sysfs attribute: a regular file of one page at most */
	if ((size_t)snprintf(path, sizeof(path), "%s/class/net/%s/speed", root, ifname) <
		    sizeof(path) &&
	    (text = topo_read_input(path, 0, 4096, &n, NULL))) {
		long v;

		if (topo_parse_long_n(text, strcspn(text, "\n"), -1, LONG_MAX, &v) == 0)
			*mbps = v; /* -1: the link is down */
		free(text);
	}
}

static int host_nic(lctx *c, topo_ethfabric *f, const machine *m, nbr *n)
{
	char root[4096], rdma[64], speed[32];
	long mbps;

	if (c->sysfs_root)
		snprintf(root, sizeof(root), "%s", c->sysfs_root);
	else if (c->sysfs_dir)
		snprintf(root, sizeof(root), "%s/%s", c->sysfs_dir, m->name);
	else
		return 0;
	sysfs_nic(root, n->local_if, rdma, sizeof(rdma), &mbps);
	if (!n->speed[0] && mbps > 0 &&
	    (size_t)snprintf(speed, sizeof(speed), "%gG", (double)mbps / 1000) < sizeof(n->speed))
		memcpy(n->speed, speed, strlen(speed) + 1);
	return topo_ethfabric_set_nic(f, m->name, n->local_if, rdma[0] ? rdma : NULL,
				      TOPO_LL_ETH, c->err);
}

static int declare(lctx *c, topo_ethfabric *f)
{
	topo_error le;

	for (int i = 0; i < c->nm; i++)
		if (c->m[i].is_switch && topo_ethfabric_add_switch(f, c->m[i].name, 0, 0, c->err) < 0)
			return -1;
	for (int i = 0; i < c->nm; i++) {
		machine *m = &c->m[i];

		for (int k = 0; k < m->nn; k++) {
			nbr *n = &m->n[k];
			int j = machine_of(c, n->chassis);
			topo_eth_end a = { m->name, n->local_if }, b = { node_name(c, n->chassis), n->port };

			if (!n->is_switch && (j < 0 || !c->m[j].is_switch)) {
				if (!m->is_switch) {
					if (topo_graph_add_anomaly(c->g, "host-to-host-link", m->name,
								   "%s %s is cabled to %s %s, which is not a switch",
								   m->name, n->local_if, n->chassis, n->port) < 0)
						return -1;
					continue;
				}
				if (j >= 0)
					continue; /* a host with its own file gives this cable */
			}
			if (j < 0 && n->is_switch &&
			    topo_ethfabric_add_switch(f, b.node, 0, 0, c->err) < 0)
				return -1;
			if (!m->is_switch && host_nic(c, f, m, n) < 0)
				return -1;
			if (topo_ethfabric_add_link(f, &a, &b, n->speed, 0, &le) < 0) {
				topo_error_set(c->err, m->source, 0, "interface %s: %s", n->local_if,
					       le.text);
				return -1;
			}
		}
	}
	return 0;
}

static int build(lctx *c, const char *source, const topo_nic_rules *rules)
{
	topo_ethfabric *f = topo_ethfabric_new(c->g, source, rules, c->err);
	int rc;

	if (!f)
		return -1;
	mark_switches(c);
	rc = declare(c, f) < 0 ? -1 : topo_ethfabric_finish(f, c->err);
	topo_ethfabric_free(f);
	return rc;
}

static int machine_add(lctx *c, const char *name, const char *source, const char *text,
		       size_t len)
{
	machine *p = realloc(c->m, (size_t)(c->nm + 1) * sizeof(*p)), *m;

	if (!p) {
		topo_error_set(c->err, source, 0, "out of memory");
		return -1;
	}
	c->m = p;
	m = &c->m[c->nm];
	memset(m, 0, sizeof(*m));
	m->name = strdup(name);
	m->source = strdup(source);
	c->nm++;
	if (!m->name || !m->source) {
		topo_error_set(c->err, source, 0, "out of memory");
		return -1;
	}
	return read_machine(m, text, len, c->err);
}

int topo_load_lldp_dir(topo_graph *g, const char *dir, const char *sysfs_dir,
		       const topo_nic_rules *rules, topo_error *err)
{
	lctx c = { NULL, 0, sysfs_dir, NULL, g, err };
	topo_hostdir d;
	int rc = -1;

	topo_error_clear(err);
	if (topo_hostdir_list(&d, dir, "json", err) < 0)
		return -1;
	for (size_t i = 0; i < d.n; i++) {
		size_t len;
		char *text = topo_read_file(d.path[i], LLDP_MAX_BYTES, &len, err);

		if (!text || machine_add(&c, d.host[i], d.path[i], text, len) < 0) {
			free(text);
			goto out;
		}
		free(text);
	}
	rc = build(&c, dir, rules);
out:
	machines_free(&c);
	topo_hostdir_free(&d);
	return rc;
}

/* One machine's text into c's graph; c is freed. */
static int load_one(lctx *c, const char *host, const char *source, const char *text, size_t len,
		    const topo_nic_rules *rules)
{
	int rc = -1;

	if (machine_add(c, host, source, text, len) == 0)
		rc = build(c, source, rules);
	machines_free(c);
	return rc;
}

int topo_load_lldp_mem(topo_graph *g, const char *host, const char *text, size_t len,
		       const char *source, const topo_nic_rules *rules, topo_error *err)
{
	lctx c = { NULL, 0, NULL, NULL, g, err };

	topo_error_clear(err);
	if (len > LLDP_MAX_BYTES) {
		topo_error_set(err, source, 0, "larger than %u bytes", LLDP_MAX_BYTES);
		return -1;
	}
	return load_one(&c, host, source, text, len, rules);
}

/* ---- live: running lldpcli ------------------------------------------------ */

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Read the child's stdout until EOF, the size limit or the deadline. */
static char *read_child(int fd, int timeout_ms, size_t *len, const char **why)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap);
	long deadline = now_ms() + timeout_ms;

	*why = NULL;
	while (buf) {
		struct pollfd p = { fd, POLLIN, 0 };
		long left = deadline - now_ms();
		ssize_t got;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0) {
			*why = "timed out";
			break;
		}
		if (n + 1 == cap) {
			char *q = cap >= LLDP_MAX_BYTES ? NULL : realloc(buf, cap * 2);

			if (!q) {
				*why = "printed too much";
				break;
			}
			buf = q;
			cap *= 2;
		}
		got = read(fd, buf + n, cap - n - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			buf[n] = '\0';
			*len = n;
			return buf;
		}
		n += (size_t)got;
	}
	free(buf);
	if (!*why)
		*why = "out of memory";
	return NULL;
}

static char *run_lldpcli(const char *socket, int timeout_ms, size_t *len, topo_error *err)
{
	char *argv[] = { "lldpcli", "-f", "json", "show", "neighbors", "details", NULL, NULL, NULL };
	const char *why = NULL;
	int fd, status;
	char *out;
	pid_t pid;

	if (socket) { /* "lldpcli -u SOCKET -f json ...": each word its own argument */
		memmove(argv + 2, argv, 6 * sizeof(*argv));
		argv[0] = "lldpcli";
		argv[1] = "-u";
		argv[2] = (char *)socket;
	}
	fd = topo_spawn_reader(argv, &pid, &why);
	if (fd < 0) {
		topo_error_set(err, "lldpcli", 0, "%s: %s%s", why, strerror(errno),
			       errno == ENOENT ? " (is lldpd installed?)" : "");
		return NULL;
	}
	out = read_child(fd, timeout_ms > 0 ? timeout_ms : LLDPCLI_TIMEOUT_MS, len, &why);
	close(fd);
	if (!out)
		kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) == pid && out &&
	    (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
		why = "failed (is lldpd running? is its socket readable?)";
		free(out);
		out = NULL;
	}
	if (!out)
		topo_error_set(err, "lldpcli", 0, "%s", why);
	return out;
}

int topo_load_lldp_live(topo_graph *g, const char *hostname, const char *socket,
			const char *sysfs_root, const topo_nic_rules *rules, int timeout_ms,
			topo_error *err)
{
	lctx c = { NULL, 0, NULL, sysfs_root ? sysfs_root : "/sys", g, err };
	char host[256];
	size_t len;
	char *text;
	int rc = -1;

	topo_error_clear(err);
	if (!hostname) {
		if (gethostname(host, sizeof(host)) != 0) {
			topo_error_set(err, "<lldp>", 0, "cannot get this host's name: %s",
				       strerror(errno));
			return -1;
		}
		host[sizeof(host) - 1] = '\0';
		host[strcspn(host, ".")] = '\0';
		hostname = host;
	}
	if (!(text = run_lldpcli(socket, timeout_ms, &len, err)))
		return -1;
	rc = load_one(&c, hostname, "lldpcli", text, len, rules);
	free(text);
	return rc;
}
