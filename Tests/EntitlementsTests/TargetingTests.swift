import Entitlements
import XCTest

/// The targeting rules as pure functions: conditions, app versions, the first matching rule, and
/// a customer's lifecycle state.
final class TargetingTests: XCTestCase {
    func testAppVersionsCompareByNumericParts() {
        XCTAssertEqual(AppVersion.compare("2.10", "2.9"), .orderedDescending)
        XCTAssertEqual(AppVersion.compare("2", "2.0.0"), .orderedSame)
        XCTAssertEqual(AppVersion.compare("1.9.9", "2"), .orderedAscending)
        XCTAssertEqual(AppVersion.compare("2.0-beta", "2.0"), .orderedDescending, "a part that is not a number compares as text")
    }

    func testEveryConditionGivenMustHold() {
        var condition = TargetingCondition()
        XCTAssertTrue(condition.matches(TargetingContext()), "an empty condition matches everyone")
        condition.countries = ["DE", "AT"]
        condition.states = [.lapsed]
        condition.appVersionAtLeast = "2.0"
        condition.appVersionBelow = "3.0"
        condition.daysSinceFirstSeenAtLeast = 7
        condition.daysSinceFirstSeenBelow = 30
        condition.attributes = ["cohort": ["beta"]]
        let context = TargetingContext(
            country: "AT", appVersion: "2.5", state: .lapsed, daysSinceFirstSeen: 7, attributes: ["cohort": "beta", "other": "x"])
        XCTAssertTrue(condition.matches(context))
        for change in [
            { (c: inout TargetingContext) in c.country = "FR" }, { $0.country = nil }, { $0.appVersion = "3.0" }, { $0.appVersion = nil },
            { $0.appVersion = "1.9" }, { $0.state = .active }, { $0.daysSinceFirstSeen = 6 }, { $0.daysSinceFirstSeen = 30 },
            { $0.attributes = [:] }, { $0.attributes = ["cohort": "staff"] },
        ] {
            var other = context
            change(&other)
            XCTAssertFalse(condition.matches(other), "\(other)")
        }
    }

    func testTheFirstMatchingRuleWinsElseThePlacementsOwn() {
        var lapsed = TargetingCondition()
        lapsed.states = [.lapsed]
        var german = TargetingCondition()
        german.countries = ["DE"]
        let placement = Placement(
            id: "onboarding", offering: "standard",
            rules: [
                TargetingRule(name: "lapsed", when: lapsed, offering: "winback"),
                TargetingRule(name: "german", when: german, offering: nil),
            ])
        XCTAssertEqual(placement.choose(for: TargetingContext(country: "DE", state: .lapsed)).offering, "winback")
        XCTAssertEqual(placement.choose(for: TargetingContext(country: "DE", state: .lapsed)).reason, .rule("lapsed"))
        XCTAssertNil(placement.choose(for: TargetingContext(country: "DE")).offering)
        XCTAssertEqual(placement.choose(for: TargetingContext(country: "DE")).reason, .none(rule: "german"))
        XCTAssertEqual(placement.choose(for: TargetingContext(country: "FR")).reason, .default)
        XCTAssertEqual(Placement(id: "settings", offering: nil).choose(for: TargetingContext()).reason, .none(rule: nil))
    }

    func testAnOfferTheCustomerMayNotHaveIsLeftOutThePackageStays() {
        let package = OfferingPackage(
            id: "annual", appStore: .init(productId: "pro.yearly", offerId: "winback"),
            googlePlay: .init(productId: "pro", basePlanId: "yearly", offerId: "comeback"))
        let refused = package.admitting(appStoreOffer: { _ in false }, playOffer: { _ in true })
        XCTAssertNil(refused.appStore?.offerId)
        XCTAssertEqual(refused.appStore?.productId, "pro.yearly")
        XCTAssertEqual(refused.googlePlay?.offerId, "comeback")
        XCTAssertEqual(package.admitting(appStoreOffer: { _ in true }, playOffer: { _ in true }), package)
    }

    func testAttributesApplyAndAreCapped() {
        let stored = [CustomerAttribute(name: "a", value: "1", updatedAt: 1), CustomerAttribute(name: "b", value: "2", updatedAt: 1)]
        XCTAssertEqual(
            CustomerAttribute.applying(["a": nil, "c": "3"], to: stored, at: 5),
            [CustomerAttribute(name: "b", value: "2", updatedAt: 1), CustomerAttribute(name: "c", value: "3", updatedAt: 5)])
        var many: [String: String?] = [:]
        for index in 0..<49 { many["n\(index)"] = "x" }
        XCTAssertNil(CustomerAttribute.applying(many, to: stored, at: 5), "49 new and the two kept: 51, one too many")
        many["n0"] = .some(nil)
        XCTAssertEqual(CustomerAttribute.applying(many, to: stored, at: 5)?.count, 50, "one of them removed instead: 50")
        XCTAssertTrue(CustomerAttribute.isValidName("$email.verified-1_x"))
        XCTAssertFalse(CustomerAttribute.isValidName(""))
        XCTAssertFalse(CustomerAttribute.isValidName("with space"))
        XCTAssertFalse(CustomerAttribute.isValidName(String(repeating: "a", count: 65)))
    }
}
