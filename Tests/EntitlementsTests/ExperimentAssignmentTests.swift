import Entitlements
import Foundation
import TestSupport
import XCTest

/// Assignment by GrowthBook's published hashing, checked against GrowthBook's own Python client,
/// and splits within sampling error over 100,000 customers.
final class ExperimentAssignmentTests: XCTestCase {
    /// FNV-1a's published test values (the empty string, "a", "foobar").
    func testFNV1a32() {
        XCTAssertEqual(GrowthBookHashing.fnv1a32(""), 0x811C_9DC5)
        XCTAssertEqual(GrowthBookHashing.fnv1a32("a"), 0xE40C_292C)
        XCTAssertEqual(GrowthBookHashing.fnv1a32("foobar"), 0xBF9C_F968)
    }

    /// GrowthBook's client (`growthbook` on PyPI, its `gbhash`, `getBucketRanges` and
    /// `chooseVariation`) and this one give the same hash and variant for 2,000 customers over
    /// several seeds, weights and enrolled fractions, and for non-ASCII seeds (UTF-16 code units).
    func testTheSameAsGrowthBooksOwnClient() throws {
        let python = try requireTestPython("growthbook", for: #function)
        let cases: [(seed: String, weights: [Double], coverage: Double)] = [
            ("paywall-test", [0.5, 0.5], 1), ("onboarding-2026", [0.2, 0.3, 0.5], 0.8), ("é-ü-漢字", [0.25, 0.25, 0.25, 0.25], 0.5),
            ("x", [0.1, 0.9], 0.05), ("thirds", [1.0 / 3, 1.0 / 3, 1.0 / 3], 1),
        ]
        let tokens = (0..<400).map { String(format: "%08x-0000-4000-8000-%012x", $0 * 7919, $0) }
        var input: [[String: Any]] = []
        for item in cases { input.append(["seed": item.seed, "weights": item.weights, "coverage": item.coverage]) }
        let script = """
            import sys, json
            from growthbook.core import gbhash, getBucketRanges, chooseVariation
            cases = json.loads(sys.argv[1]); tokens = json.loads(sys.argv[2])
            out = []
            for c in cases:
                ranges = getBucketRanges(len(c['weights']), c['coverage'], c['weights'])
                out.append([[gbhash(c['seed'], t, 2), chooseVariation(gbhash(c['seed'], t, 2), ranges), gbhash(c['seed'], t, 1)] for t in tokens])
            print(json.dumps(out))
            """
        let run = try runProcess(
            python,
            [
                "-c", script, String(decoding: try JSONSerialization.data(withJSONObject: input), as: UTF8.self),
                String(decoding: try JSONSerialization.data(withJSONObject: tokens), as: UTF8.self),
            ])
        XCTAssertEqual(run.status, 0, run.stderr)
        let expected = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[[Any]]])
        var compared = 0
        for (index, item) in cases.enumerated() {
            let ranges = GrowthBookHashing.bucketRanges(count: item.weights.count, coverage: item.coverage, weights: item.weights)
            for (tokenIndex, token) in tokens.enumerated() {
                let reference = expected[index][tokenIndex]
                let hash = GrowthBookHashing.hash(seed: item.seed, value: token)
                XCTAssertEqual(hash, (reference[0] as? NSNumber)?.doubleValue, "\(item.seed) \(token)")
                XCTAssertEqual(GrowthBookHashing.hash(seed: item.seed, value: token, version: 1), (reference[2] as? NSNumber)?.doubleValue)
                let variant = hash.flatMap { GrowthBookHashing.chooseVariant($0, ranges) } ?? -1
                XCTAssertEqual(variant, (reference[1] as? NSNumber)?.intValue, "\(item.seed) \(token)")
                compared += 1
            }
        }
        XCTAssertEqual(compared, 2000)
    }

    /// Over 100,000 customers each weight is met within sampling error (four standard errors),
    /// and the χ² sample-ratio check does not flag the split (p > 0.001); the enrolled fraction too.
    func testSplitsHoldTheirWeights() {
        let tokens = (0..<100_000).map { String(format: "%08x-%04x-4%03x-8000-000000000000", $0, $0 % 65_536, $0 % 4096) }
        for weights in [[0.5, 0.5], [0.2, 0.3, 0.5], [0.1, 0.2, 0.3, 0.4]] {
            let experiment = Experiment(
                id: "split", placement: "p",
                variants: weights.enumerated().map { Experiment.Variant(id: "v\($0.offset)", offering: "o", weight: $0.element) },
                audience: TargetingCondition(), enrollment: 0.5, seed: "split-\(weights.count)", createdAt: 0)
            var counts = Array(repeating: 0, count: weights.count)
            var enrolled = 0
            for token in tokens {
                guard let variant = experiment.draw(token) else { continue }
                enrolled += 1
                counts[Int(variant.id.dropFirst())!] += 1
            }
            let n = Double(tokens.count)
            XCTAssertEqual(Double(enrolled), n * 0.5, accuracy: 4 * (n * 0.25).squareRoot(), "half enrolled")
            var chiSquare = 0.0
            for (index, weight) in weights.enumerated() {
                let expected = Double(enrolled) * weight
                XCTAssertEqual(Double(counts[index]), expected, accuracy: 4 * (expected * (1 - weight)).squareRoot(), "\(weights)")
                chiSquare += pow(Double(counts[index]) - expected, 2) / expected
            }
            // The χ² quantiles at p = 0.001 for 1, 2 and 3 degrees of freedom.
            XCTAssertLessThan(chiSquare, [10.828, 13.816, 16.266][weights.count - 2], "\(weights): \(counts)")
        }
    }

    func testTheDrawIsTheSameEveryTimeAndWeightsThatDoNotSumToOneAreEqual() {
        let ranges = GrowthBookHashing.bucketRanges(count: 2, coverage: 1, weights: [0.7, 0.7])
        XCTAssertEqual(ranges.map(\.end), [0.5, 1.0], "weights summing to 1.4 are replaced by equal ones")
        XCTAssertEqual(GrowthBookHashing.bucketRanges(count: 2, coverage: 2).map(\.end), [0.5, 1.0], "coverage is at most 1")
        XCTAssertNil(GrowthBookHashing.chooseVariant(0.95, GrowthBookHashing.bucketRanges(count: 2, coverage: 0.5)))
        let experiment = Experiment(
            id: "e", placement: "p", variants: [.init(id: "a", offering: "x", weight: 0.5), .init(id: "b", offering: "y", weight: 0.5)],
            audience: TargetingCondition(), createdAt: 0)
        let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        XCTAssertEqual(experiment.draw(token), experiment.draw(token))
        XCTAssertNil(GrowthBookHashing.hash(seed: "s", value: "v", version: 3))
    }
}
