/*
 * topognn-discover: build the cluster graph from any mix of sources and write
 * it out (JSON graph file, Slurm topology.conf, Graphviz, a summary table, or
 * one host's GPU/HCA affinity). See topognn-discover(1).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_affinity.h"
#include "topo_analysis.h"
#include "topo_dot.h"
#include "topo_ethfabric.h"
#include "topo_fabric.h"
#include "topo_graph.h"
#include "topo_hwloc.h"
#include "topo_ibnetdiscover.h"
#include "topo_json.h"
#include "topo_lldp.h"
#include "topo_netq.h"
#include "topo_nvsmi.h"
#include "topo_num.h"
#include "topo_summary.h"
#include "topo_topology_conf.h"
#ifdef HAVE_IBNETDISC
#include "topo_ibnd.h"
#endif

/* The sources, in the order they are loaded: the rows of `sources` below. */
enum source_id {
	S_GRAPH, S_IBNET, S_IBND, S_TCONF, S_NETQ, S_HWLOC, S_HWLOC_LIVE, S_HWLOC_DIR,
	S_LLDP, S_LLDP_LIVE, S_NVSMI, NSOURCES
};

typedef struct options {
	/* per source: its file or directory; a live source's name; NULL unused */
	const char *src[NSOURCES];
	const char *hostname, *host_pattern, *ca;
	const char *lldp_socket, *sysfs;
	const char *nic_roles[16]; /* --nic-role ROLE=REGEX, in order */
	int nnic_roles;
	int ca_port;
	int json, dot, summary, affinity;
	const char *topology_conf_out; /* "tree" or "block" */
	const char *topology_yaml_out; /* file for the topology.yaml */
} options;

/* ---- the discovery backends: one row each, as hwloc's components ---------- */

/* Load source `arg` into g with the options the backend reads; 0 or -1. */
typedef int (*source_load)(topo_graph *g, const char *arg, const options *o,
			   const topo_nic_rules *rules, topo_error *err);

typedef struct source {
	const char *option; /* --OPTION names it */
	const char *live;   /* a live source (no argument): its name; NULL takes a path */
	int fabric;         /* describes a fabric: topo_analysis_run() runs after loading */
	source_load load;
} source;

static topo_fabric_opts fabric_opts(const options *o)
{
	return (topo_fabric_opts){ .host_pattern = o->host_pattern };
}

static int load_graph(topo_graph *g, const char *arg, const options *o,
		      const topo_nic_rules *rules, topo_error *err)
{
	(void)o, (void)rules;
	return topo_load_json(g, arg, err);
}

static int load_ibnet(topo_graph *g, const char *arg, const options *o,
		      const topo_nic_rules *rules, topo_error *err)
{
	topo_fabric_opts f = fabric_opts(o);

	(void)rules;
	return topo_load_ibnetdiscover(g, arg, &f, err);
}

static int load_ibnd(topo_graph *g, const char *arg, const options *o,
		     const topo_nic_rules *rules, topo_error *err)
{
	(void)arg, (void)rules;
#ifdef HAVE_IBNETDISC
	topo_fabric_opts f = fabric_opts(o);

	return topo_load_ibnd(g, o->ca, o->ca_port, &f, err);
#else
	(void)g, (void)o;
	topo_error_set(err, "<ibnd>", 0, "this topognn was built without libibnetdisc");
	return -1;
#endif
}

static int load_tconf(topo_graph *g, const char *arg, const options *o,
		      const topo_nic_rules *rules, topo_error *err)
{
	(void)o, (void)rules;
	return topo_load_topology_conf(g, arg, err);
}

static int load_netq(topo_graph *g, const char *arg, const options *o,
		     const topo_nic_rules *rules, topo_error *err)
{
	(void)o;
	return topo_load_netq(g, arg, rules, err);
}

static int load_hwloc(topo_graph *g, const char *arg, const options *o,
		      const topo_nic_rules *rules, topo_error *err)
{
	(void)rules;
	return topo_load_hwloc_xml(g, arg, o->hostname, err);
}

