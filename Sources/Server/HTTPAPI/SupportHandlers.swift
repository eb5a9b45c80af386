import AppStore
import Application
import Foundation
import HTTP
import Instants
import JSON

/// Support's admin API (admin keys only): promotional grants, a customer's history, search and
/// the overview. Decode, call one use case, encode.
struct SupportHandlers: Sendable {
    let application: EntitleApplication

    private func admin(_ context: HTTPRequestContext, _ what: String) throws(ServiceError) -> (Caller, AppServices) {
        let caller = try application.caller(context)
        try caller.requireAdminKey(what)
        return (caller, application.services(for: caller))
    }

    private func audit(_ caller: Caller, _ action: String, _ target: String) {
        application.instrumentation.record(.supportAction(app: caller.app.id, key: caller.keyName, action: action, target: target))
    }

    // MARK: - POST/DELETE /v1/subscribers/{appAccountToken}/entitlements/{entitlementId}/grants

    func grant(_ context: HTTPRequestContext) {
        do {
            let (caller, services) = try admin(context, "granting entitlements")
            let body = try RequestBody(context.request)
            let duration = try body.optionalString("duration")
            let until = try body.optionalInstant("expiresDate")
            let length: GrantService.Length
            switch (duration, until) {
            case (let duration?, nil): length = .duration(duration)
            case (nil, let until?): length = .until(until)
            default: throw ServiceError.badRequest("give exactly one of \"duration\" (ISO 8601, e.g. P1M) and \"expiresDate\"")
            }
            let token = context.pathParameters["appAccountToken"] ?? ""
            let entitlement = context.pathParameters["entitlementId"] ?? ""
            services.grants.grant(
                appAccountToken: token, entitlement: entitlement, length: length, reason: try body.optionalString("reason"),
                environment: try body.optionalString("environment").map(AppStoreEnvironment.init(rawValue:)), by: caller,
                now: application.clock.now()
            ) { result in
                if case .success(let grant) = result { audit(caller, "grant", "\(entitlement) \(grant["id"]?.stringValue ?? "")") }
                switch result {
                case .success(let grant):
                    context.respond(.json(201, JSONValue.object(["grant": .object(grant)]).serializedBytes, app: caller.app.id))
                case .failure(let error): context.reply(error: error, app: caller.app.id)
                }
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    func revoke(_ context: HTTPRequestContext) {
        do {
            let (caller, services) = try admin(context, "revoking grants")
            let grantId = context.pathParameters["grantId"] ?? ""
            services.grants.revoke(
                appAccountToken: context.pathParameters["appAccountToken"] ?? "",
                entitlement: context.pathParameters["entitlementId"] ?? "", grantId: grantId, by: caller, now: application.clock.now()
            ) { result in
                if case .success = result { audit(caller, "revoke grant", grantId) }
                context.reply(result.map { .object(["grant": .object($0)]) }, app: caller.app.id)
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    // MARK: - GET /v1/subscribers/{appAccountToken}/history

    func history(_ context: HTTPRequestContext) {
        do {
            let (caller, services) = try admin(context, "a customer's history")
            let query = try Query(context.request)
            services.history.history(
                appAccountToken: context.pathParameters["appAccountToken"] ?? "", environment: query.environment,
                now: application.clock.now()
            ) { result in
                context.reply(
                    result.flatMap { found in
                        found.map { .success(.object($0)) } ?? .failure(ServiceError.notFound("nothing is stored for this appAccountToken"))
                    }, app: caller.app.id)
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    // MARK: - GET /v1/subscribers?query=

    func search(_ context: HTTPRequestContext) {
        do {
            let (caller, services) = try admin(context, "searching customers")
            let query = try Query(context.request)
            guard let text = query["query"] else { throw ServiceError.badRequest("add ?query= (a token, transaction id or order ID)") }
            let (search, now) = (services.search, application.clock.now())
            context.reply(app: caller.app.id) { .object(try await search.search(text, now: now)) }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    // MARK: - GET /v1/stats

    func stats(_ context: HTTPRequestContext) {
        do {
            let (caller, services) = try admin(context, "the overview")
            services.overview.stats(now: application.clock.now()) { result in
                context.reply(result.map { .object(["stats": .object($0)]) }, app: caller.app.id)
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }
}
