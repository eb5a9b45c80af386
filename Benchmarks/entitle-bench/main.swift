import AppStore
import Application
import Crypto
import Entitlements
import Foundation
import HTTP
import JSON
import Server
import Storage

/// `swift run -c release entitle-bench [--seconds N] [--filter NAME]`
/// One JSON object per line (`{"name","value","unit","threads"}`), then a table. Names are stable.

// The storage benchmarks have their own modes (see StorageBenchmarks.swift).
if let mode = CommandLine.arguments.dropFirst().first, mode == "fill-db" || mode == "sign-notifications" || mode == "sign-realtime" {
    exit(try StorageBenchmarks.run(mode, Array(CommandLine.arguments.dropFirst(2))))
}

struct Measurement {
    let name: String
    let operationsPerSecond: Double
}

func measure(_ name: String, seconds: Double, _ operation: () throws -> Void) rethrows -> Measurement {
    // Warm up, then count whole batches until the time is spent.
    for _ in 0..<200 { try operation() }
    let start = DispatchTime.now().uptimeNanoseconds
    var count = 0
    var elapsed = 0.0
    repeat {
        for _ in 0..<100 { try operation() }
        count += 100
        elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    } while elapsed < seconds
    return Measurement(name: name, operationsPerSecond: Double(count) / elapsed)
}

var seconds = 2.0
var filter: String?
var keyPath: String?
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--seconds": seconds = Double(arguments.next() ?? "") ?? seconds
    case "--filter": filter = arguments.next()
    case "--key": keyPath = arguments.next()
    default:
        FileHandle.standardError.write(Data("usage: entitle-bench [--seconds N] [--filter NAME] [--key PKCS8.p8]\n".utf8))
        exit(2)
    }
}

// A key read from a .p8 (as the server does) unless none is given.
let key =
    try keyPath.map { try P256.Signing.PrivateKey(pemRepresentation: String(contentsOfFile: $0, encoding: .utf8)) }
    ?? P256.Signing.PrivateKey()
let publicKey = try key.publicKey
let v1 = PromotionalOfferSigner(privateKey: key, keyId: "BENCHKEY01", bundleId: "com.example.entitle.bench")
let creator = JWSSignatureCreator(
    privateKey: key, keyId: "BENCHKEY01", issuerId: "57246542-96fe-1a63-e053-0824d011072a",
    bundleId: "com.example.entitle.bench")
let promotional = PromotionalOfferV2SignatureCreator(creator)
let eligibility = IntroductoryOfferEligibilitySignatureCreator(creator)
let message = [UInt8](repeating: 0x5A, count: 1024)
let signature = try key.signature(for: message)

