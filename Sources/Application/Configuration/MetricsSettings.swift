import Foundation
import JSON

/// `metrics` (top level): `{"exchangeRatesFile": "rates.json"}`, a file of
/// `{"reportingCurrency": "USD", "rates": {"EUR": 1.08, …}}` (1 EUR = 1.08 USD), read at start-up,
/// so MRR and ARR can also be given as one converted total.
package struct ExchangeRates: Sendable, Equatable {
    package var reportingCurrency: String
    /// Units of the reporting currency per unit of each currency (the reporting currency is 1).
    package var rates: [String: Double]

    package init(reportingCurrency: String, rates: [String: Double]) {
        self.reportingCurrency = reportingCurrency
        self.rates = rates.merging([reportingCurrency: 1]) { given, _ in given }
    }
}

/// `metrics` (top level): whether the writer keeps the business figures (`enabled`, default true:
/// off saves their writes, and the metrics API answers 404), and the exchange rates.
package struct MetricsSettings: Sendable, Equatable {
    package var enabled = true
    package var exchangeRates: ExchangeRates?

    package init(enabled: Bool = true, exchangeRates: ExchangeRates? = nil) {
        self.enabled = enabled
        self.exchangeRates = exchangeRates
    }
}

extension ExchangeRates {
    /// The rates file `metrics.exchangeRatesFile` names (resolved and readable already):
    /// `{"reportingCurrency": "USD", "rates": {"EUR": 1.08, …}}`, every rate above 0.
    static func read(file path: String) throws(ConfigurationValueError) -> ExchangeRates {
        guard let data = FileManager.default.contents(atPath: path) else { throw ConfigurationValueError("cannot read \(path)") }
        let problem = "expected {\"reportingCurrency\": \"USD\", \"rates\": {\"EUR\": 1.08, …}} with rates above 0"
        let parsed: JSONValue
        do { parsed = try JSONParser.parse(Array(data)) } catch { throw ConfigurationValueError("\(path) is not JSON: \(error)") }
        guard let root = parsed.objectValue, let currency = root["reportingCurrency"]?.stringValue, !currency.isEmpty,
            let rates = root["rates"]?.objectValue
        else { throw ConfigurationValueError(problem) }
        var byCurrency: [String: Double] = [:]
        for (name, value) in rates.members {
            guard let rate = value.number(in: 0...1e12), rate > 0 else { throw ConfigurationValueError("\(name): \(problem)") }
            byCurrency[name] = rate
        }
        return ExchangeRates(reportingCurrency: currency, rates: byCurrency)
    }
}
