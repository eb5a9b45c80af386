import AppStore
import Application
import Entitlements
import Foundation
import HTTP
import Instants
import JSON

/// `GET /v1/metrics/summary?at=` and `GET /v1/metrics/{name}?from=&to=&interval=` (server or admin
/// key): decode the query, call the metrics use case, encode as JSON, or as CSV for
/// `Accept: text/csv` or `?format=csv`.
struct MetricsHandlers: Sendable {
    let application: EntitleApplication

    private func filter(_ query: Query, app: AppConfiguration) throws(ServiceError) -> MetricsService.Filter {
        // Production unless asked, or the app's first environment when it does not sell there.
        let environment =
            query["environment"] ?? (app.environments.contains(.production) ? "Production" : app.environments.first?.rawValue ?? "")
        guard app.environments.contains(AppStoreEnvironment(rawValue: environment)) else {
            throw .badRequest("environment must be one the app enables (\(app.environments.map(\.rawValue).joined(separator: ", ")))")
        }
        let store = query["store"]
        if let store, store != "app_store", store != "play_store" { throw .badRequest("store must be app_store or play_store") }
        return MetricsService.Filter(
            environment: environment, store: store, productId: query["productId"], subscriptionGroup: query["subscriptionGroup"])
    }

    /// An instant, or a day (`2026-11-01`: its midnight, UTC), as a dashboard's range is written.
    private func instant(_ query: Query, _ name: String, default fallback: Int64) throws(ServiceError) -> Int64 {
        guard let text = query[name] else { return fallback }
        guard let milliseconds = Self.midnight(ofDay: text) ?? Milliseconds.parse(text) else {
            throw .badRequest("\(name) must be epoch milliseconds, ISO 8601 or a date (YYYY-MM-DD), in the years 0 to 9999")
        }
        return milliseconds
    }

    private static func midnight(ofDay text: String) -> Int64? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }), let year = Int64(parts[0]),
            let month = Int64(parts[1]), let day = Int64(parts[2]), (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        let date = CivilDate(year: year, month: month, day: day)
        // 2026-02-30 is no day: its conversion would land in March.
        guard CivilDate(daysSince1970: date.daysSince1970) == date else { return nil }
        return date.daysSince1970 * 86_400_000
    }

    func summary(_ context: HTTPRequestContext) {
        do {
            let caller = try application.caller(context)
            try caller.requireServerKey("business metrics")
            let query = try Query(context.request)
            let now = Milliseconds.since1970(application.clock.now())
            let filter = try filter(query, app: caller.app)
            application.services(for: caller).metrics.summary(at: try instant(query, "at", default: now), filter: filter, now: now) {
                context.reply($0.map { .object(["summary": .object($0)]) }, app: caller.app.id)
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    func series(_ context: HTTPRequestContext) {
        do {
            let caller = try application.caller(context)
            try caller.requireServerKey("business metrics")
            let names = MetricName.allCases.map(\.rawValue).joined(separator: ", ")
            guard let name = MetricName(rawValue: context.pathParameters["name"] ?? "") else {
                throw ServiceError.notFound("no metric by this name (one of \(names))")
            }
            let query = try Query(context.request)
            let now = Milliseconds.since1970(application.clock.now())
            let to = try instant(query, "to", default: now)
            let from = try instant(query, "from", default: to - 30 * 86_400_000)
            guard let interval = MetricsInterval(rawValue: query["interval"] ?? "day") else {
                throw ServiceError.badRequest("interval must be day, week or month")
            }
            let format = query["format"]
            guard format == nil || format == "csv" || format == "json" else { throw ServiceError.badRequest("format must be csv or json") }
            let csv = format == "csv" || (format == nil && (context.request.header("accept")?.contains("text/csv") ?? false))
            let app = caller.app.id
            application.services(for: caller).metrics.series(
                name, from: from, to: to, interval: interval, filter: try filter(query, app: caller.app), now: now
            ) { result in
                guard csv, case .success(let series) = result else {
                    return context.reply(result.map { .object(MetricsRendering.json($0)) }, app: app)
                }
                var response = HTTPResponse(
                    status: 200, headers: [("Content-Type", "text/csv; charset=utf-8")], body: Array(MetricsRendering.csv(series).utf8))
                response.headers.append(("Content-Disposition", "attachment; filename=\"\(name.rawValue).csv\""))
                context.respond(response)
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }
}
