/// Headers that keep a browser from misusing Entitle's answers: JSON is never sniffed into a page
/// nor framed, and the console runs only its own script and style (no inline script, nothing
/// from elsewhere).
enum SecurityHeaders {
    static let page: [(name: String, value: String)] = [
        (
            "Content-Security-Policy",
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
                + "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
        ),
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
        ("Referrer-Policy", "no-referrer"),
        ("Cache-Control", "no-cache"),
    ]

    static let api: [(name: String, value: String)] = [
        ("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'"),
        ("X-Content-Type-Options", "nosniff"),
    ]
}
