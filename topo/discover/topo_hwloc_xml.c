/* topo_hwloc_xml: outline checks of hwloc XML and the 3.0 -> 2.0 rewrite (see topo_hwloc_xml.h). */
#include "topo_hwloc_xml.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "topo_num.h"

/* A growable output buffer; `oom` sticks once an allocation failed. */
typedef struct xbuf {
	char *p;
	size_t len, cap;
	int oom;
} xbuf;

/* One markup item: an element tag, or a special (<?..?>, <!..>) item. */
typedef struct xml_tag {
	const char *start; /* the '<' */
	const char *end;   /* one past the closing '>' */
	const char *name;  /* element name (after '<' or '</') */
	size_t namelen;
	int closing;     /* </name> */
	int selfclosing; /* <name ... /> */
	int special;     /* declaration, comment, DOCTYPE, CDATA */
} xml_tag;

static void xbuf_put(xbuf *b, const char *s, size_t n)
{
	if (b->oom || n == 0)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (b->len + n + 1 > cap)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static int line_of(const char *data, const char *at)
{
	int line = 1;

	for (const char *p = data; p < at; p++)
		if (*p == '\n')
			line++;
	return line;
}

/* Line of the last character (a final newline ends the last line, it does not start one). */
static int last_line(const char *data, const char *end)
{
	return line_of(data, end - (end > data && end[-1] == '\n'));
}

static const char *find_str(const char *p, const char *end, const char *s)
{
	size_t n = strlen(s);

	for (; p + n <= end; p++)
		if (memcmp(p, s, n) == 0)
			return p;
	return NULL;
}

/* Find the next markup item at or after p. Returns 1 with *t filled, 0 when
 * no '<' is left, -1 when the last item is not terminated. */
static int next_tag(const char *p, const char *end, xml_tag *t)
{
	const char *q;
	char quote = 0;

	p = memchr(p, '<', (size_t)(end - p));
	if (!p)
		return 0;
	memset(t, 0, sizeof(*t));
	t->start = p;
	if (end - p >= 4 && memcmp(p, "<!--", 4) == 0) {
		q = find_str(p + 4, end, "-->");
		t->special = 1;
		t->end = q ? q + 3 : NULL;
		return q ? 1 : -1;
	}
	if (end - p >= 9 && memcmp(p, "<![CDATA[", 9) == 0) {
		q = find_str(p + 9, end, "]]>");
		t->special = 1;
		t->end = q ? q + 3 : NULL;
		return q ? 1 : -1;
	}
	t->special = p + 1 < end && (p[1] == '?' || p[1] == '!');
	t->closing = p + 1 < end && p[1] == '/';
	t->name = p + 1 + t->closing;
	for (q = t->name; q < end && (isalnum((unsigned char)*q) || strchr("_-.:", *q)); q++)
		;
	t->namelen = (size_t)(q - t->name);
	for (; q < end; q++) {
		if (quote) {
			if (*q == quote)
				quote = 0;
		} else if (*q == '"' || *q == '\'') {
			quote = *q;
		} else if (*q == '>') {
			t->end = q + 1;
			t->selfclosing = q > p && q[-1] == '/';
			return 1;
		}
	}
	return -1;
}

static int tag_is(const xml_tag *t, const char *name)
{
	return !t->special && t->namelen == strlen(name) && memcmp(t->name, name, t->namelen) == 0;
}

/* Find attribute `attr` in an element tag; sets *val and *vlen to its raw value. */
static int tag_attr(const xml_tag *t, const char *attr, const char **val, size_t *vlen)
{
	const char *p = t->name + t->namelen, *end = t->end - 1;
	size_t alen = strlen(attr);

	while (p < end) {
		const char *name, *v;
		char quote;

		while (p < end && isspace((unsigned char)*p))
			p++;
		name = p;
		while (p < end && *p != '=' && !isspace((unsigned char)*p) && *p != '/')
			p++;
		if (p == name)
			return 0;
		size_t nlen = (size_t)(p - name);
		while (p < end && isspace((unsigned char)*p))
			p++;
		if (p >= end || *p != '=')
			return 0;
		p++;
		while (p < end && isspace((unsigned char)*p))
			p++;
		if (p >= end || (*p != '"' && *p != '\''))
			return 0;
		quote = *p++;
		v = p;
		while (p < end && *p != quote)
			p++;
		if (p >= end)
			return 0;
		if (nlen == alen && memcmp(name, attr, alen) == 0) {
			*val = v;
			*vlen = (size_t)(p - v);
			return 1;
		}
		p++;
	}
	return 0;
}

/* hwloc 3.0 OS device type bit mask -> hwloc 2.x enumeration value. */
static int osdev_type_v2(unsigned long mask)
{
	if (mask & 32) /* OpenFabrics (an IB HCA is also "network" in 3.0) */
		return 3;
	if (mask & 8) /* co-processor: CUDA, OpenCL, ... */
		return 5;
	if (mask & 4) /* GPU: NVML, RSMI, DRM card */
		return 1;
	if (mask & 16) /* network */
		return 2;
	if (mask & 64) /* DMA */
		return 4;
	return 0; /* storage or memory: 2.x "block" */
}

/* Copy tag t into out with the value of attribute `attr` replaced. */
static void put_tag_with_attr(xbuf *out, const xml_tag *t, const char *val, size_t vlen,
			      const char *newval)
{
	xbuf_put(out, t->start, (size_t)(val - t->start));
	xbuf_put(out, newval, strlen(newval));
	xbuf_put(out, val + vlen, (size_t)(t->end - (val + vlen)));
}

static void put_object_tag(xbuf *out, const xml_tag *t)
{
	const char *val;
	size_t vlen;
	char num[32];
	uint64_t mask;

	if (tag_attr(t, "osdev_type", &val, &vlen) && vlen > 0 && vlen < sizeof(num)) {
		memcpy(num, val, vlen);
		num[vlen] = '\0';
		if (topo_parse_u64(num, 10, UINT64_MAX, &mask) == 0) {
			snprintf(num, sizeof(num), "%d", osdev_type_v2(mask));
			put_tag_with_attr(out, t, val, vlen, num);
			return;
		}
	}
	xbuf_put(out, t->start, (size_t)(t->end - t->start));
}

/* Rewrite a 3.0 document (already checked to be complete) as 2.0. */
static int downgrade_v3(const char *data, size_t len, xbuf *out)
{
	const char *p = data, *end = data + len, *val;
	size_t vlen, root_mark = 0;
	int depth = 0, root_seen = 0;
	xbuf infos = { 0 };
	xml_tag t;

	while (next_tag(p, end, &t) == 1) {
		xbuf_put(out, p, (size_t)(t.start - p));
		p = t.end;
		if (tag_is(&t, "topology") && !t.closing && tag_attr(&t, "version", &val, &vlen)) {
			put_tag_with_attr(out, &t, val, vlen, "2.0");
		} else if (tag_is(&t, "object") && !t.closing) {
			put_object_tag(out, &t);
			if (!root_seen) {
				root_seen = 1;
				root_mark = out->len;
			}
			if (!t.selfclosing)
				depth++;
		} else if (tag_is(&t, "object") && t.closing) {
			depth--;
			xbuf_put(out, t.start, (size_t)(t.end - t.start));
		} else if (root_seen && depth == 0 && !t.closing &&
			   (tag_is(&t, "info") || tag_is(&t, "pci_locality"))) {
			/* topology-level item of 3.0: move infos, drop the rest */
			const char *stop = t.end;

			if (!t.selfclosing) {
				xml_tag c;

				while (next_tag(stop, end, &c) == 1 && !(c.closing && c.namelen == t.namelen &&
									 memcmp(c.name, t.name, t.namelen) == 0))
					stop = c.end;
				stop = next_tag(stop, end, &c) == 1 ? c.end : end;
			}
			if (tag_is(&t, "info"))
				xbuf_put(&infos, t.start, (size_t)(stop - t.start));
			p = stop;
		} else {
			xbuf_put(out, t.start, (size_t)(t.end - t.start));
		}
	}
	xbuf_put(out, p, (size_t)(end - p));
	if (!out->oom && !infos.oom && infos.len > 0) {
		/* splice the moved infos in right after the root object's start tag */
		xbuf tail = { 0 };

		xbuf_put(&tail, out->p + root_mark, out->len - root_mark);
		out->len = root_mark;
		xbuf_put(out, infos.p, infos.len);
		if (tail.len)
			xbuf_put(out, tail.p, tail.len);
		out->oom |= tail.oom;
		free(tail.p);
	}
	out->oom |= infos.oom;
	free(infos.p);
	return out->oom ? -1 : 0;
}

/* Up to 24 printable characters from p, for "it starts with ..." messages. */
static void excerpt(const char *p, const char *end, char *buf, size_t len)
{
	size_t n = 0;

	for (; p < end && *p != '\n' && n + 1 < len && n < 24; p++)
		buf[n++] = isprint((unsigned char)*p) ? *p : '?';
	buf[n] = '\0';
}

/* Length of the reference at p ('&') if it is one of the seven hwloc writes
 * and its XML reader decodes, else 0. */
static size_t hwloc_escape_len(const char *p, const char *end)
{
	static const char *const esc[] = { "&#10;", "&#13;", "&#9;", "&quot;", "&lt;", "&gt;", "&amp;" };

	for (size_t i = 0; i < sizeof(esc) / sizeof(esc[0]); i++) {
		size_t n = strlen(esc[i]);

		if ((size_t)(end - p) >= n && memcmp(p, esc[i], n) == 0)
			return n;
	}
	return 0;
}

static int hwloc_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

/* Strict element tag syntax: the name, then attributes as hwloc's own XML
 * reader (topology-xml-nolibxml.c) reads them: a name of lowercase letters
 * and '_', then '="' right after it, a value with no '<' or '>' and no
 * reference but the seven hwloc writes (&#10; &#13; &#9; &quot; &lt; &gt;
 * &amp;), the closing '"'; attributes apart by spaces, tabs or newlines; then
 * an optional '/'. That reader stops at the first attribute it cannot read,
 * without an error, and hwloc 2.9 then crashes on an object left without its
 * complete sets: fuzz_hwloc_xml found single quotes, "name = ", a digit or
 * '-' in a name, '\r' between attributes and "&apos;" or "&bogus;" in a
 * value doing that. Whatever passes is read the same way by us and by hwloc.
 * An attribute may appear once, and a tag has at most MAX_ATTRS of them.
 * Returns 1 when well formed. */
#define MAX_ATTRS 64
static int tag_well_formed(const xml_tag *t)
{
	const char *p = t->name + t->namelen, *end = t->end - 1 - t->selfclosing;
	const char *seen[MAX_ATTRS];
	size_t seen_len[MAX_ATTRS];
	int nseen = 0;

	if (t->namelen == 0)
		return 0;
	if (t->closing) {
		while (p < end && isspace((unsigned char)*p))
			p++;
		return p == end && !t->selfclosing;
	}
	while (p < end) {
		const char *name;

		if (!hwloc_space(*p))
			return 0;
		while (p < end && hwloc_space(*p))
			p++;
		if (p == end)
			break;
		name = p;
		while (p < end && ((*p >= 'a' && *p <= 'z') || *p == '_'))
			p++;
		if (p == name || end - p < 2 || p[0] != '=' || p[1] != '"')
			return 0;
		/* XML allows an attribute once: hwloc takes the last copy, the
		 * checks here the first (fuzz_hwloc_xml: a second, broken
		 * allowed_cpuset crashed hwloc) */
		for (int i = 0; i < nseen; i++)
			if (seen_len[i] == (size_t)(p - name) && memcmp(seen[i], name, seen_len[i]) == 0)
				return 0;
		if (nseen == MAX_ATTRS)
			return 0;
		seen[nseen] = name;
		seen_len[nseen++] = (size_t)(p - name);
		for (p += 2; p < end && *p != '"'; p++) {
			size_t n;

			if (*p == '<' || *p == '>')
				return 0;
			if (*p == '&') {
				if ((n = hwloc_escape_len(p, end)) == 0)
					return 0;
				p += n - 1;
			}
		}
		if (p >= end)
			return 0;
		p++;
	}
	return 1;
}

#define MAX_NESTING 256
/* the largest os_index taken (a PU's or NUMANode's is a bit in a bitmap) */
#define TOPO_HWLOC_MAX_OS_INDEX 1048575

/* The type of an <object> as hwloc reads it (hwloc_type_sscanf: any case,
 * and a prefix will do, so "NU" is a NUMANode); -1 when it cannot. */
static int object_type(const char *type, size_t len, hwloc_obj_type_t *t)
{
	char name[32];

	if (len >= sizeof(name))
		return -1;
	memcpy(name, type, len);
	name[len] = '\0';
	return hwloc_type_sscanf(name, t, NULL, 0) < 0 ? -1 : 0;
}

/* 1 when an object of this type needs its sets (a cpuset and a nodeset,
 * with their complete_ twins): every type but the I/O and Misc ones, as
 * hwloc writes them; so does one hwloc cannot read. hwloc 2.9 crashed on
 * objects without them: a 1.x NUMANode or its parent without a
 * complete_cpuset (compared in the 1.x import), and a NUMANode under a
 * Machine without a nodeset (hwloc_insert_object_by_parent sets a bit in
 * it), both found by fuzz_hwloc_xml. */
static int type_needs_sets(int known, hwloc_obj_type_t t)
{
	return !known || (t != HWLOC_OBJ_BRIDGE && t != HWLOC_OBJ_PCI_DEVICE &&
			  t != HWLOC_OBJ_OS_DEVICE && t != HWLOC_OBJ_MISC);
}

/* hwloc's bitmap text (hwloc_bitmap_snprintf): "0xf...f" or a group, then
 * groups after commas; a group is "0x" and 1 to 8 hex digits, or nothing for
 * a zero group between two others ("0x000000ff,,0x0"). hwloc_bitmap_sscanf
 * asserts (aborts) on some other text, such as one starting with ','
 * (found by fuzz_hwloc_xml). */
static int bitmap_well_formed(const char *v, size_t n)
{
	const char *start = v, *end = v + n;

	if (n >= 7 && memcmp(v, "0xf...f", 7) == 0) {
		v += 7;
		if (v == end)
			return 1;
		if (*v++ != ',')
			return 0;
	}
	for (;;) {
		const char *digits;

		while (v > start && v < end && *v == ',')
			v++; /* zero groups */
		if (end - v < 3 || v[0] != '0' || v[1] != 'x')
			return 0;
		for (v += 2, digits = v; v < end && isxdigit((unsigned char)*v); v++)
			;
		if (v == digits || v - digits > 8)
			return 0;
		if (v == end)
			return 1;
		if (*v++ != ',')
			return 0;
	}
}

/* The sets of an element: every bitmap attribute hwloc reads is text it
 * can read, and an <object> has every set hwloc may compare (hwloc 2.9
 * dereferences them without checking they were given; it never writes an
 * object without them). Returns 0 or -1 with err filled. */
static int check_sets(const xml_tag *t, const char *data, const char *source, topo_error *err)
{
	static const char *const bitmaps[] = { "cpuset",	  "complete_cpuset",  "allowed_cpuset",
					       "nodeset",	  "complete_nodeset", "allowed_nodeset",
					       "initiator_cpuset" };
	static const char *const sets[][2] = { { "cpuset", "complete_cpuset" },
					       { "nodeset", "complete_nodeset" } };
	const char *val, *type;
	size_t vlen, tlen;
	hwloc_obj_type_t ht = HWLOC_OBJ_MACHINE;
	int known;

	for (size_t i = 0; i < sizeof(bitmaps) / sizeof(bitmaps[0]); i++) {
		if (tag_attr(t, bitmaps[i], &val, &vlen) && !bitmap_well_formed(val, vlen)) {
			topo_error_set(err, source, line_of(data, t->start),
				       "%s=\"%.*s\" is not an hwloc bitmap "
				       "(0x and hex digits, groups apart by ',')",
				       bitmaps[i], (int)(vlen < 24 ? vlen : 24), val);
			return -1;
		}
	}
	if (!tag_is(t, "object"))
		return 0;
	/* hwloc refuses a child without a type but takes the root for the
	 * Machine it already has, with whatever sets it gives */
	if (!tag_attr(t, "type", &type, &tlen)) {
		topo_error_set(err, source, line_of(data, t->start), "an <object> has no type");
		return -1;
	}
	known = object_type(type, tlen, &ht) == 0;
	if (type_needs_sets(known, ht)) {
		for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
			if (tag_attr(t, sets[i][0], &val, &vlen))
				continue;
			topo_error_set(err, source, line_of(data, t->start),
				       "an <object> of type %.*s has no %s",
				       (int)(tlen < 24 ? tlen : 24), type, sets[i][0]);
			return -1;
		}
	}
	/* hwloc puts a PU's and a NUMANode's index in a bitmap: one it does not
	 * know is 2^32 - 1, a 512 MB bitmap (3-5 s under ASan,
	 * fuzz_hwloc_xml); an index of a million is a 128 KB one */
	if (tag_attr(t, "os_index", &val, &vlen)) {
		long idx;

		if (vlen == 0 || strspn(val, "0123456789") < vlen ||
		    topo_parse_long_n(val, vlen, 0, TOPO_HWLOC_MAX_OS_INDEX, &idx) < 0) {
			topo_error_set(err, source, line_of(data, t->start),
				       "os_index=\"%.*s\" is not a number from 0 to %d",
				       (int)(vlen < 24 ? vlen : 24), val, TOPO_HWLOC_MAX_OS_INDEX);
			return -1;
		}
	} else if (known && (ht == HWLOC_OBJ_PU || ht == HWLOC_OBJ_NUMANODE)) {
		topo_error_set(err, source, line_of(data, t->start),
			       "an <object> of type %.*s has no os_index",
			       (int)(tlen < 24 ? tlen : 24), type);
		return -1;
	}
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		if (tag_attr(t, sets[i][0], &val, &vlen) && !tag_attr(t, sets[i][1], &val, &vlen)) {
			topo_error_set(err, source, line_of(data, t->start),
				       "an <object> has a %s but no %s", sets[i][0], sets[i][1]);
			return -1;
		}
	}
	return 0;
}

