/// A command line or a chat command that cannot be understood; the text says what was expected.
public struct ChatUsageError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
