import Synchronization

/// Where PostgreSQL's notices and warnings go (`NOTICE: relation already exists, skipping`…).
/// libpq prints them on standard error by default, outside the JSON log; the composition root
/// forwards them to its logger instead. Until it does, they are dropped.
package enum PostgreSQLNotices {
    private static let handler = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// Sends every notice from now on to `receive` (the message without its trailing newline).
    package static func forward(to receive: @escaping @Sendable (String) -> Void) { handler.withLock { $0 = receive } }

    static func deliver(_ message: String) {
        let receive = handler.withLock { $0 }
        receive?(message.hasSuffix("\n") ? String(message.dropLast()) : message)
    }
}
