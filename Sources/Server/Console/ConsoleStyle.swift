extension ConsoleAssets {
    /// Plain, readable on a phone, with visible keyboard focus and contrast that passes WCAG AA.
    static let style = #"""
        :root { --ink: #1b1f24; --muted: #57606a; --line: #d0d7de; --paper: #ffffff; --wash: #f6f8fa;
          --accent: #0a5bd8; --good: #116329; --good-wash: #dafbe1; --bad: #a40e26; --bad-wash: #ffebe9; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: var(--wash); }
        a { color: var(--accent); }
        :focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
        .skip { position: absolute; left: -9999px; }
        .skip:focus { left: 8px; top: 8px; background: var(--paper); padding: 4px 8px; z-index: 2; }
        .top { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 16px; padding: 8px 16px; background: var(--ink); color: #fff; }
        .top a { color: #fff; text-decoration: none; padding: 4px 2px; }
        .top a[aria-current="page"] { border-bottom: 2px solid #fff; }
        .top nav { display: flex; flex-wrap: wrap; gap: 4px 16px; }
        .brand { font-weight: 700; }
        .who { margin-left: auto; font-size: 14px; }
        main { max-width: 1100px; margin: 0 auto; padding: 16px; }
        main:focus { outline: none; }
        h1 { font-size: 24px; margin: 8px 0 16px; }
        h2 { font-size: 18px; margin: 0 0 12px; }
        h3 { font-size: 16px; margin: 12px 0 4px; }
        .card { background: var(--paper); border: 1px solid var(--line); border-radius: 8px; padding: 16px; margin: 0 0 16px; }
        .narrow { max-width: 420px; margin: 48px auto; }
        .muted { color: var(--muted); }
        [hidden] { display: none !important; }
        .status { max-width: 1100px; margin: 8px auto 0; padding: 0 16px; min-height: 1.5em; }
        .status.error, .error { color: var(--bad); }
        label { display: block; font-weight: 600; margin: 8px 0 4px; }
        .row label { display: inline-block; margin: 0 4px 0 0; }
        input, select, button { font: inherit; padding: 8px 10px; border: 1px solid var(--line); border-radius: 6px; max-width: 100%; }
        input[type="password"], input[type="search"], input[type="text"] { width: 100%; }
        .row { display: flex; flex-wrap: wrap; align-items: center; gap: 8px; margin: 8px 0; }
        .row input[type="search"] { flex: 1 1 240px; width: auto; }
        #as-of { width: 13em; }
        button { background: var(--accent); color: #fff; border-color: var(--accent); cursor: pointer; }
        button.revoke, button.retry, button.redeliver, #as-of-now { background: var(--paper); color: var(--accent); }
        .top button { background: transparent; border-color: #fff; }
        form.narrow button, #grant-button { margin-top: 12px; }
        .fields { display: grid; grid-template-columns: repeat(auto-fit, minmax(180px, 1fr)); gap: 0 16px; }
        .fields .wide { grid-column: 1 / -1; }
        .stats { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 8px; margin-bottom: 8px; }
        .stat { border: 1px solid var(--line); border-radius: 6px; padding: 8px; }
        .stat-value { display: block; font-size: 24px; font-weight: 700; }
        .stat-label { color: var(--muted); font-size: 14px; }
        .chart { width: 100%; max-width: 640px; height: auto; display: block; margin: 8px 0; }
        .chart .bar { fill: var(--accent); }
        .chart .axis { fill: var(--muted); font-size: 11px; }
        .chart .zero { stroke: var(--line); }
        .chart .bar.series-1 { fill: #8250df; }
        .chart .bar.series-2 { fill: #9a6700; }
        .chart .bar.series-3 { fill: #1a7f37; }
        #charts-form input[type="date"] { width: auto; }
        .plain { list-style: none; padding: 0; margin: 0; }
        .plain li { padding: 4px 0; }
        .badges { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 8px; }
        .badge { border-radius: 999px; padding: 6px 14px; border: 1px solid var(--line); }
        .badge.active { background: var(--good-wash); color: var(--good); border-color: var(--good); }
        .badge.inactive { background: var(--bad-wash); color: var(--bad); border-color: var(--bad); }
        .badge .detail { font-size: 14px; }
        .token { font-family: ui-monospace, monospace; word-break: break-all; }
        .matches { list-style: none; padding: 0; }
        .scroll { overflow-x: auto; }
        table { border-collapse: collapse; width: 100%; font-size: 14px; }
        caption { text-align: left; font-weight: 600; padding-bottom: 4px; }
        th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
        tr.delivery-failed td:first-child { color: var(--bad); font-weight: 700; }
        .timeline { list-style: none; padding: 0; margin: 0; border-left: 3px solid var(--line); }
        .entry { position: relative; padding: 6px 0 10px 16px; }
        .entry time { display: block; font-size: 13px; color: var(--muted); }
        .entry .kind { display: inline-block; font-size: 12px; letter-spacing: .03em;
          background: var(--wash); border: 1px solid var(--line); border-radius: 4px; padding: 0 6px; margin-right: 6px; }
        .entry.kind-grant .kind, .entry.kind-grantRevoked .kind { background: var(--good-wash); }
        .entry pre { white-space: pre-wrap; word-break: break-all; font-size: 12px; background: var(--wash); padding: 8px; border-radius: 6px; }
        @media (max-width: 600px) {
          body { font-size: 15px; }
          .who { margin-left: 0; width: 100%; }
          main { padding: 8px; }
          .card { padding: 12px; }
        }
        """#
}
