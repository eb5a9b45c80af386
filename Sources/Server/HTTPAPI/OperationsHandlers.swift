import Application
import HTTP
import JSON

/// `/healthz` (the process answers), `/readyz` (it can do its work: database, trusted roots) and
/// `/metrics`.
struct OperationsHandlers: Sendable {
    let application: EntitleApplication
    let metrics: Metrics

    func health(_ context: HTTPRequestContext) {
        context.respond(.json(200, Array(#"{"status":"ok"}"#.utf8)))
    }

    func readiness(_ context: HTTPRequestContext) {
        application.readiness { readiness in
            let body: JSONValue = .object([
                "status": .string(readiness.ready ? "ready" : "not ready"),
                "checks": .object(readiness.checks),
            ])
            var response = HTTPResponse.json(readiness.ready ? 200 : 503, body.serializedBytes)
            // A failing probe is `info`: its answer says what is missing, and a probe every few
            // seconds would otherwise bury real errors.
            response.logAnnotations.append((Logger.levelAnnotation, "info"))
            context.respond(response)
        }
    }

    func metrics(_ context: HTTPRequestContext) {
        context.respond(
            HTTPResponse(
                status: 200, headers: [("Content-Type", "text/plain; version=0.0.4")],
                body: Array(metrics.render().utf8)))
    }

    /// `GET /.well-known/entitle/jwks.json`: the response-signing public key (none without
    /// `responseSigning`), for the app to pin.
    static func jwks(_ context: HTTPRequestContext, signing: ResponseSigning?) {
        do {
            let keys: JSONObject = try signing?.jwks ?? ["keys": .array([])]
            context.respond(.json(200, JSONValue.object(keys).serializedBytes, headers: [("Cache-Control", "public, max-age=300")]))
        } catch {
            context.reply(error: error, app: nil)
        }
    }
}
