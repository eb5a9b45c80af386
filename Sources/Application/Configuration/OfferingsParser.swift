import Entitlements
import JSON

/// `apps[].offerings` and `apps[].placements` (docs/OFFERINGS.md): what each paywall sells, checked
/// against the catalog, and the rules that choose an offering per placement.
enum OfferingsParser {
    static func parseOfferings(
        _ object: JSONObject?, products: [String: CatalogProduct], offers: [String: OfferConfiguration], path: String,
        reader: inout ConfigurationReader
    ) -> [String: Offering] {
        guard let object else { return [:] }
        var offerings: [String: Offering] = [:]
        for (id, value) in object.members {
            let offeringPath = "\(path).\(id)"
            guard Identifier.isValid(id) else {
                reader.problem(offeringPath, "an offering id is 1 to 64 of letters, digits, '_', '-' and '.'")
                continue
            }
            guard let body = value.objectValue else {
                reader.problem(offeringPath, "expected an object, found \(value.typeName)")
                continue
            }
            reader.checkMembers(body, allowed: ["packages", "metadata"], path: offeringPath)
            var packages: [OfferingPackage] = []
            for (packageId, packageValue) in (reader.object(body, "packages", path: offeringPath, required: true) ?? [:]).members {
                let packagePath = "\(offeringPath).packages.\(packageId)"
                guard Identifier.isValid(packageId), let packageBody = packageValue.objectValue else {
                    reader.problem(packagePath, "a package is an object under an id of 1 to 64 letters, digits, '_', '-' and '.'")
                    continue
                }
                if let package = parsePackage(
                    packageBody, id: packageId, products: products, offers: offers, path: packagePath, reader: &reader)
                {
                    packages.append(package)
                }
            }
            if body["packages"]?.objectValue?.members.isEmpty == true {
                reader.problem("\(offeringPath).packages", "an offering sells something")
            }
            let metadata = reader.object(body, "metadata", path: offeringPath) ?? [:]
            if JSONValue.object(metadata).serializedBytes.count > Offering.maximumMetadataBytes {
                reader.problem("\(offeringPath).metadata", "at most \(Offering.maximumMetadataBytes) bytes of JSON")
            }
            offerings[id] = Offering(id: id, packages: packages, metadata: metadata)
        }
        return offerings
    }

    private static func parsePackage(
        _ object: JSONObject, id: String, products: [String: CatalogProduct], offers: [String: OfferConfiguration], path: String,
        reader: inout ConfigurationReader
    ) -> OfferingPackage? {
        reader.checkMembers(object, allowed: ["appStore", "googlePlay"], path: path)
        var package = OfferingPackage(id: id)
        if let appStore = reader.object(object, "appStore", path: path) {
            let storePath = "\(path).appStore"
            reader.checkMembers(appStore, allowed: ["productId", "offerId"], path: storePath)
            if let productId = reader.string(appStore, "productId", path: storePath, required: true) {
                if products[productId] == nil { reader.problem("\(storePath).productId", "\"\(productId)\" is not in the app's products") }
                let offerId = reader.string(appStore, "offerId", path: storePath)
                if let offerId, offers[offerId]?.productId != productId {
                    reader.problem("\(storePath).offerId", "\"\(offerId)\" is not an offer of \(productId) in the app's offers")
                }
                package.appStore = OfferingPackage.AppStore(productId: productId, offerId: offerId)
            }
        }
        if let play = reader.object(object, "googlePlay", path: path) {
            let storePath = "\(path).googlePlay"
            reader.checkMembers(play, allowed: ["productId", "basePlanId", "offerId"], path: storePath)
            if let productId = reader.string(play, "productId", path: storePath, required: true),
                let basePlanId = reader.string(play, "basePlanId", path: storePath, required: true)
            {
                if products.catalogId(playProduct: productId, basePlanId: basePlanId) == nil {
                    reader.problem(storePath, "no product of the app's catalog is \(productId) (\(basePlanId)) on Google Play")
                }
                package.googlePlay = OfferingPackage.GooglePlay(
                    productId: productId, basePlanId: basePlanId, offerId: reader.string(play, "offerId", path: storePath))
            }
        }
        guard package.appStore != nil || package.googlePlay != nil else {
            reader.problem(path, "a package is sold on \"appStore\", \"googlePlay\" or both")
            return nil
        }
        return package
    }

    static func parsePlacements(
        _ object: JSONObject?, offerings: [String: Offering], path: String, reader: inout ConfigurationReader
    ) -> [String: Placement] {
        guard let object else { return [:] }
        var placements: [String: Placement] = [:]
        for (id, value) in object.members {
            let placementPath = "\(path).\(id)"
            guard Identifier.isValid(id), let body = value.objectValue else {
                reader.problem(placementPath, "a placement is an object under an id of 1 to 64 letters, digits, '_', '-' and '.'")
                continue
            }
            reader.checkMembers(body, allowed: ["offering", "rules"], path: placementPath)
            guard body["offering"] != nil else {
                reader.problem(placementPath, "\"offering\" is required: an offering's id, or null to show none")
                continue
            }
            let offering = offeringId(body["offering"], offerings: offerings, path: "\(placementPath).offering", reader: &reader)
            var rules: [TargetingRule] = []
            for (index, ruleValue) in (reader.array(body, "rules", path: placementPath) ?? []).enumerated() {
                let rulePath = "\(placementPath).rules[\(index)]"
                guard let rule = ruleValue.objectValue else {
                    reader.problem(rulePath, "expected an object, found \(ruleValue.typeName)")
                    continue
                }
                reader.checkMembers(rule, allowed: ["name", "when", "offering"], path: rulePath)
                guard rule["offering"] != nil else {
                    reader.problem(rulePath, "\"offering\" is required: an offering's id, or null to show none")
                    continue
                }
                rules.append(
                    TargetingRule(
                        name: reader.string(rule, "name", path: rulePath) ?? "rules[\(index)]",
                        when: condition(reader.object(rule, "when", path: rulePath) ?? [:], path: "\(rulePath).when", reader: &reader),
                        offering: offeringId(rule["offering"], offerings: offerings, path: "\(rulePath).offering", reader: &reader)))
            }
            placements[id] = Placement(id: id, offering: offering, rules: rules)
        }
        return placements
    }

    /// A rule's `when` (`TargetingCondition.init(json:)`), its problem reported at its member.
    static func condition(_ object: JSONObject, path: String, reader: inout ConfigurationReader) -> TargetingCondition {
        do { return try TargetingCondition(json: object) } catch {
            reader.problem(error.member.map { "\(path).\($0)" } ?? path, error.message)
            return TargetingCondition()
        }
    }

    private static func offeringId(
        _ value: JSONValue?, offerings: [String: Offering], path: String, reader: inout ConfigurationReader
    ) -> String? {
        guard let value, value != .null else { return nil }
        guard let id = value.stringValue, offerings[id] != nil else {
            reader.problem(path, "expected one of the app's offerings (\(offerings.keys.sorted().joined(separator: ", "))) or null")
            return nil
        }
        return id
    }
}
