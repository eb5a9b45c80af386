import Crypto
import Foundation
import HTTP

/// One of the console's files as served: its bytes, type and ETag (a hash of the bytes), made
/// once. `no-cache` (`SecurityHeaders.page`) makes the browser ask each time, and the ETag makes the answer 304 when
/// nothing changed, so a new binary's console is never mixed with an old one's cached files.
struct ConsoleAsset: Sendable {
    let body: [UInt8]
    let type: String
    let etag: String

    init(_ body: [UInt8], type: String) {
        self.body = body
        self.type = type
        etag = "\"" + SHA256.hexDigest(body).prefix(32) + "\""
    }

    func response(ifNoneMatch: String?) -> HTTPResponse {
        let headers = [("Content-Type", type), ("ETag", etag)] + SecurityHeaders.page
        return EntityTag.matches(ifNoneMatch, etag)
            ? HTTPResponse(status: 304, headers: headers, body: []) : HTTPResponse(status: 200, headers: headers, body: body)
    }
}
