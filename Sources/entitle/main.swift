import Foundation
import Server

/// `entitle <command> …` — see `entitle help` and the README.
let usage = """
    usage:
      \(ServeCommand.usage)
      \(SignOfferCommand.usage)
      \(VerifyCommand.usage)
      \(CheckConfigCommand.usage)
      \(KeygenCommand.usage)
      \(FetchAppleRootsCommand.usage)
      \(SyncCommands.syncUsage)
      \(SyncCommands.backfillUsage)
      \(SyncCommands.testUsage)
    exit status: 0 success, 1 the operation failed, 2 usage or configuration error
    """

let arguments = Array(CommandLine.arguments.dropFirst())
let command = arguments.first ?? "help"
let rest = Array(arguments.dropFirst())

let status: Int32
do {
    switch command {
    case "serve": status = try ServeCommand.run(rest)
    case "sign-offer": status = try SignOfferCommand.run(rest)
    case "verify": status = try VerifyCommand.run(rest)
    case "check-config": status = try CheckConfigCommand.run(rest)
    case "keygen": status = try KeygenCommand.run(rest)
    case "fetch-apple-roots": status = try FetchAppleRootsCommand.run(rest)
    case "sync": status = try SyncCommands.sync(rest)
    case "backfill": status = try SyncCommands.backfill(rest)
    case "test-notification": status = try SyncCommands.testNotification(rest)
    case "help", "--help", "-h":
        Output.line(usage)
        status = 0
    default:
        Output.error("entitle: unknown command \"\(command)\"\n\(usage)")
        status = 2
    }
} catch let error as UsageError {
    Output.error("entitle: \(error.description)\n\(usage)")
    status = 2
} catch let error as ConfigurationError {
    for problem in error.problems { Output.error(problem) }
    status = 2
} catch {
    Output.error("entitle: \(error)")
    status = 1
}
exit(status)
