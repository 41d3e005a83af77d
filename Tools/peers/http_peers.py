"""W3 and W2 over HTTP, as a user sends them: hkd's HTTP API beside VictoriaMetrics' query API, both through `curl`.

`run_peers.py --http` runs this. hkd (a separate process, `--auth off` as VictoriaMetrics has no tokens) holds W1
under `w3-subject`, loaded by `hkbench w3 --server`; VictoriaMetrics holds the same rows, loaded as in run_peers.
Then, round after round and in a changing order, each command runs once as a whole process (one `posix_spawn`,
stdout to /dev/null, a blocking `wait4`: wall time and the child's CPU time; and the server's clock ticks):

- W3 heartRate 92-day min/max/avg: `curl` to hkd's `/v1/subjects/…/statistics`, `curl` to VictoriaMetrics'
  `/api/v1/query`, and `hkq stats` (hkd's binary protocol) for reference;
- W2 daily stepCount sums in America/New_York: `curl` to hkd's `/v1/subjects/…/collection` and
  `hkq collection … --format json` (the same bytes); and VictoriaMetrics' nearest query, daily sums on the UTC
  grid through `curl` to `/api/v1/query_range` (other buckets: a reference, not the same query);
- `curl file:///dev/null`, curl's own start, and `/bin/true`, the machine's own cost of a process.

A second phase sends the same HTTP requests over one persistent connection per server from this process. Every
answer is checked before the clock starts: min/max/avg equal across the systems and the dataset, the daily sums
equal the dataset's, curl's body equal hkq's output byte for byte.
"""

import datetime as dt
import http.client
import json
import os
import shlex
import shutil
import statistics
import subprocess
import tempfile
import time
import urllib.parse
import zoneinfo

import run_peers as peers

SUBJECT = "w3-subject"  # where `hkbench w3 --server` loads W1's rows
W2_ANCHOR = "2020-01-01"
FIRST_DAY = dt.date(2020, 1, 1)
UTC_DAYS = 1827  # UTC days of W1's data: 2020-01-01 through 2024-12-31 (the last one until 06:00)


class Target:
    """One query as a command line (for the whole-process phase) and as a request (for the persistent phase)."""

    def __init__(self, label, system, argv, port=None, path=None, server=None):
        self.label, self.system, self.argv, self.port, self.path = label, system, argv, port, path
        self.server = server  # the pid of the server that answers it
        # As a user types it: hkq by name, not the fresh copy's path.
        self.command = shlex.join(["hkq"] + argv[1:] if argv[0].endswith("/hkq") else argv)


def spawn_timed(argv, env):
    """Runs `argv` with stdout to /dev/null: wall seconds from spawn to exit, and the child's CPU seconds."""
    started = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, env, file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(argv)[:200]}: exit status {os.waitstatus_to_exitcode(status)}")
    return wall, usage.ru_utime + usage.ru_stime


def fresh_copy(path, directory):
    """A copy of a binary written with one `write` (see Tools/hkbench/HKQBenchmark.swift: a binary that has aged
    in the page cache starts slower than a fresh copy of itself)."""
    copy = os.path.join(directory, os.path.basename(path))
    with open(path, "rb") as f:
        data = f.read()
    fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o755)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    return copy


def cpu_ticks(pid):
    """User plus system clock ticks of a process, all its threads."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def wait_until_idle(pid, seconds=120):
    """Waits until a process uses at most one clock tick in half a second (sealing, flushing, merging done)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        before = cpu_ticks(pid)
        time.sleep(0.5)
        if cpu_ticks(pid) - before <= 1:
            return
    raise RuntimeError(f"process {pid} still busy after {seconds} s")