static int load_hwloc_live(topo_graph *g, const char *arg, const options *o,
			   const topo_nic_rules *rules, topo_error *err)
{
	(void)arg, (void)o, (void)rules;
	return topo_load_hwloc_live(g, err);
}

static int load_hwloc_dir(topo_graph *g, const char *arg, const options *o,
			  const topo_nic_rules *rules, topo_error *err)
{
	(void)o, (void)rules;
	return topo_load_hwloc_dir(g, arg, err);
}

static int load_lldp(topo_graph *g, const char *arg, const options *o,
		     const topo_nic_rules *rules, topo_error *err)
{
	return topo_load_lldp_dir(g, arg, o->sysfs, rules, err);
}

static int load_lldp_live(topo_graph *g, const char *arg, const options *o,
			  const topo_nic_rules *rules, topo_error *err)
{
	(void)arg;
	return topo_load_lldp_live(g, o->hostname, o->lldp_socket, o->sysfs, rules, 0, err);
}

static int load_nvsmi(topo_graph *g, const char *arg, const options *o,
		      const topo_nic_rules *rules, topo_error *err)
{
	(void)o, (void)rules;
	return topo_load_nvidia_smi_dir(g, arg, err);
}

static const source sources[NSOURCES] = {
	[S_GRAPH] = { "graph", NULL, 0, load_graph },
	[S_IBNET] = { "ibnetdiscover", NULL, 1, load_ibnet },
	[S_IBND] = { "ibnd", "live fabric discovery (libibnetdisc)", 1, load_ibnd },
	[S_TCONF] = { "topology-conf", NULL, 1, load_tconf },
	[S_NETQ] = { "netq", NULL, 1, load_netq },
	[S_HWLOC] = { "hwloc", NULL, 0, load_hwloc },
	[S_HWLOC_LIVE] = { "hwloc-live", "hwloc", 0, load_hwloc_live },
	[S_HWLOC_DIR] = { "hwloc-dir", NULL, 0, load_hwloc_dir },
	[S_LLDP] = { "lldp", NULL, 1, load_lldp },
	[S_LLDP_LIVE] = { "lldp-live", "live LLDP (lldpcli)", 1, load_lldp_live },
	[S_NVSMI] = { "nvidia-smi", NULL, 0, load_nvsmi },
};

static void usage(FILE *out)
{
	fputs("usage: topognn-discover SOURCES... OUTPUT\n"
	      "sources (any mix; at least one):\n"
	      "  --ibnetdiscover FILE     an ibnetdiscover dump\n"
	      "  --ibnd                   live InfiniBand discovery (libibnetdisc)\n"
	      "     --ca NAME --port N    the local HCA and port to discover from\n"
	      "  --topology-conf FILE     a Slurm topology.conf (tree or block)\n"
	      "  --hwloc FILE             one host's lstopo XML (--hostname NAME to name it)\n"
	      "  --hwloc-live             this machine, through hwloc\n"
	      "  --hwloc-dir DIR          one HOST.xml per host\n"
	      "  --graph FILE.json        a topognn graph file\n"
	      "  --netq FILE              a NetQ topology graph (Ethernet/RoCE fabric)\n"
	      "  --lldp DIR               one HOST.json (`lldpcli -f json show neighbors details`)\n"
	      "                           per host or switch: an Ethernet/RoCE fabric\n"
	      "  --lldp-live              this host's LLDP neighbors, through lldpcli\n"
	      "     --lldp-socket PATH    lldpd's control socket (lldpcli -u)\n"
	      "  --sysfs DIR              sysfs for NIC RDMA devices and speeds: with --lldp-live\n"
	      "                           the root (default /sys), with --lldp one copy per host\n"
	      "                           (DIR/HOST/class/net/...)\n"
	      "  --nvidia-smi DIR         one HOST.txt (`nvidia-smi -q`) per host: NVLink domains\n"
	      "  --nic-role ROLE=REGEX    NICs whose netdev or SWITCH:PORT matches are ROLE\n"
	      "                           (compute, storage, management; repeatable; first wins)\n"
	      "  --host-pattern REGEX     how to split a node description into host and HCA\n"
	      "                           (default: " TOPO_FABRIC_DEFAULT_HOST_PATTERN ")\n"
	      "outputs (default --summary):\n"
	      "  --json                   the graph file (with --summary or --affinity: that as JSON)\n"
	      "  --topology-conf tree|block   the Slurm topology.conf for the fabric\n"
	      "  --topology-yaml FILE     write the Slurm 25.05+ topology.yaml for the fabric\n"
	      "                           (topologies \"tree\" and \"block\") into FILE\n"
	      "  --dot                    Graphviz picture of the fabric\n"
	      "  --summary                counts, groups, oversubscription, anomalies\n"
	      "  --affinity               GPU/HCA/NIC locality of the (single) hwloc host\n",
	      out);
}

