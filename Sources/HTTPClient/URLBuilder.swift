import Foundation

/// URLs of API calls: a base, path segments and query parts, each percent-encoded so an id with
/// other characters cannot change the path.
package enum URLBuilder {
    /// `base/segment/…?name=value&…`; `keeping` lists further characters left as they are in the
    /// path (Google's `…/tokens/{token}:acknowledge` verbs need `:`).
    package static func url(_ base: String, path: [String], query: [(String, String)] = [], keeping: String = "") -> String {
        base + "/" + path.map { escape($0, keeping: keeping) }.joined(separator: "/")
            + (query.isEmpty ? "" : "?" + query.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&"))
    }

    /// Percent-encodes all but the unreserved characters (RFC 3986) and `keeping`.
    package static func escape(_ text: String, keeping: String = "") -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~" + keeping)
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
