"""Drives the support console in headless Chromium (Selenium), as a support person would.

Run by ConsoleBrowserTests with the URL of a running `entitle serve`, an admin key and the
customer's identifiers; exits non-zero at the first thing that does not work, saving a screenshot
of each page (desktop and phone-sized) in --out.
"""
import argparse
import os
import re
import json
import sys
import time
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import Select, WebDriverWait

parser = argparse.ArgumentParser()
for name in ["url", "key", "token", "original", "transaction", "app-transaction", "order", "past", "out", "chromium", "driver"]:
    parser.add_argument("--" + name, required=True)
args = parser.parse_args()


def step(message):
    print("step:", message, flush=True)


DOWNLOADS = os.path.join(args.out, "downloads")


def start(width, height):
    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     f"--window-size={width},{height}", "--no-first-run", "--disable-extensions"]:
        options.add_argument(argument)
    if width < 500:
        # Desktop Chromium will not make a window this narrow: emulate the phone's screen instead.
        options.add_experimental_option("mobileEmulation", {"deviceMetrics": {"width": width, "height": height, "pixelRatio": 2}})
    # Downloads (the charts' CSV) land in the output folder, without asking.
    os.makedirs(DOWNLOADS, exist_ok=True)
    options.add_experimental_option("prefs", {"download.default_directory": DOWNLOADS, "download.prompt_for_download": False})
    options.binary_location = args.chromium
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(args.driver), options=options)


class Console:
    def __init__(self, driver, label):
        self.driver = driver
        self.label = label
        # The page replaces its content as it goes: an element found a moment ago may be gone.
        self.wait = WebDriverWait(driver, 15, ignored_exceptions=[StaleElementReferenceException])

    def find(self, css):
        return self.wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, css)))

    def until(self, condition, what):
        try:
            return self.wait.until(lambda driver: condition())
        except TimeoutException:
            self.shot("failure")
            raise AssertionError(f"{self.label}: timed out waiting for {what}; status: {self.status()!r}")

    def status(self):
        return self.driver.find_element(By.ID, "status").text

    def shot(self, name):
        path = f"{args.out}/{self.label}-{name}.png"
        self.driver.save_screenshot(path)
        print("screenshot:", path, flush=True)

    def heading(self):
        return self.find("main h1").text

    def badge(self, entitlement):
        return self.find(f'#entitlements [data-entitlement="{entitlement}"]')

    def check_text(self):
        """No page shows null, undefined, NaN or one of Entitle's raw codes (grantRevoked…)."""
        text = self.driver.find_element(By.TAG_NAME, "body").text
        found = [text[max(0, m.start() - 40):m.end() + 40]
                 for m in re.finditer(r"\b(null|undefined|NaN|grantRevoked|GRANTREVOKED|linkTransfer|renewalInfo)\b", text)]
        assert not found, f"{self.label}: the page shows {found}"

    def check_labels(self):
        """Every control is labelled, and nothing overflows the window sideways."""
        self.check_text()
        unlabelled = self.driver.execute_script("""
            const missing = [];
            for (const control of document.querySelectorAll('input, select, button, a[href]')) {
              if (control.closest('[hidden]')) continue;
              const name = control.labels && control.labels.length ? control.labels[0].textContent
                : (control.getAttribute('aria-label') || control.textContent);
              if (!name || !name.trim()) missing.push(control.outerHTML.slice(0, 80));
            }
            return missing;""")
        assert not unlabelled, f"{self.label}: controls without a label: {unlabelled}"
        overflow = self.driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, f"{self.label}: the page is {overflow}px wider than the window"

    def sign_in(self, key):
        field = self.find("#key")
        assert self.driver.switch_to.active_element == field, "the key field has the focus"
        field.clear()
        field.send_keys(key, Keys.ENTER)  # by keyboard

    def search(self, query, expected):
        self.driver.get(args.url + "/console#/search")
        field = self.find("#query")
        field.clear()
        field.send_keys(query, Keys.ENTER)
        link = self.find(f'#results[data-query="{query}"] .match-link')
        assert link.text == expected, f"{self.label}: {query} found {link.text!r}, expected {expected!r}"
        return link


