import Entitlements
import JSON

/// An unreadable stored row as `/readyz` and the console's overview show it: its table and key,
/// and for a pending refund request the deadline to answer it by hand.
enum UnreadableRowsJSON {
    static func object(_ row: UnreadableRow) -> JSONObject {
        var object: JSONObject = ["table": .string(row.table), "key": .string(row.key)]
        if let deadline = row.deadline { Timestamps.set(&object, "deadline", deadline) }
        return object
    }
}
