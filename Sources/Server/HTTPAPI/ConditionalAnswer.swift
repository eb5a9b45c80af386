import Crypto
import Foundation
import HTTP

/// Conditional GETs (RFC 9110 §13): an answer carries an entity tag, and a request whose
/// `If-None-Match` names it gets `304 Not Modified` without the body.
enum EntityTag {
    /// A strong tag of the body: its SHA-256, base64url, quoted — what a client that kept the body
    /// computes for itself to send as `If-None-Match`.
    static func of(_ body: [UInt8]) -> String { "\"" + Base64.encodeURL(SHA256.hash(body)) + "\"" }

    /// Whether `If-None-Match` (a list of tags, or `*`) names `tag`.
    static func matches(_ ifNoneMatch: String?, _ tag: String) -> Bool {
        guard let ifNoneMatch else { return false }
        return ifNoneMatch.split(separator: ",").contains {
            let candidate = $0.trimmingCharacters(in: .whitespaces)
            return candidate == "*" || candidate == tag || candidate == "W/" + tag
        }
    }

    /// `handler` with its 200 answers tagged, and answered 304 without the body when the request
    /// names the tag. Set inside response signing (`ResponseSigning.signing`), it runs after it
    /// has signed the whole body: a 304's `Entitle-Signature` covers the body the client kept,
    /// so a tag changed on the way cannot make an old body pass for the current one.
    static func conditional(_ handler: @escaping HTTPHandler) -> HTTPHandler {
        { context in
            let ifNoneMatch = context.request.header("if-none-match")
            let signing = context.finishing
            context.finishing = { response in
                guard response.status == 200 else { return signing?(response) ?? response }
                let tag = of(response.body)
                var tagged = response
                tagged.headers.append(("ETag", tag))
                tagged = signing?(tagged) ?? tagged
                guard matches(ifNoneMatch, tag) else { return tagged }
                tagged.status = 304
                tagged.body = []
                tagged.headers.removeAll { $0.name.lowercased() == "content-type" }
                return tagged
            }
            handler(context)
        }
    }
}
