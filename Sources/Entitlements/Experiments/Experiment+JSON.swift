import Instants
package import JSON

/// An experiment as JSON: the admin API's answer and what the store keeps (`init(stored:)` reads
/// back what `json` wrote).
extension Experiment {
    package var json: JSONObject {
        var object: JSONObject = [
            "id": .string(id), "placement": .string(placement), "status": .string(status.rawValue),
            "variants": .array(
                variants.map { .object(["id": .string($0.id), "offering": .string($0.offering), "weight": .double($0.weight)]) }),
            "audience": .object(audience.json), "enrollment": .double(enrollment), "seed": .string(seed), "createdAt": .int(createdAt),
        ]
        if let shipped { object["shipped"] = .string(shipped) }
        if let startedAt { object["startedAt"] = .int(startedAt) }
        if let stoppedAt { object["stoppedAt"] = .int(stoppedAt) }
        return object
    }

    /// What `json` wrote; nil when it is not that (a row that cannot be read).
    package init?(stored object: JSONObject) {
        guard let id = object["id"]?.stringValue, let placement = object["placement"]?.stringValue,
            let status = object["status"]?.stringValue.flatMap(Status.init(rawValue:)),
            let variants = object["variants"]?.arrayValue?.compactMap({ value -> Variant? in
                guard let id = value["id"]?.stringValue, let offering = value["offering"]?.stringValue,
                    let weight = value["weight"]?.number(in: 0...1)
                else { return nil }
                return Variant(id: id, offering: offering, weight: weight)
            }), variants.count == object["variants"]?.arrayValue?.count,
            let audienceObject = object["audience"]?.objectValue,
            // An audience that no longer reads makes the row unreadable (reported by the store).
            let audience = try? TargetingCondition(json: audienceObject),
            let enrollment = object["enrollment"]?.number(in: 0...1), let seed = object["seed"]?.stringValue,
            let createdAt = object["createdAt"]?.integer(in: Milliseconds.range)
        else { return nil }
        self.init(
            id: id, placement: placement, variants: variants, audience: audience, enrollment: enrollment, seed: seed, createdAt: createdAt)
        self.status = status
        shipped = object["shipped"]?.stringValue
        startedAt = object["startedAt"]?.integer(in: Milliseconds.range)
        stoppedAt = object["stoppedAt"]?.integer(in: Milliseconds.range)
    }
}
