#!/usr/bin/env python3
# loadgate k6 exporter for AWS load agents (installed by agent.sh.tftpl).
#
# k6 has no Prometheus endpoint: this reads k6's REST API on the agent and
# answers Prometheus scrapes with load-test-ng's metric names, exactly as the
# local bench's exporter does (src/engine/k6/exporter.ts, formatPrometheus;
# test/engine/k6/agent-exporter.test.ts checks both give the same text). Python
# 3 standard library only, because it ships with the Ubuntu AMI.
#
# Usage: k6-exporter.py --listen 0.0.0.0:6566 --k6 127.0.0.1:6565 --pid-file /run/loadgate/k6.pid
import argparse
import json
import os
import re
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BUCKET = re.compile(r"^loadgate_req_le_(?:(\d+)(?:p(\d+))?|(inf))$")
ERROR = re.compile(r"^loadgate_req_err_(\d{1,3}|[45]xx)$")
ACTION = re.compile(r"^loadgate_action_([A-Za-z][A-Za-z0-9]*)$")
INF = float("inf")


def fmt(x):
    """A number as JavaScript's String(x) writes it, for the values used here."""
    if isinstance(x, bool):
        x = int(x)
    if isinstance(x, float):
        if x.is_integer():
            return str(int(x))
        return repr(x)
    return str(x)


def get_json(url):
    with urllib.request.urlopen(url, timeout=4) as response:
        return json.load(response)


def read_client(metrics):
    """readClientMetrics of src/engine/k6/client-metrics.ts."""
    buckets, errors, actions, totals = {}, {}, {}, {}
    for entry in metrics.get("data", []):
        attributes = entry["attributes"]
        if attributes.get("type") != "counter":
            continue
        name, count = entry["id"], attributes.get("sample", {}).get("count", 0)
        totals[name] = count
        m = BUCKET.match(name)
        if m:
            le = INF if m.group(3) else float(m.group(1) + ("." + m.group(2) if m.group(2) else ""))
            buckets[le] = count
            continue
        m = ERROR.match(name)
        if m:
            errors[m.group(1)] = count
            continue
        m = ACTION.match(name)
        if m:
            actions[m.group(1)] = count
    return {
        "buckets": buckets,
        "sum": totals.get("loadgate_req_seconds", 0),
        "timeouts": totals.get("loadgate_req_timeouts", 0),
        "errors": errors,
        "actions": actions,
        "dropped": totals.get("dropped_iterations", 0),
        "iterations": totals.get("iterations", 0),
        "script_errors": totals.get("loadgate_script_errors", 0),
    }


def cpu_seconds(pid_file):
    """utime + stime of the k6 process, or None when it is not running."""
    try:
        with open(pid_file) as f:
            pid = int(f.read().strip())
        with open("/proc/%d/stat" % pid) as f:
            text = f.read()
    except (OSError, ValueError):
        return None
    fields = text[text.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Memory:
    """Series seen before, so none disappears between scrapes (rate() stays continuous)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.bounds, self.codes, self.actions = set(), {"500"}, set()


def render(client, vus, vus_max, cpu, memory):
    """formatPrometheus of src/engine/k6/exporter.ts."""
    with memory.lock:
        memory.bounds.update(client["buckets"].keys())
        memory.codes.update(client["errors"].keys())
        memory.actions.update(client["actions"].keys())
        bounds, codes, actions = sorted(memory.bounds), sorted(memory.codes), sorted(memory.actions)
    lines = []

    def family(name, kind, text):
        lines.append("# HELP %s %s" % (name, text))
        lines.append("# TYPE %s %s" % (name, kind))

    family("loadtest_http_request_time", "histogram", "Client-side HTTP request duration in seconds, every request of the scenario.")
    cumulative = 0
    for le in bounds:
        if le == INF:
            continue
        cumulative += client["buckets"].get(le, 0)
        lines.append('loadtest_http_request_time_bucket{le="%s"} %s' % (fmt(le), fmt(cumulative)))
    cumulative += client["buckets"].get(INF, 0)
    lines.append('loadtest_http_request_time_bucket{le="+Inf"} %s' % fmt(cumulative))
    lines.append("loadtest_http_request_time_sum %s" % fmt(client["sum"]))
    lines.append("loadtest_http_request_time_count %s" % fmt(cumulative))

    family("loadtest_http_errors_total", "counter", "Client-side HTTP errors by status code (0: transport error).")
    for code in codes:
        lines.append('loadtest_http_errors_total{status_code="%s"} %s' % (code, fmt(client["errors"].get(code, 0))))

    family("loadtest_http_timeouts_total", "counter", "Client-side requests that hit the per-request timeout.")
    lines.append("loadtest_http_timeouts_total %s" % fmt(client["timeouts"]))

    family("loadgate_engine_active_users", "gauge", "Simulated users (k6 VUs) currently active.")
    lines.append("loadgate_engine_active_users %s" % fmt(vus))
    family("loadgate_engine_max_users", "gauge", "Simulated users (k6 VUs) initialised.")
    lines.append("loadgate_engine_max_users %s" % fmt(vus_max))

    if cpu is not None:
        family("loadgate_engine_cpu_seconds_total", "counter", "CPU time used by the k6 process (user + system).")
        lines.append("loadgate_engine_cpu_seconds_total %s" % fmt(cpu))

    family("loadgate_engine_dropped_iterations_total", "counter", "Iterations k6 could not start in time.")
    lines.append("loadgate_engine_dropped_iterations_total %s" % fmt(client["dropped"]))
    family("loadgate_engine_iterations_total", "counter", "Scenario iterations (one action and its idle time each).")
    lines.append("loadgate_engine_iterations_total %s" % fmt(client["iterations"]))
    family("loadgate_engine_script_errors_total", "counter", "Exceptions inside the scenario script.")
    lines.append("loadgate_engine_script_errors_total %s" % fmt(client["script_errors"]))

    if actions:
        family("loadgate_engine_actions_total", "counter", "Simulated user actions started, by action.")
        for action in actions:
            lines.append('loadgate_engine_actions_total{action="%s"} %s' % (action, fmt(client["actions"].get(action, 0))))
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--listen", default="0.0.0.0:6566")
    parser.add_argument("--k6", default="127.0.0.1:6565")
    parser.add_argument("--pid-file", default="/run/loadgate/k6.pid")
    args = parser.parse_args()
    host, port = args.listen.rsplit(":", 1)
    memory = Memory()
    k6 = "http://" + args.k6

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path.split("?")[0] != "/metrics":
                self.send_response(404)
                self.end_headers()
                self.wfile.write(b"loadgate k6 exporter: scrape /metrics\n")
                return
            try:
                status = get_json(k6 + "/v1/status")["data"]["attributes"]
                client = read_client(get_json(k6 + "/v1/metrics"))
                body = render(client, status.get("vus") or 0, status.get("vus-max") or 0, cpu_seconds(args.pid_file), memory)
                code, kind = 200, "text/plain; version=0.0.4; charset=utf-8"
            except Exception as error:  # k6 not running (between runs): up == 0, not stale numbers
                body, code, kind = "k6 is not answering: %s\n" % error, 503, "text/plain"
            data = body.encode("utf-8")
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *_):
            pass

    ThreadingHTTPServer((host, int(port)), Handler).serve_forever()


if __name__ == "__main__":
    main()
