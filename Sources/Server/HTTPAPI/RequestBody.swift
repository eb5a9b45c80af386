import Application
import HTTP
import Instants
import JSON

/// The JSON object of a request body, with typed field access that answers 400 with a message
/// naming the field and what was wrong.
struct RequestBody {
    let object: JSONObject

    init(_ request: HTTPRequest) throws(ServiceError) {
        if let type = request.header("content-type"), !type.lowercased().hasPrefix("application/json") {
            throw ServiceError(status: 415, code: "UNSUPPORTED_MEDIA_TYPE", message: "send the body as application/json")
        }
        guard !request.body.isEmpty else { throw .badRequest("the body must be a JSON object") }
        let value: JSONValue
        do { value = try JSONParser.parse(request.body) } catch {
            throw .badRequest("malformed JSON: \(error.description)")
        }
        guard let object = value.objectValue else { throw .badRequest("the body must be a JSON object, not \(value.typeName)") }
        self.object = object
    }

    func requiredString(_ key: String) throws(ServiceError) -> String {
        guard let value = object[key] else { throw .badRequest("missing field \"\(key)\"") }
        guard let string = value.stringValue else {
            throw .badRequest("field \"\(key)\" must be a string, not \(value.typeName)")
        }
        guard !string.isEmpty else { throw .badRequest("field \"\(key)\" must not be empty") }
        return string
    }

    func optionalString(_ key: String) throws(ServiceError) -> String? {
        guard let value = object[key], value != .null else { return nil }
        guard let string = value.stringValue else {
            throw .badRequest("field \"\(key)\" must be a string, not \(value.typeName)")
        }
        return string
    }

    /// Epoch milliseconds or an ISO 8601 string, in the years 0 to 9999; nil when absent.
    func optionalInstant(_ key: String) throws(ServiceError) -> Int64? {
        guard let value = object[key], value != .null else { return nil }
        guard let instant = Milliseconds.instant(value) else { throw .badInstant(key) }
        return instant
    }
}
