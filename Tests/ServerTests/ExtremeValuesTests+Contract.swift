import AppStore
import Foundation
import JSON
import TestSupport
import XCTest

/// The walk of `ExtremeValuesTests` driven by what the API and Apple's payloads declare rather than
/// by a list of names: every member of every request body in docs/openapi.json, at any depth
/// (`usage[].events[].at` was missed by the list and killed the process), and every number of the
/// signed transaction and renewal info, each set in turn to values at and beyond every edge.
extension ExtremeValuesTests {
    /// Values no caller can mean, as JSON: Int64's edges, Double's, instants past year 9999 and
    /// before year 0, and text forms of the same.
    static let extremeJSON: [JSONValue] =
        extremeNumbers + [.int(-9_223_372_036_854_775_807), .double(-9.3e18)]
        + ["9223372036854775807", "-9223372036854775808", "+292277026-01-01T00:00:00Z", "0000-01-01T00:00:00Z", "1e308", "P1M1M"]

    func testEveryRequestBodyMemberOfTheContractSurvivesExtremeValues() throws {
        let document = try XCTUnwrap(
            JSONParser.parse(Array(Data(contentsOf: packageRoot.appendingPathComponent("docs/openapi.json")))).objectValue)
        let contract = OpenAPIBodies(document: document)
        var walked = 0
        for (pattern, item) in try XCTUnwrap(document["paths"]?.objectValue).members {
            let path = pattern.split(separator: "/", omittingEmptySubsequences: false).map { part -> String in
                guard part.hasPrefix("{") else { return String(part) }
                return part.lowercased().contains("token") ? token : part.contains("entitlement") ? "pro" : "1000"
            }.joined(separator: "/")
            for (method, operation) in item.objectValue?.members ?? [] {
                guard let media = operation["requestBody"]?["content"]?["application/json"], let schema = media["schema"] else { continue }
                // The contract's example is a body the route accepts, so each extreme value reaches
                // the code that reads its member instead of stopping at a missing sibling.
                let example = try XCTUnwrap(media["example"], "\(method.uppercased()) \(pattern) has an example body in docs/openapi.json")
                for alternative in contract.alternatives(schema) {
                    let template = contract.describes(alternative, example) ? example : contract.plausible(alternative)
                    for leaf in contract.leaves(alternative) + contract.leaves(of: example) {
                        for value in Self.extremeJSON {
                            guard let body = template.setting(leaf, to: value).objectValue else { continue }
                            _ = try call(method.uppercased(), path, body)
                            walked += 1
                        }
                    }
                }
            }
        }
        XCTAssertGreaterThan(walked, 500, "the contract's bodies were walked")
        XCTAssertEqual(try call("GET", "/healthz"), 200)
    }

