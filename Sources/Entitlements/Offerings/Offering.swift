package import JSON

/// What a paywall sells (docs/OFFERINGS.md): packages in the order the paywall shows them, and
/// free-form metadata for the paywall itself (titles, colours, which package to highlight).
package struct Offering: Sendable, Equatable {
    package var id: String
    package var packages: [OfferingPackage]
    /// A JSON object, at most `Offering.maximumMetadataBytes` serialized.
    package var metadata: JSONObject

    package static let maximumMetadataBytes = 4096

    package init(id: String, packages: [OfferingPackage], metadata: JSONObject = [:]) {
        self.id = id
        self.packages = packages
        self.metadata = metadata
    }
}

/// One thing a paywall sells, under the id the app uses for it, on each store that sells it.
package struct OfferingPackage: Sendable, Equatable {
    package struct AppStore: Sendable, Equatable {
        package var productId: String
        /// A catalog offer (`offers`): listed only to customers its eligibility admits.
        package var offerId: String?

        package init(productId: String, offerId: String? = nil) {
            self.productId = productId
            self.offerId = offerId
        }
    }

    package struct GooglePlay: Sendable, Equatable {
        package var productId: String
        package var basePlanId: String
        package var offerId: String?

        package init(productId: String, basePlanId: String, offerId: String? = nil) {
            self.productId = productId
            self.basePlanId = basePlanId
            self.offerId = offerId
        }
    }

    package var id: String
    package var appStore: AppStore?
    package var googlePlay: GooglePlay?

    package init(id: String, appStore: AppStore? = nil, googlePlay: GooglePlay? = nil) {
        self.id = id
        self.appStore = appStore
        self.googlePlay = googlePlay
    }

    /// The package as this customer may have it: an offer whose eligibility does not admit them
    /// is left out, the package itself stays (at its regular price).
    package func admitting(appStoreOffer admits: (String) -> Bool, playOffer playAdmits: (String) -> Bool) -> OfferingPackage {
        var package = self
        if let offer = appStore?.offerId, !admits(offer) { package.appStore?.offerId = nil }
        if let offer = googlePlay?.offerId, !playAdmits(offer) { package.googlePlay?.offerId = nil }
        return package
    }
}
