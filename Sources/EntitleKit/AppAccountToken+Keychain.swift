#if canImport(Security)
public import Foundation
import Security

/// The customer's `appAccountToken` in the Keychain (Apple platforms): a generic password of this
/// device only, readable after the first unlock, so every purchase of every launch carries the same
/// token and a backup restored elsewhere does not carry it to another customer's device.
extension AppAccountToken {
    public static func storedInKeychain(service: String = "entitle", account: String = "appAccountToken") throws -> UUID {
        let item: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account,
        ]
        var found: CFTypeRef?
        var query = item
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        let status = SecItemCopyMatching(query as CFDictionary, &found)
        if status == errSecSuccess, let data = found as? Data, let text = String(data: data, encoding: .utf8),
            let token = UUID(uuidString: text)
        {
            return token
        }
        guard status == errSecSuccess || status == errSecItemNotFound else { throw KeychainError(status: status) }
        // None yet, or one that does not read as a UUID: a new token replaces it.
        if status == errSecSuccess { SecItemDelete(item as CFDictionary) }
        let token = UUID()
        var added = item
        added[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        added[kSecValueData as String] = Data(token.uuidString.lowercased().utf8)
        let addStatus = SecItemAdd(added as CFDictionary, nil)
        guard addStatus == errSecSuccess else { throw KeychainError(status: addStatus) }
        return token
    }
}

/// The Keychain refused (its `OSStatus`).
public struct KeychainError: Error, Sendable, Equatable {
    public var status: Int32
}
#endif
