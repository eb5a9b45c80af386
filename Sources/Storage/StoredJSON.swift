import JSON

/// Rows kept as JSON text (refund facts): written by `text`, read by `object`.
enum StoredJSON {
    static func text(_ object: JSONObject) -> String { JSONValue.object(object).serializedString }

    static func object(_ text: String?) -> JSONObject? { JSONParser.storedObject(text) }
}
