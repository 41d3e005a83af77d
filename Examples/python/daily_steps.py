"""Daily step totals from hkd's HTTP API into a pandas DataFrame.

HealthKit's statistics collection, one bucket a day in your time zone, sources merged as the Health app merges
them (an iPhone and a Watch do not double-count). Only the standard library and pandas.

    python3 daily_steps.py --token-file hkd-data/admin.token --tz Europe/Paris --from 2026-11-01
"""

import argparse
import json
import urllib.parse
import urllib.request

import pandas as pd


def collection(base, token, subject, type_, tz, start=None, end=None, interval="1d"):
    """hkq's collection JSON for one subject and type, as a DataFrame indexed by bucket start."""
    query = {"type": type_, "interval": interval, "tz": tz}
    if start:
        query["from"] = start
    if end:
        query["to"] = end
    url = f"{base}/v1/subjects/{urllib.parse.quote(subject, safe='')}/collection?{urllib.parse.urlencode(query)}"
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request) as response:
        records = json.load(response)
    frame = pd.DataFrame.from_records(records)
    if frame.empty:
        return frame
    frame["start"] = pd.to_datetime(frame["start"], utc=True).dt.tz_convert(tz)
    return frame.set_index("start")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:7421", help="hkd's HTTP API (--http-listen)")
    parser.add_argument("--token-file", default="hkd-data/admin.token")
    parser.add_argument("--subject", default="me")
    parser.add_argument("--type", default="stepCount")
    parser.add_argument("--tz", default="UTC", help="an IANA time zone: the days are this zone's")
    parser.add_argument("--from", dest="start")
    parser.add_argument("--to", dest="end")
    arguments = parser.parse_args()
    with open(arguments.token_file) as file:
        token = file.readline().strip()
    frame = collection(
        arguments.url, token, arguments.subject, arguments.type, arguments.tz, arguments.start, arguments.end)
    print(frame.to_csv() if not frame.empty else "no data")


if __name__ == "__main__":
    main()