def api(path, accept="application/json"):
    """The admin API itself, as the reference the console's numbers must match."""
    request = urllib.request.Request(args.url + path, headers={"Authorization": "Bearer " + args.key, "Accept": accept})
    with urllib.request.urlopen(request, timeout=15) as response:
        body = response.read()
    return json.loads(body) if accept == "application/json" else body.decode()


# The figures of docs/METRICS.md, in the server's order: the page charts what the session names.
METRICS = ["active-subscriptions", "active-trials", "mrr", "revenue", "new-trials", "trial-conversions", "trial-conversion-rate",
           "churned-subscriptions", "churn-rate", "refunds", "refund-rate"]


def check_charts(console, label, full):
    driver = console.driver
    step(f"{label}: the charts page")
    driver.find_element(By.CSS_SELECTOR, '[data-nav="charts"]').click()
    console.until(lambda: console.heading() == "Charts" and driver.find_elements(By.CSS_SELECTOR, "#chart-refunds"), "the charts")
    opened = {"interval": Select(console.find("#charts-interval")).first_selected_option.get_attribute("value"),
              "environment": Select(console.find("#charts-environment")).first_selected_option.get_attribute("value")}
    assert opened == {"interval": "week", "environment": "Sandbox"}, f"Charts open by week on the environment with data: {opened}"
    folded = driver.find_elements(By.CSS_SELECTOR, "#main details.numbers")
    assert folded and not any(details.get_attribute("open") for details in folded), "the tables start folded"
    if full:
        # A range that holds the customer's whole subscription, by week.
        driver.execute_script("document.getElementById('charts-from').value = arguments[0];", args.past[:10])
        Select(console.find("#charts-interval")).select_by_value("week")
        console.find("#charts-form button[type=submit]").click()
        console.until(lambda: "interval=week" in driver.current_url and "by week" in console.find("#chart-mrr svg").get_attribute("aria-label")
                      and len(driver.find_elements(By.CSS_SELECTOR, "#main section.card")) == 1 + len(METRICS), "the weekly charts")
    query = urllib.parse.urlencode({
        "from": console.find("#charts-from").get_attribute("value"), "to": console.find("#charts-to").get_attribute("value"),
        "interval": Select(console.find("#charts-interval")).first_selected_option.get_attribute("value"),
        "environment": Select(console.find("#charts-environment")).first_selected_option.get_attribute("value")})
    summary = api("/v1/metrics/summary?environment=Sandbox")["summary"]
    assert console.find("#charts-active .stat-value").text == str(summary["activeSubscriptions"]), "active subscriptions now"
    charted = [section.get_attribute("id")[len("chart-"):] for section in driver.find_elements(By.CSS_SELECTOR, "#main section.card[id^='chart-']")]
    assert charted == METRICS, f"every figure the server names, in its order: {charted}"
    for metric in METRICS:
        buckets = api(f"/v1/metrics/{metric}?{query}")["buckets"]
        if metric in ("mrr", "revenue") and not any(bucket["value"] for bucket in buckets):
            assert driver.find_elements(By.CSS_SELECTOR, f"#chart-{metric} .none"), f"{metric}: says there is none"
            continue
        rows = driver.find_elements(By.CSS_SELECTOR, f'table.figures[data-metric="{metric}"] tbody tr')
        assert len(rows) == len(buckets), f"{metric}: {len(rows)} rows for {len(buckets)} buckets"
        bars = driver.find_elements(By.CSS_SELECTOR, f"#chart-{metric} svg rect.bar")
        assert len(bars) >= len(buckets), f"{metric}: {len(bars)} bars for {len(buckets)} buckets"
        for row, bucket in zip(rows, buckets):
            start = row.find_element(By.CSS_SELECTOR, "th").get_attribute("textContent")
            assert start == bucket["start"][:10], (metric, start, bucket)
            for cell in row.find_elements(By.CSS_SELECTOR, "td"):
                column, shown = cell.get_attribute("data-column"), cell.get_attribute("data-value")
                if metric in ("mrr", "revenue"):
                    expected = bucket["value"].get(column, 0)
                elif metric == "churned-subscriptions":
                    expected = bucket[column.lower()]
                else:
                    expected = bucket["value"]
                assert (shown == "" and expected is None) or (expected is not None and float(shown) == float(expected)), \
                    f"{metric} {bucket['start']} {column}: the table says {shown!r}, the API {expected!r}"
    if full:
        active = [bucket["value"] for bucket in api(f"/v1/metrics/active-subscriptions?{query}")["buckets"]]
        assert any(active), f"{label}: the customer's subscription shows in no bucket: {active}"
    step(f"{label}: the revenue CSV downloads, the API's own")
    for old in os.listdir(DOWNLOADS):
        os.remove(os.path.join(DOWNLOADS, old))
    console.find("#chart-revenue a.csv").click()
    finished = lambda: [name for name in os.listdir(DOWNLOADS) if name.endswith(".csv")]
    console.until(finished, f"the downloaded CSV (the folder holds {os.listdir(DOWNLOADS)})")
    path = os.path.join(DOWNLOADS, finished()[0])
    with open(path) as downloaded:
        content = downloaded.read()
    expected = api(f"/v1/metrics/revenue?{query}", accept="text/csv")
    assert content.replace("\r\n", "\n") == expected.replace("\r\n", "\n") and content.startswith("start,currency,value"), \
        f"the CSV: {content!r} against {expected!r}"
    console.check_labels()
    console.shot("charts")


