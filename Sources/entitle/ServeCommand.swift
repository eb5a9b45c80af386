import Dispatch
import Foundation
import JSON
import Server

/// `entitle serve`: runs until SIGTERM or SIGINT, then shuts down gracefully and exits 0.
/// SIGHUP reloads the trusted roots (e.g. after `entitle fetch-apple-roots`) and the offerings.
enum ServeCommand {
    static let usage = "entitle serve [--config PATH]"

    static func run(_ raw: [String]) throws -> Int32 {
        let configuration = try loadConfiguration(try Arguments(raw, valueOptions: ["config"]))
        let server = try EntitleServer(configuration: configuration)
        var sources: [any DispatchSourceSignal] = []
        for signalNumber in [SIGTERM, SIGINT, SIGHUP] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                if signalNumber == SIGHUP {
                    server.reload()
                    return
                }
                server.logger.log("info", "shutting down", ["signal": .int(Int64(signalNumber))])
                server.shutdown()
            }
            source.resume()
            sources.append(source)
        }
        server.start()
        server.waitUntilStopped()
        server.logger.log("info", "stopped")
        server.logger.close()
        withExtendedLifetime(sources) {}
        return 0
    }
}
