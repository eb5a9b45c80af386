import AppStore
import Application
import Foundation
import HTTP

/// The query string of a request (`a=1&b=2`), percent-decoded by the same strict rule as path
/// parameters, with the typed parameters several endpoints share.
struct Query {
    private var values: [String: String] = [:]

    init(_ request: HTTPRequest) throws(ServiceError) {
        for pair in (request.query ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard let key = parts.first else { continue }
            guard let value = parts.count > 1 ? String(parts[1]).percentDecoded() : "" else {
                throw .badRequest("malformed percent-encoding in the query parameter \(key)")
            }
            values[String(key)] = value
        }
    }

    subscript(key: String) -> String? { values[key] }

    func integer(_ key: String, default value: Int, range: ClosedRange<Int>) throws(ServiceError) -> Int {
        guard let text = values[key] else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw .badRequest("\(key) must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// `?environment=Sandbox`: which enabled environment the answer is about (checked by the use case).
    var environment: AppStoreEnvironment? { values["environment"].map(AppStoreEnvironment.init(rawValue:)) }

    /// `?at=` (server keys only): the state as it was or will be at that instant, epoch
    /// milliseconds or ISO 8601 (support questions such as "what did they have on the 3rd?").
    func instant(for caller: Caller, now: Date) throws(ServiceError) -> Date {
        guard let value = values["at"] else { return now }
        try caller.requireServerKey("at")
        if let milliseconds = Int64(value) { return Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
        guard let date = Instant.parse(value) else { throw .badRequest("at must be epoch milliseconds or an ISO 8601 time") }
        return date
    }
}

/// ISO 8601 instants as callers send them, with or without fractional seconds.
enum Instant {
    static func parse(_ text: String) -> Date? {
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text) ?? ISO8601DateFormatter().date(from: text)
    }
}
