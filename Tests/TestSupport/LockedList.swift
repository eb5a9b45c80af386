import Foundation

/// Values gathered from several threads at once (workers of `concurrentPerform`, killer threads).
public final class LockedList<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Element] = []

    public init() {}

    public func append(_ item: Element) {
        lock.lock()
        items.append(item)
        lock.unlock()
    }

    public var all: [Element] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }

    public var count: Int { all.count }
}
