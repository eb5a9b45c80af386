import HTTP
import XCTest

final class RouterTests: XCTestCase {
    private func respond(_ router: Router, _ method: String, _ target: String) -> HTTPResponse {
        let box = Box()
        let context = HTTPRequestContext(testing: HTTPRequest(method: method, target: target)) { box.response = $0 }
        router.handle(context)
        return box.response!
    }

    private final class Box: @unchecked Sendable { var response: HTTPResponse? }

    private var router: Router {
        var router = Router()
        router.add("GET", "/v1/subscribers/{token}") { context in
            context.respond(HTTPResponse(status: 200, body: Array((context.pathParameters["token"] ?? "").utf8)))
        }
        router.add("POST", "/v1/subscribers/{token}/sync") { $0.respond(HTTPResponse(status: 202)) }
        router.add("GET", "/healthz") { $0.respond(HTTPResponse(status: 200)) }
        return router
    }

    func testParametersAndMethods() {
        XCTAssertEqual(respond(router, "GET", "/v1/subscribers/abc?x=1").body, Array("abc".utf8))
        XCTAssertEqual(respond(router, "GET", "/v1/subscribers/a%20b").body, Array("a b".utf8))
        XCTAssertEqual(respond(router, "POST", "/v1/subscribers/abc/sync").status, 202)
        XCTAssertEqual(respond(router, "HEAD", "/healthz").status, 200, "HEAD is served by GET")
    }

    func testNotFoundAndMethodNotAllowed() {
        XCTAssertEqual(respond(router, "GET", "/nope").status, 404)
        XCTAssertEqual(respond(router, "GET", "/v1/subscribers/").status, 404, "empty parameter")
        XCTAssertEqual(respond(router, "GET", "/v1/subscribers/%zz").status, 404, "malformed escape")
        let wrongMethod = respond(router, "DELETE", "/healthz")
        XCTAssertEqual(wrongMethod.status, 405)
        XCTAssertEqual(wrongMethod.header("Allow"), "GET, HEAD")
    }
}
