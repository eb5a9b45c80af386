import Foundation

/// Values gathered from several threads at once (workers of `concurrentPerform`, killer threads).
package final class LockedList<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Element] = []

    package init() {}

    package func append(_ item: Element) {
        lock.lock()
        items.append(item)
        lock.unlock()
    }

    package var all: [Element] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }

    package var count: Int { all.count }
}
