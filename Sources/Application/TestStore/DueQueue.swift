/// What falls due when, earliest first (ties by id, so the order is the same every run): a
/// binary heap, of the test store's subscriptions and of a population's moves. An entry is pushed whenever a subscription is stored; one
/// whose subscription has moved on since is stale, and the reader skips it. Finding the next
/// step is then O(log n), not a scan of every subscription (a population of ten thousand takes
/// a hundred thousand steps).
struct DueQueue<ID: Comparable & Sendable>: Sendable {
    private var heap: [(at: Int64, id: ID)] = []

    var count: Int { heap.count }

    /// The earliest entry, not removed.
    var first: (at: Int64, id: ID)? { heap.first }

    mutating func insert(at: Int64, id: ID) {
        heap.append((at, id))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.before(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    @discardableResult
    mutating func removeFirst() -> (at: Int64, id: ID)? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let first = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var earliest = parent
            if left < heap.count, Self.before(heap[left], heap[earliest]) { earliest = left }
            if right < heap.count, Self.before(heap[right], heap[earliest]) { earliest = right }
            guard earliest != parent else { break }
            heap.swapAt(parent, earliest)
            parent = earliest
        }
        return first
    }

    private static func before(_ a: (at: Int64, id: ID), _ b: (at: Int64, id: ID)) -> Bool {
        (a.at, a.id) < (b.at, b.id)
    }
}
