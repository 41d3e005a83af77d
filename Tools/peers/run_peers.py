#!/usr/bin/env python3
"""W1, W2 and W3 of docs/PEERS.md against hkd and its peers, in one run, with ratios.

hkd's figures come from `hkbench w1/w3 --json` run by this script; the peers load the identical dataset that
`hkbench dataset --out FILE` writes. A peer that cannot be started is skipped with the reason. Nothing here is
a runtime dependency of hkd. See README.md beside this file.
"""

import argparse
import csv
import datetime as dt
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import zoneinfo

BATCH_ROWS = 10_000
SERIES = ("stepCount", "heartRate")
# W3: the same window and instant as Tools/hkbench/W3Benchmark.swift.
WINDOW_START = 1_656_633_600  # 2022-07-01T00:00Z
WINDOW_END = WINDOW_START + 92 * 86_400  # 2022-10-01T00:00Z
INSTANT = 1_718_454_896  # 2024-06-15T12:34:56Z
ZONE = "America/New_York"
W3_QUERIES = ("heartRate 92-day min/max/avg", "stepCount 92-day sum", "heartRate most recent before instant")


def iso(seconds):
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, process, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"exited with status {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"port {port} did not open in {seconds} s")


def latencies(work, runs, budget_seconds):
    """Median and p99 (seconds) of up to `runs` timed calls after 3 untimed ones, stopping after the budget."""
    t0 = time.perf_counter()
    for _ in range(3):
        work()
    # At least 20 runs, or 5 for queries so slow that 20 would take far beyond the budget.
    at_least = 20 if (time.perf_counter() - t0) / 3 * 20 < 4 * budget_seconds else 5
    samples = []
    started = time.perf_counter()
    while len(samples) < runs and (len(samples) < at_least or time.perf_counter() - started < budget_seconds):
        t0 = time.perf_counter()
        work()
        samples.append(time.perf_counter() - t0)
    samples.sort()
    p99 = samples[min(len(samples) - 1, max(0, -(-99 * len(samples) // 100) - 1))]
    return {"median": statistics.median(samples), "p99": p99, "runs": len(samples)}


def first_row_text(rows):
    """A SQL result's first row as text, for the answers table."""
    return [str(v) for v in rows[0]]


def timed_queries(queries, run, answer, runs, budget):
    """W3: per label, the latencies of `run(query)` and the `answer` drawn from one more result."""
    out = {}
    for label, query in queries.items():
        out[label] = latencies(lambda: run(query), runs, budget)
        out[label]["answer"] = answer(run(query))
    return out


def timed_daily_sums(run, query, rows_of, day_of, runs, budget):
    """W2: latencies of `run(query)` and the check against the expected buckets (count in a row's third field)."""
    rows = rows_of(run(query))
    counts = {day_of(r): int(r[2]) for r in rows}
    out = latencies(lambda: run(query), runs, budget)
    out["check"] = {"buckets": len(rows), "2020-03-08 rows": counts.get("2020-03-08"),
                    "2020-11-01 rows": counts.get("2020-11-01")}
    return out


class Dataset:
    """The W1 rows as written by `hkbench dataset`: start (Unix seconds), stepCount, heartRate."""

    def __init__(self, path):
        self.path = path
        self.starts, self.values = [], {name: [] for name in SERIES}
        with open(path, newline="") as f:
            reader = csv.reader(f)
            next(reader)
            for start, steps, heart in reader:
                self.starts.append(int(start))
                self.values["stepCount"].append(int(steps))
                self.values["heartRate"].append(int(heart))

    @property
    def samples(self):
        return len(self.starts) * len(SERIES)

    def batches(self, encode):
        """Payloads of at most BATCH_ROWS rows of one series each, stepCount first, as `encode` formats them.

        Formatted before the clock starts: the peers' W1 time is the protocol and the server, not Python."""
        out = []
        for series_id, name in enumerate(SERIES, start=1):
            values = self.values[name]
            for first in range(0, len(self.starts), BATCH_ROWS):
                rows = range(first, min(first + BATCH_ROWS, len(self.starts)))
                out.append(encode(series_id, name, ((self.starts[r], values[r]) for r in rows)))
        return out

    def expected_w2(self):
        """Rows on the first spring-forward and fall-back days (2020-03-08, 2020-11-01) in New York."""
        return {"buckets": 1828, "2020-03-08 rows": 1380, "2020-11-01 rows": 1500}


# MARK: peers. Each has: name, durability, start(), ingest(dataset) -> seconds or None, w3(runs) -> dict,
# w2() -> dict or None, stop().


class HTTPPeer:
    """A peer spoken to over one persistent HTTP/1.1 connection."""

    def connect(self):
        self.http = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)

    def request(self, method, path, body=None, expect=(200, 204)):
        self.http.request(method, path, body=body)
        response = self.http.getresponse()
        data = response.read()
        if response.status not in expect:
            raise RuntimeError(f"{method} {path[:80]}: HTTP {response.status}: {data[:300]!r}")
        return data

    def ingest_lines(self, dataset, path):
        def encode(_series_id, name, rows):
            return "".join(f"{name} value={v} {t}\n" for t, v in rows).encode()

        payloads = dataset.batches(encode)
        started = time.perf_counter()
        for payload in payloads:
            self.request("POST", path, payload)
        return time.perf_counter() - started


class InfluxDB(HTTPPeer):
    name = "InfluxDB 1.6.7"
    durability = "WAL written and fsynced per write request (wal-fsync-delay 0s, the default)"

    def __init__(self, workdir):
        self.dir = os.path.join(workdir, "influxdb")

    def start(self):
        if not shutil.which("influxd"):
            raise RuntimeError("influxd not installed (apt-get install -y influxdb)")
        os.makedirs(self.dir)
        self.port = free_port()
        config = os.path.join(self.dir, "influxdb.conf")
        with open(config, "w") as f:
            f.write(
                f'reporting-disabled = true\nbind-address = "127.0.0.1:{free_port()}"\n'
                f'[meta]\n  dir = "{self.dir}/meta"\n'
                f'[data]\n  dir = "{self.dir}/data"\n  wal-dir = "{self.dir}/wal"\n  query-log-enabled = false\n'
                f'[http]\n  bind-address = "127.0.0.1:{self.port}"\n  log-enabled = false\n'
                f"[monitor]\n  store-enabled = false\n[continuous_queries]\n  enabled = false\n"
            )
        self.log = open(os.path.join(self.dir, "influxd.log"), "w")
        self.process = subprocess.Popen(["influxd", "-config", config], stdout=self.log, stderr=self.log)
        wait_for_port(self.port, self.process)
        self.connect()
        self.request("POST", "/query?q=" + urllib.parse.quote("CREATE DATABASE w"))

    def query(self, q):
        data = self.request("GET", "/query?db=w&epoch=s&q=" + urllib.parse.quote(q))
        result = json.loads(data)["results"][0]
        if "error" in result:
            raise RuntimeError(result["error"])
        return result.get("series", [])

    def ingest(self, dataset):
        return self.ingest_lines(dataset, "/write?db=w&precision=s")

    def w3(self, runs, budget):
        a, b, x = iso(WINDOW_START), iso(WINDOW_END), iso(INSTANT)
        queries = {
            W3_QUERIES[0]: f"SELECT min(value), max(value), mean(value) FROM heartRate WHERE time >= '{a}' AND time < '{b}'",
            W3_QUERIES[1]: f"SELECT sum(value) FROM stepCount WHERE time >= '{a}' AND time < '{b}'",
            W3_QUERIES[2]: f"SELECT value FROM heartRate WHERE time < '{x}' ORDER BY time DESC LIMIT 1",
        }
        return timed_queries(queries, self.query, lambda series: series[0]["values"][0], runs, budget)

    def w2(self, runs, budget):
        q = (
            "SELECT sum(value), count(value) FROM stepCount WHERE time >= '2019-12-31T05:00:00Z' "
            f"AND time < '2025-01-01T05:00:00Z' GROUP BY time(1d) fill(none) tz('{ZONE}')"
        )
        return timed_daily_sums(
            self.query, q, lambda series: series[0]["values"],
            lambda r: dt.datetime.fromtimestamp(r[0], dt.timezone.utc).strftime("%Y-%m-%d"), runs, budget)

    def stop(self):
        self.process.terminate()
        self.process.wait(30)
        self.log.close()


class VictoriaMetrics(HTTPPeer):
    name = "VictoriaMetrics"
    durability = "no WAL: acknowledged once buffered in memory, flushed about every second (lost on kill -9)"

    def __init__(self, workdir):
        self.dir = os.path.join(workdir, "victoria-metrics")

    def start(self):
        binary = shutil.which("victoria-metrics")
        if not binary:
            raise RuntimeError("victoria-metrics not installed (apt-get install -y victoria-metrics)")
        os.makedirs(self.dir)
        self.port = free_port()
        self.log = open(os.path.join(self.dir, "vm.log"), "w")
        self.process = subprocess.Popen(
            [binary, f"-storageDataPath={self.dir}/data", f"-httpListenAddr=127.0.0.1:{self.port}",
             "-retentionPeriod=100y", "-search.disableCache"],
            stdout=self.log, stderr=self.log)
        wait_for_port(self.port, self.process)
        self.connect()
        version = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "victoria-metrics"], capture_output=True,
                                 text=True).stdout.split("+")[0]
        self.name = f"VictoriaMetrics {version}" if version else self.name

    def ingest(self, dataset):
        seconds = self.ingest_lines(dataset, "/write?precision=s")
        self.request("GET", "/internal/force_flush")
        return seconds

    def query(self, q, at):
        path = "/api/v1/query?nocache=1&time=" + str(at) + "&query=" + urllib.parse.quote(q)
        result = json.loads(self.request("GET", path))
        if result.get("status") != "success":
            raise RuntimeError(str(result)[:300])
        return result["data"]["result"]

    def w3(self, runs, budget):
        # (t - 92d, t] with t one second before the window's end: samples starting in [start, end).
        at = WINDOW_END - 1
        queries = {
            W3_QUERIES[0]: ('aggr_over_time(("min_over_time", "max_over_time", "avg_over_time"), heartRate_value[92d])', at),
            W3_QUERIES[1]: ("sum_over_time(stepCount_value[92d])", at),
            W3_QUERIES[2]: ("last_over_time(heartRate_value[1h])", INSTANT),
        }
        # Wait until the flushed rows are searchable.
        deadline = time.monotonic() + 30
        while not self.query("count_over_time(heartRate_value[92d])", at) and time.monotonic() < deadline:
            time.sleep(0.5)
        return timed_queries(
            queries, lambda query: self.query(*query),
            lambda result: [(r["metric"].get("rollup", r["metric"].get("__name__", "")), r["value"][1]) for r in result],
            runs, budget)

    def w2(self, runs, budget):
        return None  # UTC grid only: local-day buckets are not expressible.

    def capacity(self):
        """Resident memory with the data loaded and queried, the data directory's bytes after a clean stop, and
        the time from a restart until the data answers a query."""
        figures = {"residentBytes": resident_bytes(self.process.pid)}
        self.process.terminate()
        self.process.wait(60)
        figures["diskBytes"] = disk_bytes(os.path.join(self.dir, "data"))
        started = time.perf_counter()
        self.process = subprocess.Popen(
            [shutil.which("victoria-metrics"), f"-storageDataPath={self.dir}/data",
             f"-httpListenAddr=127.0.0.1:{self.port}", "-retentionPeriod=100y", "-search.disableCache"],
            stdout=self.log, stderr=self.log)
        wait_for_port(self.port, self.process)
        self.connect()
        while not self.query("count_over_time(heartRate_value[92d])", WINDOW_END - 1):
            time.sleep(0.01)
        figures["restartSeconds"] = time.perf_counter() - started
        return figures

    def stop(self):
        self.process.terminate()
        self.process.wait(30)
        self.log.close()


class PostgreSQL:
    name = "PostgreSQL 15"
    durability = "WAL written and fsynced at each COPY's commit (fsync=on, synchronous_commit=on, the defaults)"

    def __init__(self, workdir):
        self.dir = os.path.join(workdir, "postgres")

    def start(self):
        import psycopg  # noqa: F401 (fails here, so the peer is skipped, when psycopg is missing)

        for tool in ("initdb", "pg_ctl"):
            if not shutil.which(tool):
                raise RuntimeError(f"{tool} not found")
        os.makedirs(self.dir)
        # PostgreSQL refuses to run as root: run it as nobody in a directory nobody owns.
        self.user = ["runuser", "-u", "nobody", "--"] if os.geteuid() == 0 else []
        if self.user:
            shutil.chown(self.dir, "nobody", "nogroup")
        self.data = os.path.join(self.dir, "data")
        self.port = free_port()
        run = lambda *args: subprocess.run(self.user + list(args), check=True, capture_output=True)  # noqa: E731
        run("initdb", "-D", self.data, "-U", "bench", "--auth=trust", "-E", "UTF8", "--locale=C")
        run("pg_ctl", "-D", self.data, "-l", os.path.join(self.dir, "pg.log"), "-w", "start", "-o",
            f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1")
        import psycopg

        self.conn = psycopg.connect(host="127.0.0.1", port=self.port, user="bench", dbname="postgres", autocommit=True)
        self.conn.execute("CREATE TABLE samples (series smallint NOT NULL, ts timestamptz NOT NULL, "
                          "value double precision NOT NULL, PRIMARY KEY (series, ts))")

    def ingest(self, dataset):
        # COPY's text format takes timestamps as ISO 8601 text.
        def encode_iso(series_id, name, rows):
            return "".join(f"{series_id}\t{iso(t)}\t{v}\n" for t, v in rows).encode()

        payloads = dataset.batches(encode_iso)
        cursor = self.conn.cursor()
        started = time.perf_counter()
        for payload in payloads:
            with cursor.copy("COPY samples (series, ts, value) FROM STDIN") as copy:
                copy.write(payload)
        seconds = time.perf_counter() - started
        self.conn.execute("VACUUM ANALYZE samples")
        return seconds

    def one(self, sql, params=()):
        return self.conn.execute(sql, params).fetchall()

    def w3(self, runs, budget):
        a = dt.datetime.fromtimestamp(WINDOW_START, dt.timezone.utc)
        b = dt.datetime.fromtimestamp(WINDOW_END, dt.timezone.utc)
        x = dt.datetime.fromtimestamp(INSTANT, dt.timezone.utc)
        queries = {
            W3_QUERIES[0]: ("SELECT min(value), max(value), avg(value) FROM samples WHERE series = 2 "
                            "AND ts >= %s AND ts < %s", (a, b)),
            W3_QUERIES[1]: ("SELECT sum(value) FROM samples WHERE series = 1 AND ts >= %s AND ts < %s", (a, b)),
            W3_QUERIES[2]: ("SELECT ts, value FROM samples WHERE series = 2 AND ts < %s ORDER BY ts DESC LIMIT 1",
                            (x,)),
        }
        return timed_queries(queries, lambda query: self.one(*query), first_row_text, runs, budget)

    def w2(self, runs, budget):
        sql = (f"SELECT date_trunc('day', ts, '{ZONE}') AS day, sum(value), count(*) FROM samples "
               "WHERE series = 1 GROUP BY day ORDER BY day")
        return timed_daily_sums(
            self.one, sql, lambda rows: rows, lambda r: str(r[0].astimezone(zoneinfo.ZoneInfo(ZONE)).date()),
            runs, budget)

    def stop(self):
        self.conn.close()
        subprocess.run(self.user + ["pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop"], capture_output=True)


class DuckDB:
    name = "DuckDB"
    durability = "in-process, in-memory database here (no server, no acknowledgement)"

    def __init__(self, workdir):
        pass

    def start(self):
        import duckdb

        self.name = f"DuckDB {duckdb.__version__}, 1 thread"
        self.conn = duckdb.connect(":memory:")
        self.conn.execute("SET threads = 1")
        self.conn.execute("SET TimeZone = 'UTC'")

    def ingest(self, dataset):
        self.conn.execute(
            "CREATE TABLE samples AS SELECT * FROM ("
            f" SELECT 1::TINYINT AS series, to_timestamp(start) AS ts, stepCount::DOUBLE AS value FROM read_csv_auto('{dataset.path}')"
            " UNION ALL"
            f" SELECT 2::TINYINT, to_timestamp(start), heartRate::DOUBLE FROM read_csv_auto('{dataset.path}'))"
            " ORDER BY series, ts")
        return None

    def one(self, sql):
        return self.conn.execute(sql).fetchall()

    def w3(self, runs, budget):
        a, b, x = (f"TIMESTAMPTZ '{iso(t)}'" for t in (WINDOW_START, WINDOW_END, INSTANT))
        queries = {
            W3_QUERIES[0]: f"SELECT min(value), max(value), avg(value) FROM samples WHERE series = 2 AND ts >= {a} AND ts < {b}",
            W3_QUERIES[1]: f"SELECT sum(value) FROM samples WHERE series = 1 AND ts >= {a} AND ts < {b}",
            W3_QUERIES[2]: f"SELECT ts, value FROM samples WHERE series = 2 AND ts < {x} ORDER BY ts DESC LIMIT 1",
        }
        return timed_queries(queries, self.one, first_row_text, runs, budget)

    def w2(self, runs, budget):
        sql = (f"SELECT date_trunc('day', ts AT TIME ZONE '{ZONE}') AS day, sum(value), count(*) FROM samples "
               "WHERE series = 1 GROUP BY day ORDER BY day")
        return timed_daily_sums(self.one, sql, lambda rows: rows, lambda r: str(r[0].date()), runs, budget)

    def stop(self):
        self.conn.close()


class ChDB:
    name = "chDB (ClickHouse engine)"
    durability = "in-process (no server, no acknowledgement)"

    def __init__(self, workdir):
        self.dir = os.path.join(workdir, "chdb")

    def start(self):
        import chdb
        from chdb import session

        self.name = f"chDB {chdb.__version__} (ClickHouse engine), 1 thread"
        self.session = session.Session(self.dir)
        self.session.query("CREATE DATABASE IF NOT EXISTS w")
        self.session.query("CREATE TABLE w.samples (series UInt8, ts DateTime('UTC'), value Float64) "
                           "ENGINE = MergeTree ORDER BY (series, ts)")

    def ingest(self, dataset):
        source = f"file('{dataset.path}', CSVWithNames, 'start Int64, stepCount Int64, heartRate Int64')"
        self.session.query(f"INSERT INTO w.samples SELECT 1, toDateTime(start, 'UTC'), stepCount FROM {source}")
        self.session.query(f"INSERT INTO w.samples SELECT 2, toDateTime(start, 'UTC'), heartRate FROM {source}")
        self.session.query("OPTIMIZE TABLE w.samples FINAL")
        return None

    def one(self, sql):
        result = self.session.query(sql + " SETTINGS max_threads = 1", "CSV")
        return [line.split(",") for line in result.data().strip().splitlines()]

    def w3(self, runs, budget):
        a, b, x = (f"toDateTime({t}, 'UTC')" for t in (WINDOW_START, WINDOW_END, INSTANT))
        queries = {
            W3_QUERIES[0]: f"SELECT min(value), max(value), avg(value) FROM w.samples WHERE series = 2 AND ts >= {a} AND ts < {b}",
            W3_QUERIES[1]: f"SELECT sum(value) FROM w.samples WHERE series = 1 AND ts >= {a} AND ts < {b}",
            W3_QUERIES[2]: f"SELECT ts, value FROM w.samples WHERE series = 2 AND ts < {x} ORDER BY ts DESC LIMIT 1",
        }
        return timed_queries(queries, self.one, lambda rows: rows[0], runs, budget)

    def w2(self, runs, budget):
        sql = (f"SELECT toDate(toStartOfDay(ts, '{ZONE}'), '{ZONE}') AS day, sum(value), count() FROM w.samples "
               "WHERE series = 1 GROUP BY day ORDER BY day")
        return timed_daily_sums(self.one, sql, lambda rows: rows, lambda r: r[0].strip('"'), runs, budget)

    def stop(self):
        self.session.close()


PEERS = {"victoriametrics": VictoriaMetrics, "influxdb": InfluxDB, "postgres": PostgreSQL, "duckdb": DuckDB,
         "chdb": ChDB}


# MARK: hkd


def run_hkbench(hkbench, workdir, runs, hkd):
    ours = {}
    w1_json, w3_json = os.path.join(workdir, "w1.json"), os.path.join(workdir, "w3.json")
    subprocess.run([hkbench, "w1", "--json", w1_json], check=True)
    ours["w1"] = json.load(open(w1_json))
    subprocess.run([hkbench, "w3", "--runs", str(runs), "--json", w3_json], check=True)
    ours["w3"] = {f["query"]: f for f in json.load(open(w3_json))}
    w2_json = os.path.join(workdir, "w2.json")
    subprocess.run([hkbench, "w2", "--repeat", "31", "--server", "1", "--json", w2_json], check=True)
    ours["w2"] = json.load(open(w2_json))
    if hkd:
        # hkd as its own process: the server's resident memory alone, ingest across two processes, the data
        # directory's bytes, and restarts after kill -9 (the log replayed) and after a clean stop (a snapshot).
        port, data = free_port(), os.path.join(workdir, "hkd-data")
        log_path = os.path.join(workdir, "hkd.log")
        log = open(log_path, "w")

        def start():
            """Starts hkd; returns it and the seconds until it logged that it listens, which it does once its
            data is loaded (it binds the port before, so a connection alone would not tell)."""
            with open(log_path) as f:
                before = f.read().count("listening on")
            started = time.perf_counter()
            process = subprocess.Popen(
                [hkd, "--listen", f"127.0.0.1:{port}", "--data-dir", data, "--auth", "off"], stderr=log)
            while True:
                with open(log_path) as f:
                    if f.read().count("listening on") > before:
                        break
                if process.poll() is not None:
                    raise RuntimeError(f"hkd exited with status {process.returncode}")
                time.sleep(0.002)
            return process, time.perf_counter() - started

        process, _ = start()
        try:
            external = os.path.join(workdir, "w1-external.json")
            subprocess.run([hkbench, "w1", "--server", f"127.0.0.1:{port}", "--mode", "pipelined",
                            "--json", external], check=True)
            ours["w1-external"] = json.load(open(external))
            capacity = {"samples": ours["w1-external"][0]["samples"], "residentBytes": resident_bytes(process.pid)}
            process.kill()
            process.wait(30)
            process, capacity["restartAfterKillSeconds"] = start()
            process.terminate()
            process.wait(60)
            capacity["diskBytes"] = disk_bytes(data)
            process, capacity["restartSeconds"] = start()
            ours["capacity"] = capacity
        finally:
            process.terminate()
            process.wait(60)
            log.close()
    return ours


def resident_bytes(pid):
    """A process's resident memory now (VmRSS), in bytes."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def disk_bytes(directory):
    """Bytes the files under `directory` take on disk."""
    total = 0
    for root, _dirs, files in os.walk(directory):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except FileNotFoundError:
                pass
    return total


# MARK: report


def fmt_time(seconds):
    if seconds is None:
        return "—"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


def report(ours, peers, dataset):
    lines = []
    w1 = {f["mode"]: f for f in ours["w1"]}
    # The ratio compares processes with processes: hkd in its own process when that run was made.
    reference = (ours.get("w1-external") or ours["w1"])[0]
    ours_rate = reference["samplesPerSecond"]
    lines += ["### W1 ingest", "",
              f"{dataset.samples:,} samples (both series), batches of {BATCH_ROWS:,} rows, one connection. "
              f"Ratio: hkd ({'separate process' if ours.get('w1-external') else 'in-process'}, {reference['mode']}) "
              "÷ peer.", "",
              "| system | samples/s | hkd ÷ peer | the acknowledgement promises |", "|---|---:|---:|---|"]
    for mode, f in w1.items():
        lines.append(f"| **hkd**, in-process server, {mode} ({f['inFlight']} in flight) | "
                     f"**{f['samplesPerSecond']:,.0f}** | | {f['acknowledgement']} |")
    for f in ours.get("w1-external", []):
        lines.append(f"| **hkd**, separate process, {f['mode']} ({f['inFlight']} in flight) | "
                     f"**{f['samplesPerSecond']:,.0f}** | | {f['acknowledgement']} |")
    for p in peers:
        if "skipped" in p:
            lines.append(f"| {p['name']} | skipped: {p['skipped']} | | |")
        elif p.get("w1") is None:
            lines.append(f"| {p['name']} | in-process only (bulk CSV load) | | {p['durability']} |")
        else:
            rate = dataset.samples / p["w1"]
            lines.append(f"| {p['name']} | {rate:,.0f} | {ours_rate / rate:.1f}× | {p['durability']} |")
    lines += ["", "### W3 range statistics", "",
              "Median (p99) per query. hkd: server-side = HealthStore in-process; end to end = through HealthClient "
              "over loopback. Peers: through their own client (in-process for DuckDB and chDB). "
              "Ratio: peer median ÷ hkd end-to-end median.", ""]
    header = "| system | " + " | ".join(W3_QUERIES) + " |"
    lines += [header, "|---|" + "---:|" * len(W3_QUERIES)]
    w3 = ours["w3"]
    lines.append("| **hkd** server-side | " + " | ".join(
        f"**{fmt_time(w3[q]['serverMedian'])}** ({fmt_time(w3[q]['serverP99'])})" for q in W3_QUERIES) + " |")
    lines.append("| **hkd** end to end | " + " | ".join(
        f"**{fmt_time(w3[q]['clientMedian'])}** ({fmt_time(w3[q]['clientP99'])})" for q in W3_QUERIES) + " |")
    for p in peers:
        if "skipped" in p:
            continue
        if "w3_error" in p:
            lines.append(f"| {p['name']} | failed: {p['w3_error']} |" + " |" * (len(W3_QUERIES) - 1))
            continue
        cells = []
        for q in W3_QUERIES:
            m = p["w3"][q]
            cells.append(f"{fmt_time(m['median'])} ({fmt_time(m['p99'])}), "
                         f"{m['median'] / w3[q]['clientMedian']:.1f}×")
        lines.append(f"| {p['name']} | " + " | ".join(cells) + " |")
    lines += ["", "Answers (to check the systems agree):", ""]
    lines.append(f"- hkd: " + "; ".join(f"{q}: {w3[q]['answer']}" for q in W3_QUERIES))
    for p in peers:
        if "w3" in p:
            lines.append(f"- {p['name']}: " + "; ".join(f"{q}: {p['w3'][q]['answer']}" for q in W3_QUERIES))
    lines += ["", "### W2 daily stepCount sums in America/New_York",
              "", "Ratio: peer median ÷ hkd end-to-end median (single source).", "",
              "| system | median (p99) | buckets | rows on 2020-03-08 / 2020-11-01 |", "|---|---:|---:|---|"]
    w2 = ours.get("w2")
    if w2:
        lines.append(f"| **hkd** in-process, one source | **{fmt_time(w2['singleSeconds'])}** | {w2['buckets']} | "
                     "checked by hkbench |")
        lines.append(f"| **hkd** in-process, two sources merged (§8) | **{fmt_time(w2['mergedSeconds'])}** | "
                     f"{w2['buckets']} | checked by hkbench |")
        if w2.get("endToEndSeconds"):
            lines.append(f"| **hkd** end to end (client, loopback), one source | "
                         f"**{fmt_time(w2['endToEndSeconds'])}** | {w2['buckets']} | checked by hkbench |")
    for p in peers:
        if "skipped" in p:
            continue
        w2 = p.get("w2")
        if w2 is None:
            reason = p.get("w2_error", "not expressible (UTC grid only)")
            lines.append(f"| {p['name']} | {reason} | | |")
        else:
            c = w2["check"]
            ratio = ""
            if ours.get("w2", {}).get("endToEndSeconds"):
                ratio = f", {w2['median'] / ours['w2']['endToEndSeconds']:.1f}×"
            lines.append(f"| {p['name']} | {fmt_time(w2['median'])} ({fmt_time(w2['p99'])}){ratio} | "
                         f"{c['buckets']} | {c['2020-03-08 rows']} / {c['2020-11-01 rows']} |")
    lines.append(f"\nExpected: 1828 buckets, 1380 / 1500 rows.")
    capacity = ours.get("capacity")
    measured = [p for p in peers if "capacity" in p]
    if capacity or measured:
        lines += ["", "### Memory, disk and restart with W1's data loaded", "",
                  "Resident memory of the server process after W1 (and, for peers, W3 and W2); the data directory "
                  "after a clean stop; the time from starting the server again until it answers (hkd: until it logs "
                  "that it listens, which it does once its data is loaded; peers: until a query returns data).", "",
                  "| system | resident bytes/sample | disk bytes/sample | restart after a clean stop | "
                  "restart after kill -9 |", "|---|---:|---:|---:|---:|"]
        if capacity:
            n = capacity["samples"]
            lines.append(f"| **hkd** | **{capacity['residentBytes'] / n:.2f}** | **{capacity['diskBytes'] / n:.2f}** | "
                         f"**{fmt_time(capacity['restartSeconds'])}** | "
                         f"**{fmt_time(capacity['restartAfterKillSeconds'])}** (log replayed) |")
        for p in measured:
            c, n = p["capacity"], dataset.samples
            lines.append(f"| {p['name']} | {c['residentBytes'] / n:.2f} | {c['diskBytes'] / n:.2f} | "
                         f"{fmt_time(c['restartSeconds'])} | not measured (loses up to a second of data) |")
    return "\n".join(lines)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hkbench", default=os.path.join(root, ".build/release/hkbench"))
    parser.add_argument("--hkd", default=os.path.join(root, ".build/release/hkd"),
                        help="also run W1 against hkd as a separate process ('' to skip)")
    parser.add_argument("--peers", default=",".join(PEERS), help="comma-separated: " + ",".join(PEERS))
    parser.add_argument("--runs", type=int, default=500, help="timed runs per query, at most")
    parser.add_argument("--budget", type=float, default=5.0, help="seconds per query beyond the first 20 runs")
    parser.add_argument("--skip-ours", action="store_true")
    parser.add_argument("--markdown", help="also write the report to this file")
    parser.add_argument("--json", help="also write every figure to this file")
    parser.add_argument("--http", action="store_true",
                        help="instead: W3 and W2 over HTTP through curl, hkd beside VictoriaMetrics (http_peers.py)")
    parser.add_argument("--hkq", help="with --http: the hkq to time (default: beside --hkbench)")
    args = parser.parse_args()
    if args.http:
        sys.modules.setdefault("run_peers", sys.modules[__name__])  # http_peers uses this module, not a copy
        import http_peers

        return http_peers.run(args, root)

    workdir = tempfile.mkdtemp(prefix="hkpeers-")
    os.chmod(workdir, 0o755)
    try:
        csv_path = os.path.join(workdir, "w1.csv")
        subprocess.run([args.hkbench, "dataset", "--out", csv_path], check=True)
        os.chmod(csv_path, 0o644)
        dataset = Dataset(csv_path)
        ours = {} if args.skip_ours else run_hkbench(args.hkbench, workdir, args.runs, args.hkd or None)
        results = []
        for key in [k.strip() for k in args.peers.split(",") if k.strip()]:
            peer = PEERS[key](workdir)
            entry = {"name": peer.name, "durability": peer.durability}
            print(f"== {peer.name}", flush=True)
            try:
                peer.start()
            except Exception as error:  # a peer that cannot start is reported, not fatal
                entry["skipped"] = str(error).strip().splitlines()[-1][:160] if str(error).strip() else repr(error)
                print(f"   skipped: {entry['skipped']}", flush=True)
                results.append(entry)
                continue
            entry["name"] = peer.name
            try:
                t0 = time.perf_counter()
                entry["w1"] = peer.ingest(dataset)
                entry["load_seconds"] = time.perf_counter() - t0
                print(f"   loaded in {entry['load_seconds']:.1f} s", flush=True)
                try:
                    entry["w3"] = peer.w3(args.runs, args.budget)
                except Exception as error:
                    entry["w3_error"] = str(error)[:160]
                try:
                    entry["w2"] = peer.w2(args.runs, args.budget)
                except Exception as error:
                    entry["w2_error"] = "failed: " + str(error).splitlines()[0][:120]
                if hasattr(peer, "capacity"):
                    try:
                        entry["capacity"] = peer.capacity()
                    except Exception as error:
                        entry["capacity_error"] = str(error)[:160]
            except Exception as error:
                entry["skipped"] = f"failed: {str(error)[:160]}"
            finally:
                peer.stop()
            print("   " + json.dumps({k: v for k, v in entry.items() if k in ("w1", "w3", "w2")})[:600], flush=True)
            results.append(entry)
        if not ours:
            print(json.dumps(results, indent=1, default=str))
            return
        if args.json:
            json.dump({"ours": ours, "peers": results}, open(args.json, "w"), indent=1, default=str)
        text = report(ours, results, dataset)
        print("\n" + text)
        if args.markdown:
            open(args.markdown, "w").write(text + "\n")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
