package import Entitlements
import Foundation
package import Instants
package import JSON

/// `entitle test-store populate` (docs/TEST_STORE.md, "Many customers"): a realistic population
/// made by the test store, month by month on the moved clock — arrivals spread over the months,
/// free trials that convert or not, renewals, cancellations, failed renewals that recover or end
/// in billing retry (on hold, on Google Play), refund requests granted or declined, consumables —
/// every step sent to Entitle as Apple or Google sends it. An app that sells on Google Play has a
/// share of its customers there. The same seed makes the same population (its customers, stores,
/// products and choices; ids differ).
package struct TestStorePopulation: Sendable {
    package struct Settings: Sendable {
        package var customers: Int
        package var months: Int
        package var seed: UInt64

        package init(customers: Int, months: Int, seed: UInt64) {
            self.customers = customers
            self.months = months
            self.seed = seed
        }
    }

    /// How often each thing happens (per customer, or per period of a subscription).
    static let trialShare = 0.4
    static let trialConversion = 0.65
    static let cancelPerPeriod = 0.05
    static let failurePerPeriod = 0.03
    static let graceShare = 0.5
    static let recoveryShare = 0.6
    static let refundRequestShare = 0.02
    static let refundGrantedShare = 0.5
    static let consumableShare = 0.15
    /// Of an app that sells on Google Play, the customers who buy there.
    static let googlePlayShare = 0.35

    private let testStore: TestStoreService
    private let app: AppConfiguration
    private let clock: MovableClock

    package init(testStore: TestStoreService, app: AppConfiguration, clock: MovableClock) {
        self.testStore = testStore
        self.app = app
        self.clock = clock
    }

    /// What a customer does next, at an instant.
    private enum Move: Int, Sendable {
        case arrive
        case trialDecision
        case periodCheck
        case recover
        case requestRefund
        case buyConsumable
    }

    /// A scheduled move: the customer's index and the move (the queue orders ties by it, so a
    /// run is the same every time).
    private struct Scheduled: Sendable, Comparable {
        var customer: Int
        var move: Move

        static func < (a: Scheduled, b: Scheduled) -> Bool { (a.customer, a.move.rawValue) < (b.customer, b.move.rawValue) }
    }

    private struct Customer: Sendable {
        var token: String
        var product: String
        var trial: Bool
        /// Bought on Google Play (its purchase token in `originalTransactionId`).
        var google = false
        var originalTransactionId: String?
    }

    /// Runs the population from the clock's now over `months`; answers what was done.
    package func run(_ settings: Settings) async throws -> JSONObject {
        var random = SeededRandom(seed: settings.seed)
        let start = clock.milliseconds
        guard let end = ISO8601Duration("P\(settings.months)M")?.end(from: start) else {
            throw ServiceError.badRequest("the months do not end within the instants Entitle accepts")
        }
        let subscriptionProducts = app.products.filter { $0.value.subscriptionGroup != nil }.map(\.key).sorted()
        let consumables = app.products.filter { $0.value.subscriptionGroup == nil && $0.value.duration == nil }.map(\.key).sorted()
        guard !subscriptionProducts.isEmpty else {
            throw ServiceError.badRequest("app \(app.id) sells no auto-renewable subscription to populate with")
        }
        // Monthly plans are the common choice: a product with a month's period counts three times.
        let weighted = subscriptionProducts.flatMap { id in
            Array(repeating: id, count: (app.products[id]?.period ?? "P1M") == "P1M" ? 3 : 1)
        }
        // Google Play customers buy what the catalog maps there (and the chain can sign for Google).
        let onGooglePlay = app.googlePlay != nil && testStore.chain.google != nil
        let googleWeighted = weighted.filter { app.products[$0]?.googlePlay?.basePlanId != nil }
        var customers: [Customer] = []
        var schedule = DueQueue<Scheduled>()
        let span = end - start
        for index in 0..<settings.customers {
            var customer = Customer(
                token: random.uuid(), product: weighted[random.below(weighted.count)], trial: random.chance(Self.trialShare),
                originalTransactionId: nil)
            if onGooglePlay, !googleWeighted.isEmpty, random.chance(Self.googlePlayShare) {
                customer.google = true
                customer.product = googleWeighted[random.below(googleWeighted.count)]
            }
            customers.append(customer)
            // Arrivals over the first nine tenths, so the last have some history too.
            schedule.insert(at: start + Int64(random.unit() * Double(span) * 0.9), id: Scheduled(customer: index, move: .arrive))
        }
        var counts: [String: Int64] = [:]
        while let next = schedule.removeFirst(), next.at <= end {
            let (index, move) = (next.id.customer, next.id.move)
            _ = try await testStore.move(to: next.at)
            var customer = customers[index]
            let follow = try await take(move, for: &customer, at: next.at, random: &random, consumables: consumables, counts: &counts)
            customers[index] = customer
            for (at, move) in follow where at <= end { schedule.insert(at: at, id: Scheduled(customer: index, move: move)) }
        }
        let finished = try await testStore.move(to: end)
        counts["stepsAtTheEnd", default: 0] += Int64(finished["happened"]?.arrayValue?.count ?? 0)
        var summary: JSONObject = ["customers": .int(Int64(settings.customers)), "months": .int(Int64(settings.months))]
        for (name, count) in counts.sorted(by: { $0.key < $1.key }) { summary[name] = .int(count) }
        summary["notifications"] = .object(await testStore.deliveryCounts())
        return summary
    }

    /// Takes one move; answers the customer's next moves.
    private func take(
        _ move: Move, for customer: inout Customer, at now: Int64, random: inout SeededRandom, consumables: [String],
        counts: inout [String: Int64]
    ) async throws -> [(Int64, Move)] {
        let day: Int64 = 86_400_000
        switch move {
        case .arrive where customer.google:
            guard let play = app.products[customer.product]?.googlePlay else { return [] }
            var body: JSONObject = [
                "app": .string(app.id), "productId": .string(play.productId), "obfuscatedAccountId": .string(customer.token),
            ]
            if let plan = play.basePlanId { body["basePlanId"] = .string(plan) }
            if customer.trial {
                body["offerId"] = "free-trial"
                body["offerPhase"] = .object(["type": "freeTrial", "period": "P1W"])
            }
            let answer = try await testStore.googlePurchase(try TestStoreService.PlayPurchaseRequest(body))
            customer.originalTransactionId = answer["purchaseToken"]?.stringValue
            counts[customer.trial ? "trials" : "purchases", default: 0] += 1
            counts["googlePlayCustomers", default: 0] += 1
            var next: [(Int64, Move)] = [(now + (customer.trial ? 3 * day : 0), customer.trial ? .trialDecision : .periodCheck)]
            if random.chance(Self.refundRequestShare) { next.append((now + Int64(1 + random.below(20)) * day, .requestRefund)) }
            return next
        case .arrive:
            var body: JSONObject = ["productId": .string(customer.product)]
            if customer.trial { body["offer"] = .object(["type": "introductory", "discountType": "FREE_TRIAL", "period": "P1W"]) }
            let purchase = try TestStoreService.Purchase(body, app: app.id, appAccountToken: customer.token)
            let answer = try await testStore.purchase(purchase)
            customer.originalTransactionId = answer["originalTransactionId"]?.stringValue
            counts[customer.trial ? "trials" : "purchases", default: 0] += 1
            var next: [(Int64, Move)] = [(now + (customer.trial ? 3 * day : 0), customer.trial ? .trialDecision : .periodCheck)]
            if random.chance(Self.refundRequestShare) { next.append((now + Int64(1 + random.below(20)) * day, .requestRefund)) }
            if !consumables.isEmpty, random.chance(Self.consumableShare) {
                next.append((now + Int64(random.below(30)) * day, .buyConsumable))
            }
            return next
        case .trialDecision:
            guard random.chance(Self.trialConversion) else {
                counts["trialsCancelled", default: 0] += try await act(.cancel, customer) ? 1 : 0
                return []
            }
            return [(now + 4 * day + 3_600_000, .periodCheck)]
        case .periodCheck:
            guard let expires = await renewingUntil(customer) else { return [] }
            // Decide two days before the renewal; until then, look again then.
            if expires - now > 2 * day { return [(expires - 2 * day, .periodCheck)] }
            if random.chance(Self.cancelPerPeriod) {
                counts["cancelled", default: 0] += try await act(.cancel, customer) ? 1 : 0
                return []
            }
            if random.chance(Self.failurePerPeriod) {
                var options = TestStoreService.ActionOptions()
                options.gracePeriod = random.chance(Self.graceShare)
                counts["failedRenewals", default: 0] += try await act(.failRenewal, customer, options) ? 1 : 0
                guard random.chance(Self.recoveryShare) else { return [] }
                return [(expires + Int64(1 + random.below(10)) * day, .recover)]
            }
            return [(expires + 3_600_000, .periodCheck)]
        case .recover:
            counts["recovered", default: 0] += try await act(.recover, customer) ? 1 : 0
            return [(now + 3_600_000, .periodCheck)]
        case .requestRefund:
            var options = TestStoreService.ActionOptions()
            options.refundGranted = random.chance(Self.refundGrantedShare)
            options.reason = ["UNINTENDED_PURCHASE", "UNSATISFIED_WITH_PURCHASE", "OTHER"][random.below(3)]
            if try await act(.requestRefund, customer, options) {
                counts[options.refundGranted ? "refunded" : "refundsDeclined", default: 0] += 1
            }
            return []
        case .buyConsumable:
            var body: JSONObject = ["productId": .string(consumables[random.below(consumables.count)]), "type": "Consumable"]
            body["quantity"] = .int(Int64(1 + random.below(3)))
            _ = try await testStore.purchase(try TestStoreService.Purchase(body, app: app.id, appAccountToken: customer.token))
            counts["consumables", default: 0] += 1
            return []
        }
    }

    /// When the customer's subscription renews next, if it is active and renews.
    private func renewingUntil(_ customer: Customer) async -> Int64? {
        guard let id = customer.originalTransactionId else { return nil }
        if customer.google {
            guard let subscription = await testStore.playSubscription(id), subscription.state == .active, subscription.autoRenew
            else { return nil }
            return subscription.expiryTime
        }
        guard let subscription = await testStore.subscription(id), subscription.status == .active, subscription.autoRenew else {
            return nil
        }
        return subscription.expiresDate
    }

    /// An action on the customer's subscription, in its store (Google Play's equivalent of the
    /// App Store's action: a failed renewal with three days of grace or none, a refund request
    /// Google grants or declines); false when the store refuses it now (it ended meanwhile, say):
    /// a population takes what happens.
    private func act(
        _ action: TestStoreService.Action, _ customer: Customer, _ options: TestStoreService.ActionOptions = .init()
    ) async throws
        -> Bool
    {
        guard let id = customer.originalTransactionId else { return false }
        do {
            if customer.google {
                var body: JSONObject = [:]
                let play: TestStoreService.PlayAction
                switch action {
                case .failRenewal:
                    play = .failRenewal
                    body["gracePeriodDays"] = options.gracePeriod ? 3 : 0
                case .recover: play = .recover
                case .requestRefund:
                    play = .requestRefund
                    body["outcome"] = options.refundGranted ? "REFUND" : "DECLINE"
                case .cancel: play = .cancel
                default: return false  // a population takes no other action
                }
                _ = try await testStore.googleAct(play, purchaseToken: id, options: try TestStoreService.PlayActionOptions(body))
            } else {
                _ = try await testStore.act(action, originalTransactionId: id, options: options)
            }
            return true
        } catch let refused as ServiceError where refused.code == "TEST_STORE_REFUSED" {
            return false
        }
    }
}

/// SplitMix64: a small, fast generator whose whole sequence follows from its seed (Swift's own
/// generator cannot be seeded).
struct SeededRandom: Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    mutating func chance(_ probability: Double) -> Bool { unit() < probability }

    /// Uniform in 0..<bound.
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// A version-4 UUID, lower-case.
    mutating func uuid() -> String {
        var bytes = withUnsafeBytes(of: next().bigEndian, Array.init) + withUnsafeBytes(of: next().bigEndian, Array.init)
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        let parts = [
            hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20),
        ]
        return parts.joined(separator: "-")
    }
}
