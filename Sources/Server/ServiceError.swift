import JSON

/// An error that knows its HTTP status and stable code (API.md's error body). Messages are
/// written for the API's users and never carry key material, signatures or internals.
public struct ServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    public let status: Int
    public let code: String
    public let message: String
    /// Extra members of the error object, e.g. `"reason": "NOT_IN_CATALOG"`.
    public let details: JSONObject

    public init(status: Int, code: String, message: String, details: JSONObject = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
    }

    /// `{"error": {"code", "message", …details}}`
    public var body: JSONValue {
        var error: JSONObject = ["code": .string(code), "message": .string(message)]
        for member in details.members { error[member.key] = member.value }
        return .object(["error": .object(error)])
    }

    public var description: String { "\(status) \(code): \(message)" }

    public static func badRequest(_ message: String) -> ServiceError {
        ServiceError(status: 400, code: "BAD_REQUEST", message: message)
    }

    public static func offerUnavailable(_ reason: String, _ message: String) -> ServiceError {
        ServiceError(status: 422, code: "OFFER_UNAVAILABLE", message: message, details: ["reason": .string(reason)])
    }
}
