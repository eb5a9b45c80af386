import AppStore
import Application
import Foundation
import Instants
import JSON

/// `entitle verify`: prints `{"kind","status","environment","payload"|"reason"}`; exit 0 valid,
/// 1 invalid, 2 usage or configuration error.
enum VerifyCommand {
    static let usage = """
        entitle verify --config PATH --app ID [--environment E] \
        [--kind transaction|renewal-info|notification|app-transaction] [--at ISO8601|now] <JWS or @file>
        """

    static func run(_ raw: [String]) throws -> Int32 {
        let arguments = try Arguments(raw, valueOptions: ["config", "app", "environment", "kind", "at"])
        guard arguments.positionals.count == 1 else { throw UsageError("give exactly one JWS (or @file)") }
        let jws = try readInput(arguments.positionals[0])
        let configuration = try loadConfiguration(arguments)
        let appId = try arguments.required("app")
        guard let app = configuration.app(id: appId) else { throw UsageError("no app \"\(appId)\" in the configuration") }
        let kind: SignedPayloadKind
        if let name = arguments["kind"] {
            guard let parsed = SignedPayloadKind(rawValue: name) else { throw UsageError("unknown --kind \(name)") }
            kind = parsed
        } else {
            guard let detected = SignedPayloadInspection.likelyKind(jws) else {
                throw UsageError("cannot tell the kind of this input; pass --kind")
            }
            kind = detected
        }
        var effectiveDate: Date?
        if let at = arguments["at"] {
            if at == "now" {
                effectiveDate = Date()
            } else {
                guard let date = ISO8601DateFormatter().date(from: at) else {
                    throw UsageError("--at must be an ISO 8601 time such as 2026-11-29T00:00:00Z, or now")
                }
                effectiveDate = date
            }
        }
        let service = try VerificationService(
            app: app, revocationChecker: app.verification.onlineChecks ? OCSPRevocationChecker() : nil, clock: { SystemClock().now() })
        let outcome = service.verify(
            jws, kind: kind, environment: arguments["environment"].map(AppStoreEnvironment.init(rawValue:)),
            effectiveDate: effectiveDate)
        Output.json(.object(outcome.summary))
        return outcome.result.payload == nil ? 1 : 0
    }

    private static func readInput(_ argument: String) throws -> String {
        guard argument.hasPrefix("@") else { return argument }
        let path = String(argument.dropFirst())
        guard let data = FileManager.default.contents(atPath: path) else { throw UsageError("cannot read \(path)") }
        return String(decoding: data, as: UTF8.self)
    }
}
