import AppStore
package import Entitlements
package import Foundation
import Instants
package import JSON

/// Experiments on offerings (docs/EXPERIMENTS.md), for admins: made as drafts, started, stopped
/// (for good), a variant shipped; listed with how many customers each variant enrolled.
package struct ExperimentService: Sendable {
    let app: AppConfiguration
    let store: any FactStore
    let pool: BlockingPool
    let catalog: OfferingCatalog
    /// The offering answers' copy, forgotten after each change here.
    let cache: ExperimentCache

    init(_ context: AppContext, catalog: OfferingCatalog, cache: ExperimentCache) {
        app = context.app
        store = context.store
        pool = context.pool
        self.catalog = catalog
        self.cache = cache
    }

    /// `POST /v1/experiments`: a draft from `{"id", "placement", "variants": [{"id", "offering",
    /// "weight"?}], "audience"?, "enrollment"?, "seed"?}`.
    package func create(_ body: JSONObject, now: Date) async throws -> JSONObject {
        let experiment = try ExperimentRequest.parse(body, catalog: catalog.current, at: Milliseconds.since1970(now))
        let existing = try await pool.perform { try store.experiments(appId: app.id) }
        guard !existing.contains(where: { $0.id == experiment.id }) else {
            throw ServiceError(status: 409, code: "CONFLICT", message: "an experiment \"\(experiment.id)\" exists already")
        }
        try await write(experiment)
        return ["experiment": .object(experiment.json)]
    }

    /// `POST /v1/experiments/{id}/start|stop|ship`.
    package func change(_ id: String, action: String, body: JSONObject, now: Date) async throws -> JSONObject {
        let at = Milliseconds.since1970(now)
        let all = try await pool.perform { try store.experiments(appId: app.id) }
        guard var experiment = all.first(where: { $0.id == id }) else { throw ServiceError.notFound("no experiment \"\(id)\"") }
        switch action {
        case "start":
            guard experiment.status == .draft else {
                throw ServiceError(
                    status: 409, code: "CONFLICT", message: "experiment \(id) is \(experiment.status.rawValue): only a draft starts")
            }
            guard catalog.current.placements[experiment.placement] != nil else {
                throw ServiceError(
                    status: 422, code: "UNKNOWN_PLACEMENT", message: "the configuration no longer has \(experiment.placement)")
            }
            let running = all.filter { $0.placement == experiment.placement && $0.status == .running }
            let enrolled = running.reduce(experiment.enrollment) { $0 + $1.enrollment }
            guard enrolled <= 1 + 1e-9 else {
                throw ServiceError(
                    status: 409, code: "EXPERIMENTS_OVERLAP",
                    message: "the running experiments on \(experiment.placement) (\(running.map(\.id).joined(separator: ", "))) "
                        + "would enroll more than 100 % of its customers with this one")
            }
            experiment.status = .running
            experiment.startedAt = at
        case "stop", "ship":
            guard experiment.status != .stopped else {
                throw ServiceError(status: 409, code: "CONFLICT", message: "experiment \(id) is stopped already: stopping is final")
            }
            if action == "ship" {
                guard let variant = body["variant"]?.stringValue, experiment.variants.contains(where: { $0.id == variant }) else {
                    throw ServiceError.badRequest(
                        "\"variant\" names the variant to ship (\(experiment.variants.map(\.id).joined(separator: ", ")))")
                }
                experiment.shipped = variant
            }
            experiment.status = .stopped
            experiment.stoppedAt = at
        default:
            throw ServiceError.notFound("no action \"\(action)\" (start, stop, ship)")
        }
        try await write(experiment)
        return ["experiment": .object(experiment.json)]
    }

    /// `GET /v1/experiments`: every experiment, oldest first, with each variant's enrolled customers.
    package func list() async throws -> JSONObject {
        let listed = try await pool.perform { () throws -> [JSONValue] in
            try store.experiments(appId: app.id).map { experiment in
                var json = experiment.json
                let counts = try store.enrollmentCounts(appId: app.id, experiment: experiment.id)
                json["enrolled"] = .object(JSONObject(experiment.variants.map { (key: $0.id, value: JSONValue.int(counts[$0.id] ?? 0)) }))
                return .object(json)
            }
        }
        return ["experiments": .array(listed)]
    }

    private func write(_ experiment: Experiment) async throws {
        var batch = FactBatch(appId: app.id, environment: app.defaultEnvironment.rawValue)
        batch.experiment = experiment
        batch.requestedAt = experiment.stoppedAt ?? experiment.startedAt ?? experiment.createdAt
        batch.source = "experiments"
        try await store.record(batch)
        cache.forget()
    }
}

