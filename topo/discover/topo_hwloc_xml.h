/*
 * topo_hwloc_xml: checks an hwloc topology XML before hwloc sees it, and
 * rewrites the hwloc 3.0 format into the 2.0 format the installed hwloc 2.x
 * imports.
 *
 * Why: hwloc's XML import reports failure as "-1, errno EINVAL" with no line
 * number and no reason, and hwloc 2.x refuses the 3.0 format outright (the
 * hwloc test-suite XMLs we ship as fixtures are 3.0). Checking the outline
 * here lets a loader say which file is wrong and how ("it is an <svg>, not a
 * <topology>", "it ends at line 80 before </topology>").
 *
 * The 3.0 -> 2.0 rewrite touches only what changed between the formats:
 *   - <topology version="3.0"> becomes version="2.0";
 *   - OS device types become the 2.x enumeration (3.0 stores a bit mask:
 *     storage 1, memory 2, GPU 4, co-processor 8, network 16,
 *     OpenFabrics 32, DMA 64; 2.x stores block 0, GPU 1, network 2,
 *     OpenFabrics 3, DMA 4, co-processor 5);
 *   - topology-wide <info> (HostName, OSName, ...) written after the root
 *     object moves into the root object, where 2.x keeps it;
 *   - <pci_locality> elements (new in 3.0) are dropped: the PCI tree itself
 *     is still under the right package.
 * Formats 1.x and 2.x pass through unchanged (hwloc imports them itself).
 *
 * The checks are strict on purpose: hwloc 2.9's importer trusts its input
 * and crashes on, e.g., an object with a cpuset but no complete_cpuset, or a
 * tag its parser reads differently from ours (fuzz_hwloc_xml found both). So
 * every element tag must be well formed, every closing tag must close the
 * open element, and objects must carry the complete sets hwloc always writes.
 * Attributes must be written as hwloc writes them (name="value", names of
 * lowercase letters and '_', only the references &#10; &#13; &#9; &quot;
 * &lt; &gt; &amp;): hwloc's own XML reader silently stops reading a tag's
 * attributes at the first one it cannot read, and then crashes when that
 * left an object without its complete sets.
 */
#ifndef TOPO_HWLOC_XML_H
#define TOPO_HWLOC_XML_H

#include <stddef.h>

#include "topo_error.h"

/* Check that data[0..len) looks like an hwloc topology XML and return in
 * *out (malloc'ed, NUL-terminated, length in *outlen) the text to hand to
 * hwloc: a copy, downgraded from the 3.0 format when needed. `source` names
 * the input in error reports. Returns 0, or -1 with err filled: empty input,
 * not XML, a root element other than <topology>, a format newer than 3.x,
 * a missing </topology> (truncated file), a malformed tag, crossed
 * elements, an object without its complete sets, or memory exhaustion. A
 * tag is malformed when hwloc's reader would read it differently: single
 * quotes, spaces around '=', a name with other than lowercase letters and
 * '_', a reference other than the seven above. */
int topo_hwloc_xml_prepare(const char *data, size_t len, const char *source, char **out,
			   size_t *outlen, topo_error *err);

#endif
