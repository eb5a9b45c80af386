import Crypto
import JSON

/// API keys: `{"key": "…", "role": "client"|"server"|"admin", "name"?}`, the key plain or as
/// `sha256:<hex>`.
enum APIKeyParser {
    /// Plain keys shorter than this are refused: they could be guessed.
    static let minimumPlainKeyLength = 16

    static func parse(_ values: [JSONValue], path: String, reader: inout ConfigurationReader) -> [APIKeyConfiguration] {
        var keys: [APIKeyConfiguration] = []
        for (index, value) in values.enumerated() {
            let keyPath = "\(path)[\(index)]"
            guard let object = value.objectValue else {
                reader.problem(keyPath, "expected an object, found \(value.typeName)")
                continue
            }
            reader.checkMembers(object, allowed: ["key", "role", "name"], path: keyPath)
            let text = reader.string(object, "key", path: keyPath, required: true)
            let roleName = reader.string(object, "role", path: keyPath, required: true)
            let name = reader.string(object, "name", path: keyPath, required: false)
            if let name, name.isEmpty || name.count > 100 { reader.problem("\(keyPath).name", "a name needs 1 to 100 characters") }
            let role = roleName.flatMap(APIKeyRole.init(rawValue:))
            if let roleName, role == nil { reader.problem("\(keyPath).role", "unknown role \"\(roleName)\" (\(roleNames))") }
            guard let digest = text.flatMap({ digest(of: $0, problemPath: "\(keyPath).key", reader: &reader) }),
                let role
            else { continue }
            keys.append(APIKeyConfiguration(sha256: digest, role: role, name: name))
        }
        return keys
    }

    /// `role:key` pairs separated by commas, from an environment variable.
    static func parseEnvironmentList(
        _ list: String, name: String,
        reader: inout ConfigurationReader
    ) -> [APIKeyConfiguration] {
        var keys: [APIKeyConfiguration] = []
        for (index, entry) in list.split(separator: ",").enumerated() {
            let parts = entry.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, let role = APIKeyRole(rawValue: String(parts[0])) else {
                reader.problem(name, "entry \(index + 1) is not role:key (role \(roleNames))")
                continue
            }
            guard let digest = digest(of: String(parts[1]), problemPath: name, reader: &reader) else { continue }
            keys.append(APIKeyConfiguration(sha256: digest, role: role, name: nil))
        }
        return keys
    }

    private static let roleNames = APIKeyRole.allCases.map(\.rawValue).joined(separator: ", ")

    /// The SHA-256 the server compares with. The key itself never appears in a message.
    private static func digest(of text: String, problemPath: String, reader: inout ConfigurationReader) -> [UInt8]? {
        if text.hasPrefix("sha256:") {
            guard let digest = Hex.decode(String(text.dropFirst(7))), digest.count == 32 else {
                reader.problem(problemPath, "a sha256: key needs 64 hex digits")
                return nil
            }
            return digest
        }
        guard text.utf8.count >= minimumPlainKeyLength else {
            reader.problem(problemPath, "API keys need at least \(minimumPlainKeyLength) characters")
            return nil
        }
        return SHA256.hash(Array(text.utf8))
    }
}
