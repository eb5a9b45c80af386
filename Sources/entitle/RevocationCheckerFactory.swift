import AppStore
import Server

/// The OCSP checker for apps with online checks, nil otherwise.
func makeRevocationChecker(for app: AppConfiguration) throws -> (any RevocationChecker)? {
    app.verification.onlineChecks ? OCSPRevocationChecker() : nil
}
