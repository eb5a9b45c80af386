extension ConsoleAssets {
    /// The Charts page: the business figures of docs/METRICS.md over a range and interval, each
    /// as an SVG bar chart with its numbers in a table under it and a CSV download of the same
    /// series (the API's own CSV). Part of `script`: it uses the helpers defined before it.
    static let chartsScript = #"""
          // ---- charts --------------------------------------------------------------------------
          // kind: "money" (one bar per currency), "count", "rate" (a share), "churn" (stacked by kind).
          const chartFigures = [
            { name: "mrr", title: "MRR", kind: "money" },
            { name: "active-subscriptions", title: "Active subscriptions", kind: "count" },
            { name: "active-trials", title: "Active trials", kind: "count" },
            { name: "revenue", title: "Revenue", kind: "money" },
            { name: "trial-conversions", title: "Trial conversions", kind: "count" },
            { name: "trial-conversion-rate", title: "Trial conversion rate", kind: "rate" },
            { name: "churned-subscriptions", title: "Churned subscriptions", kind: "churn" },
            { name: "refunds", title: "Refunds", kind: "count" },
          ];
          const dayMs = 86400000;

          function isoDay(ms) { return new Date(ms).toISOString().slice(0, 10); }

          // A bucket's columns: one per currency for money, the kinds for churn, else one value.
          function chartColumns(figure, buckets) {
            if (figure.kind === "money") {
              const currencies = new Set();
              for (const bucket of buckets) for (const currency of Object.keys(bucket.value || {})) currencies.add(currency);
              return [...currencies].sort().map((currency) => ({ name: currency, of: (bucket) => (bucket.value || {})[currency] ?? 0 }));
            }
            if (figure.kind === "churn") {
              return ["voluntary", "involuntary", "other"].map((kind) => ({ name: label(kind), of: (bucket) => bucket[kind] }));
            }
            return [{ name: figure.title, of: (bucket) => bucket.value }];
          }

          function formatValue(figure, value) {
            if (value === null || value === undefined) return "—";
            if (figure.kind === "rate") return (value * 100).toFixed(1) + " %";
            if (figure.kind === "money") return value.toFixed(2);
            return String(value);
          }

          // Bars over the buckets: side by side per column, or stacked (churn). Negative values
          // (a refund larger than the day's sales) go below the zero line.
          function barChart(figure, columns, buckets, interval) {
            const ns = "http://www.w3.org/2000/svg";
            const width = 640, height = 150, top = 8, left = 48, bottom = 20;
            const stacked = figure.kind === "churn";
            const sums = buckets.map((bucket) => stacked
              ? [columns.reduce((sum, column) => sum + (column.of(bucket) || 0), 0)] : columns.map((column) => column.of(bucket) || 0));
            const max = Math.max(0, ...sums.flat()), min = Math.min(0, ...sums.flat());
            const span = max - min || 1;
            const y = (value) => top + ((max - value) / span) * height;
            const svg = document.createElementNS(ns, "svg");
            svg.setAttribute("viewBox", `0 0 ${width} ${top + height + bottom}`);
            svg.setAttribute("class", "chart");
            svg.setAttribute("role", "img");
            svg.setAttribute("aria-label", buckets.length
              ? `${figure.title} by ${interval} from ${isoDay(Date.parse(buckets[0].start))} to ${isoDay(Date.parse(buckets[buckets.length - 1].start))}: highest ${formatValue(figure, max)}; the numbers are in the table below`
              : `${figure.title}: no buckets`);
            function text(x, yPosition, content, anchor) {
              const node = document.createElementNS(ns, "text");
              node.setAttribute("x", String(x));
              node.setAttribute("y", String(yPosition));
              node.setAttribute("class", "axis");
              node.setAttribute("text-anchor", anchor);
              node.textContent = content;
              svg.append(node);
            }
            text(left - 4, top + 10, formatValue(figure, max), "end");
            text(left - 4, top + height, formatValue(figure, min), "end");
            const zero = document.createElementNS(ns, "line");
            for (const [name, value] of [["x1", left], ["x2", width], ["y1", y(0)], ["y2", y(0)]]) zero.setAttribute(name, String(value));
            zero.setAttribute("class", "zero");
            svg.append(zero);
            const slot = (width - left) / Math.max(1, buckets.length);
            const barWidth = Math.max(1, (slot - 2) / (stacked ? 1 : Math.max(1, columns.length)));
            buckets.forEach((bucket, index) => {
              let base = 0;
              columns.forEach((column, columnIndex) => {
                const value = column.of(bucket) || 0;
                const from = stacked ? base : 0, to = from + value;
                if (stacked) base = to;
                const bar = document.createElementNS(ns, "rect");
                bar.setAttribute("x", String(left + index * slot + (stacked ? 0 : columnIndex * barWidth)));
                bar.setAttribute("y", String(y(Math.max(from, to))));
                bar.setAttribute("width", String(barWidth));
                bar.setAttribute("height", String(Math.max(Math.abs(y(from) - y(to)), value ? 1 : 0)));
                bar.setAttribute("class", `bar series-${columnIndex}`);
                const title = document.createElementNS(ns, "title");
                title.textContent = `${isoDay(Date.parse(bucket.start))} · ${column.name}: ${formatValue(figure, column.of(bucket))}`;
                bar.append(title);
                svg.append(bar);
              });
            });
            if (buckets.length) {
              text(left, top + height + bottom - 4, isoDay(Date.parse(buckets[0].start)), "start");
              text(width, top + height + bottom - 4, isoDay(Date.parse(buckets[buckets.length - 1].start)), "end");
            }
            return svg;
          }

          function figureTable(figure, columns, buckets) {
            return el("div", { class: "scroll" }, el("table", { class: "figures", "data-metric": figure.name },
              el("caption", { text: figure.title + (figure.kind === "money" ? " (major units per currency)" : "") }),
              el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "Start (UTC)" }),
                columns.map((column) => el("th", { scope: "col", text: column.name })))),
              el("tbody", {}, buckets.map((bucket) => el("tr", {},
                el("th", { scope: "row", text: isoDay(Date.parse(bucket.start)) }),
                columns.map((column) => {
                  const value = column.of(bucket);
                  return el("td", { "data-column": column.name, "data-value": value === null || value === undefined ? "" : String(value),
                    text: formatValue(figure, value) });
                }))))));
          }

          async function showCharts(params) {
            const environments = state.session.environments || [];
            const environment = environments.includes(params.get("environment")) ? params.get("environment")
              : (environments.includes("Production") ? "Production" : environments[0]);
            const interval = ["day", "week", "month"].includes(params.get("interval")) ? params.get("interval") : "day";
            const tomorrow = Math.floor(Date.now() / dayMs) * dayMs + dayMs;
            const valid = (text) => /^\d{4}-\d{2}-\d{2}$/.test(text || "") && !isNaN(Date.parse(text));
            const to = valid(params.get("to")) ? params.get("to") : isoDay(tomorrow);
            const from = valid(params.get("from")) ? params.get("from") : isoDay(Date.parse(to) - 30 * dayMs);
            const query = `from=${from}&to=${to}&interval=${interval}&environment=${encodeURIComponent(environment)}`;

            const form = el("form", { class: "card row", id: "charts-form", "aria-label": "Range and interval" },
              el("label", { for: "charts-from", text: "From" }), el("input", { id: "charts-from", name: "from", type: "date", value: from, required: true }),
              el("label", { for: "charts-to", text: "To (exclusive)" }), el("input", { id: "charts-to", name: "to", type: "date", value: to, required: true }),
              el("label", { for: "charts-interval", text: "Interval" }),
              el("select", { id: "charts-interval", name: "interval" },
                ["day", "week", "month"].map((value) => el("option", { value, selected: value === interval, text: label(value) }))),
              el("label", { for: "charts-environment", text: "Environment" }),
              el("select", { id: "charts-environment", name: "environment" },
                environments.map((value) => el("option", { value, selected: value === environment, text: value }))),
              el("button", { type: "submit", text: "Show" }));
            form.addEventListener("submit", (event) => {
              event.preventDefault();
              const data = new FormData(form);
              location.hash = "#/charts?" + new URLSearchParams(data).toString();
            });

            say("Loading the figures…");
            const [summary, ...series] = await Promise.all([
              api("GET", "/v1/metrics/summary?environment=" + encodeURIComponent(environment)),
              ...chartFigures.map((figure) => api("GET", `/v1/metrics/${figure.name}?${query}`))]);
            say("");
            const now = summary.summary;
            const money = (amounts) => Object.keys(amounts || {}).sort().map((currency) => `${amounts[currency].toFixed(2)} ${currency}`).join(" · ") || "0";
            const cards = el("section", { class: "card", "aria-labelledby": "charts-now" },
              el("h2", { id: "charts-now", text: `Now (${environment})` }),
              el("div", { class: "stats" },
                statCard("Active subscriptions", now.activeSubscriptions, "charts-active"),
                statCard("Active trials", now.activeTrials, "charts-trials"),
                statCard("MRR", money(now.mrr), "charts-mrr"),
                statCard("ARR", money(now.arr), "charts-arr")));
            const sections = chartFigures.map((figure, index) => {
              const buckets = series[index].buckets;
              const columns = chartColumns(figure, buckets);
              const id = "chart-" + figure.name;
              return el("section", { class: "card", id, "aria-labelledby": id + "-heading" },
                el("h2", { id: id + "-heading", text: figure.title }),
                columns.length ? [barChart(figure, columns, buckets, interval), figureTable(figure, columns, buckets)]
                  : el("p", { class: "muted none", text: `No ${figure.title.toLowerCase()} in this range.` }),
                // The server names the file (Content-Disposition).
                el("p", {}, el("a", { class: "csv", href: `/v1/metrics/${figure.name}?${query}&format=csv`, download: true,
                  text: `Download ${figure.title} as CSV` })));
            });
            fill(heading("Charts"),
              el("p", { class: "muted", text: "The business figures, kept from the stored facts as they arrive (UTC buckets; a stock is taken at the end of its bucket, or now)." }),
              form, cards, sections);
            focusMain();
          }

        """#
}
