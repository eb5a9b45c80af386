/// The configuration could not be used. Each problem is one line naming where and what.
package struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    package let problems: [String]

    package init(problems: [String]) { self.problems = problems }

    package var description: String { problems.joined(separator: "\n") }
}
