import Instants
import Synchronization

/// A stored row a read could not make sense of (its JSON, or a column, no longer parses). It is
/// left out of the answer it belonged to, so it must be seen: logged and counted once, listed on
/// `/readyz` and in the console's recent failures with its table and key.
package struct UnreadableRow: Sendable, Equatable, Hashable {
    package var table: String
    package var key: String
    /// For a refund request still waiting for its answer: when the store stops taking one, so
    /// support can answer it by hand in time.
    package var deadline: Int64?

    package init(table: String, key: String, deadline: Int64? = nil) {
        self.table = table
        self.key = key
        self.deadline = deadline
    }

    /// A refund request row that could not be read: pending ones keep their deadline (`requestedAt`
    /// and the store's window, from the row's own columns), so it is still reported as due.
    package static func refundRequest(id: String, store: String, status: String?, requestedAt: Int64?) -> UnreadableRow {
        let pending = status == RefundRequest.Status.pending.rawValue
        return UnreadableRow(
            table: "refund_requests", key: id,
            deadline: pending ? requestedAt.map { $0.addingSaturating(RefundRequest.window(store: store)) } : nil)
    }
}

/// The unreadable rows a store has met since it opened (at most `limit`, the first kept), each
/// told to `observer` once: every read that meets one again adds nothing.
package final class UnreadableRows: Sendable {
    private let state = Mutex<(seen: [UnreadableRow], observer: (@Sendable (UnreadableRow) -> Void)?)>(([], nil))
    package static let limit = 100

    package init() {}

    /// Where each newly met row is told (the server logs and counts it): set once, at start-up.
    package func observe(_ observer: @escaping @Sendable (UnreadableRow) -> Void) {
        state.withLock { $0.observer = observer }
    }

    package func record(_ row: UnreadableRow) {
        let tell = state.withLock { state -> (@Sendable (UnreadableRow) -> Void)? in
            guard !state.seen.contains(where: { $0.table == row.table && $0.key == row.key }) else { return nil }
            if state.seen.count < Self.limit { state.seen.append(row) }
            return state.observer
        }
        tell?(row)
    }

    /// Those met so far, in the order they were met.
    package var rows: [UnreadableRow] { state.withLock { $0.seen } }
}
