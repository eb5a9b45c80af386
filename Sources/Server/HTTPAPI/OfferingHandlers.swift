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
            context.reply(app: caller.app.id) {
                .object(try await service.offering(appAccountToken: token, placement: placement, device: device, now: now))
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
