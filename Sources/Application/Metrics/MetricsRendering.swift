package import Entitlements
import Instants
package import JSON

/// A series as JSON (`{"metric", "interval", …, "buckets": [{"start", "value"}]}`) and as CSV
/// (a header row, one row a bucket, or a bucket and currency for money). Money is in major units
/// (Apple's milliunits ÷ 1000), written with three decimals in CSV.
package enum MetricsRendering {
    package static func money(_ amounts: MetricAmounts) -> JSONObject {
        var object = JSONObject()
        for currency in amounts.keys.sorted() { object[currency] = .double(Double(amounts[currency]!) / 1000) }
        return object
    }

    /// One total in the reporting currency, and the currencies without a rate (left out of it).
    static func converted(_ amounts: MetricAmounts, _ rates: ExchangeRates) -> JSONObject {
        var total = 0.0
        var missing: [String] = []
        for (currency, milliunits) in amounts {
            guard let rate = rates.rates[currency] else {
                missing.append(currency)
                continue
            }
            total += Double(milliunits) / 1000 * rate
        }
        var object: JSONObject = ["currency": .string(rates.reportingCurrency), "value": .double((total * 100).rounded() / 100)]
        if !missing.isEmpty { object["unconvertedCurrencies"] = .array(missing.sorted().map(JSONValue.string)) }
        return object
    }

    package static func json(_ series: MetricsService.Series) -> JSONObject {
        var answer: JSONObject = [
            "metric": .string(series.name.rawValue), "interval": .string(series.interval.rawValue),
            "environment": .string(series.filter.environment),
        ]
        if let store = series.filter.store { answer["store"] = .string(store) }
        if let productId = series.filter.productId { answer["productId"] = .string(productId) }
        if let group = series.filter.subscriptionGroup { answer["subscriptionGroup"] = .string(group) }
        Timestamps.set(&answer, "from", series.from)
        Timestamps.set(&answer, "to", series.to)
        Timestamps.set(&answer, "factsReadAt", series.factsReadAt)
        answer["buckets"] = .array(
            series.buckets.map { bucket in
                var object = JSONObject()
                Timestamps.set(&object, "start", bucket.start)
                switch bucket.value {
                case .count(let count): object["value"] = .int(Int64(count))
                case .rate(let rate): object["value"] = rate.map(JSONValue.double) ?? .null
                case .money(let amounts): object["value"] = .object(money(amounts))
                case .churn(let churn):
                    object["value"] = .int(Int64(churn.total))
                    object["voluntary"] = .int(Int64(churn.voluntary))
                    object["involuntary"] = .int(Int64(churn.involuntary))
                    object["other"] = .int(Int64(churn.other))
                case .refunds(let count, let amounts):
                    object["value"] = .int(Int64(count))
                    object["amounts"] = .object(money(amounts))
                }
                return .object(object)
            })
        return answer
    }

    package static func csv(_ series: MetricsService.Series) -> String {
        var lines: [String] = []
        func major(_ milliunits: Int64) -> String {
            let sign = milliunits < 0 ? "-" : ""
            let magnitude = milliunits.magnitude
            let fraction = String(magnitude % 1000)
            return "\(sign)\(magnitude / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
        }
        switch series.name {
        case .mrr, .revenue: lines.append("start,currency,value")
        case .churnedSubscriptions: lines.append("start,value,voluntary,involuntary,other")
        case .refunds: lines.append("start,value,currency,amount")
        default: lines.append("start,value")
        }
        for (start, value) in series.buckets {
            let day = Timestamps.iso(start)
            switch value {
            case .count(let count): lines.append("\(day),\(count)")
            case .rate(let rate): lines.append("\(day),\(rate.map { String($0) } ?? "")")
            case .money(let amounts):
                for currency in amounts.keys.sorted() { lines.append("\(day),\(CSVField.text(currency)),\(major(amounts[currency]!))") }
            case .churn(let churn): lines.append("\(day),\(churn.total),\(churn.voluntary),\(churn.involuntary),\(churn.other)")
            case .refunds(let count, let amounts):
                if amounts.isEmpty { lines.append("\(day),\(count),,") }
                for currency in amounts.keys.sorted() {
                    lines.append("\(day),\(count),\(CSVField.text(currency)),\(major(amounts[currency]!))")
                }
            }
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}
