import Application
import Storage

/// The database did not answer: nothing was acknowledged, the caller may retry. Declared here,
/// where the store is chosen and opened, so the use cases never depend on the storage module.
extension StorageError: HTTPStatusError {
    public var httpStatus: Int { 503 }
    public var code: String { "STORAGE_UNAVAILABLE" }
    public var message: String { "storage failed; try again" }
    public var logDetail: String? { description }
}
