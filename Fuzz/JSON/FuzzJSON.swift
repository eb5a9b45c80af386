import JSON

// libFuzzer target: the JSON parser and writer. Whatever parses must write, parse back to the
// same value, and write to the same bytes again; nothing may crash.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    for rejectDuplicates in [true, false] {
        guard let value = try? JSONParser.parse(bytes, rejectDuplicateKeys: rejectDuplicates) else { continue }
        let written = value.serializedBytes
        guard let again = try? JSONParser.parse(written, rejectDuplicateKeys: false) else {
            preconditionFailure("what the writer wrote does not parse: \(String(decoding: written, as: UTF8.self))")
        }
        precondition(again == value, "round trip changed the value")
        precondition(again.serializedBytes == written, "writing is not stable")
    }
    return 0
}