def run(width, height, label, full):
    driver = start(width, height)
    console = Console(driver, label)
    try:
        step(f"{label}: the console asks for an admin key")
        driver.get(args.url + "/console")
        assert console.heading() == "Sign in to Entitle", console.heading()
        console.check_labels()
        console.shot("sign-in")
        if full:
            console.sign_in("not_the_key_0123456789")
            console.until(lambda: "refused" in console.status(), "a refusal")
        console.sign_in(args.key)
        console.until(lambda: console.heading() == "Overview", "the overview")
        assert driver.find_elements(By.CSS_SELECTOR, "svg.chart rect.bar"), "the chart of notifications"
        assert console.find("#notifications-day .stat-value").text == "2", "two notifications today (the expiry, the refund request)"
        cookies = {cookie["name"]: cookie for cookie in driver.get_cookies()}
        session = cookies.get("entitle_session")
        assert session and session["httpOnly"] and session.get("sameSite") == "Strict", f"session cookie: {session}"
        assert args.key not in driver.page_source, "the key is not in the page"
        console.check_labels()
        console.shot("overview")

        step(f"{label}: search by every key stored here (the order ID, which asks Apple, comes last)")
        keys = [("appAccountToken", args.token), ("original transaction", args.original), ("transaction", args.transaction),
                ("appTransactionId", args.app_transaction)] if full else [("appAccountToken", args.token)]
        for kind, query in keys:
            link = console.search(query, args.token)
            step(f"{label}: found by {kind}")
        console.check_labels()
        console.shot("search")
        link.click()

        step(f"{label}: the customer page")
        console.until(lambda: console.heading() == "Customer", "the customer page")
        assert console.find("#customer-token").text == args.token
        pro = console.badge("pro")
        # Expired, until the desktop pass looked the order ID up (Apple's answer renews it).
        assert pro.get_attribute("data-state") == ("EXPIRED" if full else "ACTIVE"), pro.text
        assert "App Store" in pro.text and "pro.monthly" in pro.text and "Sandbox" in pro.text, pro.text
        kinds = [entry.get_attribute("data-kind") for entry in driver.find_elements(By.CSS_SELECTOR, "#history .entry")]
        assert "transaction" in kinds and "notification" in kinds, kinds
        console.check_labels()
        console.shot("customer")
        if not full:
            for section, title in [("notifications", "Notifications"), ("deliveries", "Webhook deliveries"), ("refunds", "Refund requests")]:
                driver.find_element(By.CSS_SELECTOR, f'[data-nav="{section}"]').click()
                console.until(lambda: console.heading() == title, f"the {section} page")
                console.check_labels()
                console.shot(section)
            check_charts(console, label, full)
            return

        step(f"{label}: grant a month of pro")
        Select(console.find("#grant-entitlement")).select_by_value("pro")
        Select(console.find("#grant-duration")).select_by_value("P1M")
        console.find("#grant-reason").send_keys("sorry for the trouble")
        console.find("#grant-button").click()
        console.until(lambda: console.status().startswith("Granted pro"), "the grant")
        pro = console.badge("pro")
        assert pro.get_attribute("data-state") == "ACTIVE" and "promotional grant" in pro.text, pro.text
        assert "sorry for the trouble" in console.find("#grants").text
        kinds = [entry.get_attribute("data-kind") for entry in driver.find_elements(By.CSS_SELECTOR, "#history .entry")]
        assert "grant" in kinds, kinds
        console.shot("customer-granted")

        step(f"{label}: the state at a past instant")
        field = console.find("#as-of")
        field.clear()
        field.send_keys(args.past[:19].replace("T", " "))  # typed in the console's own date format (UTC)
        console.find("#as-of-form button[type=submit]").click()
        console.until(lambda: "?at=" in driver.current_url and console.badge("pro").get_attribute("data-state") == "ACTIVE"
                      and "App Store" in console.badge("pro").text, "the past state")
        assert "Entitlements as of" in console.find("#now-heading").text
        console.shot("customer-as-of")
        console.find("#as-of-now").click()
        console.until(lambda: "?at=" not in driver.current_url and "promotional grant" in console.badge("pro").text, "the state now")

        step(f"{label}: revoke the grant")
        console.find("#grants button.revoke").click()
        console.until(lambda: console.status().startswith("Revoked"), "the revocation")
        pro = console.badge("pro")
        assert pro.get_attribute("data-state") == "EXPIRED" and "App Store" in pro.text, pro.text
        kinds = [entry.get_attribute("data-kind") for entry in driver.find_elements(By.CSS_SELECTOR, "#history .entry")]
        assert "grantRevoked" in kinds, kinds
        console.check_text()
        assert "Grant revoked" in console.find("#history").text, "the timeline says what happened in words"
        history = console.find("#history").text
        assert "support: Dana (support)" in history and "App Store (signed by Apple)" in history, "proper names as given"

        step(f"{label}: a refund override, set with a reason")
        if console.find("#refund-override-current").text.startswith("No override"):
            chosen = Select(console.find("#refund-override")).first_selected_option.get_attribute("value")
            assert chosen == "", f"the override control starts on no override, not {chosen}"
        Select(console.find("#refund-override")).select_by_value("ALWAYS_DECLINE")
        console.find("#refund-override-reason").send_keys("refund abuse")
        console.find("#refund-override-save").click()
        console.until(lambda: console.status() == "Override saved.", "the override")
        current = console.find("#refund-override-current").text
        assert "Always decline" in current and "refund abuse" in current, current
        console.check_labels()

        step(f"{label}: re-sync from Apple")
        console.find("#resync").click()
        console.until(lambda: console.status().startswith("Re-synced"), "the re-sync")

        step(f"{label}: search by the order ID of Apple's receipt e-mail")
        console.search(args.order, args.token)

        step(f"{label}: notifications, filtered")
        driver.find_element(By.CSS_SELECTOR, '[data-nav="notifications"]').click()
        console.until(lambda: console.heading() == "Notifications", "the notifications page")
        Select(console.find("#filter-type")).select_by_value("EXPIRED")
        rows = driver.find_elements(By.CSS_SELECTOR, "#notifications tbody tr")
        assert rows and all("EXPIRED" in row.text for row in rows), [row.text for row in rows]
        Select(console.find("#filter-environment")).select_by_value("Sandbox")
        assert driver.find_elements(By.CSS_SELECTOR, "#notifications tbody tr")
        Select(console.find("#filter-type")).select_by_value("")
        Select(console.find("#filter-result")).select_by_value("refused")
        rows = driver.find_elements(By.CSS_SELECTOR, "#notifications tbody tr")
        assert len(rows) == 1 and "refused · INVALID_CHAIN" in rows[0].text and "DID_RENEW" in rows[0].text, [row.text for row in rows]
        console.check_labels()
        console.shot("notifications")

        step(f"{label}: webhook deliveries, failed first, retried")
        driver.find_element(By.CSS_SELECTOR, '[data-nav="deliveries"]').click()
        console.until(lambda: console.heading() == "Webhook deliveries", "the deliveries page")
        first = console.find("#deliveries tbody tr")
        assert first.get_attribute("class") == "delivery-failed", first.text
        console.check_labels()
        console.shot("deliveries")
        first.find_element(By.CSS_SELECTOR, "button.retry").click()
        console.until(lambda: "queued again" in console.status(), "the retry")

        step(f"{label}: refund requests, with what was answered")
        driver.find_element(By.CSS_SELECTOR, '[data-nav="refunds"]').click()
        console.until(lambda: console.heading() == "Refund requests", "the refund requests page")
        row = console.find("#refunds tbody tr")
        console.until(lambda: console.find("#refunds tbody tr").get_attribute("data-status") != "PENDING"
                      or "left" in console.find("#refunds tbody tr").text, "a request")
        assert args.token in row.text and "App Store" in row.text, row.text
        console.check_labels()
        console.shot("refunds")

        check_charts(console, label, full)

        step(f"{label}: re-sync of a customer Apple cannot be asked about says so")
        driver.get(args.url + "/console#/customer/11111111-2222-4333-8444-555555555555")
        console.until(lambda: console.heading() == "Customer", "an unknown customer's page")
        console.find("#resync").click()
        console.until(lambda: console.status().startswith("Nothing to re-sync"), "the re-sync's answer")
        assert "error" not in driver.find_element(By.ID, "status").get_attribute("class")

        step(f"{label}: sign out, and be refused")
        driver.find_element(By.ID, "sign-out").click()
        console.until(lambda: console.heading() == "Sign in to Entitle", "the sign-in page")
        assert not driver.find_element(By.ID, "top").is_displayed(), "the signed-in header is hidden when signed out"
        assert console.status() == "Signed out.", console.status()
        assert "error" not in driver.find_element(By.ID, "status").get_attribute("class"), "signing out is not an error"
        assert "entitle_session" not in {cookie["name"] for cookie in driver.get_cookies()}, "the cookie is gone"
        status = driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            fetch('/v1/stats', {credentials: 'same-origin'}).then((r) => done(r.status)).catch(() => done(0));""")
        assert status == 401, f"after sign-out the API answers {status}"
        driver.get(args.url + "/console#/customer/" + args.token)
        console.until(lambda: console.heading() == "Sign in to Entitle", "the sign-in page again")
        console.shot("signed-out")
        errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"
                  and "401" not in entry["message"] and "403" not in entry["message"]
                  and "11111111-2222-4333-8444-555555555555" not in entry["message"]]  # the unknown customer's 404s
        assert not errors, f"console errors: {errors}"
    finally:
        driver.quit()


run(1280, 900, "desktop", True)
run(390, 844, "phone", False)
print("console: all steps passed", flush=True)
