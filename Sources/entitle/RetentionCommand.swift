import AppStore
import AppStoreAPI
import Application
import Foundation
import JSON

/// `entitle retention …`: the app's retention messages, images, default messages, realtime URL
/// and Apple's performance test, through the Retention Messaging API.
enum RetentionCommand {
    static let usage = """
        entitle retention messages list|upload|delete  --config PATH --app ID --environment Production|Sandbox
                  [--id ID --header TEXT --body TEXT [--bullets JSON] [--image ID --alt-text TEXT] [--header-position P]]
               retention images list|upload|delete    … [--id ID --file PNG --size FULL_SIZE|BULLET_POINT]
               retention default get|set|delete      … --product ID --locale en-US [--message ID]
               retention realtime-url get|set|delete … [--url URL]
               retention performance-test            … --transaction-id ID   (Sandbox; waits for Apple's result)
        """

    static func run(_ raw: [String]) throws -> Int32 {
        let arguments = try Arguments(
            raw,
            valueOptions: [
                "config", "app", "environment", "id", "header", "body", "bullets", "image", "alt-text", "header-position", "file", "size",
                "product", "locale", "message", "url", "transaction-id",
            ])
        let positional = arguments.positionals
        guard let area = positional.first else { throw UsageError(usage) }
        let action = positional.count > 1 ? positional[1] : ""
        let (_, services) = try loadServices(arguments)
        let environment = AppStoreEnvironment(rawValue: try arguments.required("environment"))
        let messaging = services.retentionMessaging
        do {
            let operation = try operation(area, action, arguments)
            var answer = try awaitUseCase { try await messaging.perform(operation, environment: environment) }
            if area == "messages", action == "list", let config = arguments["config"] {
                try RetentionMessageListing.save(answer, configuration: config, app: services.app.id)
            }
            if area == "performance-test", let requestId = answer["requestId"]?.stringValue {
                answer = try waitForResult(requestId, messaging: messaging, environment: environment)
            }
            Output.json(.object(answer))
            return 0
        } catch let error as ServiceError where error.httpStatus == 400 {
            throw UsageError(error.message)
        } catch let error as AppStoreAPIError {
            Output.json(.object(["error": .string(error.description), "retryable": .bool(error.isRetryable)]))
            return 1
        }
    }

    /// Apple's result, polled every 2 s until it is no longer `PENDING` (two minutes at most).
    private static func waitForResult(
        _ requestId: String, messaging: RetentionMessaging, environment: AppStoreEnvironment
    ) throws -> JSONObject {
        for _ in 0..<60 {
            let result = try awaitUseCase {
                try await messaging.perform(.performanceTestResult(requestId: requestId), environment: environment)
            }
            if result["result"]?.stringValue != "PENDING" { return result }
            Thread.sleep(forTimeInterval: 2)
        }
        return ["requestId": .string(requestId), "result": "PENDING"]
    }

    private static func operation(_ area: String, _ action: String, _ arguments: Arguments) throws -> RetentionMessaging.Operation {
        switch (area, action) {
        case ("messages", "list"): return .listMessages
        case ("messages", "upload"):
            var message: JSONObject = [
                "header": .string(try arguments.required("header")), "body": .string(try arguments.required("body")),
            ]
            if let bullets = arguments["bullets"] {
                guard let list = JSONParser.storedObject("{\"b\":\(bullets)}")?["b"]?.arrayValue else {
                    throw UsageError("--bullets must be a JSON array of {\"text\", \"image\"?}")
                }
                message["bulletPoints"] = .array(list)
            }
            if let image = arguments["image"] {
                message["image"] = .object(["imageIdentifier": .string(image), "altText": .string(try arguments.required("alt-text"))])
            }
            if let position = arguments["header-position"] { message["headerPosition"] = .string(position) }
            return .uploadMessage(id: try arguments.required("id"), message: message)
        case ("messages", "delete"): return .deleteMessage(id: try arguments.required("id"))
        case ("images", "list"): return .listImages
        case ("images", "upload"):
            let file = try arguments.required("file")
            guard let data = FileManager.default.contents(atPath: file) else { throw UsageError("cannot read \(file)") }
            return .uploadImage(id: try arguments.required("id"), png: Array(data), size: arguments["size"] ?? "FULL_SIZE")
        case ("images", "delete"): return .deleteImage(id: try arguments.required("id"))
        case ("default", "get"): return .getDefault(productId: try arguments.required("product"), locale: try arguments.required("locale"))
        case ("default", "set"):
            return .setDefault(
                productId: try arguments.required("product"), locale: try arguments.required("locale"),
                messageIdentifier: try arguments.required("message"))
        case ("default", "delete"):
            return .deleteDefault(productId: try arguments.required("product"), locale: try arguments.required("locale"))
        case ("realtime-url", "get"): return .getRealtimeURL
        case ("realtime-url", "set"): return .setRealtimeURL(try arguments.required("url"))
        case ("realtime-url", "delete"): return .deleteRealtimeURL
        case ("performance-test", _): return .startPerformanceTest(originalTransactionId: try arguments.required("transaction-id"))
        default: throw UsageError(usage)
        }
    }
}
