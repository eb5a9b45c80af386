/// A value the app set on its customer (`POST /v1/subscribers/{appAccountToken}/attributes`),
/// for targeting: a name and a string.
package struct CustomerAttribute: Sendable, Equatable {
    package var name: String
    package var value: String
    /// When the app last set it (ms).
    package var updatedAt: Int64

    package init(name: String, value: String, updatedAt: Int64) {
        self.name = name
        self.value = value
        self.updatedAt = updatedAt
    }

    /// At most this many per customer, names of 1–64 of `A–Z a–z 0–9 _ . - $`, values of at most
    /// 500 bytes.
    package static let maximumCount = 50
    package static let maximumValueBytes = 500

    package static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
                    || byte == 0x5F || byte == 0x2E || byte == 0x2D || byte == 0x24
            }
    }

    /// The customer's attributes after `changes` (a nil value removes the name), or nil when they
    /// would be more than `maximumCount`.
    package static func applying(_ changes: [String: String?], to stored: [CustomerAttribute], at now: Int64) -> [CustomerAttribute]? {
        var byName = Dictionary(stored.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for (name, value) in changes {
            byName[name] = value.map { CustomerAttribute(name: name, value: $0, updatedAt: now) }
        }
        guard byName.count <= maximumCount else { return nil }
        return byName.values.sorted { $0.name < $1.name }
    }
}
