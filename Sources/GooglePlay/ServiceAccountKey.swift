package import Crypto
import Foundation
import JSON

/// A Google service-account key file (the JSON Google Cloud's console downloads): who Entitle is
/// to Google, and the RSA key its OAuth assertions are signed with.
package struct ServiceAccountKey: Sendable {
    package let clientEmail: String
    package let privateKeyId: String?
    package let privateKey: RSA.PrivateKey
    /// `token_uri` of the file (Google's token endpoint unless it says otherwise).
    package let tokenURL: String?

    package enum LoadError: Error, CustomStringConvertible, Equatable {
        case unreadable(String)
        case notAServiceAccountKey(String)
        case badKey(String)

        package var description: String {
            switch self {
            case .unreadable(let path): "cannot read \(path)"
            case .notAServiceAccountKey(let why): "not a service-account key file: \(why)"
            case .badKey(let why): "the file's private_key is not usable: \(why)"
            }
        }
    }

    package init(contentsOf path: String) throws(LoadError) {
        guard let data = FileManager.default.contents(atPath: path) else { throw .unreadable(path) }
        try self.init(json: Array(data))
    }

    /// Never says anything of the key itself in an error.
    package init(json bytes: [UInt8]) throws(LoadError) {
        guard let object = (try? JSONParser.parse(bytes))?.objectValue else { throw .notAServiceAccountKey("not a JSON object") }
        guard object["type"]?.stringValue == "service_account" else {
            throw .notAServiceAccountKey("\"type\" must be \"service_account\"")
        }
        guard let email = object["client_email"]?.stringValue, email.contains("@") else {
            throw .notAServiceAccountKey("no \"client_email\"")
        }
        guard let pem = object["private_key"]?.stringValue else { throw .notAServiceAccountKey("no \"private_key\"") }
        do { privateKey = try RSA.PrivateKey(pemRepresentation: pem) } catch { throw .badKey(error.description) }
        clientEmail = email
        privateKeyId = object["private_key_id"]?.stringValue
        tokenURL = object["token_uri"]?.stringValue
    }
}