static int parse_args(int argc, char **argv, options *o)
{
	/* a source's option is O_SOURCE + its row; the others follow */
	enum { O_SOURCE = 256, O_CA = O_SOURCE + NSOURCES, O_PORT, O_HOSTNAME, O_PATTERN, O_JSON,
	       O_DOT, O_SUMMARY, O_AFFINITY, O_NIC_ROLE, O_LLDP_SOCKET, O_SYSFS, O_TYAML };
	static const struct option others[] = {
		{ "ca", required_argument, NULL, O_CA },
		{ "port", required_argument, NULL, O_PORT },
		{ "topology-yaml", required_argument, NULL, O_TYAML },
		{ "hostname", required_argument, NULL, O_HOSTNAME },
		{ "host-pattern", required_argument, NULL, O_PATTERN },
		{ "json", no_argument, NULL, O_JSON },
		{ "dot", no_argument, NULL, O_DOT },
		{ "summary", no_argument, NULL, O_SUMMARY },
		{ "affinity", no_argument, NULL, O_AFFINITY },
		{ "nic-role", required_argument, NULL, O_NIC_ROLE },
		{ "lldp-socket", required_argument, NULL, O_LLDP_SOCKET },
		{ "sysfs", required_argument, NULL, O_SYSFS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct option longopts[NSOURCES + sizeof(others) / sizeof(others[0])];
	int c, any = 0;

	for (int i = 0; i < NSOURCES; i++)
		longopts[i] = (struct option){ sources[i].option,
					       sources[i].live ? no_argument : required_argument,
					       NULL, O_SOURCE + i };
	memcpy(longopts + NSOURCES, others, sizeof(others));
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == O_SOURCE + S_TCONF &&
		    (strcmp(optarg, "tree") == 0 || strcmp(optarg, "block") == 0)) {
			/* the same option names an input file or the output mode */
			o->topology_conf_out = optarg;
			continue;
		}
		if (c >= O_SOURCE && c < O_SOURCE + NSOURCES) {
			const source *s = &sources[c - O_SOURCE];

			o->src[c - O_SOURCE] = s->live ? s->live : optarg;
			continue;
		}
		switch (c) {
		case O_CA: o->ca = optarg; break;
		case O_PORT:
			if (topo_parse_int(optarg, 1, 254, &o->ca_port) < 0) {
				fprintf(stderr, "topognn-discover: --port wants a port number 1..254, not \"%s\"\n",
					optarg);
				return -1;
			}
			break;
		case O_TYAML: o->topology_yaml_out = optarg; break;
		case O_HOSTNAME: o->hostname = optarg; break;
		case O_PATTERN: o->host_pattern = optarg; break;
		case O_JSON: o->json = 1; break;
		case O_DOT: o->dot = 1; break;
		case O_SUMMARY: o->summary = 1; break;
		case O_AFFINITY: o->affinity = 1; break;
		case O_LLDP_SOCKET: o->lldp_socket = optarg; break;
		case O_SYSFS: o->sysfs = optarg; break;
		case O_NIC_ROLE:
			if (o->nnic_roles == (int)(sizeof(o->nic_roles) / sizeof(o->nic_roles[0]))) {
				fputs("topognn-discover: too many --nic-role rules\n", stderr);
				return -1;
			}
			o->nic_roles[o->nnic_roles++] = optarg;
			break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "topognn-discover: unexpected argument \"%s\"\n", argv[optind]);
		return -1;
	}
	for (int i = 0; i < NSOURCES; i++)
		any |= o->src[i] != NULL;
	if (!any) {
		fputs("topognn-discover: no source given\n", stderr);
		usage(stderr);
		return -1;
	}
	if (o->affinity && !o->src[S_HWLOC] && !o->src[S_HWLOC_LIVE]) {
		fputs("topognn-discover: --affinity needs --hwloc FILE or --hwloc-live\n", stderr);
		return -1;
	}
	if (!o->json && !o->dot && !o->topology_conf_out && !o->topology_yaml_out && !o->affinity)
		o->summary = 1;
	return 0;
}

