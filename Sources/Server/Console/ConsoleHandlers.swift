import AppStore
import Application
import Crypto
import Entitlements
import Foundation
import HTTP
import Instants
import JSON

/// `/console`: the support console's page, script and style (built into the binary, so it works
/// with no internet access), and its session: sign in with an admin key, read the session, sign
/// out. Everything else the page shows comes from the admin API, with the session cookie.
struct ConsoleHandlers: Sendable {
    let application: EntitleApplication

    /// The console's files (Console/Assets), embedded in the binary at build time, each served
    /// with its content's hash as its ETag: a browser asks again with `If-None-Match` and gets 304
    /// until a new binary changes the file.
    private static let page = ConsoleAsset(PackageResources.index_html, type: "text/html; charset=utf-8")
    private static let script = ConsoleAsset(PackageResources.console_js, type: "text/javascript; charset=utf-8")
    private static let formatting = ConsoleAsset(PackageResources.format_js, type: "text/javascript; charset=utf-8")
    private static let style = ConsoleAsset(PackageResources.console_css, type: "text/css; charset=utf-8")

    private var enabled: Bool { application.configuration.console.enabled }

    private func serve(_ context: HTTPRequestContext, _ asset: ConsoleAsset) {
        guard enabled else {
            context.reply(error: ServiceError.notFound("the console is turned off (console.enabled)"), app: nil)
            return
        }
        context.respond(asset.response(ifNoneMatch: context.request.header("if-none-match")))
    }

    func page(_ context: HTTPRequestContext) { serve(context, Self.page) }
    func script(_ context: HTTPRequestContext) { serve(context, Self.script) }
    func formatting(_ context: HTTPRequestContext) { serve(context, Self.formatting) }
    func style(_ context: HTTPRequestContext) { serve(context, Self.style) }

    // MARK: - Session

    /// `POST /console/session` `{"key": "…"}`: an admin key opens a session (cookie + CSRF token).
    func signIn(_ context: HTTPRequestContext) {
        do {
            guard enabled else { throw ServiceError.notFound("the console is turned off (console.enabled)") }
            let key = try RequestBody(context.request).requiredString("key")
            let session = try application.console.signIn(key: key, client: Self.client(context), now: application.clock.now())
            let seconds = session.expiresAt - Int64(application.clock.now().timeIntervalSince1970)
            var response = HTTPResponse.json(200, JSONValue.object(describe(session)).serializedBytes, app: session.caller.app.id)
            response.headers += [
                ("Set-Cookie", cookie(session.token, maxAge: seconds, context)), ("Cache-Control", "no-store"),
            ]
            context.respond(response)
        } catch let error as ServiceError where error.httpStatus == 429 {
            var response = ErrorAnswer.response(for: error, app: nil, requestID: context.requestID)
            response.headers.append(("Retry-After", String(error.details["retryAfterSeconds"]?.integer(in: 1...86_400) ?? 60)))
            context.respond(response)
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    /// `GET /console/session`: who is signed in, the CSRF token, the catalog's entitlements.
    func current(_ context: HTTPRequestContext) {
        guard enabled, let session = application.consoleSession(context.request) else {
            context.reply(error: ServiceError(status: 401, code: "UNAUTHORIZED", message: "not signed in"), app: nil)
            return
        }
        var response = HTTPResponse.json(200, JSONValue.object(describe(session)).serializedBytes, app: session.caller.app.id)
        response.headers.append(("Cache-Control", "no-store"))
        context.respond(response)
    }

    /// `DELETE /console/session` (with the CSRF token): signs out and clears the cookie.
    func signOut(_ context: HTTPRequestContext) {
        do {
            _ = try application.caller(context)
            if let session = application.consoleSession(context.request) {
                application.console.signOut(session, now: application.clock.now())
            }
            var response = HTTPResponse.json(200, Array(#"{"signedOut":true}"#.utf8), app: nil)
            response.headers.append(("Set-Cookie", cookie("", maxAge: 0, context)))
            context.respond(response)
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    private func describe(_ session: ConsoleSessions.Session) -> JSONObject {
        let app = session.caller.app
        var object: JSONObject = [
            "appId": .string(app.id), "bundleId": .string(app.bundleId), "keyName": .string(session.caller.keyName),
            "csrfToken": .string(session.csrfToken),
            "environments": .array(app.environments.map { .string($0.rawValue) }),
            "entitlements": .array(Set(app.products.values.flatMap(\.entitlements)).sorted().map(JSONValue.string)),
            // The figures the Charts page shows, as the server names them (the page restates none).
            "metrics": .array(
                MetricName.allCases.map {
                    .object(["name": .string($0.rawValue), "title": .string($0.title), "kind": .string($0.valueKind)])
                }),
        ]
        Timestamps.set(&object, "expiresAt", session.expiresAt * 1000)
        return object
    }

    /// The session cookie: never readable by script, never sent by another site's page, `Secure`
    /// when the configuration says so or the request came over TLS through a proxy.
    private func cookie(_ value: String, maxAge: Int64, _ context: HTTPRequestContext) -> String {
        var cookie = "\(EntitleApplication.sessionCookie)=\(value); Path=/; Max-Age=\(maxAge); HttpOnly; SameSite=Strict"
        if application.configuration.console.secureCookies || context.request.header("x-forwarded-proto")?.lowercased() == "https" {
            cookie += "; Secure"
        }
        return cookie
    }

    /// Who failed sign-ins are counted against: the connected address, or — when that is a proxy
    /// on this machine — the address the proxy appended last to `X-Forwarded-For` (the last
    /// element of its last line: a client may send lines of its own before the proxy's).
    static func client(_ context: HTTPRequestContext) -> String {
        let peer = context.peer
        guard peer == "127.0.0.1" || peer == "::1" || peer.hasPrefix("::ffff:127."),
            let forwarded = context.request.lastHeader("x-forwarded-for")?.split(separator: ",").last
        else { return peer }
        return forwarded.trimmingCharacters(in: .whitespaces)
    }
}
