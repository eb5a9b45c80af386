import XCTest

@testable import Application

/// The test store's queue of due steps: earliest first, ties by id, whatever the order of
/// insertion; the reader is left to skip stale entries.
final class DueQueueTests: XCTestCase {
    func testEntriesComeOutEarliestFirstAndTiesById() {
        var queue = DueQueue<String>()
        var random = SeededRandom(seed: 42)
        var inserted: [(at: Int64, id: String)] = []
        for index in 0..<500 {
            let entry = (at: Int64(random.below(50)), id: String(format: "%03d", index % 37))
            inserted.append(entry)
            queue.insert(at: entry.at, id: entry.id)
        }
        var taken: [(at: Int64, id: String)] = []
        while let first = queue.removeFirst() { taken.append(first) }
        let expected = inserted.sorted { ($0.at, $0.id) < ($1.at, $1.id) }
        XCTAssertEqual(taken.map(\.at), expected.map(\.at))
        XCTAssertEqual(taken.map(\.id), expected.map(\.id))
        XCTAssertNil(queue.first)
    }

    /// The same seed draws the same numbers (populations are repeatable), another seed others.
    func testASeedDrawsTheSameSequence() {
        var first = SeededRandom(seed: 7)
        var second = SeededRandom(seed: 7)
        var other = SeededRandom(seed: 8)
        let a = (0..<20).map { _ in first.next() }
        XCTAssertEqual(a, (0..<20).map { _ in second.next() })
        XCTAssertNotEqual(a, (0..<20).map { _ in other.next() })
        XCTAssertEqual(first.uuid().count, 36)
        XCTAssertNotNil(UUID(uuidString: first.uuid()))
    }
}
