package import JSON

/// What the test store's Google Play Developer API answers, in Google's shapes: every purchase is
/// a license tester's (`testPurchase`), so Entitle files it under Sandbox.
extension PlayStoreSimulation {
    /// Google's Money: `{"currencyCode", "units", "nanos"}`.
    package static func money(_ milliunits: Int64, _ currency: String) -> JSONObject {
        [
            "currencyCode": .string(currency), "units": .string(String(milliunits / 1000)),
            "nanos": .int((milliunits % 1000) * 1_000_000),
        ]
    }

    /// `purchases.subscriptionsv2.get`.
    package static func subscriptionPurchase(_ subscription: SimulatedPlaySubscription) -> JSONObject {
        var plan: JSONObject = [
            "autoRenewEnabled": .bool(subscription.autoRenew), "recurringPrice": .object(money(subscription.price, subscription.currency)),
        ]
        if let stepUp = subscription.priceStepUp {
            let newPrice = JSONValue.object(money(stepUp.price, subscription.currency))
            plan["priceChangeDetails"] = .object([
                "newPrice": newPrice, "priceChangeMode": "PRICE_INCREASE", "priceChangeState": "OUTSTANDING",
                "expectedNewPriceChargeTime": .string(Timestamps.iso(max(stepUp.consentDeadline, subscription.expiryTime))),
            ])
            plan["priceStepUpConsentDetails"] = .object([
                "state": .string(stepUp.consented ? "CONFIRMED" : "PENDING"), "newPrice": newPrice,
                "consentDeadlineTime": .string(Timestamps.iso(stepUp.consentDeadline)),
            ])
        }
        var offer: JSONObject = ["basePlanId": .string(subscription.basePlanId), "offerTags": .array([])]
        if let chosen = subscription.offer {
            offer["offerId"] = .string(chosen.id)
            offer["offerTags"] = .array(chosen.tags.map(JSONValue.string))
        }
        var item: JSONObject = [
            "productId": .string(subscription.productId), "expiryTime": .string(Timestamps.iso(subscription.expiryTime)),
            "autoRenewingPlan": .object(plan), "offerDetails": .object(offer),
            "latestSuccessfulOrderId": .string(subscription.latestOrderId),
            "offerPhase": .object([subscription.offerPhase: .object([:])]),
        ]
        if let plan = subscription.deferredPlan {
            item["deferredItemReplacement"] = .object(["productId": .string(plan.productId)])
        }
        if let replaced = subscription.replacement {
            var old: JSONObject = [
                "productId": .string(replaced.productId), "basePlanId": .string(replaced.basePlanId),
                "replacementMode": .string(replaced.mode),
            ]
            if let offerId = replaced.offerId { old["offerId"] = .string(offerId) }
            item["itemReplacement"] = .object(old)
        }
        var answer: JSONObject = [
            "kind": "androidpublisher#subscriptionPurchaseV2", "regionCode": "US", "lineItems": .array([.object(item)]),
            "startTime": .string(Timestamps.iso(subscription.startTime)), "subscriptionState": .string(subscription.state.rawValue),
            "latestOrderId": .string(subscription.latestOrderId), "testPurchase": .object([:]),
            "acknowledgementState": .string(
                subscription.acknowledged ? "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED" : "ACKNOWLEDGEMENT_STATE_PENDING"),
        ]
        if let account = subscription.obfuscatedAccountId {
            answer["externalAccountIdentifiers"] = .object(["obfuscatedExternalAccountId": .string(account)])
        }
        if let linked = subscription.linkedPurchaseToken { answer["linkedPurchaseToken"] = .string(linked) }
        if let cancellation = subscription.cancellation {
            var context: JSONObject = [:]
            if cancellation == .user, let time = subscription.cancelTime {
                context["cancelTime"] = .string(Timestamps.iso(time))
            }
            answer["canceledStateContext"] = .object([cancellation.rawValue: .object(context)])
        }
        if let resume = subscription.autoResumeTime, subscription.state == .paused {
            answer["pausedStateContext"] = .object(["autoResumeTime": .string(Timestamps.iso(resume))])
        }
        switch subscription.state {
        case .inGracePeriod:
            answer["inGracePeriodStateContext"] = .object([
                "renewalDeclined": .object(["pendingOrderId": .string(subscription.pendingOrderId)])
            ])
        case .onHold:
            answer["onHoldStateContext"] = .object(["renewalDeclined": .object(["pendingOrderId": .string(subscription.pendingOrderId)])])
        default: break
        }
        return answer
    }

    /// `purchases.productsv2.getproductpurchasev2`.
    package static func productPurchase(_ product: SimulatedPlayProduct) -> JSONObject {
        var answer: JSONObject = [
            "kind": "androidpublisher#productPurchaseV2",
            "productLineItem": .array([
                .object([
                    "productId": .string(product.productId),
                    "productOfferDetails": .object([
                        "purchaseOptionId": "default", "quantity": .int(product.quantity),
                        "refundableQuantity": .int(product.refundableQuantity),
                        "consumptionState": .string(
                            product.consumed ? "CONSUMPTION_STATE_CONSUMED" : "CONSUMPTION_STATE_YET_TO_BE_CONSUMED"),
                        "offerTags": .array([]),
                    ]),
                ])
            ]),
            "purchaseStateContext": .object(["purchaseState": "PURCHASED"]), "testPurchaseContext": .object(["fopType": "TEST"]),
            "acknowledgementState": .string(product.acknowledged ? "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED" : "ACKNOWLEDGEMENT_STATE_PENDING"),
            "orderId": .string(product.orderId), "regionCode": "US",
            "purchaseCompletionTime": .string(Timestamps.iso(product.purchaseTime)),
        ]
        if let account = product.obfuscatedAccountId { answer["obfuscatedExternalAccountId"] = .string(account) }
        return answer
    }

    /// `orders.get`: the order's total (tax included, as the buyer paid) and its state.
    package static func order(_ order: Order, refunded: Bool) -> JSONObject {
        let total = JSONValue.object(money(order.total, order.currency))
        return [
            "orderId": .string(order.id), "purchaseToken": .string(order.purchaseToken),
            "state": .string(refunded ? "REFUNDED" : "PROCESSED"), "createTime": .string(Timestamps.iso(order.at)),
            "lastEventTime": .string(Timestamps.iso(order.at)), "total": total, "tax": .object(money(0, order.currency)),
            "lineItems": .array([.object(["productId": .string(order.productId), "total": total])]),
        ]
    }

    /// One entry of `purchases.voidedpurchases.list`.
    package static func voidedPurchase(_ voided: Voided, purchaseTime: Int64) -> JSONObject {
        var entry: JSONObject = [
            "kind": "androidpublisher#voidedPurchase", "purchaseToken": .string(voided.purchaseToken), "orderId": .string(voided.orderId),
            "purchaseTimeMillis": .string(String(purchaseTime)), "voidedTimeMillis": .string(String(voided.at)),
            "voidedSource": .int(voided.source), "voidedReason": .int(voided.reason),
        ]
        if let quantity = voided.quantity, voided.refundType == 2 { entry["voidedQuantity"] = .int(quantity) }
        return entry
    }
}
