#!/usr/bin/env python3
"""monitoring_check.py: checks of the shipped Grafana dashboard and Prometheus
rules (contrib/), used by tests/test_monitoring_contrib.sh (make check) and
tests/slurm/test_monitoring.sh (a live Prometheus after a real cluster run).

  monitoring_check.py structure DASHBOARD
      Grafana's JSON model: schemaVersion, the Prometheus datasource variable
      DS_PROMETHEUS, and every panel with a unique id, a datasource, gridPos
      and targets (each an expr and a unique refId).
  monitoring_check.py coverage RULES RULES_TEST
      every alert of RULES has a promtool test case where it fires and one
      where it does not (exp_alerts: []).
  monitoring_check.py names DASHBOARD RULES METRICS_TEXT METRICS_DOC
      every topognn_* metric the dashboard or the rules use is in the
      exposition METRICS_TEXT (placement-report metrics) and in METRICS_DOC.
  monitoring_check.py live URL DASHBOARD RULES
      against a Prometheus at URL that scrapes placement-report metrics and
      loaded RULES: every panel target's query returns at least one series,
      every rule is loaded, evaluated, with health "ok", and every metric its
      expression names has a series now.

Prints "ok   - ..." / "FAIL - ..." lines; exits 1 when anything failed.
Standard library only (no yaml module: the rules files are read by pattern,
which their layout keeps simple).
"""
import json
import re
import sys
import urllib.parse
import urllib.request

METRIC = re.compile(r"\btopognn_[a-z0-9_]+")
failures = 0


def report(ok, what):
    global failures
    print(("ok   - " if ok else "FAIL - ") + what)
    if not ok:
        failures += 1


def panels_of(path):
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    return d, d.get("panels", [])


def grafana_expr(expr):
    """A panel query as Prometheus takes it: Grafana's interval variables set."""
    return (expr.replace("$__rate_interval", "1m").replace("${__rate_interval}", "1m")
            .replace("$__interval", "15s").replace("$__range", "1h"))


def alerts_of(rules_text):
    return re.findall(r"^\s*-\s*alert:\s*(\S+)\s*$", rules_text, re.M)


def rule_exprs(rules_text):
    """alert name -> its expression (the block scalar or the one line)."""
    out, name, lines, indent = {}, None, None, None
    for line in rules_text.splitlines():
        m = re.match(r"^\s*-\s*alert:\s*(\S+)", line)
        if m:
            name, lines = m.group(1), None
            continue
        m = re.match(r"^(\s*)expr:\s*(.*)$", line)
        if m and name:
            if m.group(2).strip() in ("|", ">", "|-", ">-"):
                lines, indent = [], len(m.group(1))
            else:
                out[name] = m.group(2).strip()
            continue
        if lines is not None:
            if line.strip() and len(line) - len(line.lstrip()) <= indent:
                out[name], lines = "\n".join(lines), None
            else:
                lines.append(line)
    if lines is not None:
        out[name] = "\n".join(lines)
    return out


def cmd_structure(dash):
    d, panels = panels_of(dash)
    report(isinstance(d.get("schemaVersion"), int) and d["schemaVersion"] >= 36,
           "dashboard states schemaVersion %s (Grafana's current JSON model)" % d.get("schemaVersion"))
    ds = [v for v in d.get("templating", {}).get("list", [])
          if v.get("type") == "datasource" and v.get("query") == "prometheus"]
    report(len(ds) == 1 and ds[0].get("name") == "DS_PROMETHEUS",
           "one Prometheus datasource variable, DS_PROMETHEUS")
    report(bool(d.get("title")) and bool(d.get("uid")), "dashboard has a title and a uid")
    ids = [p.get("id") for p in panels]
    report(len(panels) > 0 and len(set(ids)) == len(ids) and all(isinstance(i, int) for i in ids),
           "%d panels, every id an integer and unique" % len(panels))
    for p in panels:
        t = p.get("targets") or []
        refs = [x.get("refId") for x in t]
        ok = (p.get("datasource", {}).get("uid") == "${DS_PROMETHEUS}"
              and p.get("datasource", {}).get("type") == "prometheus"
              and len(t) > 0 and all(x.get("expr") for x in t)
              and len(set(refs)) == len(refs) and all(refs)
              and all(x.get("datasource", {}).get("uid") == "${DS_PROMETHEUS}" for x in t)
              and all(k in p.get("gridPos", {}) for k in ("x", "y", "w", "h"))
              and p.get("title") and p.get("type"))
        report(ok, "panel %s %r: type %s, datasource ${DS_PROMETHEUS}, %d targets with unique refIds, gridPos"
               % (p.get("id"), p.get("title"), p.get("type"), len(t)))