    /// Every number Apple's transaction and renewal info carry (prices, quantities, dates, enums,
    /// nested commitment and Advanced Commerce members), at each extreme, posted as the app would
    /// and inside a notification; then every figure is read. A price of Int64.min killed the writer,
    /// and a huge stored price every metrics read after it.
    func testEveryNumberOfTheSignedPayloadsSurvivesExtremeValues() throws {
        let base = TestChain.milliseconds(chain.mintedAt)
        let transaction: JSONObject = [
            "transactionId": "2000", "originalTransactionId": "2000", "bundleId": "com.example.app", "productId": "pro.monthly",
            "type": "Auto-Renewable Subscription", "purchaseDate": .int(base - 1000), "originalPurchaseDate": .int(base - 1000),
            "expiresDate": .int(base + 86_400_000), "environment": "Sandbox", "signedDate": .int(base + 1),
            "inAppOwnershipType": "PURCHASED", "appAccountToken": .string(token), "price": 9990, "currency": "USD",
        ]
        let renewal: JSONObject = [
            "originalTransactionId": "2000", "autoRenewProductId": "pro.monthly", "productId": "pro.monthly", "autoRenewStatus": 1,
            "environment": "Sandbox", "signedDate": .int(base + 1), "renewalPrice": 9990, "currency": "USD",
        ]
        var posted = 0
        for (name, schema, payload) in [
            ("transaction", JWSTransactionDecodedPayload.schema, transaction),
            ("renewal info", JWSRenewalInfoDecodedPayload.schema, renewal),
        ] {
            for path in Self.numericPaths(of: schema) {
                for value in Self.extremeNumbers + [.int(Int64(Int32.max) + 1), .int(Int64(Int32.min) - 1)] {
                    // A subscription of its own each time (a copy with the same id and signed date
                    // is a duplicate, and would never reach the writer).
                    let id = JSONValue.string("\(3000 + posted)")
                    var transaction = transaction
                    transaction["transactionId"] = id
                    transaction["originalTransactionId"] = id
                    var renewalOfItsOwn = renewal
                    renewalOfItsOwn["originalTransactionId"] = id
                    var payload = payload
                    payload["originalTransactionId"] = id
                    if name == "transaction" { payload = transaction }
                    let changed = JSONValue.object(payload).setting(path, to: value).objectValue!
                    let what = "\(name) \(path.map(\.description).joined(separator: ".")) = \(value.serializedString)"
                    let signedTransaction = try chain.sign(name == "transaction" ? changed : transaction)
                    var body: JSONObject = ["signedTransaction": .string(signedTransaction)]
                    if name == "renewal info" { body["signedRenewalInfo"] = .string(try chain.sign(changed)) }
                    let status = try call("POST", "/v1/transactions", body)
                    XCTAssertTrue([200, 400, 422].contains(status), "\(what): \(status)")
                    let notification = try chain.sign([
                        "notificationType": "DID_RENEW", "notificationUUID": .string(UUID().uuidString.lowercased()), "version": "2.0",
                        "signedDate": .int(base + 2),
                        "data": .object([
                            "bundleId": "com.example.app", "environment": "Sandbox", "signedTransactionInfo": body["signedTransaction"]!,
                            "signedRenewalInfo": body["signedRenewalInfo"] ?? .string(try chain.sign(renewalOfItsOwn)),
                        ]),
                    ])
                    _ = try call("POST", "/v1/notifications/apple", ["signedPayload": .string(notification)])
                    for read in [
                        "/v1/metrics/summary?environment=Sandbox", "/v1/metrics/revenue?environment=Sandbox&interval=day",
                        "/v1/metrics/mrr?environment=Sandbox&interval=month", "/v1/subscribers/\(token)",
                    ] {
                        XCTAssertEqual(try call("GET", read), 200, "\(read) after \(what)")
                    }
                    posted += 1
                }
            }
        }
        XCTAssertGreaterThan(posted, 100)
    }

    /// Every number of a notification (its own and its `data`, `summary`, `appData` members), of an
    /// app transaction and of a realtime retention request, at each extreme: a clear answer, never
    /// a stop, and the server still reads.
    func testEveryNumberOfNotificationsAppTransactionsAndRetentionRequestsSurvives() throws {
        let base = TestChain.milliseconds(chain.mintedAt)
        let notification: JSONObject = [
            "notificationType": "TEST", "notificationUUID": "6f1c0e0a-0000-4000-8000-00000000aaaa", "version": "2.0",
            "signedDate": .int(base + 2), "data": .object(["bundleId": "com.example.app", "environment": "Sandbox"]),
        ]
        let appTransaction: JSONObject = [
            "receiptType": "Sandbox", "bundleId": "com.example.app", "applicationVersion": "1", "receiptCreationDate": .int(base),
            "originalPurchaseDate": .int(base), "originalApplicationVersion": "1", "appTransactionId": "7000",
        ]
        let realtime: JSONObject = [
            "originalTransactionId": "1000", "appAppleId": 1234, "productId": "pro.monthly", "userLocale": "en-US",
            "requestIdentifier": "5f3c2b1a-9d8e-4f7a-8b6c-1e2d3f4a5b6c", "signedDate": .int(base + 1), "environment": "Sandbox",
        ]
        var posted = 0
        for (schema, payload, route, member) in [
            (ResponseBodyV2DecodedPayload.schema, notification, "/v1/notifications/apple", "signedPayload"),
            (AppTransaction.schema, appTransaction, "/v1/verify", "signedAppTransaction"),
            (DecodedRealtimeRequestBody.schema, realtime, "/v1/retention/apple", "signedPayload"),
        ] {
            for path in Self.numericPaths(of: schema) {
                for value in Self.extremeNumbers {
                    var changed = JSONValue.object(payload).setting(path, to: value).objectValue!
                    if schema.name == "ResponseBodyV2DecodedPayload" {
                        changed["notificationUUID"] = .string(UUID().uuidString.lowercased())
                    }
                    let status = try call("POST", route, [member: .string(try chain.sign(changed))])
                    XCTAssertNotEqual(status, 500, "\(route) \(path.map(\.description).joined(separator: ".")) = \(value.serializedString)")
                    posted += 1
                }
            }
        }
        XCTAssertGreaterThan(posted, 50)
        XCTAssertEqual(try call("GET", "/v1/notifications?limit=5"), 200)
        XCTAssertEqual(try call("GET", "/healthz"), 200)
    }

