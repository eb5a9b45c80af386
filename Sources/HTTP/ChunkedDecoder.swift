/// Decodes a `Transfer-Encoding: chunked` body (RFC 9112 §7.1) incrementally; trailers are
/// read and discarded.
struct ChunkedDecoder: Sendable {
    private(set) var body: [UInt8] = []
    private var phase = Phase.size
    private var trailerBytes = 0

    private enum Phase: Sendable {
        case size
        case data(remaining: Int)
        case dataEnd
        case trailers
    }

    /// Longest chunk-size line accepted (size, extensions, CRLF).
    private static let maxSizeLineBytes = 1024

    /// Consumes what it can from `buffer` starting at `index`; true when the body is complete.
    mutating func consume(_ buffer: [UInt8], from index: inout Int, limits: HTTPParserLimits) throws(HTTPParseError) -> Bool {
        while true {
            switch phase {
            case .size:
                guard let lineEnd = findCRLF(buffer, from: index) else {
                    if buffer.count - index > Self.maxSizeLineBytes { throw .badRequest("chunk size line too long") }
                    return false
                }
                let size = try parseSize(buffer[index..<lineEnd])
                index = lineEnd + 2
                if size == 0 {
                    phase = .trailers
                } else {
                    guard size <= limits.maxBodyBytes - body.count else {
                        throw HTTPParseError(status: 413, code: "BODY_TOO_LARGE",
                                             message: "the body exceeds \(limits.maxBodyBytes) bytes")
                    }
                    phase = .data(remaining: size)
                }
            case .data(let remaining):
                let available = min(remaining, buffer.count - index)
                guard available > 0 else { return false }
                body.append(contentsOf: buffer[index..<index + available])
                index += available
                phase = available == remaining ? .dataEnd : .data(remaining: remaining - available)
            case .dataEnd:
                guard buffer.count - index >= 2 else { return false }
                guard buffer[index] == 0x0D, buffer[index + 1] == 0x0A else { throw .badRequest("chunk not followed by CRLF") }
                index += 2
                phase = .size
            case .trailers:
                guard let lineEnd = findCRLF(buffer, from: index) else {
                    if trailerBytes + buffer.count - index > limits.maxHeaderBytes {
                        throw HTTPParseError(status: 431, code: "HEADERS_TOO_LARGE", message: "trailers too large")
                    }
                    return false
                }
                trailerBytes += lineEnd - index + 2
                guard trailerBytes <= limits.maxHeaderBytes else {
                    throw HTTPParseError(status: 431, code: "HEADERS_TOO_LARGE", message: "trailers too large")
                }
                let empty = lineEnd == index
                index = lineEnd + 2
                if empty { return true }
            }
        }
    }

    private func findCRLF(_ buffer: [UInt8], from start: Int) -> Int? {
        var index = start
        while index + 1 < buffer.count {
            if buffer[index] == 0x0D && buffer[index + 1] == 0x0A { return index }
            index += 1
        }
        return nil
    }

    private func parseSize(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> Int {
        var size = 0
        var digits = 0
        for byte in line {
            let value: Int
            switch byte {
            case 0x30...0x39: value = Int(byte - 0x30)
            case 0x41...0x46: value = Int(byte - 0x41 + 10)
            case 0x61...0x66: value = Int(byte - 0x61 + 10)
            case UInt8(ascii: ";"), 0x20, 0x09:
                // Chunk extensions are allowed and ignored.
                guard digits > 0 else { throw .badRequest("invalid chunk size") }
                return size
            default: throw .badRequest("invalid chunk size")
            }
            digits += 1
            guard digits <= 8 else { throw .badRequest("chunk size too large") }
            size = size << 4 | value
        }
        guard digits > 0 else { throw .badRequest("missing chunk size") }
        return size
    }
}
