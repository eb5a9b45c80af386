import AppStore
import Application
import Entitlements
import HTTP
import Instants
import JSON

/// Offerings (docs/OFFERINGS.md): what a placement shows the customer, the attributes the app sets
/// for targeting, and the app's offerings and placements as configured.
struct OfferingHandlers: Sendable {
    let application: EntitleApplication

    // MARK: - GET /v1/subscribers/{appAccountToken}/offerings?placement=

    func offering(_ context: HTTPRequestContext) {
        do {
            let caller = try application.caller(context)
            let query = try Query(context.request)
            guard let placement = query["placement"], !placement.isEmpty else {
                throw ServiceError.badRequest("add ?placement= (where the app shows the paywall)")
            }
            for key in ["placement", "store", "country", "platform", "appVersion"] {
                if let value = query[key], value.utf8.count > 64 { throw ServiceError.badRequest("\"\(key)\" has at most 64 bytes") }
            }
            if let store = query["store"], !["appStore", "googlePlay"].contains(store) {
                throw ServiceError.badRequest("\"store\" is appStore or googlePlay")
            }
            let device = OfferingService.Device(
                store: query["store"], country: query["country"], platform: query["platform"], appVersion: query["appVersion"],
                environment: query.environment)
            let (service, token, now) = (
                application.services(for: caller).offerings, context.pathParameters["appAccountToken"] ?? "", application.clock.now()
            )
            let app = caller.app.id
            service.offering(appAccountToken: token, placement: placement, device: device, now: now) { result in
                context.reply(result.map { .object($0) }, app: app)
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    // MARK: - POST /v1/subscribers/{appAccountToken}/attributes

    func setAttributes(_ context: HTTPRequestContext) {
        do {
            let caller = try application.caller(context)
            let body = try RequestBody(context.request)
            guard let given = body.object["attributes"]?.objectValue else {
                throw ServiceError.badRequest("\"attributes\" must be an object of names to strings (null removes one)")
            }
            var changes: [String: String?] = [:]
            for (name, value) in given.members {
                switch value {
                case .null: changes[name] = .some(nil)
                case .string(let text): changes[name] = text
                default: throw ServiceError.badRequest("the value of \"\(name)\" must be a string or null, not \(value.typeName)")
                }
            }
            let (service, token, now, asked) = (
                application.services(for: caller).offerings, context.pathParameters["appAccountToken"] ?? "", application.clock.now(),
                changes
            )
            context.reply(app: caller.app.id) { .object(try await service.setAttributes(appAccountToken: token, changes: asked, now: now)) }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    // MARK: - GET /v1/offerings

    func list(_ context: HTTPRequestContext) {
        do {
            let caller = try application.caller(context)
            try caller.requireAdminKey("listing the app's offerings")
            context.reply(.success(.object(application.services(for: caller).offerings.configured)), app: caller.app.id)
        } catch {
            context.reply(error: error, app: nil)
        }
    }
}

/// Paywall reports (apps) and experiments (admins): decode, call one use case, encode.
extension OfferingHandlers {
    // MARK: - POST /v1/subscribers/{appAccountToken}/paywall-events

    func reportPaywall(_ context: HTTPRequestContext) {
        do {
            let caller = try application.caller(context)
            let body = try RequestBody(context.request)
            let type = try body.requiredString("type")
            guard let kind = PaywallEvent.Kind(rawValue: type) else {
                throw ServiceError.badRequest("\"type\" is \(PaywallEvent.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            let (placement, offering) = (try body.requiredString("placement"), try body.requiredString("offering"))
            let device = OfferingService.Device(
                store: try body.optionalString("store"), country: try body.optionalString("country"),
                platform: try body.optionalString("platform"), appVersion: try body.optionalString("appVersion"))
            let (service, token, now) = (
                application.services(for: caller).offerings, context.pathParameters["appAccountToken"] ?? "", application.clock.now()
            )
            context.reply(app: caller.app.id) {
                .object(
                    try await service.reportPaywall(
                        appAccountToken: token, placement: placement, offering: offering, kind: kind, device: device, now: now))
            }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    // MARK: - /v1/experiments

    func createExperiment(_ context: HTTPRequestContext) {
        do {
            let caller = try application.caller(context)
            try caller.requireAdminKey("making an experiment")
            let body = try RequestBody(context.request).object
            let (service, now) = (application.services(for: caller).experiments, application.clock.now())
            context.reply(app: caller.app.id) { .object(try await service.create(body, now: now)) }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    func changeExperiment(_ context: HTTPRequestContext) {
        do {
            let caller = try application.caller(context)
            try caller.requireAdminKey("starting, stopping or shipping an experiment")
            let body = context.request.body.isEmpty ? JSONObject() : try RequestBody(context.request).object
            let (service, now) = (application.services(for: caller).experiments, application.clock.now())
            let (id, action) = (context.pathParameters["id"] ?? "", context.pathParameters["action"] ?? "")
            context.reply(app: caller.app.id) { .object(try await service.change(id, action: action, body: body, now: now)) }
        } catch {
            context.reply(error: error, app: nil)
        }
    }

    func listExperiments(_ context: HTTPRequestContext) {
        do {
            let caller = try application.caller(context)
            try caller.requireAdminKey("listing experiments")
            let service = application.services(for: caller).experiments
            context.reply(app: caller.app.id) { .object(try await service.list()) }
        } catch {
            context.reply(error: error, app: nil)
        }
    }
}
