import Crypto
import Entitlements
import Foundation
import JSON
import Storage

/// `entitle-bench fill-db` and `entitle-bench sign-notifications`: the data of the storage
/// benchmarks (Benchmarks/storage.sh runs them against a live server with wrk).
enum StorageBenchmarks {
    static func run(_ mode: String, _ arguments: [String]) throws -> Int32 {
        var options: [String: String] = [:]
        var index = 0
        while index + 1 < arguments.count {
            options[String(arguments[index].drop { $0 == "-" })] = arguments[index + 1]
            index += 2
        }
        switch mode {
        case "fill-db": return try fill(options)
        case "sign-realtime": return try signRealtime(options)
        default: return try signNotifications(options)
        }
    }

    static func token(_ subscriber: Int) -> String {
        String(format: "00000000-0000-4000-8000-%012d", subscriber)
    }

    /// Fills a database with `--transactions` transactions over `--subscribers` subscribers (app
    /// `bench`, Sandbox), in batches of 1,000 per commit, monthly at 9.99 USD (the writer keeps the
    /// business figures as it goes). The stored JWS column holds a placeholder: the read paths under
    /// test never read it. `--current yes`: each subscriber's last month is still running (it
    /// began fifteen days ago), so that the figures have active subscriptions now.
    static func fill(_ options: [String: String]) throws -> Int32 {
        let path = options["db"] ?? "bench.sqlite3"
        let total = Int(options["transactions"] ?? "") ?? 1_000_000
        let subscribers = Int(options["subscribers"] ?? "") ?? 100_000
        let store = try SQLiteFactStore(path: path)
        let start = Date()
        var written = 0
        // Each subscriber's months, the last ending now (or, `--current`, fifteen days from now).
        let periods = Int64(max(1, total / subscribers))
        let now = Int64(Date().timeIntervalSince1970 * 1000) + (options["current"] == nil ? 0 : 15 * 86_400_000)
        while written < total {
            var batch = FactBatch(appId: "bench", environment: "Sandbox")
            for _ in 0..<min(1000, total - written) {
                let subscriber = written % subscribers
                let period = Int64(written / subscribers)
                let record = TransactionRecord(
                    transactionId: "t\(written)", originalTransactionId: "o\(subscriber)", productId: "pro.monthly",
                    subscriptionGroupIdentifier: "G1", purchaseDate: now - 30 * 86_400_000 * (periods - period),
                    expiresDate: now - 30 * 86_400_000 * (periods - 1 - period), environment: "Sandbox",
                    signedDate: now - 30 * 86_400_000 * (periods - period), appAccountToken: token(subscriber), price: 9990,
                    currency: "USD")
                batch.transactions.append((record, "bench"))
                written += 1
            }
            _ = try store.apply(batch)
        }
        // `--today N`: N first purchases of new customers spread over today's hours so far (UTC),
        // as a launch day looks: what a read of today's figures must not pay for.
        let today = Int(options["today"] ?? "") ?? 0
        let clock = Int64(Date().timeIntervalSince1970 * 1000)
        let midnight = clock - clock % 86_400_000
        var bought = 0
        while bought < today {
            var batch = FactBatch(appId: "bench", environment: "Sandbox")
            for _ in 0..<min(1000, today - bought) {
                let at = midnight + (clock - midnight) * Int64(bought) / Int64(today)
                let record = TransactionRecord(
                    transactionId: "n\(bought)", originalTransactionId: "n\(bought)", productId: "pro.monthly",
                    subscriptionGroupIdentifier: "G1", purchaseDate: at, expiresDate: at + 30 * 86_400_000, environment: "Sandbox",
                    signedDate: at, appAccountToken: token(subscribers + bought), price: 9990, currency: "USD")
                batch.transactions.append((record, "bench"))
                bought += 1
            }
            _ = try store.apply(batch)
        }
        print(
            JSONValue.object([
                "name": "fill-db.transactions", "value": .double(Double(total) / Date().timeIntervalSince(start)),
                "unit": "transactions/s", "threads": 1, "sampleToken": .string(token(subscribers / 2)),
            ]).serializedString)
        return 0
    }

    /// Writes `--count` distinct DID_RENEW notifications (each with its nested transaction), signed
    /// by the chain in `--chain` (made by Tests/TestSupport/make-chain.sh), to `--out`, one
    /// `{"signedPayload": …}` body per line, for wrk (Benchmarks/wrk/ingest.lua) to post.
    static func signNotifications(_ options: [String: String]) throws -> Int32 {
        guard let chainFolder = options["chain"], let out = options["out"] else {
            FileHandle.standardError.write(Data("usage: entitle-bench sign-notifications --chain DIR --out FILE [--count N]\n".utf8))
            return 2
        }
        let count = Int(options["count"] ?? "") ?? 20_000
        let (key, header) = try signer(chainFolder)
        // Signed now: the chain was minted moments ago and is valid from then on.
        let base = Int64(Date().timeIntervalSince1970 * 1000)
        let run = UInt32.random(in: 0...UInt32.max)
        var output: [UInt8] = []
        if options["shape"] == "first-purchases" {
            output = try signFirstPurchases(count: count, run: run, base: base, key: key, header: header)
            try Data(output).write(to: URL(fileURLWithPath: out))
            return 0
        }
        for index in 0..<count {
            let transaction = try JWSSigner.sign(
                header: header,
                payload: [
                    "transactionId": .string("i\(run)-\(index)"), "originalTransactionId": .string("io\(run)-\(index % 5000)"),
                    "bundleId": "com.example.app", "productId": "pro.monthly", "type": "Auto-Renewable Subscription",
                    "environment": "Sandbox", "purchaseDate": .int(base), "expiresDate": .int(base + 86_400_000),
                    "signedDate": .int(base + Int64(index % 1000)), "price": 9990, "currency": "USD",
                ], with: key)
            let notification = try JWSSigner.sign(
                header: header,
                payload: [
                    "notificationType": "DID_RENEW", "notificationUUID": .string(String(format: "%08x-0000-4000-8000-%012d", run, index)),
                    "signedDate": .int(base + Int64(index % 1000)),
                    "data": .object([
                        "bundleId": "com.example.app", "environment": "Sandbox", "signedTransactionInfo": .string(transaction),
                    ]),
                ], with: key)
            JSONValue.object(["signedPayload": .string(notification)]).write(into: &output)
            output.append(0x0A)
        }
        try Data(output).write(to: URL(fileURLWithPath: out))
        return 0
    }

