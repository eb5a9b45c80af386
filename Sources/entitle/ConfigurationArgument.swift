import Foundation
import Server

/// `--config PATH`, else `ENTITLE_CONFIG`: the configuration every command but keygen needs.
func loadConfiguration(_ arguments: Arguments) throws -> EntitleConfiguration {
    guard let path = arguments["config"] ?? ProcessInfo.processInfo.environment["ENTITLE_CONFIG"] else {
        throw UsageError("missing --config (or ENTITLE_CONFIG)")
    }
    return try ConfigurationLoader.load(path: path)
}
