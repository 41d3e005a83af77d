#!/usr/bin/env python3
"""hkd's dashboard in a real browser (headless Chromium through Selenium; Tests/IntegrationTests/DashboardTests.swift
runs it against an hkd it seeded). Checks that the page shows exactly the daily totals /v1 returns, follows an
insert without a reload, works with the keyboard and on a phone's width, and asks no host but hkd; saves a
screenshot of each view to --out. Exits 0 with a JSON report on stdout, or 1 naming what failed."""

import argparse
import json
import os
import re
import shutil
import sys
import time
import urllib.parse
import urllib.request
from datetime import datetime, timedelta, timezone

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait


def parse_arguments():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True, help="hkd's HTTP listener, e.g. http://127.0.0.1:7421")
    parser.add_argument("--token", required=True)
    parser.add_argument("--subject", required=True)
    parser.add_argument("--tz", required=True)
    parser.add_argument("--out", required=True, help="directory for the screenshots")
    parser.add_argument("--no-charts-url", help="an hkd whose --chartjs names no file (no data needed)")
    parser.add_argument("--no-charts-token", help="that hkd's token")
    return parser.parse_args()


class Check:
    """Failures collected, so one run reports every difference."""

    def __init__(self):
        self.failures = []
        self.passed = []

    def expect(self, condition, what):
        (self.passed if condition else self.failures).append(what)
        return condition


