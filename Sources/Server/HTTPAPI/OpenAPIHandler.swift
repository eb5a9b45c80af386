import HTTP

/// `GET /openapi.json`: the API's contract, `docs/openapi.json`, compiled into the binary (the
/// Server target embeds it through `Sources/Server/OpenAPI/openapi.json`, a link to the document)
/// so the answer is exactly the document CI checks against the running server.
enum OpenAPIHandler {
    static func serve(_ context: HTTPRequestContext) {
        context.respond(.json(200, PackageResources.openapi_json))
    }
}
