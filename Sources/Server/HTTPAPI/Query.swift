import AppStore
import Application
import Foundation
import HTTP
import Instants

/// The query string of a request (`a=1&b=2`), percent-decoded by the same strict rule as path
/// parameters, with the typed parameters several endpoints share.
struct Query {
    private let parameters: QueryString

    init(_ request: HTTPRequest) throws(ServiceError) {
        do { parameters = try QueryString(request.query.map(String.init)) } catch {
            throw .badRequest("malformed percent-encoding in the query parameter \(error.name)")
        }
    }

    subscript(key: String) -> String? { parameters[key] }

    func integer(_ key: String, default value: Int, range: ClosedRange<Int>) throws(ServiceError) -> Int {
        guard let text = parameters[key] else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw .badRequest("\(key) must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// `?environment=Sandbox`: which enabled environment the answer is about (checked by the use case).
    var environment: AppStoreEnvironment? { parameters["environment"].map(AppStoreEnvironment.init(rawValue:)) }

    /// `?at=` (server keys only): the state as it was or will be at that instant, epoch
    /// milliseconds or ISO 8601 (support questions such as "what did they have on the 3rd?").
    func instant(for caller: Caller, now: Date) throws(ServiceError) -> Date {
        guard let value = parameters["at"] else { return now }
        try caller.requireServerKey("at")
        guard let milliseconds = Milliseconds.parse(value) else { throw .badInstant("at") }
        return Milliseconds.date(milliseconds)
    }
}

extension ServiceError {
    /// An instant that is not one, or lies outside the years 0 to 9999.
    static func badInstant(_ name: String) -> ServiceError {
        .badRequest("\(name) must be epoch milliseconds or an ISO 8601 time, in the years 0 to 9999")
    }
}