def api(args, path, params=None, method="GET", body=None, content_type=None):
    query = "?" + urllib.parse.urlencode(params) if params else ""
    request = urllib.request.Request(args.url + "/v1/" + path + query, data=body, method=method)
    request.add_header("Authorization", "Bearer " + args.token)
    if content_type:
        request.add_header("Content-Type", content_type)
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in [
        "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1000",
        "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-default-apps", "--disable-extensions", "--lang=en-US", "--hide-scrollbars",
    ]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    service = Service(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    return webdriver.Chrome(service=service, options=options)


def wait(driver, condition, what, seconds=20):
    try:
        return WebDriverWait(driver, seconds, poll_frequency=0.1).until(lambda d: condition(d))
    except Exception:
        shown = driver.execute_script("return document.getElementById('view').innerText.slice(0, 600)")
        raise AssertionError(f"timed out waiting for {what}; the page shows: {shown}") from None


def shown_table(driver, series):
    """The rows of a chart's table: (data-key, {series label: raw value or None})."""
    return driver.execute_script(
        """
        const figure = document.querySelector(`figure[data-series="${arguments[0]}"]`);
        if (!figure) return null;
        return [...figure.querySelectorAll('tbody tr')].map((row) => [row.dataset.key,
          Object.fromEntries([...row.querySelectorAll('td')].map((cell) =>
            [cell.dataset.label, cell.dataset.value === '' ? null : Number(cell.dataset.value)]))]);
        """,
        series,
    )


def select_view(driver, name, ready, what):
    driver.find_element(By.CSS_SELECTOR, f'#views button[data-view="{name}"]').click()
    wait(driver, lambda d: d.execute_script(
        f"return document.getElementById('view').dataset.view === '{name}' && ({ready})"), what)


def screenshot(driver, args, name):
    # Charts are drawn on the next animation frame.
    driver.execute_script("return new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    driver.save_screenshot(os.path.join(args.out, name + ".png"))


def check_daily_totals(driver, args, check, label):
    """The activity cards' tables and totals against /v1's collections for the same days."""
    metrics = [("stepCount", "count"), ("distanceWalkingRunning", "km"), ("activeEnergyBurned", "kcal")]
    totals = {}
    for metric, unit in metrics:
        expected = api(args, f"subjects/{args.subject}/collection", {
            "type": metric, "interval": "1d", "tz": args.tz, "unit": unit, "options": "sum",
            "from": "today-6d", "through": "now"})
        rows = shown_table(driver, metric)
        # The last 7 days are today and the 6 before it: no day after today.
        check.expect(len(expected) == 7, f"{label}: {metric}: the API gives {len(expected)} days for the last 7")
        check.expect(rows is not None and len(rows) == len(expected) > 0, f"{label}: {metric} has {len(expected)} days shown")
        for (key, values), bucket in zip(rows or [], expected):
            check.expect(key == bucket["start"], f"{label}: {metric} day {bucket['start']} (shown {key})")
            check.expect(values.get("All sources") == bucket["sum"],
                         f"{label}: {metric} on {bucket['start']}: shown {values.get('All sources')}, API {bucket['sum']}")
        shown_total = driver.execute_script(
            f"return Number(document.querySelector('[data-type=\"{metric}\"] .figure').dataset.total)")
        api_total = sum(bucket["sum"] or 0 for bucket in expected)
        check.expect(abs(shown_total - api_total) < 1e-9 * max(1, abs(api_total)),
                     f"{label}: {metric} total shown {shown_total}, API {api_total}")
        totals[metric] = api_total
    return totals


def network_hosts(driver, args):
    """Every URL the page asked for (Chromium's performance log), by whether it is hkd's."""
    base = args.url.rstrip("/") + "/"
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls, [url for url in urls if not (url.startswith(base) or url.startswith("data:"))]


def main():
    args = parse_arguments()
    os.makedirs(args.out, exist_ok=True)
    check = Check()
    report = {}
    driver = browser()
    all_urls = []
    try:
        fragment = urllib.parse.urlencode({"token": args.token, "subject": args.subject, "tz": args.tz, "range": "7"})
        driver.get(args.url + "/#" + fragment)
        wait(driver, lambda d: d.execute_script(
            "return document.querySelector('figure[data-series=\"stepCount\"] tbody tr') !== null"),
            "the activity view with steps")
        check.expect(typeof_chart(driver), "Chart.js loaded from hkd (/ui/chart.js)")
        check.expect("token" not in driver.current_url, "the token left the address bar: " + driver.current_url)
        check.expect(driver.execute_script("return document.cookie") == "", "no cookie")
        check.expect(driver.execute_script("return sessionStorage.getItem('hkd.token')") == args.token,
                     "the token kept in sessionStorage")
        before = check_daily_totals(driver, args, check, "first load")
        canvases = driver.execute_script(
            "return [...document.querySelectorAll('canvas')].map((c) => [c.getAttribute('role'), c.getAttribute('aria-label')])")
        check.expect(len(canvases) == 3 and all(role == "img" and label for role, label in canvases),
                     f"each chart is an image with a label for screen readers: {canvases}")
        screenshot(driver, args, "activity")

        # Per-source breakdown on demand: one column per source, as the API's by-source figures.
        driver.find_element(By.CSS_SELECTOR, '[data-type="stepCount"] .actions button').click()
        wait(driver, lambda d: d.execute_script(
            "return document.querySelectorAll('figure[data-series=\"stepCount\"] thead th').length > 2"),
            "the steps' per-source columns")
        by_source = api(args, f"subjects/{args.subject}/collection", {
            "type": "stepCount", "interval": "1d", "tz": args.tz, "unit": "count", "options": "sum,by-source",
            "from": "today-6d", "through": "now"})
        for (key, values), bucket in zip(shown_table(driver, "stepCount"), by_source):
            for source in bucket.get("sources") or []:
                check.expect(values.get(source["source"]) == source["sum"],
                             f"by source: {source['source']} on {key}: shown {values.get(source['source'])}, API {source['sum']}")
        screenshot(driver, args, "activity-by-source")

        # Live: an insert shows without a reload.
        now = datetime.now(timezone.utc).replace(microsecond=0)
        start, end = now - timedelta(minutes=2), now - timedelta(minutes=1)
        csv = ("type,start,end,value,unit,source\n"
               f"stepCount,{start.isoformat()},{end.isoformat()},777,count,Anna’s iPhone\n")
        marker = driver.execute_script("return document.getElementById('view').dataset.updated")
        sent = time.monotonic()
        api(args, f"subjects/{args.subject}/samples", method="POST", body=csv.encode(), content_type="text/csv")
        expected_total = before["stepCount"] + 777
        wait(driver, lambda d: d.execute_script(
            "return Number(document.querySelector('[data-type=\"stepCount\"] .figure').dataset.total)") == expected_total,
            f"the steps total to become {expected_total} after the insert", seconds=15)
        report["liveSeconds"] = round(time.monotonic() - sent, 2)
        check.expect(driver.execute_script("return document.getElementById('view').dataset.updated") != marker,
                     "the view redrew in place")
        report["liveMode"] = driver.find_element(By.ID, "live").text
        check.expect(report["liveMode"].startswith("Live"), f"the view follows changes live: {report['liveMode']}")
        check_daily_totals(driver, args, check, "after the insert")

        # Keyboard: the view buttons are reached with Tab and pressed with Enter.
        body = driver.find_element(By.TAG_NAME, "body")
        body.click()
        reached = None
        for _ in range(30):
            driver.switch_to.active_element.send_keys(Keys.TAB)
            active = driver.switch_to.active_element
            if active.get_attribute("data-view") == "heart":
                reached = active
                break
        if check.expect(reached is not None, "the Heart view's button is reached with Tab"):
            reached.send_keys(Keys.ENTER)
            wait(driver, lambda d: d.execute_script(
                "return document.getElementById('view').dataset.view === 'heart' && "
                "document.querySelector('figure[data-series=\"heartRate\"]') !== null"), "the heart view by keyboard")
        rates = api(args, f"subjects/{args.subject}/collection", {
            "type": "heartRate", "interval": "1d", "tz": args.tz, "options": "min,avg,max",
            "from": "today-6d", "through": "now"})
        shown = dict(shown_table(driver, "heartRate"))
        for bucket in rates:
            row = shown.get(bucket["start"], {})
            check.expect(row.get("Minimum") == bucket["minimum"] and row.get("Maximum") == bucket["maximum"]
                         and row.get("Average") == bucket["average"], f"heart rate on {bucket['start']}: {row} vs {bucket}")
        check.expect(shown_table(driver, "restingHeartRate") is not None, "resting heart rate shown")
        check.expect(shown_table(driver, "heartRateDay"), "the day's heart rate curve shown")
        screenshot(driver, args, "heart")

        select_view(driver, "sleep", "document.querySelector('figure[data-series=\"sleep\"]') !== null", "the sleep view")
        nights = api(args, f"subjects/{args.subject}/sleep", {"from": "today-6d", "through": "today", "tz": args.tz})
        shown = dict(shown_table(driver, "sleep"))
        for night in nights:
            row = shown.get(night["night"], {})
            for key, label in [("asleepDeep", "Deep"), ("asleepCore", "Core"), ("asleepREM", "REM"), ("awake", "Awake")]:
                expected = None if night[key] is None else night[key] / 3600
                check.expect(row.get(label) is not None and abs(row[label] - expected) < 1e-9 if expected is not None
                             else row.get(label) is None, f"sleep {night['night']} {label}: {row.get(label)} vs {expected}")
        screenshot(driver, args, "sleep")

        select_view(driver, "workouts", "document.querySelector('table.workouts') !== null", "the workouts view")
        listed = api(args, f"subjects/{args.subject}/workouts", {"tz": args.tz, "from": "today-6d", "to": "tomorrow"})
        rows = driver.find_elements(By.CSS_SELECTOR, "table.workouts tbody tr")
        check.expect(len(rows) == len(listed) and len(listed) >= 2, f"{len(rows)} workouts shown, API {len(listed)}")
        check.expect(len(driver.find_elements(By.CSS_SELECTOR, "table.workouts .dup")) ==
                     sum(1 for workout in listed if workout["sameAs"]), "likely duplicates marked")
        with_route = next(workout for workout in reversed(listed) if not workout["sameAs"])
        driver.find_element(By.CSS_SELECTOR, f'tr[data-uuid="{with_route["uuid"]}"] button').send_keys(Keys.ENTER)
        wait(driver, lambda d: d.execute_script(
            "return document.querySelector('svg.route path') !== null && "
            "document.querySelector('figure[data-series=\"workoutHeartRate\"]') !== null"), "the route and heart rate")
        route = api(args, f"subjects/{args.subject}/workouts/{with_route['uuid']}/route", {"tz": args.tz})
        path = driver.find_element(By.CSS_SELECTOR, "svg.route path").get_attribute("d")
        check.expect(path.count("L") + path.count("M") == len(route), f"the route's {len(route)} points drawn")
        screenshot(driver, args, "workouts")

        select_view(driver, "body", "document.querySelector('figure[data-series=\"bloodPressure\"]') !== null",
                    "the body view")
        pressure = api(args, f"subjects/{args.subject}/samples", {
            "type": "bloodPressure", "tz": args.tz, "from": "today-89d", "to": "tomorrow"})
        shown = shown_table(driver, "bloodPressure")
        check.expect([values["Systolic"] for _, values in shown] == [r["bloodPressureSystolic"] for r in pressure],
                     "blood pressure readings shown as the API gives them")
        check.expect(shown_table(driver, "bodyMass"), "weight shown")
        screenshot(driver, args, "body")

        select_view(driver, "explore", "document.querySelector('.explore-form') !== null", "the catalog view")
        field = driver.find_element(By.CSS_SELECTOR, ".explore-form input")
        field.clear()
        field.send_keys("restingHeartRate", Keys.ENTER)
        wait(driver, lambda d: d.execute_script(
            "return document.querySelector('figure[data-series=\"restingHeartRate\"]') !== null"), "restingHeartRate")
        screenshot(driver, args, "explore")

        # Dark, as the system asks; then a phone's width, with nothing wider than the screen.
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                               {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        select_view(driver, "activity", "document.querySelector('figure[data-series=\"stepCount\"]') !== null",
                    "the activity view in dark")
        background = driver.execute_script("return getComputedStyle(document.body).backgroundColor")
        check.expect(background == "rgb(15, 18, 22)", f"dark colours follow the system: {background}")
        screenshot(driver, args, "activity-dark")
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
        driver.refresh()
        wait(driver, lambda d: d.execute_script(
            "return document.querySelector('figure[data-series=\"stepCount\"] canvas') !== null"), "the phone layout")
        overflow = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        check.expect(overflow <= 0, f"nothing wider than a phone's screen (overflow {overflow}px)")
        screenshot(driver, args, "phone")

        urls, foreign = network_hosts(driver, args)
        all_urls += urls
        errors = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        # hkd follows every type of a view in one events stream: none of those requests is refused.
        refused_events = [error for error in errors if "/events?" in error and re.search(r"\b4\d\d\b", error)]
        check.expect(not refused_events, f"no events request refused: {refused_events}")
        check.expect(not errors, f"no errors in the browser's console: {errors}")
    finally:
        driver.quit()

    if args.no_charts_url:
        no_charts(args, check, all_urls)

    foreign = [url for url in all_urls if not any(url.startswith(base) for base in
                                                  [args.url + "/", (args.no_charts_url or args.url) + "/", "data:"])]
    check.expect(len(all_urls) > 10, f"the network log holds the page's requests ({len(all_urls)})")
    check.expect(not foreign, f"no request to another host: {foreign}")
    report.update({"passed": len(check.passed), "failures": check.failures, "requests": len(all_urls)})
    print(json.dumps(report))
    return 1 if check.failures else 0


def typeof_chart(driver):
    return driver.execute_script("return typeof window.Chart === 'function'")


def no_charts(args, check, all_urls):
    """An hkd whose Chart.js is missing: the page still loads, signs in by its form and says what to install."""
    driver = browser()
    try:
        driver.get(args.no_charts_url + "/")
        wait(driver, lambda d: d.find_element(By.ID, "token").is_displayed(), "the sign-in form")
        driver.find_element(By.ID, "token").send_keys(args.no_charts_token)
        subject = driver.find_element(By.ID, "subject")
        subject.clear()
        subject.send_keys("nobody", Keys.ENTER)
        wait(driver, lambda d: d.execute_script(
            "return document.querySelector('[data-type=\"stepCount\"] .empty') !== null"), "the empty activity view")
        notice = driver.find_element(By.ID, "notice").text
        check.expect("libjs-chart.js" in notice, f"the page says charts need libjs-chart.js: {notice!r}")
        check.expect("hkq import" in driver.find_element(By.ID, "view").text, "the empty state says what to import")
        check.expect(not typeof_chart(driver), "no Chart.js")
        screenshot(driver, args, "no-charts")
        urls, _ = network_hosts(driver, args)
        all_urls += urls
    finally:
        driver.quit()


if __name__ == "__main__":
    try:
        sys.exit(main())
    except AssertionError as error:
        print(json.dumps({"failures": [str(error)]}))
        sys.exit(1)
