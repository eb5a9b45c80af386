package import JSON

/// An error that knows the HTTP status and stable code it is answered with (docs/API.md's error body).
/// Every error a use case means to answer implements it; one function in the HTTP layer turns
/// any error into the answer, and an error that does not implement it is a logged 500 `INTERNAL`.
package protocol HTTPStatusError: Error, Sendable {
    var httpStatus: Int { get }
    /// Stable, documented, upper-case (`OFFER_UNAVAILABLE`).
    var code: String { get }
    /// For the API's users: never key material, signatures, SQL or other internals.
    var message: String { get }
    /// Extra members of the error object, e.g. `"reason": "NOT_IN_CATALOG"`.
    var details: JSONObject { get }
    /// For the log line only (the upstream's or the database's own words), never answered.
    var logDetail: String? { get }
}

extension HTTPStatusError {
    package var details: JSONObject { [:] }
    package var logDetail: String? { nil }

    /// `{"error": {"code", "message", …details}}`
    package var body: JSONValue {
        var error: JSONObject = ["code": .string(code), "message": .string(message)]
        for member in details.members { error[member.key] = member.value }
        return .object(["error": .object(error)])
    }
}

/// The plain `HTTPStatusError`: a status, a code, a message and details.
package struct ServiceError: HTTPStatusError, Equatable, CustomStringConvertible {
    package let httpStatus: Int
    package let code: String
    package let message: String
    package let details: JSONObject

    package init(status: Int, code: String, message: String, details: JSONObject = [:]) {
        httpStatus = status
        self.code = code
        self.message = message
        self.details = details
    }

    package var description: String { "\(httpStatus) \(code): \(message)" }

    package static func badRequest(_ message: String) -> ServiceError {
        ServiceError(status: 400, code: "BAD_REQUEST", message: message)
    }

    package static func forbidden(_ message: String) -> ServiceError {
        ServiceError(status: 403, code: "FORBIDDEN", message: message)
    }

    package static func notFound(_ message: String) -> ServiceError {
        ServiceError(status: 404, code: "NOT_FOUND", message: message)
    }

    package static func offerUnavailable(_ reason: String, _ message: String) -> ServiceError {
        ServiceError(status: 422, code: "OFFER_UNAVAILABLE", message: message, details: ["reason": .string(reason)])
    }

    package static let conflict = ServiceError(
        status: 409, code: "CONFLICT",
        message: "this subscription is linked to another appAccountToken; nothing changed")
}