def cmd_coverage(rules, tests):
    with open(rules, encoding="utf-8") as f:
        names = alerts_of(f.read())
    with open(tests, encoding="utf-8") as f:
        lines = f.read().splitlines()
    firing, quiet = set(), set()
    for i, line in enumerate(lines):
        m = re.match(r"^\s*alertname:\s*(\S+)\s*$", line)
        if not m:
            continue
        nxt = next((l for l in lines[i + 1:] if l.strip()), "")
        if re.match(r"^\s*exp_alerts:\s*\[\]", nxt):
            quiet.add(m.group(1))
        elif re.match(r"^\s*exp_alerts:\s*$", nxt):
            firing.add(m.group(1))
    report(len(names) > 0, "%d alert rules in %s" % (len(names), rules))
    for n in names:
        report(n in firing and n in quiet, "%s: a test where it fires and one where it does not" % n)
    for n in sorted((firing | quiet) - set(names)):
        report(False, "%s is tested but is not a rule" % n)


def cmd_names(dash, rules, text_path, doc_path):
    _, panels = panels_of(dash)
    with open(rules, encoding="utf-8") as f:
        rules_text = f.read()
    with open(text_path, encoding="utf-8") as f:
        exported = {l.split("{")[0].split(" ")[0] for l in f if l.strip() and not l.startswith("#")}
    with open(doc_path, encoding="utf-8") as f:
        doc = f.read()
    used = {}
    for p in panels:
        for t in p.get("targets", []):
            for m in METRIC.findall(t.get("expr", "")):
                used.setdefault(m, "panel %r" % p.get("title"))
    for name, expr in rule_exprs(rules_text).items():
        for m in METRIC.findall(expr):
            used.setdefault(m, "rule %s" % name)
    report(len(used) > 0, "%d metric names used by the dashboard and the rules" % len(used))
    for m in sorted(used):
        base = re.sub(r"_(bucket|sum|count)$", "", m)
        report(m in exported, "%s (%s) is exported by placement-report metrics" % (m, used[m]))
        report("`%s" % base in doc, "%s is documented in %s" % (base, doc_path))


def query(url, expr):
    q = urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen("%s/api/v1/query?%s" % (url, q), timeout=10) as r:
        return json.load(r)


def cmd_live(url, dash, rules):
    _, panels = panels_of(dash)
    for p in panels:
        for t in p.get("targets", []):
            expr = grafana_expr(t["expr"])
            try:
                r = query(url, expr)
                n = len(r["data"]["result"]) if r.get("status") == "success" else -1
                why = "%d series" % n if n >= 0 else r.get("error", "?")
            except Exception as e:  # an HTTP 400 is a query that does not parse
                n, why = -1, str(e)
            report(n >= 1, "panel %s %r target %s: %s: %s"
                   % (p["id"], p["title"], t.get("refId"), why, expr))
    with open(rules, encoding="utf-8") as f:
        rules_text = f.read()
    wanted = rule_exprs(rules_text)
    with urllib.request.urlopen("%s/api/v1/rules" % url, timeout=10) as r:
        loaded = {x["name"]: x for g in json.load(r)["data"]["groups"] for x in g["rules"]}
    for name, expr in wanted.items():
        x = loaded.get(name)
        report(x is not None and x.get("health") == "ok" and not x.get("lastError")
               and not x.get("lastEvaluation", "0001").startswith("0001"),
               "rule %s: loaded, evaluated, health %s%s" % (
                   name, x.get("health") if x else "(not loaded)",
                   (", error: " + x["lastError"]) if x and x.get("lastError") else ""))
        for m in sorted(set(METRIC.findall(expr))):
            try:
                n = len(query(url, 'count({__name__="%s"})' % m)["data"]["result"])
            except Exception:
                n = 0
            report(n >= 1, "rule %s: its metric %s has series now" % (name, m))


def main(argv):
    cmds = {"structure": (cmd_structure, 1), "coverage": (cmd_coverage, 2),
            "names": (cmd_names, 4), "live": (cmd_live, 3)}
    if len(argv) < 2 or argv[1] not in cmds or len(argv) - 2 != cmds[argv[1]][1]:
        sys.stderr.write(__doc__)
        return 2
    cmds[argv[1]][0](*argv[2:])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