/// The body of `POST /v1/experiments`, checked against the offerings configured now.
enum ExperimentRequest {
    static func parse(_ body: JSONObject, catalog: OfferingCatalog.Contents, at: Int64) throws(ServiceError) -> Experiment {
        let allowed: Set<String> = ["id", "placement", "variants", "audience", "enrollment", "seed"]
        if let unknown = body.members.map(\.key).first(where: { !allowed.contains($0) }) {
            throw .badRequest("unknown member \"\(unknown)\" (\(allowed.sorted().joined(separator: ", ")))")
        }
        guard let id = body["id"]?.stringValue, Identifier.isValid(id) else {
            throw .badRequest("\"id\" is 1 to 64 of letters, digits, '_', '-' and '.'")
        }
        guard let placement = body["placement"]?.stringValue, catalog.placements[placement] != nil else {
            throw .badRequest(
                "\"placement\" names one of the app's placements (\(catalog.placements.keys.sorted().joined(separator: ", ")))")
        }
        guard let listed = body["variants"]?.arrayValue, (2...4).contains(listed.count) else {
            throw .badRequest("\"variants\" lists 2 to 4 variants, the control first")
        }
        var variants: [Experiment.Variant] = []
        for value in listed {
            guard let variantId = value["id"]?.stringValue, Identifier.isValid(variantId), !variants.contains(where: { $0.id == variantId })
            else { throw .badRequest("each variant has an \"id\" of its own (1 to 64 of letters, digits, '_', '-' and '.')") }
            guard let offering = value["offering"]?.stringValue, catalog.offerings[offering] != nil else {
                throw .badRequest("variant \(variantId): \"offering\" names one of the app's offerings")
            }
            let weight = value["weight"].map { $0.number(in: 0...1) ?? -1 } ?? 1 / Double(listed.count)
            guard weight.isFinite, weight > 0, weight <= 1 else {
                throw .badRequest("variant \(variantId): \"weight\" is above 0 and at most 1")
            }
            variants.append(Experiment.Variant(id: variantId, offering: offering, weight: weight))
        }
        guard abs(variants.reduce(0) { $0 + $1.weight } - 1) <= 0.01 else { throw .badRequest("the variants' weights sum to 1") }
        var audience = Experiment.defaultAudience
        if let value = body["audience"] {
            guard let object = value.objectValue else { throw .badRequest("\"audience\" is a condition, as a rule's \"when\"") }
            do { audience = try TargetingCondition(json: object) } catch {
                throw .badRequest("audience\(error.member.map { ".\($0)" } ?? ""): \(error.message)")
            }
        }
        let enrollment = body["enrollment"].map { $0.number(in: 0...1) ?? -1 } ?? 1
        guard enrollment.isFinite, enrollment > 0, enrollment <= 1 else { throw .badRequest("\"enrollment\" is above 0 and at most 1") }
        let seed = body["seed"]?.stringValue ?? id
        guard (1...64).contains(seed.utf8.count), seed.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            throw .badRequest("\"seed\" is 1 to 64 printable ASCII characters")
        }
        return Experiment(
            id: id, placement: placement, variants: variants, audience: audience, enrollment: enrollment, seed: seed, createdAt: at)
    }
}
