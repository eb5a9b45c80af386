import Application
import Foundation

/// `entitle <command> …` — see `entitle --help` and the README.
struct Command {
    let name: String
    let usage: String
    let summary: String
    let run: ([String]) throws -> Int32
}

let commands: [Command] = [
    Command(
        name: "serve", usage: ServeCommand.usage, summary: "run the HTTP server until SIGTERM (SIGHUP reloads roots and offerings)",
        run: ServeCommand.run),
    Command(
        name: "sign-offer", usage: SignOfferCommand.usage, summary: "sign a catalogued promotional offer",
        run: SignOfferCommand.run),
    Command(name: "verify", usage: VerifyCommand.usage, summary: "verify and decode App Store signed data", run: VerifyCommand.run),
    Command(
        name: "check-config", usage: CheckConfigCommand.usage, summary: "validate a configuration and show what it sets up",
        run: CheckConfigCommand.run),
    Command(name: "keygen", usage: KeygenCommand.usage, summary: "make a P-256 key for local testing", run: KeygenCommand.run),
    Command(
        name: "fetch-apple-roots", usage: FetchAppleRootsCommand.usage, summary: "download Apple's root certificates",
        run: FetchAppleRootsCommand.run),
    Command(
        name: "sync", usage: SyncCommands.syncUsage, summary: "pull a customer's history from the App Store Server API",
        run: SyncCommands.sync),
    Command(
        name: "backfill", usage: SyncCommands.backfillUsage, summary: "apply missed notifications from Apple's history",
        run: SyncCommands.backfill),
    Command(
        name: "test-notification", usage: SyncCommands.testUsage, summary: "ask Apple for a test notification",
        run: SyncCommands.testNotification),
    Command(
        name: "example-data", usage: ExampleDataCommand.usage,
        summary: "print signed example transactions and notifications for the README's tour",
        run: ExampleDataCommand.run),
    Command(
        name: "retention", usage: RetentionCommand.usage,
        summary: "manage retention messages, images, default messages, the realtime URL, the performance test",
        run: RetentionCommand.run),
    Command(
        name: "metrics", usage: MetricsCommand.usage, summary: "compute the business figures again from the stored facts",
        run: MetricsCommand.run),
    Command(
        name: "test-store", usage: TestStoreCommand.usage, summary: "make the test store's signing chain",
        run: TestStoreCommand.run),
    Command(
        name: "migrate-storage", usage: MigrateStorageCommand.usage, summary: "copy a SQLite deployment into PostgreSQL",
        run: MigrateStorageCommand.run),
]

let usage = """
    entitle \(EntitleVersion.current): a self-hosted backend for apps that sell subscriptions

    usage: entitle <command> [options]    (entitle <command> --help for one command)
    \(commands.map { "  \($0.name.padding(toLength: 18, withPad: " ", startingAt: 0))\($0.summary)" }.joined(separator: "\n"))
      --version         print the version

    exit status: 0 success, 1 the operation failed, 2 usage or configuration error
    """

@MainActor
func run(_ arguments: [String]) -> Int32 {
    let rest = Array(arguments.dropFirst())
    guard let name = arguments.first else {
        Output.error(usage)
        return 2
    }
    switch name {
    case "help" where rest.first.map { topic in commands.contains { $0.name == topic } } ?? false:
        // `entitle help serve` is `entitle serve --help`.
        return run([rest[0], "--help"])
    case "help" where !rest.isEmpty:
        Output.error("entitle: no command \"\(rest[0])\" to help with\n\n\(usage)")
        return 2
    case "--help", "-h", "help":
        Output.line(usage)
        return 0
    case "--version", "version":
        Output.line("entitle \(EntitleVersion.current)")
        return 0
    default: break
    }
    guard let command = commands.first(where: { $0.name == name }) else {
        Output.error("entitle: unknown command \"\(name)\"\n\n\(usage)")
        return 2
    }
    if rest.contains("--help") || rest.contains("-h") {
        Output.line("usage: \(command.usage)\n\n\(command.summary)")
        return 0
    }
    do {
        return try command.run(rest)
    } catch let error as UsageError {
        Output.error("entitle \(command.name): \(error.description)\nusage: \(command.usage)")
        return 2
    } catch let error as ConfigurationError {
        for problem in error.problems { Output.error(problem) }
        return 2
    } catch {
        Output.error("entitle \(command.name): \(error)")
        return 1
    }
}

exit(run(Array(CommandLine.arguments.dropFirst())))
