/// What went wrong talking to Google. `unavailable` may succeed later (Pub/Sub is answered 503
/// so it redelivers); the others will not without a change.
package enum GooglePlayAPIError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The network or TLS failed, or Google took too long.
    case transport(String)
    /// Google answered 5xx or 429.
    case unavailable(status: Int, message: String)
    /// The service account was refused (token endpoint, or 401/403 from the API).
    case auth(String)
    /// Google does not know the purchase (404, or 410 for one long gone).
    case notFound(String)
    /// Any other 4xx.
    case api(status: Int, message: String)
    /// An answer Entitle cannot read.
    case decoding(String)

    package var description: String {
        switch self {
        case .transport(let message): "Google Play could not be reached: \(message)"
        case .unavailable(let status, let message): "Google Play answered \(status): \(message)"
        case .auth(let message): "Google refused the service account: \(message)"
        case .notFound(let message): "Google Play does not know this purchase: \(message)"
        case .api(let status, let message): "Google Play answered \(status): \(message)"
        case .decoding(let message): "Google Play's answer could not be read: \(message)"
        }
    }

    /// Worth trying again later.
    package var isRetryable: Bool {
        switch self {
        case .transport, .unavailable: true
        default: false
        }
    }
}
