import JSON

/// Rows kept as JSON text (refund facts): written by `text`, read by `object`.
enum StoredJSON {
    static func text(_ object: JSONObject) -> String { JSONValue.object(object).serializedString }

    /// Written by `text`, so it parses; a damaged row reads as nothing rather than failing the read.
    static func object(_ text: String?) -> JSONObject? {
        guard let text, case .object(let object)? = try? JSONParser.parse(Array(text.utf8)) else { return nil }
        return object
    }
}
