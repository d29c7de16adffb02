import ParleyHTTP

@testable import ParleyWebhooks

/// Reaches the module's internal error builder.
enum APIErrorProbe {
    static func denied(code: Int?, message: String?) -> APIError {
        APIError.messageDenied(code: code, message: message)
    }
}
