import AppStore

extension EntitleConfiguration {
    /// What is allowed but probably not meant: said at start-up (`warn` lines) and by
    /// `entitle check-config`, which share this one list.
    package var warnings: [String] {
        apps.flatMap { app -> [String] in
            var warnings: [String] = []
            if app.apiKeys.isEmpty {
                warnings.append(
                    "app \(app.id): no API keys: nothing can call its endpoints (add apiKeys, or ENTITLE_APP_…_API_KEYS)")
            }
            if app.verification.allowPrivateRoots {
                warnings.append("app \(app.id): verification.allowPrivateRoots is on: roots other than Apple's are trusted")
            }
            for (old, new) in app.renamedMembers {
                warnings.append("app \(app.id): \(old) is the old name of \(new): rename it (the old name is still read)")
            }
            if app.enablesUnsignedBesideProduction {
                let unsigned = app.environments.filter { !$0.isSigned }.map(\.rawValue).joined(separator: ", ")
                warnings.append("app \(app.id): \(unsigned) (unsigned data) is enabled beside Production")
            }
            return warnings
        }
    }
}