/* hwloc_bitmap_sscanf of the n bytes at v (checked by bitmap_well_formed);
 * NULL when out of memory. */
static hwloc_bitmap_t bitmap_of(const char *v, size_t n)
{
	char *text = malloc(n + 1);
	hwloc_bitmap_t b = text ? hwloc_bitmap_alloc() : NULL;

	if (b) {
		memcpy(text, v, n);
		text[n] = '\0';
		if (hwloc_bitmap_sscanf(b, text) < 0) {
			hwloc_bitmap_free(b);
			b = NULL;
		}
	}
	free(text);
	return b;
}

/* The root object keeps a PU: its cpuset, complete_cpuset and
 * allowed_cpuset (those it gives) share one. Otherwise hwloc 2.9 removes the
 * root as empty ("Topology became empty, aborting!") and then dereferences
 * it, NULL, as it clears the topology (found by fuzz_hwloc_xml, e.g. a root
 * without children whose allowed_cpuset shares nothing with its cpuset).
 * Every real file has an allowed PU. Returns 0 or -1 with err filled. */
static int check_root(const xml_tag *t, const char *data, const char *source, topo_error *err)
{
	static const char *const sets[] = { "cpuset", "complete_cpuset", "allowed_cpuset" };
	hwloc_bitmap_t keep = NULL;
	hwloc_obj_type_t ht;
	const char *type;
	size_t tlen;
	int ok = 1;

	/* hwloc writes a Machine (a 1.x file may say System); a NUMANode as
	 * the root left hwloc 2.9 with an empty topology and the crash below
	 * (fuzz_hwloc_xml) */
	if (tag_attr(t, "type", &type, &tlen) &&
	    !(tlen == 6 && memcmp(type, "System", 6) == 0) &&
	    (object_type(type, tlen, &ht) < 0 || ht != HWLOC_OBJ_MACHINE)) {
		topo_error_set(err, source, line_of(data, t->start),
			       "the root <object> is of type %.*s, not Machine",
			       (int)(tlen < 24 ? tlen : 24), type);
		return -1;
	}

	for (size_t i = 0; ok && i < sizeof(sets) / sizeof(sets[0]); i++) {
		const char *v;
		size_t n;
		hwloc_bitmap_t b;

		if (!tag_attr(t, sets[i], &v, &n))
			continue;
		b = bitmap_of(v, n);
		if (!b) {
			ok = 0;
			break;
		}
		if (keep) {
			hwloc_bitmap_and(keep, keep, b);
			hwloc_bitmap_free(b);
		} else {
			keep = b;
		}
	}
	ok = ok && keep && !hwloc_bitmap_iszero(keep);
	hwloc_bitmap_free(keep);
	if (ok)
		return 0;
	topo_error_set(err, source, line_of(data, t->start),
		       "the root <object> has no PU in its cpuset, complete_cpuset and allowed_cpuset "
		       "alike: hwloc would find the topology empty");
	return -1;
}

