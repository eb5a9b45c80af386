import Foundation
import Instants

// libFuzzer target: what a request's query string and its times become. The input is read as a
// query string; each value (and the whole input) is parsed as an instant, as an ISO 8601 duration
// added to the edges of the accepted range, and as a page limit, the way the endpoints read them.
// Nothing may trap (the milliseconds conversion once did, and stopped the server), and every
// instant that comes out must lie in `Milliseconds.range`. Built with the sources of QueryString
// over the Instants module (see Scripts/fuzz.sh).

private let starts: [Int64] = [Milliseconds.range.lowerBound, -1, 0, 1_795_963_131_888, Milliseconds.range.upperBound]

private func exercise(_ text: String) {
    if let instant = Milliseconds.parse(text) {
        precondition(Milliseconds.range.contains(instant), "parse gave an instant out of range")
        _ = Milliseconds.date(instant)
    }
    if let number = Double(text) {
        if let instant = Milliseconds.truncating(number) { precondition(Milliseconds.range.contains(instant)) }
        let clamped = Milliseconds.since1970(Date(timeIntervalSince1970: number))
        precondition(Milliseconds.range.contains(clamped), "since1970 left the range")
    }
    if let duration = ISO8601Duration(text) {
        for start in starts {
            if let end = duration.end(from: start) { precondition(Milliseconds.range.contains(end), "a duration's end left the range") }
        }
    }
    _ = Int(text).map { (1...500).contains($0) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzInstants(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    exercise(text)
    if let query = try? QueryString(text) {
        for (name, value) in query.values {
            precondition(query[name] == value)
            exercise(value)
        }
    }
    return 0
}
