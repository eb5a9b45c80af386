/// Assignment as GrowthBook's SDKs compute it (its published hashing, so an experiment can be
/// checked against GrowthBook's own client and test vectors): FNV-1a over UTF-16 code units, hash
/// version 2, and bucket ranges from the variants' weights and the enrolled fraction.
package enum GrowthBookHashing {
    /// FNV-1a, 32 bits, over the UTF-16 code units of `text` (JavaScript's `charCodeAt`).
    package static func fnv1a32(_ text: String) -> UInt32 {
        var hash: UInt32 = 0x811C_9DC5
        for unit in text.utf16 { hash = (hash ^ UInt32(unit)) &* 0x0100_0193 }
        return hash
    }

    /// A number in [0, 1) for `value` in an experiment seeded with `seed`: version 2 (the default),
    /// or version 1, GrowthBook's first.
    package static func hash(seed: String, value: String, version: Int = 2) -> Double? {
        switch version {
        case 2: return Double(fnv1a32(String(fnv1a32(seed + value))) % 10_000) / 10_000
        case 1: return Double(fnv1a32(value + seed) % 1_000) / 1_000
        default: return nil
        }
    }

    /// Each variant's range of hashes: consecutive by weight, each the enrolled fraction
    /// (`coverage`, clamped to [0, 1]) of its weight; weights of another count, or that do not
    /// sum to 1 within 0.01, are replaced by equal ones.
    package static func bucketRanges(count: Int, coverage: Double = 1, weights: [Double]? = nil) -> [(start: Double, end: Double)] {
        let coverage = min(max(coverage, 0), 1)
        var weights = weights ?? []
        let sum = weights.reduce(0, +)
        if weights.count != count || !(0.99...1.01).contains(sum) || weights.contains(where: { !$0.isFinite || $0 < 0 }) {
            weights = Array(repeating: 1 / Double(count), count: max(count, 0))
        }
        var cumulative = 0.0
        return weights.map { weight in
            let start = cumulative
            cumulative += weight
            return (start, start + coverage * weight)
        }
    }

    /// The variant whose range holds `n`, nil when none does (outside the enrolled fraction).
    package static func chooseVariant(_ n: Double, _ ranges: [(start: Double, end: Double)]) -> Int? {
        ranges.firstIndex { $0.start <= n && n < $0.end }
    }
}