    /// `--shape first-purchases`: what a launch or an import looks like — a SUBSCRIBED
    /// (INITIAL_BUY) notification with its signed renewal info for a new customer each (its own
    /// original transaction and app account token), rather than renewals of 5,000 known ones.
    static func signFirstPurchases(
        count: Int, run: UInt32, base: Int64, key: P256.Signing.PrivateKey, header: JSONObject
    ) throws -> [UInt8] {
        var output: [UInt8] = []
        for index in 0..<count {
            let original = "fo\(run)-\(index)"
            let token = String(format: "%08x-0000-4000-8000-%012d", run, index)
            let transaction = try JWSSigner.sign(
                header: header,
                payload: [
                    "transactionId": .string(original), "originalTransactionId": .string(original),
                    "bundleId": "com.example.app", "productId": "pro.monthly", "type": "Auto-Renewable Subscription",
                    "environment": "Sandbox", "purchaseDate": .int(base), "originalPurchaseDate": .int(base),
                    "expiresDate": .int(base + 30 * 86_400_000), "signedDate": .int(base + Int64(index % 1000)),
                    "appAccountToken": .string(token), "price": 9990, "currency": "USD", "inAppOwnershipType": "PURCHASED",
                ], with: key)
            let renewal = try JWSSigner.sign(
                header: header,
                payload: [
                    "originalTransactionId": .string(original), "productId": "pro.monthly", "autoRenewProductId": "pro.monthly",
                    "autoRenewStatus": 1, "environment": "Sandbox", "signedDate": .int(base + Int64(index % 1000)),
                    "renewalDate": .int(base + 30 * 86_400_000),
                ], with: key)
            let notification = try JWSSigner.sign(
                header: header,
                payload: [
                    "notificationType": "SUBSCRIBED", "subtype": "INITIAL_BUY",
                    "notificationUUID": .string(String(format: "%08x-0001-4000-8000-%012d", run, index)),
                    "signedDate": .int(base + Int64(index % 1000)),
                    "data": .object([
                        "bundleId": "com.example.app", "environment": "Sandbox", "signedTransactionInfo": .string(transaction),
                        "signedRenewalInfo": .string(renewal),
                    ]),
                ], with: key)
            JSONValue.object(["signedPayload": .string(notification)]).write(into: &output)
            output.append(0x0A)
        }
        return output
    }

    /// `--count` Retention Messaging realtime requests (app 1234, Sandbox), each with its own
    /// request identifier, for subscriptions `o0`… `o<subscribers - 1>` of `fill-db`.
    static func signRealtime(_ options: [String: String]) throws -> Int32 {
        guard let chainFolder = options["chain"], let out = options["out"] else {
            FileHandle.standardError.write(
                Data("usage: entitle-bench sign-realtime --chain DIR --out FILE [--count N --subscribers N]\n".utf8))
            return 2
        }
        let count = Int(options["count"] ?? "") ?? 20_000
        let subscribers = Int(options["subscribers"] ?? "") ?? 10_000
        let (key, header) = try signer(chainFolder)
        let base = Int64(Date().timeIntervalSince1970 * 1000)
        var output: [UInt8] = []
        for index in 0..<count {
            let request = try JWSSigner.sign(
                header: header,
                payload: [
                    "originalTransactionId": .string("o\(index % subscribers)"), "appAppleId": 1234, "productId": "pro.monthly",
                    "userLocale": "en-US", "requestIdentifier": .string(UUID().uuidString.lowercased()), "signedDate": .int(base),
                    "environment": "Sandbox",
                ], with: key)
            JSONValue.object(["signedPayload": .string(request)]).write(into: &output)
            output.append(0x0A)
        }
        try Data(output).write(to: URL(fileURLWithPath: out))
        return 0
    }

    /// The leaf key of a `make-chain.sh` chain, and the JWS header naming the chain.
    static func signer(_ chainFolder: String) throws -> (P256.Signing.PrivateKey, JSONObject) {
        let folder = URL(fileURLWithPath: chainFolder)
        let key = try P256.Signing.PrivateKey(
            pemRepresentation: String(contentsOf: folder.appendingPathComponent("leaf.key"), encoding: .utf8))
        let x5c = try ["leaf.pem", "intermediate.pem", "root.pem"].map {
            JSONValue.string(Base64.encode(try Certificate.load(contentsOf: folder.appendingPathComponent($0).path)[0].derRepresentation))
        }
        return (key, ["alg": "ES256", "x5c": .array(x5c)])
    }
}
