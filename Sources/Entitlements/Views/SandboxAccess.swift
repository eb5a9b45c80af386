/// Who gets entitlements from Sandbox purchases. Every Sandbox subscription is still shown.
package enum SandboxAccess: Sendable, Equatable {
    /// Every Sandbox purchase counts (App Review and TestFlight see what they bought).
    case all
    /// Only the customers with these appAccountTokens (lower-case).
    case listed(Set<String>)
    /// No Sandbox purchase makes an entitlement active.
    case none

    package func grantsAccess(appAccountToken: String?) -> Bool {
        switch self {
        case .all: true
        case .listed(let testers): appAccountToken.map(testers.contains) ?? false
        case .none: false
        }
    }
}
