/// The configuration could not be used. Each problem is one line naming where and what.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public let problems: [String]

    public init(problems: [String]) { self.problems = problems }

    public var description: String { problems.joined(separator: "\n") }
}
