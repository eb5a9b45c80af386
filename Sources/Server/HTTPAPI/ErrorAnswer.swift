import Application
import HTTP
import JSON

/// The one way any error becomes an answer. An `HTTPStatusError` answers its status, code and
/// details; anything else is a bug or an unforeseen failure: 500 `INTERNAL` with the request id to
/// quote, its description kept for the log line only.
enum ErrorAnswer {
    static func response(for error: any Error, app: String?, requestID: String) -> HTTPResponse {
        let known = error as? any HTTPStatusError
        let status = known?.httpStatus ?? 500
        let body: JSONValue
        if let known {
            body = known.body
        } else {
            body = .object([
                "error": .object([
                    "code": "INTERNAL", "requestId": .string(requestID),
                    "message": .string("an unexpected error occurred; quote request id \(requestID)"),
                ])
            ])
        }
        var headers: [(name: String, value: String)] = [("Content-Type", "application/json")]
        if status == 401 { headers.append(("WWW-Authenticate", "Bearer")) }
        if status == 503 { headers.append(("Retry-After", "10")) }
        var annotations: [(key: String, value: String)] = [("code", known?.code ?? "INTERNAL")]
        if let verdict = known?.details["status"]?.stringValue { annotations.append(("status", verdict)) }
        // The machine-readable why (NOT_IN_CATALOG, ALREADY_SUBSCRIBED_TO_GROUP…), to filter logs by.
        if let reasonCode = known?.details["reason"]?.stringValue { annotations.append(("reasonCode", reasonCode)) }
        annotations.append(("reason", known.map { $0.logDetail ?? $0.message } ?? String(describing: error)))
        if let app { annotations.append(("app", app)) }
        return HTTPResponse(status: status, headers: headers, body: body.serializedBytes, logAnnotations: annotations)
    }
}

extension HTTPRequestContext {
    /// 200 with `value`, or the error's answer.
    func reply(_ result: Result<JSONValue, any Error>, app: String?) {
        reply(serialized: result.map(\.serializedBytes), app: app)
    }

    /// 200 with JSON already serialized, or the error's answer.
    func reply(serialized result: Result<[UInt8], any Error>, app: String?) {
        switch result {
        case .success(let bytes): respond(.json(200, bytes, app: app))
        case .failure(let error): reply(error: error, app: app)
        }
    }

    /// Runs an async use case for this request and answers with its result (200 with its JSON,
    /// or its error's answer).
    func reply(app: String?, _ work: @escaping @Sendable () async throws -> JSONValue) {
        respond(app: app) { .json(200, try await work().serializedBytes, app: app) }
    }

    /// Runs an async use case for this request and answers with the response it makes, or its
    /// error's answer: the one place a handler starts a task. The client going away cancels the
    /// task, and with it any call to Apple or Google it waits on.
    func respond(app: String?, _ work: @escaping @Sendable () async throws -> HTTPResponse) {
        let task = Task {
            do { respond(try await work()) } catch { reply(error: error, app: app) }
        }
        onAbandon { task.cancel() }
    }

    func reply(error: any Error, app: String?) {
        respond(ErrorAnswer.response(for: error, app: app, requestID: requestID))
    }
}

extension HTTPResponse {
    static func json(_ status: Int, _ bytes: [UInt8], app: String?) -> HTTPResponse {
        var response = HTTPResponse.json(status, bytes)
        if let app { response.logAnnotations.append(("app", app)) }
        return response
    }
}
