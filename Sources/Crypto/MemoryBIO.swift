internal import COpenSSL
internal import CShims

/// Owns an OpenSSL memory BIO: a read-only view of bytes, or a growable write buffer.
final class MemoryBIO {
    let raw: OpaquePointer
    /// Keeps the bytes alive for a read-only BIO (OpenSSL does not copy them).
    private let source: [UInt8]

    /// A BIO to read `bytes` from.
    init(reading bytes: [UInt8]) throws(CryptoError) {
        source = bytes
        let pointer = source.withUnsafeBytes { BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }
        guard let pointer else { throw CryptoError.internalFailure(drainOpenSSLErrors("BIO_new_mem_buf failed")) }
        raw = pointer
    }

    /// An empty BIO to write into.
    init() throws(CryptoError) {
        source = []
        guard let pointer = BIO_new(BIO_s_mem()) else {
            throw CryptoError.internalFailure(drainOpenSSLErrors("BIO_new failed"))
        }
        raw = pointer
    }

    deinit { BIO_free(raw) }

    /// What has been written so far.
    var writtenBytes: [UInt8] {
        var data: UnsafePointer<CChar>?
        let length = entitle_bio_mem_data(raw, &data)
        guard let data, length > 0 else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
    }
}
