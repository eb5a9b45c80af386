package import Entitlements
import Foundation
import Storage

/// A store on a fresh SQLite file in a temporary folder, for tests that need one but test
/// something else: they run on a store the server ships, not on a third one of their own.
package func makeTemporaryStore() throws -> any FactStore {
    try SQLiteFactStore(path: try makeTemporaryDirectory("entitle-store").appendingPathComponent("entitle.sqlite3").path)
}