def expected_answers(dataset):
    """From the dataset itself: W3's heartRate min/max/avg, and the daily step sums by New York date and UTC date."""
    first = dataset.starts[0]
    if dataset.starts[-1] - first != 60 * (len(dataset.starts) - 1):
        raise RuntimeError("the dataset is not one row a minute")

    def index(t):
        """The first row starting at or after `t`."""
        return max(0, min(len(dataset.starts), -(-(t - first) // 60)))

    heart = dataset.values["heartRate"][index(peers.WINDOW_START):index(peers.WINDOW_END)]
    steps = dataset.values["stepCount"]
    zone = zoneinfo.ZoneInfo(peers.ZONE)

    def daily(tz, first_day, days):
        sums = {}
        for n in range(days):
            day = first_day + dt.timedelta(days=n)
            a = dt.datetime.combine(day, dt.time(), tz).timestamp()
            b = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(), tz).timestamp()
            sums[day.isoformat()] = sum(steps[index(int(a)):index(int(b))])
        return sums

    # W1 starts at 2020-01-01T00:00Z, 19:00 on 2019-12-31 in New York.
    return {"min": min(heart), "max": max(heart), "avg": sum(heart) / len(heart),
            "nyDays": daily(zone, FIRST_DAY - dt.timedelta(days=1), 1828),
            "utcDays": daily(dt.timezone.utc, FIRST_DAY, UTC_DAYS)}


def check_w3(hkd_body, vm_body, expected):
    """hkd's and VictoriaMetrics' min/max/avg against each other and the dataset."""
    ours = json.loads(hkd_body)
    theirs = {r["metric"]["rollup"]: float(r["value"][1]) for r in json.loads(vm_body)["data"]["result"]}
    answers = {"hkd": (ours["minimum"], ours["maximum"], ours["average"]),
               "VictoriaMetrics": (theirs["min_over_time"], theirs["max_over_time"], theirs["avg_over_time"]),
               "dataset": (expected["min"], expected["max"], expected["avg"])}
    for name, (lo, hi, avg) in answers.items():
        if lo != expected["min"] or hi != expected["max"] or abs(avg - expected["avg"]) > 1e-9 * expected["avg"]:
            raise RuntimeError(f"W3: {name} answered {lo}/{hi}/{avg}, the dataset {answers['dataset']}")
    return {name: f"min {a[0]:g}, max {a[1]:g}, avg {a[2]!r}" for name, a in answers.items()}


def check_w2(curl_body, hkq_body, expected):
    """hkd's daily sums: curl's body the same bytes as hkq's, every bucket's sum the dataset's."""
    if curl_body != hkq_body:
        raise RuntimeError(f"W2: curl's body ({len(curl_body)} bytes) differs from hkq's ({len(hkq_body)} bytes)")
    buckets = json.loads(curl_body)
    sums = {b["start"][:10]: b["sum"] for b in buckets}
    if len(buckets) != 1828 or sums != expected["nyDays"]:
        wrong = [d for d in expected["nyDays"] if sums.get(d) != expected["nyDays"][d]][:3]
        raise RuntimeError(f"W2: {len(buckets)} buckets; sums differ from the dataset's on {wrong}")
    return f"{len(buckets)} buckets, every sum the dataset's; curl's body = hkq's ({len(curl_body):,} bytes)"


def check_utc_days(vm_body, expected):
    """VictoriaMetrics' UTC-day sums, each point at a day's last second summing that UTC day, against the dataset."""
    values = json.loads(vm_body)["data"]["result"][0]["values"]
    sums = {dt.datetime.fromtimestamp(t + 1 - 86_400, dt.timezone.utc).date().isoformat(): float(v)
            for t, v in values}
    if sums != {d: float(s) for d, s in expected["utcDays"].items()}:
        raise RuntimeError(f"VictoriaMetrics' UTC-day sums differ from the dataset's ({len(sums)} points)")
    return f"{len(sums)} UTC days, every sum the dataset's ({len(vm_body):,} bytes)"


def fetch(port, path):
    """One GET on a new connection: the body, or an error naming the status."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
        if response.status != 200:
            raise RuntimeError(f"GET {path[:100]}: HTTP {response.status}: {body[:300]!r}")
        return body
    finally:
        connection.close()


def summary(walls, cpus=None, server_ticks=None):
    """Median, quartiles, min and p99 of the wall times; the median CPU of the process timed; the server's
    CPU per run (its clock ticks over all runs: sampled per tick, so right on average only)."""
    walls = sorted(walls)
    n = len(walls)
    out = {"runs": n, "median": statistics.median(walls), "p25": walls[n // 4], "p75": walls[(3 * n) // 4],
           "min": walls[0], "p99": walls[min(n - 1, (99 * n) // 100)]}
    if cpus is not None:
        out["cpuMedian"] = statistics.median(cpus)
    if server_ticks is not None and None not in server_ticks:
        out["serverCPUPerRun"] = sum(server_ticks) / os.sysconf("SC_CLK_TCK") / n
    return out


def rounds(targets, runs, measure):
    """`measure(target)` for every target once a round, the order rotated and reversed every other round (the
    first command after another is slower whichever it is); per target, the list of what `measure` returned."""
    results = [[] for _ in targets]
    for r in range(runs):
        order = list(range(len(targets)))
        order = order[r % len(order):] + order[:r % len(order)]
        if r % 2:
            order.reverse()
        for i in order:
            results[i].append(measure(targets[i]))
    return results


def with_server_ticks(measure):
    """`measure(target)` and the clock ticks the target's server used meanwhile (None without a server)."""
    def measured(target):
        if not target.server:
            return measure(target), None
        before = cpu_ticks(target.server)
        result = measure(target)
        return result, cpu_ticks(target.server) - before
    return measured


def paired_ratio(numerators, denominators):
    """The median of round-by-round ratios: robust to the machine's speed changing between rounds."""
    return statistics.median(a / b for a, b in zip(numerators, denominators))


def start_servers(servers, hkd, hkbench, dataset, workdir):
    """Starts hkd (in its own process, W1 loaded through the client by `hkbench w3 --server`) and VictoriaMetrics
    (W1 loaded as run_peers loads it), and waits until both are idle. Fills `servers` as it goes (hkd's process,
    its two ports, its log, the peer), so `stop_servers` stops what started even when a step fails."""
    port, http_port = peers.free_port(), peers.free_port()
    log = open(os.path.join(workdir, "hkd.log"), "w")
    servers.update(port=port, httpPort=http_port, log=log)
    process = subprocess.Popen(
        [hkd, "--listen", f"127.0.0.1:{port}", "--http-listen", f"127.0.0.1:{http_port}", "--data-dir",
         os.path.join(workdir, "hkd-data"), "--auth", "off"], stderr=log)
    servers["hkd"] = process
    peers.wait_for_port(port, process)
    peers.wait_for_port(http_port, process)
    subprocess.run([hkbench, "w3", "--server", f"127.0.0.1:{port}", "--runs", "20"], check=True,
                   stdout=subprocess.DEVNULL)
    print(f"== hkd: W1 loaded under {SUBJECT}", flush=True)
    vm = peers.VictoriaMetrics(workdir)
    servers["vm"] = vm
    vm.start()
    vm.ingest(dataset)
    deadline = time.monotonic() + 60
    while not vm.query("count_over_time(heartRate_value[92d])", peers.WINDOW_END - 1):
        if time.monotonic() > deadline:
            raise RuntimeError("VictoriaMetrics: the loaded rows are not searchable after a minute")
        time.sleep(0.5)
    print(f"== {vm.name}: W1 loaded", flush=True)
    wait_until_idle(process.pid)
    wait_until_idle(vm.process.pid)


def stop_servers(servers):
    """Stops whatever `start_servers` started."""
    if "vm" in servers and getattr(servers["vm"], "process", None) is not None:
        servers["vm"].stop()
    if "hkd" in servers:
        servers["hkd"].terminate()
        servers["hkd"].wait(60)
    if "log" in servers:
        servers["log"].close()


def make_targets(servers, hkq, curl):
    """The commands and requests timed, by key."""
    vm, hkd_pid, vm_pid = servers["vm"], servers["hkd"].pid, servers["vm"].process.pid
    at = peers.WINDOW_END - 1  # as run_peers: (t - 92d, t] holds the samples starting in [start, end)
    w3_vm = "/api/v1/query?" + urllib.parse.urlencode({
        "nocache": 1, "time": at,
        "query": 'aggr_over_time(("min_over_time", "max_over_time", "avg_over_time"), heartRate_value[92d])'})
    # strict-start: samples starting in [start, end), as the peers count them (HealthKit's default predicate
    # also takes the sample that ends at the window's start).
    w3_hkd = f"/v1/subjects/{SUBJECT}/statistics?" + urllib.parse.urlencode({
        "type": "heartRate", "from": peers.iso(peers.WINDOW_START), "to": peers.iso(peers.WINDOW_END),
        "options": "min,max,avg", "strict-start": "", "tz": "UTC"}, safe=",:")
    w2_hkd = f"/v1/subjects/{SUBJECT}/collection?" + urllib.parse.urlencode({
        "type": "stepCount", "interval": "1d", "tz": peers.ZONE, "anchor": W2_ANCHOR}, safe="/")
    # Each point at a UTC day's last second sums that day: (t - 1d, t].
    first_end = int(dt.datetime.combine(FIRST_DAY, dt.time(), dt.timezone.utc).timestamp()) + 86_400 - 1
    utc_vm = "/api/v1/query_range?" + urllib.parse.urlencode({
        "nocache": 1, "start": first_end, "end": first_end + (UTC_DAYS - 1) * 86_400, "step": "1d",
        "query": "sum_over_time(stepCount_value[1d])"})
    hkq_global = [hkq, "--server", f"127.0.0.1:{servers['port']}", "--subject", SUBJECT]
    hkd_http, vm_http = (servers["httpPort"], hkd_pid), (vm.port, vm_pid)

    def curl_get(server, path):
        return {"argv": [curl, "-sS", "--fail", f"http://127.0.0.1:{server[0]}{path}"], "port": server[0],
                "server": server[1], "path": path}

    return {
        "W3 curl hkd": Target("W3", "hkd over HTTP", **curl_get(hkd_http, w3_hkd)),
        "W3 curl VM": Target("W3", vm.name, **curl_get(vm_http, w3_vm)),
        "W3 hkq": Target("W3", "hkd through hkq", hkq_global + [
            "stats", "heartRate", "--from", peers.iso(peers.WINDOW_START), "--to", peers.iso(peers.WINDOW_END),
            "--options", "min,max,avg", "--strict-start", "--tz", "UTC", "--format", "json"], server=hkd_pid),
        "W2 curl hkd": Target("W2", "hkd over HTTP", **curl_get(hkd_http, w2_hkd)),
        "W2 hkq": Target("W2", "hkd through hkq", hkq_global + [
            "collection", "stepCount", "--interval", "1d", "--tz", peers.ZONE, "--anchor", W2_ANCHOR,
            "--format", "json"], server=hkd_pid),
        "UTC days curl VM": Target("UTC days", vm.name, **curl_get(vm_http, utc_vm)),
        "curl alone": Target("process", "curl alone (file:///dev/null)", [curl, "-sS", "file:///dev/null"]),
        "true": Target("process", "/bin/true", ["/bin/true"]),
    }


def check_answers(targets, expected):
    """Runs every command once and checks the answers agree, before any clock starts."""
    out = {k: subprocess.run(t.argv, check=True, capture_output=True).stdout for k, t in targets.items()}
    if out["W3 hkq"] != out["W3 curl hkd"]:
        raise RuntimeError(f"W3: hkq printed {out['W3 hkq'][:200]!r}, curl {out['W3 curl hkd'][:200]!r}")
    return {
        "W3": check_w3(out["W3 curl hkd"], out["W3 curl VM"], expected) | {"hkq": "the same bytes as curl's"},
        "W2": check_w2(out["W2 curl hkd"], out["W2 hkq"], expected),
        "UTC days": check_utc_days(out["UTC days curl VM"], expected),
    }


def time_processes(targets, runs):
    """Each command as a whole process, every one once a round."""
    env = dict(os.environ)
    keys = list(targets)
    results = rounds([targets[k] for k in keys], runs, with_server_ticks(lambda t: spawn_timed(t.argv, env)))
    figures = {}
    for k, r in zip(keys, results):
        t = targets[k]
        figures[k] = summary([w for (w, _), _ in r], [c for (_, c), _ in r], [s for _, s in r]) | {
            "label": t.label, "system": t.system, "command": t.command, "walls": [w for (w, _), _ in r]}
    ratios = {
        "W3 VictoriaMetrics ÷ hkd, both through curl": ("W3 curl VM", "W3 curl hkd"),
        "W3 curl ÷ hkq, both to hkd": ("W3 curl hkd", "W3 hkq"),
        "W2 curl ÷ hkq, both to hkd": ("W2 curl hkd", "W2 hkq"),
    }
    return figures, {name: paired_ratio(figures[a]["walls"], figures[b]["walls"]) for name, (a, b) in ratios.items()}


def time_persistent(targets, runs):
    """The HTTP requests over one persistent connection per server, every one once a round."""
    requests = {k: t for k, t in targets.items() if t.path}
    connections = {t.port: http.client.HTTPConnection("127.0.0.1", t.port, timeout=60) for t in requests.values()}
    bodies = {}

    def request(t):
        connection = connections[t.port]
        started = time.perf_counter()
        connection.request("GET", t.path)
        response = connection.getresponse()
        body = response.read()
        wall = time.perf_counter() - started
        if response.status != 200 or bodies.setdefault(t.path, body) != body:
            raise RuntimeError(f"GET {t.path[:100]}: HTTP {response.status}, or another body than before")
        return wall

    for t in requests.values():
        for _ in range(3):
            request(t)
        if bodies[t.path] != fetch(t.port, t.path):
            raise RuntimeError(f"GET {t.path[:100]}: another body on a new connection")
    keys = list(requests)
    results = rounds([requests[k] for k in keys], runs, with_server_ticks(request))
    for c in connections.values():
        c.close()
    figures = {k: summary([w for w, _ in r], server_ticks=[s for _, s in r]) | {
        "label": requests[k].label, "system": requests[k].system, "path": requests[k].path,
        "walls": [w for w, _ in r]} for k, r in zip(keys, results)}
    ratio = paired_ratio(figures["W3 curl VM"]["walls"], figures["W3 curl hkd"]["walls"])
    return figures, {"W3 VictoriaMetrics ÷ hkd": ratio}


def run(args, root):
    hkbench = args.hkbench
    hkd = args.hkd or os.path.join(root, ".build/release/hkd")
    hkq = args.hkq or os.path.join(os.path.dirname(hkbench), "hkq")
    curl = shutil.which("curl")
    if not curl:
        raise SystemExit("curl not found (apt-get install -y curl)")
    workdir = tempfile.mkdtemp(prefix="hkpeers-http-")
    os.chmod(workdir, 0o755)
    servers = {}
    figures = {"runs": args.runs}
    try:
        csv_path = os.path.join(workdir, "w1.csv")
        subprocess.run([hkbench, "dataset", "--out", csv_path], check=True)
        os.chmod(csv_path, 0o644)
        dataset = peers.Dataset(csv_path)
        expected = expected_answers(dataset)
        start_servers(servers, hkd, hkbench, dataset, workdir)
        figures["vm"] = servers["vm"].name
        targets = make_targets(servers, fresh_copy(hkq, workdir), curl)
        figures["answers"] = check_answers(targets, expected)
        print("   answers agree: " + json.dumps(figures["answers"]), flush=True)
        figures["loadBefore"] = os.getloadavg()
        figures["startedUTC"] = dt.datetime.now(dt.timezone.utc).isoformat()
        figures["processes"], figures["processRatios"] = time_processes(targets, args.runs)
        figures["persistent"], figures["persistentRatios"] = time_persistent(targets, args.runs)
        figures["loadAfter"] = os.getloadavg()
        figures["endedUTC"] = dt.datetime.now(dt.timezone.utc).isoformat()
    finally:
        stop_servers(servers)
        shutil.rmtree(workdir, ignore_errors=True)

    text = report(figures)
    print("\n" + text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=1, default=str)


def ms(seconds):
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 or seconds == 0 else f"{seconds * 1e6:.0f} µs"


def report(f):
    load = lambda a: " / ".join(f"{x:.2f}" for x in a)  # noqa: E731
    server_cpu = lambda p: ms(p["serverCPUPerRun"]) if "serverCPUPerRun" in p else "—"  # noqa: E731
    lines = [
        f"### W3 and W2 over HTTP ({f['startedUTC'][:16]}Z to {f['endedUTC'][11:16]}Z, {f['runs']} rounds)", "",
        f"Load average (1 / 5 / 15 min) {load(f['loadBefore'])} before, {load(f['loadAfter'])} after. "
        "Each round runs every command once as a whole process, in a changing order: wall time from spawn to exit, "
        "the process's CPU time (`wait4`), and the server's CPU per request (its clock ticks over all rounds).", "",
        "| query | system | wall median | p25–p75 | min | CPU median | server CPU |",
        "|---|---|---:|---:|---:|---:|---:|"]
    for p in f["processes"].values():
        lines.append(f"| {p['label']} | {p['system']} | **{ms(p['median'])}** | {ms(p['p25'])}–{ms(p['p75'])} | "
                     f"{ms(p['min'])} | {ms(p['cpuMedian'])} | {server_cpu(p)} |")
    lines += ["", "Round-by-round ratios (median): " + "; ".join(
        f"{k} {v:.2f}×" for k, v in f["processRatios"].items()) + ".", "",
        "One persistent connection per server (Python's http.client, rounds as above):", "",
        "| query | system | median | p25–p75 | min | p99 | server CPU |", "|---|---|---:|---:|---:|---:|---:|"]
    for p in f["persistent"].values():
        lines.append(f"| {p['label']} | {p['system']} | **{ms(p['median'])}** | {ms(p['p25'])}–{ms(p['p75'])} | "
                     f"{ms(p['min'])} | {ms(p['p99'])} | {server_cpu(p)} |")
    lines += ["", "Round-by-round ratio (median): " + "; ".join(
        f"{k} {v:.2f}×" for k, v in f["persistentRatios"].items()) + ".", "", "Answers:", ""]
    lines.append("- W3: " + "; ".join(f"{k}: {v}" for k, v in f["answers"]["W3"].items()))
    lines.append("- W2: " + f["answers"]["W2"])
    lines.append(f"- {f['vm']}, UTC days (not W2's buckets): " + f["answers"]["UTC days"])
    lines += ["", "Commands:", ""] + [
        f"- {p['label']}, {p['system']}: `{p['command']}`" for p in f["processes"].values()]
    return "\n".join(lines)
