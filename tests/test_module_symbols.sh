#!/bin/sh
# test_module_symbols.sh: the Slurm daemons load only the topo areas they use
# (issue 11). slurmctld's topology_topognn.so links graph, place, telemetry
# and gnn-infer's inference kernel (libgnn_core, not the trainer: issue 20); slurmstepd's spank_topognn.so links graph, the hwloc
# part of discovery and node. Neither may carry the simulator, the trace
# readers, the report library (SVG, slurmrestd client) or igraph, and the
# dynamic loader must find every library they need (none of them igraph).
# Reads the full symbol table (`nm`, defined and undefined symbols, local
# ones included: the modules are linked with -export-symbols-regex so `nm -D`
# alone would hide what was linked in). Skips (77) when the plugins were not
# built (configure without --with-slurm-source). Prints "N passed, N failed".
set -u
B=${BUILD_DIR:-..}
ctld=$B/slurm-plugin/.libs/topology_topognn.so
spank=$B/slurm-plugin/.libs/spank_topognn.so
if [ ! -f "$ctld" ] || [ ! -f "$spank" ]; then
	echo "SKIP: the Slurm plugins were not built (configure --with-slurm-source)"
	exit 77
fi
command -v nm > /dev/null || { echo "SKIP: no nm"; exit 77; }
command -v ldd > /dev/null || { echo "SKIP: no ldd"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/modsyms.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/check.sh"

nm "$ctld" | awk '{ print $NF }' | sort -u > "$tmp/ctld.all"
nm -D --defined-only "$ctld" | awk '{ print $NF }' | sort -u > "$tmp/ctld.dyn"
nm "$spank" | awk '{ print $NF }' | sort -u > "$tmp/spank.all"
nm -D --defined-only "$spank" | awk '{ print $NF }' | sort -u > "$tmp/spank.dyn"
ldd "$ctld" > "$tmp/ctld.ldd" 2>&1
ldd "$spank" > "$tmp/spank.ldd" 2>&1

# none FILE REGEX: no line of FILE matches REGEX (prints up to 5 offenders)
none() {
	if grep -E "$2" "$1" > "$tmp/hits"; then
		echo "  $(wc -l < "$tmp/hits") symbols match $2 in $(basename "$1"), e.g.:"
		head -n 5 "$tmp/hits" | sed 's/^/    /'
		return 1
	fi
	return 0
}

# some FILE REGEX: at least one line matches (the listing is not empty or wrong)
some() { grep -Eq "$2" "$1" || { echo "  nothing matches $2 in $(basename "$1")"; return 1; }; }

# ---- slurmctld's module ----
check "topology_topognn.so: holds the engine (place_)" \
	some "$tmp/ctld.all" '^place_state_new$'
check "topology_topognn.so: holds the telemetry client" some "$tmp/ctld.all" '^telemetry_'
check "topology_topognn.so: no igraph" none "$tmp/ctld.all" '^_?igraph_|^topo_analysis_'
check "topology_topognn.so: no simulator or trace reader" \
	none "$tmp/ctld.all" '^(topo_)?(sim|trace)_'
check "topology_topognn.so: no report library (SVG, slurmrestd client)" \
	none "$tmp/ctld.all" '^report_'
check "topology_topognn.so: no SVG writer of any name" none "$tmp/ctld.all" '[Ss][Vv][Gg]'
check "topology_topognn.so: no GNN trainer (gnn_train*, gnn_trainer*, backprop)" \
	none "$tmp/ctld.all" '^gnn_train|backprop|^adam_'
check "topology_topognn.so: holds the GNN inference kernel" some "$tmp/ctld.all" '^gnn_embed$'
check "topology_topognn.so: no hwloc, no node side" \
	none "$tmp/ctld.all" '^(hwloc_|topo_hwloc|bind_)'
check "topology_topognn.so: no fabric loaders (discover area)" \
	none "$tmp/ctld.all" '^topo_(load|parse)_(ibnetdiscover|topology_conf)'
check "topology_topognn.so: exports only the plugin entry points" \
	none "$tmp/ctld.dyn" '^(place_|telemetry_|http_|topo_|gnn_)'
check "topology_topognn.so: every library found, none is igraph or hwloc" \
	none "$tmp/ctld.ldd" 'not found|libigraph|libhwloc'

# ---- slurmstepd's module ----
check "spank_topognn.so: holds the node side (bind_) and hwloc" \
	some "$tmp/spank.all" '^bind_plan'
check "spank_topognn.so: no igraph" none "$tmp/spank.all" '^_?igraph_|^topo_analysis_'
check "spank_topognn.so: no simulator or trace reader" \
	none "$tmp/spank.all" '^(topo_)?(sim|trace)_'
check "spank_topognn.so: no report library" none "$tmp/spank.all" '^report_'
check "spank_topognn.so: no engine, telemetry or GNN" \
	none "$tmp/spank.all" '^(place_|telemetry_|http_|gnn_|curl_)'
check "spank_topognn.so: exports only the SPANK entry points" \
	none "$tmp/spank.dyn" '^(bind_|topo_|place_)'
check "spank_topognn.so: every library found, none is igraph or curl" \
	none "$tmp/spank.ldd" 'not found|libigraph|libcurl'
finish
