import Entitlements
import Instants
import JSON

// libFuzzer target: the body of `POST /v1/subscribers/{token}/usage` as the server reads it. The
// input is parsed as JSON; an object goes through `UsageRequest.records`, and every record it
// accepts must hold instants in `Milliseconds.range` and a consumed share in 0...100, and write
// itself as the answer and the stored text does. An `at` of Int64.min once stopped the process.
// Built with the sources of UsageRequest and ServiceError (see Scripts/fuzz.sh).

@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard let body = (try? JSONParser.parse(Array(UnsafeBufferPointer(start: data, count: size))))?.objectValue,
        let records = try? UsageRequest.records(
            body, token: "7e3fb20b-4cdb-47cc-936d-99d65f608138", at: 1_795_963_131_888, by: "server key", newId: { "id" })
    else { return 0 }
    for record in records {
        for event in record.events { precondition(Milliseconds.range.contains(event.at), "an event's instant left the range") }
        if let consumed = record.consumedPercent { precondition((0...100).contains(consumed)) }
        let stored = JSONValue.object(record.json).serializedBytes
        precondition(UsageRecord(stored: (try! JSONParser.parse(stored)).objectValue!) == record, "the stored text reads back")
    }
    return 0
}
