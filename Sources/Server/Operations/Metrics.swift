package import Application
import HTTP
import Synchronization

#if canImport(Glibc)
import Glibc
import Foundation
#endif

/// Counters for `GET /metrics` (Prometheus text format 0.0.4).
///
/// Request counters live per event loop, so recording takes an uncontended lock on the loop's own
/// shard; a scrape merges the shards. Use-case counters (verifications, notifications, offers)
/// come through `Instrumentation`, one family per question so sums never double-count.
package final class Metrics: Instrumentation, Sendable {
    static let latencyBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    struct RouteStatus: Hashable {
        let route: String
        let status: Int
    }

    struct Histogram {
        var buckets = [Int](repeating: 0, count: Metrics.latencyBuckets.count)
        var count = 0
        var sum = 0.0

        mutating func observe(_ seconds: Double) {
            count += 1
            sum += seconds
            if let index = Metrics.latencyBuckets.firstIndex(where: { seconds <= $0 }) { buckets[index] += 1 }
        }

        mutating func merge(_ other: Histogram) {
            for index in buckets.indices { buckets[index] += other.buckets[index] }
            count += other.count
            sum += other.sum
        }
    }

    struct Shard {
        var requests: [RouteStatus: Int] = [:]
        var latency: [String: Histogram] = [:]
    }

    final class ShardBox: Sendable {
        let state = Mutex(Shard())
    }

    /// The use-case counter families (`Observation.CounterFamily`: each observation says its own).
    typealias Family = Observation.CounterFamily

    /// One series: its family and label values (in the family's label order). Counting hashes
    /// these few short strings; formatting and escaping wait for a scrape.
    struct Series: Hashable {
        let family: Family
        let values: [String]
    }

    private let shards: [ShardBox]
    private let counters = Mutex<[Series: Int]>([:])
    /// Set once the server is bound; read at scrape time.
    private let sources = Mutex<(HTTPServerStatistics?, BlockingPool?, BlockingPool?)>((nil, nil, nil))
    private let startedAt = Double(time(nil))
    /// The latest backlog each app's deliverers measured.
    private let backlogs = Mutex<[String: (pending: Int, failed: Int, oldestSeconds: Double)]>([:])
    /// The latest count of purchases each app's Google acknowledger found unacknowledged past a day.
    private let unacknowledged = Mutex<[String: Int]>([:])

    package init(loops: Int) {
        shards = (0..<max(loops, 1)).map { _ in ShardBox() }
    }

    func attach(_ statistics: HTTPServerStatistics, pool: BlockingPool, outbound: BlockingPool) {
        sources.withLock { $0 = (statistics, pool, outbound) }
    }

    func recordRequest(_ record: HTTPRequestRecord, loop: Int) {
        shards[loop % shards.count].state.withLock { shard in
            shard.requests[RouteStatus(route: record.route, status: record.status), default: 0] += 1
            shard.latency[record.route, default: Histogram()].observe(record.durationSeconds)
        }
    }

    // MARK: - Instrumentation

    /// An observation's counter, or the gauge it sets.
    package func record(_ observation: Observation) {
        switch observation {
        case .deliveryBacklog(let app, let pending, let failed, let oldestPendingSeconds):
            backlogs.withLock { $0[app] = (pending, failed, oldestPendingSeconds) }
        case .unacknowledgedPurchases(let app, let count):
            unacknowledged.withLock { $0[app] = count }
        default:
            if let counter = observation.counter { count(counter.family, counter.values) }
        }
    }

    private func count(_ family: Family, _ values: [String]) {
        let series = Series(family: family, values: values)
        counters.withLock { $0[series, default: 0] += 1 }
    }

    /// `name="value",…` as the text format writes labels.
    private static func labelText(_ series: Series) -> String {
        zip(series.family.labels, series.values).map { "\($0.0)=\"\(escaped($0.1))\"" }.joined(separator: ",")
    }

    /// Label values escaped as the text format requires (values come from signed data).
    private static func escaped(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") || $0 == 0x0A }) else { return value }
        return value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    /// The sum of a family's series whose labels include all of `labels` (tests, diagnostics).
    package func total(_ family: String, matching labels: [String: String] = [:]) -> Int {
        counters.withLock { counters in
            counters.filter { series, _ in
                series.family.name == family
                    && labels.allSatisfy { label, value in
                        series.family.labels.firstIndex(of: label).map { series.values[$0] == value } ?? false
                    }
            }.values.reduce(0, +)
        }
    }

    // MARK: - Exposition

    package func render() -> String {
        var lines: [String] = []
        renderRequests(into: &lines)
        let counted = counters.withLock { $0 }
        for family in Family.allCases {
            lines.append("# HELP \(family.name) \(family.help)")
            lines.append("# TYPE \(family.name) counter")
            let series = counted.filter { $0.key.family == family }.map { (Self.labelText($0.key), $0.value) }
            for (labels, count) in series.sorted(by: { $0.0 < $1.0 }) { lines.append("\(family.name){\(labels)} \(count)") }
        }
        let (statistics, pool, outbound) = sources.withLock { $0 }
        if let statistics {
            gauge(&lines, "entitle_http_open_connections", "Client connections open now.", statistics.open)
            counter(
                &lines, "entitle_http_connections_refused_total", "Connections refused at the connection limit or for want of descriptors.",
                statistics.refused)
            counter(
                &lines, "entitle_http_connections_timed_out_total", "Connections closed by a request, write or idle deadline.",
                statistics.timedOut)
        }
        if let pool {
            gauge(&lines, "entitle_blocking_pool_threads", "Threads of the blocking pool.", pool.threadCount)
            gauge(&lines, "entitle_blocking_pool_busy_threads", "Blocking-pool threads running a job now.", pool.busyThreads)
            gauge(&lines, "entitle_blocking_pool_queued_jobs", "Jobs waiting for a blocking-pool thread.", pool.queuedJobs)
        }
        if let outbound {
            gauge(&lines, "entitle_outbound_pool_threads", "Threads of the pool that calls Apple, Google and OCSP.", outbound.threadCount)
            gauge(&lines, "entitle_outbound_pool_busy_threads", "Outbound-pool threads running a call now.", outbound.busyThreads)
            gauge(&lines, "entitle_outbound_pool_queued_jobs", "Calls waiting for an outbound-pool thread.", outbound.queuedJobs)
        }
        let backlog = backlogs.withLock { $0 }.sorted { $0.key < $1.key }
        if !backlog.isEmpty {
            for (name, help, value) in [
                (
                    "entitle_webhook_deliveries_pending", "Deliveries waiting for a (first or next) attempt.",
                    { (b: (Int, Int, Double)) in "\(b.0)" }
                ),
                ("entitle_webhook_deliveries_failed", "Deliveries that ran out of retries (dead).", { "\($0.1)" }),
                ("entitle_webhook_oldest_pending_seconds", "Age of the oldest pending delivery.", { "\($0.2)" }),
            ] as [(String, String, ((Int, Int, Double)) -> String)] {
                lines.append("# HELP \(name) \(help)")
                lines.append("# TYPE \(name) gauge")
                for (app, values) in backlog { lines.append("\(name){app=\"\(Self.escaped(app))\"} \(value(values))") }
            }
        }
        let late = unacknowledged.withLock { $0 }.sorted { $0.key < $1.key }
        if !late.isEmpty {
            lines.append(
                "# HELP entitle_google_unacknowledged_purchases Google Play purchases unacknowledged a day after they were stored"
                    + " (Google refunds them after three).")
            lines.append("# TYPE entitle_google_unacknowledged_purchases gauge")
            for (app, count) in late { lines.append("entitle_google_unacknowledged_purchases{app=\"\(Self.escaped(app))\"} \(count)") }
        }
        lines.append("# HELP entitle_build_info The running build.")
        lines.append("# TYPE entitle_build_info gauge")
        lines.append("entitle_build_info{version=\"\(EntitleVersion.current)\"} 1")
        renderProcess(into: &lines)
        return lines.joined(separator: "\n") + "\n"
    }

    private func renderRequests(into lines: inout [String]) {
        var requests: [RouteStatus: Int] = [:]
        var latency: [String: Histogram] = [:]
        for shard in shards {
            shard.state.withLock { state in
                requests.merge(state.requests, uniquingKeysWith: +)
                for (route, histogram) in state.latency { latency[route, default: Histogram()].merge(histogram) }
            }
        }
        lines.append("# HELP entitle_http_requests_total HTTP requests answered, by route and status.")
        lines.append("# TYPE entitle_http_requests_total counter")
        for (key, count) in requests.sorted(by: { ($0.key.route, $0.key.status) < ($1.key.route, $1.key.status) }) {
            lines.append("entitle_http_requests_total{route=\"\(key.route)\",status=\"\(key.status)\"} \(count)")
        }
        lines.append("# HELP entitle_http_request_duration_seconds Time from the first byte of a request to its answer.")
        lines.append("# TYPE entitle_http_request_duration_seconds histogram")
        for (route, histogram) in latency.sorted(by: { $0.key < $1.key }) {
            var cumulative = 0
            for (index, bound) in Self.latencyBuckets.enumerated() {
                cumulative += histogram.buckets[index]
                lines.append("entitle_http_request_duration_seconds_bucket{route=\"\(route)\",le=\"\(bound)\"} \(cumulative)")
            }
            lines.append("entitle_http_request_duration_seconds_bucket{route=\"\(route)\",le=\"+Inf\"} \(histogram.count)")
            lines.append("entitle_http_request_duration_seconds_sum{route=\"\(route)\"} \(histogram.sum)")
            lines.append("entitle_http_request_duration_seconds_count{route=\"\(route)\"} \(histogram.count)")
        }
    }

    /// The standard process metrics (names of the Prometheus client libraries).
    private func renderProcess(into lines: inout [String]) {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let cpu =
            Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        lines.append("# HELP process_cpu_seconds_total User and system CPU time spent, in seconds.")
        lines.append("# TYPE process_cpu_seconds_total counter")
        lines.append("process_cpu_seconds_total \(cpu)")
        if let pages = Self.residentPages() {
            gauge(&lines, "process_resident_memory_bytes", "Resident memory size in bytes.", pages * Int(sysconf(Int32(_SC_PAGESIZE))))
        }
        if let open = Self.openDescriptors() {
            gauge(&lines, "process_open_fds", "Open file descriptors.", open)
        }
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 {
            gauge(&lines, "process_max_fds", "The descriptor limit (RLIMIT_NOFILE).", Int(min(limit.rlim_cur, rlim_t(Int.max))))
        }
        lines.append("# HELP process_start_time_seconds Start time of the process since the epoch, in seconds.")
        lines.append("# TYPE process_start_time_seconds gauge")
        lines.append("process_start_time_seconds \(startedAt)")
    }

    /// The second field of `/proc/self/statm`.
    private static func residentPages() -> Int? {
        guard let file = fopen("/proc/self/statm", "r") else { return nil }
        defer { fclose(file) }
        var size = 0, resident = 0
        return withUnsafeMutablePointer(to: &size) { sizePointer in
            withUnsafeMutablePointer(to: &resident) { residentPointer in
                withVaList([sizePointer, residentPointer]) { vfscanf(file, "%ld %ld", $0) } == 2 ? residentPointer.pointee : nil
            }
        }
    }

    private static func openDescriptors() -> Int? {
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        var count = 0
        while readdir(directory) != nil { count += 1 }
        return count - 3  // ".", ".." and the directory's own descriptor
    }

    private func gauge(_ lines: inout [String], _ name: String, _ help: String, _ value: Int) {
        lines.append("# HELP \(name) \(help)")
        lines.append("# TYPE \(name) gauge")
        lines.append("\(name) \(value)")
    }

    private func counter(_ lines: inout [String], _ name: String, _ help: String, _ value: Int) {
        lines.append("# HELP \(name) \(help)")
        lines.append("# TYPE \(name) counter")
        lines.append("\(name) \(value)")
    }
}
