import ParleyObservability

extension APIError {
    /// The one error mapper: every place where an error becomes an answer (the responder's middleware chain, the
    /// connection, the WebSocket gateway's error frames) calls it. An `APIError` passes as it is; a lower layer's
    /// error maps itself through `APIErrorConvertible` (logged when that is a 5xx); anything else is a 500 with a
    /// generic message, logged in full through `logger` (which carries the request id), so no internals reach the
    /// client.
    public static func mapping(_ error: any Error, logger: Logger) -> APIError {
        if let apiError = error as? APIError { return apiError }
        if let convertible = error as? any APIErrorConvertible {
            let apiError = convertible.apiError
            if apiError.status >= 500 {
                logger.warning(
                    "request failed", ["error": .string(String(describing: error)), "code": .int(apiError.code)])
            }
            return apiError
        }
        logger.error("unhandled error", ["error": .string(String(describing: error))])
        return .internalError
    }
}

extension HTTPResponse {
    /// The error envelope for any error, through `APIError.mapping`.
    public static func error(mapping error: any Error, logger: Logger) -> HTTPResponse {
        .error(APIError.mapping(error, logger: logger))
    }
}
