import Crypto
import Entitlements
import JSON

/// What the test store's Google Play knows (kept by `TestStoreService`, in memory like the rest of
/// the test store): the purchases it sold by purchase token, their orders, what it voided, the
/// refund reviews it asked for and the answers it got, and the API tokens it issued.
struct TestStorePlayState: Sendable {
    var subscriptions: [String: (app: String, subscription: SimulatedPlaySubscription)] = [:]
    var products: [String: (app: String, product: SimulatedPlayProduct)] = [:]
    /// Every order charged, by order id (`orders.get`), and whether it was refunded.
    var orders: [String: (app: String, order: PlayStoreSimulation.Order, refunded: Bool)] = [:]
    /// `purchases.voidedpurchases.list`, oldest first.
    var voided: [(app: String, voided: PlayStoreSimulation.Voided, purchaseTime: Int64)] = []
    /// Refund reviews asked of the developer, by pending refund token: the order, what the
    /// customer will be told, and the first answer (`orders.reviewrefund`; Google keeps only it).
    var refundReviews: [String: RefundReview] = [:]
    /// Bearer tokens issued by the OAuth endpoint: the app, and until when (epoch seconds).
    var accessTokens: [String: (app: String, until: Int64)] = [:]
    var nextOrderNumber: Int64
    /// Pub/Sub message ids are unique for good (Entitle takes a message once by its id): these
    /// start at a random number, so a restarted test store never repeats an earlier one's.
    var nextMessageNumber: Int64

    struct RefundReview: Sendable {
        var app: String
        var orderId: String
        var purchaseToken: String
        var answer: JSONObject?
        var calls = 0
    }

    init(seed: Int64) {
        nextOrderNumber = 3_300_000_000_000_000_000 + seed % 1_000_000_000_000
        let random = SecureRandom.bytes(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
        nextMessageNumber = 1_000_000_000_000_000 + (random & 0x000F_FFFF_FFFF_FFFF)
    }

    /// A new order id, as Google writes them: `GPA.3372-6011-2214-10543`.
    mutating func newOrderId() -> String {
        nextOrderNumber += 1
        let digits = Array(String(nextOrderNumber).suffix(17))
        let text = String(digits)
        func part(_ from: Int, _ count: Int) -> Substring { text.dropFirst(from).prefix(count) }
        return "GPA.\(part(0, 4))-\(part(4, 4))-\(part(8, 4))-\(part(12, 5))"
    }
}
