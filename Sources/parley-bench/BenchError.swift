/// A failure that ends a mode: setup that did not work, a broken connection, a check that did not hold.
/// The message is what the operator reads, so it names the figure and the threshold.
struct BenchError: Error, CustomStringConvertible {
    var message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}