static int load_sources(topo_graph *g, const options *o, const topo_nic_rules *rules,
			topo_error *err)
{
	int fabric = 0;

	for (int i = 0; i < NSOURCES; i++) {
		if (!o->src[i])
			continue;
		if (sources[i].load(g, o->src[i], o, rules, err) < 0)
			return -1;
		fabric |= sources[i].fabric;
	}
	if (o->nnic_roles > 0 && topo_nic_rules_apply(g, rules) < 0) {
		topo_error_set(err, "", 0, "out of memory");
		return -1;
	}
	if (fabric && topo_analysis_run(g, err) < 0)
		return -1;
	return topo_graph_canonicalize(g);
}

/* What the graph came from, for the header of a written topology.conf. */
static const char *source_name(const options *o)
{
	/* the first fabric source, else the first source */
	for (int i = 0; i < NSOURCES; i++)
		if (o->src[i] && sources[i].fabric)
			return o->src[i];
	for (int i = 0; i < NSOURCES; i++)
		if (o->src[i])
			return o->src[i];
	return "hwloc";
}

/* The host of a single-host hwloc graph. */
static int only_host(const topo_graph *g)
{
	int host = -1;

	for (size_t i = 0; i < topo_graph_nvertices(g); i++)
		if (topo_graph_vertex(g, (int)i)->kind == TOPO_V_HOST) {
			if (host >= 0)
				return -1;
			host = (int)i;
		}
	return host;
}

