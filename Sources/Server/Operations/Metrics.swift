import HTTP
import Synchronization

/// Counters for `GET /metrics` (Prometheus text format 0.0.4).
///
/// Request counters live per event loop, so recording takes an uncontended lock on the loop's own
/// shard; a scrape merges the shards.
public final class Metrics: Sendable {
    static let latencyBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    struct RouteStatus: Hashable { let route: String; let status: Int }

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

    private let shards: [ShardBox]
    private let events = Mutex<[String: [String: Int]]>([:])
    /// Set once the server is bound; read at scrape time.
    private let serverStatistics = Mutex<HTTPServerStatistics?>(nil)

    public init(loops: Int) {
        shards = (0..<max(loops, 1)).map { _ in ShardBox() }
    }

    func attach(_ statistics: HTTPServerStatistics) { serverStatistics.withLock { $0 = statistics } }

    func recordRequest(_ record: HTTPRequestRecord, loop: Int) {
        shards[loop % shards.count].state.withLock { shard in
            shard.requests[RouteStatus(route: record.route, status: record.status), default: 0] += 1
            shard.latency[record.route, default: Histogram()].observe(record.durationSeconds)
        }
    }

    /// Counts a labelled event, e.g. `count("entitle_offers_signed_total", label: "kind", "v1")`.
    public func count(_ family: String, label: String, _ value: String) {
        events.withLock { $0[family, default: [:]]["\(label)=\"\(value)\"", default: 0] += 1 }
    }

    public func value(_ family: String, label: String, _ value: String) -> Int {
        events.withLock { $0[family]?["\(label)=\"\(value)\""] ?? 0 }
    }

    private static let eventHelp: [(String, String)] = [
        ("entitle_offers_signed_total", "Offer signatures made, by kind."),
        ("entitle_verifications_total", "Signed-data verifications, by result."),
        ("entitle_notifications_total", "App Store Server Notifications received, by type."),
    ]

    /// The Prometheus exposition.
    public func render() -> String {
        var requests: [RouteStatus: Int] = [:]
        var latency: [String: Histogram] = [:]
        for shard in shards {
            shard.state.withLock { state in
                requests.merge(state.requests, uniquingKeysWith: +)
                for (route, histogram) in state.latency { latency[route, default: Histogram()].merge(histogram) }
            }
        }
        var lines: [String] = []
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
        let counted = events.withLock { $0 }
        for (family, help) in Self.eventHelp {
            lines.append("# HELP \(family) \(help)")
            lines.append("# TYPE \(family) counter")
            for (labels, count) in (counted[family] ?? [:]).sorted(by: { $0.key < $1.key }) {
                lines.append("\(family){\(labels)} \(count)")
            }
        }
        if let statistics = serverStatistics.withLock({ $0 }) {
            lines.append("# HELP entitle_http_open_connections Client connections open now.")
            lines.append("# TYPE entitle_http_open_connections gauge")
            lines.append("entitle_http_open_connections \(statistics.open)")
            lines.append("# HELP entitle_http_connections_refused_total Connections refused at the connection limit.")
            lines.append("# TYPE entitle_http_connections_refused_total counter")
            lines.append("entitle_http_connections_refused_total \(statistics.refused)")
            lines.append("# HELP entitle_http_connections_timed_out_total Connections closed by a header, body or idle timeout.")
            lines.append("# TYPE entitle_http_connections_timed_out_total counter")
            lines.append("entitle_http_connections_timed_out_total \(statistics.timedOut)")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