/* Every element tag well formed, with sets hwloc can read, and every
 * closing tag closing the element that is open; returns 0 or -1 with err
 * filled. */
static int check_elements(const char *data, const char *p, const char *end, const char *source,
			  topo_error *err)
{
	const char *name[MAX_NESTING];
	size_t len[MAX_NESTING];
	int depth = 0, root_seen = 0;
	xml_tag t;

	while (next_tag(p, end, &t) == 1) {
		p = t.end;
		if (t.special)
			continue;
		if (!tag_well_formed(&t)) {
			topo_error_set(err, source, line_of(data, t.start),
				       "a malformed tag <%.*s...>", (int)(t.namelen < 24 ? t.namelen : 24),
				       t.name);
			return -1;
		}
		if (!t.closing && check_sets(&t, data, source, err) < 0)
			return -1;
		if (!t.closing && !root_seen && depth == 1 && tag_is(&t, "object")) {
			root_seen = 1;
			if (check_root(&t, data, source, err) < 0)
				return -1;
		}
		if (t.closing) {
			if (depth == 0 || len[depth - 1] != t.namelen ||
			    memcmp(name[depth - 1], t.name, t.namelen) != 0) {
				topo_error_set(err, source, line_of(data, t.start),
					       "</%.*s> does not close the element that is open",
					       (int)(t.namelen < 24 ? t.namelen : 24), t.name);
				return -1;
			}
			depth--;
		} else if (!t.selfclosing) {
			if (depth == MAX_NESTING) {
				topo_error_set(err, source, line_of(data, t.start),
					       "elements nest deeper than %d levels", MAX_NESTING);
				return -1;
			}
			name[depth] = t.name;
			len[depth++] = t.namelen;
		}
	}
	return 0;
}

