/// The schema a database is at, against the migrations this build knows. A database migrated by a
/// newer Entitle has tables and meanings this build would not keep up to date, so start-up stops
/// instead of writing to it (going back is restoring the backup taken before the upgrade).
enum SchemaVersion {
    static func requireKnown(found: Int64, known: Int) throws(StorageError) {
        guard found <= Int64(known) else {
            throw StorageError(
                code: -1,
                message: "the database is at schema version \(found), newer than this build of Entitle knows (\(known)): "
                    + "run the newer version, or restore the backup taken before the upgrade")
        }
    }
}
