// libFuzzer target: the HTTP/1.1 request parser. Whole input, the input split at two points
// chosen from it, and the input fed one byte at a time must give the same requests and the same
// error; nothing may crash. Built with the HTTP module's parser sources (see Scripts/fuzz.sh).

private struct Outcome: Equatable {
    var requests: [String] = []
    var errorStatus: Int?
}

/// Small limits, so that short inputs reach every limit's edge.
private let limits = HTTPParserLimits(maxHeaderBytes: 256, maxHeaderCount: 8, maxBodyBytes: 512)

private func parse(_ bytes: [UInt8], cuts: [Int]) -> Outcome {
    var parser = HTTPParser(limits: limits)
    var outcome = Outcome()
    var start = 0
    for end in cuts.sorted() + [bytes.count] where end >= start {
        parser.append(Array(bytes[start..<end]))
        start = end
        do {
            reading: while true {
                switch try parser.next() {
                case .request(let request):
                    outcome.requests.append("\(request.method) \(request.target) \(request.headers.count) \(request.body)")
                case .expectContinue: continue
                case .needMoreData: break reading
                }
            }
        } catch {
            outcome.errorStatus = error.status
            return outcome
        }
    }
    return outcome
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let whole = parse(bytes, cuts: [])
    if size > 1 {
        let first = Int(bytes[0]) % size, second = Int(bytes[size - 1]) % size
        precondition(parse(bytes, cuts: [first, second]) == whole, "split at \(first), \(second) disagrees")
        precondition(parse(bytes, cuts: Array(1..<size)) == whole, "byte by byte disagrees")
    }
    return 0
}
