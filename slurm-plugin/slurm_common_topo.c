/*
 * slurm_common_topo.c - compiles Slurm's src/plugins/topology/common/common_topo.c into
 * topology_topognn.so. Slurm builds that directory as a non-installed
 * libtool library, so an out-of-tree topology plugin compiles the file from
 * the configured Slurm tree it is built against (--with-slurm-source).
 */
#include "src/plugins/topology/common/common_topo.c"
