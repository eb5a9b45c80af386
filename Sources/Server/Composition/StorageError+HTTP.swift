import Application
import Storage

/// The database did not answer: nothing was acknowledged, the caller may retry. Declared here,
/// where the store is chosen and opened, so the use cases never depend on the storage module.
extension StorageError: HTTPStatusError {
    package var httpStatus: Int { 503 }
    package var code: String { "STORAGE_UNAVAILABLE" }
    package var message: String { "storage failed; try again" }
    package var logDetail: String? { description }
}
