/// Decodes a `Transfer-Encoding: chunked` body (RFC 9112 §7.1) incrementally; trailers are
/// checked with the head parser's strictness and discarded.
///
/// Every limit applies to a whole element (a size line, the trailer section), never to the bytes
/// buffered so far, so the verdict does not depend on how TCP splits the input.
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

    /// Longest chunk-size line accepted: size and extensions, without its CRLF.
    static let maxSizeLineBytes = 1024

    /// Consumes what it can from `buffer` starting at `index`; true when the body is complete.
    mutating func consume(_ buffer: [UInt8], from index: inout Int, limits: HTTPParserLimits) throws(HTTPParseError) -> Bool {
        while true {
            switch phase {
            case .size:
                guard
                    let lineEnd = try findLineEnd(
                        buffer, from: index, maxLength: Self.maxSizeLineBytes,
                        tooLong: .badRequest("chunk size line too long"))
                else { return false }
                let size = try Self.parseSizeLine(buffer[index..<lineEnd])
                index = lineEnd + 2
                if size == 0 {
                    phase = .trailers
                } else {
                    guard size <= limits.maxBodyBytes - body.count else {
                        throw HTTPParseError(
                            status: 413, code: "BODY_TOO_LARGE",
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
                // The trailer section, lines with their CRLFs, is held to the head's byte limit.
                let allowance = limits.maxHeaderBytes - trailerBytes - 2
                let tooLarge = HTTPParseError(status: 431, code: "HEADERS_TOO_LARGE", message: "trailers too large")
                guard let lineEnd = try findLineEnd(buffer, from: index, maxLength: allowance, tooLong: tooLarge) else {
                    return false
                }
                let line = buffer[index..<lineEnd]
                trailerBytes += line.count + 2
                index = lineEnd + 2
                if line.isEmpty { return true }
                _ = try HTTPHeadParser.parseField(line)
            }
        }
    }

    /// The index of the CRLF ending the line at `start`, nil while it has not fully arrived, or
    /// `tooLong` once the line is known to exceed `maxLength` bytes (its CRLF excluded).
    private func findLineEnd(
        _ buffer: [UInt8], from start: Int, maxLength: Int,
        tooLong: HTTPParseError
    ) throws(HTTPParseError) -> Int? {
        guard maxLength >= 0 else { throw tooLong }
        var index = start
        let last = min(buffer.count - 1, start + maxLength + 1)
        while index < last {
            if buffer[index] == 0x0D && buffer[index + 1] == 0x0A { return index }
            index += 1
        }
        // No CRLF within maxLength + 2 bytes: the line is longer than allowed.
        if buffer.count - start >= maxLength + 2 { throw tooLong }
        return nil
    }

    /// `chunk-size [ chunk-ext ]`: hex digits, then extensions made of visible characters,
    /// spaces and tabs only (no CR, LF, NUL or other control: the head parser's rules).
    static func parseSizeLine(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> Int {
        var size = 0
        var digits = 0
        var index = line.startIndex
        while index < line.endIndex, let value = hexValue(line[index]) {
            digits += 1
            guard digits <= 8 else { throw .badRequest("chunk size too large") }
            size = size << 4 | value
            index += 1
        }
        guard digits > 0 else { throw .badRequest("missing chunk size") }
        guard index < line.endIndex else { return size }
        guard line[index] == UInt8(ascii: ";") || line[index] == 0x20 || line[index] == 0x09 else {
            throw .badRequest("invalid chunk size")
        }
        // Chunk extensions are allowed and ignored.
        guard line[index...].allSatisfy({ ($0 >= 0x20 && $0 != 0x7F) || $0 == 0x09 }) else {
            throw .badRequest("control character in a chunk extension")
        }
        return size
    }

    private static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case 0x30...0x39: Int(byte - 0x30)
        case 0x41...0x46: Int(byte - 0x41 + 10)
        case 0x61...0x66: Int(byte - 0x61 + 10)
        default: nil
        }
    }
}