static int print_json(json_t *j)
{
	int rc = j ? json_dumpf(j, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : -1;

	json_decref(j);
	if (rc == 0)
		putchar('\n');
	return rc;
}

/* The readable form of --affinity. */
static void affinity_print(const topo_affinity *a, FILE *out)
{
	fprintf(out, "host %s\n\n%-6s %-14s %-5s %-24s %s\n", a->host, "gpu", "pci_busid", "numa",
		"nearest hca(s)", "local cpus");
	for (int i = 0; i < a->ngpus; i++) {
		const topo_affinity_gpu *gpu = &a->gpus[i];
		char near[128] = "-";
		size_t used = 0;

		for (int k = 0; k < gpu->nnearest && used < sizeof(near); k++)
			used += snprintf(near + used, sizeof(near) - used, "%s%s", k ? "," : "",
					 gpu->nearest_hcas[k]);
		fprintf(out, "%-6s %-14s %-5d %-24s %s\n", gpu->name,
			gpu->pci_busid ? gpu->pci_busid : "-", gpu->numa, near,
			gpu->cpuset ? gpu->cpuset : "-");
	}
	fprintf(out, "\n%-10s %-10s %-5s %-5s %s\n", "hca", "netdev", "numa", "link", "pci_busid");
	for (int i = 0; i < a->nhcas; i++)
		fprintf(out, "%-10s %-10s %-5d %-5s %s\n", a->hcas[i].name,
			a->hcas[i].netdev ? a->hcas[i].netdev : "-", a->hcas[i].numa,
			topo_link_layer_name(a->hcas[i].link_layer),
			a->hcas[i].pci_busid ? a->hcas[i].pci_busid : "-");
	for (int i = 0; i < a->nnics; i++)
		fprintf(out, "%-10s %-10s %-5d %-5s %s\n", a->nics[i].name,
			a->nics[i].netdev ? a->nics[i].netdev : "-", a->nics[i].numa, "eth",
			a->nics[i].pci_busid ? a->nics[i].pci_busid : "-");
}

/* --topology-yaml FILE: written in full, then closed; a failure names FILE. */
static int write_topology_yaml(const topo_graph *g, const options *o, topo_error *err)
{
	FILE *f = fopen(o->topology_yaml_out, "w");
	int rc;

	if (!f) {
		topo_error_set(err, o->topology_yaml_out, 0, "cannot write: %s", strerror(errno));
		return -1;
	}
	rc = topo_write_topology_yaml(g, f, source_name(o), err);
	if (fclose(f) != 0 && rc == 0) {
		topo_error_set(err, o->topology_yaml_out, 0, "cannot write: %s", strerror(errno));
		rc = -1;
	}
	if (rc < 0 && !err->source[0])
		snprintf(err->source, sizeof(err->source), "%s", o->topology_yaml_out);
	return rc;
}

static int write_outputs(const topo_graph *g, const options *o, topo_error *err)
{
	if (o->affinity) {
		topo_affinity *a;
		json_t *j = NULL;
		int host = only_host(g), rc;

		if (host < 0) {
			topo_error_set(err, o->src[S_HWLOC] ? o->src[S_HWLOC] : "<hwloc>", 0,
				       "--affinity needs exactly one host in the graph");
			return -1;
		}
		a = topo_affinity_of_host(g, host);
		if (!a) {
			topo_error_set(err, "", 0, "out of memory");
			return -1;
		}
		if (o->json) {
			rc = topo_affinity_to_json(a, &j) < 0 ? -1 : print_json(j);
		} else {
			affinity_print(a, stdout);
			rc = 0;
		}
		topo_affinity_free(a);
		return rc;
	}
	if (o->summary && o->json)
		return print_json(topo_summary_json(g));
	if (o->summary)
		topo_summary_print(g, stdout);
	else if (o->json && topo_write_json(g, stdout, err) < 0)
		return -1;
	if (o->topology_conf_out &&
	    topo_write_topology_conf(g, stdout,
				     strcmp(o->topology_conf_out, "block") == 0 ? TOPO_CONF_BLOCK
									: TOPO_CONF_TREE,
				     source_name(o), err) < 0)
		return -1;
	if (o->dot && topo_write_dot(g, stdout, err) < 0)
		return -1;
	if (o->topology_yaml_out)
		return write_topology_yaml(g, o, err);
	return 0;
}

int main(int argc, char **argv)
{
	options o = { .ca_port = 0 };
	topo_nic_rules *rules;
	topo_graph *g;
	topo_error err;
	char msg[TOPO_ERROR_TEXT_LEN + TOPO_ERROR_SOURCE_LEN + 32];
	int rc;

	if (parse_args(argc, argv, &o) < 0)
		return 2;
	g = topo_graph_new();
	if (!g) {
		fputs("topognn-discover: out of memory\n", stderr);
		return 1;
	}
	topo_error_clear(&err);
	rules = topo_nic_rules_new(o.nic_roles, o.nnic_roles, &err);
	rc = !rules || load_sources(g, &o, rules, &err) < 0 || write_outputs(g, &o, &err) < 0;
	if (rc)
		fprintf(stderr, "topognn-discover: %s\n", topo_error_format(&err, msg, sizeof(msg)));
	topo_nic_rules_free(rules);
	topo_graph_free(g);
	return rc;
}