    /// The paths of every integer, date and price member of a schema, nested objects included.
    static func numericPaths(of schema: ModelSchema, prefix: [JSONPathStep] = []) -> [[JSONPathStep]] {
        schema.fields.sorted { $0.key < $1.key }.flatMap { key, type -> [[JSONPathStep]] in
            switch type {
            case .int32, .int64, .date, .intEnum, .price: return [prefix + [.key(key)]]
            case .object(let nested): return numericPaths(of: nested, prefix: prefix + [.key(key)])
            default: return []
            }
        }
    }
}

/// One step into a JSON document: a member or the first element of an array.
enum JSONPathStep: CustomStringConvertible {
    case key(String)
    case firstElement

    var description: String {
        switch self {
        case .key(let key): key
        case .firstElement: "[0]"
        }
    }
}

extension JSONValue {
    /// A copy with the value at `path` replaced (objects and arrays along it made as needed).
    func setting(_ path: [JSONPathStep], to value: JSONValue) -> JSONValue {
        guard let step = path.first else { return value }
        switch step {
        case .key(let key):
            var object = objectValue ?? [:]
            object[key] = (object[key] ?? .null).setting(Array(path.dropFirst()), to: value)
            return .object(object)
        case .firstElement:
            var array = arrayValue ?? []
            if array.isEmpty { array.append(.null) }
            array[0] = array[0].setting(Array(path.dropFirst()), to: value)
            return .array(array)
        }
    }
}

/// The request bodies of an OpenAPI document: their alternatives (`oneOf`), a plausible instance
/// of each (what a careful client sends), and the paths of their leaves.
struct OpenAPIBodies {
    let document: JSONObject

    private func resolved(_ schema: JSONValue) -> JSONValue {
        guard let reference = schema["$ref"]?.stringValue, reference.hasPrefix("#/") else { return schema }
        var node = JSONValue.object(document)
        for part in reference.dropFirst(2).split(separator: "/") { node = node[String(part)] ?? .null }
        return resolved(node)
    }

    func alternatives(_ schema: JSONValue) -> [JSONValue] {
        let schema = resolved(schema)
        return (schema["oneOf"]?.arrayValue ?? schema["anyOf"]?.arrayValue)?.map(resolved) ?? [schema]
    }

    /// Whether `instance` is of the object shape `schema` describes (its members all declared).
    func describes(_ schema: JSONValue, _ instance: JSONValue) -> Bool {
        guard let properties = schema["properties"]?.objectValue, let object = instance.objectValue else { return false }
        return object.members.allSatisfy { properties[$0.key] != nil }
    }

    func plausible(_ schema: JSONValue) -> JSONValue {
        let schema = alternatives(schema)[0]
        if let first = schema["enum"]?.arrayValue?.first { return first }
        switch schema["type"]?.stringValue {
        case "object":
            var object: JSONObject = [:]
            for (key, member) in schema["properties"]?.objectValue?.members ?? [] { object[key] = plausible(member) }
            return .object(object)
        case "array": return .array([plausible(schema["items"] ?? .null)])
        case "integer", "number": return .int(schema["minimum"]?.int64Value ?? 1)
        case "boolean": return .bool(true)
        case "string":
            switch schema["format"]?.stringValue {
            case "uuid": return "7e3fb20b-4cdb-47cc-936d-99d65f608138"
            case "date-time": return "2026-01-01T00:00:00Z"
            case "uri": return "https://example.com/retention"
            default: return "x"
            }
        default: return .null
        }
    }

    /// The path of every leaf of an instance, at any depth.
    func leaves(of value: JSONValue, prefix: [JSONPathStep] = []) -> [[JSONPathStep]] {
        if let object = value.objectValue { return object.members.flatMap { leaves(of: $0.value, prefix: prefix + [.key($0.key)]) } }
        if let array = value.arrayValue, let first = array.first { return [prefix] + leaves(of: first, prefix: prefix + [.firstElement]) }
        return [prefix]
    }

    /// The path of every member that is not itself an object or array, at any depth.
    func leaves(_ schema: JSONValue, prefix: [JSONPathStep] = []) -> [[JSONPathStep]] {
        let schema = alternatives(schema)[0]
        switch schema["type"]?.stringValue {
        case "object":
            let members = schema["properties"]?.objectValue?.members ?? []
            return members.isEmpty ? [prefix].filter { !$0.isEmpty } : members.flatMap { leaves($0.value, prefix: prefix + [.key($0.key)]) }
        case "array": return [prefix] + leaves(schema["items"] ?? .null, prefix: prefix + [.firstElement])
        default: return prefix.isEmpty ? [] : [prefix]
        }
    }
}
