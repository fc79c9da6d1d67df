/*
 * slurm_switch_record.c - compiles Slurm's src/plugins/topology/tree/switch_record.c into
 * topology_topognn.so: topology/tree's own code is the plugin's baseline and
 * fallback (topognn_tree.c). Slurm builds that directory only into
 * topology_tree.so, so an out-of-tree topology plugin compiles the file from
 * the configured Slurm tree it is built against (--with-slurm-source).
 */
#include "src/plugins/topology/tree/switch_record.c"