/* Outline check: returns the format's major version (1 when the root has no
 * version attribute) or -1 with err filled. */
static int check_outline(const char *data, size_t len, const char *source, topo_error *err)
{
	const char *p = data, *end = data + len, *val;
	size_t vlen;
	char what[32];
	xml_tag t;
	long major = 1;
	int r, closed = 0;

	if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
		p += 3;
	while (p < end && isspace((unsigned char)*p))
		p++;
	if (p == end) {
		topo_error_set(err, source, 0, "the file is empty, not an hwloc topology XML");
		return -1;
	}
	if (*p != '<') {
		excerpt(p, end, what, sizeof(what));
		topo_error_set(err, source, line_of(data, p),
			       "not XML: the text starts with \"%s\", not with '<'", what);
		return -1;
	}
	while ((r = next_tag(p, end, &t)) == 1 && t.special)
		p = t.end;
	if (r != 1) {
		topo_error_set(err, source, r < 0 ? line_of(data, t.start) : last_line(data, end),
			       "the XML ends before its root element: the file looks truncated");
		return -1;
	}
	if (!tag_is(&t, "topology") || t.closing) {
		snprintf(what, sizeof(what), "%.*s", (int)(t.namelen < 24 ? t.namelen : 24), t.name);
		topo_error_set(err, source, line_of(data, t.start),
			       "XML but not an hwloc topology: the root element is <%s%s>, not <topology>",
			       t.closing ? "/" : "", what);
		return -1;
	}
	if (tag_attr(&t, "version", &val, &vlen)) {
		const char *dot = memchr(val, '.', vlen);

		if (topo_parse_long_n(val, dot ? (size_t)(dot - val) : vlen, 1, 3, &major)) {
			snprintf(what, sizeof(what), "%.*s", (int)(vlen < 16 ? vlen : 16), val);
			topo_error_set(err, source, line_of(data, t.start),
				       "hwloc XML format version \"%s\" is not one this loader reads (1.x, 2.x, 3.x)",
				       what);
			return -1;
		}
	}
	p = t.end;
	while ((r = next_tag(p, end, &t)) == 1) {
		if (tag_is(&t, "topology") && t.closing)
			closed = 1;
		p = t.end;
	}
	if (r < 0) {
		topo_error_set(err, source, line_of(data, t.start),
			       "the XML ends inside a tag: the file looks truncated");
		return -1;
	}
	if (!closed) {
		topo_error_set(err, source, last_line(data, end),
			       "the XML ends without </topology>: the file looks truncated");
		return -1;
	}
	if (check_elements(data, data, end, source, err) < 0)
		return -1;
	return (int)major;
}

int topo_hwloc_xml_prepare(const char *data, size_t len, const char *source, char **out,
			   size_t *outlen, topo_error *err)
{
	xbuf b = { 0 };
	int major;

	*out = NULL;
	*outlen = 0;
	if (memchr(data, '\0', len)) {
		topo_error_set(err, source, line_of(data, memchr(data, '\0', len)),
			       "not XML: the file contains a NUL byte");
		return -1;
	}
	major = check_outline(data, len, source, err);
	if (major < 0)
		return -1;
	if (major == 3) {
		if (downgrade_v3(data, len, &b) < 0) {
			free(b.p);
			topo_error_set(err, source, 0, "out of memory while reading the XML");
			return -1;
		}
	} else {
		xbuf_put(&b, data, len);
		if (b.oom) {
			free(b.p);
			topo_error_set(err, source, 0, "out of memory while reading the XML");
			return -1;
		}
	}
	*out = b.p;
	*outlen = b.len;
	return 0;
}