/// The whole sign endpoint in-process (JSON in, auth, catalog, v1 signature, JSON out), no sockets.
func makeInProcessServer() throws -> EntitleServer {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("entitle-bench-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    try Data(try key.pemRepresentation.utf8).write(to: folder.appendingPathComponent("key.p8"))
    try Data(
        #"""
        {"server": {"port": 0, "eventLoops": 1}, "apps": [{"id": "bench", "bundleId": "com.example.entitle.bench",
          "environments": ["Sandbox"], "signingKey": {"keyId": "BENCHKEY01", "privateKeyFile": "key.p8"},
          "apiKeys": [{"key": "client_bench_key_not_secret", "role": "client"}],
          "products": {"pro.monthly": {"subscriptionGroup": "1"}},
          "offers": {"winback50": {"productId": "pro.monthly", "offerIdentifier": "winback50"}}}]}
        """#.utf8
    ).write(to: folder.appendingPathComponent("entitle.json"))
    let configuration = try ConfigurationLoader.load(path: folder.appendingPathComponent("entitle.json").path)
    return try EntitleServer(
        configuration: configuration, logOutput: nil, store: SQLiteFactStore(path: folder.appendingPathComponent("sign.sqlite3").path))
}
let inProcess = try makeInProcessServer()
let signRequest = HTTPRequest(
    method: "POST", target: "/v1/promotional-offers/sign",
    headers: [
        ("host", "bench"), ("content-type", "application/json"),
        ("authorization", "Bearer client_bench_key_not_secret"),
    ],
    body: Array(#"{"productId":"pro.monthly","offerId":"winback50","appAccountToken":"7e3fb20b-4cdb-47cc-936d-99d65f608138"}"#.utf8))

var benchmarks: [(String, () throws -> Void)] = [
    (
        "sign.v1",
        {
            _ = try v1.signature(
                productIdentifier: "pro.monthly", subscriptionOfferID: "winback50",
                appAccountToken: "7e3fb20b-4cdb-47cc-936d-99d65f608138", nonce: SecureRandom.uuid(),
                timestamp: 1_764_422_060_123)
        }
    ),
    (
        "sign.promotional-jws",
        {
            _ = try promotional.createSignature(
                productId: "pro.monthly", offerIdentifier: "winback50",
                transactionId: "2000000123456789")
        }
    ),
    (
        "sign.intro-eligibility-jws",
        {
            _ = try eligibility.createSignature(
                productId: "pro.monthly", allowIntroductoryOffer: true,
                transactionId: "2000000123456789")
        }
    ),
    (
        "ecdsa.verify",
        {
            guard publicKey.isValidSignature(signature, for: message) else { fatalError("verify failed") }
        }
    ),
    ("sha256.1KiB", { _ = SHA256.hash(message) }),
    (
        "http.sign.in-process",
        {
            guard inProcess.handle(signRequest).status == 200 else { fatalError("sign request failed") }
        }
    ),
]

// Verification, on the bench-peer fixture (the same signed transaction the Python peer verifies)
// and, per payload kind, on real Apple-signed data from the conformance folder, when present.
let shared = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared")
var verifyBenchmarks: [(String, () throws -> Void)] = []
if let body = FileManager.default.contents(atPath: shared.appendingPathComponent("bench-peer/fixtures/verify-body.json").path),
    let jws = try JSONParser.parse([UInt8](body))["signedTransaction"]?.stringValue
{
    let root = try Certificate.load(contentsOf: shared.appendingPathComponent("bench-peer/fixtures/verify-root.der").path)
    let configuration = SignedDataVerifier.Configuration(
        rootCertificates: root, bundleId: "com.example.entitle.bench",
        appAppleId: nil, environment: .sandbox, onlineChecks: false)
    let warm = try SignedDataVerifier(configuration)
    let cold = try SignedDataVerifier(configuration, chainCache: VerifiedChainCache(capacity: 0))
    verifyBenchmarks.append(
        ("verify.transaction.warm", { guard warm.verifyTransaction(jws).payload != nil else { fatalError("invalid") } }))
    verifyBenchmarks.append(
        ("verify.transaction.cold", { guard cold.verifyTransaction(jws).payload != nil else { fatalError("invalid") } }))
    // The parts of a cold verification, to see where its time goes.
    let x5c = try CompactJWS(jws).header["x5c"]!.arrayValue!.map { try Base64.decode($0.stringValue!) }
    let chainVerifier = try CertificateChainVerifier(trustedRoots: root)
    let leaf = try Certificate(derEncoded: x5c[0]), intermediate = try Certificate(derEncoded: x5c[1])
    verifyBenchmarks.append(("x509.parse", { _ = try Certificate(derEncoded: x5c[0]) }))
    verifyBenchmarks.append(
        (
            "x509.chain",
            {
                guard
                    case .valid = chainVerifier.verify(
                        leaf: leaf, intermediates: [intermediate], at: Date(timeIntervalSince1970: 1_795_959_125))
                else { fatalError("chain") }
            }
        ))
}
let realFolder = shared.appendingPathComponent("conformance/real-appstore")
if let g3 = try? Certificate.load(contentsOf: shared.appendingPathComponent("conformance/roots/AppleRootCA-G3.cer").path),
    let notification = try? String(contentsOf: realFolder.appendingPathComponent("session-00-notification-DID_RENEW.jws"), encoding: .utf8),
    let renewal = try? String(contentsOf: realFolder.appendingPathComponent("session-02-renewalinfo.jws"), encoding: .utf8)
{
    let configuration = SignedDataVerifier.Configuration(
        rootCertificates: g3, bundleId: "com.loki-project.loki-messenger",
        appAppleId: nil, environment: .sandbox, onlineChecks: false)
    let warm = try SignedDataVerifier(configuration)
    let cold = try SignedDataVerifier(configuration, chainCache: VerifiedChainCache(capacity: 0))
    verifyBenchmarks.append(
        ("verify.notification.warm", { guard warm.verifyNotification(notification).payload != nil else { fatalError("invalid") } }))
    verifyBenchmarks.append(
        ("verify.renewal-info.warm", { guard warm.verifyRenewalInfo(renewal).payload != nil else { fatalError("invalid") } }))
    verifyBenchmarks.append(
        (
            "verify.notification.cold.apple-chain",
            { guard cold.verifyNotification(notification).payload != nil else { fatalError("invalid") } }
        ))
}

// One event as the writer makes it inside a write: a renewal of a tokened subscription derived
// from the change, its subscriber view evaluated and the body rendered (the writer's CPU per event).
do {
    let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
    func record(_ id: String, _ start: Int64) -> TransactionRecord {
        TransactionRecord(
            transactionId: id, originalTransactionId: "1000", productId: "pro.monthly", subscriptionGroupIdentifier: "G1",
            purchaseDate: start, expiresDate: start + 2_592_000_000, environment: "Sandbox", signedDate: start, appAccountToken: token,
            price: 4990, currency: "EUR")
    }
    let before = SubscriptionFacts(
        originalTransactionId: "1000", environment: "Sandbox", appAccountToken: token, transactions: [record("1000", 1_790_000_000_000)],
        renewal: RenewalRecord(originalTransactionId: "1000", autoRenewStatus: 1, signedDate: 1_790_000_000_000), signals: [])
    var batch = FactBatch(appId: "bench", environment: "Sandbox")
    batch.transactions = [(record("1001", 1_792_592_000_000), "jws")]
    batch.source = "notification"
    let rules = SubscriberViewRules(
        environments: [.sandbox], products: ["pro.monthly": CatalogProduct(subscriptionGroup: "G1", entitlements: ["pro"])],
        billingRetryGrantsAccess: false, sandboxAccess: .all)
    let composer = EventComposer(
        appId: "bench", rules: rules, endpoints: [EventEndpoint(url: "https://hooks.example/entitle", environments: nil, types: nil)],
        clock: { 1_793_000_000_000 }, newId: { "0e65a1c2-8d3b-4f7e-9a10-2b3c4d5e6f70" })
    let eventsFolder = FileManager.default.temporaryDirectory.appendingPathComponent("entitle-bench-events-\(getpid())")
    try FileManager.default.createDirectory(at: eventsFolder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: eventsFolder) }
    let store = try SQLiteFactStore(path: eventsFolder.appendingPathComponent("events.sqlite3").path)
    var seed = FactBatch(appId: "bench", environment: "Sandbox")
    seed.transactions = before.transactions.map { ($0, "jws") }
    seed.renewal = before.renewal.map { ($0, "jws") }
    seed.requestedLink = ("1000", token)
    _ = try store.apply(seed)
    let pending = try FactChange.read(batch, environments: ["Sandbox"], from: StoreReader(store: store, appId: "bench"))
    let change = FactChange.applying(batch, to: pending)
    guard composer.events(for: change, firstSequence: 1).map(\.type) == ["RENEWAL"] else { fatalError("not a renewal") }
    benchmarks.append(("event.body", { _ = composer.events(for: change, firstSequence: 1) }))
}

var results: [Measurement] = []
for (name, operation) in benchmarks + verifyBenchmarks where filter.map({ name.contains($0) }) ?? true {
    let result = try measure(name, seconds: seconds, operation)
    results.append(result)
    let line: JSONValue = .object([
        "name": .string(name), "value": .double((result.operationsPerSecond * 10).rounded() / 10),
        "unit": "ops/s", "threads": 1,
    ])
    print(line.serializedString)
}
print("")
print("benchmark                         ops/s (1 thread)")
for result in results {
    print(result.name.padding(toLength: 32, withPad: " ", startingAt: 0) + String(format: "%12.0f", result.operationsPerSecond))
}

/// A store's reads as the writer sees them (what `FactChange.read` needs), for `event.body`.
struct StoreReader: FactReading {
    let store: any FactStore
    let appId: String

    func facts(environment: String, originalTransactionId: String, storedToken: String??) throws -> SubscriptionFacts? {
        try store.facts(appId: appId, environment: environment, originalTransactionId: originalTransactionId)
    }
    func facts(environment: String, appAccountToken: String) throws -> [SubscriptionFacts] {
        try store.facts(appId: appId, environment: environment, appAccountToken: appAccountToken)
    }
    func token(environment: String, originalTransactionId: String) throws -> String? {
        try store.facts(appId: appId, environment: environment, originalTransactionId: originalTransactionId)?.appAccountToken
    }
    func linkTransfers(environment: String, appAccountToken: String) throws -> [LinkTransfer] {
        try store.linkTransfers(appId: appId, environment: environment, appAccountToken: appAccountToken)
    }
    func grants(environment: String, appAccountToken: String) throws -> [PromotionalGrant] {
        try store.grants(appId: appId, environment: environment, appAccountToken: appAccountToken)
    }
    func grant(id: String) throws -> PromotionalGrant? { try store.grant(appId: appId, id: id) }
    func playPurchases(appAccountToken: String) throws -> [PlayPurchase] {
        try store.playPurchases(appId: appId, appAccountToken: appAccountToken)
    }
    func playPurchase(token: String) throws -> PlayPurchase? { try store.playPurchase(appId: appId, purchaseToken: token) }
    func retentionRecords(environment: String, originalTransactionId: String) throws -> [RetentionRecord] {
        try store.retentionRecords(appId: appId, environment: environment, originalTransactionId: originalTransactionId)
    }
    func appDownloads(appAccountToken: String) throws -> [AppDownload] {
        try store.appDownloads(appId: appId, appAccountToken: appAccountToken)
    }
    func experimentAssignments(appAccountToken: String) throws -> [ExperimentAssignment] {
        try store.experimentAssignments(appId: appId, appAccountToken: appAccountToken)
    }
}
