// libFuzzer target: a configuration file as `check-config` and `serve` read it. The input is the
// file's text, read once as it is and once with the server's environment overrides set to it;
// every problem must come back as a line, never a trap (a `burst` of 1e19 once trapped at
// start-up). Built with the configuration sources of the Application module (see Scripts/fuzz.sh).

@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = Array(UnsafeBufferPointer(start: data, count: size))
    _ = try? ConfigurationLoader.load(text: text, path: "/nonexistent/entitle.json", environment: [:])
    let value = String(decoding: text.prefix(64), as: UTF8.self)
    let overrides = [
        "ENTITLE_PORT", "ENTITLE_EVENT_LOOPS", "ENTITLE_MAX_BODY_BYTES", "ENTITLE_MAX_CONNECTIONS", "ENTITLE_BLOCKING_THREADS",
    ]
    _ = try? ConfigurationLoader.load(
        text: Array(#"{"apps": []}"#.utf8), path: "/nonexistent/entitle.json",
        environment: Dictionary(uniqueKeysWithValues: overrides.map { ($0, value) }))
    return 0
}
