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
        guard let client = try services.requireSync().clients[environment] else {
            throw UsageError("\(environment.rawValue) is not enabled for this app (or has no Retention Messaging API)")
        }
        do {
            Output.json(.object(try perform(area, action, arguments, client: client, app: services.app)))
            return 0
        } catch let error as AppStoreAPIError {
            Output.json(.object(["error": .string(error.description), "retryable": .bool(error.isRetryable)]))
            return 1
        }
    }

    private static func perform(
        _ area: String, _ action: String, _ arguments: Arguments, client: AppStoreServerAPIClient, app: AppConfiguration
    ) throws -> JSONObject {
        switch (area, action) {
        case ("messages", "list"):
            let listing = try client.retentionMessages()
            if let config = arguments["config"] { try RetentionMessageListing.save(listing, configuration: config, app: app.id) }
            return listing
        case ("messages", "upload"):
            let id = try arguments.required("id")
            var message: JSONObject = [
                "header": .string(try arguments.required("header")), "body": .string(try arguments.required("body")),
            ]
            if let bullets = arguments["bullets"] {
                guard let list = (try? JSONParser.parse(Array(bullets.utf8)))?.arrayValue else {
                    throw UsageError("--bullets must be a JSON array of {\"text\", \"image\"?}")
                }
                message["bulletPoints"] = .array(list)
            }
            if let image = arguments["image"] {
                message["image"] = .object(["imageIdentifier": .string(image), "altText": .string(try arguments.required("alt-text"))])
            }
            if let position = arguments["header-position"] { message["headerPosition"] = .string(position) }
            let problems = RetentionMessageLimits.problems(message)
            guard problems.isEmpty else { throw UsageError("the message would be refused: " + problems.joined(separator: "; ")) }
            try client.uploadRetentionMessage(id, message)
            return ["uploaded": .string(id), "state": "PENDING"]
        case ("messages", "delete"):
            try client.deleteRetentionMessage(try arguments.required("id"))
            return ["deleted": .string(try arguments.required("id"))]
        case ("images", "list"): return try client.retentionImages()
        case ("images", "upload"):
            let file = try arguments.required("file")
            guard let data = FileManager.default.contents(atPath: file), data.starts(with: [0x89, 0x50, 0x4E, 0x47]) else {
                throw UsageError("--file must be a PNG image")
            }
            let size = arguments["size"] ?? "FULL_SIZE"
            guard ["FULL_SIZE", "BULLET_POINT"].contains(size) else { throw UsageError("--size must be FULL_SIZE or BULLET_POINT") }
            try client.uploadRetentionImage(try arguments.required("id"), png: Array(data), size: size)
            return ["uploaded": .string(try arguments.required("id")), "imageSize": .string(size), "state": "PENDING"]
        case ("images", "delete"):
            try client.deleteRetentionImage(try arguments.required("id"))
            return ["deleted": .string(try arguments.required("id"))]
        case ("default", "get"):
            return try client.defaultRetentionMessage(
                productId: try arguments.required("product"), locale: try arguments.required("locale"))
        case ("default", "set"):
            try client.setDefaultRetentionMessage(
                productId: try arguments.required("product"), locale: try arguments.required("locale"),
                messageIdentifier: try arguments.required("message"))
            return ["default": .string(try arguments.required("message"))]
        case ("default", "delete"):
            try client.deleteDefaultRetentionMessage(productId: try arguments.required("product"), locale: try arguments.required("locale"))
            return ["deleted": true]
        case ("realtime-url", "get"): return try client.realtimeURL()
        case ("realtime-url", "set"):
            let url = try arguments.required("url")
            guard url.hasPrefix("https://"), url.count <= 256 else {
                throw UsageError("--url must be an https URL of at most 256 characters")
            }
            try client.setRealtimeURL(url)
            return ["realtimeURL": .string(url)]
        case ("realtime-url", "delete"):
            try client.deleteRealtimeURL()
            return ["deleted": true]
        case ("performance-test", _):
            let started = try client.startRetentionPerformanceTest(originalTransactionId: try arguments.required("transaction-id"))
            guard let requestId = started["requestId"]?.stringValue else { return started }
            for _ in 0..<60 {
                let result = try client.retentionPerformanceTestResult(requestId)
                if result["result"]?.stringValue != "PENDING" { return result }
                Thread.sleep(forTimeInterval: 2)
            }
            return ["requestId": .string(requestId), "result": "PENDING"]
        default: throw UsageError(usage)
        }
    }
}
