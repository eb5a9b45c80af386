import HTTP
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

    func optionalBool(_ key: String) throws(ServiceError) -> Bool? {
        guard let value = object[key], value != .null else { return nil }
        guard let bool = value.boolValue else { throw .badRequest("field \"\(key)\" must be true or false, not \(value.typeName)") }
        return bool
    }
}

extension HTTPResponse {
    static func json(_ status: Int, _ value: JSONValue, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        .json(status, value.serializedBytes, headers: headers)
    }

    static func error(_ error: ServiceError) -> HTTPResponse {
        var headers: [(name: String, value: String)] = []
        if error.status == 401 { headers.append(("WWW-Authenticate", "Bearer")) }
        if error.status == 503 { headers.append(("Retry-After", "10")) }
        return .json(error.status, error.body, headers: headers)
    }
}
